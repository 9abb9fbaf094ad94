"""The LLM interface. Anthropic and the offline interviewer implement the same two verbs
(`complete`, `stream`) over the same request, so every caller is provider-agnostic.

A request holds system blocks, typed messages (`llm.messages`) and tool specs; each provider writes
them in its own wire shape. `context` carries the structured inputs the prompt was rendered from
(`llm.inputs`); it is never sent over the wire, but the offline interviewer reads it instead of
parsing prose.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from typing import Annotated, Iterator, Literal

from pydantic import BaseModel, Field, SkipValidation

from pmforge.core.models import Usage  # the one usage model: what a call billed, what a turn records
from pmforge.core.tokens import count_tokens
from pmforge.llm.inputs import RequestInputs
from pmforge.llm.messages import Message, Part, TextPart, ToolCall

Purpose = Literal["route", "reply", "summarize_turn", "summarize_file"]


class SystemBlock(BaseModel):
    text: str
    cache: bool = False  # marked for Anthropic prompt caching (the static prefix)
    label: str = ""


class ToolSpec(BaseModel):
    name: str
    description: str
    input_schema: dict


class ChatRequest(BaseModel):
    purpose: Purpose
    model: str
    system: list[SystemBlock]
    messages: list[Message]
    tools: list[ToolSpec] = Field(default_factory=list)
    tool_choice: dict | None = None
    max_tokens: int = 1024
    # What the prompt was rendered from, never sent: the offline interviewer reads it (validated where it is
    # built, so not again here: a session's state travels by reference).
    context: Annotated[RequestInputs | None, SkipValidation] = Field(default=None, exclude=True)

    def system_text(self) -> str:
        return "\n\n".join(b.text for b in self.system)

    def token_count(self) -> int:
        """cl100k estimate of everything sent: system, tool schemas and messages."""
        return request_tokens(self.system_text(), self.messages, tool_tokens(self.tools))


def tool_tokens(tools: list[ToolSpec]) -> int:
    """The tool schemas' share of a request, counted as they are sent (JSON)."""
    return count_tokens(json.dumps([t.model_dump() for t in tools])) if tools else 0


def request_tokens(system: str, messages: list[Message], tools_tokens: int) -> int:
    """The one request-size formula (cl100k): the system text, the tool schemas (counted once by the caller:
    they are slow to count and fixed for a turn), and each message's text with 4 tokens of framing."""
    return count_tokens(system) + tools_tokens + sum(count_tokens(m.sized_text()) + 4 for m in messages)


def model_schema(model: type[BaseModel]) -> dict:
    """A model's JSON schema for a tool's input, without the titles pydantic adds to every property
    (they repeat the property names and cost tokens on every call)."""

    def strip(node):
        if isinstance(node, dict):
            return {k: strip(v) for k, v in node.items() if not (k == "title" and isinstance(v, str))}
        if isinstance(node, list):
            return [strip(v) for v in node]
        return node

    return strip(model.model_json_schema())


class ChatResponse(BaseModel):
    text: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    stop_reason: str = "end_turn"
    usage: Usage = Field(default_factory=Usage)
    # The model that answered, when it is not the one the request names (an OpenAI-compatible server serves
    # its own models, whatever Claude model the request was written for): the meter prices this one.
    model: str = ""

    def as_message(self) -> Message:
        """The response as the assistant message that continues a tool loop."""
        parts: list[Part] = [TextPart(text=self.text)] if self.text else []
        # Providers only accept an object as a call's input: a malformed one is echoed back empty
        # (its result tells the model what was wrong), so the loop can go on.
        parts += [c if isinstance(c.input, dict) else c.model_copy(update={"input": {}}) for c in self.tool_calls]
        return Message(role="assistant", parts=parts)


class ResponseStream:
    """Iterate for text deltas; `.response` holds the whole response once iteration ends."""

    def __init__(self, chunks: Iterator[str | ChatResponse]):
        self._chunks = chunks
        self.response: ChatResponse | None = None

    def __iter__(self) -> Iterator[str]:
        for chunk in self._chunks:
            if isinstance(chunk, ChatResponse):
                self.response = chunk
            elif chunk:
                yield chunk

    def consume(self) -> ChatResponse:
        for _ in self:
            pass
        assert self.response is not None
        return self.response


class LLM(ABC):
    name: str
    online: bool

    @abstractmethod
    def complete(self, request: ChatRequest) -> ChatResponse: ...

    def stream(self, request: ChatRequest) -> ResponseStream:
        def once() -> Iterator[str | ChatResponse]:
            response = self.complete(request)
            yield response.text
            yield response

        return ResponseStream(once())
