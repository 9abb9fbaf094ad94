"""The OpenAI-compatible provider (Ollama, vLLM, LM Studio, llama.cpp's server, Azure OpenAI) — the real
`openai` client against the local stub: routing by a forced function call, streamed replies with tool calls,
malformed tool JSON, retries, failures in one sentence, embeddings, and a whole two-mode session."""

from __future__ import annotations

import json

import pytest

from docs import PLAN
from pmforge.core.errors import ForgeError
from pmforge.core.models import RoutingDecision
from pmforge.ingest.pipeline import ingest_file
from pmforge.llm.base import ChatRequest, SystemBlock
from pmforge.llm.messages import Message
from pmforge.outputs.artifacts import latest
from pmforge.project.project import Project
from pmforge.project.services import Services
from pmforge.tools.assumptions import RegisterAssumption
from pmforge.turn.orchestrator import run_turn, start_turn
from stubs import DROP, delayed, error_reply, openai_text, openai_tool_calls
from test_faults import one_sentence, snapshot

ROUTE = {
    "action": "ask_questions", "mode": "mode_1", "next_probe": "solution_problem_separation", "patterns": [],
    "requires_retrieval": True, "retrieval_query": "pilot stores", "reasoning": "Substantive opening.",
}
ASSUMPTION = {"claim": "Store managers will adopt a markdown app", "type": "value", "impact": "high",
              "confidence": "guessed", "basis": "PM's hunch"}
PROBLEM = {"problem_statement": "Fresh departments lose too much to shrink."}
MESSAGE = "We want to cut fresh shrink. I think store managers will adopt a markdown app."
EMBED_MODEL = "embed-stub"
EMBED_DIM = 256  # not the stub's default: the embedder must learn it from the server


@pytest.fixture
def openai_services(stub, monkeypatch, isolated_env):
    """Returns `make(**settings)`: Services on the OpenAI-compatible provider, pointed at the stub."""
    from pmforge.core import settings as config

    monkeypatch.setenv("FORGE_LLM", "openai")
    monkeypatch.setenv("FORGE_EMBEDDINGS", "openai")
    monkeypatch.setenv("OPENAI_BASE_URL", stub.url + "/v1")  # a local server: no key
    monkeypatch.setenv("FORGE_OPENAI_MODEL", "qwen-stub")
    monkeypatch.setenv("FORGE_OPENAI_ROUTE_MODEL", "route-stub")
    monkeypatch.setenv("FORGE_OPENAI_SUMMARY_MODEL", "summary-stub")
    monkeypatch.setenv("FORGE_OPENAI_EMBED_MODEL", EMBED_MODEL)
    monkeypatch.setenv("FORGE_OPENAI_MAX_RETRIES", "2")
    monkeypatch.setenv("FORGE_OPENAI_TIMEOUT_S", "10")
    # The stub's embeddings are hash-random, so no similarity means anything: these tests check the wire.
    monkeypatch.setenv("FORGE_MIN_SIMILARITY", "-1")
    stub.openai_embedding_dim = EMBED_DIM

    def make(**settings) -> Services:
        for name, value in settings.items():
            monkeypatch.setenv(f"FORGE_{name.upper()}", str(value))
        config.get_settings.cache_clear()
        services = Services.from_settings(config.get_settings())
        assert services.llm.name == "openai" and services.embedder.name == EMBED_MODEL
        return services

    return make


@pytest.fixture
def served(openai_services, stub) -> Project:
    """A project on the OpenAI-compatible server with plan.md indexed; the stub's request log starts empty."""
    project = Project.create(openai_services(), "Local Pilot")
    stub.queue_openai(openai_text("A pilot plan: 20 Midwest stores for eight weeks, shrink target 4.5%."))
    assert ingest_file(project, "plan.md", PLAN).ok
    stub.requests.clear()
    return project


def phase_b(stub) -> list[dict]:
    return [r for r in stub.openai_requests() if r.get("stream")]


# --------------------------------------------------------------------------- routing


def test_routing_is_a_forced_function_call_validated_by_the_routing_model(served: Project, stub):
    stub.queue_openai(openai_tool_calls([("route", ROUTE)]), openai_text("Question 1: Who owns shrink?"),
                      openai_text("PM asked about the pilot."))
    record = run_turn(served, "How many stores are in the pilot?")

    route_req, reply_req, summary_req = stub.openai_requests()
    assert route_req["model"] == "route-stub" and "stream" not in route_req
    # The only tool offered: "required" forces it on every server (llama.cpp reads the object form as "auto").
    assert route_req["tool_choice"] == "required"
    [tool] = route_req["tools"]
    assert tool["type"] == "function" and tool["function"]["name"] == "route"
    assert set(tool["function"]["parameters"]["properties"]) == set(RoutingDecision.model_json_schema()["properties"])
    assert reply_req["model"] == "qwen-stub" and summary_req["model"] == "summary-stub"
    assert record.routing.reasoning == ROUTE["reasoning"]  # the model's decision, not the rule router's
    assert record.reply == "Question 1: Who owns shrink?"
    assert served.state().turns[0].summary == "PM asked about the pilot."
    # Anthropic's prompt-caching markers never reach an OpenAI-compatible server.
    assert "cache_control" not in json.dumps(stub.openai_requests())


@pytest.mark.parametrize("answer", [
    "```json\n" + json.dumps(ROUTE) + "\n```",
    "Here is my decision: " + json.dumps({"name": "route", "arguments": ROUTE}),
], ids=["fenced arguments", "the call written out"])
def test_a_server_that_ignores_tool_choice_is_read_from_the_text(served: Project, stub, answer):
    stub.queue_openai(openai_text(answer), openai_text("Question 1: Who owns shrink?"), openai_text("Summary."))
    record = run_turn(served, "How many stores are in the pilot?")
    assert record.routing.reasoning == ROUTE["reasoning"] and record.routing.retrieval_query == "pilot stores"
    route_req = stub.openai_requests()[0]
    assert "answer with only its arguments as one JSON object" in route_req["messages"][0]["content"]


def test_a_text_answer_that_is_not_a_routing_decision_falls_back_to_the_rules(served: Project, stub):
    stub.queue_openai(openai_text("I think we should ask questions."), openai_text('{"action": "dance"}'),
                      openai_text("Question 1: ?"), openai_text("Summary."))
    record = run_turn(served, "Tell me about the pilot scope.")
    assert record.routing.reasoning.startswith("Fallback — Router answer invalid twice")
    repair = stub.openai_requests()[1]
    assert repair["messages"][-1]["role"] == "user"  # no call to answer: the model is asked again in words


# --------------------------------------------------------------------------- Phase B tool loop


def test_a_streamed_reply_with_tool_calls_and_a_second_round(served: Project, stub):
    stub.queue_openai(
        openai_tool_calls([("route", ROUTE)]),
        openai_tool_calls([("register_assumption", ASSUMPTION, "call_a"),
                           ("update_problem_statement", PROBLEM, "call_p")], text="What I'm hearing: shrink in fresh."),
        openai_text("Question 1: Who feels this most?"),
        openai_text("PM wants to cut fresh shrink."),
    )
    pending = start_turn(served, MESSAGE)
    streamed = list(pending)  # what the PM sees as it comes
    record = pending.finish()

    first, second = phase_b(stub)
    assert first["stream"] is True and first["stream_options"] == {"include_usage": True}
    # One system message, the static prefix alone (with the tool schemas after it, the same bytes every turn: a
    # prefix the server's prompt cache reuses); the turn's context goes with the PM's message, in every round.
    assert [m["role"] for m in first["messages"]] == ["system", "user"]
    assert first["messages"][0]["content"] == pending.reply_request.system[0].text
    assert "You are Forge" in first["messages"][0]["content"]
    pm = first["messages"][1]["content"]
    assert "Uploaded document sections" in pm and pm.endswith(f"# The PM's message\n{MESSAGE}")
    assert second["messages"][:2] == first["messages"]  # round 2 extends round 1: all of it is a cached prefix
    tools = {t["function"]["name"]: t["function"] for t in first["tools"]}
    assert set(tools["register_assumption"]["parameters"]["properties"]) == set(
        RegisterAssumption.model_json_schema()["properties"])
    assert "tool_choice" not in first
    # The model's calls go back as an assistant message's tool_calls, the results as `tool` messages.
    assistant, result_a, result_p = second["messages"][-3:]
    assert assistant["role"] == "assistant" and assistant["content"] == "What I'm hearing: shrink in fresh."
    assert [(c["id"], c["function"]["name"], json.loads(c["function"]["arguments"])) for c in assistant["tool_calls"]] \
        == [("call_a", "register_assumption", ASSUMPTION), ("call_p", "update_problem_statement", PROBLEM)]
    assert [(r["role"], r["tool_call_id"]) for r in (result_a, result_p)] == [("tool", "call_a"), ("tool", "call_p")]
    assert not result_a["content"].startswith("Error") and not result_p["content"].startswith("Error")

    assert len(streamed) > 2 and "".join(streamed).startswith("What I'm hearing: shrink in fresh.")
    assert record.reply.startswith("What I'm hearing: shrink in fresh.\n\nQuestion 1: Who feels this most?")
    assert [c.name for c in record.tool_calls] == ["register_assumption", "update_problem_statement"]
    state = served.state()
    assert [a.claim for a in state.assumptions] == [ASSUMPTION["claim"]]
    assert state.problem_brief.problem_statement == PROBLEM["problem_statement"]


def test_the_reply_streams_in_pieces_and_usage_keeps_cached_tokens_apart(openai_services, stub):
    llm = openai_services().llm
    usage = {"prompt_tokens": 1200, "completion_tokens": 40, "prompt_tokens_details": {"cached_tokens": 1000}}
    request = ChatRequest(purpose="reply", model="claude-sonnet-4-5",
                          system=[SystemBlock(text="Be brief.", cache=True)],
                          messages=[Message.user("Hello")])
    stub.queue_openai(openai_text("Question 1: Who owns shrink today?", usage=usage), openai_text("Hi.", usage=usage))
    stream = llm.stream(request)
    pieces = list(stream)
    assert len(pieces) > 1 and "".join(pieces) == "Question 1: Who owns shrink today?"
    complete = llm.complete(request)
    for response in (stream.response, complete):
        assert (response.usage.input_tokens, response.usage.cache_read_input_tokens,
                response.usage.output_tokens, response.usage.cache_creation_input_tokens) == (200, 1000, 40, 0)
    assert [r["model"] for r in stub.openai_requests()] == ["qwen-stub", "qwen-stub"]


def test_malformed_tool_json_goes_back_to_the_model_and_the_loop_goes_on(served: Project, stub):
    broken = '{"claim": "Store managers will adopt", "type": }'
    stub.queue_openai(
        openai_tool_calls([("route", ROUTE)]),
        openai_tool_calls([("register_assumption", broken, "call_bad"),
                           ("update_target_audience", {"target_audience": "Fresh department leads"}, "call_ok")],
                          text="Noting."),
        openai_tool_calls([("register_assumption", ASSUMPTION, "call_fixed")], text="Let me fix that."),
        openai_text("Question 1: Who feels this most?"),
        openai_text("PM named the audience."),
    )
    record = run_turn(served, "Fresh department leads feel it. I think store managers will adopt a markdown app.")

    _, second, third = phase_b(stub)
    assistant, bad, ok = second["messages"][-3:]
    # The broken call is echoed back as valid JSON (an empty object), paired with its error result.
    assert [json.loads(c["function"]["arguments"]) for c in assistant["tool_calls"]] == [
        {}, {"target_audience": "Fresh department leads"}]
    assert bad["tool_call_id"] == "call_bad"
    assert bad["content"].startswith("Error: Invalid arguments for register_assumption")
    assert ok["tool_call_id"] == "call_ok" and not ok["content"].startswith("Error")
    assert third["messages"][-1] == {"role": "tool", "tool_call_id": "call_fixed",
                                     "content": third["messages"][-1]["content"]}
    assert not third["messages"][-1]["content"].startswith("Error")

    assert [c.ok for c in record.tool_calls] == [False, True, True]
    assert record.tool_calls[0].input == broken  # kept as sent, for the record
    state = served.state()
    assert state.problem_brief.target_audience == "Fresh department leads"
    assert [a.claim for a in state.assumptions] == [ASSUMPTION["claim"]]


# --------------------------------------------------------------------------- retries and failures


def test_a_rate_limit_is_retried_then_the_turn_succeeds(served: Project, stub):
    stub.queue_openai(openai_tool_calls([("route", ROUTE)]), 429, openai_text("Question 1: Who owns it?"))
    record = run_turn(served, "Who owns shrink today?")
    assert record.reply == "Question 1: Who owns it?"
    first, retried = phase_b(stub)
    assert first == retried  # the same request, re-sent


FAILURES = {
    "500 exhausted": dict(item=500, match=r"The model server failed with an internal error \(500: stub error 500\)"),
    "429 exhausted": dict(item=429, match="rate-limiting"),
    "timeout": dict(item=delayed(3.0, openai_text("Too late.")), match="did not answer in time",
                    settings=dict(openai_timeout_s=0.3, openai_max_retries=1)),
    "connection drop": dict(item=DROP, match="could not reach the model server at http://127.0.0.1"),
    "model cannot call tools": dict(
        item=error_reply(400, 'registry.ollama.ai/library/gemma:2b does not support tools'),
        match="The model 'qwen-stub' cannot call tools", retried=False),
    "model not pulled": dict(item=error_reply(404, 'model "qwen-stub" not found, try pulling it first'),
                             match="ollama pull qwen-stub", retried=False),
}


@pytest.mark.parametrize("failure", FAILURES, ids=list(FAILURES))
def test_a_failure_fails_the_turn_in_one_sentence_with_state_unchanged(openai_services, served: Project, stub,
                                                                       failure):
    spec = FAILURES[failure]
    project = Project.open(openai_services(**spec.get("settings", {})), served.ws.slug)
    before = snapshot(project)
    stub.queue_openai(openai_tool_calls([("route", ROUTE)]))
    stub.openai_fallback = spec["item"]  # every Phase B request fails

    with pytest.raises(ForgeError, match=spec["match"]) as exc:
        run_turn(project, "This message must not be lost.")

    assert one_sentence(str(exc.value)) and "your message is kept" in str(exc.value)
    retries = project.settings.openai_max_retries if spec.get("retried", True) else 0
    assert len(phase_b(stub)) == 1 + retries
    assert snapshot(project) == before and project.state().turn_count == 0


def test_choosing_the_provider_without_an_endpoint_says_what_to_set(monkeypatch):
    from pmforge.core import settings as config

    monkeypatch.setenv("FORGE_LLM", "openai")
    config.get_settings.cache_clear()
    with pytest.raises(ForgeError, match="FORGE_LLM=openai needs OPENAI_BASE_URL"):
        Services.from_settings(config.get_settings())


# --------------------------------------------------------------------------- embeddings


def test_embeddings_come_from_the_same_server_and_are_recorded_per_collection(openai_services, served: Project,
                                                                               stub, monkeypatch):
    stub.queue_openai(openai_tool_calls([("route", ROUTE)]), openai_text("Question 1: ?"), openai_text("Summary."))
    record = run_turn(served, "How many stores are in the pilot?")
    assert record.retrieved.documents  # retrieval happened with the server's query vector

    requests = stub.openai_embedding_requests()
    assert requests and all(r["model"] == EMBED_MODEL and r["encoding_format"] == "float" for r in requests)
    assert requests[0]["input"][0].startswith("How many stores are in the pilot?")  # the retrieval query first
    assert stub.voyage_requests() == []
    # The dimensions were learned from the server, and the vectors are signed with them.
    assert served.services.embedder.signature == f"{EMBED_MODEL}/{EMBED_DIM}"
    assert served.store.signature == f"{EMBED_MODEL}/{EMBED_DIM}" and served.reindex_reason() is None

    # Switching embedders is caught: the collections say who filled them.
    from pmforge.core import settings as config

    monkeypatch.setenv("FORGE_EMBEDDINGS", "local")
    config.get_settings.cache_clear()
    local = Project.open(Services.from_settings(config.get_settings()), served.ws.slug)
    assert f"made with {EMBED_MODEL}/{EMBED_DIM}" in (local.reindex_reason() or "")


def test_embedding_rate_limits_are_retried_during_upload(served: Project, stub):
    stub.queue_openai_embeddings(429, 503)  # then the stub's default embeddings
    stub.queue_openai(openai_text("Store interview notes."))
    result = ingest_file(served, "notes.md", b"# Notes\n\nManagers print labels in the back office.\n")
    assert result.ok, result.message
    assert len(stub.openai_embedding_requests()) == 3
    assert served.store.documents.file_ids() == {f.file_id for f in served.manifest().file_summaries if f.indexed}


def test_an_embedding_outage_keeps_the_file_and_says_so(served: Project, stub):
    before = served.store.ids("documents")
    stub.openai_embeddings_fallback = 503
    stub.queue_openai(openai_text("Notes."))
    result = ingest_file(served, "notes.md", b"# Notes\n\nManagers print labels in the back office.\n")
    assert not result.ok and "unavailable right now" in result.message
    assert (served.ws.uploads / "notes.md").exists()
    assert served.store.ids("documents") == before  # nothing half-indexed


# --------------------------------------------------------------------------- a whole session


def test_a_two_mode_discovery_session_with_tools(openai_services, stub):
    project = Project.create(openai_services(), "Bakery Markdown")
    evaluate = dict(ROUTE, action="enter_mode", mode="mode_2", next_probe=None, reasoning="The PM asked to evaluate.")
    in_mode_2 = dict(ROUTE, mode="mode_2", next_probe=None, reasoning="Keep evaluating.")
    solution = {"name": "Markdown list", "description": "A daily markdown list pushed to bakery leads' handhelds."}
    usability = {"dimension": "usability", "level": "high",
                 "summary": "Handheld screens are tiny and leads wear gloves.",
                 "evidence_against": ["Leads wear gloves at the ovens."]}
    plan = {"riskiest_assumption": "A1", "approach": "concierge", "timeline": "three weeks in two stores",
            "success_criteria": ["Leads follow the list on 4 of 5 evenings."]}
    go = {"recommendation": "conditional_go", "conditions": ["The concierge pilot meets its success criteria."]}
    stub.queue_openai(
        # Turn 1, mode 1: the problem and an assumption, recorded by tools, then the question.
        openai_tool_calls([("route", ROUTE)]),
        openai_tool_calls([("update_problem_statement",
                            {"problem_statement": "Bakery leads mark bread down by gut feel and bin 9% of sales."}),
                           ("register_assumption", {"claim": "Leads would follow a daily markdown list",
                                                    "type": "value", "impact": "high", "confidence": "guessed",
                                                    "basis": "PM's hunch"})],
                          text="What I'm hearing: markdowns by gut feel."),
        openai_text("Question 1: Who signs off on the shrink budget?"),
        openai_text("PM described bakery shrink and a markdown-list idea."),
        # Turn 2: the PM asks to evaluate the solution: mode 2, and the evaluation's first fields.
        openai_tool_calls([("route", evaluate)]),
        openai_tool_calls([("set_solution_info", solution), ("set_risk_assessment", usability)],
                          text="Let's stress-test the markdown list."),
        openai_text("Question 1: How would leads see the list at the ovens?"),
        openai_text("PM moved to evaluating the markdown list."),
        # Turn 3, mode 2: the validation plan, the recommendation and the written evaluation.
        openai_tool_calls([("route", in_mode_2)]),
        openai_tool_calls([("set_validation_plan", plan), ("set_go_no_go", go),
                           ("generate_artifact", {"kind": "solution_evaluation"})], text="Here is the plan."),
        openai_text("Question 1: Which two stores?"),
        openai_text("PM chose a concierge pilot."),
    )
    records = [
        run_turn(project, "Our bakery leads mark bread down by gut feel at closing, and we bin about 9% of "
                          "bakery sales. I think leads would follow a daily markdown list on their handhelds."),
        run_turn(project, "Ok, let's evaluate the markdown list idea. The handheld screens are tiny and leads "
                          "wear gloves at the ovens."),
        run_turn(project, "The cheapest test is a three-week concierge pilot in two stores; go if leads follow it."),
    ]
    for record in records:
        assert record.tool_calls and all(call.ok for call in record.tool_calls), record.tool_calls
    assert [r.routing.action for r in records] == ["ask_questions", "enter_mode", "ask_questions"]

    state = project.state()  # what was saved, read back from disk
    assert state.active_mode == "mode_2" and [t.active_mode for t in state.turns] == ["mode_1", "mode_2", "mode_2"]
    assert state.problem_brief.problem_statement.startswith("Bakery leads mark bread down by gut feel")
    assert [(a.id, a.claim) for a in state.assumptions] == [("A1", "Leads would follow a daily markdown list")]
    evaluation = state.solution_evaluation
    assert evaluation.solution_name == "Markdown list"
    assert evaluation.usability_risk.level == "high" and "gloves" in evaluation.usability_risk.summary
    assert evaluation.validation_plan.riskiest_assumption == "A1" and evaluation.validation_plan.approach == "concierge"
    assert evaluation.go_no_go.recommendation == "conditional_go"
    assert set(latest(project.ws, "solution_evaluation")) == {"md", "docx"}
    assert [t.summary for t in state.turns] == ["PM described bakery shrink and a markdown-list idea.",
                                                "PM moved to evaluating the markdown list.",
                                                "PM chose a concierge pilot."]
    assert project.store.memory.turn_numbers() == {1, 2, 3}  # remembered with the server's embeddings
    # Mode 2's own instructions reached the model once the session had entered it.
    replies = phase_b(stub)
    assert len(replies) == 6 and all(r["model"] == "qwen-stub" for r in replies)
    assert replies[0]["messages"][0]["content"] != replies[2]["messages"][0]["content"]
    assert stub.openai_requests()[-1]["model"] == "summary-stub"
