"""The online path — real `anthropic` and `voyageai` clients — against a local HTTP stub: whole turns and
uploads first, then Forge's own provider classes one call at a time (its retry policy for Voyage, what a
failure says, how a streamed reply reaches the tool loop)."""

from __future__ import annotations

import functools

import pytest
import tenacity

from docs import PLAN
from pmforge.core.errors import ForgeError
from pmforge.core.models import RoutingDecision, Usage
from pmforge.embed import voyage
from pmforge.ingest.pipeline import ingest_file
from pmforge.llm.anthropic_llm import wire_messages
from pmforge.llm.base import ChatRequest, SystemBlock, ToolSpec
from pmforge.llm.messages import Message
from pmforge.project.project import Project
from pmforge.project.services import Services
from pmforge.tools.assumptions import RegisterAssumption
from pmforge.turn.orchestrator import run_turn
from stubs import deterministic_embedding, text_message, tool_use_message
from test_faults import one_sentence

ROUTE = {
    "action": "ask_questions", "mode": "mode_1", "next_probe": "solution_problem_separation", "patterns": [],
    "requires_retrieval": True, "retrieval_query": "pilot stores", "reasoning": "Substantive opening.",
}
REGISTER = {"claim": "Store managers will adopt a markdown app", "type": "value", "impact": "high",
            "confidence": "guessed", "basis": "PM's hunch"}


def test_voyage_embeds_documents_and_queries(online: Project, stub):
    entry = online.manifest().find("plan.md")
    assert entry.summary.startswith("A pilot plan")  # the file summary came from the (stub) Haiku call
    stub.queue_anthropic(tool_use_message([("route", ROUTE)]), text_message("Question 1: Who owns shrink?"))
    run_turn(online, "How many stores are in the pilot?")
    kinds = [r["input_type"] for r in stub.voyage_requests()]
    assert kinds == ["query", "document"]  # the retrieval query, then the turn summary
    settings = online.settings
    assert all(r["model"] == settings.voyage_model and r["output_dimension"] == settings.voyage_dimensions
               for r in stub.voyage_requests())


def test_a_summary_cut_at_the_length_limit_keeps_only_its_whole_sentences(online: Project, stub):
    stub.queue_anthropic(
        tool_use_message([("route", ROUTE)]), text_message("Question 1: Who owns shrink?"),
        text_message("The PM wants fresh shrink cut in 20 stores. Dr. Shah, the ops lead, said the pil",
                     stop_reason="max_tokens"),  # the turn summary, cut mid-word
    )
    run_turn(online, "How many stores are in the pilot?")
    assert online.state().turns[-1].summary == "The PM wants fresh shrink cut in 20 stores."


def test_a_file_summary_cut_before_a_whole_sentence_is_the_extractive_one(online_services, stub):
    project = Project.create(online_services(), "Cut summary")
    stub.queue_anthropic(text_message("A pilot plan covering twenty Midwest stores and", stop_reason="max_tokens"))
    assert ingest_file(project, "plan.md", PLAN).ok
    summary = project.manifest().find("plan.md").summary
    assert summary and "covering twenty Midwest stores and" not in summary  # nothing the file does not say
    assert summary.split()[0] in PLAN.decode()


def test_full_turn_routing_tools_and_caching(online: Project, stub):
    register = REGISTER
    stub.queue_anthropic(
        tool_use_message([("route", ROUTE)]),
        tool_use_message(
            [("register_assumption", register),
             ("update_problem_statement", {"problem_statement": "Fresh departments lose too much to shrink."})],
            text="What I'm hearing: shrink in fresh. [plan.md › Pilot plan > Scope]",
        ),
        text_message("Question 1: Who feels this most?"),
        text_message("PM wants to cut fresh shrink; Forge asked who feels it most."),  # the turn summary
    )
    record = run_turn(online, "We want to cut fresh shrink. I think store managers will adopt a markdown app.")

    route_req, reply_req, followup_req, summary_req = stub.anthropic_requests()
    # Phase A: a forced tool call whose schema is the RoutingDecision model.
    assert route_req["tool_choice"] == {"type": "tool", "name": "route"}
    schema = RoutingDecision.model_json_schema()
    assert set(route_req["tools"][0]["input_schema"]["properties"]) == set(schema["properties"])
    assert route_req["model"] == online.settings.phase_a_model
    # Phase B: static prefix first and cached, schemas generated from the tool models, streamed.
    assert reply_req["stream"] is True and reply_req["model"] == online.settings.phase_b_model
    assert reply_req["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert "cache_control" not in reply_req["system"][1]
    assert "Uploaded document sections" in reply_req["system"][1]["text"]
    tools = {t["name"]: t for t in reply_req["tools"]}
    assert set(tools["register_assumption"]["input_schema"]["properties"]) == set(
        RegisterAssumption.model_json_schema()["properties"])
    # Tool results went back to the model, then its final text closed the turn.
    results = followup_req["messages"][-1]["content"]
    assert [r["is_error"] for r in results] == [False, False]
    assert summary_req["model"] == online.settings.summary_model

    assert record.reply.startswith("What I'm hearing")
    assert "Who feels this most?\n\n**Recorded:**\n- Added A1 — Store managers will adopt a markdown app" in record.reply
    assert [c.name for c in record.tool_calls] == ["register_assumption", "update_problem_statement"]
    state = online.state()
    assert state.assumptions[0].claim == register["claim"] and state.assumptions[0].impact == "high"
    assert state.problem_brief.problem_statement.startswith("Fresh departments")
    assert state.turns[0].summary.startswith("PM wants to cut")
    assert record.retrieved.documents  # retrieval happened with the Voyage query vector


def test_invalid_tool_arguments_are_returned_to_the_model(online: Project, stub):
    stub.queue_anthropic(
        tool_use_message([("route", ROUTE)]),
        tool_use_message([("register_assumption", {"claim": "x", "type": "vibes"})], text="Let me note that."),
        text_message("Question 1: What makes you confident?"),
    )
    record = run_turn(online, "I guess people will love it.")
    followup = stub.anthropic_requests()[2]
    result = followup["messages"][-1]["content"][0]
    assert result["is_error"] is True and "Invalid arguments for register_assumption" in result["content"]
    assert record.tool_calls[0].ok is False
    assert online.state().assumptions == []


def test_router_repair_then_fallback(online: Project, stub):
    bad = dict(ROUTE, action="dance")
    stub.queue_anthropic(tool_use_message([("route", bad)]), tool_use_message([("route", ROUTE)]),
                         text_message("Question 1: ?"))
    record = run_turn(online, "Tell me about the pilot scope.")
    assert record.routing.action == "ask_questions"
    repair = stub.anthropic_requests()[1]
    assert repair["messages"][-1]["content"][0]["is_error"] is True

    stub.requests.clear()
    stub.queue_anthropic(tool_use_message([("route", bad)]), tool_use_message([("route", bad)]),
                         text_message("Question 1: ?"))
    record = run_turn(online, "And the metrics?")
    assert record.routing.action in ("ask_questions", "micro_synthesize")  # the rule router decided
    assert record.routing.reasoning.startswith("Fallback — Router answer invalid twice")


def test_overload_retries_then_succeeds(online: Project, stub):
    stub.queue_anthropic(tool_use_message([("route", ROUTE)]), 529, text_message("Question 1: Who owns it?"))
    record = run_turn(online, "Who owns shrink today?")
    assert record.reply == "Question 1: Who owns it?"


def test_overload_forever_fails_cleanly_with_state_unchanged(online: Project, stub):
    before = online.ws.state_path.read_text()
    stub.queue_anthropic(tool_use_message([("route", ROUTE)]), 529, 529, 529, 529)
    with pytest.raises(ForgeError, match="overloaded"):
        run_turn(online, "This message must not be lost.")
    assert online.ws.state_path.read_text() == before


def test_voyage_rate_limits_are_retried_during_upload(online: Project, stub):
    stub.queue_voyage(429, 429)  # then the stub's default embeddings
    stub.queue_anthropic(text_message("Store interview notes."))
    result = ingest_file(online, "notes.md", b"# Notes\n\nManagers print labels in the back office.\n")
    assert result.ok, result.message
    assert len(stub.voyage_requests()) == 3
    assert online.store.documents.file_ids() == {f.file_id for f in online.manifest().file_summaries if f.indexed}


def test_voyage_outage_fails_cleanly_and_keeps_the_file(online: Project, stub, monkeypatch):
    from pmforge.core import settings as config

    monkeypatch.setenv("FORGE_VOYAGE_MAX_ATTEMPTS", "2")
    config.get_settings.cache_clear()
    project = Project.open(Services.from_settings(config.get_settings()), online.ws.slug)
    before = project.store.ids("documents")
    stub.queue_voyage(503, 503)
    stub.queue_anthropic(text_message("Notes."))
    result = ingest_file(project, "notes.md", b"# Notes\n\nManagers print labels in the back office.\n")
    assert not result.ok and "Voyage embeddings are unavailable" in result.message
    assert (project.ws.uploads / "notes.md").exists()
    assert project.manifest().find("notes.md").status.startswith("not indexed")
    assert project.store.ids("documents") == before  # nothing half-indexed


def test_tool_loop_is_capped(online: Project, stub):
    endless = [tool_use_message([("record_probe", {"probe": "why_now"})], text=f"Round {i}.") for i in range(10)]
    stub.queue_anthropic(tool_use_message([("route", ROUTE)]), *endless)
    record = run_turn(online, "Why is this urgent now?")
    rounds = online.settings.tool_loop_max_rounds
    phase_b = [r for r in stub.anthropic_requests() if r.get("stream")]
    assert len(phase_b) == rounds
    assert len(record.tool_calls) == rounds
    assert record.reply.startswith("Round 0.")


def test_api_keys_never_reach_the_workspace(stub, monkeypatch, isolated_env):
    from pmforge.core import settings as config

    anthropic_key, voyage_key = "sk-ant-api03-DISTINCTIVE-SECRET-7731", "pa-DISTINCTIVE-VOYAGE-SECRET-5519"
    monkeypatch.setenv("ANTHROPIC_API_KEY", anthropic_key)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", stub.url)
    monkeypatch.setenv("VOYAGE_API_KEY", voyage_key)
    monkeypatch.setenv("VOYAGE_BASE_URL", stub.url + "/v1")
    monkeypatch.setenv("FORGE_MIN_SIMILARITY", "-1")
    config.get_settings.cache_clear()
    project = Project.create(Services.from_settings(config.get_settings()), "Secrets")
    stub.queue_anthropic(text_message("A pilot plan."))
    ingest_file(project, "plan.md", PLAN)
    stub.queue_anthropic(
        tool_use_message([("route", ROUTE)]),
        tool_use_message([("generate_artifact", {"kind": "assumption_register"})], text="Noted."),
        text_message("Question 1: Who owns shrink?"),
        text_message("Summary."),
    )
    run_turn(project, "We want to cut shrink in the pilot stores.")
    assert stub.anthropic_requests()  # the keys were really used
    leaks = [p for p in isolated_env.rglob("*") if p.is_file()
             and (anthropic_key.encode() in p.read_bytes() or voyage_key.encode() in p.read_bytes())]
    assert leaks == []
    assert anthropic_key not in repr(project.services.describe())


# --------------------------------------------------------------------------- Forge's provider classes, one call


def reply_request(**fields) -> ChatRequest:
    return ChatRequest(**{"purpose": "reply", "model": "claude-test", "system": [SystemBlock(text="Be brief.")],
                          "messages": [Message.user("Who owns shrink?")], **fields})


@pytest.fixture
def voyage_waits(monkeypatch) -> list[float]:
    """The waits Forge's Voyage retry loop asks for, recorded instead of slept (its own wait policy decides them)."""
    waits: list[float] = []
    monkeypatch.setattr(voyage, "Retrying", functools.partial(tenacity.Retrying, sleep=waits.append))
    return waits


def test_voyage_retries_rate_limits_with_forges_backoff_settings(online_services, stub, voyage_waits):
    embedder = online_services(voyage_max_attempts=5, voyage_backoff_s=0.25, voyage_max_wait_s=0.75).embedder
    stub.queue_voyage(429, 429, 429)
    texts = ["Dana owns shrink.", "The pilot has 20 stores."]
    vectors, billed = embedder.embed_documents_billed(texts)

    assert vectors == [pytest.approx(deterministic_embedding(t, embedder.dimensions)) for t in texts]
    assert billed == sum(len(t.split()) for t in texts)  # Voyage's own count, from the answer that came through
    assert len(stub.voyage_requests()) == 4  # one request per attempt: the SDK's own retries stay off
    # Exponential backoff with jitter: attempt n waits at most backoff × 2^(n-1), capped at the longest wait.
    assert len(voyage_waits) == 3
    assert all(0 <= wait <= min(0.75, 0.25 * 2**n) for n, wait in enumerate(voyage_waits))


def test_voyage_gives_up_after_its_attempts_in_one_sentence(online_services, stub, voyage_waits):
    embedder = online_services(voyage_max_attempts=3).embedder
    stub.voyage_fallback = 429
    with pytest.raises(ForgeError) as exc:
        embedder.embed_query("Who owns shrink?")
    assert str(exc.value) == "Voyage embeddings are unavailable right now (RateLimitError); try again in a minute."
    assert one_sentence(str(exc.value)) and exc.value.__cause__ is None
    assert len(stub.voyage_requests()) == 3 and len(voyage_waits) == 2


def test_voyage_does_not_retry_a_rejected_key(online_services, stub, voyage_waits):
    embedder = online_services(voyage_max_attempts=5).embedder
    stub.queue_voyage(401)
    with pytest.raises(ForgeError, match="Voyage rejected the API key; check VOYAGE_API_KEY") as exc:
        embedder.embed_documents(["Dana owns shrink."])
    assert "test-voyage" not in str(exc.value) and exc.value.__cause__ is None
    assert len(stub.voyage_requests()) == 1 and voyage_waits == []


def test_claude_survives_an_overload_then_answers_the_routing_call(online_services, stub):
    llm = online_services().llm
    stub.queue_anthropic(529, tool_use_message([("route", ROUTE)]))
    request = reply_request(purpose="route", tools=[ToolSpec(name="route", description="Route the turn.",
                                                             input_schema=RoutingDecision.model_json_schema())],
                            tool_choice={"type": "tool", "name": "route"})
    response = llm.complete(request)

    assert [(u.name, u.input) for u in response.tool_calls] == [("route", ROUTE)]
    assert response.stop_reason == "tool_use"
    overloaded, answered = stub.anthropic_requests()
    assert overloaded == answered  # the same request, sent again


@pytest.mark.parametrize("call", ["complete", "stream"])
def test_claude_fails_at_once_on_a_rejected_key_and_never_shows_it(online_services, stub, monkeypatch, call):
    key = "sk-ant-api03-REJECTED-KEY-4417"
    monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    llm = online_services().llm
    stub.queue_anthropic(401, text_message("never served"))
    with pytest.raises(ForgeError) as exc:
        if call == "complete":
            llm.complete(reply_request())
        else:
            llm.stream(reply_request()).consume()

    assert str(exc.value) == "Claude rejected the API key; check ANTHROPIC_API_KEY. Your message is kept."
    assert key not in str(exc.value)
    assert exc.value.__cause__ is None and exc.value.__suppress_context__  # no SDK error (and its request) behind it
    assert len(stub.anthropic_requests()) == 1  # not retried, although two retries are allowed


def test_a_streamed_reply_with_a_tool_call_arrives_as_forges_events(online_services, stub):
    llm = online_services().llm
    text = "What I'm hearing: shrink in fresh is the problem, not the app."
    usage = {"input_tokens": 120, "output_tokens": 64, "cache_read_input_tokens": 3000,
             "cache_creation_input_tokens": 900, "cache_creation": {"ephemeral_5m_input_tokens": 300,
                                                                    "ephemeral_1h_input_tokens": 600}}
    stub.queue_anthropic(tool_use_message([("register_assumption", REGISTER, "toolu_a1")], text=text, usage=usage))
    stream = llm.stream(reply_request(tools=[ToolSpec(name="register_assumption", description="Register one.",
                                                      input_schema=RegisterAssumption.model_json_schema())]))
    pieces = list(stream)

    assert len(pieces) > 1 and "".join(pieces) == text  # the text arrives as it is written, in pieces
    response = stream.response
    assert response.text == text and response.stop_reason == "tool_use"
    assert [(u.id, u.name, u.input) for u in response.tool_calls] == [("toolu_a1", "register_assumption", REGISTER)]
    assert response.usage == Usage(input_tokens=120, output_tokens=64, cache_read_input_tokens=3000,
                                   cache_creation_input_tokens=900, cache_creation_1h_input_tokens=600)
    # The next round of the tool loop sends the call back as the API expects it.
    assert wire_messages([response.as_message()]) == [{"role": "assistant", "content": [
        {"type": "text", "text": text},
        {"type": "tool_use", "id": "toolu_a1", "name": "register_assumption", "input": REGISTER}]}]
    [sent] = stub.anthropic_requests()
    assert sent["stream"] is True


def test_one_typed_conversation_is_written_in_each_providers_wire_shape():
    """A tool round held as typed parts reaches Claude as content blocks and an OpenAI-compatible server as
    tool_calls and tool messages: the same conversation, each provider's own shape, pairs kept by id."""
    from pmforge.llm.messages import TextPart, ToolCall, ToolResult
    from pmforge.llm.openai_llm import chat_messages

    conversation = [
        Message.user("Who owns shrink?"),
        Message(role="assistant", parts=[TextPart(text="Noted."),
                                         ToolCall(id="c1", name="add_stakeholder", input={"name": "Dana"})]),
        Message(role="user", parts=[ToolResult(call_id="c1", content="Added Dana.", is_error=False)]),
        Message(role="user", parts=[ToolResult(call_id="c2", content="No such probe.", is_error=True)]),
    ]
    assert wire_messages(conversation) == [
        {"role": "user", "content": "Who owns shrink?"},
        {"role": "assistant", "content": [{"type": "text", "text": "Noted."}, {
            "type": "tool_use", "id": "c1", "name": "add_stakeholder", "input": {"name": "Dana"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1", "content": "Added Dana.",
                                      "is_error": False}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c2", "content": "No such probe.",
                                      "is_error": True}]},
    ]
    assert chat_messages([SystemBlock(text="You are Forge.")], conversation) == [
        {"role": "system", "content": "You are Forge."},
        {"role": "user", "content": "Who owns shrink?"},
        {"role": "assistant", "content": "Noted.", "tool_calls": [{
            "id": "c1", "type": "function", "function": {"name": "add_stakeholder", "arguments": '{"name": "Dana"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "Added Dana."},
        {"role": "tool", "tool_call_id": "c2", "content": "Error: No such probe."},
    ]
