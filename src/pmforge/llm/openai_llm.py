"""Any OpenAI-compatible chat server (Ollama, vLLM, LM Studio, llama.cpp's server, Azure OpenAI, OpenAI)
through the official `openai` client.

Forge's requests are in the Anthropic Messages shape (see `base.py`); this module converts them on the way
out and the answers on the way back, so the turn code stays provider-agnostic:

- tool schemas become `function` tools with the same JSON schema (generated once, from the tool models);
- `tool_use` blocks become an assistant message's `tool_calls`, `tool_result` blocks become `tool` messages;
- the system blocks become one system message, without Anthropic's prompt-caching markers;
- Phase A's forced tool call becomes a `tool_choice` naming the function; a server that ignores it and
  answers with the JSON in its text is read too, and the router validates either with `RoutingDecision`.

Tool-call arguments arrive as a JSON string: one that does not parse is handed on as that string, so the
tool's validation refuses it and the model reads why in the tool result (the loop goes on).

The client retries 408/409/429/5xx, timeouts and dropped connections with exponential backoff and honours
`retry-after`; when retries run out the caller gets one plain sentence (`ForgeError`), so the turn fails
cleanly with state unchanged.
"""

from __future__ import annotations

import json
import logging
from typing import Any, Iterator, Sequence

import httpx
import openai

from pmforge.core.errors import ForgeError
from pmforge.core.settings import Settings
from pmforge.llm.base import (
    LLM,
    ChatRequest,
    ChatResponse,
    Purpose,
    ResponseStream,
    SystemBlock,
    ToolSpec,
    ToolUse,
    Usage,
)

log = logging.getLogger(__name__)

# Local servers ignore the key, but the client refuses to start without one.
PLACEHOLDER_KEY = "no-key"

# OpenAI's finish reasons, in the Anthropic words the tool loop reads.
_STOP_REASONS = {"stop": "end_turn", "tool_calls": "tool_use", "function_call": "tool_use", "length": "max_tokens",
                 "content_filter": "refusal"}

# Said after a forced tool call, for servers that cannot force one: the answer is then read from the text.
_JSON_FALLBACK = ("If you cannot call the `{name}` function, answer with only its arguments as one JSON object, "
                  "and nothing else.")


def make_client(settings: Settings, chosen_by: str = "FORGE_LLM=openai") -> openai.OpenAI:
    """The client every OpenAI-compatible call goes through (chat and embeddings share one endpoint).
    `chosen_by`: the setting that asked for it, named when the endpoint is missing."""
    if not (settings.openai_base_url or settings.openai_api_key):
        raise ForgeError(f"{chosen_by} needs OPENAI_BASE_URL (for Ollama: http://localhost:11434/v1) "
                         "or OPENAI_API_KEY to be set.")
    key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else PLACEHOLDER_KEY
    return openai.OpenAI(api_key=key, base_url=settings.openai_base_url, timeout=settings.openai_timeout_s,
                         max_retries=settings.openai_max_retries)


def purpose_models(settings: Settings) -> dict[Purpose, str]:
    """Which served model answers each kind of request (the Claude names in the request do not apply)."""
    reply = settings.openai_model
    route = settings.openai_route_model or reply
    summary = settings.openai_summary_model or route
    return {"reply": reply, "route": route, "summarize_turn": summary, "summarize_file": summary}


class OpenAILLM(LLM):
    name = "openai"
    online = True

    def __init__(self, client: openai.OpenAI, models: dict[Purpose, str]):
        self.client, self.models = client, models

    @classmethod
    def from_settings(cls, settings: Settings) -> "OpenAILLM":
        return cls(make_client(settings), purpose_models(settings))

    @property
    def description(self) -> str:
        """For the UI and the CLI: the served models and where they are served."""
        models = " / ".join(dict.fromkeys((self.models["reply"], self.models["route"])))
        return f"{models} at {self.client.base_url}"

    def wire(self, request: ChatRequest, stream: bool = False) -> dict:
        return chat_arguments(request, self.models[request.purpose], stream)

    def complete(self, request: ChatRequest) -> ChatResponse:
        args = self.wire(request)
        try:
            completion = self.client.chat.completions.create(**args)
        except (openai.APIError, httpx.HTTPError) as exc:
            raise plain_error(exc, args["model"], str(self.client.base_url)) from None
        choice = completion.choices[0] if completion.choices else None
        message = choice.message if choice else None
        calls = [(c.id, c.function.name, c.function.arguments) for c in (message.tool_calls or [])
                 if getattr(c, "function", None)] if message else []
        return assemble_response(request, (message.content or "") if message else "", calls,
                                 choice.finish_reason if choice else None, completion.usage)

    def stream(self, request: ChatRequest) -> ResponseStream:
        args = self.wire(request, stream=True)

        def chunks() -> Iterator[str | ChatResponse]:
            text: list[str] = []
            calls = ToolCallDeltas()
            finish, usage = None, None
            try:
                for chunk in self.client.chat.completions.create(**args):
                    usage = chunk.usage or usage
                    for choice in chunk.choices or []:
                        delta = choice.delta
                        if delta is not None and delta.content:
                            text.append(delta.content)
                            yield delta.content
                        for call in (delta.tool_calls if delta is not None else None) or []:
                            calls.add(call)
                        finish = choice.finish_reason or finish
            except (openai.APIError, httpx.HTTPError) as exc:
                raise plain_error(exc, args["model"], str(self.client.base_url)) from None
            yield assemble_response(request, "".join(text), calls.complete(), finish, usage)

        return ResponseStream(chunks())


# --------------------------------------------------------------------------- requests


def chat_arguments(request: ChatRequest, model: str, stream: bool = False) -> dict:
    """The Chat Completions arguments for a Forge request."""
    forced = forced_tool(request.tool_choice)
    system = list(request.system)
    if forced:
        system.append(SystemBlock(text=_JSON_FALLBACK.format(name=forced)))
    args: dict[str, Any] = dict(model=model, max_tokens=request.max_tokens,
                                messages=chat_messages(system, request.messages))
    if request.tools:
        args["tools"] = chat_tools(request.tools)
        if request.tool_choice:
            args["tool_choice"] = chat_tool_choice(request.tool_choice)
    if stream:
        args["stream"] = True
        args["stream_options"] = {"include_usage": True}  # the usage comes in a last chunk
    return args


def chat_tools(tools: list[ToolSpec]) -> list[dict]:
    """Forge's tool specs (JSON schemas generated from the tool models) as `function` tools."""
    return [{"type": "function", "function": {"name": t.name, "description": t.description,
                                              "parameters": t.input_schema}} for t in tools]


def forced_tool(choice: dict | None) -> str | None:
    return choice.get("name") if choice and choice.get("type") == "tool" else None


def chat_tool_choice(choice: dict) -> str | dict:
    if forced_tool(choice):
        return {"type": "function", "function": {"name": choice["name"]}}
    return {"any": "required", "none": "none"}.get(choice.get("type", ""), "auto")


def chat_messages(system: list[SystemBlock], messages: list[dict]) -> list[dict]:
    """One system message (many chat templates accept only one, first), then the conversation with tool
    calls and results in OpenAI's shape. Caching markers are Anthropic's: they are not carried over."""
    out: list[dict] = []
    system_text = "\n\n".join(b.text for b in system if b.text)
    if system_text:
        out.append({"role": "system", "content": system_text})
    for message in messages:
        out.extend(_chat_message(message))
    return out


def _chat_message(message: dict) -> list[dict]:
    role, content = message["role"], message["content"]
    if isinstance(content, str):
        return [{"role": role, "content": content}]
    texts = [b.get("text", "") for b in content if b.get("type") == "text"]
    if role == "assistant":
        calls = [{"id": b["id"], "type": "function",
                  "function": {"name": b["name"], "arguments": json.dumps(b.get("input") or {}, ensure_ascii=False)}}
                 for b in content if b.get("type") == "tool_use"]
        reply: dict[str, Any] = {"role": "assistant", "content": "\n\n".join(texts)}
        if calls:
            reply["tool_calls"] = calls
        return [reply]
    # A user turn: tool results first (they must follow the assistant's calls), then any text.
    out = [{"role": "tool", "tool_call_id": b["tool_use_id"], "content": _result_text(b)}
           for b in content if b.get("type") == "tool_result"]
    if texts:
        out.append({"role": role, "content": "\n\n".join(texts)})
    return out


def _result_text(block: dict) -> str:
    content = block.get("content", "")
    text = content if isinstance(content, str) else "\n".join(
        b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")
    # A tool message has no error flag: say it in words, as the Anthropic API's `is_error` would.
    return f"Error: {text}" if block.get("is_error") else text


# --------------------------------------------------------------------------- answers


class ToolCallDeltas:
    """Assembles streamed tool calls: the first delta of a call carries its id and name, later ones
    pieces of its arguments. Some servers send each call whole in one delta, some leave out the index."""

    def __init__(self) -> None:
        self._calls: dict[Any, dict] = {}

    def add(self, delta) -> None:
        key = delta.index if delta.index is not None else (delta.id or len(self._calls))
        call = self._calls.setdefault(key, {"id": "", "name": "", "arguments": ""})
        call["id"] = call["id"] or (delta.id or "")
        function = delta.function
        if function is not None:
            call["name"] = call["name"] or (function.name or "")
            call["arguments"] += function.arguments or ""

    def complete(self) -> list[tuple[str, str, str]]:
        return [(c["id"], c["name"], c["arguments"]) for c in self._calls.values() if c["name"]]


def parse_arguments(raw: str | None) -> Any:
    """A tool call's arguments: the object when the JSON parses ("" means none), else the text as sent,
    which the tool's validation refuses with a message the model can act on."""
    if raw is None or not raw.strip():
        return {}
    try:
        return json.loads(raw)
    except ValueError:
        return raw


def json_object_in(text: str) -> dict | None:
    """The first JSON object in `text` (a model that cannot call a function often writes one, maybe fenced)."""
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start != -1:
        try:
            value, _ = decoder.raw_decode(text, start)
        except ValueError:
            start = text.find("{", start + 1)
            continue
        if isinstance(value, dict):
            return value
        start = text.find("{", start + 1)
    return None


def assemble_response(request: ChatRequest, text: str, calls: Sequence[tuple[str | None, str, str]],
                      finish: str | None, usage) -> ChatResponse:
    uses = [ToolUse(id=call_id or f"call_{i}", name=name, input=parse_arguments(arguments))
            for i, (call_id, name, arguments) in enumerate(calls)]
    forced = forced_tool(request.tool_choice)
    if forced and not uses:
        found = json_object_in(text)
        if found is not None:
            # Some models write the call itself: {"name": "route", "arguments": {...}}.
            if found.get("name") == forced and isinstance(found.get("arguments", found.get("parameters")), dict):
                found = found.get("arguments", found.get("parameters"))
            uses, text = [ToolUse(id="call_from_text", name=forced, input=found)], ""
    stop = "tool_use" if uses else _STOP_REASONS.get(finish or "stop", "end_turn")
    return ChatResponse(text=text, tool_uses=uses, stop_reason=stop, usage=usage_of(usage))


def usage_of(usage) -> Usage:
    """OpenAI counts cached prompt tokens inside `prompt_tokens`; Forge's usage keeps them apart, as Anthropic does."""
    if usage is None:
        return Usage()
    details = getattr(usage, "prompt_tokens_details", None)
    cached = (getattr(details, "cached_tokens", 0) or 0) if details is not None else 0
    prompt = usage.prompt_tokens or 0
    return Usage(input_tokens=max(prompt - cached, 0), output_tokens=usage.completion_tokens or 0,
                 cache_read_input_tokens=cached)


# --------------------------------------------------------------------------- failures


def plain_error(exc: Exception, model: str, base_url: str, what: str = "The model server") -> ForgeError:
    """One sentence for the PM, naming what to check; the server's own words go to the log."""
    log.warning("%s (%s) failed: %s", what, base_url, exc)
    kept = "your message is kept"
    if isinstance(exc, (openai.AuthenticationError, openai.PermissionDeniedError)):
        return ForgeError(f"{what} rejected the API key (check OPENAI_API_KEY); {kept}.")
    if isinstance(exc, openai.RateLimitError):
        return ForgeError(f"{what} is rate-limiting Forge right now; {kept}, try again in a minute.")
    if isinstance(exc, openai.NotFoundError):
        return ForgeError(f"{what} does not serve the model '{model}' (check the FORGE_OPENAI_* model settings "
                          f"and OPENAI_BASE_URL, or for Ollama run: ollama pull {model}); {kept}.")
    if isinstance(exc, openai.BadRequestError) and "tool" in str(exc).lower() and "support" in str(exc).lower():
        return ForgeError(f"The model '{model}' cannot call tools, which Forge needs (choose one that can in "
                          f"FORGE_OPENAI_MODEL, such as qwen2.5 or llama3.1); {kept}.")
    if isinstance(exc, openai.APIStatusError) and exc.status_code in (503, 529):
        return ForgeError(f"{what} is overloaded right now; {kept}, try again in a minute.")
    if isinstance(exc, (openai.APITimeoutError, httpx.TimeoutException)):
        return ForgeError(f"{what} did not answer in time (a local model may still be loading); {kept}, try again.")
    if isinstance(exc, (openai.APIConnectionError, httpx.HTTPError)):
        return ForgeError(f"Forge could not reach the model server at {base_url} (is it running?); {kept}, "
                          "try again.")
    if isinstance(exc, openai.APIStatusError):
        return ForgeError(f"{what} returned an error ({exc.status_code}); {kept}, try again.")
    return ForgeError(f"{what} could not answer; {kept}, try again.")
