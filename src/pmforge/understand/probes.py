"""Which diagnostic probes a message answers, judged by what its sentences were understood to say.

A probe is answered by content, not by the PM having said something: the fields the learned classifier
filed a sentence under (a trigger answers "why now", a guardrail answers the value hypothesis), and the part
the people it names play (someone who must change their daily work answers the execution reality check). A
question answers nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pmforge.understand.model import Fact, Person, ProbeAnswer

if TYPE_CHECKING:
    from pmforge.understand.fields import Reading

# The fields of the record that answer each probe. A probe's own catalogue file may say the same in its
# "Answered by" line; these are the built-in probes' answers.
ANSWERED_BY: dict[str, tuple[str, ...]] = {
    "solution_problem_separation": ("problem",),
    "why_now": ("why_now", "tried_before"),
    "immediate_vs_platform": ("platform", "day_one"),
    "execution_reality_check": ("must_change",),
    "status_quo_beneficiaries": ("gains_from_status_quo",),
    "edge_mapping": ("dependencies", "out_of_scope"),
    "value_hypothesis": ("metric_leading", "metric_lagging", "metric_anti", "proceed_if", "do_not_proceed_if"),
    "solution_problem_fit": ("solution",),
    "value_risk": ("value_risk",),
    "usability_risk": ("usability_risk",),
    "feasibility_risk": ("feasibility_risk",),
    "viability_risk": ("viability_risk",),
    "build_buy_partner": ("build_vs_buy",),
    "validation_approach": ("validation",),
}
# The part a stakeholder plays that answers a probe.
ANSWERED_BY_ROLE = {"execution_dependency": "execution_reality_check",
                    "status_quo_beneficiary": "status_quo_beneficiaries"}
MIN_SCORE = 0.5
ROLE_SLOTS = frozenset({"must_change", "gains_from_status_quo", "decides"})
ROLE_SLOT_CUT = 0.5


def classify(sentences: list[str], facts_by_sentence: list[list[Fact]], probe_ids: list[str],
             people: list[Person] | None = None, readings: "list[Reading] | None" = None,
             limit: int = 2) -> list[ProbeAnswer]:
    """The probes (among `probe_ids`) this message answers, best first, each with its answering sentence."""
    best: dict[str, tuple[float, str]] = {}

    def offer(pid: str, score: float, sentence: str) -> None:
        if pid in probe_ids and score >= MIN_SCORE and score > best.get(pid, (0.0, ""))[0]:
            best[pid] = (score, sentence)

    for sentence, facts in zip(sentences, facts_by_sentence):
        for fact in facts:
            for pid, slots in ANSWERED_BY.items():
                if fact.slot in slots:
                    offer(pid, fact.score or 1.0, sentence)
    for person in people or []:
        role_probe = ANSWERED_BY_ROLE.get(person.role)
        if role_probe:
            offer(role_probe, 0.9, person.sentence)
    # The part people play in a sentence, read by the classifier ("whose work changes: the mechanics would…").
    for sentence, reading in zip(sentences, readings or []):
        for pid, slots in ANSWERED_BY.items():
            for slot in slots:
                if slot in ROLE_SLOTS and reading.p(slot) >= ROLE_SLOT_CUT:
                    offer(pid, reading.p(slot), sentence)
    ranked = sorted(best, key=lambda p: -best[p][0])[:limit]
    return [ProbeAnswer(probe=p, evidence=best[p][1], score=best[p][0]) for p in ranked]
