"""What each kind of request was rendered from: the structured inputs that travel beside a request's prompt.

They are never sent over the wire. The offline interviewer reads them instead of parsing prose, choosing what
to do by their type; Claude and OpenAI-compatible servers see only the rendered prompt.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, Field

from pmforge.core.models import Manifest, RetrievedSection, RetrievedTurn, RoutingDecision, SessionState
from pmforge.knowledge import Catalogue


@dataclass
class RouteInputs:
    """What Phase A reads; also what the rule router decides from."""

    state: SessionState
    manifest: Manifest
    message: str
    turn_number: int
    catalogue: Catalogue  # this project's probes and patterns (the built-ins and its own)
    # The rule router's decision for these inputs, made once per turn: the offline router answers with it and
    # Phase A falls back to it (or keeps its probe) without deciding again.
    rule_decision: RoutingDecision | None = None


class AssembledContext(BaseModel):
    """What Phase B's reply is built from (see `turn.assemble`)."""

    turn_number: int
    user_message: str
    decision: RoutingDecision
    catalogue: Catalogue = Field(exclude=True)  # this project's probes and patterns, for lookups and labels
    sections: dict[str, str] = Field(default_factory=dict)  # rendered, in prompt order
    tokens: dict[str, int] = Field(default_factory=dict)
    documents: list[RetrievedSection] = Field(default_factory=list)
    conversations: list[RetrievedTurn] = Field(default_factory=list)
    recent: list[tuple[str, str]] = Field(default_factory=list)  # (user, assistant), oldest first
    has_documents: bool = False  # the project has indexed files (for "not found in your files")
    previous_probe: str | None = None  # the probe asked last turn, which this message may answer
    problem_statement: str = ""
    stakeholders: list[str] = Field(default_factory=list)
    org_context: str = ""
    assumption_ids: list[str] = Field(default_factory=list)  # registered and not retired
    # The reply this message's earlier answer gave, when the PM asked for another (Retry): not to be repeated.
    retracted_reply: str = ""
    # The session as the turn began (read-only), for offline replies.
    state: SessionState | None = Field(default=None, exclude=True)


@dataclass(frozen=True)
class TurnToSummarize:
    user: str
    assistant: str
    asked: str = ""  # the questions Forge had asked before the PM's message


@dataclass(frozen=True)
class FileToSummarize:
    filename: str
    markdown: str


RequestInputs = RouteInputs | AssembledContext | TurnToSummarize | FileToSummarize
