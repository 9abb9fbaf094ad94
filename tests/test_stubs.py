"""Exercise tests/stubs.py through the real anthropic and voyageai clients."""

from __future__ import annotations

import math
import time

import anthropic
import pytest
import voyageai
import voyageai.api_resources.api_requestor
import voyageai.error
from tenacity import Retrying, retry_if_exception_type, stop_after_attempt, wait_none

from stubs import StubServer, deterministic_embedding, text_message, tool_use_message

MODEL = "claude-test"
WEATHER_TOOL = {
    "name": "get_weather",
    "description": "Get the weather for a city.",
    "input_schema": {
        "type": "object",
        "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
        "required": ["city"],
    },
}


_open_clients: list[anthropic.Anthropic] = []


@pytest.fixture
def stub():
    with StubServer() as server:
        yield server
        # Close client connection pools before the server goes away (avoids ResourceWarnings).
        while _open_clients:
            _open_clients.pop().close()
        session = getattr(voyageai.api_resources.api_requestor._thread_context, "session", None)
        if session is not None:
            session.close()


def make_client(stub: StubServer, max_retries: int = 0) -> anthropic.Anthropic:
    client = anthropic.Anthropic(base_url=stub.url, api_key="test", max_retries=max_retries, timeout=5.0)
    _open_clients.append(client)
    return client


def make_voyage(stub: StubServer, max_retries: int = 0) -> voyageai.Client:
    # voyageai posts to f"{base_url}/embeddings", so the base_url carries the /v1 prefix.
    return voyageai.Client(api_key="test", base_url=stub.url + "/v1", max_retries=max_retries, timeout=5)


# --------------------------------------------------------------------------- #
# Anthropic
# --------------------------------------------------------------------------- #


def test_anthropic_default_reply(stub):
    msg = make_client(stub).messages.create(
        model=MODEL, max_tokens=32, messages=[{"role": "user", "content": "hi"}]
    )
    assert msg.content[0].type == "text"
    assert msg.content[0].text == "stub reply"
    assert msg.stop_reason == "end_turn"
    assert msg.usage.input_tokens == 10
    headers = stub.requests[0]["headers"]  # header names are recorded lower-cased
    assert headers.get("x-api-key") == "test" or headers.get("authorization") == "Bearer test"


def test_anthropic_tool_use_non_streaming(stub):
    stub.queue_anthropic(tool_use_message([("get_weather", {"city": "Paris", "days": 3})], text="Checking."))
    client = make_client(stub)

    msg = client.messages.create(
        model=MODEL,
        max_tokens=256,
        tools=[WEATHER_TOOL],
        tool_choice={"type": "tool", "name": "get_weather"},
        messages=[{"role": "user", "content": "Weather in Paris?"}],
    )

    assert msg.stop_reason == "tool_use"
    assert msg.content[0].type == "text" and msg.content[0].text == "Checking."
    tool_blocks = [b for b in msg.content if b.type == "tool_use"]
    assert len(tool_blocks) == 1
    assert tool_blocks[0].name == "get_weather"
    assert tool_blocks[0].input == {"city": "Paris", "days": 3}
    assert tool_blocks[0].id.startswith("toolu_")

    (req,) = stub.anthropic_requests()
    assert req["tools"] == [WEATHER_TOOL]
    assert req["tool_choice"] == {"type": "tool", "name": "get_weather"}
    assert req["model"] == MODEL
    assert "stream" not in req or req["stream"] is False


def test_anthropic_callable_item(stub):
    stub.queue_anthropic(lambda req: text_message("echo: " + req["messages"][-1]["content"]))
    msg = make_client(stub).messages.create(
        model=MODEL, max_tokens=32, messages=[{"role": "user", "content": "ping"}]
    )
    assert msg.content[0].text == "echo: ping"


def test_anthropic_streaming_text_and_tool_use(stub):
    text = "Let me look that up for you, one moment."
    tool_input = {"city": "Zürich", "days": 2, "units": ["metric"], "nested": {"a": [1, 2, 3]}}
    stub.queue_anthropic(tool_use_message([("get_weather", tool_input)], text=text))
    client = make_client(stub)

    with client.messages.stream(
        model=MODEL,
        max_tokens=256,
        tools=[WEATHER_TOOL],
        messages=[{"role": "user", "content": "Weather in Zürich?"}],
    ) as s:
        pieces = list(s.text_stream)
        final = s.get_final_message()

    assert len(pieces) > 1  # text really arrived in several deltas
    assert "".join(pieces) == text
    assert final.stop_reason == "tool_use"
    assert final.usage.output_tokens == 5
    assert [b.type for b in final.content] == ["text", "tool_use"]
    assert final.content[0].text == text
    assert final.content[1].name == "get_weather"
    assert final.content[1].input == tool_input

    (req,) = stub.anthropic_requests()
    assert req["stream"] is True


def test_anthropic_stream_wire_format(stub):
    """Raw SSE framing, checked with the client's own raw-response access."""
    stub.queue_anthropic(text_message("abcdef"))
    client = make_client(stub)
    with client.messages.with_streaming_response.create(
        model=MODEL, max_tokens=16, stream=True, messages=[{"role": "user", "content": "x"}]
    ) as resp:
        assert resp.headers["content-type"].startswith("text/event-stream")
        body = resp.read().decode()
    events = [line.split(": ", 1)[1] for line in body.splitlines() if line.startswith("event: ")]
    assert events[0] == "message_start"
    assert events[-2:] == ["message_delta", "message_stop"]
    assert events.count("content_block_start") == events.count("content_block_stop") == 1
    assert events.count("content_block_delta") >= 2


def test_anthropic_retries_529_then_success(stub):
    stub.queue_anthropic(529, 529, text_message("finally"))
    client = make_client(stub, max_retries=3)
    start = time.monotonic()
    msg = client.messages.create(model=MODEL, max_tokens=16, messages=[{"role": "user", "content": "x"}])
    assert msg.content[0].text == "finally"
    assert len(stub.anthropic_requests()) == 3
    assert time.monotonic() - start < 2.0  # retry-after headers keep this fast
    retry_counts = [r["headers"].get("x-stainless-retry-count") for r in stub.requests]
    assert retry_counts == ["0", "1", "2"]


def test_anthropic_529_exhausts_retries(stub):
    stub.queue_anthropic(529, 529, 529, 529)
    client = make_client(stub, max_retries=2)
    with pytest.raises(anthropic.InternalServerError) as excinfo:
        client.messages.create(model=MODEL, max_tokens=16, messages=[{"role": "user", "content": "x"}])
    assert isinstance(excinfo.value, anthropic.APIStatusError)
    assert excinfo.value.status_code == 529
    assert excinfo.value.body["error"]["type"] == "overloaded_error"
    assert len(stub.anthropic_requests()) == 3  # 1 try + 2 retries; one 529 left unconsumed


def test_anthropic_429_retry_then_success_and_exhaustion(stub):
    stub.queue_anthropic(429, 429, text_message("ok"))
    msg = make_client(stub, max_retries=2).messages.create(
        model=MODEL, max_tokens=16, messages=[{"role": "user", "content": "x"}]
    )
    assert msg.content[0].text == "ok"
    assert len(stub.anthropic_requests()) == 3

    stub.queue_anthropic(429, 429, 429)
    with pytest.raises(anthropic.RateLimitError) as excinfo:
        make_client(stub, max_retries=2).messages.create(
            model=MODEL, max_tokens=16, messages=[{"role": "user", "content": "x"}]
        )
    assert excinfo.value.status_code == 429
    assert excinfo.value.body["error"]["type"] == "rate_limit_error"
    assert excinfo.value.response.headers["retry-after"] == "0"
    assert len(stub.anthropic_requests()) == 6


def test_anthropic_401_not_retried(stub):
    stub.queue_anthropic(401, text_message("never served"))
    with pytest.raises(anthropic.AuthenticationError):
        make_client(stub, max_retries=3).messages.create(
            model=MODEL, max_tokens=16, messages=[{"role": "user", "content": "x"}]
        )
    assert len(stub.anthropic_requests()) == 1


def test_anthropic_streaming_retries_before_stream(stub):
    stub.queue_anthropic(529, text_message("streamed after retry"))
    with make_client(stub, max_retries=1).messages.stream(
        model=MODEL, max_tokens=16, messages=[{"role": "user", "content": "x"}]
    ) as s:
        assert "".join(s.text_stream) == "streamed after retry"
    assert len(stub.anthropic_requests()) == 2


# --------------------------------------------------------------------------- #
# Voyage
# --------------------------------------------------------------------------- #


def test_voyage_default_embeddings(stub):
    vo = make_voyage(stub)
    r1 = vo.embed(["a", "b"], model="voyage-3.5-lite", input_type="document", output_dimension=512)
    r2 = vo.embed(["a"], model="voyage-3.5-lite", input_type="query", output_dimension=512)

    assert len(r1.embeddings) == 2
    assert all(len(v) == 512 for v in r1.embeddings)
    assert r1.embeddings[0] != r1.embeddings[1]
    assert r2.embeddings[0] == r1.embeddings[0]  # same text -> same vector, across calls
    assert r1.embeddings[0] == deterministic_embedding("a", 512)  # and across runs (pure function of text)
    assert math.isclose(math.sqrt(sum(x * x for x in r1.embeddings[0])), 1.0, rel_tol=1e-9)
    assert r1.total_tokens > 0

    reqs = stub.voyage_requests()
    assert [r["input_type"] for r in reqs] == ["document", "query"]
    assert reqs[0]["input"] == ["a", "b"]
    assert reqs[0]["model"] == "voyage-3.5-lite"
    assert stub.requests[0]["path"] == "/v1/embeddings"
    assert stub.requests[0]["headers"]["authorization"] == "Bearer test"


def test_voyage_output_dimension_absent_defaults_to_512(stub):
    r = make_voyage(stub).embed(["hello"], model="voyage-3.5-lite")
    assert len(r.embeddings[0]) == 512
    r = make_voyage(stub).embed(["hello"], model="voyage-3.5-lite", output_dimension=256)
    assert len(r.embeddings[0]) == 256


def test_voyage_queued_response(stub):
    stub.queue_voyage(
        {
            "object": "list",
            "data": [{"object": "embedding", "embedding": [1.0, 0.0], "index": 0}],
            "model": "voyage-3.5-lite",
            "usage": {"total_tokens": 7},
        }
    )
    r = make_voyage(stub).embed(["x"], model="voyage-3.5-lite")
    assert r.embeddings == [[1.0, 0.0]]
    assert r.total_tokens == 7


def test_voyage_rate_limit_surfaces_and_caller_retries(stub):
    # voyageai's built-in retry waits >= 1s (exponential jitter), so the app runs
    # it with max_retries=0 and retries itself (tenacity) -- as done here.
    vo = make_voyage(stub, max_retries=0)

    stub.queue_voyage(429)
    with pytest.raises(voyageai.error.RateLimitError):
        vo.embed(["a"], model="voyage-3.5-lite", input_type="document")
    assert len(stub.voyage_requests()) == 1

    stub.queue_voyage(429, 429)
    for attempt in Retrying(
        stop=stop_after_attempt(3),
        wait=wait_none(),
        retry=retry_if_exception_type(voyageai.error.RateLimitError),
        reraise=True,
    ):
        with attempt:
            result = vo.embed(["a"], model="voyage-3.5-lite", input_type="document")
    assert attempt.retry_state.attempt_number == 3
    assert result.embeddings[0] == deterministic_embedding("a", 512)
    assert len(stub.voyage_requests()) == 4


def test_voyage_server_error_types(stub):
    vo = make_voyage(stub)
    stub.queue_voyage(500, 503, lambda req: 401)
    with pytest.raises(voyageai.error.ServerError):
        vo.embed(["a"], model="voyage-3.5-lite")
    with pytest.raises(voyageai.error.ServiceUnavailableError):
        vo.embed(["a"], model="voyage-3.5-lite")
    with pytest.raises(voyageai.error.AuthenticationError):
        vo.embed(["a"], model="voyage-3.5-lite")


def test_requests_log_is_shared_and_ordered(stub):
    make_client(stub).messages.create(model=MODEL, max_tokens=8, messages=[{"role": "user", "content": "x"}])
    make_voyage(stub).embed(["a"], model="voyage-3.5-lite")
    assert [r["path"] for r in stub.requests] == ["/v1/messages", "/v1/embeddings"]
    assert len(stub.anthropic_requests()) == 1 and len(stub.voyage_requests()) == 1
