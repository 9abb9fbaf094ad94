"""A scripted OpenAI-compatible server that misbehaves on purpose, at the level of bytes on the wire: a body cut
off mid-JSON, a stream line that is not JSON, an empty answer, silence, a stream of one word every so often
that never ends, a reply of megabytes, and the error bodies llama.cpp's server really sends (captured from
`llama-server`: a context window too small, tools without --jinja, no embeddings).

Each request to /v1/chat/completions or /v1/embeddings takes the next script item, a callable
`(handler, request_json) -> None` that writes the whole answer; with the queue empty, `fallback` answers.
Every wait is cut short when the server stops, so no test waits on a misbehaving answer at teardown.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

Script = Callable[["_Handler", dict], None]

# What llama.cpp's server answers (status, body), as captured from the real one.
CONTEXT_TOO_SMALL = (400, {"error": {"code": 400, "message": "request (2031 tokens) exceeds the available context "
                                     "size (512 tokens), try increasing it", "type": "exceed_context_size_error",
                                     "n_prompt_tokens": 2031, "n_ctx": 512}})
NO_JINJA = (500, {"error": {"code": 500, "message": "tools param requires --jinja flag", "type": "server_error"}})
NO_EMBEDDINGS = (501, {"error": {"code": 501, "message": "This server does not support embeddings. Start it with "
                                 "`--embeddings`", "type": "not_supported_error"}})
NO_POOLING = (400, {"error": {"code": 400, "message": "Pooling type 'none' is not OAI compatible. Please use a "
                              "different pooling type", "type": "invalid_request_error"}})
UNKNOWN_MODEL = (404, {"error": {"message": 'model "qwen-local" not found, try pulling it first',
                                 "type": "not_found_error"}})


def chunk(delta: dict, finish: str | None = None) -> dict:
    return {"id": "chatcmpl-x", "object": "chat.completion.chunk", "created": 1, "model": "local",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def completion(message: dict, finish: str = "stop") -> dict:
    return {"id": "chatcmpl-x", "object": "chat.completion", "created": 1, "model": "local",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}


def route_call(decision: dict) -> dict:
    return completion({"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_r", "type": "function", "function": {"name": "route", "arguments": json.dumps(decision)}}]},
        "tool_calls")


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: "_Server"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except ValueError:
            body = {}
        bad = self.server.owner
        bad.record(self.path, body)
        try:
            bad.next_item()(self, body)
        except (ConnectionError, OSError):  # the client gave up first (a deadline): expected
            pass
        self.close_connection = True

    # -- writing ----------------------------------------------------------- #

    def head(self, status: int, content_type: str, length: int | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        if length is not None:
            self.send_header("Content-Length", str(length))
        self.send_header("Connection", "close")
        self.end_headers()

    def send_bytes(self, status: int, data: bytes, content_type: str = "application/json") -> None:
        self.head(status, content_type, len(data))
        self.wfile.write(data)
        self.wfile.flush()

    def sse(self, lines: list[bytes | str]) -> None:
        self.head(200, "text/event-stream")
        for line in lines:
            self.wfile.write((line.encode() if isinstance(line, str) else line) + b"\n\n")
            self.wfile.flush()

    def wait(self, seconds: float) -> bool:
        """Sleep, or False at once when the server is stopping."""
        return not self.server.owner.stopping.wait(seconds)


# --------------------------------------------------------------------------- script items


def answer(payload: dict, status: int = 200) -> Script:
    return lambda h, body: h.send_bytes(status, json.dumps(payload).encode())


def error(captured: tuple[int, dict]) -> Script:
    return answer(captured[1], captured[0])


def raw(data: bytes, status: int = 200) -> Script:
    """Exactly these bytes as the body (with a Content-Length that matches them)."""
    return lambda h, body: h.send_bytes(status, data)


def stream_lines(*lines: bytes | str) -> Script:
    return lambda h, body: h.sse(list(lines))


def text_stream(text: str) -> Script:
    """A well-behaved streamed reply (or, asked without streaming, the same as one body)."""
    def script(h: _Handler, body: dict) -> None:
        if not body.get("stream"):
            return h.send_bytes(200, json.dumps(completion({"role": "assistant", "content": text})).encode())
        h.sse(["data: " + json.dumps(chunk({"role": "assistant", "content": text})),
               "data: " + json.dumps(chunk({}, "stop")), "data: [DONE]"])
    return lambda h, body: script(h, body)


def silent() -> Script:
    """Accepts the request and never answers (until the server stops)."""
    return lambda h, body: h.server.owner.stopping.wait(600)


def trickle(word: str = "word ", every_s: float = 0.5) -> Script:
    """A stream of one word every `every_s` seconds that never ends: each read succeeds, so no read timeout fires."""
    def script(h: _Handler, body: dict) -> None:
        h.head(200, "text/event-stream")
        h.wfile.write(("data: " + json.dumps(chunk({"role": "assistant", "content": ""})) + "\n\n").encode())
        while h.wait(every_s):
            h.wfile.write(("data: " + json.dumps(chunk({"content": word})) + "\n\n").encode())
            h.wfile.flush()
    return script


def huge_stream(total_chars: int = 5_000_000, piece: int = 50_000) -> Script:
    """A streamed reply of `total_chars` characters, whatever max_tokens asked for."""
    def script(h: _Handler, body: dict) -> None:
        h.head(200, "text/event-stream")
        sent = 0
        while sent < total_chars and not h.server.owner.stopping.is_set():
            h.wfile.write(("data: " + json.dumps(chunk({"content": "blah " * (piece // 5)})) + "\n\n").encode())
            sent += piece
        h.wfile.write(("data: " + json.dumps(chunk({}, "stop")) + "\n\ndata: [DONE]\n\n").encode())
        h.wfile.flush()
    return script


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    owner: "MisbehavingServer"

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that hung up mid-answer is what these tests make happen


class MisbehavingServer:
    def __init__(self) -> None:
        self.url = ""
        self.requests: list[tuple[str, dict]] = []
        self.stopping = threading.Event()
        self.fallback: Script = text_stream("Question 1: Who owns this?")
        self._queue: deque[Script] = deque()
        self._lock = threading.Lock()
        self._server: _Server | None = None

    def __enter__(self) -> "MisbehavingServer":
        server = _Server(("127.0.0.1", 0), _Handler)
        server.owner = self
        self._server = server
        self.url = f"http://127.0.0.1:{server.server_address[1]}"
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def queue(self, *items: Script) -> None:
        with self._lock:
            self._queue.extend(items)

    def next_item(self) -> Script:
        with self._lock:
            return self._queue.popleft() if self._queue else self.fallback

    def record(self, path: str, body: dict) -> None:
        with self._lock:
            self.requests.append((path, body))

    def chat_requests(self) -> list[dict]:
        with self._lock:
            return [b for p, b in self.requests if p.endswith("/chat/completions")]
