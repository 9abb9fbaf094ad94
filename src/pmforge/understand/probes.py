"""Which diagnostic probes a message answers, judged by its content.

A probe is answered by what the PM says, not by the PM having said something. Each probe has
strong cues (a phrase that on its own answers it: "out of scope", "who benefits from today's
way", "whose work changes") and weak ones (words that lean its way); the slots a sentence fills
count too (a target with a date answers the value hypothesis; a baseline describes the problem).
"""

from __future__ import annotations

import re

from pmforge.understand import slots
from pmforge.understand.model import Fact, ProbeAnswer

_I = re.I


def _cue(strong: str, weak: str = r"$^") -> tuple[re.Pattern, re.Pattern]:
    return re.compile(strong, _I), re.compile(weak, _I)


CUES: dict[str, tuple[re.Pattern, re.Pattern]] = {
    "solution_problem_separation": _cue(
        r"\b(?:the (?:real|actual|core|underlying|root|main|big) (?:problem|issue|pain)\b(?! (?:first|before))|"
        r"what (?:i|we) (?:keep )?(?:hear|see|saw|heard|found)\w*|(?:real |concrete |a concrete |for )?example[:,]|"
        r"for instance|the other day|workarounds?|(?:today|currently|right now),? (?:they|we|the|our|people|staff)|"
        r"experience is|what happens (?:is|when)|by hand|manually|spreadsheets?|keeps? me up at night|"
        r"takes? (?:her|him|them|us|people|staff|a \w+) (?:\w+ ){0,2}(?:hours|days|weeks|weekends|minutes)|"
        r"never (?:finish|complete|hear)|drop(?:s|ped)? off|give up|gives up|end up|"
        r"(?:pasted|my|the) notes from|interviews?:|what (?:applicants|customers|users|tenants|patients|"
        r"teachers|drivers|managers) (?:experience|see|get|do))",
        r"\b(?:frustrat\w*|complain\w*|hate\w*|struggl\w*|wast\w*|binn\w*|throw\w* (?:away|out)|los(?:e|es|ing|t)|"
        r"late|slow|delay\w*|stuck|guess\w*|gut feel|painful|pain|hurts?|annoy\w*|angry|repeat\w*|second visit|"
        r"idle|backlog|churn\w*|cancel\w*|abandon\w*|ignore\w*)"),
    "why_now": _cue(
        r"\b(?:why now|deadline|have until|regulat\w*|new law|legislation|(?:market conduct |compliance )?exam|"
        r"audit\w*|competitors? (?:\w+ )?(?:shipped|launched|released|announced|just)|rivals? (?:shipped|launched)|"
        r"findings letter|kicked (?:this|it) off|came up (?:after|because|when)|penalt\w*|contract (?:ends|"
        r"expires|renewal|is up|with)|lost (?:a|the|two|three) (?:deal|customer|contract|client)s?|went viral|"
        r"in the (?:news|press)|budget (?:cycle|round|season)|(?:ceo|cro|cfo|board|owners?|vp|svp|exec\w*|"
        r"leadership|publisher)\b.{0,40}\b(?:asked|wants|mandate\w*|set a target|target of|came back|insist\w*|"
        r"pushing|escalat\w*)|target of .{1,40} by|fire\b)",
        r"\b(?:recently|this (?:quarter|year|fall|autumn|spring)|next (?:spring|summer|quarter|year)|since|urgent\w*|"
        r"pressure|escalat\w*|suddenly|now)\b"),
    "immediate_vs_platform": _cue(
        r"\b(?:day one|platform|one-?off|reus\w*|v1 is|version one|start (?:with|small)|phase (?:1|one|2|two)|"
        r"narrow|first use ?case|only for|just for|later conversation|rather not promise|shared capability|"
        r"(?:other|sister|three other|the other) (?:teams?|plants?|papers?|regions?|sites?|products?|brands?|"
        r"business units?|departments?|depots?|stores?|hospitals?|schools?)|copy it|roll (?:it )?out to them|"
        r"wants? in later|(?:would|could) build on|future-?proof|while we'?re at it)",
        r"\b(?:later|scope|first|only)\b"),
    "execution_reality_check": _cue(
        r"\b(?:whose (?:work|job|day|routine)s? changes?|(?:would|will|has|have|had) to (?:change|stop|start|approve|"
        r"agree|sign|expose|integrate|move|switch|review|own|check|keep|learn|go through|accept|put|pull|"
        r"be trained)|would need to|needs? to (?:agree|approve|sign|change|expose|integrate)|"
        r"(?:owns?|owner|own|accountable|responsible)(?: for)? adoption|adoption (?:owner|would sit|sits|is)|"
        r"dependencies:|deps:|(?:we'?d|we would|we) depend on|measured on|paid (?:on|by|hourly|per hour)|"
        r"comp plan|incentive|bonus|(?:stop|start) doing|would (?:switch|move) from|training|retrain\w*|"
        r"won'?t bother|doesn'?t push|push it|who decides? which)",
        r"\b(?:adopt\w*|rollout|roll out|routine|workflow|approve\w*|sign off|stretched|bandwidth|capacity)\b"),
    "status_quo_beneficiaries": _cue(
        r"\b(?:status quo|who (?:benefits|likes|wins|gains|loses)|benefits? (?:from|now)|likes? (?:it|things|the "
        r"current|how it)|resist\w*|push(?:es)? back|pushback|would lose|stands? to lose|losing (?:that|the|their)|"
        r"paid per|per (?:visit|ton|retry|inspection|attempt|claim)|rebate|fee per|not (?:going|exactly) (?:to cheer|"
        r"motivated|thrilled|keen)|hardest (?:person|one|people) to convince|sides? with|vocal about|take pride|"
        r"as an insult|status thing|loudest voice|will fight|good money|looks? (?:bad|worse) for|numbers? look "
        r"(?:worse|bad|fantastic|good)|locked in|current (?:vendor|supplier|provider)|incumbent|turf|territorial|"
        r"likes approving|gives? them control|go-to person)",
        r"\b(?:control|contract|hate|against|reluctant|nervous|sceptic\w*|skeptic\w*|lever)\b"),
    "edge_mapping": _cue(
        r"\b(?:upstream|downstream|adjacent|out of scope|in scope|feeds? (?:into|from)|comes? (?:in)?to|come into|"
        r"hand-?offs?|handed off|syncs? (?:to|with)|same (?:data|users|system|platform|customers)|other initiatives?|"
        r"in parallel|replatform\w*|migrat\w*|different (?:warehouse|team|flow|system|vendor)|diff team|"
        r"that'?s (?:a )?(?:different|another|other) team|is building|are building|rolling out (?:a|an|their|new))",
        r"\b(?:system|data|api|erp|crm|integrat\w*|inputs?|outputs?|reporting)\b"),
    "value_hypothesis": _cue(
        r"\b(?:leading(?: indicator| metric)?|lagging(?: indicator| metric| outcome)?|anti-?metric|guardrail|"
        r"north star|success (?:looks|means|is|would)|we'?d know|metrics?\b|kpis?)",
        r"\b(?:measure\w*|baseline|target\w*)\b"),
    "solution_problem_fit": _cue(
        r"\b(?:fit\b|fit-?wise|on fit|what it is:|address(?:es)? the|solves?|maps? to|doesn'?t (?:fix|solve|address)|"
        r"nothing in .{1,30} (?:fixes|solves|addresses)|targets? (?:only )?(?:part|the)|nice-?to-?haves?|"
        r"feature creep|scope creep)",
        r"\b(?:scope|problem)\b"),
    "value_risk": _cue(
        r"(?:^value\b\s*[:—-]|\bvalue risk|\bwhether .{1,50} (?:will|would) (?:act|use|adopt|trust|update|send|"
        r"switch|pay|open|follow|bother)|\bstopped (?:opening|using)|\bwilling(?:ness)? to pay|\bdemand\b|"
        r"\b(?:would|will) (?:they|users|customers|people|tenants|mechanics|teachers|drivers|managers) (?:actually )?"
        r"(?:act on|use|switch|trust|pay|follow|send|open|update))"),
    "usability_risk": _cue(
        r"(?:^usability\b\s*[:—-]|\busability|\b(?:hard|easy|confusing) to use|\bsecond language|\btechnical "
        r"(?:questions|terms|language)|\bon (?:a |their )?(?:phone|mobile|tablet|handheld)s?|\bscreens?\b|"
        r"\bclicks?\b|\bgloves\b|\bux\b|\bui\b|\bintuitive|\bliteracy)"),
    "feasibility_risk": _cue(
        r"(?:^feasibility\b\s*[:—-]|\bfeasib\w*|\bintegrat\w*|\bmiddleware|\bon-?premise|\bapi\b|\bdata "
        r"(?:scientists?|quality|is|isn'?t|are|aren'?t)|\bengineers?\b|\bestimate\w*|\b\w+-week job|"
        r"\bweeks? (?:job|to build)|\bisn'?t realistic|\blegacy|\binfrastructure)"),
    "viability_risk": _cue(
        r"(?:^viability\b\s*[:—-]|\bviability|\bcosts? (?:about |around )?[£$€\d]|[£$€]\s?\d|\bper (?:year|month|"
        r"seat|van|store|tenant|user)\b|\blicen[cs]\w*|\blegal\b|\bdpia|\bgdpr|\bdata protection|\bprivacy|"
        r"\bcompliance|\bcontract\w*|\bbudget|\broi\b|\bpayback|\bsign-?off)"),
    "build_buy_partner": _cue(
        r"(?:\bbuild (?:option|vs|versus|or buy)|\bbuy(?:ing)? [A-Z]\w+|\b(?:recommend\w*|lean(?:ing)?|my lean) "
        r"(?:is )?(?:to |towards? )?(?:buy|build|partner)|\boptions are|\bpartner(?:ing)? with|\bin-?house|"
        r"\bourselves\b|\boff[- ]the[- ]shelf|\bbuild vs)"),
    "validation_approach": _cue(
        r"(?:\bcheapest (?:test|way)|\briskiest assumption|\bpass (?:if|criteria)|\bfail (?:if|criteria)|"
        r"\bconcierge|\bfake[- ]door|\ba/?b[- ]test|\bprototype test|\bsmoke test|\bexperiment\b|"
        r"\bfor (?:\d+|two|three|four|six|eight) weeks (?:in|at|with)|\bsuccess criteria|\bkill criteria|"
        r"\bshown to \d+|\bin (?:two|three|\d+) (?:depots|stores|sites|clinics|branches|regions))"),
}
# The PM announcing what they want to do, not describing the problem: "I want to frame the real problem first".
_INTENTION = re.compile(r"\b(?:want to|need to|let'?s|before (?:anyone|we)|first)\b.{0,30}\b(?:figure out|frame|"
                        r"understand|find|scope|get to|pin down)\b|\bscope a thing\b", _I)
_SLOT_PROBES = {
    "metric_leading": "value_hypothesis", "metric_anti": "value_hypothesis",
    "proceed_if": "value_hypothesis", "do_not_proceed_if": "value_hypothesis",
    "value_risk": "value_risk", "usability_risk": "usability_risk", "feasibility_risk": "feasibility_risk",
    "viability_risk": "viability_risk", "build_vs_buy": "build_buy_partner", "validation": "validation_approach",
}
_ROLE_PROBES = {"status_quo_beneficiary": "status_quo_beneficiaries", "execution_dependency": "execution_reality_check"}


def _sentence_score(pid: str, sentence: str, facts: list[Fact]) -> float:
    strong, weak = CUES[pid]
    score = 2.0 * min(len({m.group(0).lower() for m in strong.finditer(sentence)}), 2)
    score += 0.5 * min(len({m.group(0).lower() for m in weak.finditer(sentence)}), 2)
    for fact in facts:
        if _SLOT_PROBES.get(fact.slot) == pid:
            score += 1.5
        if fact.slot == "metric_lagging":
            # A target answers the value hypothesis; a bare baseline describes the problem.
            aim = slots.GOAL.search(sentence) or re.search(r"\blagging\b", sentence, _I)
            if pid == ("value_hypothesis" if aim else "solution_problem_separation"):
                score += 2.0
        if fact.slot == "stakeholder" and _ROLE_PROBES.get(fact.detail.split("|")[0]) == pid:
            score += 0.5
        if fact.slot == "problem" and pid == "solution_problem_separation":
            score += 1.0
        if fact.slot == "solution" and pid == "solution_problem_fit":
            score += 0.5
    if pid == "solution_problem_separation" and _INTENTION.search(sentence):
        score = 0.0
    return score


def classify(sentences: list[str], facts_by_sentence: list[list[Fact]], probe_ids: list[str],
             limit: int = 2) -> list[ProbeAnswer]:
    """The probes (among `probe_ids`) this message answers, best first, each with its answering sentence."""
    scores: dict[str, float] = {}
    evidence: dict[str, tuple[float, str]] = {}
    # A question the PM asks themselves and answers ("Who benefits? The vendor.") still frames the answer.
    answered = any(not s.rstrip().endswith("?") for s in sentences)
    for sentence, facts in zip(sentences, facts_by_sentence):
        if not answered:
            continue
        for pid in probe_ids:
            score = _sentence_score(pid, sentence, facts) if pid in CUES else 0.0
            if score > 0:
                scores[pid] = scores.get(pid, 0.0) + score
                if score > evidence.get(pid, (0.0, ""))[0]:
                    evidence[pid] = (score, sentence)
    ranked = sorted((p for p in scores if scores[p] >= 2.0), key=lambda p: -scores[p])[:limit]
    if len(ranked) == 2 and scores[ranked[1]] < 0.5 * scores[ranked[0]]:
        ranked = ranked[:1]
    return [ProbeAnswer(probe=p, evidence=evidence[p][1], score=scores[p]) for p in ranked]
