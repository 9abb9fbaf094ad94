"""Forge against an OpenAI-compatible server that misbehaves (tests/misbehaving.py): every failure is one
sentence naming its cause, the PM's message is not lost, nothing is saved, and no call outlives its deadline —
a silent server and a stream of one word every half second end at it. Where a retry cannot help, the
sentence never says "try again" and the request is not retried."""

from __future__ import annotations

import json
import socket

import pytest

from misbehaving import (
    CONTEXT_TOO_SMALL,
    NO_EMBEDDINGS,
    NO_JINJA,
    NO_POOLING,
    UNKNOWN_MODEL,
    MisbehavingServer,
    answer,
    chunk,
    error,
    huge_stream,
    raw,
    route_call,
    silent,
    stream_lines,
    text_stream,
    trickle,
)
from pmforge.core.errors import ForgeError
from pmforge.llm.base import ChatRequest, SystemBlock
from pmforge.llm.messages import Message
from pmforge.project.project import Project
from pmforge.project.services import Services
from pmforge.turn.orchestrator import run_turn
from test_faults import one_sentence, snapshot

ROUTE = {"action": "ask_questions", "mode": "mode_1", "next_probe": "solution_problem_separation", "patterns": [],
         "requires_retrieval": False, "retrieval_query": "", "reasoning": "The model decided."}
MESSAGE = "Our fresh departments lose 9% of sales to shrink."
DEADLINE_S = 2.0


@pytest.fixture
def bad():
    with MisbehavingServer() as server:
        yield server


@pytest.fixture
def make_project(bad, isolated_env, monkeypatch):
    from pmforge.core import settings as config

    def make(base_url: str | None = None, **settings) -> Project:
        monkeypatch.setenv("FORGE_LLM", "openai")
        monkeypatch.setenv("OPENAI_BASE_URL", (base_url or bad.url) + "/v1")
        monkeypatch.setenv("FORGE_OPENAI_MODEL", "qwen-local")
        monkeypatch.setenv("FORGE_OPENAI_MAX_RETRIES", "2")
        monkeypatch.setenv("FORGE_OPENAI_ROUTE_TIMEOUT_S", "1")
        monkeypatch.setenv("FORGE_OPENAI_DEADLINE_S", str(DEADLINE_S))
        for name, value in settings.items():
            monkeypatch.setenv(f"FORGE_{name.upper()}", str(value))
        config.get_settings.cache_clear()
        return Project.create(Services.from_settings(config.get_settings()), "Shrink")

    return make


def fails_cleanly(project: Project, match: str) -> str:
    before = snapshot(project)
    with pytest.raises(ForgeError, match=match) as caught:
        run_turn(project, MESSAGE)
    text = str(caught.value)
    assert one_sentence(text), text
    assert "Traceback" not in text and "{" not in text
    assert snapshot(project) == before and project.state().turn_count == 0  # nothing saved
    return text


def phase_b(bad) -> list[dict]:
    return [r for r in bad.chat_requests() if r.get("stream")]


# --------------------------------------------------------------------------- Phase B fails in one sentence

NOT_JSON_LINE = stream_lines("data: " + json.dumps(chunk({"role": "assistant", "content": "Hel"})),
                             "data: {not json", "data: [DONE]")
CASES = {
    "a stream line that is not JSON": (NOT_JSON_LINE, "could not read"),
    "an empty answer": (stream_lines("data: {}", "data: [DONE]"), "empty answer"),
    "a stream with no choices at all": (stream_lines("data: [DONE]"), "empty answer"),
    "an error in the middle of the stream": (
        stream_lines("data: " + json.dumps(chunk({"content": "Hel"})), 'data: {"error": {"message": "slot crashed"}}'),
        r"could not answer \(slot crashed\)"),
    "a server that never answers": (silent(), f"did not finish its answer within {DEADLINE_S:g} s"),
    "a stream of one word every half second": (trickle(every_s=0.5), f"did not finish its answer within {DEADLINE_S:g} s"),
    "a context window too small": (error(CONTEXT_TOO_SMALL), r"context window \(512 tokens\) is smaller than "
                                                             r"Forge's prompt \(2,031 tokens\).*-c 16384"),
    "a server started without --jinja": (error(NO_JINJA), "restart llama.cpp's server with --jinja"),
    "a model the server does not serve": (error(UNKNOWN_MODEL), "does not serve the model 'qwen-local'"),
}
NOT_RETRIED = {"a context window too small", "a server started without --jinja", "a model the server does not serve"}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_a_misbehaving_reply_fails_the_turn_in_one_sentence_and_saves_nothing(make_project, bad, case):
    project = make_project()
    script, match = CASES[case]
    bad.queue(answer(route_call(ROUTE)))
    bad.fallback = script  # every Phase B request, retries included
    text = fails_cleanly(project, match)
    assert "your message is kept" in text
    if case in NOT_RETRIED:
        assert "try again" not in text  # sending it again changes nothing until the server is fixed
        assert len(phase_b(bad)) == 1


def test_an_unreachable_server_is_named_with_what_to_do(make_project):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{s.getsockname()[1]}"
    project = make_project(closed, openai_max_retries=0)
    text = fails_cleanly(project, f"could not reach the model server at {closed}/v1")
    assert "is it running?" in text and "try again" not in text


# --------------------------------------------------------------------------- routing falls back, the turn goes on


@pytest.mark.parametrize("script", [
    raw(b'{"choices": [{"index": 0, "message": {"role": "assistant", "content": "{\\"action'),  # cut off
    raw(b"{}"), raw(b"[1, 2]"), silent(), error(NO_JINJA),
], ids=["cut-off JSON body", "empty answer", "JSON of the wrong shape", "silent", "no --jinja"])
def test_a_misbehaving_router_falls_back_to_the_rules_and_the_turn_completes(make_project, bad, script):
    project = make_project()
    bad.queue(script, text_stream("Question 1: Who owns shrink today?"), text_stream("Summary."))
    record = run_turn(project, MESSAGE)
    assert record.routing.reasoning.startswith("Fallback — Router unavailable (")
    assert "Traceback" not in record.routing.reasoning
    assert record.reply == "Question 1: Who owns shrink today?"
    assert project.state().turn_count == 1


# --------------------------------------------------------------------------- bounded in size


def test_a_reply_of_megabytes_is_cut_at_the_cap_and_saved_short(make_project, bad):
    project = make_project()
    bad.queue(answer(route_call(ROUTE)), huge_stream(5_000_000), text_stream("Summary."))
    record = run_turn(project, MESSAGE)
    assert record.reply.endswith("(Reply cut short at the length limit.)")
    cap = max(16_000, project.settings.phase_b_max_output_tokens * 16)
    assert len(record.reply) <= cap + 100
    assert len(project.state().turns[-1].assistant) <= cap + 100


def test_a_whole_answer_past_the_size_cap_is_one_sentence(make_project, bad):
    llm = make_project().services.llm
    bad.queue(raw(json.dumps({"choices": [{"message": {"content": "x" * 2_000_000}}]}).encode()))
    request = ChatRequest(purpose="summarize_turn", model="claude-haiku-4-5", system=[SystemBlock(text="Sum up.")],
                          messages=[Message.user("Hello")], max_tokens=150)
    with pytest.raises(ForgeError, match="longer than Forge reads") as caught:
        llm.complete(request)
    assert one_sentence(str(caught.value))


# --------------------------------------------------------------------------- embeddings


@pytest.fixture
def embedder(bad, isolated_env, monkeypatch):
    from pmforge.core import settings as config
    from pmforge.embed.openai_embed import OpenAIEmbedder

    monkeypatch.setenv("OPENAI_BASE_URL", bad.url + "/v1")
    monkeypatch.setenv("FORGE_OPENAI_EMBED_MODEL", "local-embed")
    monkeypatch.setenv("FORGE_OPENAI_MAX_RETRIES", "2")
    config.get_settings.cache_clear()
    return OpenAIEmbedder.from_settings(config.get_settings())


@pytest.mark.parametrize("captured", [NO_EMBEDDINGS, NO_POOLING], ids=["no --embeddings", "pooling none"])
def test_a_server_without_openai_embeddings_says_how_to_start_it(embedder, bad, captured):
    bad.fallback = error(captured)
    with pytest.raises(ForgeError, match="--embeddings --pooling mean") as caught:
        embedder.embed_documents(["Managers print labels in the back office."])
    assert one_sentence(str(caught.value)) and "try again" not in str(caught.value)
    assert len(bad.requests) == 1  # not retried: the server's answer will not change


@pytest.mark.parametrize("script", [raw(b'{"data": [{"embedding": [0.1, 0.'), raw(b"{}"),
                                    text_stream("Not an embedding.")], ids=["cut off", "empty", "a chat answer"])
def test_an_unreadable_embeddings_answer_is_one_sentence(embedder, bad, script):
    bad.fallback = script
    with pytest.raises(ForgeError, match="embedding server") as caught:
        embedder.embed_documents(["Managers print labels in the back office."])
    assert one_sentence(str(caught.value))
