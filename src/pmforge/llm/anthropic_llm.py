"""Claude through the official `anthropic` client.

The client retries 408/409/429/5xx (529 "overloaded" included) with exponential
backoff and honours `retry-after`; when retries run out the caller gets one plain
sentence (`ForgeError`), so the turn can fail cleanly with state unchanged.
"""

from __future__ import annotations

from typing import Any, Iterator

import anthropic

from pmforge.core.errors import ForgeError
from pmforge.core.settings import Settings
from pmforge.llm.base import LLM, ChatRequest, ChatResponse, ResponseStream, Usage
from pmforge.llm.messages import Message, TextPart, ToolCall, ToolResult


class AnthropicLLM(LLM):
    name = "anthropic"
    online = True

    @classmethod
    def from_settings(cls, settings: Settings) -> "AnthropicLLM":
        if not settings.anthropic_api_key:
            raise ForgeError("FORGE_LLM=anthropic needs ANTHROPIC_API_KEY to be set.")
        return cls(settings.anthropic_api_key.get_secret_value(), base_url=settings.anthropic_base_url,
                   timeout=settings.anthropic_timeout_s, max_retries=settings.anthropic_max_retries,
                   cache_ttl=settings.cache_ttl)

    def __init__(self, api_key: str, base_url: str | None = None, timeout: float = 60.0, max_retries: int = 4,
                 cache_ttl: str = "5m"):
        self.client = anthropic.Anthropic(
            api_key=api_key, base_url=base_url, timeout=timeout, max_retries=max_retries
        )
        self.cache_ttl = cache_ttl

    def wire(self, request: ChatRequest) -> dict:
        """The Messages API arguments, marked for prompt caching in two places.

        The static breakpoint (tools and the static system block) is the same on every reply of a mode, turn
        after turn; it lives `cache_ttl` (an hour outlasts a PM's pause between turns). The moving breakpoint
        sits on the last block of each reply request, so the next tool-loop round, which re-sends this
        request and appends to it, reads it all from the cache instead of paying for the turn's context again;
        it lives five minutes (rounds are seconds apart). Routing and summaries stay unmarked: below the
        smallest prefix Claude caches."""
        system = []
        for block in request.system:
            item: dict[str, Any] = {"type": "text", "text": block.text}
            if block.cache:
                item["cache_control"] = cache_mark(self.cache_ttl)
            system.append(item)
        messages = wire_messages(request.messages)
        if request.purpose == "reply":
            messages = with_moving_breakpoint(messages)
        args = dict(model=request.model, max_tokens=request.max_tokens, system=system, messages=messages)
        if request.tools:
            args["tools"] = [t.model_dump() for t in request.tools]
        if request.tool_choice:
            args["tool_choice"] = request.tool_choice
        return args

    def complete(self, request: ChatRequest) -> ChatResponse:
        try:
            message = self.client.messages.create(**self.wire(request))
        except anthropic.APIError as exc:
            raise _plain(exc) from None
        return _response(message)

    def stream(self, request: ChatRequest) -> ResponseStream:
        def chunks() -> Iterator[str | ChatResponse]:
            try:
                with self.client.messages.stream(**self.wire(request)) as stream:
                    yield from stream.text_stream
                    final = stream.get_final_message()
            except anthropic.APIError as exc:
                raise _plain(exc) from None
            except ValueError:  # the SDK could not parse a tool call's streamed JSON: no tool_use to answer
                raise ForgeError("Claude sent a reply Forge could not read; your message is kept, try again.") from None
            yield _response(final)

        return ResponseStream(chunks())


def cache_mark(ttl: str = "5m") -> dict:
    # Five minutes is the API's default: the mark is sent bare then, as it always was.
    return {"type": "ephemeral", "ttl": "1h"} if ttl == "1h" else {"type": "ephemeral"}


def wire_messages(messages: list[Message]) -> list[dict]:
    """Messages in the Messages API shape: a plain message as a string, any other as content blocks."""
    return [{"role": m.role, "content": m.text if m.is_plain() else [_block(p) for p in m.parts]} for m in messages]


def _block(part: TextPart | ToolCall | ToolResult) -> dict:
    match part:
        case TextPart(text=text):
            return {"type": "text", "text": text}
        case ToolCall(id=call_id, name=name, input=arguments):
            return {"type": "tool_use", "id": call_id, "name": name, "input": arguments}
        case ToolResult(call_id=call_id, content=content, is_error=is_error):
            return {"type": "tool_result", "tool_use_id": call_id, "content": content, "is_error": is_error}
    raise TypeError(part)


def with_moving_breakpoint(messages: list[dict]) -> list[dict]:
    """The messages as content blocks, the last block marked for caching. Every message is sent as blocks
    (not only the last), so a message reads byte for byte the same whether or not it is the last one: what
    the next round re-sends is then exactly the prefix this round cached."""
    blocks = [dict(m, content=[{"type": "text", "text": m["content"]}]) if isinstance(m["content"], str)
              else m for m in messages]
    if blocks and blocks[-1]["content"]:
        blocks[-1]["content"][-1]["cache_control"] = cache_mark()
    return blocks


def _response(message) -> ChatResponse:
    text = "".join(b.text for b in message.content if b.type == "text")
    # The input is passed on as sent, even when it is not an object: the tool's validation refuses it to the model.
    uses = [ToolCall(id=b.id, name=b.name, input=b.input) for b in message.content if b.type == "tool_use"]
    u = message.usage
    usage = Usage(
        input_tokens=u.input_tokens or 0,
        output_tokens=u.output_tokens or 0,
        cache_read_input_tokens=getattr(u, "cache_read_input_tokens", 0) or 0,
        cache_creation_input_tokens=getattr(u, "cache_creation_input_tokens", 0) or 0,
        # The hour-long part of the writes, when the API splits them by lifetime (older versions do not).
        cache_creation_1h_input_tokens=getattr(getattr(u, "cache_creation", None), "ephemeral_1h_input_tokens", 0) or 0,
    )
    return ChatResponse(text=text, tool_calls=uses, stop_reason=message.stop_reason or "end_turn", usage=usage)


def _plain(exc: anthropic.APIError) -> ForgeError:
    if isinstance(exc, anthropic.AuthenticationError):
        return ForgeError("Claude rejected the API key; check ANTHROPIC_API_KEY. Your message is kept.")
    if isinstance(exc, anthropic.RateLimitError):
        return ForgeError("Claude is rate-limiting this key right now; your message is kept, try again in a minute.")
    if isinstance(exc, anthropic.APIStatusError) and exc.status_code in (529, 503):
        return ForgeError("Claude is overloaded right now; your message is kept, try again in a minute.")
    if isinstance(exc, anthropic.APITimeoutError):
        return ForgeError("Claude did not answer in time; your message is kept, try again.")
    if isinstance(exc, anthropic.APIConnectionError):
        return ForgeError("Forge could not reach Claude (network problem); your message is kept, try again.")
    if isinstance(exc, anthropic.APIStatusError):
        return ForgeError(f"Claude returned an error ({exc.status_code}); your message is kept, try again.")
    return ForgeError("Claude could not answer; your message is kept, try again.")
