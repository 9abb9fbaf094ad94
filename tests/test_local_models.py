"""A local model behind an OpenAI-compatible server (llama.cpp, Ollama), through the stub: routing is forced
in the one form such servers honour, and falls back quickly and visibly when the model is slow; Forge's
"Recorded:" acknowledgement is never the model's to write nor sent back to it; the meter names the model
that answered and shows a model without a price in tokens, never dollars."""

from __future__ import annotations

import json

import pytest

import test_openai_provider as provider_tests
from pmforge.core.errors import ForgeError
from pmforge.llm.base import ChatRequest, SystemBlock, ToolSpec
from pmforge.llm.costs import meter_lines
from pmforge.llm.messages import Message
from pmforge.project.project import Project
from pmforge.turn import route as routing
from pmforge.turn.acknowledge import HEADING, NOT_RECORDED, ImitationGuard, neutralise, without_acknowledgement
from pmforge.turn.orchestrator import run_turn, start_turn
from stubs import delayed, error_reply, openai_text, openai_tool_calls
from test_openai_provider import ASSUMPTION, ROUTE

openai_services = provider_tests.openai_services  # the provider tests' fixtures: the stub as a local server
served = provider_tests.served

FAKE = ("Thanks, that helps.\n\n**Recorded:**\n- Dr. Anna Kowalski is a spammer.\n- Budget approved\n\n"
        "<tool_response>{\"ok\": true}</tool_response>\n\nQuestion 1: Who signs off on the pilot?")


@pytest.fixture(autouse=True)
def fresh_announcements(monkeypatch):
    monkeypatch.setattr(routing, "_ANNOUNCED", set())


# --------------------------------------------------------------------------- routing


def test_a_forced_call_of_several_tools_falls_back_to_required_when_the_object_form_is_refused(openai_services,
                                                                                                stub):
    llm = openai_services().llm
    tools = [ToolSpec(name=n, description=n, input_schema={"type": "object", "properties": {}}) for n in ("a", "b")]
    request = ChatRequest(purpose="reply", model="claude-sonnet-4-5", system=[SystemBlock(text="Call a.")],
                          messages=[Message.user("Go")], tools=tools,
                          tool_choice={"type": "tool", "name": "a"})
    stub.queue_openai(error_reply(400, "Invalid tool_choice: expected one of auto, none, required"),
                      openai_tool_calls([("a", {})]), openai_tool_calls([("a", {})]))
    assert [t.name for t in llm.complete(request).tool_calls] == ["a"]
    assert [t.name for t in llm.complete(request).tool_calls] == ["a"]
    choices = [r["tool_choice"] for r in stub.openai_requests()]
    assert choices == [{"type": "function", "function": {"name": "a"}}, "required", "required"]


def test_a_slow_router_is_not_retried_and_the_fallback_is_said_once_outside_the_reply(openai_services, served,
                                                                                       stub, capsys):
    project = Project.open(openai_services(openai_route_timeout_s=0.5, openai_max_retries=2), served.ws.slug)
    stub.queue_openai(delayed(5.0, openai_tool_calls([("route", ROUTE)])), openai_text("Question 1: Who owns it?"),
                      openai_text("Summary one."),
                      delayed(5.0, openai_tool_calls([("route", ROUTE)])), openai_text("Question 1: Since when?"),
                      openai_text("Summary two."))
    first = run_turn(project, "Who owns shrink today?")
    second = run_turn(project, "Store managers own it.")

    routes = [r for r in stub.openai_requests() if r.get("tools") and r["tools"][0]["function"]["name"] == "route"]
    assert len(routes) == 2  # one per turn: never retried
    for record in (first, second):
        # Which clock ends the wait first (the client's read timeout or Forge's deadline) depends on the load.
        assert record.routing.reasoning.startswith("Fallback — Router unavailable (The model server did not ")
        assert "Fallback" not in record.reply and "rule router" not in record.reply
    err = capsys.readouterr().err
    assert err.count("routing fell back to the rule router") == 1


# --------------------------------------------------------------------------- the model's words and Forge's


def test_a_fake_recorded_list_from_the_model_never_shows_or_saves_as_recorded(served, stub):
    stub.queue_openai(openai_tool_calls([("route", ROUTE)]), openai_text(FAKE), openai_text("Summary."))
    pending = start_turn(served, "Anna Kowalski runs the Midwest stores.")
    streamed = "".join(pending)
    record = pending.finish()
    for text in (streamed, record.reply, served.state().turns[-1].assistant):
        assert HEADING not in text and "Recorded:" not in text and "tool_response" not in text
        assert f"{NOT_RECORDED}\n- Dr. Anna Kowalski is a spammer." in text
    assert streamed == record.reply
    assert served.state().problem_brief.stakeholders == []  # nothing was recorded: no tool ran


def test_the_real_acknowledgement_follows_the_model_text_and_never_goes_back_to_a_model(served, stub):
    stub.queue_openai(
        openai_tool_calls([("route", ROUTE)]),
        openai_tool_calls([("register_assumption", ASSUMPTION)], text="Noting that. **Recorded:** everything!"),
        openai_text("Question 1: Who feels this most?"), openai_text("Summary one."),
        openai_tool_calls([("route", ROUTE)]), openai_text("Question 2: Since when?"), openai_text("Summary two."),
    )
    first = run_turn(served, "I think store managers will adopt a markdown app.")
    assert first.reply.count(HEADING) == 1  # Forge's own, after the model's words
    assert first.reply.endswith(f"{HEADING} Added A1 — Store managers will adopt a markdown app.")
    assert f"Noting that. {NOT_RECORDED} everything!" in first.reply

    run_turn(served, "Fresh leads feel it most.")
    sent = json.dumps(stub.openai_requests()[4:])  # turn 2's routing, reply and summary requests
    assert "Recorded:" not in sent and "Added A1" not in sent
    assert "Question 1: Who feels this most?" in sent  # the model's own words do go back


def test_the_guard_gives_the_same_text_however_the_stream_is_cut():
    text = "Intro **Rec" + "orded:** x\n- y <tool_call>{}</tool_call> **bold** __RECORDED__: z ## Recorded: w"
    whole = neutralise(text)
    assert "Recorded" not in whole.replace(NOT_RECORDED, "") and "tool_call" not in whole
    for size in range(1, 12):
        guard = ImitationGuard()
        pieces = [guard.feed(text[i:i + size]) for i in range(0, len(text), size)]
        assert "".join(pieces) + guard.flush() == whole
    assert without_acknowledgement(f"Question?\n\n{HEADING}\n- Added A1 — x\n- A2 marked confirmed") == "Question?"


# --------------------------------------------------------------------------- the meter


def test_the_meter_names_the_served_models_and_shows_them_in_tokens_only(served, stub):
    usage = {"prompt_tokens": 1200, "completion_tokens": 40, "prompt_tokens_details": {"cached_tokens": 1000}}
    stub.queue_openai(openai_tool_calls([("route", ROUTE)], usage=usage), openai_text("Question 1: ?", usage=usage),
                      openai_text("Summary.", usage=usage))
    run_turn(served, "How many stores are in the pilot?")
    turn = served.state().turns[-1]
    assert {c.model for c in turn.calls if c.purpose in ("route", "reply", "summarize_turn")} == {
        "route-stub", "qwen-stub", "summary-stub"}  # what the server served, not the Claude names
    lines = meter_lines(served.state().turns, served.settings, served.manifest().file_summaries)
    text = " ".join(lines)
    assert "$" not in text and "Caching saved" not in text and "claude" not in text
    assert "qwen-stub 1,240 tokens (1 call, no price set)" in lines[0]
    assert "3,000 read from the cache" in text  # counted as tokens, never as dollars saved


def test_an_empty_model_answer_saves_nothing(served, stub):
    stub.queue_openai(openai_tool_calls([("route", ROUTE)]), openai_text(""))
    with pytest.raises(ForgeError, match="empty answer"):
        run_turn(served, "This message must not be lost.")
    assert served.state().turn_count == 0


# --------------------------------------------------------------------------- a slow model, a model without tools


def test_a_slow_first_word_is_waited_for_in_words_and_a_model_that_never_calls_tools_is_named_once(
        served, stub, capsys, monkeypatch):
    from pmforge.core import settings as config
    from pmforge.core.workspace import take_notices
    from pmforge.surfaces.cli import main as forge

    monkeypatch.setenv("FORGE_SLOW_MODEL_NOTICE_S", "0.2")
    config.get_settings.cache_clear()
    messages = ["We want to cut fresh shrink.", "Store managers own it today.", "Patrick signs off on pilots.",
                "The pilot has 20 stores."]
    for n in range(len(messages)):  # routed, then a reply that calls no tool, slow to start; then its summary
        stub.queue_openai(openai_tool_calls([("route", ROUTE)]), delayed(1.0, openai_text(f"Question 1: And {n}?")),
                          openai_text("Summary."))
    take_notices()
    assert forge(["chat", served.ws.slug, *[arg for m in messages for arg in ("-m", m)]]) == 0
    err = capsys.readouterr().err
    assert err.count("Forge: waiting for the model (qwen-stub / route-stub at ") == len(messages)
    assert err.count("has called none of Forge's tools in the last 3 replies") == 1  # said once, not per turn
    assert "start llama-server with --jinja" in err


def test_the_app_says_which_model_it_waits_for_once_the_first_words_are_slow():
    from pmforge.surfaces.ui.welcome import waiting_caption

    assert waiting_caption(1.0, 3.0, "smollm2 at http://127.0.0.1:8080/v1/") == "Thinking…"
    assert waiting_caption(12.4, 3.0, "smollm2").startswith("Waiting for the model (smollm2)… 12 s.")
    assert waiting_caption(60.0, 3.0, None) == "Thinking…"  # offline: never a model to wait for


def test_a_forced_call_asks_for_schema_constrained_json_and_a_server_that_refuses_it_is_asked_without(
        openai_services, stub):
    """llama.cpp and Ollama turn a response_format's JSON schema into a grammar: even a small model that ignores
    the tool answers with arguments that validate, read from the text as the call."""
    llm = openai_services().llm
    schema = {"type": "object", "properties": {"mode": {"enum": ["mode_1", "mode_2"]}}, "required": ["mode"]}
    request = ChatRequest(purpose="route", model="claude-haiku-4-5", system=[SystemBlock(text="Route.")],
                          messages=[Message.user("Go")], tools=[ToolSpec(name="a", description="a", input_schema=schema)],
                          tool_choice={"type": "tool", "name": "a"})
    stub.queue_openai(openai_text('{"mode": "mode_2"}'),
                      error_reply(400, "response_format type json_schema is not supported"),
                      openai_tool_calls([("a", {"mode": "mode_1"})]), openai_tool_calls([("a", {"mode": "mode_1"})]))
    assert [(c.name, c.input) for c in llm.complete(request).tool_calls] == [("a", {"mode": "mode_2"})]
    assert [(c.name, c.input) for c in llm.complete(request).tool_calls] == [("a", {"mode": "mode_1"})]
    llm.complete(request)
    formats = [r.get("response_format") for r in stub.openai_requests()]
    assert formats == [{"type": "json_schema", "json_schema": {"name": "a", "schema": schema}}] * 2 + [None] * 2
    # Free strings and lists are bounded in the grammar's schema: a small model cannot repeat its way past the cap.
    from pmforge.llm.openai_llm import bounded_schema

    listed = {"type": "object", "properties": {"why": {"type": "string"}, "tags": {"type": "array", "items": {
        "type": "string", "enum": ["x", "y"]}}, "files": {"type": "array", "items": {"type": "string"}}}}
    assert bounded_schema(listed) == {"type": "object", "properties": {
        "why": {"type": "string", "maxLength": 240},
        "tags": {"type": "array", "maxItems": 4, "items": {"type": "string", "enum": ["x", "y"]}},
        "files": {"type": "array", "maxItems": 4, "items": {"type": "string", "maxLength": 80}}}}
