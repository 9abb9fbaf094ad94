"""Any OpenAI-compatible chat server (Ollama, vLLM, LM Studio, llama.cpp's server, Azure OpenAI, OpenAI)
through the official `openai` client.

Forge's requests hold typed messages (see `messages.py`); this module writes them in OpenAI's shape on the
way out and reads the answers on the way back, so the turn code stays provider-agnostic:

- tool schemas become `function` tools with the same JSON schema (generated once, from the tool models);
- tool calls become an assistant message's `tool_calls`, tool results become `tool` messages;
- the system blocks become one system message, without Anthropic's prompt-caching markers. When some blocks are
  marked cacheable (a reply's static instructions), only those form the system message, so that message and the
  tool schemas the server's chat template renders after it are the same bytes on every turn, a prefix that
  llama.cpp's and Ollama's prompt caches reuse; the per-turn blocks go with the PM's current message instead
  (the last user message with text, which stays in place through every round of the tool loop);
- Phase A's forced tool call becomes `tool_choice: "required"` when it is the only tool offered (llama.cpp
  accepts only the strings "auto", "none" and "required", and treats the object form as "auto"), else the
  object naming the function (and "required" for good once a server refuses the object). It also asks for
  the arguments as JSON constrained to the tool's schema (`response_format`), which llama.cpp and Ollama
  enforce with a grammar where a small model would otherwise ignore the tool; the JSON in the answer's text
  is read as the call, and the router validates either with `RoutingDecision`.

Tool-call arguments arrive as a JSON string: one that does not parse is handed on as that string, so the
tool's validation refuses it and the model reads why in the tool result (the loop goes on).

The client retries 408/409/429/5xx, timeouts and dropped connections with exponential backoff and honours
`retry-after` (not an error that names its cause, such as a server started without `--jinja`); when retries
run out the caller gets one plain sentence (`ForgeError`), so the turn fails cleanly with state unchanged.
Routing has its own short timeout and no retries: the rule router answers when the model does not.

Bounded against any server: every call has an overall deadline (not only a timeout per read, which a stream
of one word every few seconds never meets), an answer is read up to a size cap, and a body or a stream line
that is not JSON, or an answer with nothing in it, is one sentence too.
"""

from __future__ import annotations

import json
import logging
import queue
import re
import threading
import time
from typing import Any, Callable, Iterator, Sequence

import httpx
import openai
from pydantic import JsonValue

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
    Usage,
)
from pmforge.llm.messages import Message, TextPart, ToolCall

log = logging.getLogger(__name__)

# Local servers ignore the key, but the client refuses to start without one.
PLACEHOLDER_KEY = "no-key"

# OpenAI's finish reasons, in the Anthropic words the tool loop reads.
_STOP_REASONS = {"stop": "end_turn", "tool_calls": "tool_use", "function_call": "tool_use", "length": "max_tokens",
                 "content_filter": "refusal"}

# Said after a forced tool call, for servers that cannot force one: the answer is then read from the text.
_JSON_FALLBACK = ("If you cannot call the `{name}` function, answer with only its arguments as one JSON object, "
                  "and nothing else.")


# Server errors that name a cause no retry can fix (llama.cpp's words): answered at once, not after backoff.
_NOT_RETRIED = ("--jinja", "does not support embeddings", "exceed_context_size", "exceeds the available context")


class ForgeOpenAI(openai.OpenAI):
    """The `openai` client, except that an error whose body names a cause retrying cannot fix is not retried."""

    @property
    def user_agent(self) -> str:  # the client's own: some servers and proxies tell clients apart by it
        return f"OpenAI/Python {self._version}"

    def _should_retry(self, response) -> bool:
        try:
            body = response.read()[:4000].decode("utf-8", "replace")
        except Exception:  # a body that cannot be read: the client's own rule decides
            body = ""
        if any(words in body for words in _NOT_RETRIED):
            return False
        return super()._should_retry(response)


def make_client(settings: Settings, chosen_by: str = "FORGE_LLM=openai") -> openai.OpenAI:
    """The client every OpenAI-compatible call goes through (chat and embeddings share one endpoint).
    `chosen_by`: the setting that asked for it, named when the endpoint is missing."""
    if not (settings.openai_base_url or settings.openai_api_key):
        raise ForgeError(f"{chosen_by} needs OPENAI_BASE_URL (for Ollama: http://localhost:11434/v1) "
                         "or OPENAI_API_KEY to be set.")
    key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else PLACEHOLDER_KEY
    return ForgeOpenAI(api_key=key, base_url=settings.openai_base_url, timeout=settings.openai_timeout_s,
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

    def __init__(self, client: openai.OpenAI, models: dict[Purpose, str], route_timeout_s: float = 30.0,
                 deadline_s: float = 300.0):
        self.client, self.models = client, models
        self.route_timeout_s, self.deadline_s = route_timeout_s, deadline_s
        self.named_choice = True  # False once the server refused tool_choice naming a function
        self.structured = True  # False once the server refused a response_format with a JSON schema

    @classmethod
    def from_settings(cls, settings: Settings) -> "OpenAILLM":
        return cls(make_client(settings), purpose_models(settings), route_timeout_s=settings.openai_route_timeout_s,
                   deadline_s=settings.openai_deadline_s)

    @property
    def description(self) -> str:
        """For the UI and the CLI: the served models and where they are served."""
        models = " / ".join(dict.fromkeys((self.models["reply"], self.models["route"])))
        return f"{models} at {self.client.base_url}"

    def wire(self, request: ChatRequest, stream: bool = False) -> dict:
        return chat_arguments(request, self.models[request.purpose], stream, self.named_choice, self.structured)

    def _client_for(self, request: ChatRequest) -> tuple[openai.OpenAI, float]:
        """The client for this request and its overall deadline in seconds. Routing waits briefly and is
        never retried: when the model is slow or down, the rule router answers instead."""
        if request.purpose == "route":
            return self.client.with_options(timeout=self.route_timeout_s, max_retries=0), self.route_timeout_s
        return self.client, self.deadline_s

    def _failure(self, exc: BaseException, model: str) -> ForgeError:
        if isinstance(exc, ForgeError):
            return exc
        if isinstance(exc, (openai.APIError, httpx.HTTPError)):
            return plain_error(exc, model, str(self.client.base_url))
        # The SDK could not read what the server sent (a line or a body that is not JSON, or JSON of the wrong shape).
        log.warning("The model server (%s) sent an unreadable answer: %r", self.client.base_url, exc)
        return ForgeError(f"The model server sent an answer Forge could not read (not valid JSON); "
                          f"{KEPT}.")

    def _with_choice_fallback(self, request: ChatRequest, call: Callable[[dict], Any], stream: bool) -> Any:
        """`call(args)`; when the server refuses a tool_choice naming a function, or a response_format with a
        JSON schema, once more without it (and from then on): "required", or no schema."""
        for _ in range(2):
            args = self.wire(request, stream)
            try:
                return call(args)
            except openai.BadRequestError as exc:
                if isinstance(args.get("tool_choice"), dict) and "tool_choice" in str(exc):
                    log.warning("The model server refused tool_choice naming a function; Forge sends "
                                "\"required\" instead.")
                    self.named_choice = False
                elif "response_format" in args and "response_format" in str(exc):
                    log.warning("The model server refused a response_format with a JSON schema; Forge asks for "
                                "the forced call without it.")
                    self.structured = False
                else:
                    raise
        return call(self.wire(request, stream))

    def complete(self, request: ChatRequest) -> ChatResponse:
        client, deadline = self._client_for(request)
        model = self.models[request.purpose]
        cap = body_cap(request)

        def read(call: _Call) -> Iterator[bytes]:
            def attempt(args: dict) -> Any:
                return client.chat.completions.with_streaming_response.create(**args).__enter__()

            raw = self._with_choice_fallback(request, attempt, stream=False)
            call.closer = raw.close
            size = 0
            for piece in raw.iter_bytes():
                size += len(piece)
                if size > cap:
                    raise ForgeError(f"The model server sent an answer longer than Forge reads ({cap // 1000:,} kB "
                                     f"for at most {request.max_tokens:,} tokens); {KEPT}.")
                yield piece

        try:
            body = b"".join(bounded(read, deadline, model))
        except Exception as exc:
            raise self._failure(exc, model) from None
        try:
            data = json.loads(body)
        except ValueError:
            raise self._failure(ValueError(body[:200]), model) from None
        if not isinstance(data, dict):
            raise self._failure(TypeError(f"a JSON {type(data).__name__}"), model)
        if isinstance(data.get("error"), dict):  # an error sent with status 200
            words = str(data["error"].get("message", ""))
            raise ForgeError(sentence_for_server_words(words, model, str(self.client.base_url))
                             or f"The model server answered with an error ({one_clause(words)}); {KEPT}.")
        choices = data.get("choices")
        choice = choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else None
        message = choice.get("message") if choice else None
        if not isinstance(message, dict):
            raise ForgeError(f"The model server sent an empty answer (no message in it); {KEPT}.")
        calls: list[tuple[str | None, str, str]] = []
        for c in message.get("tool_calls") or []:
            function = c.get("function") if isinstance(c, dict) else None
            if isinstance(function, dict) and function.get("name"):
                arguments = function.get("arguments")
                calls.append((c.get("id"), str(function["name"]),
                              arguments if isinstance(arguments, str) else json.dumps(arguments or {})))
        content = message.get("content")
        response = assemble_response(request, content if isinstance(content, str) else "", calls,
                                     choice.get("finish_reason") if choice else None, data.get("usage"))
        response.model = model
        return response

    def stream(self, request: ChatRequest) -> ResponseStream:
        client, deadline = self._client_for(request)
        model = self.models[request.purpose]
        cap = reply_cap(request)

        def read(call: _Call) -> Iterator[Any]:
            stream = self._with_choice_fallback(
                request, lambda args: client.chat.completions.create(**args), stream=True)
            call.closer = stream.close
            yield from stream

        def chunks() -> Iterator[str | ChatResponse]:
            text: list[str] = []
            size = 0
            calls = ToolCallDeltas()
            finish, usage = None, None
            pump = bounded(read, deadline, model)
            try:
                for chunk in pump:
                    usage = getattr(chunk, "usage", None) or usage
                    for choice in getattr(chunk, "choices", None) or []:
                        delta = choice.delta
                        if delta is not None and delta.content:
                            piece = delta.content[:max(cap - size, 0)]
                            size += len(delta.content)
                            if piece:
                                text.append(piece)
                                yield piece
                        for tool_call in (delta.tool_calls if delta is not None else None) or []:
                            size += len(getattr(getattr(tool_call, "function", None), "arguments", None) or "")
                            calls.add(tool_call)
                        finish = choice.finish_reason or finish
                    if size > cap:  # a server that ignores max_tokens: the reply ends here, cut short
                        log.warning("The model server's reply passed %d characters; Forge stopped reading", cap)
                        pump.close()
                        calls, finish = ToolCallDeltas(), "length"
                        break
            except Exception as exc:
                raise self._failure(exc, model) from None
            response = assemble_response(request, "".join(text), calls.complete(), finish, usage)
            response.model = model
            yield response

        return ResponseStream(chunks())


# --------------------------------------------------------------------------- bounds


KEPT = "your message is kept"


def reply_cap(request: ChatRequest) -> int:
    """Characters of a streamed reply Forge reads: far more than `max_tokens` can hold, far less than a
    runaway server can send."""
    return max(16_000, request.max_tokens * 16)


def body_cap(request: ChatRequest) -> int:
    """Bytes of a whole (not streamed) answer Forge reads."""
    return max(256_000, request.max_tokens * 64)


class _Call:
    """One call running on its own thread: `closer` (set once the server answers) ends it from outside."""

    def __init__(self) -> None:
        self.closer: Callable[[], Any] | None = None
        self.cancelled = threading.Event()

    def cancel(self) -> None:
        self.cancelled.set()
        closer = self.closer
        if closer is not None:
            try:
                closer()
            except Exception:  # already closed, or closing from this thread races the reader: it ends anyway
                pass


class bounded:
    """Iterate `read(call)` (run on a thread of its own) for at most `seconds` in all: however the server
    behaves — silent, trickling one word every few seconds, retried by the client — the caller gets the
    items, the error `read` raised, or a ForgeError at the deadline. Closing early ends the call."""

    def __init__(self, read: Callable[[_Call], Iterator[Any]], seconds: float, model: str):
        self.call, self.seconds, self.model = _Call(), seconds, model
        self._items: queue.Queue = queue.Queue()
        self._end = time.monotonic() + seconds
        threading.Thread(target=self._run, args=(read,), daemon=True, name="forge-model-call").start()

    def _run(self, read: Callable[[_Call], Iterator[Any]]) -> None:
        try:
            for item in read(self.call):
                if self.call.cancelled.is_set():
                    return
                self._items.put(("item", item))
            self._items.put(("end", None))
        except BaseException as exc:  # handed to the caller, who says it in one sentence
            self._items.put(("error", exc))
        finally:
            if self.call.cancelled.is_set() and self.call.closer is not None:
                self.call.cancel()

    def __iter__(self) -> Iterator[Any]:
        try:
            while True:
                remaining = self._end - time.monotonic()
                try:
                    kind, value = self._items.get(timeout=max(remaining, 0.0))
                except queue.Empty:
                    raise ForgeError(
                        f"The model server did not finish its answer within {self.seconds:g} s (the model '{self.model}' "
                        f"may be too slow for this machine, or the server stalled); {KEPT}.") from None
                if kind == "end":
                    return
                if kind == "error":
                    raise value
                yield value
        finally:
            self.close()

    def close(self) -> None:
        self.call.cancel()


# --------------------------------------------------------------------------- requests


def chat_arguments(request: ChatRequest, model: str, stream: bool = False, named_choice: bool = True,
                   structured: bool = True) -> dict:
    """The Chat Completions arguments for a Forge request. `named_choice` False: the server refuses a
    tool_choice naming a function, so a forced call is sent as "required". `structured`: a forced call of the
    only tool offered also asks for its arguments as JSON text constrained to the tool's schema (llama.cpp and
    Ollama turn the schema into a grammar, so even a small model answers with a decision that validates; a
    server that calls the tool answers with the call as before)."""
    forced = forced_tool(request.tool_choice)
    system = list(request.system)
    if forced:
        system.append(SystemBlock(text=_JSON_FALLBACK.format(name=forced)))
    args: dict[str, Any] = dict(model=model, max_tokens=request.max_tokens,
                                messages=chat_messages(system, request.messages))
    if request.tools:
        args["tools"] = chat_tools(request.tools)
        if request.tool_choice:
            args["tool_choice"] = chat_tool_choice(request.tool_choice, len(request.tools), named_choice)
        if forced and structured and len(request.tools) == 1:
            args["response_format"] = {"type": "json_schema", "json_schema": {
                "name": forced, "schema": bounded_schema(request.tools[0].input_schema)}}
    if stream:
        args["stream"] = True
        args["stream_options"] = {"include_usage": True}  # the usage comes in a last chunk
    return args


# A grammar built from a schema has no length limits of its own: a small model then repeats a list item or a
# phrase until the output cap cuts the JSON in half. These bounds keep a constrained answer short and whole
# (a routing decision at its longest stays under Phase A's default output cap).
GRAMMAR_MAX_CHARS, GRAMMAR_MAX_ITEM_CHARS, GRAMMAR_MAX_ITEMS = 240, 80, 4


def bounded_schema(schema: JsonValue, max_chars: int = GRAMMAR_MAX_CHARS) -> JsonValue:
    """`schema` with a length limit on every free string (shorter for a list's items) and an item limit on
    every list, where it sets none."""
    if isinstance(schema, list):
        return [bounded_schema(item, max_chars) for item in schema]
    if not isinstance(schema, dict):
        return schema
    is_list = schema.get("type") == "array"
    bounded = {key: bounded_schema(value, GRAMMAR_MAX_ITEM_CHARS if is_list and key == "items" else max_chars)
               for key, value in schema.items()}
    if bounded.get("type") == "string" and "enum" not in bounded:
        bounded.setdefault("maxLength", max_chars)
    if is_list:
        bounded.setdefault("maxItems", GRAMMAR_MAX_ITEMS)
    return bounded


def chat_tools(tools: list[ToolSpec]) -> list[dict]:
    """Forge's tool specs (JSON schemas generated from the tool models) as `function` tools."""
    return [{"type": "function", "function": {"name": t.name, "description": t.description,
                                              "parameters": t.input_schema}} for t in tools]


def forced_tool(choice: dict | None) -> str | None:
    return choice.get("name") if choice and choice.get("type") == "tool" else None


def chat_tool_choice(choice: dict, tools: int = 1, named_choice: bool = True) -> str | dict:
    """OpenAI's form of a tool choice. Forcing the only tool offered is "required": the one form every
    compatible server honours (llama.cpp takes only "auto", "none" and "required", and reads an object as "auto")."""
    if forced_tool(choice):
        if tools == 1 or not named_choice:
            return "required"
        return {"type": "function", "function": {"name": choice["name"]}}
    return {"any": "required", "none": "none"}.get(choice.get("type", ""), "auto")


def chat_messages(system: list[SystemBlock], messages: list[Message]) -> list[dict]:
    """One system message (many chat templates accept only one, first), then the conversation with tool
    calls and results in OpenAI's shape. Caching markers are Anthropic's: they are not carried over, but
    they decide what stays in the system message (see the module's notes)."""
    fixed = [b for b in system if b.cache and b.text]
    per_turn = [b for b in system if not b.cache and b.text] if fixed else []
    current = _current_message(messages) if per_turn else None
    if current is None:  # nothing to carry the per-turn blocks: everything stays in the system message
        fixed, per_turn = [b for b in system if b.text], []
    out: list[dict] = []
    if fixed:
        out.append({"role": "system", "content": "\n\n".join(b.text for b in fixed)})
    for index, message in enumerate(messages):
        if index == current:
            context = "\n\n".join(b.text for b in per_turn)
            message = message.model_copy(update={"parts": [TextPart(text=f"{context}\n\n# The PM's message\n"
                                                                          f"{message.text}")]})
        out.extend(_chat_message(message))
    return out


def _current_message(messages: list[Message]) -> int | None:
    """The index of the PM's current message: the last user message with text (tool results come after it)."""
    return next((i for i in range(len(messages) - 1, -1, -1)
                 if messages[i].role == "user" and messages[i].is_plain()), None)


def _chat_message(message: Message) -> list[dict]:
    if message.role == "assistant":
        reply: dict[str, Any] = {"role": "assistant", "content": message.text}
        if message.tool_calls:
            reply["tool_calls"] = [
                {"id": c.id, "type": "function",
                 "function": {"name": c.name, "arguments": json.dumps(c.input or {}, ensure_ascii=False)}}
                for c in message.tool_calls]
        return [reply]
    # A user turn: tool results first (they must follow the assistant's calls), then any text.
    # A tool message has no error flag: it is said in words, as the Anthropic API's `is_error` would.
    out = [{"role": "tool", "tool_call_id": r.call_id, "content": f"Error: {r.content}" if r.is_error else r.content}
           for r in message.tool_results]
    if message.text or not out:
        out.append({"role": "user", "content": message.text})
    return out


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
    uses = [ToolCall(id=call_id or f"call_{i}", name=name, input=parse_arguments(arguments))
            for i, (call_id, name, arguments) in enumerate(calls)]
    forced = forced_tool(request.tool_choice)
    if forced and not uses:
        found = json_object_in(text)
        if found is not None:
            # Some models write the call itself: {"name": "route", "arguments": {...}}.
            if found.get("name") == forced and isinstance(found.get("arguments", found.get("parameters")), dict):
                found = found.get("arguments", found.get("parameters"))
            uses, text = [ToolCall(id="call_from_text", name=forced, input=found)], ""
    stop = "tool_use" if uses else _STOP_REASONS.get(finish or "stop", "end_turn")
    return ChatResponse(text=text, tool_calls=uses, stop_reason=stop, usage=usage_of(usage))


def usage_of(usage) -> Usage:
    """OpenAI counts cached prompt tokens inside `prompt_tokens`; Forge's usage keeps them apart, as Anthropic does.
    `usage` is the SDK's object or the JSON object itself; counts that are not whole numbers read as 0."""
    if usage is None:
        return Usage()

    def field(obj, name: str) -> Any:
        return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)

    def count(value) -> int:
        return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0

    details = field(usage, "prompt_tokens_details")
    cached = count(field(details, "cached_tokens")) if details is not None else 0
    prompt = count(field(usage, "prompt_tokens"))
    return Usage(input_tokens=max(prompt - cached, 0), output_tokens=count(field(usage, "completion_tokens")),
                 cache_read_input_tokens=min(cached, prompt))


# --------------------------------------------------------------------------- failures


def server_words(exc: Exception) -> str:
    """The server's own error message, when it sent one."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        message = inner.get("message") if isinstance(inner, dict) else inner
        if message:
            return str(message)
    return str(getattr(exc, "message", "") or exc)


_CONTEXT = re.compile(r"request \((\d+) tokens\) exceeds the available context size \((\d+) tokens\)")


def sentence_for_server_words(words: str, model: str, base_url: str) -> str:
    """One sentence for a cause the server names in its error message ("" when it names none Forge knows).
    Each says what to change: none of these goes away by sending the message again."""
    lowered = words.lower()
    context = _CONTEXT.search(words)
    if context or "exceed_context_size" in lowered or ("context" in lowered and ("exceed" in lowered
                                                                                  or "too long" in lowered)):
        size = f" ({int(context.group(2)):,} tokens)" if context else ""
        prompt = f" ({int(context.group(1)):,} tokens)" if context else ""
        return (f"The model's context window{size} is smaller than Forge's prompt{prompt}; restart the server "
                "with a window of at least 16k tokens (llama.cpp: -c 16384; Ollama: OLLAMA_CONTEXT_LENGTH=16384); "
                f"{KEPT}.")
    if "--jinja" in words or "jinja" in lowered:
        return (f"The model server at {base_url} cannot read tool definitions as started; restart llama.cpp's "
                f"server with --jinja (Forge's replies need tools); {KEPT}.")
    if "does not support tools" in lowered or ("tool" in lowered and "support" in lowered):
        return (f"The model '{model}' cannot call tools, which Forge needs (choose one that can in "
                f"FORGE_OPENAI_MODEL, such as qwen2.5 or llama3.1); {KEPT}.")
    if ("model" in lowered and ("not found" in lowered or "does not exist" in lowered or "unknown" in lowered)):
        return (f"The model server at {base_url} does not serve the model '{model}' (check FORGE_OPENAI_MODEL and "
                f"the other FORGE_OPENAI_* model settings, or for Ollama run: ollama pull {model}); {KEPT}.")
    return ""


def plain_error(exc: Exception, model: str, base_url: str, what: str = "The model server") -> ForgeError:
    """One sentence for the PM, naming the cause and what to change; "try again" only where a retry can help.
    The server's own words go to the log."""
    log.warning("%s (%s) failed: %s", what, base_url, exc)
    if isinstance(exc, (openai.AuthenticationError, openai.PermissionDeniedError)):
        return ForgeError(f"{what} rejected the API key (check OPENAI_API_KEY); {KEPT}.")
    if isinstance(exc, openai.RateLimitError):
        return ForgeError(f"{what} is rate-limiting Forge right now; {KEPT}, try again in a minute.")
    if isinstance(exc, openai.NotFoundError):
        return ForgeError(f"{what} at {base_url} does not serve the model '{model}' (check FORGE_OPENAI_MODEL and "
                          f"the other FORGE_OPENAI_* model settings, and OPENAI_BASE_URL, or for Ollama run: "
                          f"ollama pull {model}); {KEPT}.")
    if isinstance(exc, openai.APIError) and not isinstance(exc, openai.APIConnectionError):
        named = sentence_for_server_words(server_words(exc), model, base_url)
        if named:
            return ForgeError(named)
    if isinstance(exc, openai.APIStatusError) and exc.status_code in (503, 529):
        return ForgeError(f"{what} is overloaded or still loading the model; {KEPT}, try again in a minute.")
    if isinstance(exc, (openai.APITimeoutError, httpx.TimeoutException)):
        return ForgeError(f"{what} did not answer in time (a local model may still be loading); {KEPT}, try again.")
    if isinstance(exc, (openai.APIConnectionError, httpx.HTTPError)):
        return ForgeError(f"Forge could not reach the model server at {base_url} (is it running? start it, or "
                          f"check OPENAI_BASE_URL); {KEPT}.")
    if isinstance(exc, openai.APIStatusError) and exc.status_code < 500:
        return ForgeError(f"{what} refused Forge's request ({exc.status_code}: "
                          f"{one_clause(server_words(exc))}); {KEPT}.")
    if isinstance(exc, openai.APIStatusError):
        return ForgeError(f"{what} failed with an internal error ({exc.status_code}: "
                          f"{one_clause(server_words(exc))}); {KEPT}, try again.")
    return ForgeError(f"{what} could not answer ({one_clause(server_words(exc))}); {KEPT}.")


def one_clause(words: str, limit: int = 120) -> str:
    """A server's message inside a sentence: one line, no sentence breaks, short."""
    text = " ".join(words.split()).replace(". ", ", ").rstrip(". ") or "no details"
    return text if len(text) <= limit else text[:limit].rstrip() + "…"
