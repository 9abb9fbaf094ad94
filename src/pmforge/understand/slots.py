"""Which field of the brief or the evaluation a sentence speaks to, by what it says.

Each slot is a set of cues people actually use for that kind of statement ("I'd pull the plug
if…", "without hurting…", "the ones who suffer are…"). A sentence may feed several slots; a
question or a remark about the conversation feeds none.
"""

from __future__ import annotations

import re

from pmforge.understand import text as t
from pmforge.understand.model import Fact, Slot

_I = re.I

PAIN = re.compile(
    r"\b(?:problem|issue|pain|painful|struggl\w*|frustrat\w*|hate[sd]?|complain\w*|waste\w*|wasting|throw(?:ing|n)? "
    r"(?:away|out)|binn?\w*|los(?:e|es|ing|t)|leak\w*|late|delay\w*|slow|manual(?:ly)?|by hand|error\w*|mistake\w*|"
    r"churn\w*|drop(?:s|ped|ping)? off|abandon\w*|costs? us|cost(?:ing)? (?:us|them)|too long|takes? (?:ages|hours|"
    r"days|weeks|forever)|backlog|miss(?:es|ed|ing)?|can'?t|cannot|unable|hard to|difficult|broken|headache|nightmare|"
    r"bottleneck|spreadsheets?|gut feel\w*|guesswork|overwhelm\w*|burn ?out|overstock\w*|out[- ]of[- ]stocks?|"
    r"stock-?outs?|shrink|no-?shows?|overtime|rework|duplicat\w*|fines?|penalt\w*|complaints?|angry|annoy\w*|"
    r"confus\w*|stuck|chas(?:e|ing)|fall(?:s|ing)? through|no visibility|blind|guess(?:ing)?|workaround\w*|"
    r"firefight\w*|scrambl\w*|drown\w*|tedious|error-prone|inaccura\w*|unreliable|inconsistent|ignore[sd]?|"
    r"expensive|bleed\w*|eats? (?:up|into))\b",
    _I,
)
PROBLEM_EXPLICIT = re.compile(r"\b(?:the (?:real |actual |core |underlying |main |big )?(?:problem|issue|pain(?: point)?)"
                               r"|what hurts|what'?s broken|the reason (?:this|it) matters)\b", _I)

_PEOPLE_NOUN = (
    r"(?:users?|customers?|shoppers?|buyers?|clients?|members?|subscribers?|patients?|clinicians?|nurses?|doctors?|"
    r"gps?|physicians?|staff|employees?|colleagues?|agents?|reps?|drivers?|dispatchers?|technicians?|engineers?|"
    r"teachers?|students?|parents?|pupils?|learners?|residents?|citizens?|tenants?|claimants?|policyholders?|"
    r"brokers?|merchants?|sellers?|vendors?|suppliers?|retailers?|stores?|branches?|clinics?|practices?|hospitals?|"
    r"schools?|smbs?|smes?|enterprises?|accounts?|businesses|companies|firms|teams?|managers?|leads?|associates?|"
    r"operators?|planners?|schedulers?|analysts?|admins?|administrators?|coordinators?|caseworkers?|advisers?|"
    r"advisors?|accountants?|underwriters?|adjusters?|handlers?|pickers?|packers?|workers?|crews?|volunteers?|"
    r"households?|families|people|folks|viewers?|readers?|listeners?|guests?|travell?ers?|passengers?|riders?|"
    r"hosts?|landlords?|carers?|caregivers?|councils?|departments?|sites?|plants?|warehouses?|depots?|"
    r"restaurants?|franchisees?|dealers?|partners?|freelancers?|contractors?|developers?|devs|new hires|"
    r"joiners|applicants?|candidates?|recruiters?)"
)
AUDIENCE = re.compile(
    r"\b(?:target(?:ing)?\s+(?:users?|audience|customers?|segments?|market|group)|audience|segments?|personas?|"
    r"aimed at|designed for|built for|(?:it'?s|this is|this would be|it would be|mainly|mostly|primarily|only) for|"
    r"the (?:people|ones|folks|users?) who|who (?:has|have|feels?|feel|hits?|suffers?) (?:this|the|it)|"
    r"(?:the )?(?:main|primary|core|key) (?:users?|customers?|audience|group)|end[- ]users?)\b"
    r"|\b\d[\d,.]*\s?(?:k\s)?(?:\+\s)?(?:[a-z-]+\s){0,2}" + _PEOPLE_NOUN + r"\b"
    r"|\b(?:the )?(?:users?|customers?|audience|end[- ]users?) (?:would be|will be|are|is)\b|\bused by\b"
    r"|\b(?:all|every|our|the)\s+(?:[a-z-]+\s){0,2}" + _PEOPLE_NOUN
    + r"\s+(?:who|that|in|at|across|with)\b",
    _I,
)

_MEASURE = re.compile(
    r"\b(?:metric|kpi|measure\w*|indicator|north star|target|baseline|goal|success (?:looks like|means|is|would be|"
    r"would look like)|we'?d know|we will know|we'll know|track\w*|rate|ratio|share|percentage|nps|csat|ces|sla|"
    r"time[- ]to[- ]\w+|turnaround|throughput|conversion|retention|churn|adoption|usage|utili[sz]ation|accuracy|"
    r"shrink|waste|margin|revenue|cost|savings?|hours|minutes|days|weeks|per (?:week|day|month|store|user)|"
    r"cycle time|lead time|no-?show|occupancy|on[- ]time|first[- ]time|resolution|backlog|volume|count|number of)"
    r"(?:s|es)?\b",
    _I,
)
_CHANGE = re.compile(
    r"\b(?:reduce\w*|cut\w*|lower\w*|increas\w*|rais\w*|improv\w*|grow\w*|boost\w*|drop\w*|fall\w*|halv\w*|doubl\w*|"
    r"get (?:it |that )?(?:down|up)|bring (?:it |that )?(?:down|up)|from\s+\S+\s+to|to (?:below|under|above|over)|"
    r"below|under|above|at least|at most|no more than|less than|more than|within|by (?:q[1-4]|end of|next|"
    r"the end|january|february|march|april|may|june|july|august|september|october|november|december|\d{4}))\b",
    _I,
)
ANTI = re.compile(
    r"\b(?:anti-?metrics?|guardrails?|counter-?metrics?|must ?n[o']t|must not|mustn'?t|shouldn'?t|should not|"
    r"can'?t (?:afford to )?(?:let|have|see|risk)|don'?t want (?:\w+\s){0,6}?to (?:get worse|go up|go down|drop|"
    r"rise|increase|fall|suffer|slip|creep|spike|tank|degrade)|without (?:hurting|increasing|raising|reducing|"
    r"losing|harming|damaging|affecting|worsening|a (?:rise|drop|dip|spike|hit))|not at the expense of|at the "
    r"expense of|as long as .{0,40}(?:doesn'?t|don'?t|does not|stays?|holds?)|careful not to|no (?:rise|increase|"
    r"drop|dip|spike|worsening) in|while (?:keeping|holding|protecting|not)|keep\w* .{0,30}(?:flat|stable|steady|"
    r"where (?:it|they) (?:is|are))|stays? (?:flat|below|under|above|the same)|(?:not|never) (?:go|get) worse|"
    r"(?:get|gets|getting) worse|protect\w*)\b"
    r"|\bwithout (?:the\s+|our\s+|any\s+)?(?:[\w-]+\s+){1,4}(?:going up|going down|rising|increasing|getting worse|"
    r"dropping|falling|suffering|slipping|spiking|creeping up|taking a hit|tanking)\b",
    _I,
)
LEADING = re.compile(
    r"\b(?:leading(?: indicator| metric| signal)?|early (?:signal|sign|indicator|warning|metric)|first (?:few )?"
    r"(?:weeks?|days|month)|within (?:a few |the first |two |three |four |\d+ )?(?:weeks?|days)|week (?:one|1|two|2)|"
    r"adoption|adopt\w*|usage|daily active|weekly active|active users|log ?ins?|opened|open rate|click\w*|"
    r"engagement|completion rate|% of (?:\w+ )?(?:using|who use|who used)|using it|use it (?:daily|weekly)|"
    r"sign-?ups?|activation|uptake|accept\w* (?:rate|the suggestion)|follow(?:ed)? the (?:suggestion|recommendation))\b",
    _I,
)
LAGGING = re.compile(
    r"\b(?:lagging|ultimately|eventually|in the end|the outcome|outcome metric|bottom line|by (?:q[1-4]|year[- ]end|"
    r"end of (?:the )?(?:year|quarter)|next year)|over (?:the )?(?:year|quarters?|\d+ months)|annual\w*|per year|"
    r"a year|revenue|margin|profit|shrink|churn|retention|cost|savings?|nps|csat|satisfaction)\b",
    _I,
)

STOP_IF = re.compile(
    r"\b(?:kill (?:it|this|the \w+)|pull the plug|walk away|drop (?:it|this|the idea)|shelve|abandon|scrap (?:it|this)|"
    r"stop (?:the|it|this)|no[- ]go|not (?:worth|proceed|go ahead|continue|roll)|won'?t (?:proceed|go ahead|roll|"
    r"continue|fund|bother)|wouldn'?t (?:proceed|go ahead|roll|continue|fund|bother)|don'?t (?:proceed|go ahead|"
    r"roll|continue|fund|bother)|not worth (?:it|doing|pursuing|the)|isn'?t worth|deal-?breakers?|red lines?|"
    r"show-?stoppers?|hard no|bin (?:it|the)|call it off|back out|park (?:it|this)|rethink|"
    r"(?:i'?d|we'?d|we|i) (?:would |should |will )?(?:stop|kill|scrap|shut|drop|pause)\b|recommend (?:we )?stop)\b"
    r"|\bunless\b",
    _I,
)
PROCEED_IF = re.compile(
    r"\b(?:go ahead|proceed|roll (?:it )?out|scale (?:it|up|out)|expand|fund (?:it|the|a)|green-?light|invest|"
    r"worth (?:it|doing|pursuing|building|the investment)|justify|justifies|make the case|go[- ]decision|"
    r"go/no-?go|greenlit|sign off on|commit to|move forward|keep going|double down|we'?re in|count (?:it )?as "
    r"(?:a )?(?:win|success)|roll (?:it )?(?:out )?to|rolls? to all|extend (?:it )?to|scale to|"
    r"(?:a )?(?:win|success)|call (?:it )?(?:a )?(?:win|success)|that'?s a (?:win|success|go)|would be a yes|"
    r"i'?d be happy|i'?d be convinced|enough to)\b",
    _I,
)
_CONDITION = re.compile(r"\b(?:if|unless|once|provided|as long as|only when|only if|so long as|when we see|"
                        r"anything (?:under|below|over|above|less|more)|(?:under|below|less than) \S+ (?:and|means|is))\b",
                        _I)
_THRESHOLD = re.compile(r"\b(?:threshold|the bar|bar is|hurdle|minimum|at least|cut-?off|cutoff|break-?even|payback)\b",
                        _I)

SOLUTION = re.compile(
    r"\b(?:the (?:idea|proposal|plan|solution|concept|pitch|ask|request|option) (?:is|was|would be)|we(?:'d| would| "
    r"could| want to| plan to| are planning to|'re planning to) (?:build|buy|use|roll out|launch|deploy|add|create|"
    r"introduce|license|pilot)|(?:it|the tool|the app|the system|the product|the model|the platform|the feature|"
    r"the vendor'?s? (?:tool|product|platform)) (?:would|will|does|could|can|lets|gives|shows|suggests|predicts|"
    r"recommends|automates|flags|sends|generates|replaces)|(?:an?|the) (?:ai|ml|automated|auto-?\w+|self-?serve|"
    r"new) (?:\w+ ){0,3}(?:tool|app|assistant|system|platform|model|engine|dashboard|bot|feature|portal|scheduler|"
    r"service|product|workflow|integration)|leadership wants (?:an?|the|to)|(?:has|have) asked (?:us )?for (?:an?|"
    r"the)|asked (?:us )?to build)\b",
    _I,
)

RISK_CUES: dict[Slot, re.Pattern] = {
    "value_risk": re.compile(
        r"\b(?:users? (?:would|will|won'?t|wouldn'?t|want|don'?t want|need|asked|ask|prefer|like|love|hate|ignore)|"
        r"customers? (?:would|will|won'?t|wouldn'?t|want|don'?t want|need|asked|prefer|like|love|hate|ignore|pay)|"
        r"(?:would|will|won'?t|wouldn'?t) (?:actually )?(?:use|switch|adopt|pay|trust|follow|care)|switch\w* (?:from|"
        r"away|over)|demand|willing(?:ness)? to pay|worth paying|stated interest|survey|waitlist|wait-list|"
        r"sign-?ups?|pre-?orders?|behaviou?r|habit|workaround|value (?:prop|proposition|case)|solves? (?:their|the) "
        r"(?:problem|pain)|trust (?:the|it|a)|override|overrid\w*|ignore (?:the|it)|take the suggestion|"
        r"accept (?:the|it))\b", _I),
    "usability_risk": re.compile(
        r"\b(?:usab\w*|ui|ux|user experience|interface|screens?|click\w*|taps?|learn\w*|training|train (?:them|staff|"
        r"people)|confus\w*|intuitive|easy to use|hard to use|simple|complicated|clunky|onboard\w*|mobile|tablets?|"
        r"handhelds?|phones?|gloves|on the (?:shop )?floor|time pressure|rush|busy|shift|accessib\w*|literacy|"
        r"digital(?:ly)? confiden\w*|prototype|clickable|figma|mock-?ups?|wireframes?|steps?|workflow|"
        r"user test\w*|usability test\w*|tried it|struggled to|couldn'?t find|figure (?:it )?out|manual override)\b",
        _I),
    "feasibility_risk": re.compile(
        r"\b(?:engineer\w*|dev team|developers?|build (?:it|this)|tech\w*|data (?:quality|is|isn'?t|are|aren'?t|"
        r"feed|pipeline|warehouse|lake)|dirty data|clean data|missing data|api\w*|integrat\w*|legacy|mainframe|"
        r"scal\w*|latency|real-?time|accuracy|accurate|forecast\w* model|ml model|model|algorithm|infrastructure|"
        r"architecture|estimate\w*|sprints?|story points|months? to build|weeks? to build|maintain\w*|"
        r"maintenance|skills?|capacity|bandwidth|headcount|erp|pos|sap|oracle|salesforce|epic|cerner|system|"
        r"database|cloud|security review|pen test|uptime|performance|feasib\w*|spike|proof of concept|poc|"
        r"never built|hardest part|unknowns?)\b", _I),
    "viability_risk": re.compile(
        r"\b(?:cost\w*|price|pricing|priced|budget|licen[cs]\w*|per (?:seat|store|user|month|year|site)|subscription|"
        r"legal|lawyers?|compliance|gdpr|hipaa|privacy|regulat\w*|contract\w*|margin|roi|payback|business case|"
        r"revenue|finance|cfo|sign-?offs?|union|works council|brand|reputation|headline|pr risk|support (?:cost|load|"
        r"team|tickets)|sales (?:team|channel)|go[- ]to[- ]market|channel conflict|cannibali\w*|liabilit\w*|audit\w*|"
        r"procurement|vendor lock-?in|lock-?in|£|\$|€|opex|capex|running cost|run cost|tco|total cost|"
        r"affordab\w*|fund\w*)\b", _I),
}
NEGATIVE = re.compile(
    r"\b(?:worr\w*|concern\w*|risk\w*|problem\w*|issue\w*|can'?t|cannot|won'?t|wouldn'?t|don'?t|doesn'?t|isn'?t|"
    r"aren'?t|hasn'?t|haven'?t|not|no|never|hard|difficult|doubt\w*|fail\w*|expensive|costly|slow|messy|dirty|"
    r"missing|gaps?|unclear|unknown|blocker\w*|push(?:ed)? back|hate\w*|resist\w*|struggl\w*|confus\w*|clunky|"
    r"complicated|legacy|ignore\w*|overrid\w*|nobody|no one|only \d|too (?:much|many|long|slow|hard|expensive)|"
    r"brittle|flaky|manual|scar\w*|nervous|sceptic\w*|skeptic\w*|burn\w*|lock-?in|veto|complain\w*|tight|stretch)\b",
    _I,
)
POSITIVE = re.compile(
    r"\b(?:already|proven|works?(?:ed)? (?:well|fine)|easy|easily|cheap|affordable|have the data|data exists|"
    r"exists|tested|liked|loved|love|asked for|willing|fits|compatible|supports?|ready|in place|good|great|"
    r"strong|solid|confident|clean|reliable|accurate|fast|quick|simple|signed off|approved|on board|keen|"
    r"excited|enthusiastic|validated|proved|beats?|outperform\w*|saves?|saving)\b",
    _I,
)
_LEVEL = re.compile(r"\b(?:(low|medium|moderate|high|huge|big|biggest|major|minor|small|massive|real|serious|"
                    r"main|top)(?:est)?[- ](?:\w+[- ])?risk|risk (?:is|looks|seems|feels) (?:pretty |quite |very |fairly "
                    r")?(low|medium|moderate|high|small|big|huge|minimal|manageable|real|serious))\b", _I)
_LEVEL_WORDS = {"low": "low", "minor": "low", "small": "low", "minimal": "low", "manageable": "low",
                "medium": "medium", "moderate": "medium", "high": "high", "huge": "high", "big": "high",
                "biggest": "high", "major": "high", "massive": "high", "real": "high", "serious": "high",
                "main": "high", "top": "high"}

BUILD_BUY = re.compile(
    r"\b(?:build (?:it |this |our own |in-?house|ourselves)|built in-?house|in-?house|buy (?:it|a|an|the|off)|"
    r"off[- ]the[- ]shelf|vendors?|suppliers?|licen[cs]e|saas|partner(?:ship)? with|partner\b|outsourc\w*|"
    r"white-?label|agency|build (?:vs|versus|or) buy|make or buy|homegrown|home-?grown|roll our own|"
    r"(?:use|adopt|go with) (?:the )?(?:vendor|[A-Z]\w+)'?s?)\b",
    _I,
)
_RECOMMEND = [
    ("build", re.compile(r"\b(?:we should|i'?d|i would|let'?s|lean(?:ing)? (?:towards?|to)|prefer|recommend|go with|"
                         r"better to|makes sense to)\s+(?:\w+\s)?(?:build\w*|make it|roll our own|do it in-?house)"
                         r"|\bbuild(?:ing)? (?:it )?(?:in-?house|ourselves) (?:is|makes|wins|seems)", _I)),
    ("buy", re.compile(r"\b(?:we should|i'?d|i would|let'?s|lean(?:ing)? (?:towards?|to)|prefer|recommend|better to|"
                       r"makes sense to)\s+(?:\w+\s)?(?:buy\w*|licen[cs]\w*|go with the vendor|use the vendor|"
                       r"go with [A-Z]\w+|buy off the shelf)|\bbuying (?:is|makes|wins|seems)", _I)),
    ("partner", re.compile(r"\b(?:we should|i'?d|i would|let'?s|lean(?:ing)? (?:towards?|to)|prefer|recommend|"
                           r"better to|makes sense to)\s+(?:\w+\s)?partner\w*|\bpartnering (?:is|makes|wins|seems)",
                           _I)),
]
VALIDATION = re.compile(
    r"\b(?:pilot\w*|trial\w*|experiment\w*|a/?b[- ]test\w*|split test|fake[- ]door|concierge|wizard[- ]of[- ]oz|"
    r"prototype test\w*|smoke test|(?<!stress[- ])(?<!pressure[- ])(?<!road[- ])test (?:it|this|the|with|in|on|whether|if)|run (?:it|a|this) (?:in|at|with|for|"
    r"on)|try (?:it|this) (?:in|at|with|for|on)|mvp|beta|proof of concept|poc|spike|shadow mode|side[- ]by[- ]side|"
    r"dry run|soft launch|limited rollout|cheapest (?:test|way)|riskiest assumption|pass (?:if|mark|criteria)|"
    r"fail (?:if|criteria)|in (?:\w+ |\d+ )?(?:stores|sites|clinics|branches|schools|depots|"
    r"wards|regions) (?:for|over)|validate\w*)\b",
    _I,
)
APPROACHES = ("concierge", "fake door", "wizard of oz", "a/b test", "pilot", "trial", "prototype test", "smoke test",
              "shadow mode", "experiment", "proof of concept", "beta", "soft launch", "spike")
TIMELINE = re.compile(r"\b(?:(?:for|over|in|within|across|during|lasting)\s+(?:the next\s+)?(?:\d+|a|one|two|three|"
                      r"four|five|six|eight|ten|twelve)\s+(?:days?|weeks?|months?|sprints?)|by (?:the )?(?:end of )?"
                      r"(?:q[1-4]|january|february|march|april|may|june|july|august|september|october|november|"
                      r"december|next \w+|\d{4})|(?:\d+|two|three|four|six|eight)[- ](?:day|week|month)s?)\b", _I)

ORG = re.compile(r"^(?:for context|some context|background|about us|about our (?:company|organi[sz]ation|team)|"
                 r"a bit of context|context:)\b", _I)


# What makes a number a metric rather than a symptom: a target, a change, or a named measure.
TARGET = re.compile(
    r"\b(?:want|target\w*|goal|aim\w*|success|we'?d know|we'?ll know|should (?:be|get|drop|fall|rise|go)|"
    r"get (?:it |that |this )?(?:down|up)|bring (?:it |that )?(?:down|up)|down to|up to|from \S+ to|to (?:below|under|"
    r"above|over)|metric|kpi|baseline|indicator|north star|measure\w*|track\w*|ambition|hope to|expect to)\b"
    r"|%|\bper ?cent\b|\bpercent\b",
    _I,
)


# A stated aim: a sentence with one describes where the PM wants to get, not what hurts.
GOAL = re.compile(r"\b(?:want|target\w*|goal|aim\w*|success|we'?d know|we'?ll know|down to|up to|from \S+ to|"
                  r"to (?:below|under|above|over)|ambition|hope to|expect to)\b", _I)


def _has_quantity(sentence: str) -> bool:
    return bool(t.QUANTITY.search(sentence))


_LABEL = re.compile(r"^\W*(?:(?:the|my|our)\s+)?(leading|lagging|anti-?metric|guardrail|north star|counter-?metric)"
                    r"(?:\s+(?:indicator|metric|outcome|signal))?s?\s*(?:[:—–-]|is\b|would be\b)", _I)
_LABEL_SLOTS: dict[str, Slot] = {
    "leading": "metric_leading", "lagging": "metric_lagging", "north star": "metric_lagging",
}


def metric_facts(sentence: str) -> list[Fact]:
    """Numbers with a measure, or an outcome the PM wants moved, or a guardrail."""
    label = _LABEL.search(sentence)
    if label:  # "Lagging: second visits from 38% to under 20%" says outright which list it belongs in
        return [Fact(slot=_LABEL_SLOTS.get(label.group(1).lower(), "metric_anti"), text=t.tidy(sentence))]
    anti = ANTI.search(sentence)
    measured = _MEASURE.search(sentence)
    quantity = _has_quantity(sentence)
    change = _CHANGE.search(sentence)
    facts: list[Fact] = []
    if anti and (measured or quantity or re.search(r"\b(?:get|gets|getting|go|goes|went) (?:worse|up|down)\b|"
                                                      r"\bwithout\b", sentence, _I)):
        facts.append(Fact(slot="metric_anti", text=t.tidy(sentence)))
        # "Shrink to 5% by Q4 without out-of-stocks going up": a target and its guardrail in one sentence.
        head = sentence[: anti.start()]
        if not (quantity and _MEASURE.search(head) and t.QUANTITY.search(head)):
            return facts
    watched = LEADING.search(sentence) and re.search(r"\b(?:watch|track|look at|measure|monitor|see|count|expect)\w*\b",
                                                     sentence, _I)
    if watched and not measured:
        return facts + [Fact(slot="metric_leading", text=t.tidy(sentence))]
    if not (measured and (quantity or change)) and not watched and not re.search(r"\b(?:leading|lagging) (?:indicator|metric)|"
                                                                 r"\bnorth star\b|\bsuccess (?:looks like|means|"
                                                                 r"metric)", sentence, _I):
        return []
    if LEADING.search(sentence) and not re.search(r"\blagging\b", sentence, _I):
        return facts + [Fact(slot="metric_leading", text=t.tidy(sentence))]
    if (LAGGING.search(sentence) or change or quantity) and TARGET.search(sentence):
        return facts + [Fact(slot="metric_lagging", text=t.tidy(sentence))]
    return facts


def criteria_facts(sentence: str) -> list[Fact]:
    if not (_CONDITION.search(sentence) or _THRESHOLD.search(sentence)):
        return []
    if STOP_IF.search(sentence):
        return [Fact(slot="do_not_proceed_if", text=t.tidy(sentence))]
    if PROCEED_IF.search(sentence):
        return [Fact(slot="proceed_if", text=t.tidy(sentence))]
    return []


def stakeholder_facts(sentence: str) -> list[Fact]:
    names = t.person_names(sentence) or t.lower_case_names(sentence)
    roles = t.role_phrases(sentence)
    name_words = {w.lower().strip("'’s") for n in names for w in n.split()}
    actors = [a for a in t.actor_phrases(sentence)
              if not any(a.lower() in n.lower() or n.lower() in a.lower() for n in names + roles)
              and not name_words & {w.lower().replace("'s", "").replace("’s", "") for w in a.split()}]
    if not names and not roles and not actors:
        return []
    role_type = stakeholder_role(sentence)
    specific = [r for r in roles if _SPECIFIC_ROLE.search(r)]
    if not names and not actors and not specific and role_type == "other" and not re.search(
            r"\b(?:stakeholders?|involved|on board|buy-?in|cares?|care about|asked|ask(?:ing|s)? for|wants?|"
            r"pushing|push(?:es|ed)? (?:for|back)|worried|nervous|sceptic\w*|skeptic\w*|keen|excited|against|"
            r"support\w*|champion\w*|sponsor\w*|veto|owns?|responsible|accountable|said|says|told|thinks?|"
            r"insists?|needs? to|has to|have to|would have to|will have to)\b", sentence, _I):
        return []
    facts = []
    role_text = roles[0] if roles else ""
    for name in names:
        facts.append(Fact(slot="stakeholder", text=t.tidy(sentence), subject=name,
                          detail=role_type + (f"|{role_text}" if role_text else "")))
    if not names:
        roles = [r for r in roles if _SPECIFIC_ROLE.search(r)]
        for role in roles[:2]:
            facts.append(Fact(slot="stakeholder", text=t.tidy(sentence), subject=role, detail=role_type))
    for actor in actors[:3]:
        facts.append(Fact(slot="stakeholder", text=t.tidy(sentence), subject=actor, detail=role_type))
    return facts


# A role alone names a stakeholder only when it is specific: "the union rep", "our VP of Stores", "finance";
# not "managers" or "engineers" in general.
_SPECIFIC_ROLE = re.compile(
    r"\b(?:s?vp|evp|vice|c[efoitmpdrh]o|chief|head|director|president|founder|sponsor|owner|counsel|controller|"
    r"treasurer|rep|representative|steward|union|works council|board|legal|compliance|procurement|finance|"
    r"security|infosec|privacy|regulator|auditors?|leadership|exec\w*|it|hr|gm|dean|matron|commissioner|"
    r"councillor|minister|team|department|dept|function|committee)\b"
    r"|\b\w+\s+\w+\s+(?:manager|lead|engineer|analyst|officer|coordinator|supervisor)s?\b"
    r"|\b(?:regional|area|district|general|senior|store|ward|site|plant|branch|practice|clinical|nursing|fleet|"
    r"warehouse|ops|operations|product|engineering|data|category|programme|program|project|account|shift|"
    r"team|tech|finance|sales|marketing|support|claims)\s+(?:manager|lead|director|engineer|officer|owner|"
    r"supervisor|coordinator)s?\b", re.I)

_ROLE_TYPES = [
    ("decision_authority", re.compile(
        r"\b(?:sign(?:s|ed|ing)?[- ]off|approv\w*|decid\w*|decision|final (?:say|call|word)|owns? the (?:budget|"
        r"decision|p&l|number)|budget holder|holds the budget|controls? the budget|sponsor\w*|veto|green-?light|"
        r"has to say yes|needs? to say yes|the one who(?:'d| would| will)? (?:have to )?(?:sign|approve|decide)|"
        r"calls the shots|accountable|funds?|funding)\b", _I)),
    ("status_quo_beneficiary", re.compile(
        r"\b(?:benefits? from|would lose|stands? to lose|likes? (?:it|things) (?:the way|as)|comfortable with|"
        r"current vendor|incumbent|protective|turf|resist\w*|push(?:es|ed|ing)? back|pushback|block\w*|against "
        r"(?:it|this|the)|threat\w*|not (?:thrilled|keen|happy)|won'?t like|hates? the idea|status quo|owns? the "
        r"(?:current|existing|old)|built the (?:current|existing|old))\b", _I)),
    ("execution_dependency", re.compile(
        r"\b(?:would have to|will have to|has to|have to|needs? to (?:change|adopt|use|run|build|support|do)|runs? the|"
        r"owns? the (?:system|data|pos|erp|integration|api|platform|rollout)|depends? on|dependent on|rollout|roll it "
        r"out|implement\w*|build (?:it|this)|maintain\w*|integrat\w*|training|train|support|their team would|"
        r"engineering|it team|data team)\b", _I)),
    ("pain_holder", re.compile(
        r"\b(?:suffer\w*|complain\w*|struggl\w*|feels? the pain|hates? (?:it|the|doing)|frustrat\w*|stuck|"
        r"waste\w*|spend\w* (?:hours|ages)|overwhelm\w*|angry|annoy\w*|burn\w* out|pain)\b", _I)),
]


def stakeholder_role(sentence: str) -> str:
    return next((role for role, pattern in _ROLE_TYPES if pattern.search(sentence)), "other")


# The word before "risk" (or a leading "Value:"), as the risk it names.
_RISK_WORDS: dict[str, Slot] = {
    "value": "value_risk", "usability": "usability_risk", "feasibility": "feasibility_risk",
    "viability": "viability_risk", "technical": "feasibility_risk", "data": "feasibility_risk",
    "business": "viability_risk", "cost": "viability_risk", "legal": "viability_risk",
    "commercial": "viability_risk", "adoption": "value_risk", "ux": "usability_risk",
}


def risk_facts(sentence: str) -> list[Fact]:
    facts = []
    hits = [dim for dim, pattern in RISK_CUES.items() if pattern.search(sentence)]
    level_match = _LEVEL.search(sentence)
    level = _LEVEL_WORDS.get((level_match.group(1) or level_match.group(2) or "").lower(), "") if level_match else ""
    negative, positive = len(NEGATIVE.findall(sentence)), len(POSITIVE.findall(sentence))
    side = "against" if negative >= positive else "for"
    explicit = re.search(r"\b(value|usability|feasibility|viability|technical|business|adoption|cost|legal|"
                         r"commercial|ux|data)\s+risk\b", sentence, _I) or re.match(
        r"^\W*(?:on\s+)?(value|usability|feasibility|viability)\s*(?:[:—–-]|risk\b|,)", sentence, _I)
    if explicit:
        hits = [_RISK_WORDS[explicit.group(1).lower()]]
    for dim in hits[:2]:
        facts.append(Fact(slot=dim, text=t.tidy(sentence), detail=side, level=level))
    return facts


def build_buy_facts(sentence: str) -> list[Fact]:
    if not BUILD_BUY.search(sentence):
        return []
    recommendation = next((kind for kind, pattern in _RECOMMEND if pattern.search(sentence)), "")
    return [Fact(slot="build_vs_buy", text=t.tidy(sentence), detail=recommendation)]


def validation_facts(sentence: str) -> list[Fact]:
    if not VALIDATION.search(sentence):
        return []
    approach = next((a for a in APPROACHES if a.replace(" ", "") in sentence.lower().replace(" ", "").replace("-", "")),
                    "")
    timeline = TIMELINE.search(sentence)
    return [Fact(slot="validation", text=t.tidy(sentence), subject=approach,
                 detail=timeline.group(0) if timeline else "")]


def is_problem(sentence: str) -> bool:
    return bool(PROBLEM_EXPLICIT.search(sentence) or PAIN.search(sentence))


def is_audience(sentence: str) -> bool:
    return bool(AUDIENCE.search(sentence))


def is_solution(sentence: str) -> bool:
    return bool(SOLUTION.search(sentence))
