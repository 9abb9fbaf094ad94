"""The offline interviewer's note-taking: which tool calls an understood message warrants (the turn
acknowledges what they recorded, in both modes: see `turn.acknowledge`).

Every argument comes from the PM's own words (see `pmforge.understand`). Lists are sent whole
(existing items plus new ones) because the tools replace them, which is also how a correction
removes a superseded value instead of piling up beside it.
"""

from __future__ import annotations

import re

from pmforge.core.models import SessionState
from pmforge.tools.brief import apply_correction
from pmforge.understand import Understanding
from pmforge.understand import text as t
from pmforge.understand.model import Fact
from pmforge.understand.slots import GOAL, PROBLEM_EXPLICIT, is_solution

_ROLE_LABEL = {"decision_authority": "decision authority", "pain_holder": "feels the pain",
               "status_quo_beneficiary": "benefits from today's way", "execution_dependency": "has to change or deliver",
               "other": "involved"}
_PROBLEM_CHARS = 1100
_AUDIENCE_CHARS = 580


def _merge(existing: list[str], new: list[str], limit: int = 10) -> list[str]:
    """Existing items plus new ones; past the limit the oldest go first, except those that state an aim."""
    merged = list(existing)
    for item in new:
        if not any(t.overlap(item, old) >= 0.8 for old in merged):
            merged.append(item)
    while len(merged) > limit:
        plain = next((i for i, item in enumerate(merged) if not GOAL.search(item)), 0)
        merged.pop(plain)
    return merged


def _join_within(parts: list[str], limit: int) -> str:
    """Sentences joined; past the limit the oldest after the first go, keeping those that name the problem."""
    parts = list(dict.fromkeys(p for p in parts if p))
    while len(" ".join(parts)) > limit and len(parts) > 2:
        drop = next((i for i in range(1, len(parts) - 1) if not PROBLEM_EXPLICIT.search(parts[i])), 1)
        parts.pop(drop)
    return " ".join(parts)[:limit]


def _sentences_of(text: str) -> list[str]:
    return t.sentences(text) if text else []


def _find_stakeholder(state: SessionState, name: str):
    wanted = name.casefold()
    for s in state.problem_brief.stakeholders:
        have = s.name.casefold()
        if have == wanted or have.split()[0] == wanted.split()[0] and (" " not in have or " " not in wanted):
            return s
    return None


def _stakeholder_calls(facts: list[Fact], state: SessionState, departed: set[str]) -> list[tuple[str, dict]]:
    calls: list[tuple[str, dict]] = []
    seen: set[str] = set()
    for fact in facts:
        role, _, title = fact.detail.partition("|")
        name = fact.subject.strip()
        if not name or name.casefold() in seen or name.casefold() in departed:
            continue
        seen.add(name.casefold())
        note = (f"{title}. " if title and title.lower() not in fact.text.lower() else "") + fact.text
        existing = _find_stakeholder(state, name)
        if existing is None:
            calls.append(("add_stakeholder", {"name": t.clip_words(name, 8)[:120], "role": role or "other",
                                              "notes": t.clip_words(note, 60)[:400]}))
        else:
            update: dict = {"name": existing.name}
            if existing.role == "other" and role and role != "other":
                update["role"] = role
            notes = _join_within(_sentences_of(existing.notes) + [fact.text], 400)
            if notes != existing.notes:
                update["notes"] = notes
            if len(update) > 1:
                calls.append(("update_stakeholder", update))
    return calls


def _risk_calls(u: Understanding, state: SessionState) -> list[tuple[str, dict]]:
    calls = []
    evaluation = state.solution_evaluation
    for dim in ("value", "usability", "feasibility", "viability"):
        facts = u.slot(f"{dim}_risk")
        if not facts:
            continue
        current = getattr(evaluation, f"{dim}_risk")
        against = _merge(current.evidence_against, [f.text for f in facts if f.detail == "against"])
        supporting = _merge(current.evidence_for, [f.text for f in facts if f.detail == "for"])
        stated = next((f.level for f in reversed(facts) if f.level), "")
        if stated:
            level = stated
        elif len(against) > len(supporting):
            level = "high" if len(against) >= 2 * max(1, len(supporting)) else "medium"
        elif supporting:
            level = "low" if not against else "medium"
        else:
            level = current.level if current.level != "unknown" else "medium"
        calls.append(("set_risk_assessment", {
            "dimension": dim, "level": level, "summary": t.clip_words(facts[-1].text, 60)[:600],
            "evidence_for": supporting, "evidence_against": against}))
    return calls


def _options(text: str) -> list[str]:
    found = re.findall(r"\b(?:build(?:ing)? (?:it )?in-?house|build(?:ing)? our own|off[- ]the[- ]shelf|"
                       r"(?:partner(?:ing)?|partnership) with [A-Z]\w+|[A-Z]\w+(?:'s)? (?:tool|platform|product|"
                       r"module|app|suite|solution)|the vendor'?s? \w+)", text)
    return [f[0].upper() + f[1:] for f in found]


def _solution_description(u: Understanding, state: SessionState, name: str) -> str:
    said = [f.text for f in u.slot("solution")]
    if not said and name:
        terms = t.content_terms(name)
        for turn in state.turns:
            for sentence in t.sentences(turn.user):
                if (terms & t.content_terms(sentence) or is_solution(sentence)) and not sentence.endswith("?"):
                    said.append(t.tidy(sentence))
    existing = state.solution_evaluation.solution_description
    text = _join_within(_sentences_of(existing) + said, 1100)
    return text if len(text) >= 10 else f"The option under evaluation: {name or 'the proposed solution'}."


def _best_assumption(state: SessionState, text: str) -> str:
    live = [a for a in state.assumptions if not a.retired and a.status != "invalidated"]
    if not live:
        return ""
    scored = max(live, key=lambda a: (t.overlap(text, a.claim), a.impact == "high", a.number))
    return scored.id if t.overlap(text, scored.claim) >= 0.2 else ""


def _mode_2_calls(u: Understanding, state: SessionState, entering: bool) -> list[tuple[str, dict]]:
    calls: list[tuple[str, dict]] = []
    evaluation = state.solution_evaluation
    name = u.solution_name or evaluation.solution_name
    if entering or (u.slot("solution") and name):
        calls.append(("set_solution_info", {"name": (name or "The proposed solution")[:120],
                                            "description": _solution_description(u, state, name)}))
    calls += _risk_calls(u, state)
    build = u.slot("build_vs_buy")
    if build:
        current = evaluation.build_vs_buy
        recommendation = next((f.detail for f in reversed(build) if f.detail), current.recommendation)
        rationale = _join_within(_sentences_of(current.rationale) + [f.text for f in build], 800)
        calls.append(("set_build_vs_buy", {
            "recommendation": recommendation, "rationale": rationale,
            "options_considered": _merge(current.options_considered, [o for f in build for o in _options(f.text)],
                                         limit=6)}))
    validation = u.slot("validation")
    criteria = [f.text for f in u.slot("proceed_if", "do_not_proceed_if")]
    if validation or (criteria and evaluation.validation_plan.approach):
        plan = evaluation.validation_plan
        texts = [f.text for f in validation]
        approach = next((f.subject for f in validation if f.subject), "") or plan.approach or "pilot"
        timeline = next((f.detail for f in validation if f.detail), "") or plan.timeline
        riskiest = plan.riskiest_assumption or _best_assumption(state, " ".join(texts))
        calls.append(("set_validation_plan", {
            "riskiest_assumption": riskiest, "approach": approach[:200],
            "description": _join_within(_sentences_of(plan.description) + texts, 800), "timeline": timeline[:200],
            "success_criteria": _merge(plan.success_criteria, criteria)}))
    return calls


def tool_calls(u: Understanding, state: SessionState, mode: str, org_context: str, entering_mode_2: bool,
               turn_number: int) -> list[tuple[str, dict]]:
    """(tool name, arguments) for everything this message states, in the order a note-taker would write."""
    calls: list[tuple[str, dict]] = []
    if u.corrections:
        # Plan against the record as the corrections leave it, or a merged list would bring an old value back.
        state = state.model_copy(deep=True)
        for correction in u.corrections:
            apply_correction(state, correction.old, correction.new, turn_number, "")
    for answer in u.probes:
        calls.append(("record_probe", {"probe": answer.probe, "evidence": t.clip_words(answer.evidence, 60)[:400]}))
    for correction in u.corrections:
        calls.append(("correct_fact", {"old": correction.old, "new": correction.new,
                                       "reason": t.clip_words(correction.sentence, 50)[:300]}))
    departed: set[str] = set()
    for departure in u.departures:
        old = _find_stakeholder(state, departure.name)
        if old is None:
            continue
        departed.add(old.name.casefold())
        calls.append(("remove_stakeholder", {"name": old.name, "reason": t.clip_words(departure.sentence, 40)}))
        first = old.name.split()[0]
        for other in state.problem_brief.stakeholders:
            # The one who left must leave the others' notes too, or the brief still names them.
            if other is not old and re.search(r"\b" + re.escape(first) + r"\b", other.notes):
                kept = [s for s in t.sentences(other.notes) if not re.search(r"\b" + re.escape(first) + r"\b", s)]
                calls.append(("update_stakeholder", {"name": other.name, "notes": " ".join(kept)}))
        if departure.replacement and _find_stakeholder(state, departure.replacement) is None:
            departed.add(departure.replacement.casefold())
            calls.append(("add_stakeholder", {"name": departure.replacement, "role": old.role,
                                              "notes": t.clip_words(t.tidy(departure.sentence), 50)}))
    for change in u.status_changes:
        calls.append(("update_assumption_status", {"id": change.assumption_id, "status": change.status,
                                                   "reason": change.reason[:400]}))
    known = [a.claim for a in state.assumptions if not a.retired]
    for hedge in u.hedges:
        if any(t.overlap(hedge.claim, claim) >= 0.8 for claim in known):
            continue
        known.append(hedge.claim)
        calls.append(("register_assumption", {
            "claim": hedge.claim[:400], "type": hedge.type, "impact": hedge.impact, "confidence": "guessed",
            "basis": t.clip_words(f"The PM, turn {turn_number}: “{hedge.sentence}”", 60)[:400]}))

    brief = state.problem_brief
    problem = [f.text for f in u.slot("problem")]
    if problem and mode == "mode_1":
        statement = _join_within(_sentences_of(brief.problem_statement) + problem, _PROBLEM_CHARS)
        if statement != brief.problem_statement and len(statement) >= 10:
            calls.append(("update_problem_statement", {"problem_statement": statement}))
    audience = [f.text for f in u.slot("audience")]
    if audience:
        merged = _join_within(_sentences_of(brief.target_audience) + audience, _AUDIENCE_CHARS)
        if merged != brief.target_audience:
            calls.append(("update_target_audience", {"target_audience": merged}))
    calls += _stakeholder_calls(u.slot("stakeholder"), state, departed)
    metrics = brief.success_metrics
    changes = {}
    for field, slot in (("leading", "metric_leading"), ("lagging", "metric_lagging"), ("anti_metrics", "metric_anti")):
        new = [f.text for f in u.slot(slot)]
        if new:
            changes[field] = _merge(getattr(metrics, field), new)
    if changes:
        calls.append(("update_success_metrics", changes))
    for kind in ("proceed_if", "do_not_proceed_if"):
        for fact in u.slot(kind):
            calls.append(("add_decision_criterion", {"kind": kind, "criterion": t.clip_words(fact.text, 50)[:300]}))
    org = [f.text for f in u.slot("org_context")]
    if org:
        calls.append(("update_org_context", {"org_context": " ".join([org_context, *org]).strip()[:3000]}))
    if mode == "mode_2" or entering_mode_2:
        calls += _mode_2_calls(u, state, entering_mode_2)
    if u.intent == "artifact" and u.artifact_kind:
        calls.append(("generate_artifact", {"kind": u.artifact_kind}))
    return calls
