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

MIN_SCORE = 0.5
ROLE_SLOTS = frozenset({"must_change", "gains_from_status_quo", "decides"})
ROLE_SLOT_CUT = 0.5


def classify(sentences: list[str], facts_by_sentence: list[list[Fact]], answered_by: dict[str, tuple[str, ...]],
             people: list[Person] | None = None, readings: "list[Reading] | None" = None,
             limit: int = 2) -> list[ProbeAnswer]:
    """The probes (the keys of `answered_by`: each probe's `Answered by` in the catalogue, for the probes in
    play) this message answers, best first, each with its answering sentence."""
    best: dict[str, tuple[float, str]] = {}

    def offer(pid: str, score: float, sentence: str) -> None:
        if score >= MIN_SCORE and score > best.get(pid, (0.0, ""))[0]:
            best[pid] = (score, sentence)

    for sentence, facts in zip(sentences, facts_by_sentence):
        for fact in facts:
            for pid, slots in answered_by.items():
                if fact.slot in slots:
                    offer(pid, fact.score or 1.0, sentence)
    for person in people or []:  # the part a person named plays ("the store managers would have to count")
        for pid, slots in answered_by.items():
            if person.role in slots:
                offer(pid, 0.9, person.sentence)
    # The part people play in a sentence, read by the classifier ("whose work changes: the mechanics would…").
    for sentence, reading in zip(sentences, readings or []):
        for pid, slots in answered_by.items():
            for slot in slots:
                if slot in ROLE_SLOTS and reading.p(slot) >= ROLE_SLOT_CUT:
                    offer(pid, reading.p(slot), sentence)
    ranked = sorted(best, key=lambda p: -best[p][0])[:limit]
    return [ProbeAnswer(probe=p, evidence=best[p][1], score=best[p][0]) for p in ranked]
