"""LLM providers: Claude through `anthropic`, any OpenAI-compatible server through `openai`, and what every
provider shares (`messages`: typed conversation parts; `base`: requests, responses, usage; `costs`: metering).
The offline interviewer speaks the same protocol (pmforge/interviewer); pmforge/project/services.py chooses one."""

from __future__ import annotations

from pmforge.llm.base import LLM, ChatRequest, ChatResponse, ResponseStream, SystemBlock, ToolSpec, Usage
from pmforge.llm.messages import Message, TextPart, ToolCall, ToolResult

__all__ = ["LLM", "ChatRequest", "ChatResponse", "ResponseStream", "SystemBlock", "ToolSpec", "Usage",
           "Message", "TextPart", "ToolCall", "ToolResult"]
