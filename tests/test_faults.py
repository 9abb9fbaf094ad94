"""Provider faults, through the real `voyageai` and `anthropic` clients against the local stub.

Voyage rate-limit storms and outages in the middle of a 100-chunk upload, Anthropic
429/529/timeouts in the middle of the Phase B tool loop, and malformed tool arguments.
In every case: the app keeps running, nothing is half-indexed or half-saved, the
upload and the PM's message are kept, and the PM gets one plain sentence.
"""

from __future__ import annotations

import itertools
import json
import threading
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

import pmforge
from forge_cli import run_forge
from pmforge.core.errors import ForgeError, without_kept_note
from pmforge.index.keyword import KeywordIndex
from pmforge.ingest.pipeline import ingest_file
from pmforge.project.project import Project
from pmforge.turn.orchestrator import run_turn
from stubs import DROP, delayed, deterministic_embedding, text_message, tool_use_message

ROUTE = {
    "action": "ask_questions", "mode": "mode_1", "next_probe": "solution_problem_separation", "patterns": [],
    "requires_retrieval": True, "retrieval_query": "pilot stores", "reasoning": "Substantive opening.",
}
ASSUMPTION = {"claim": "Store managers will adopt a markdown app", "type": "value", "impact": "high",
              "confidence": "guessed", "basis": "PM's hunch"}
PROBLEM = {"problem_statement": "Fresh departments lose too much to shrink."}
ORG = "A regional grocer with 300 stores."
# What the PM says in the turns that fail: every tool call of `first_round` is backed by it.
MESSAGE = "We are a regional grocer with 300 stores. I think store managers will adopt a markdown app."


# --------------------------------------------------------------------------- helpers


def big_markdown(sections: int = 36, paragraphs: int = 3, version: str = "") -> bytes:
    """~130 KB of Markdown: one parent per section and one ~370-token leaf per paragraph."""
    out = [f"# Store operations handbook {version}\n"]
    for s in range(sections):
        out.append(f"## Region {s}: operating notes\n")
        for p in range(paragraphs):
            out.append(" ".join(
                f"In region {s}, note {p}.{k} says store team {s * 31 + p * 7 + k} checks fresh produce shelf "
                f"{k} at {6 + k % 12} o'clock and records markdown code R{s}-{p}-{k}{version} for later review."
                for k in range(9)) + "\n")
    return "\n".join(out).encode("utf-8")


def scripted(*pattern, first_ok: int = 0):
    """A stub fallback: `first_ok` default answers, then `pattern` over and over (None = the default answer)."""
    lock, served = threading.Lock(), itertools.count()
    items = itertools.cycle(pattern)

    def answer(request: dict):
        with lock:
            n = next(served)
            return None if n < first_ok else next(items)

    return answer


def file_chunk_ids(project: Project, file_id: str) -> tuple[set[str], set[str]]:
    """A file's leaf-window ids in the vector store and in the keyword index."""
    vector = {i for i in project.store.ids("documents") if i.startswith(f"{file_id}:")}
    keyword = {i for i in project.store.keyword("documents").ids() if i.startswith(f"{file_id}:")}
    return vector, keyword


def assert_store_agrees_with_manifest(project: Project) -> None:
    manifest = {f.file_id for f in project.manifest().file_summaries if f.indexed}
    assert project.store.documents.file_ids() == manifest
    assert project.store.keyword("documents").ids() == project.store.ids("documents")
    # ... and what is on disk says the same as what is in memory.
    assert KeywordIndex(project.ws.vectordb / "keyword", "documents").ids() == project.store.ids("documents")
    assert project.reindex_reason() is None


def one_sentence(message: str) -> bool:
    return bool(message) and message.endswith(".") and ". " not in message.rstrip(".") and "\n" not in message


def snapshot(project: Project) -> dict[str, bytes | None]:
    """The saved state a failed turn must not touch."""
    ws = project.ws
    return {p.name: (p.read_bytes() if p.exists() else None)
            for p in (ws.state_path, ws.manifest_path, ws.context_path)}


# --------------------------------------------------------------------------- Voyage during a big upload


@pytest.fixture
def small_batches(online_services, online: Project) -> Project:
    """The online project reopened with 8 texts per Voyage call, so a 100-chunk upload takes ~14 calls."""
    return Project.open(online_services(voyage_batch_size=8), online.ws.slug)


STORMS = {
    # every other call, and bursts of up to five in a row (one under the default six attempts)
    "rate-limit storm": dict(queue=(429,) * 5, pattern=(None, 429, 429, 429, None, 429, None, 429, None)),
    "flaky network": dict(queue=(503, DROP, 429), pattern=(None, DROP, 429, None, 500, 503, 429, None)),
}


@pytest.mark.parametrize("storm", STORMS, ids=list(STORMS))
def test_a_100_chunk_upload_completes_through_a_storm(small_batches: Project, stub, storm):
    project, data = small_batches, big_markdown()
    stub.queue_voyage(*STORMS[storm]["queue"])
    stub.voyage_fallback = scripted(*STORMS[storm]["pattern"])
    result = ingest_file(project, "handbook.md", data)

    assert result.ok, result.message
    entry = project.manifest().find("handbook.md")
    assert entry.indexed and entry.chunk_count >= 100 and entry.parent_count == 36
    calls = stub.voyage_requests()
    assert len(calls) > entry.chunk_count / 8 + 5  # the storm really hit: many calls were retried
    vector, keyword = file_chunk_ids(project, entry.file_id)
    assert len(vector) == entry.chunk_count  # Voyage needs no windows: one vector per leaf
    assert vector == keyword
    assert_store_agrees_with_manifest(project)
    # Retries re-sent the same batch: every stored vector is the one for its own text, none shifted.
    got = project.store.collection("documents").get(ids=sorted(vector), include=["documents", "embeddings"])
    for text, vec in zip(got["documents"], got["embeddings"]):
        assert list(vec) == pytest.approx(deterministic_embedding(text, 512), abs=1e-6)
    assert stub.errors == []


OUTAGES = {"503": 503, "500": 500, "connection refused mid-call": DROP}


@pytest.mark.parametrize("failure", OUTAGES.values(), ids=list(OUTAGES))
def test_an_outage_mid_upload_leaves_nothing_half_indexed(online_services, online: Project, stub, failure):
    project = Project.open(online_services(voyage_batch_size=8, voyage_max_attempts=3), online.ws.slug)
    before = (project.store.ids("documents"), project.store.keyword("documents").ids())
    data = big_markdown()
    stub.voyage_fallback = scripted(failure, first_ok=5)  # five batches (40 leaves) embed, then Voyage is down
    result = ingest_file(project, "handbook.md", data)

    assert not result.ok
    assert result.message.startswith("Voyage embeddings are unavailable right now") and one_sentence(result.message)
    assert len(stub.voyage_requests()) == 5 + 3  # the outage began mid-upload; the sixth batch tried three times
    assert (project.store.ids("documents"), project.store.keyword("documents").ids()) == before
    entry = project.manifest().find("handbook.md")
    assert not entry.indexed and entry.status == f"not indexed: {result.message}"
    assert (project.ws.uploads / "handbook.md").read_bytes() == data  # the upload is kept
    assert not project.ws.converted_path("handbook.md").exists()  # no Markdown without chunks behind it
    assert_store_agrees_with_manifest(project)

    # Voyage is back: the same upload goes through and is fully indexed.
    stub.voyage_fallback = None
    result = ingest_file(project, "handbook.md", data)
    assert result.ok, result.message
    entry = project.manifest().find("handbook.md")
    vector, keyword = file_chunk_ids(project, entry.file_id)
    assert entry.indexed and len(vector) == entry.chunk_count >= 100 and vector == keyword
    assert_store_agrees_with_manifest(project)


def test_an_outage_while_replacing_a_file_keeps_the_old_version_as_it_was(small_batches: Project, stub):
    """The new version is indexed beside the old one and swapped in only once it is complete: when Voyage
    fails halfway, the old version's upload, converted text, passages and citations stay exactly as they
    were, and the new version's half-embedded passages never reach the store."""
    project = small_batches
    old = project.manifest().find("plan.md")
    old_ids = file_chunk_ids(project, old.file_id)
    old_upload = (project.ws.uploads / "plan.md").read_bytes()
    old_text = project.ws.converted_path("plan.md").read_bytes()
    assert old_ids[0] and old_ids[0] == old_ids[1]
    citation = project.store.documents.get_parents([(f"{old.file_id}:p0", 1.0)])[0]
    assert project.passage(citation)

    new_plan = big_markdown(version="v2")
    stub.voyage_fallback = scripted(503, first_ok=3)
    result = ingest_file(project, "plan.md", new_plan)

    assert not result.ok and one_sentence(result.message) and "previous version" in result.message
    entries = [f for f in project.manifest().file_summaries if f.filename.casefold() == "plan.md"]
    assert entries == [old]
    assert (project.ws.uploads / "plan.md").read_bytes() == old_upload
    assert project.ws.converted_path("plan.md").read_bytes() == old_text
    assert file_chunk_ids(project, old.file_id) == old_ids
    assert project.store.ids("documents") == old_ids[0]
    assert project.passage(citation)
    assert_store_agrees_with_manifest(project)

    stub.voyage_fallback = None  # the PM uploads it again once Voyage is back
    assert ingest_file(project, "plan.md", new_plan).ok
    entry = project.manifest().find("plan.md")
    assert entry.indexed and len(file_chunk_ids(project, entry.file_id)[0]) == entry.chunk_count >= 100
    assert not file_chunk_ids(project, old.file_id)[0]
    assert project.passage(citation) is None  # a citation of the replaced version resolves to nothing
    assert_store_agrees_with_manifest(project)


def test_a_voyage_outage_after_the_reply_keeps_the_turn_and_catches_up_later(online: Project, stub):
    """The reply is saved before the turn is remembered; an outage there must not report the turn as lost."""
    stub.queue_anthropic(tool_use_message([("route", ROUTE)]), text_message("Question 1: Who owns shrink?"),
                         text_message("PM asked about ownership."))
    stub.voyage_fallback = scripted(503, first_ok=1)  # the retrieval query embeds; the turn summary cannot
    record = run_turn(online, "Who owns shrink today?")

    assert record.reply == "Question 1: Who owns shrink?"
    state = online.state()
    assert [t.number for t in state.turns] == [1] and not state.turns[0].indexed
    assert online.store.memory.turn_numbers() == set()

    stub.voyage_fallback = None  # back: the next turn indexes the one that was missed, then itself
    stub.queue_anthropic(tool_use_message([("route", ROUTE)]), text_message("Question 1: Since when?"),
                         text_message("PM said since spring."))
    run_turn(online, "The regional director, since spring.")
    assert online.store.memory.turn_numbers() == {1, 2}
    assert all(t.indexed for t in online.state().turns)


# --------------------------------------------------------------------------- Anthropic mid tool loop


@pytest.fixture
def talked(online: Project, stub) -> Project:
    """One finished turn, so the saved state that must stay untouched is not empty."""
    stub.queue_anthropic(tool_use_message([("route", ROUTE)]),
                         tool_use_message([("record_probe", {"probe": "why_now"})], text="Noted."),
                         text_message("Question 1: Who owns shrink?"), text_message("PM opened the session."))
    run_turn(online, "We want to cut fresh shrink.")
    stub.requests.clear()
    return online


def first_round() -> dict:
    """Phase B's first answer: text, and tool calls that change the session and the project state."""
    return tool_use_message(
        [("register_assumption", ASSUMPTION), ("update_problem_statement", PROBLEM),
         ("update_org_context", {"org_context": ORG})],
        text="What I'm hearing: shrink in fresh.",
    )


FAILURES = {
    "429": dict(item=429, match="rate-limiting"),
    "529": dict(item=529, match="overloaded"),
    "timeout": dict(item=delayed(3.0, text_message("Too late.")), match="did not answer in time",
                    settings=dict(anthropic_timeout_s=0.3, anthropic_max_retries=1)),
    "connection drop": dict(item=DROP, match="could not reach Claude"),
}


@pytest.mark.parametrize("failure", FAILURES, ids=list(FAILURES))
def test_a_failure_mid_tool_loop_fails_the_turn_cleanly(online_services, talked: Project, stub, failure):
    spec = FAILURES[failure]
    project = Project.open(online_services(**spec.get("settings", {})), talked.ws.slug)
    before, turns, remembered = snapshot(project), project.state().turn_count, project.store.memory.turn_numbers()
    stub.queue_anthropic(tool_use_message([("route", ROUTE)]), first_round())
    stub.anthropic_fallback = spec["item"]  # every request after the first Phase B round fails

    with pytest.raises(ForgeError, match=spec["match"]) as exc:
        run_turn(project, MESSAGE)

    text = str(exc.value)
    assert one_sentence(text) and "your message is kept" in text
    phase_b = [r for r in stub.anthropic_requests() if r.get("stream")]
    retries = project.settings.anthropic_max_retries
    assert len(phase_b) == 1 + 1 + retries  # round 1, then round 2 and its retries
    results = phase_b[-1]["messages"][-1]["content"]
    assert [r["is_error"] for r in results] == [False] * 3  # it failed mid loop, after the tools had acted
    assert snapshot(project) == before  # state.json, project_state.json and context.md, byte for byte
    assert project.state().turn_count == turns and project.store.memory.turn_numbers() == remembered


def test_a_transient_failure_mid_loop_recovers_and_commits_tool_effects_once(talked: Project, stub):
    stub.queue_anthropic(
        tool_use_message([("route", ROUTE)]), first_round(),
        529, 429,  # round 2 fails twice; the client's retries (two here) get it through
        text_message("Question 1: Who feels this most?"), text_message("PM named shrink in fresh."),
    )
    record = run_turn(talked, MESSAGE)

    # The model's words, then what the turn recorded (said once: the retries did not apply the calls again).
    assert record.reply.startswith("What I'm hearing: shrink in fresh.\n\nQuestion 1: Who feels this most?\n\n"
                                   "**Recorded:**\n- Added A1 — ")
    round_two = [r for r in stub.anthropic_requests() if r.get("stream")][1:]
    assert len(round_two) == 3 and round_two[0] == round_two[1] == round_two[2]  # the same request, re-sent
    assert [r["is_error"] for r in round_two[0]["messages"][-1]["content"]] == [False, False, False]
    assert [c.name for c in record.tool_calls] == ["register_assumption", "update_problem_statement",
                                                   "update_org_context"]
    state = talked.state()
    assert [a.claim for a in state.assumptions] == [ASSUMPTION["claim"]]  # once, not once per attempt
    assert state.problem_brief.problem_statement == PROBLEM["problem_statement"]
    assert talked.manifest().org_context == ORG
    assert [t.number for t in state.turns] == [1, 2]


def test_the_app_shows_one_sentence_and_keeps_the_message(online_services, stub):
    online_services()
    st.cache_resource.clear()
    try:
        at = AppTest.from_file(str(Path(pmforge.__file__).parent / "surfaces" / "app.py"), default_timeout=120)
        at.run()
        at.sidebar.text_input[0].set_value("Kept Message")
        at.sidebar.button[0].click().run()  # the new-project form's submit button
        assert not at.exception, at.exception
        assert at.sidebar.selectbox[0].value == "kept-message"
        project = Project.open(online_services(), "kept-message")
        before = snapshot(project)
        stub.queue_anthropic(tool_use_message([("route", ROUTE)]), first_round())
        stub.anthropic_fallback = 529
        at.chat_input[0].set_value(MESSAGE).run()
        assert not at.exception, at.exception
        assert [e.value for e in at.error] == ["Claude is overloaded right now; your message is kept, "
                                               "try again in a minute."]
        assert at.session_state["forge"].kept_message == MESSAGE
        assert snapshot(project) == before and project.state().turn_count == 0

        stub.anthropic_fallback = None
        at.run()  # the next rerun (any click) offers the message back
        assert any(MESSAGE in i.value for i in at.info)
        assert not at.exception
    finally:
        st.cache_resource.clear()


# --------------------------------------------------------------------------- malformed tool arguments


def test_malformed_tool_arguments_go_back_to_the_model_and_the_loop_goes_on(talked: Project, stub):
    before = talked.state()
    calls = [
        ("register_assumption", {"claim": 12345, "type": "value", "impact": ["high"], "confidence": "guessed"}),
        ("register_assumption", {"claim": "Store managers will adopt a markdown app"}),  # required fields missing
        ("delete_all_assumptions", {"really": True}),  # no such tool
        ("update_problem_statement", ["Fresh departments lose too much to shrink."]),  # not an object
        ("update_target_audience", 42),  # not an object either
        ("update_problem_statement", {"problem_statement": "x" * 200_000}),  # huge
        ("update_target_audience", {"target_audience": "Fresh department leads"}),  # the one valid call
    ]
    stub.queue_anthropic(
        tool_use_message([("route", ROUTE)]),
        tool_use_message([(name, args, f"toolu_bad_{i}") for i, (name, args) in enumerate(calls)], text="Noting."),
        tool_use_message([("register_assumption", ASSUMPTION, "toolu_fixed")], text="Let me fix that."),
        text_message("Question 1: Who feels this most?"),
        text_message("PM named the audience."),
    )
    record = run_turn(talked, "Fresh department leads feel it. I think store managers will adopt a markdown app.")

    round_two, round_three = [r for r in stub.anthropic_requests() if r.get("stream")][1:]
    # The model's own tool calls go back as valid API content: every tool_use input is an object.
    sent_uses = [b for b in round_two["messages"][-2]["content"] if b["type"] == "tool_use"]
    assert [b["id"] for b in sent_uses] == [f"toolu_bad_{i}" for i in range(len(calls))]
    assert all(isinstance(b["input"], dict) for b in sent_uses)
    results = round_two["messages"][-1]["content"]
    assert [r["tool_use_id"] for r in results] == [f"toolu_bad_{i}" for i in range(len(calls))]
    assert [r["is_error"] for r in results] == [True] * 6 + [False]
    wrong_types, missing, unknown, listed, number, huge, _ = (r["content"] for r in results)
    assert wrong_types.startswith("Invalid arguments for register_assumption") and "claim" in wrong_types
    assert "impact" in wrong_types
    assert missing.startswith("Invalid arguments for register_assumption")
    assert "type: Field required" in missing and "impact: Field required" in missing
    assert unknown.startswith("Unknown tool 'delete_all_assumptions'") and "register_assumption" in unknown
    assert listed.startswith("Invalid arguments for update_problem_statement") and "dictionary" in listed
    assert number.startswith("Invalid arguments for update_target_audience") and "dictionary" in number
    assert huge.startswith("Invalid arguments for update_problem_statement") and len(huge) < 500
    assert round_three["messages"][-1]["content"][0]["is_error"] is False  # the corrected call went through

    assert record.reply.endswith("Question 1: Who feels this most?\n\n**Recorded:**\n- Problem brief: target "
                                 "audience recorded — Fresh department leads\n- Added A1 — Store managers will "
                                 "adopt a markdown app")  # the refused calls are not acknowledged
    assert [c.ok for c in record.tool_calls] == [False] * 6 + [True, True]
    after = talked.state()
    # The refused 200k-character call is recorded, clipped: state.json is read on every turn.
    assert len(json.dumps(after.turns[-1].tool_calls[5].input)) < 3000
    assert after.turns[-1].tool_calls[0].input == calls[0][1]  # small ones are kept as sent
    assert after.problem_brief.problem_statement == before.problem_brief.problem_statement
    assert after.problem_brief.target_audience == "Fresh department leads"
    assert [a.claim for a in after.assumptions] == [ASSUMPTION["claim"]]
    assert after.turn_count == before.turn_count + 1


def test_tool_arguments_that_are_not_json_fail_the_turn_cleanly(talked: Project, stub):
    """The SDK cannot parse the streamed call, so there is no tool_use to answer: the turn fails, nothing saved."""
    before = snapshot(talked)
    broken = tool_use_message([("register_assumption", {})], text="Noting.")
    broken["content"][1]["raw_input_json"] = '{"claim": "Managers will adopt", "type": }'
    stub.queue_anthropic(tool_use_message([("route", ROUTE)]), first_round(), broken)
    with pytest.raises(ForgeError, match="could not read") as exc:
        run_turn(talked, MESSAGE)
    assert one_sentence(str(exc.value)) and "your message is kept" in str(exc.value)
    assert snapshot(talked) == before


# ---------------------------------------------------------------- the terminal hands a failed message back


@pytest.mark.parametrize("failure, said", [
    ("Forge could not reach the model server at http://127.0.0.1:9/v1/ (is it running? start it, or check "
     "OPENAI_BASE_URL); your message is kept.",
     "Forge could not reach the model server at http://127.0.0.1:9/v1/ (is it running? start it, or check "
     "OPENAI_BASE_URL)."),
    ("Claude is overloaded right now; your message is kept, try again in a minute.",
     "Claude is overloaded right now; try again in a minute."),
    ("Claude rejected the API key; check ANTHROPIC_API_KEY. Your message is kept.",
     "Claude rejected the API key; check ANTHROPIC_API_KEY."),
    ("The model sent an empty answer (no text and no tool call); nothing was saved and your message is kept.",
     "The model sent an empty answer (no text and no tool call); nothing was saved."),
    ("Project 'pilot' no longer exists.", "Project 'pilot' no longer exists."),
])
def test_a_failure_read_where_the_message_is_handed_back_drops_the_promise_to_keep_it(failure, said):
    assert without_kept_note(failure) == said


def test_forge_chat_that_cannot_reach_its_server_hands_the_message_back_without_contradicting_itself(isolated_env):
    env = {"FORGE_LLM": "openai", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}
    assert run_forge(isolated_env, "new", "Pilot", env=env).returncode == 0
    run = run_forge(isolated_env, "chat", "pilot", "-m", "We want to cut shrink in 62 stores.", env=env)
    assert run.returncode == 1
    said = run.stderr.strip().splitlines()
    assert said[-2:] == ["Forge could not reach the model server at http://127.0.0.1:9/v1/ (is it running? start "
                         "it, or check OPENAI_BASE_URL). Your message was not saved; here it is to send again:",
                         "We want to cut shrink in 62 stores."]
    assert "kept" not in run.stderr
