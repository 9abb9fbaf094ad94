"""Text primitives for understanding a PM's message: sentences, numbers, hedges, people.

Everything here is deterministic and local. The rules are written for how people talk
("Dr. Shah", "e.g.", "3.4%", "£200k", bullet lists, all-lower-case typing), not for one
script of sentences.
"""

from __future__ import annotations

import re
from functools import lru_cache

from pmforge.core.sentences import sentence_spans

# ---------------------------------------------------------------- sentences

_BULLET = re.compile(r"^\s*(?:[-*•–]|\d{1,2}[.)])\s+")


def sentences(text: str) -> list[str]:
    """Split prose into sentences (`pmforge.core.sentences`). Bullets are stripped; headings and table rows are
    not sentences."""
    out: list[str] = []
    for line in re.split(r"\n+", text or ""):
        line = _BULLET.sub("", line).strip()
        if not line or re.match(r"^#{1,6}\s", line) or line.startswith("|"):
            continue
        out += [line[s:e] for s, e in sentence_spans(line) if e - s > 1]
    return out


# Where a sentence may be cut between whole clauses: before ", and/but/so/which/because…", a semicolon, a dash
# between spaces, or a colon.
CLAUSE_BREAK = re.compile(r"(?:,\s+(?:and|but|so|which|because|though|although|while|whereas)\b|;|\s[—–]\s|:\s)")


def clip_words(text: str, words: int) -> str:
    parts = text.split()
    return " ".join(parts[:words]) + (" …" if len(parts) > words else "")


def capitalise(text: str) -> str:
    return text[:1].upper() + text[1:]


def tidy(sentence: str) -> str:
    """A sentence as it should sit in the brief: no chatty lead-in, capitalised, one full stop."""
    s = sentence.strip().strip("-–— ")
    s = _LEAD_IN.sub("", s).strip(" ,;:-–—")
    if not s:
        return ""
    s = s[0].upper() + s[1:]
    return s if s[-1] in ".!?…" else s + "."


_LEAD_IN = re.compile(
    r"^(?:(?:so|ok(?:ay)?|well|right|yeah|yes|yep|and|also|plus|basically|honestly|frankly|look|anyway|"
    r"oh|hmm|um|to be honest|tbh|fwiw|for what it'?s worth|in short|long story short|to fill the brief|"
    r"for the brief|for the record|just so you know|one more thing|another thing|fair question|good question)"
    r"\b[\s,:;.!-]*)+",
    re.I,
)

# ---------------------------------------------------------------- words

_STOP = frozenset(
    "a an the and or but if then so of to in on at by for from with about as into over under than that this these "
    "those it its it's is are was were be been being am do does did done have has had having will would shall should "
    "can could may might must i me my mine we us our ours you your yours he him his she her hers they them their "
    "theirs what which who whom whose when where why how there here not no yes all any some each every more most "
    "other such only own same too very just also now really quite bit lot lots get got gets one two".split()
)


def _stem(word: str) -> str:
    for suffix in ("ing", "ers", "ies", "ed", "es", "er", "ly", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return word


@lru_cache(maxsize=8192)
def content_terms(text: str) -> frozenset[str]:
    """Stemmed content words: what two sentences must share to be about the same thing."""
    words = re.findall(r"[a-z0-9][a-z0-9'’\-]*", text.lower())
    return frozenset(_stem(w.strip("'’-")) for w in words if w not in _STOP and len(w) > 2)


def overlap(a: str, b: str) -> float:
    ta, tb = content_terms(a), content_terms(b)
    if not ta or not tb:
        return 0.0
    return len(ta & tb) / min(len(ta), len(tb))


# ---------------------------------------------------------------- numbers

_NUMBER_WORDS = "one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty|fifty|" \
                "hundred|a hundred|dozen|a dozen|half|a third|a quarter|double|triple"
CURRENCY = "£$€₹¥"  # the signs a figure of money may open with ("$1.2M", "₹22")
NUMBER = re.compile(
    rf"(?:[{CURRENCY}]\s?)?" r"(?<![\w.])\d(?:[\d,]*\d)?(?:\.\d+)?"
    r"(?:\s?(?i:%|percent|per cent|pp|points?|k|m|mn|bn|million|billion|x))?(?![\w])"
)
QUANTITY = re.compile(r"(?:" + NUMBER.pattern + r"|\b(?:" + _NUMBER_WORDS + r")\b)", re.I)


def numbers(text: str) -> list[str]:
    return [m.group(0).strip() for m in NUMBER.finditer(text)]


def number_kind(value: str) -> str:
    v = value.lower()
    if any(c in v for c in CURRENCY) or re.search(r"\d\s?(?:k|m|bn|million|billion)\b", v):
        return "money"
    if "%" in v or "percent" in v or "per cent" in v or v.endswith(("pp", "points", "point")):
        return "percent"
    return "plain"


def number_core(value: str) -> str:
    """The digits of a number as typed ("£180k" → "180", "4.8%" → "4.8")."""
    found = re.search(r"\d[\d,]*(?:\.\d+)?", value)
    return found.group(0) if found else value


# ---------------------------------------------------------------- hedges

HEDGE = re.compile(
    r"\b(?:i|we)\s+(?:really\s+|kind of\s+|sort of\s+)?(?:think|believe|assume|suspect|reckon|guess|imagine|expect|"
    r"figure|feel like|feel that|doubt|hope|bet)\b"
    r"|\b(?:i'?d|we'?d)\s+(?:bet|guess|imagine|assume|expect|wager|say)\b"
    r"|\bi'?m\s+(?:pretty|fairly|quite|almost|reasonably)\s+(?:sure|certain|confident)\b"
    r"|\b(?:my|our)\s+(?:guess|bet|hunch|sense|gut(?:\s+feel(?:ing)?)?|assumption|belief|hypothesis|read|"
    r"expectation|theory)\b"
    r"|\b(?:probably|presumably|apparently|supposedly|allegedly|likely|unlikely|hopefully|seemingly|"
    r"reportedly|arguably|possibly|perhaps|maybe)\b"
    r"|\b(?:it\s+)?seems\s+(?:like|that|to)\b|\blooks like\b"
    r"|\b(?:i'?ve|we'?ve)\s+(?:been told|heard)\b|\b(?:i|we)\s+(?:was|were|am|are|get|got)\s+told\b"
    r"|\b(?:i|we)\s+heard\b|\bword is\b|\brumou?r (?:is|has it)\b|\bthe story is\b"
    r"|\b(?:nobody|no one|no-one|none of us)\s+(?:has|have|had|'s)?\s*(?:actually\s+)?(?:checked|verified|"
    r"confirmed|tested|validated|measured|looked)\b"
    r"|\b(?:haven'?t|have not|hasn'?t|has not|never)\s+(?:actually\s+)?(?:checked|verified|confirmed|tested|"
    r"validated|measured)\b"
    r"|\bnot (?:verified|validated|confirmed|tested)\b|\bunverified\b|\buntested\b"
    r"|\bas far as (?:i|we) know\b|\bafaik\b|\biirc\b|\bin theory\b|\bon paper\b"
    r"|\b(?:the plan|the business case|the model|it)\s+assumes\b|\bassuming\b|\bthe assumption is\b"
    r"|\bshould (?:be able to|just)\b|\b(?:i'?m|we'?re)\s+(?:not sure|unsure)\b",
    re.I,
)
# Remarks about the conversation itself, or hedged answers with no claim in them.
_META = re.compile(
    r"\b(?:i|we)\s+(?:think|guess|believe)\s+(?:we'?ve|we have|we|i'?ve|i have|i|you'?ve|you have|you)\s+"
    r"(?:already\s+)?(?:covered|answered|discussed|talked|gone|been through|said|mentioned)\b"
    r"|\b(?:think|guess)\s+(?:so|not)\b"
    r"|\b(?:i|we)\s+(?:think|guess)\s+(?:that'?s|this is|it'?s)\s+(?:it|all|everything|enough|fair|right|correct|"
    r"true|a good (?:question|point)|covered|what i meant|the gist)\b"
    r"|\b(?:i|we)\s+(?:think|guess)\s+(?:you'?re|you are)\s+right\b"
    r"|\bnot sure (?:what you mean|i follow|i understand|i get|how to answer|about that question)\b"
    r"|\b(?:i|we)\s+(?:think|guess)\s+(?:we|i)\s+(?:can|should|could|need to|might)\s+(?:move|go|skip|wrap|"
    r"continue|stop|start|talk|come back|park|leave)\b"
    r"|\bmaybe (?:later|next time|we can come back)\b"
    r"|\b(?:makes sense|good question|fair point)\b.{0,20}$",
    re.I,
)


def is_hedged(sentence: str) -> bool:
    return bool(HEDGE.search(sentence)) and not _META.search(sentence)


def is_meta(sentence: str) -> bool:
    return bool(_META.search(sentence))


_HEDGE_STRIP = [
    re.compile(r"^(?:but|and|so|also|still|plus)\s+", re.I),
    re.compile(r"^(?:i|we)\s+(?:really\s+|kind of\s+|sort of\s+)?(?:think|believe|assume|suspect|reckon|guess|imagine|"
               r"expect|figure|feel like|feel|bet|hope)\s+(?:that\s+)?", re.I),
    re.compile(r"^(?:i'?d|we'?d)\s+(?:bet|guess|imagine|assume|expect|wager|say)\s+(?:that\s+)?", re.I),
    re.compile(r"^i'?m\s+(?:pretty|fairly|quite|almost|reasonably)\s+(?:sure|certain|confident)\s+(?:that\s+)?", re.I),
    re.compile(r"^(?:my|our)\s+(?:guess|bet|hunch|sense|gut(?:\s+feel(?:ing)?)?|assumption|belief|hypothesis|read|"
               r"expectation|theory)\s+(?:is|was|says)\s+(?:that\s+)?", re.I),
    re.compile(r"^(?:the plan|the business case|the model|it)\s+assumes\s+(?:that\s+)?", re.I),
    re.compile(r"^the assumption is\s+(?:that\s+)?", re.I),
    re.compile(r"^(?:i'?ve|we'?ve)\s+(?:been told|heard)\s+(?:that\s+)?", re.I),
    re.compile(r"^(?:i|we)\s+(?:was|were|am|are|get|got)\s+told\s+(?:that\s+)?", re.I),
    re.compile(r"^(?:i|we)\s+heard\s+(?:that\s+)?", re.I),
    re.compile(r"^(?:word is|rumou?r (?:is|has it)|the story is)\s+(?:that\s+)?", re.I),
    re.compile(r"^(?:as far as (?:i|we) know|afaik|iirc|in theory|on paper|apparently|supposedly|allegedly|"
               r"presumably|probably|hopefully|reportedly|seemingly|maybe|perhaps|honestly)\s*,?\s*", re.I),
    re.compile(r"^(?:it\s+)?seems\s+(?:like|that)\s+", re.I),
    re.compile(r"^(?:nobody|no one|no-one|none of us)\s+(?:has|have|had|'s)?\s*(?:actually\s+)?(?:checked|verified|"
               r"confirmed|tested|validated|measured|looked at)\s+(?:whether|if|that)?\s*", re.I),
    re.compile(r"^(?:we|i)\s+(?:haven'?t|have not|never)\s+(?:actually\s+)?(?:checked|verified|confirmed|tested|"
               r"validated|measured)\s+(?:whether|if|that)?\s*", re.I),
]
_HEDGE_TAIL = re.compile(
    r"[,;\s—–-]+(?:but\s+)?(?:i'?m|we'?re)\s+(?:not\s+(?:totally\s+|entirely\s+|100%\s+)?sure|unsure|guessing)"
    r"(?:\s+(?:about that|though|tbh|honestly))?[.!]*$"
    r"|[,;\s—–-]+(?:i\s+think|i\s+guess|i\s+suspect|i\s+believe|probably|presumably|apparently|supposedly|"
    r"i'?d\s+(?:say|guess|bet)|at least in theory|in theory|on paper|if i had to guess|but nobody(?:'s| has) checked"
    r"|but no one(?:'s| has) checked|not verified|unverified|(?:but\s+)?that'?s (?:a|my) guess|iirc|afaik)[.!]*$",
    re.I,
)
_INLINE_HEDGE = re.compile(r"\s*,?\s*\b(?:probably|presumably|apparently|supposedly|allegedly|likely|hopefully|"
                           r"i think|i guess|i suspect|i believe|i'?d say|i reckon)\b\s*,?", re.I)


def claim_without_hedge(sentence: str) -> str:
    """'I'd bet managers ignore it, but I'm not sure.' → 'Managers ignore it.'"""
    s = _LEAD_IN.sub("", sentence.strip()).strip()
    for _ in range(3):
        before = s
        for pattern in _HEDGE_STRIP:
            s = pattern.sub("", s).strip()
        s = _HEDGE_TAIL.sub("", s).strip()
        if s == before:
            break
    s = _INLINE_HEDGE.sub(" ", s)
    s = re.sub(r"\s{2,}", " ", s).strip(" ,;:-–—")
    return tidy(s) if s else ""


# ---------------------------------------------------------------- people and roles

ROLE_TITLE = (
    r"(?:s?vp|evp|avp|vice[ -]president|c[efoitmpdrh]o|chief \w+(?: \w+)? officer|head of|director|manager|"
    r"sponsor|president|founder|principal|chair|controller|treasurer|counsel|architect|analyst|engineer|"
    r"designer|officer|coordinator|administrator|supervisor|superintendent|rep|representative|steward|"
    r"champion|exec|executive|gm|general manager|managing director|scrum master|boss|commissioner|councillor|"
    r"minister|dean|matron|consultant|registrar|dispatcher|foreman|"
    r"(?:team|tech|shift|store|department|dept|ward|site|project|programme|program|design|engineering|product|data|"
    r"clinical|nursing|area|regional|practice|branch)\s+leads?|"
    r"(?:process|product|budget|business|system|data|service|platform)\s+owner|business partner|"
    r"product manager|pm)"
)
_ROLE_PHRASE = (
    r"\b(?:(?:our|the|their|my|a|an|his|her)\s+)?(?:(?:regional|area|district|store|general|senior|junior|interim|"
    r"acting|deputy|assistant|associate|group|global|local|national|ward|site|plant|branch|practice|clinical|"
    r"nursing|medical|finance|financial|it|hr|ops|operations|product|engineering|data|security|legal|compliance|"
    r"procurement|marketing|sales|customer|support|supply chain|category|merchandising|commercial|digital|"
    r"technical|tech|program|programme|project|account|union|shop|works|fleet|warehouse|logistics|claims|"
    r"underwriting|risk|audit|payroll|billing|revenue|growth|brand|partnerships?|service|facilities|estates|"
    r"transport|school|teaching|academic|editorial|content|platform|infrastructure|devops|qa|quality)\s+){0,3}"
    + ROLE_TITLE + r"s?\b(?:\s+(?:of|for)\s+(?:the\s+)?[A-Za-z&]+(?:\s+(?:and|&)\s+[A-Za-z]+)?|"
    r"(?-i:\s+[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?))?"
)
ROLE_PHRASE = re.compile(_ROLE_PHRASE, re.I)
_GROUP = (
    r"\b(?:(?:our|the|their)\s+)?(?:finance|legal|compliance|procurement|security|it|hr|ops|operations|"
    r"engineering|data|analytics|marketing|sales|support|customer success|product|design|infosec|privacy|"
    r"dpo|risk|audit|payroll|billing|training|facilities|supply chain|logistics|merchandising|category|"
    r"pricing|partnerships|leadership|exec|executive|board|union|works council|steering|platform|"
    r"infrastructure|clinical|nursing|medical|dispatch|fleet|warehouse|claims|underwriting|editorial)"
    r"\s+(?:team|teams|department|dept|function|org|group|committee|folks|people|side|guys|lot)\b"
    r"|\b(?:the\s+)?(?:board|union|works council|leadership team|exec team|c-suite|steering committee|"
    r"regulator|auditors?|legal|compliance|procurement|finance|infosec)\b"
)
GROUP = re.compile(_GROUP, re.I)
_ROLE_OR_GROUP = r"(?i:" + _ROLE_PHRASE + r"|" + _GROUP + r")"
_NAME_STOP = frozenset(
    """I I'm I'd I've I'll The A An And But Or So If When While Whilst Our We Us They Their This That These Those It
    Its My Your You He She His Her Him Yes No Ok Okay Also Then There Here What Which Who Why How Where Because
    Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February March April May June July August
    September October November December Q1 Q2 Q3 Q4 H1 H2 FY AI ML UK US USA EU NHS API CRM ERP POS SKU NPS CSAT
    ROI KPI OKR SaaS B2B B2C MVP V1 V2 PM PMs VP SVP EVP CEO CFO CTO COO CIO CMO CPO GDPR HIPAA SOC Excel Slack
    Teams Zoom Jira Salesforce SAP Oracle Google Microsoft Amazon AWS Azure Sheets Word PowerPoint Not Just Only
    Maybe Probably Actually Honestly Basically Right Well Sure Thanks Thank Let Let's Last Next First Second Third
    Mode Forge Question Answering Noted Scratch Sorry Every Each Some Most Many Few Both All None Nobody Everyone
    Anyway Still Even Sometimes Often Today Tomorrow Yesterday Week Month Year Store Stores Team Head Director
    Manager Managers Lead Leads Finance Legal Ops Operations Product Sales Marketing Support Engineering Data IT HR
    Dear Hi Hello Re Fwd Subject From To Cc Sent""".split()
)
# A capitalised word (or two) that reads as a person: "Maria", "Maria Lopez", "Dr. Shah", "O'Neill".
_CAP_NAME = r"(?:(?:Dr|Mr|Mrs|Ms|Prof)\.?\s+)?[A-Z][a-z]+(?:[-'’][A-Z][a-z]+)?(?:\s+[A-Z][a-z]+(?:[-'’][A-Z][a-z]+)?)?"
_PERSON_VERB = (r"(?:says|said|thinks|thought|wants|wanted|asked|asks|told|tells|agreed|agrees|approves|approved|"
                r"signs|signed|owns|owned|runs|ran|leads|led|manages|managed|heads|headed|hates|hated|loves|"
                r"complained|complains|pushed|pushes|worries|is worried|was worried|decides|decided|sponsors|"
                r"championed|champions|blocked|blocks|raised|escalated|mentioned|reckons|insists|insisted|moved|"
                r"left|joined|took over|takes over|signs off|is the one|is our|was our|from)")
_NAME_IN_CONTEXT = [
    # "Maria Lopez, VP Stores" / "Maria (VP of Stores)" / "Maria from finance" / "Maria in ops"
    re.compile(r"\b(" + _CAP_NAME + r")\s*(?:,\s*(?:our|the|who'?s|who is|a|an)?\s*|\(\s*|\s+(?:from|in|at|on|over in|"
               r"who runs|who owns|who leads|who heads|who manages)\s+(?:the\s+)?)"
               r"(?=" + _ROLE_OR_GROUP + r"|[a-z]+\b)"),
    # "our CFO, Dan Brown" / "the VP of Stores, Maria" / "CFO Dan"
    re.compile(r"(?i:" + _ROLE_PHRASE + r")\s*,?\s+(" + _CAP_NAME + r")\b"),
    # "Maria's the one who…", "Maria's team"
    re.compile(r"\b(" + _CAP_NAME + r")['’]s\s+(?:the one|(?:[\w-]+\s+){0,2}(?:team|group|org|department|call|"
               r"decision|budget|sign-?off|reporting))\b"),
    # "Maria says…", "Priya leads it now"
    re.compile(r"\b(" + _CAP_NAME + r")\s+(?:" + _PERSON_VERB + r")\b"),
    # "talked to Maria", "according to Maria", "ask Maria"
    re.compile(r"\b(?:talked to|spoke to|spoke with|met with|meeting with|call with|according to|asked|ask|told|"
               r"tell|email(?:ed)?|cc|ping(?:ed)?|check with|checked with|heard from|convince|persuade|"
               r"and|with)\s+(" + _CAP_NAME + r")\b"),
]


def person_names(sentence: str) -> list[str]:
    """Names of people in a sentence, by the company they keep (a role, a verb people do, a preposition)."""
    found: list[str] = []
    for pattern in _NAME_IN_CONTEXT:
        for m in pattern.finditer(sentence):
            name = next((g for g in m.groups() if g), "").strip()
            name = re.sub(r"\s+(?:From|In|At|On)$", "", name)
            parts = name.split()
            while parts and parts[0] in _NAME_STOP:
                parts = parts[1:]
            while parts and parts[-1] in _NAME_STOP:
                parts = parts[:-1]
            name = " ".join(parts)
            if len(name) >= 2 and name not in found and not any(name in f for f in found):
                found = [f for f in found if f not in name] + [name]
    return found


def lower_case_names(sentence: str) -> list[str]:
    """For people who type in lower case: 'maria from finance', 'dan (cfo)', 'our cfo dan'."""
    found = []
    for m in re.finditer(r"\b([a-z]{3,12})\s+(?:from|in|at|over in)\s+(?:the\s+)?(?:" + _GROUP
                         + r"|[a-z]+\s+(?:team|dept|department))", sentence):
        found.append(m.group(1))
    for m in re.finditer(r"\b([a-z]{3,12})\s*\(\s*(?:" + _ROLE_PHRASE + r")", sentence):
        found.append(m.group(1))
    for m in re.finditer(r"(?:" + _ROLE_PHRASE + r")\s*,?\s+([a-z]{3,12})\b(?=\s*(?:,|\(|\s[a-z]+(?:s|ed)\b|$))",
                         sentence):
        found.append(m.group(1))  # the pattern's only group (the role phrases capture nothing)
    for m in re.finditer(r"\b([a-z]{3,12})(?: [a-z]{2,15})?\s*\([a-z .&/-]{2,30}\)\s*(?:owns|signs|runs|leads|wants|"
                         r"says|is|has|will|would|decides|approves)\b", sentence):
        found.append(m.group(1))
    words = {w for w in found if w not in _STOP and w not in _COMMON_LOWER and not w.endswith(("ed", "ing"))}
    return [w.title() for w in dict.fromkeys(found) if w in words]


_COMMON_LOWER = frozenset(
    """the our who that which they them team store stores ops data sales people staff users every each would will
    also said says wants owns runs leads signs actually basically probably maybe just still even then thing things
    stuff someone somebody everyone nobody whoever finance legal product design engineering support marketing
    manager managers director lead head group side budget project process system tool tools office level""".split()
)


def role_phrases(sentence: str) -> list[str]:
    """Roles and groups named in a sentence ('our VP of Stores', 'the union rep', 'finance')."""
    found: list[str] = []
    for pattern in (ROLE_PHRASE, GROUP):
        for m in pattern.finditer(sentence):
            phrase = re.sub(r"^(?:our|the|their|my|a|an|his|her)\s+", "", m.group(0).strip(), flags=re.I)
            if phrase and not any(phrase.lower() in f.lower() for f in found):
                found.append(phrase)
    return found


# Organisational actors beyond job titles: teams, functions, partners and named vendors. PMs name them
# as stakeholders as often as they name people ("the food bank partner", "our GPS vendor, TrakLine").
_ACTOR_HEAD = (
    r"(?:team|teams|department|dept|unit|office|centre|center|desk|function|committee|board|council|union|unions|"
    r"partner|partners|vendor|vendors|supplier|suppliers|distributor|hauler|processor|lessor|regulator|shop|shops|"
    r"agency|agencies|agents|coaches|owners|publisher|newsroom|supervisors|attendant|attendants|planners|"
    r"schedulers|dispatchers|mechanics|technicians|techs|surgeons|nurses|teachers|adjusters|underwriters|"
    r"handlers|reps|analysts|managers|leads|squad|group|channel|bank|insurer|landlords?|contractors?|"
    r"processing|services|purchasing|procurement|compliance|legal|finance|marketing|sales|support|pricing|"
    r"security|anesthesia|anaesthesia|payroll|fraud unit|siu|ceo|cfo|cto|coo|cro|cmo|founders?|ops|it)"
)
_ACTOR = re.compile(
    r"\b(?:(?:the|our|their|a|an|its|his|her|my|some)\s+)?((?:(?!(?:the|our|their|a|an|and|or|to|of|in|on|for|with|"
    r"from|by|is|are|was|were|would|will|has|have|who|that|which|so|but|if)\b)[A-Za-z][\w&'’-]*\s+){0,2}"
    + _ACTOR_HEAD + r")\b",
    re.I,
)
_VENDOR_NAME = re.compile(
    r"\b(?:vendor|supplier|partner|provider|platform|distributor|processor|tool|app|product|plugin)s?"
    r"(?:\s+called|\s+named|,)?\s+((?:[A-Z][\w'’-]+)(?:\s+[A-Z][\w'’-]+)?)"
    r"|\b([A-Z][a-z]+[A-Z]\w+)\b"  # CamelCase product names: GradeMate, VeriDoc, TrakLine
)
_GENERIC_ACTOR = re.compile(r"^(?:team|teams|group|channel|services|shop|support|leads|managers|partners|partner|"
                            r"vendor|vendors|supplier|bank|processor|sales|unit|office|desk|function|board|agents|"
                            r"analysts|reps)$", re.I)


_FUNCTION_NOUNS = frozenset("sales support finance marketing pricing security compliance legal purchasing "
                            "procurement payroll services processing".split())


def actor_phrases(sentence: str) -> list[str]:
    """Teams, functions, partners and vendors named in a sentence."""
    found: list[str] = []
    for m in _VENDOR_NAME.finditer(sentence):
        name = (m.group(1) or m.group(2) or "").strip()
        if name and name not in _NAME_STOP and name not in found:
            found.append(name)
    for m in _ACTOR.finditer(sentence):
        phrase = m.group(1).strip()
        words = phrase.split()
        if len(words) == 1 and _GENERIC_ACTOR.match(phrase) and phrase.lower() not in ("sales", "support"):
            continue
        if len(words) > 1 and words[-1].lower() in _FUNCTION_NOUNS:
            continue  # "bakery sales", "customer support": a number or a service, not a group of people
        if words[0].lower() in _STOP or words[0].lower() in ("every", "all", "most", "many", "few", "both", "each"):
            continue
        if phrase.lower() == "it" or (phrase.lower() == "it" and not re.search(r"\bIT\b", sentence)):
            continue
        if not any(phrase.lower() in f.lower() or f.lower() in phrase.lower() for f in found):
            found.append(phrase)
    return found[:4]


_FILLER = re.compile(
    r"^(?:(?:ok(?:ay)?|yes|yep|yeah|sure|right|got it|fine|great|good|cool|thanks?(?: you)?|sounds good|"
    r"makes sense|that makes sense|agreed|continue|go on|go ahead|next question|next|move on|let'?s continue|"
    r"carry on|keep going|proceed|perfect|exactly|correct|noted|understood|alright|all right)"
    r"[\s,.!;:-]*)+(?:please|then|now|and)?[\s,.!]*"
    r"(?:(?:let'?s )?(?:continue|move on|go on|keep going|proceed|next))?[\s.!]*$",
    re.I,
)


def is_filler(message: str) -> bool:
    """An acknowledgement with nothing to act on ("ok, continue", "makes sense, next")."""
    text = message.strip()
    return not text or (len(text) <= 60 and bool(_FILLER.match(text)))
