"""Which diagnostic probes a message answers, judged by its content.

A probe is answered by what the PM says, not by the PM having said something: each probe has
cues drawn from its catalogue purpose and look-for list, and the slots a sentence fills count as
evidence too (a metric with a baseline answers the value hypothesis).
"""

from __future__ import annotations

import re

from .model import Fact, ProbeAnswer

_I = re.I

CUES: dict[str, re.Pattern] = {
    "solution_problem_separation": re.compile(
        r"\b(?:workaround\w*|today (?:they|we|the|our|it|people|staff|managers)|by hand|manually|spreadsheets?|"
        r"last (?:week|month|time|year|quarter|friday|monday|tuesday|wednesday|thursday|saturday|sunday)|"
        r"for example|for instance|e\.g\.|the other day|what happens is|what actually happens|the (?:real|actual|"
        r"core|underlying|root) (?:problem|issue|pain)|isn'?t (?:really )?about|not (?:really )?about the|"
        r"the pain|hurts?|costs? (?:us|them)|throw(?:ing|n)? away|binn\w*|wast\w*|gut feel\w*|guess\w*|"
        r"complain\w*|frustrat\w*|hate\w*|struggl\w*|takes? (?:\w+ )?(?:hours|minutes|days|ages)|spend\w* "
        r"(?:\w+ )?(?:hours|minutes|days)|currently|at the moment|right now (?:they|we)|in practice)\b", _I),
    "why_now": re.compile(
        r"\b(?:why now|now because|right now because|this (?:year|quarter)|next (?:quarter|year)|recently|"
        r"last (?:quarter|month|year)|since (?:the|we|last|january|february|march|april|may|june|july|august|"
        r"september|october|november|december|q[1-4])|deadline|by (?:q[1-4]|the end of|january|february|march|"
        r"april|may|june|july|august|september|october|november|december)|regulat\w*|new law|legislation|"
        r"compliance deadline|competitor\w*|rival\w*|launched|ceo|board|exec\w* (?:asked|wants|mandate)|"
        r"mandate\w*|budget (?:cycle|round|season)|planning (?:cycle|round)|contract (?:ends|expires|renewal|"
        r"is up)|renewal|urgent\w*|urgency|pressure|incident|outage|audit|fine[ds]?|went viral|press|"
        r"trigger\w*|kicked off|came up (?:after|when|because)|escalat\w*|suddenly|all of a sudden|"
        r"has always been|always been (?:a|this)|for years|attempted before|tried (?:this |it )?before)\b", _I),
    "immediate_vs_platform": re.compile(
        r"\b(?:platform|one-?off|reus\w*|other teams?|other (?:regions?|departments?|products?|business units?|"
        r"brands?|markets?|countries|stores?|sites?)|just (?:for|the|need)|first use ?case|use ?cases?|day one|"
        r"start (?:with|small)|narrow\w*|scope|phase (?:1|one|2|two)|v1|version one|later (?:we|on)|generic|"
        r"extend (?:it )?to|roll (?:it )?out to (?:everyone|all)|only (?:need|want|for)|future-?proof|scalable|"
        r"while we'?re at it|shared (?:service|capability)|foundation|quick (?:fix|win)|tactical|strategic)\b", _I),
    "execution_reality_check": re.compile(
        r"\b(?:would have to|will have to|have to change|need(?:s)? to change|change (?:how|the way|their)|"
        r"train\w*|retrain\w*|adopt\w*|routine|workflow|their (?:day|job|shift)|extra (?:work|steps?|clicks|"
        r"time)|buy-?in|accountab\w*|own (?:the )?(?:rollout|adoption|change)|champion\w*|incentiv\w*|"
        r"what'?s in it for|bonus\w*|comp(?:ensation)?\b|rollout|roll (?:it )?out|change management|"
        r"habit\w*|behaviou?r change|day-?to-?day|on the floor|won'?t use|will use|would use|agreed to|"
        r"signed up to|who manages|last time (?:we|they) (?:tried|rolled|introduced))\b", _I),
    "status_quo_beneficiaries": re.compile(
        r"\b(?:benefits? from|would lose|stands? to lose|lose (?:control|budget|headcount|power|their)|resist\w*|"
        r"push(?:es|ed|ing)? back|pushback|threat\w*|turf|territorial|current vendor|incumbent|existing vendor|"
        r"likes? (?:it|things) (?:the way|as)|comfortable with|block\w*|veto|politic\w*|protective|their bonus|"
        r"look(?:s)? (?:bad|worse)|metric would|slow to respond|non-?committal|not (?:thrilled|keen|happy|"
        r"a fan)|won'?t like|hates? the idea|status quo|owns? the (?:current|existing|old)|built the (?:current|"
        r"existing|old)|job security|their jobs?|headcount|sceptic\w*|skeptic\w*|against (?:it|this|the idea))\b",
        _I),
    "edge_mapping": re.compile(
        r"\b(?:depends? on|dependenc\w*|dependent on|upstream|downstream|feeds? (?:into|from)|fed (?:by|from|into)|"
        r"data comes from|comes? from (?:the|our) (?:system|erp|pos|sap|warehouse|crm|feed)|integrat\w*|"
        r"another team|other team'?s|owned by|out of scope|not in scope|in scope|hand-?offs?|hands? off|"
        r"consum\w*|reports? (?:go|goes) to|billing|api\w*|same (?:data|users|systems?)|other initiatives?|"
        r"in parallel|at the same time|migration|replatform\w*|erp|pos system|sap|crm|data warehouse|"
        r"relies on|rely on|inputs?|outputs?|feeds?)\b", _I),
    "value_hypothesis": re.compile(
        r"\b(?:metric\w*|kpi\w*|measure\w*|indicator\w*|north star|baseline|target\w*|success (?:looks like|means|"
        r"is|would be)|we'?d know|we'?ll know|anti-?metric|guardrail\w*|leading|lagging|pull the plug|kill it|"
        r"walk away|go/no-?go|stop if|would stop)\b", _I),
    "solution_problem_fit": re.compile(
        r"\b(?:solves?|fits?|addresses|maps? to|in scope|out of scope|scope|nice-?to-?haves?|feature creep|"
        r"would (?:remove|replace|kill) the|step (?:disappears|goes away)|the (?:tool|app|system|idea) (?:would|"
        r"does|is)|core (?:feature|problem)|must-?haves?|cut (?:the|that))\b", _I),
    "value_risk": re.compile(r"$^"),
    "usability_risk": re.compile(r"$^"),
    "feasibility_risk": re.compile(r"$^"),
    "viability_risk": re.compile(r"$^"),
    "build_buy_partner": re.compile(r"$^"),
    "validation_approach": re.compile(r"$^"),
}
# Slots that answer a probe outright.
_SLOT_PROBES = {
    "metric_leading": "value_hypothesis", "metric_lagging": "value_hypothesis", "metric_anti": "value_hypothesis",
    "proceed_if": "value_hypothesis", "do_not_proceed_if": "value_hypothesis",
    "value_risk": "value_risk", "usability_risk": "usability_risk", "feasibility_risk": "feasibility_risk",
    "viability_risk": "viability_risk", "build_vs_buy": "build_buy_partner", "validation": "validation_approach",
}
_ROLE_PROBES = {"status_quo_beneficiary": "status_quo_beneficiaries", "execution_dependency": "execution_reality_check"}


def classify(sentences: list[str], facts_by_sentence: list[list[Fact]], probe_ids: list[str],
             limit: int = 2) -> list[ProbeAnswer]:
    """The probes (among `probe_ids`) this message answers, best first, each with its answering sentence."""
    scores: dict[str, float] = {}
    evidence: dict[str, tuple[float, str]] = {}
    for sentence, facts in zip(sentences, facts_by_sentence):
        if sentence.rstrip().endswith("?"):
            continue
        for pid in probe_ids:
            score = 0.0
            cue = CUES.get(pid)
            hits = {m.group(0).lower() for m in cue.finditer(sentence)} if cue else set()
            score += min(len(hits), 3) * 1.0
            for fact in facts:
                if _SLOT_PROBES.get(fact.slot) == pid:
                    score += 2.0
                if fact.slot == "stakeholder" and _ROLE_PROBES.get(fact.detail.split("|")[0]) == pid:
                    score += 1.0
                if fact.slot == "problem" and pid == "solution_problem_separation":
                    score += 1.0
                if fact.slot == "solution" and pid == "solution_problem_fit":
                    score += 1.0
            if score > 0:
                scores[pid] = scores.get(pid, 0.0) + score
                if score > evidence.get(pid, (0.0, ""))[0]:
                    evidence[pid] = (score, sentence)
    ranked = sorted((p for p in scores if scores[p] >= 2.0), key=lambda p: -scores[p])[:limit]
    return [ProbeAnswer(probe=p, evidence=evidence[p][1], score=scores[p]) for p in ranked]
