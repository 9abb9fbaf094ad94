"""What every tool shares: the context it may change, its error type, its registry entry."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Callable, get_type_hints

from pydantic import BaseModel

from pmforge.core.models import Manifest, RoutingDecision, SessionState
from pmforge.core.workspace import Workspace
from pmforge.knowledge import Catalogue
from pmforge.llm.base import ToolSpec, model_schema
from pmforge.understand.text import clip_words

if TYPE_CHECKING:
    from pmforge.outputs.artifacts import PreparedArtifact


@dataclass
class ToolContext:
    """The working copies a turn's tools may change; the orchestrator commits them only if the turn succeeds.

    `decision` and `pm_words` are the turn's provenance, which untrusted text cannot forge: what Forge's
    router decided, and what the PM typed themselves (a long paste is source material, so it is not part
    of `pm_words`). The tools that steer the session check them (see `guard`); left empty, they refuse.
    """

    state: SessionState
    manifest: Manifest
    turn_number: int
    catalogue: Catalogue  # this project's probes and patterns: the only ones its tools accept
    active_probe: str | None = None
    workspace: Workspace | None = None  # for tools that write files (artifacts)
    decision: RoutingDecision | None = None  # this turn's routing decision (Phase A, sanitised)
    pm_words: str = ""  # the PM's own words this turn (`render.own_words` of the message)
    # Artifacts the turn's tools asked for, rendered but not written: the turn writes them when it commits,
    # so a turn that fails leaves artifacts/ as it was.
    pending_artifacts: list[PreparedArtifact] = field(default_factory=list)
    # The record as it stood when the turn began, before any tool of this turn ran.
    probes_at_start: tuple[str, ...] = field(init=False)
    probe_answered: str | None = field(init=False)  # the probe the PM was asked last turn

    def __post_init__(self) -> None:
        self.probes_at_start = tuple(self.state.routing.probes_fired)
        self.probe_answered = self.state.active_probe


class ToolError(Exception):
    """Told back to the model as an `is_error` tool result."""


# What the PM is told a successful call recorded: from the validated arguments, the state before and after
# the turn's tools ran, and the organisation context as the turn began. None when the call changed nothing.
Acknowledge = Callable[[Any, SessionState, SessionState, str], "str | None"]


@dataclass(frozen=True)
class Tool:
    """One tool: its argument model (docstring = description, fields = JSON schema), its effect, and the line
    that tells the PM what it recorded — or `bookkeeping`, for Forge's own records the PM never asked for."""

    name: str
    model: type[BaseModel]
    effect: Callable[[BaseModel, ToolContext], str]
    acknowledge: Acknowledge | None = None
    bookkeeping: bool = False

    @classmethod
    def of(cls, effect: Callable[[BaseModel, ToolContext], str], bookkeeping: bool = False) -> "Tool":
        """The tool an effect function defines: named after the function, its arguments the model its first
        parameter is annotated with (so a tool's name and model are written once, where it is defined)."""
        model = next(iter(get_type_hints(effect).values()))
        return cls(effect.__name__, model, effect, bookkeeping=bookkeeping)

    def spec(self) -> ToolSpec:
        schema = model_schema(self.model)
        schema.pop("description", None)
        return ToolSpec(name=self.name, description=(self.model.__doc__ or "").strip(), input_schema=schema)


class Toolset(list):
    """A module's tools, in the order they are defined. `@TOOLS.add` above an effect function makes it a tool
    (see Tool.of): nothing else names it. `@TOOLS.acknowledges(effect)` above a function makes it that tool's
    acknowledgement."""

    def add(self, effect: Callable) -> Callable:
        self.append(Tool.of(effect))
        return effect

    def bookkeeping(self, effect: Callable) -> Callable:
        self.append(Tool.of(effect, bookkeeping=True))
        return effect

    def acknowledges(self, effect: Callable) -> Callable[[Acknowledge], Acknowledge]:
        def attach(acknowledge: Acknowledge) -> Acknowledge:
            index = next(i for i, tool in enumerate(self) if tool.effect is effect)
            self[index] = replace(self[index], acknowledge=acknowledge)
            return acknowledge
        return attach


# ---------------------------------------------------------------- the wording acknowledgements share


def quoted(text: str, words: int = 16) -> str:
    """A recorded value on one line, short, without end punctuation (a trailing '?' would read as a
    question Forge asked)."""
    return clip_words(" ".join(str(text).split()), words).rstrip(" .?!;:")


def and_list(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
