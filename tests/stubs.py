"""Local HTTP stub for the Anthropic Messages API, the Voyage AI embeddings API and the OpenAI-compatible
Chat Completions and embeddings API (what Ollama, vLLM, LM Studio and Azure serve).

The stub is meant to be driven by the *real* client libraries so that tests
exercise their request building, response parsing, streaming and retry logic:

    with StubServer() as stub:
        stub.queue_anthropic(text_message("hello"))
        client = anthropic.Anthropic(base_url=stub.url, api_key="test")
        client.messages.create(...)

        vo = voyageai.Client(api_key="test", base_url=stub.url + "/v1")
        vo.embed(["a"], model="voyage-3.5-lite")

        stub.queue_openai(openai_tool_calls([("route", {...})]))
        oa = openai.OpenAI(base_url=stub.url + "/v1", api_key="test")
        oa.chat.completions.create(...)  # streamed too; oa.embeddings.create(...) is served as well

Everything is bound to 127.0.0.1 on a free port.
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
import math
import socket
import struct
import sys
import threading
import time
import traceback
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Iterable, Iterator
from urllib.parse import urlsplit

__all__ = [
    "StubServer",
    "DROP",
    "delayed",
    "text_message",
    "tool_use_message",
    "default_usage",
    "deterministic_embedding",
    "openai_text",
    "openai_tool_calls",
    "error_reply",
]

ANTHROPIC_MESSAGES_PATH = "/v1/messages"
VOYAGE_EMBEDDINGS_PATH = "/v1/embeddings"
OPENAI_CHAT_PATH = "/v1/chat/completions"
DEFAULT_EMBEDDING_DIM = 512
OPENAI_EMBEDDING_DIM = 768  # nomic-embed-text's

_ids = itertools.count(1)
_ids_lock = threading.Lock()


def _next_id() -> int:
    with _ids_lock:
        return next(_ids)


class _Drop:
    def __repr__(self) -> str:
        return "DROP"


#: A script item that closes the connection without answering (a network failure, not an HTTP error).
DROP = _Drop()


def delayed(seconds: float, item: Any = None) -> Callable[[dict], Any]:
    """A script item that answers with ``item`` (``None``: the default response) after ``seconds``.

    ``item`` may itself be a callable ``(request_json) -> item``. The wait is cut
    short when the server stops, so a slow answer never holds up a test's teardown.
    """

    def answer(request: dict) -> Any:
        stopping = answer.stopping  # type: ignore[attr-defined]
        if stopping is not None:
            stopping.wait(seconds)
        else:
            time.sleep(seconds)
        return item(request) if callable(item) else item

    answer.stopping = None  # type: ignore[attr-defined]  # set by the server that serves it
    return answer


# --------------------------------------------------------------------------- #
# Message builders
# --------------------------------------------------------------------------- #


def default_usage() -> dict:
    return {
        "input_tokens": 10,
        "output_tokens": 5,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }


def _message(content: list[dict], stop_reason: str | None, model: str, usage: dict | None) -> dict:
    full_usage = default_usage()
    if usage:
        full_usage.update(usage)
    return {
        "id": f"msg_stub_{_next_id():06d}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": full_usage,
    }


def text_message(text: str, stop_reason: str = "end_turn", model: str = "claude-test", usage: dict | None = None) -> dict:
    """An assistant message with a single text block."""
    return _message([{"type": "text", "text": text}], stop_reason, model, usage)


def tool_use_message(
    tool_uses: list[tuple],
    text: str | None = None,
    stop_reason: str = "tool_use",
    model: str = "claude-test",
    usage: dict | None = None,
) -> dict:
    """An assistant message with an optional text block followed by tool_use blocks.

    Each entry of ``tool_uses`` is ``(name, input)`` or ``(name, input, id)``.
    Without an explicit id, ids are ``toolu_<n>`` with ``n`` unique within the
    process, so multi-turn tool loops never see duplicate ids.
    """
    content: list[dict] = []
    if text is not None:
        content.append({"type": "text", "text": text})
    for entry in tool_uses:
        if len(entry) == 3:
            name, tool_input, tool_id = entry
        else:
            name, tool_input = entry
            tool_id = f"toolu_{_next_id()}"
        content.append({"type": "tool_use", "id": tool_id, "name": name, "input": tool_input})
    return _message(content, stop_reason, model, usage)


class _ErrorReply:
    def __init__(self, status: int, message: str) -> None:
        self.status, self.message = status, message


def error_reply(status: int, message: str) -> _ErrorReply:
    """A script item: an HTTP error with the server's own message (an int item sends a generic one)."""
    return _ErrorReply(status, message)


# --------------------------------------------------------------------------- #
# OpenAI-compatible chat completions
# --------------------------------------------------------------------------- #


def openai_usage() -> dict:
    return {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}


def _completion(message: dict, finish_reason: str, model: str, usage: dict | None) -> dict:
    full_usage = dict(openai_usage(), **(usage or {}))
    return {
        "id": f"chatcmpl-stub{_next_id():06d}",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason, "logprobs": None}],
        "usage": full_usage,
    }


def openai_text(text: str, finish_reason: str = "stop", model: str = "stub-model", usage: dict | None = None) -> dict:
    """A chat completion whose message is plain text."""
    return _completion({"role": "assistant", "content": text}, finish_reason, model, usage)


def openai_tool_calls(
    calls: list[tuple],
    text: str | None = None,
    finish_reason: str = "tool_calls",
    model: str = "stub-model",
    usage: dict | None = None,
) -> dict:
    """A chat completion with optional text and tool calls. Each entry of ``calls`` is ``(name, arguments)``
    or ``(name, arguments, id)``; arguments that are a string are sent as they are (e.g. broken JSON)."""
    tool_calls = []
    for entry in calls:
        name, arguments = entry[0], entry[1]
        call_id = entry[2] if len(entry) == 3 else f"call_{_next_id()}"
        raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
        tool_calls.append({"id": call_id, "type": "function", "function": {"name": name, "arguments": raw}})
    return _completion({"role": "assistant", "content": text, "tool_calls": tool_calls}, finish_reason, model, usage)


def completion_to_chunks(completion: dict, include_usage: bool) -> Iterator[dict]:
    """The `chat.completion.chunk` sequence a server streams for ``completion``: text in pieces, each tool
    call's id and name first, then its arguments in pieces, the finish reason, and the usage if asked."""
    choice, base = completion["choices"][0], {k: completion[k] for k in ("id", "created", "model")}
    message = choice["message"]

    def chunk(delta: dict, finish_reason: str | None = None) -> dict:
        return dict(base, object="chat.completion.chunk",
                    choices=[{"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}])

    yield chunk({"role": "assistant", "content": ""})
    for piece in _chunks(message.get("content") or ""):
        yield chunk({"content": piece})
    for index, call in enumerate(message.get("tool_calls") or []):
        yield chunk({"tool_calls": [{"index": index, "id": call["id"], "type": "function",
                                     "function": {"name": call["function"]["name"], "arguments": ""}}]})
        for piece in _chunks(call["function"]["arguments"]):
            yield chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    yield chunk({}, choice["finish_reason"])
    if include_usage:
        yield dict(base, object="chat.completion.chunk", choices=[], usage=completion.get("usage"))


def _openai_embeddings_response(request: dict, dim: int) -> dict:
    texts = request.get("input") or []
    if isinstance(texts, str):
        texts = [texts]
    dim = request.get("dimensions") or dim

    def encoded(text: str):
        vector = deterministic_embedding(str(text), dim)
        if request.get("encoding_format") == "base64":
            return base64.b64encode(struct.pack(f"<{dim}f", *vector)).decode("ascii")
        return vector

    return {
        "object": "list",
        "data": [{"object": "embedding", "embedding": encoded(t), "index": i} for i, t in enumerate(texts)],
        "model": request.get("model") or "embed-stub",
        "usage": {"prompt_tokens": sum(max(1, len(str(t).split())) for t in texts),
                  "total_tokens": sum(max(1, len(str(t).split())) for t in texts)},
    }


# --------------------------------------------------------------------------- #
# Deterministic embeddings
# --------------------------------------------------------------------------- #


def deterministic_embedding(text: str, dim: int = DEFAULT_EMBEDDING_DIM) -> list[float]:
    """A unit vector of length ``dim`` derived only from ``text`` (stable across runs/processes)."""
    values: list[float] = []
    seed = text.encode("utf-8")
    for block in itertools.count():
        digest = hashlib.sha256(seed + b"\x00" + block.to_bytes(4, "big")).digest()
        # 8 unsigned 32-bit ints per digest, mapped to [-1, 1)
        for (n,) in struct.iter_unpack(">I", digest):
            values.append(n / 2**31 - 1.0)
            if len(values) == dim:
                norm = math.sqrt(sum(v * v for v in values)) or 1.0
                return [v / norm for v in values]
    raise AssertionError("unreachable")


def _voyage_default_response(request: dict) -> dict:
    texts = request.get("input") or []
    if isinstance(texts, str):
        texts = [texts]
    dim = request.get("output_dimension") or DEFAULT_EMBEDDING_DIM
    return {
        "object": "list",
        "data": [
            {"object": "embedding", "embedding": deterministic_embedding(str(t), dim), "index": i}
            for i, t in enumerate(texts)
        ],
        "model": request.get("model") or "voyage-stub",
        "usage": {"total_tokens": sum(max(1, len(str(t).split())) for t in texts)},
    }


# --------------------------------------------------------------------------- #
# SSE rendering of a message
# --------------------------------------------------------------------------- #


def _chunks(s: str, n: int = 3) -> list[str]:
    """Split ``s`` into (up to) ``n`` roughly equal non-empty pieces."""
    if not s:
        return []
    size = max(1, math.ceil(len(s) / n))
    return [s[i : i + size] for i in range(0, len(s), size)]


def _sse(event: str, data: dict) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode("utf-8")


def message_to_sse_events(message: dict) -> Iterator[tuple[str, dict]]:
    """The event sequence the Messages API would stream for ``message``."""
    usage = dict(default_usage(), **(message.get("usage") or {}))
    start_usage = dict(usage, output_tokens=1)
    start_msg = dict(message, content=[], stop_reason=None, stop_sequence=None, usage=start_usage)
    yield "message_start", {"type": "message_start", "message": start_msg}
    yield "ping", {"type": "ping"}

    for index, block in enumerate(message.get("content") or []):
        btype = block.get("type")
        if btype == "text":
            start_block = dict(block, text="")
            deltas = [{"type": "text_delta", "text": c} for c in _chunks(block.get("text", ""))]
        elif btype in ("tool_use", "server_tool_use"):
            # `raw_input_json` (streaming only) sends that text as the input instead, e.g. broken JSON.
            raw = block.get("raw_input_json")
            start_block = {k: v for k, v in block.items() if k != "raw_input_json"}
            start_block["input"] = {}
            deltas = [
                {"type": "input_json_delta", "partial_json": c}
                for c in _chunks(raw if raw is not None else json.dumps(block.get("input", {})))
            ]
        elif btype == "thinking":
            start_block = dict(block, thinking="", signature="")
            deltas = [{"type": "thinking_delta", "thinking": c} for c in _chunks(block.get("thinking", ""))]
            if block.get("signature"):
                deltas.append({"type": "signature_delta", "signature": block["signature"]})
        else:  # anything else is sent whole in content_block_start
            start_block, deltas = block, []
        yield "content_block_start", {"type": "content_block_start", "index": index, "content_block": start_block}
        for delta in deltas:
            yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}

    yield "message_delta", {
        "type": "message_delta",
        "delta": {"stop_reason": message.get("stop_reason"), "stop_sequence": message.get("stop_sequence")},
        "usage": {"output_tokens": usage["output_tokens"]},
    }
    yield "message_stop", {"type": "message_stop"}


# --------------------------------------------------------------------------- #
# Server
# --------------------------------------------------------------------------- #

_ANTHROPIC_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}

class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: "_Server"

    def log_message(self, format: str, *args: Any) -> None:  # silence stderr logging
        pass

    def do_GET(self) -> None:
        self._handle(None)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self._handle(self.rfile.read(length) if length else b"")

    def _handle(self, raw: bytes | None) -> None:
        stub = self.server.stub
        body: dict | None = None
        if raw:
            try:
                body = json.loads(raw)
            except ValueError:
                body = None
        path = urlsplit(self.path).path
        headers = {k.lower(): v for k, v in self.headers.items()}
        api = _api_of(self.command, path, headers)
        stub._record({"path": path, "method": self.command, "headers": headers, "json": body, "api": api})

        if api == "anthropic":
            self._anthropic(stub, body or {})
        elif api == "voyage":
            self._voyage(stub, body or {})
        elif api == "openai":
            self._openai_chat(stub, body or {})
        elif api == "openai_embeddings":
            self._openai_embeddings(stub, body or {})
        else:
            self._send_json(404, {"type": "error", "error": {"type": "not_found_error", "message": f"stub: no route {self.command} {path}"}})

    # -- helpers ----------------------------------------------------------- #

    def _resolve(self, stub: "StubServer", queue: deque, request: dict, default: Callable[[dict], Any],
                 fallback: Any = None) -> Any:
        item = stub._pop(queue)
        if item is None:
            item = fallback if fallback is not None else default
        if callable(item):
            if hasattr(item, "stopping"):  # a `delayed` item: let a stopping server cut its wait short
                item.stopping = stub._stopping
            try:
                item = item(request)
            except Exception:  # surface the bug both as HTTP 500 and on the stub
                tb = traceback.format_exc()
                stub.errors.append(tb)
                return ("callable_error", tb)
            if item is None:  # a callable may pass on a request: the default response serves it
                item = default(request)
        return item

    def _drop(self) -> None:
        """Close the connection without a response: the client sees a network failure."""
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _send_json(self, status: int, payload: dict, headers: dict | None = None) -> None:
        data = json.dumps(payload).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("request-id", f"req_stub_{_next_id():06d}")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    @staticmethod
    def _retry_headers(status: int) -> dict:
        if status in (408, 409, 429) or status >= 500:
            # `retry-after: 0` alone makes the anthropic client fall back to its
            # exponential backoff (it only honours values > 0); `retry-after-ms`
            # takes precedence there and makes retries near-instant.
            return {"retry-after": "0", "retry-after-ms": "1"}
        return {}

    # -- anthropic --------------------------------------------------------- #

    def _anthropic(self, stub: "StubServer", request: dict) -> None:
        def default(req: dict) -> dict:
            return text_message("stub reply", model=req.get("model") or "claude-test")

        item = self._resolve(stub, stub._anthropic_queue, request, default, stub.anthropic_fallback)
        if item is DROP:
            self._drop()
            return
        if isinstance(item, tuple) and item[0] == "callable_error":
            self._send_json(500, {"type": "error", "error": {"type": "api_error", "message": item[1]}}, {"x-should-retry": "false"})
            return
        if isinstance(item, int):
            err_type = _ANTHROPIC_ERROR_TYPES.get(item, "api_error" if item >= 500 else "invalid_request_error")
            self._send_json(
                item,
                {"type": "error", "error": {"type": err_type, "message": f"stub error {item}"}},
                self._retry_headers(item),
            )
            return
        if not isinstance(item, dict):
            raise TypeError(f"unsupported anthropic stub item: {item!r}")
        item = stub._billed(request, item)
        if request.get("stream"):
            self._send_sse(message_to_sse_events(item))
        else:
            self._send_json(200, item)

    def _send_sse(self, events: Iterable[tuple[str, dict]]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.send_header("request-id", f"req_stub_{_next_id():06d}")
        self.end_headers()
        self.close_connection = True
        for name, data in events:
            self.wfile.write(_sse(name, data))
            self.wfile.flush()

    # -- openai-compatible ------------------------------------------------- #

    def _openai_error(self, item: Any) -> bool:
        """Sends ``item`` if it is a failure (True), as an OpenAI-style error body."""
        if item is DROP:
            self._drop()
            return True
        if isinstance(item, tuple) and item[0] == "callable_error":
            self._send_json(500, {"error": {"message": item[1], "type": "server_error"}}, {"x-should-retry": "false"})
            return True
        if isinstance(item, int):
            item = _ErrorReply(item, f"stub error {item}")
        if isinstance(item, _ErrorReply):
            kind = ("rate_limit_error" if item.status == 429
                    else "server_error" if item.status >= 500 else "invalid_request_error")
            error = {"message": item.message, "type": kind, "param": None, "code": None}
            self._send_json(item.status, {"error": error}, self._retry_headers(item.status))
            return True
        return False

    def _openai_chat(self, stub: "StubServer", request: dict) -> None:
        def default(req: dict) -> dict:
            return openai_text("stub reply", model=req.get("model") or "stub-model")

        item = self._resolve(stub, stub._openai_queue, request, default, stub.openai_fallback)
        if self._openai_error(item):
            return
        if not isinstance(item, dict):
            raise TypeError(f"unsupported openai stub item: {item!r}")
        if request.get("stream"):
            include_usage = bool((request.get("stream_options") or {}).get("include_usage"))
            self._send_openai_sse(completion_to_chunks(item, include_usage))
        else:
            self._send_json(200, item)

    def _send_openai_sse(self, chunks: Iterable[dict]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        for data in chunks:
            self.wfile.write(f"data: {json.dumps(data)}\n\n".encode("utf-8"))
            self.wfile.flush()
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()

    def _openai_embeddings(self, stub: "StubServer", request: dict) -> None:
        def default(req: dict) -> dict:
            return _openai_embeddings_response(req, stub.openai_embedding_dim)

        item = self._resolve(stub, stub._openai_embeddings_queue, request, default, stub.openai_embeddings_fallback)
        if self._openai_error(item):
            return
        if not isinstance(item, dict):
            raise TypeError(f"unsupported openai embeddings stub item: {item!r}")
        self._send_json(200, item)

    # -- voyage ------------------------------------------------------------ #

    def _voyage(self, stub: "StubServer", request: dict) -> None:
        item = self._resolve(stub, stub._voyage_queue, request, _voyage_default_response, stub.voyage_fallback)
        if item is DROP:
            self._drop()
            return
        if isinstance(item, tuple) and item[0] == "callable_error":
            self._send_json(500, {"detail": item[1]})
            return
        if isinstance(item, int):
            self._send_json(item, {"detail": f"stub error {item}"}, self._retry_headers(item))
            return
        if not isinstance(item, dict):
            raise TypeError(f"unsupported voyage stub item: {item!r}")
        self._send_json(200, item)


def _api_of(method: str, path: str, headers: dict) -> str | None:
    """Which API a request is for. Voyage and OpenAI-compatible servers share `/v1/embeddings`: the
    `openai` client names itself in its user agent."""
    if method != "POST":
        return None
    path = path.rstrip("/")
    if path == ANTHROPIC_MESSAGES_PATH:
        return "anthropic"
    if path.endswith("/chat/completions"):
        return "openai"
    if path.endswith("/embeddings"):
        return "openai_embeddings" if headers.get("user-agent", "").startswith("OpenAI/") else "voyage"
    return None


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    stub: "StubServer"

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):  # the client hung up first (it timed out): expected
            return
        super().handle_error(request, client_address)


class StubServer:
    """ThreadingHTTPServer on 127.0.0.1 (free port) served from a daemon thread.

    Use as a context manager: the server starts on ``__enter__`` and is shut
    down and closed on ``__exit__``.

    Scripts are queued with :meth:`queue_anthropic` / :meth:`queue_voyage`;
    each request consumes one item. An item is a response dict, an int HTTP
    status (served with an API-style error body and, for retryable statuses,
    zero-delay retry headers), :data:`DROP` (the connection is closed without
    an answer), or a callable ``(request_json) -> item`` evaluated at request
    time (returning ``None`` serves the default response; :func:`delayed`
    builds a slow one). Empty queues fall back to ``anthropic_fallback`` /
    ``voyage_fallback`` when set (an item or callable, e.g. a failure pattern
    over all later requests), else to a "stub reply" text message (Anthropic)
    or deterministic hash-based unit vectors (Voyage).
    """

    def __init__(self) -> None:
        self.url: str = ""
        self.requests: list[dict] = []
        self.errors: list[str] = []  # tracebacks from callables that raised
        self._lock = threading.Lock()
        self._anthropic_queue: deque = deque()
        self._voyage_queue: deque = deque()
        self.anthropic_fallback: Any = None  # serves requests the queue does not (None: the default reply)
        # With a prompt cache model (forge_bench.bench.cache_model.PromptCache), every answer's input usage is the
        # model's: cache reads and writes as Anthropic would report them for the request as sent.
        self.prompt_cache: Any = None
        self.served: list[tuple[str, dict]] = []  # (model, usage) of every message answered, in order
        self.voyage_fallback: Any = None
        self._openai_queue: deque = deque()
        self._openai_embeddings_queue: deque = deque()
        self.openai_fallback: Any = None
        self.openai_embeddings_fallback: Any = None
        self.openai_embedding_dim = OPENAI_EMBEDDING_DIM  # what the default embeddings answer has
        self._stopping = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle --------------------------------------------------------- #

    def start(self) -> "StubServer":
        self._stopping.clear()
        server = _Server(("127.0.0.1", 0), _Handler)
        server.stub = self
        self._server = server
        host, port = server.server_address[:2]
        self.url = f"http://{host}:{port}"
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True, name="stub-server")
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> "StubServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # -- scripting --------------------------------------------------------- #

    def queue_anthropic(self, *items: Any) -> None:
        with self._lock:
            self._anthropic_queue.extend(items)

    def queue_voyage(self, *items: Any) -> None:
        with self._lock:
            self._voyage_queue.extend(items)

    def queue_openai(self, *items: Any) -> None:
        """Chat completions (streamed or not, as the request asks): dicts from `openai_text` /
        `openai_tool_calls`, int statuses, `error_reply(...)`, DROP or callables, as for Anthropic."""
        with self._lock:
            self._openai_queue.extend(items)

    def queue_openai_embeddings(self, *items: Any) -> None:
        with self._lock:
            self._openai_embeddings_queue.extend(items)

    def _billed(self, request: dict, message: dict) -> dict:
        """The message with the usage it is served with (the cache model's input side, when one is set)."""
        with self._lock:
            usage = dict(default_usage(), **(message.get("usage") or {}))
            if self.prompt_cache is not None:
                usage.update(self.prompt_cache.usage(request))
            self.served.append((request.get("model") or "", usage))
        return dict(message, usage=usage)

    def _pop(self, queue: deque) -> Any:
        with self._lock:
            return queue.popleft() if queue else None

    def _record(self, entry: dict) -> None:
        with self._lock:
            self.requests.append(entry)

    # -- inspection -------------------------------------------------------- #

    def anthropic_requests(self) -> list[dict]:
        with self._lock:
            return [r["json"] for r in self.requests if r["path"].rstrip("/") == ANTHROPIC_MESSAGES_PATH]

    def voyage_requests(self) -> list[dict]:
        with self._lock:
            return [r["json"] for r in self.requests if r.get("api") == "voyage"]

    def openai_requests(self) -> list[dict]:
        """Chat completion requests, in order."""
        with self._lock:
            return [r["json"] for r in self.requests if r.get("api") == "openai"]

    def openai_embedding_requests(self) -> list[dict]:
        with self._lock:
            return [r["json"] for r in self.requests if r.get("api") == "openai_embeddings"]
