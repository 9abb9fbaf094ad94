"""Every tool by name and by argument model, their schemas for the model, and running one call."""

from __future__ import annotations

from functools import lru_cache

from pydantic import BaseModel, JsonValue, ValidationError

from pmforge.llm.base import ToolSpec
from pmforge.tools import assumptions, brief, session, solution
from pmforge.tools.base import Tool, ToolContext, ToolError

TOOLS: dict[str, Tool] = {t.name: t for module in (assumptions, brief, solution, session) for t in module.TOOLS}
_BY_MODEL: dict[type[BaseModel], Tool] = {t.model: t for t in TOOLS.values()}


def tool_for(model: type[BaseModel]) -> Tool:
    """The tool whose arguments `model` describes: how code outside this package names a tool (a renamed tool
    then fails at import and in mypy, not at run time)."""
    return _BY_MODEL[model]


def tool_call(model: type[BaseModel], arguments: dict) -> tuple[str, dict]:
    """A call to plan, as the loop runs it: the tool's name and its raw arguments (validated when it runs, so a
    bad value comes back as an error result rather than stopping the plan)."""
    return tool_for(model).name, arguments


def tool_specs() -> list[ToolSpec]:
    return list(_specs())


@lru_cache(maxsize=1)
def _specs() -> tuple[ToolSpec, ...]:
    # Fixed in code and slow to derive (pydantic builds each JSON schema anew): once per process.
    return tuple(tool.spec() for tool in TOOLS.values())


def run_tool(name: str, raw_input: JsonValue, ctx: ToolContext) -> tuple[bool, str]:
    """Validate and apply one call. Returns (ok, text for the model)."""
    tool = TOOLS.get(name)
    if tool is None:
        return False, f"Unknown tool '{name}'. Available: {', '.join(TOOLS)}."
    try:
        args = tool.model.model_validate(raw_input or {})
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'input'}: {e['msg']}" for e in exc.errors())
        return False, f"Invalid arguments for {name}: {problems}"
    try:
        return True, tool.effect(args, ctx)
    except ToolError as exc:
        return False, str(exc)
