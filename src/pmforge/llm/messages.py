"""A conversation as Forge holds it: messages made of typed parts (text, a tool call, a tool's result).

Every provider reads these and writes its own wire shape (`anthropic_llm.wire_messages`,
`openai_llm.chat_messages`); nothing above `llm/` builds or inspects a provider's dicts.
"""

from __future__ import annotations

import json
from typing import Annotated, Literal, Union

from pydantic import BaseModel, Field, JsonValue


class TextPart(BaseModel):
    kind: Literal["text"] = "text"
    text: str


class ToolCall(BaseModel):
    """The model asking for a tool: `input` is whatever it sent (a JSON object from a well-behaved model;
    anything else is refused by the tool's validation and the refusal goes back to the model)."""

    kind: Literal["tool_call"] = "tool_call"
    id: str
    name: str
    input: JsonValue


class ToolResult(BaseModel):
    """What running a tool call said, paired with the call by its id."""

    kind: Literal["tool_result"] = "tool_result"
    call_id: str
    content: str
    is_error: bool = False


Part = Annotated[Union[TextPart, ToolCall, ToolResult], Field(discriminator="kind")]


class Message(BaseModel):
    role: Literal["user", "assistant"]
    parts: list[Part]

    @classmethod
    def user(cls, text: str) -> "Message":
        return cls(role="user", parts=[TextPart(text=text)])

    @classmethod
    def assistant(cls, text: str) -> "Message":
        return cls(role="assistant", parts=[TextPart(text=text)])

    @property
    def text(self) -> str:
        return "\n\n".join(p.text for p in self.parts if isinstance(p, TextPart))

    @property
    def tool_calls(self) -> list[ToolCall]:
        return [p for p in self.parts if isinstance(p, ToolCall)]

    @property
    def tool_results(self) -> list[ToolResult]:
        return [p for p in self.parts if isinstance(p, ToolResult)]

    def is_plain(self) -> bool:
        """One text part and nothing else: what every message but a tool round's is."""
        return len(self.parts) == 1 and isinstance(self.parts[0], TextPart)

    def sized_text(self) -> str:
        """The text a size estimate counts: a plain message's words, or its parts as JSON."""
        if self.is_plain():
            return self.text
        return json.dumps([p.model_dump() for p in self.parts])
