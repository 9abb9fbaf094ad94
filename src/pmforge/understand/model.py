"""What understanding one PM message yields: typed facts, not prose.

The offline interviewer turns an `Understanding` into the same tool calls Claude makes, so both
providers fill the same state through the same tools.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

Slot = Literal[
    "problem", "audience", "stakeholder", "metric_leading", "metric_lagging", "metric_anti",
    "proceed_if", "do_not_proceed_if", "why_now", "tried_before", "out_of_scope", "day_one", "dependencies",
    "platform", "solution", "value_risk", "usability_risk", "feasibility_risk", "viability_risk", "build_vs_buy",
    "validation", "org_context",
]
Intent = Literal["statement", "filler", "summarize", "artifact", "evaluate", "wrap_up", "question_files",
                 "question_method", "meta"]


class Fact(BaseModel):
    """One thing the PM stated, for one field of the brief or the evaluation."""

    slot: Slot
    text: str  # the PM's sentence, tidied
    subject: str = ""  # a stakeholder's name or role; a solution's name
    detail: str = ""  # stakeholder role type; risk evidence side ("for" / "against"); build/buy/partner
    level: str = ""  # a risk level the PM stated outright
    score: float = 0.0  # how sure the classifier is that the sentence speaks to this field
    hedged: bool = False  # said as a belief, not as a fact


class Metric(BaseModel):
    """A success measure as a record: "Cost per return: $17 → under $9 by end of Q3" (lagging)."""

    name: str = ""  # what is measured, in the PM's words ("cost per return")
    baseline: str = ""  # where it is now ("$17")
    target: str = ""  # where it should get to, with its comparison ("under $9")
    deadline: str = ""  # by when ("by end of Q3")
    kind: Literal["leading", "lagging", "anti"] = "lagging"
    direction: str = ""  # "down" | "up" | "" as the PM wants it to move
    text: str = ""  # the PM's clause, tidied: what the brief shows when the record is not whole


class Person(BaseModel):
    """A stakeholder the PM named: a person, a role or a team, with what the words say of their part."""

    name: str
    kind: Literal["person", "role", "team"] = "person"
    role: str = "other"  # decision_authority | execution_dependency | status_quo_beneficiary | pain_holder | other
    title: str = ""  # "VP of Stores" beside "Maria Lopez"
    affiliation: str = ""  # "finance" for "Priya from finance"
    note: str = ""  # what this sentence says of them, in a few words
    sentence: str = ""


class Hedge(BaseModel):
    """A belief the PM holds without evidence: an assumption to register."""

    claim: str
    sentence: str
    evidence: str = ""  # what the PM offered in support or against, kept apart from the claim
    type: str = "value"
    impact: str = "medium"


class StatusChange(BaseModel):
    assumption_id: str
    status: Literal["confirmed", "invalidated"]
    reason: str


class Correction(BaseModel):
    """An earlier value the PM has superseded ("actually it's 3.4%, not 4.8%")."""

    old: str
    new: str
    sentence: str


class Departure(BaseModel):
    """A stakeholder who left the picture, and who replaces them if the PM said so."""

    name: str
    replacement: str = ""
    sentence: str = ""


class ProbeAnswer(BaseModel):
    probe: str
    evidence: str
    score: float = 0.0


class Understanding(BaseModel):
    intent: Intent = "statement"
    facts: list[Fact] = Field(default_factory=list)
    hedges: list[Hedge] = Field(default_factory=list)
    status_changes: list[StatusChange] = Field(default_factory=list)
    corrections: list[Correction] = Field(default_factory=list)
    departures: list[Departure] = Field(default_factory=list)
    probes: list[ProbeAnswer] = Field(default_factory=list)
    metrics: list[Metric] = Field(default_factory=list)
    people: list[Person] = Field(default_factory=list)
    options: list[str] = Field(default_factory=list)  # vendors, products and systems named (never stakeholders)
    artifact_kind: str = ""  # problem_brief | solution_evaluation | assumption_register
    solution_name: str = ""  # the option the PM wants evaluated
    question: str = ""  # what the PM asked, when they asked something

    def slot(self, *names: str) -> list[Fact]:
        return [f for f in self.facts if f.slot in names]

    @property
    def captured_anything(self) -> bool:
        return bool(self.facts or self.hedges or self.status_changes or self.corrections or self.departures
                    or self.metrics or self.people)
