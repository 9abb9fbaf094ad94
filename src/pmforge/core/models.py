"""Forge's state, one pydantic model per concept.

`SessionState` is saved as `state.json`, `Manifest` as `project_state.json`.
Tool argument models live in `tools.py`; their JSON schemas are generated from
the models there, never written by hand.
"""

from __future__ import annotations

import secrets
import unicodedata
from datetime import datetime, timezone
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, Field, ValidationInfo, field_validator

# 3: the transcript moved out of state.json into the append-only turns.jsonl (older files migrate on load).
SCHEMA_VERSION = 3

Mode = Literal["mode_1", "mode_2"]
RouteAction = Literal[
    "ask_questions", "micro_synthesize", "enter_mode", "continue_mode", "flag_conflict", "complete_mode"
]


def now_iso() -> str:
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat()


def new_turn_id() -> str:
    return "t-" + secrets.token_hex(6)


# ---------------------------------------------------------------- assumptions

AssumptionType = Literal["value", "technical", "stakeholder_dependency", "market", "organisational"]
Impact = Literal["high", "medium", "low"]
Confidence = Literal["guessed", "informed", "validated"]
AssumptionStatus = Literal["active", "at_risk", "confirmed", "invalidated"]


class AssumptionChange(BaseModel):
    turn: int
    field: str
    old: str | None = None
    new: str | None = None
    reason: str = ""


class Assumption(BaseModel):
    id: str  # "A1", "A2", ...
    claim: str
    type: AssumptionType = "value"
    impact: Impact = "medium"
    confidence: Confidence = "guessed"
    status: AssumptionStatus = "active"
    basis: str = ""
    surfaced_by: str = ""  # probe or pattern that surfaced it
    surfaced_turn: int = 0
    depends_on: list[str] = Field(default_factory=list)
    recommended_action: str = ""
    implied_stakeholders: list[str] = Field(default_factory=list)
    retired: bool = False  # kept for the record, out of the working register
    history: list[AssumptionChange] = Field(default_factory=list)

    @property
    def number(self) -> int:
        digits = "".join(ch for ch in self.id if ch.isdigit())
        return int(digits) if digits else 0


# ---------------------------------------------------------------- skeletons

StakeholderRole = Literal["decision_authority", "pain_holder", "status_quo_beneficiary", "execution_dependency", "other"]


class Stakeholder(BaseModel):
    name: str
    role: StakeholderRole = "other"
    validated: bool = False
    notes: str = ""


class SuccessMetrics(BaseModel):
    leading: list[str] = Field(default_factory=list)
    lagging: list[str] = Field(default_factory=list)
    anti_metrics: list[str] = Field(default_factory=list)


class DecisionCriteria(BaseModel):
    proceed_if: list[str] = Field(default_factory=list)
    do_not_proceed_if: list[str] = Field(default_factory=list)


class BriefChange(BaseModel):
    """A value that left the brief or the evaluation (a correction, a departure): the history keeps it."""

    turn: int
    field: str
    old: str
    new: str = ""
    reason: str = ""


class ProblemBrief(BaseModel):
    """Mode 1 skeleton: what is really going on, and is it worth pursuing?"""

    problem_statement: str = ""
    target_audience: str = ""
    stakeholders: list[Stakeholder] = Field(default_factory=list)
    success_metrics: SuccessMetrics = Field(default_factory=SuccessMetrics)
    decision_criteria: DecisionCriteria = Field(default_factory=DecisionCriteria)
    why_now: str = ""  # the trigger that makes this urgent now, with its source or date
    tried_before: list[str] = Field(default_factory=list)  # earlier attempts and what became of them
    out_of_scope: list[str] = Field(default_factory=list)  # what this work deliberately leaves out
    day_one_use_case: str = ""  # the one use case that has to work first


RiskLevel = Literal["unknown", "low", "medium", "high"]


class RiskAssessment(BaseModel):
    level: RiskLevel = "unknown"
    summary: str = ""
    evidence_for: list[str] = Field(default_factory=list)
    evidence_against: list[str] = Field(default_factory=list)


class BuildVsBuy(BaseModel):
    recommendation: Literal["undecided", "build", "buy", "partner"] = "undecided"
    rationale: str = ""
    options_considered: list[str] = Field(default_factory=list)


class ValidationPlan(BaseModel):
    riskiest_assumption: str = ""  # an assumption id, e.g. "A3"
    approach: str = ""  # e.g. concierge test, fake door, pilot
    description: str = ""
    timeline: str = ""
    success_criteria: list[str] = Field(default_factory=list)


class GoNoGo(BaseModel):
    recommendation: Literal["undecided", "go", "conditional_go", "no_go"] = "undecided"
    conditions: list[str] = Field(default_factory=list)
    dealbreakers: list[str] = Field(default_factory=list)


class SolutionEvaluation(BaseModel):
    """Mode 2 skeleton: will this specific approach work?"""

    solution_name: str = ""
    solution_description: str = ""
    value_risk: RiskAssessment = Field(default_factory=RiskAssessment)
    usability_risk: RiskAssessment = Field(default_factory=RiskAssessment)
    feasibility_risk: RiskAssessment = Field(default_factory=RiskAssessment)
    viability_risk: RiskAssessment = Field(default_factory=RiskAssessment)
    build_vs_buy: BuildVsBuy = Field(default_factory=BuildVsBuy)
    validation_plan: ValidationPlan = Field(default_factory=ValidationPlan)
    go_no_go: GoNoGo = Field(default_factory=GoNoGo)

    @field_validator("build_vs_buy", "validation_plan", "go_no_go", mode="before")
    @classmethod
    def _from_schema_1(cls, value, info: ValidationInfo):
        # Schema 1 stored these three as free text; keep any text in the field that holds prose.
        if isinstance(value, str) and info.field_name is not None:  # (a field validator always has its name)
            prose = {"build_vs_buy": "rationale", "validation_plan": "description", "go_no_go": "conditions"}
            field = prose[info.field_name]
            return {field: ([value] if field == "conditions" else value)} if value.strip() else {}
        return value


# ---------------------------------------------------------------- routing

class RoutingDecision(BaseModel):
    """Phase A's output. Every field is read downstream."""

    action: RouteAction = Field(description="What Phase B should do this turn.")
    mode: Mode = Field(description="The discovery mode this turn belongs to.")
    next_probe: str | None = Field(
        None, description="Name of the probe to pursue, exactly as listed in the catalogue, or null."
    )
    patterns: list[str] = Field(
        default_factory=list, description="Domain patterns whose trigger signals appear, from the catalogue."
    )
    requires_retrieval: bool = Field(
        description="False for filler turns (acknowledgements, 'continue'): no document or memory search."
    )
    retrieval_query: str = Field("", description="A short search query for documents and earlier turns.")
    document_filter: list[str] = Field(
        default_factory=list,
        description="File names to search, when the PM is clearly asking about specific documents; else empty.",
    )
    reasoning: str = Field("", description="One sentence on why.")


class RoutingContext(BaseModel):
    """What the router knows about the session so far (always on, kept small)."""

    probes_fired: list[str] = Field(default_factory=list)
    patterns_fired: list[str] = Field(default_factory=list)
    conversation_summary: str = ""
    last_synthesis_turn: int = 0
    completed_modes: list[Mode] = Field(default_factory=list)


# ---------------------------------------------------------------- turns

class ToolCallRecord(BaseModel):
    name: str
    input: Any  # as the model sent it (a malformed call may send a non-object)
    ok: bool
    result: str


class RetrievedSection(BaseModel):
    """A parent section brought back from the uploaded documents."""

    id: str
    file_id: str
    filename: str
    section: str  # breadcrumb path inside the file, e.g. "Findings > Enterprise"
    start: int  # character offsets into converted/<file>.md
    end: int
    text: str
    score: float

    @property
    def citation(self) -> str:
        return f"[{self.filename} › {self.section}]" if self.section else f"[{self.filename}]"


class RetrievedTurn(BaseModel):
    """An earlier turn pair brought back from conversation memory."""

    turn_number: int
    turn_id: str = ""  # the transcript's stable id (Turn.id): two clones' turn 3 are different turns
    active_probe: str | None = None
    active_mode: str | None = None
    user: str
    assistant: str
    asked: str = ""  # the questions Forge asked just before: what a terse answer ("yes, that one") refers to
    summary: str = ""
    score: float = 0.0
    # Where the best-matching passage sits (a window of one side), so a long side is shown around it.
    match_side: str | None = None
    match_start: int = 0
    match_end: int = 0


class SourceRef(BaseModel):
    """Where a retrieved section came from, enough to open the exact passage later."""

    citation: str
    file_id: str
    filename: str
    start: int
    end: int


class RetrievalTrace(BaseModel):
    documents: list[str] = Field(default_factory=list)  # parent ids
    conversations: list[int] = Field(default_factory=list)  # turn numbers


class TokenReport(BaseModel):
    phase_a: int = 0
    phase_b: int = 0  # the largest tool-loop round: the figure the budget is promised on
    sections: dict[str, int] = Field(default_factory=dict)  # as sent in round 1, after fitting
    phase_b_rounds: list[int] = Field(default_factory=list)  # each round's request, in order
    trimmed: list[str] = Field(default_factory=list)  # what fitting gave up to stay within budget


class Usage(BaseModel):
    """Tokens one provider call billed (or several, summed). Embedding calls bill `input_tokens` only."""

    input_tokens: int = 0  # billed in full
    output_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0  # cache writes, both lifetimes
    cache_creation_1h_input_tokens: int = 0  # the part of the writes kept for an hour (billed at a higher rate)

    def __add__(self, other: "Usage") -> "Usage":
        return Usage(**{name: getattr(self, name) + getattr(other, name) for name in Usage.model_fields})


CallPurpose = Literal["route", "reply", "summarize_turn", "summarize_file", "embed_query", "embed_documents"]


class BilledCall(BaseModel):
    """One provider call as billed: what it was for, the model that answered, its tokens."""

    purpose: CallPurpose
    model: str
    usage: Usage = Field(default_factory=Usage)


class Turn(BaseModel):
    # Stable for ever: patch lines in turns.jsonl and a union-merged transcript refer to turns by id, since
    # two clones can both write a turn with the same number.
    id: str = Field(default_factory=new_turn_id)
    number: int
    user: str
    assistant: str
    created_at: str = Field(default_factory=now_iso)
    active_mode: Mode = "mode_1"
    active_probe: str | None = None
    routing: RoutingDecision | None = None
    retrieved: RetrievalTrace = Field(default_factory=RetrievalTrace)
    sources: list[SourceRef] = Field(default_factory=list)  # the retrieved sections, for people
    tokens: TokenReport = Field(default_factory=TokenReport)
    # Phase B's rounds summed (kept for turns saved before `calls` existed, which record nothing else).
    usage: Usage = Field(default_factory=Usage)
    calls: list[BilledCall] = Field(default_factory=list)  # every billed call of the turn, in order
    tool_calls: list[ToolCallRecord] = Field(default_factory=list)
    probes_answered: list[str] = Field(default_factory=list)  # probe ids this message was judged to answer
    summary: str = ""
    indexed: bool = False  # stored in the conversations collection
    artifacts: list[str] = Field(default_factory=list)  # file names this turn wrote under artifacts/


class SessionState(BaseModel):
    """state.json: the session's memory of record; its transcript (`turns`) lives in turns.jsonl."""

    schema_version: int = SCHEMA_VERSION
    project_name: str = ""
    recovered_from: str = ""  # set when an unreadable state.json was moved aside and this one started fresh
    created_at: str = Field(default_factory=now_iso)
    active_mode: Mode = "mode_1"
    active_probe: str | None = None
    # Read by everyone, saved by no one through the dump: Workspace appends turns to turns.jsonl (rewriting a
    # long transcript into state.json on every turn made turns slower as the session grew).
    turns: list[Turn] = Field(default_factory=list, exclude=True)
    assumptions: list[Assumption] = Field(default_factory=list)
    problem_brief: ProblemBrief = Field(default_factory=ProblemBrief)
    solution_evaluation: SolutionEvaluation = Field(default_factory=SolutionEvaluation)
    routing: RoutingContext = Field(default_factory=RoutingContext)
    brief_history: list[BriefChange] = Field(default_factory=list)  # superseded values, newest last
    # When this file was last saved (ISO, microseconds): the later side wins a value two clones changed.
    updated_at: str = ""
    # How many turns the transcript held at that save: a transcript found shorter was lost or replaced.
    turns_saved: int = 0

    # What a save writes for itself (and the transcript, kept apart): never part of what a turn changed.
    SAVE_BOOKKEEPING: ClassVar[frozenset[str]] = frozenset({"turns", "updated_at", "schema_version", "turns_saved"})

    @property
    def turn_count(self) -> int:
        return len(self.turns)

    @property
    def last_turn_number(self) -> int:
        """The latest turn's number; the next turn takes the one after it. It is not always `turn_count`: a turn
        taken back in another copy of the project, after later turns, leaves a gap that is never reused."""
        return self.turns[-1].number if self.turns else 0

    def next_assumption_id(self) -> str:
        return f"A{max((a.number for a in self.assumptions), default=0) + 1}"


# ---------------------------------------------------------------- project manifest

def name_key(filename: str) -> str:
    """Names with the same key are one file on a case-insensitive disk (macOS, Windows) or to a reader:
    case and compatibility forms folded ("Straße"/"STRASSE", "ﬁ"/"fi", "ΟΔΟΣ"/"οδος")."""
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", filename).casefold())


class ManifestEntry(BaseModel):
    filename: str
    file_id: str
    uploaded_at: str = Field(default_factory=now_iso)
    summary: str = ""
    chunk_count: int = 0  # leaves
    parent_count: int = 0
    sha256: str = ""  # of the uploaded bytes
    content_sha256: str = ""  # of the converted Markdown: a re-saved Word file with the same text matches
    status: str = "indexed"  # "indexed" or "not indexed: <reason>"
    note: str = ""  # e.g. a legacy-encoding fallback
    calls: list[BilledCall] = Field(default_factory=list)  # what uploading it billed: its summary, its embeddings

    @property
    def indexed(self) -> bool:
        return self.status == "indexed"


class Manifest(BaseModel):
    """project_state.json: the file manifest and the organisation context."""

    # Names this project's collections on a shared Chroma server. Random, and committed with the workspace,
    # so every clone of the project finds its own vectors and no two projects share a name.
    project_id: str = ""
    file_summaries: list[ManifestEntry] = Field(default_factory=list)
    org_context: str = ""
    # The name as the PM typed it (any script; the folder has an ASCII slug). "" before names were kept here.
    display_name: str = ""
    updated_at: str = ""  # when this file was last saved, as in SessionState

    def find(self, filename: str) -> ManifestEntry | None:
        """The file of exactly that name, else the one whose name differs from it only in case or form (a
        name typed in a command); uploads never list two such names (see `name_key`)."""
        wanted = unicodedata.normalize("NFC", filename)
        exact = next((f for f in self.file_summaries if f.filename == wanted), None)
        if exact is not None:
            return exact
        key = name_key(filename)
        return next((f for f in self.file_summaries if name_key(f.filename) == key), None)


class TurnRecord(BaseModel):
    """What `forge chat --json` prints for every turn."""

    turn: int
    routing: RoutingDecision
    retrieved: RetrievalTrace
    tokens: TokenReport
    reply: str
    tool_calls: list[ToolCallRecord]
    probes_answered: list[str] = Field(default_factory=list)
