"""What understanding one PM message yields: typed facts, not prose.

The offline interviewer turns an `Understanding` into the same tool calls Claude makes, so both
providers fill the same state through the same tools.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

Slot = Literal[
    "problem", "audience", "stakeholder", "metric_leading", "metric_lagging", "metric_anti",
    "proceed_if", "do_not_proceed_if", "solution", "value_risk", "usability_risk", "feasibility_risk",
    "viability_risk", "build_vs_buy", "validation", "org_context",
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


class Hedge(BaseModel):
    """A belief the PM holds without evidence: an assumption to register."""

    claim: str
    sentence: str
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
    artifact_kind: str = ""  # problem_brief | solution_evaluation | assumption_register
    solution_name: str = ""  # the option the PM wants evaluated
    question: str = ""  # what the PM asked, when they asked something

    def slot(self, *names: str) -> list[Fact]:
        return [f for f in self.facts if f.slot in names]

    @property
    def captured_anything(self) -> bool:
        return bool(self.facts or self.hedges or self.status_changes or self.corrections or self.departures)
