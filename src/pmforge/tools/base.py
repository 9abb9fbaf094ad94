"""What every tool shares: the context it may change, its error type, its registry entry."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from pydantic import BaseModel

from ..llm.base import ToolSpec, model_schema
from ..models import ProjectState, SessionState
from ..workspace import Workspace


@dataclass
class ToolContext:
    """The working copies a turn's tools may change; the orchestrator commits them only if the turn succeeds."""

    state: SessionState
    project_state: ProjectState
    turn_number: int
    active_probe: str | None = None
    workspace: Workspace | None = None  # for tools that write files (artifacts)


class ToolError(Exception):
    """Told back to the model as an `is_error` tool result."""


@dataclass(frozen=True)
class Tool:
    """One tool: its argument model (docstring = description, fields = JSON schema) and its effect."""

    name: str
    model: type[BaseModel]
    effect: Callable[[BaseModel, ToolContext], str]

    def spec(self) -> ToolSpec:
        schema = model_schema(self.model)
        schema.pop("description", None)
        return ToolSpec(name=self.name, description=(self.model.__doc__ or "").strip(), input_schema=schema)

