"""The offline interviewer's note-taking: which tool calls an understood message warrants (the turn
acknowledges what they recorded, in both modes: see `turn.acknowledge`).

Every argument comes from the PM's own words as understanding read them (`pmforge.understand`), and the
brief is written from those records rather than pasted: the problem statement is composed from the best few
sentences about who hurts, the pain, its size and the evidence (three sentences and 90 words at most); a
metric is its record rendered ("Cost per return: $17 → under $9 by end of Q3"); a stakeholder is a name with
a few words on their part. Lists are sent whole (existing items plus new ones) because the tools replace them,
which is also how a correction removes a superseded value instead of piling up beside it.
"""

from __future__ import annotations

import re

from pmforge.core.models import SessionState, Stakeholder
from pmforge.tools import tool_call
from pmforge.tools.assumptions import RegisterAssumption, UpdateAssumptionStatus
from pmforge.tools.brief import (
    AddDecisionCriterion,
    AddStakeholder,
    CorrectFact,
    RemoveStakeholder,
    UpdateProblemContext,
    UpdateProblemStatement,
    UpdateStakeholder,
    UpdateSuccessMetrics,
    UpdateTargetAudience,
    apply_correction,
)
from pmforge.tools.session import GenerateArtifact, RecordProbe, UpdateOrgContext
from pmforge.tools.solution import SetBuildVsBuy, SetRiskAssessment, SetSolutionInfo, SetValidationPlan
from pmforge.understand import Understanding, fields, nlp
from pmforge.understand import text as t
from pmforge.understand.model import Fact, Person

ROLE_LABEL = {"decision_authority": "decision authority", "pain_holder": "feels the pain",
              "status_quo_beneficiary": "benefits from today's way", "execution_dependency": "has to change or deliver",
              "other": "involved"}
PROBLEM_SENTENCES, PROBLEM_WORDS = 3, 90
AUDIENCE_SENTENCES, AUDIENCE_WORDS = 2, 60
WHY_NOW_SENTENCES, WHY_NOW_WORDS = 2, 60
DAY_ONE_SENTENCES, DAY_ONE_WORDS = 3, 90  # a day-one case is told as a short story: who, what happens, what changes
LIST_LIMIT = 6
_NOTE_CHARS = 240


# ---------------------------------------------------------------- composing prose fields from sentences


def _clause(sentence: str, words: int = 40) -> str:
    """A long sentence cut at its last clause boundary that keeps it under `words` (whole clauses only)."""
    if len(sentence.split()) <= words:
        return sentence
    cuts = [m.start() for m in t.CLAUSE_BREAK.finditer(sentence) if len(sentence[: m.start()].split()) <= words]
    head = sentence[: cuts[-1]] if cuts else " ".join(sentence.split()[:words])
    return t.tidy(head.rstrip(" ,;:—–"))


def _field_scores(texts: list[str], label: str) -> list[float]:
    """How strongly the classifier reads each text as speaking to `label` (re-reading what a field holds, so
    a sentence that only arrived by an older rule can be outranked)."""
    if not texts:
        return []
    return [r.p(label) for r in fields.read(texts, nlp.parse(texts))]


def compose(existing: str, new: list[Fact], label: str, max_sentences: int, max_words: int,
            prefer_numbers: bool = False) -> str:
    """The best few sentences for a prose field: what it holds now plus this turn's candidates, ranked by the
    classifier, near-duplicates dropped, within a sentence and word budget, in the order they were said."""
    held = [s for s in t.sentences(existing)] if existing else []
    held_scores = _field_scores(held, label)
    candidates: list[tuple[float, int, str]] = [(score, n, s) for n, (s, score) in enumerate(zip(held, held_scores))]
    for n, fact in enumerate(new, start=len(held)):
        candidates.append((fact.score - (0.15 if fact.hedged else 0.0), n, _clause(fact.text)))
    chosen: list[tuple[int, str]] = []
    words = 0
    ranked = sorted(candidates, key=lambda c: -c[0])
    if prefer_numbers and ranked:
        # The size of the pain: a sentence with a figure joins the best one when it is nearly as strong.
        top = ranked[0]
        sized = next((c for c in ranked[1:] if t.NUMBER.search(c[2]) and c[0] >= 0.5 * top[0]), None)
        if sized and not t.NUMBER.search(top[2]):
            ranked.remove(sized)
            ranked.insert(1, sized)
    for score, order, sentence in ranked:
        size = len(sentence.split())
        if len(chosen) >= max_sentences or not sentence:
            break
        if words + size > max_words or any(t.overlap(sentence, other) >= 0.6 for _, other in chosen):
            continue
        chosen.append((order, sentence))
        words += size
    return " ".join(sentence for _, sentence in sorted(chosen))


def _merge(existing: list[str], new: list[str], limit: int = LIST_LIMIT) -> list[str]:
    """Existing items plus new ones; an item that restates one already there replaces it; past the limit the
    oldest go."""
    merged = list(existing)
    for item in new:
        same = next((i for i, old in enumerate(merged) if t.overlap(item, old) >= 0.7), None)
        if same is None:
            merged.append(item)
        elif merged[same] != item:
            merged[same] = item
    return merged[-limit:]


def _merge_metrics(existing: list[str], new: list[Fact], limit: int = LIST_LIMIT) -> list[str]:
    """A metric already listed under the same name is updated in place ("Cost per return: $17 → under $9"
    replaces "Cost per return: under $10"); others are added."""
    merged = list(existing)
    for fact in new:
        name = fact.subject.lower()
        same = next((i for i, old in enumerate(merged)
                     if (name and old.lower().startswith(name + ":")) or t.overlap(fact.text, old) >= 0.7), None)
        if same is None:
            merged.append(fact.text)
        else:
            merged[same] = fact.text
    return merged[-limit:]


# ---------------------------------------------------------------- stakeholders


def find_stakeholder(state: SessionState, name: str) -> Stakeholder | None:
    """The listed stakeholder a name refers to: the same name, or the same first name when one of the two is a
    first name alone ("Priya" is "Priya Shah")."""
    wanted = name.casefold()
    for s in state.problem_brief.stakeholders:
        have = s.name.casefold()
        if have == wanted or have.split()[0] == wanted.split()[0] and (" " not in have or " " not in wanted) \
                and have[:1].isalpha() and not _is_role_text(have) and not _is_role_text(wanted):
            return s
    return None


def _is_role_text(name: str) -> bool:
    return bool(re.match(r"^(?:the\s+)?(?:[a-z]+\s+){0,3}(?:team|department|dept|union|board|committee|vp|cfo|ceo|"
                         r"coo|cto|head|director|manager|lead|officer)s?\b", name.casefold()))


def _group_named_by_head(state: SessionState, name: str) -> Stakeholder | None:
    """The one listed group a bare group word refers back to: "managers" is the "store managers" already
    listed, "mechanics" the "depot mechanics". Only a one-word name, only when a single listed group ends in
    that word (singular or plural), so two kinds of manager are never folded together."""
    words = re.sub(r"^(?:the|our|their|all)\s+", "", name.casefold()).split()
    if len(words) != 1:
        return None
    def singular(word: str) -> str:
        return word[:-1] if word.endswith("s") else word

    found = [s for s in state.problem_brief.stakeholders if len(s.name.split()) > 1
             and singular(s.name.casefold().split()[-1]) == singular(words[0])]
    return found[0] if len(found) == 1 else None


def _holder_of_title(state: SessionState, title: str) -> Stakeholder | None:
    """The listed person who holds a title ("the CFO" is "Dan Brown" when his notes say CFO)."""
    wanted = re.sub(r"^(?:the|our|their)\s+", "", title.casefold()).strip()
    if not wanted:
        return None
    for s in state.problem_brief.stakeholders:
        first = s.notes.split(";")[0].strip().casefold()
        if first == wanted:
            return s
    return None


def _note(person: Person) -> str:
    parts = [p for p in (person.title, person.affiliation and f"from {person.affiliation}", person.note) if p]
    return "; ".join(dict.fromkeys(parts))


def _stakeholder_calls(people: list[Person], state: SessionState, departed: set[str],
                       options: set[str]) -> list[tuple[str, dict]]:
    calls: list[tuple[str, dict]] = []
    planned: dict[str, dict] = {}  # name (folded) -> the add call this turn makes for it
    for person in people:
        name = person.name.strip()
        folded = name.casefold()
        if len(name) < 2 or folded in departed or folded in options:
            continue
        existing = find_stakeholder(state, name) or (_holder_of_title(state, name) if person.kind == "role" else None) \
            or (_group_named_by_head(state, name) if person.kind in ("role", "team") else None)
        note = _note(person)
        if existing is None and folded in planned:
            add = planned[folded]
            if add["role"] == "other" and person.role != "other":
                add["role"] = person.role
            add["notes"] = _join_notes(add["notes"], note)
            continue
        if existing is None:
            add = {"name": t.clip_words(name, 8)[:120], "role": person.role, "notes": note[:_NOTE_CHARS]}
            planned[folded] = add
            calls.append(tool_call(AddStakeholder, add))
            continue
        update: dict = {"name": existing.name}
        if person.kind == "person" and " " not in existing.name and len(name.split()) == 2 \
                and name.split()[0].casefold() == existing.name.casefold() and name[:1].isupper():
            update["full_name"] = name  # "Ray" is "Ray Dunleavy" once the surname is given
        if person.role != "other" and existing.role in ("other", "pain_holder") and existing.role != person.role:
            update["role"] = person.role
        notes = _join_notes(existing.notes, note)
        if notes != existing.notes:
            update["notes"] = notes
        if len(update) > 1:
            calls.append(tool_call(UpdateStakeholder, update))
    return calls


def _join_notes(old: str, new: str) -> str:
    parts = [p.strip() for p in old.split(";") if p.strip()]
    for piece in (p.strip() for p in new.split(";") if p.strip()):
        if not any(t.overlap(piece, p) >= 0.6 or piece.casefold() == p.casefold() for p in parts):
            parts.append(piece)
    while len("; ".join(parts)) > _NOTE_CHARS and len(parts) > 1:
        parts.pop(1)  # the title stays first; the oldest remarks go
    return "; ".join(parts)[:_NOTE_CHARS]


# ---------------------------------------------------------------- the solution evaluation


def _risk_level(stated: str, supporting: list[str], against: list[str], current: str) -> str:
    """A level the PM stated wins; otherwise evidence that points one way sets it; otherwise not assessed."""
    if stated:
        return stated
    if against and not supporting:
        return "high" if len(against) >= 2 else "medium"
    if supporting and not against:
        return "low"
    if supporting and against:
        return "medium"
    return current


def _risk_calls(u: Understanding, state: SessionState) -> list[tuple[str, dict]]:
    calls = []
    evaluation = state.solution_evaluation
    for dim in ("value", "usability", "feasibility", "viability"):
        facts = u.slot(f"{dim}_risk")
        if not facts:
            continue
        current = getattr(evaluation, f"{dim}_risk")
        against = _merge(current.evidence_against, [_clause(f.text) for f in facts if f.detail == "against"])
        supporting = _merge(current.evidence_for, [_clause(f.text) for f in facts if f.detail == "for"])
        stated = next((f.level for f in reversed(facts) if f.level), "")
        level = _risk_level(stated, supporting, against, current.level)
        summary = _clause(max(facts, key=lambda f: f.score).text, 30)
        calls.append(tool_call(SetRiskAssessment, {
            "dimension": dim, "level": level, "summary": summary[:600],
            "evidence_for": supporting, "evidence_against": against}))
    return calls


_BUILD = re.compile(r"\b(?:build(?:ing)? (?:it )?(?:in-?house|ourselves|our own|on our own)|roll our own|"
                    r"in-?house|homegrown|home-grown)\b", re.I)


def _options(u: Understanding, text: str) -> list[str]:
    found = [o for o in u.options if o.lower() in text.lower()]
    if _BUILD.search(text):
        found.append("Build in-house")
    if re.search(r"\bpartner(?:ing|ship)? with\b", text, re.I):
        partner = re.search(r"\bpartner(?:ing|ship)? with\s+([A-Z][\w&'-]+(?:\s+[A-Z][\w&'-]+)?)", text)
        found.append(f"Partner with {partner.group(1)}" if partner else "Partner")
    return found


def _solution_description(u: Understanding, state: SessionState, name: str) -> str:
    said = [f for f in u.slot("solution")]
    if name and not state.solution_evaluation.solution_description:
        # Entering the evaluation: what the PM said of the option before asking to evaluate it.
        terms = t.content_terms(name)
        earlier = [s for turn in state.turns for s in t.sentences(turn.user)
                   if terms & t.content_terms(s) and not s.rstrip().endswith("?")]
        scores = _field_scores(earlier, "solution")
        said += [Fact(slot="solution", text=t.tidy(s), score=p) for s, p in zip(earlier, scores) if p >= 0.3]
    existing = state.solution_evaluation.solution_description
    text = compose(existing, said, "solution", 3, 90)
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
        calls.append(tool_call(SetSolutionInfo, {"name": (name or "The proposed solution")[:120],
                                            "description": _solution_description(u, state, name)}))
    calls += _risk_calls(u, state)
    build = u.slot("build_vs_buy")
    if build:
        current = evaluation.build_vs_buy
        recommendation = next((f.detail for f in reversed(build) if f.detail), current.recommendation)
        rationale = compose(current.rationale, build, "build_vs_buy", 4, 120)
        calls.append(tool_call(SetBuildVsBuy, {
            "recommendation": recommendation, "rationale": rationale,
            "options_considered": _merge(current.options_considered,
                                         [o for f in build for o in _options(u, f.text)], limit=6)}))
    validation = u.slot("validation")
    criteria = [f.text for f in u.slot("proceed_if", "do_not_proceed_if")]
    if validation or (criteria and evaluation.validation_plan.approach):
        plan = evaluation.validation_plan
        approach = next((f.subject for f in validation if f.subject), "") or plan.approach or "pilot"
        timeline = next((f.detail for f in validation if f.detail), "") or plan.timeline
        riskiest = plan.riskiest_assumption or _best_assumption(state, " ".join(f.text for f in validation))
        calls.append(tool_call(SetValidationPlan, {
            "riskiest_assumption": riskiest, "approach": approach[:200],
            "description": compose(plan.description, validation, "validation", 4, 120), "timeline": timeline[:200],
            "success_criteria": _merge(plan.success_criteria, criteria)}))
    return calls


# ---------------------------------------------------------------- the whole message


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
        calls.append(tool_call(RecordProbe, {"probe": answer.probe, "evidence": t.clip_words(answer.evidence, 60)[:400]}))
    for correction in u.corrections:
        calls.append(tool_call(CorrectFact, {"old": correction.old, "new": correction.new,
                                       "reason": t.clip_words(correction.sentence, 50)[:300]}))
    departed: set[str] = set()
    for departure in u.departures:
        old = find_stakeholder(state, departure.name)
        if old is None:
            continue
        departed.add(old.name.casefold())
        calls.append(tool_call(RemoveStakeholder, {"name": old.name, "reason": t.clip_words(departure.sentence, 40)}))
        first = old.name.split()[0]
        for other in state.problem_brief.stakeholders:
            # The one who left must leave the others' notes too, or the brief still names them.
            if other is not old and re.search(r"\b" + re.escape(first) + r"\b", other.notes):
                kept = [s for s in other.notes.split(";") if not re.search(r"\b" + re.escape(first) + r"\b", s)]
                calls.append(tool_call(UpdateStakeholder, {"name": other.name, "notes": ";".join(kept).strip()}))
        if departure.replacement and find_stakeholder(state, departure.replacement) is None:
            departed.add(departure.replacement.casefold())
            title = old.notes.split(";")[0].strip() if old.notes else ""
            calls.append(tool_call(AddStakeholder, {"name": departure.replacement, "role": old.role,
                                              "notes": "; ".join(p for p in (title, f"took over from {old.name}")
                                                                 if p)}))
    for change in u.status_changes:
        calls.append(tool_call(UpdateAssumptionStatus, {"id": change.assumption_id, "status": change.status,
                                                   "reason": change.reason[:400]}))
    known = [a.claim for a in state.assumptions if not a.retired]
    for hedge in u.hedges:
        if any(t.overlap(hedge.claim, claim) >= 0.8 for claim in known):
            continue
        known.append(hedge.claim)
        basis = (f"Turn {turn_number}: {hedge.evidence}" if hedge.evidence
                 else f"Turn {turn_number}: said as a belief, not yet checked")
        calls.append(tool_call(RegisterAssumption, {
            "claim": hedge.claim[:400], "type": hedge.type, "impact": hedge.impact, "confidence": "guessed",
            "basis": t.clip_words(basis, 60)[:400]}))

    brief = state.problem_brief
    problem = [f for f in u.slot("problem") if not f.hedged]  # a guess is registered as an assumption instead
    if problem and mode == "mode_1":
        statement = compose(brief.problem_statement, problem, "problem", PROBLEM_SENTENCES, PROBLEM_WORDS,
                            prefer_numbers=True)
        if statement != brief.problem_statement and len(statement) >= 10:
            calls.append(tool_call(UpdateProblemStatement, {"problem_statement": statement}))
    audience = u.slot("audience")
    if audience:
        merged = compose(brief.target_audience, audience, "audience", AUDIENCE_SENTENCES, AUDIENCE_WORDS)
        if merged != brief.target_audience and len(merged) >= 3:
            calls.append(tool_call(UpdateTargetAudience, {"target_audience": merged}))
    options = {o.casefold() for o in u.options} | {o.casefold() for o in
                                                   state.solution_evaluation.build_vs_buy.options_considered}
    calls += _stakeholder_calls(u.people, state, departed, options)
    metrics = brief.success_metrics
    changes = {}
    for field, slot in (("leading", "metric_leading"), ("lagging", "metric_lagging"), ("anti_metrics", "metric_anti")):
        new = u.slot(slot)
        if new:
            merged_metrics = _merge_metrics(getattr(metrics, field), new)
            if merged_metrics != getattr(metrics, field):
                changes[field] = merged_metrics
    if changes:
        calls.append(tool_call(UpdateSuccessMetrics, changes))
    for kind in ("proceed_if", "do_not_proceed_if"):
        listed = getattr(brief.decision_criteria, kind)
        for fact in u.slot(kind):
            criterion = _clause(fact.text, 45)
            if len(criterion) >= 5 and not any(t.overlap(criterion, c) >= 0.7 for c in listed):
                calls.append(tool_call(AddDecisionCriterion, {"kind": kind, "criterion": criterion[:300]}))
    context = _context_changes(u, state)
    if context:
        calls.append(tool_call(UpdateProblemContext, context))
    org = [f.text for f in u.slot("org_context")]
    if org:
        calls.append(tool_call(UpdateOrgContext, {"org_context": " ".join([org_context, *org]).strip()[:3000]}))
    if mode == "mode_2" or entering_mode_2:
        calls += _mode_2_calls(u, state, entering_mode_2)
    if u.intent == "artifact" and u.artifact_kind:
        calls.append(tool_call(GenerateArtifact, {"kind": u.artifact_kind}))
    return calls


def _context_changes(u: Understanding, state: SessionState) -> dict:
    brief = state.problem_brief
    changes: dict = {}
    why = u.slot("why_now")
    if why:
        text = compose(brief.why_now, why, "why_now", WHY_NOW_SENTENCES, WHY_NOW_WORDS)
        if text and text != brief.why_now:
            changes["why_now"] = text[:600]
    for field, slot in (("tried_before", "tried_before"), ("out_of_scope", "out_of_scope")):
        new = [_clause(f.text, 40) for f in u.slot(slot)]
        if new:
            merged = _merge(getattr(brief, field), new)
            if merged != getattr(brief, field):
                changes[field] = merged
    day_one = u.slot("day_one")
    if day_one:
        text = compose(brief.day_one_use_case, day_one, "day_one", DAY_ONE_SENTENCES, DAY_ONE_WORDS)
        if text and text != brief.day_one_use_case:
            changes["day_one_use_case"] = text[:400]
    return changes
