"""The tools Phase B calls to keep the session's state current.

Each tool is one pydantic model: its docstring is the description the model sees,
its JSON schema is generated from the fields, and its arguments are validated
before they touch state. A bad call comes back to the model as an error result;
it never crashes the turn.
"""

from pmforge.tools.base import Tool, ToolContext, ToolError
from pmforge.tools.registry import TOOLS, run_tool, tool_call, tool_for, tool_specs

__all__ = ["TOOLS", "Tool", "ToolContext", "ToolError", "run_tool", "tool_call", "tool_for", "tool_specs"]
