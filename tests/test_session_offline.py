"""End to end, offline: a real DOCX, a real Chroma store, the local ONNX embedder, eight turns."""

from __future__ import annotations

import json
from datetime import datetime

from docs import research_docx
from pmforge.core.models import SessionState
from pmforge.ingest.pipeline import delete_file, ingest_file
from pmforge.project.project import Project
from pmforge.turn.orchestrator import run_turn

BURIED_FACT = "The Kestrel loyalty app reaches only 12 percent of enterprise store shoppers, mostly in Ohio."
TURNS = [
    "Our VP of stores, Dana Whitfield, wants shrink in fresh departments cut by a third before next spring.",
    "yes",
    "I think the store managers will adopt a markdown app if it saves them time on Saturdays.",
    "The bakery team already discounts bread after 4pm by hand, with paper labels.",
    "ok, continue",
    "Regional directors review shrink numbers monthly, but nobody owns the follow-up.",
    "We tried dynamic pricing two years ago in produce and it was rolled back.",
    "What share of enterprise shoppers does the loyalty app reach, and who wants the shrink cut?",
]


def test_eight_turn_session(project: Project):
    result = ingest_file(project, "research-q3.docx", research_docx(BURIED_FACT))
    assert result.ok, result.message
    entry = project.manifest().find("research-q3.docx")
    assert entry.indexed and entry.summary
    assert entry.parent_count > 4  # retrieval must choose
    assert (project.ws.uploads / "research-q3.docx").exists()
    converted = project.ws.converted_path("research-q3.docx").read_text()
    assert "| Bakery |" in converted.replace("  ", " ")  # the table survived as Markdown

    embedder, store = project.services.embedder, project.store
    records = []
    for number, message in enumerate(TURNS, start=1):
        queries, vector_queries = embedder.stats.queries, store.stats.vector_queries
        records.append(run_turn(project, message))
        if number in (2, 5):  # filler: no query embedding, no vector query
            assert embedder.stats.queries == queries
            assert store.stats.vector_queries == vector_queries
            assert records[-1].routing.requires_retrieval is False
            assert records[-1].retrieved.documents == [] and records[-1].retrieved.conversations == []
        else:
            assert embedder.stats.queries == queries + 1
            assert records[-1].routing.requires_retrieval is True

    last = records[-1]
    assert last.turn == 8
    # The parent section holding the buried fact came back, with offsets into the converted markdown.
    sections = store.documents.search_documents(embedder.embed_query(TURNS[-1]), 12, 4)
    fact_parents = {s.id for s in sections if BURIED_FACT in s.text}
    assert len(fact_parents) == 1
    shown_from = {d.split("@")[0] for d in last.retrieved.documents}  # a passage id is its parent's + "@start-end"
    assert fact_parents <= shown_from, (last.retrieved.documents, fact_parents)
    for s in sections:
        assert converted[s.start : s.end] == s.text
    # Turn 1's pair came back from conversation memory; recent turns never do.
    assert 1 in last.retrieved.conversations
    assert all(n < 8 - project.settings.recent_turns for n in last.retrieved.conversations)
    assert "12 percent" in last.reply  # the offline interviewer quotes the section it found

    # Tools ran: the hedged statement became an assumption, the probe was recorded.
    state = project.state()
    assert any("markdown app" in a.claim for a in state.assumptions)
    assert state.routing.probes_fired
    assert all(t.indexed and t.summary for t in state.turns)
    assert store.memory.turn_numbers() == set(range(1, 9))

    # state.json round-trips exactly.
    raw = json.loads(project.ws.state_path.read_text())
    assert SessionState.model_validate(raw).model_dump(mode="json") == raw

    # Reopening the project (a new process would do the same) restores the chat.
    reopened = Project.open(project.services, project.ws.slug)
    assert [(t.user, t.assistant) for t in reopened.state().turns] == [(r.user, r.assistant) for r in state.turns]
    assert reopened.reindex_reason() is None


def test_token_report_and_budgets(project: Project):
    ingest_file(project, "research-q3.docx", research_docx(BURIED_FACT))
    record = run_turn(project, TURNS[0])
    tokens = record.tokens
    assert 0 < tokens.phase_a <= project.settings.phase_a_budget
    assert 0 < tokens.phase_b <= project.settings.phase_b_budget
    for section in ("context_block", "assumptions", "skeleton", "routing_context", "probe", "static_prefix"):
        assert tokens.sections[section] > 0, section


def test_delete_removes_chunks_and_entry(project: Project):
    ingest_file(project, "research-q3.docx", research_docx(BURIED_FACT))
    file_id = project.manifest().find("research-q3.docx").file_id
    assert project.store.documents.file_ids() == {file_id}
    delete_file(project, "research-q3.docx")
    assert project.store.documents.file_ids() == set()
    assert project.store.ids("documents") == set()
    assert project.manifest().file_summaries == []
    assert not (project.ws.uploads / "research-q3.docx").exists()
    record = run_turn(project, "What does the research say about the loyalty app?")
    assert record.retrieved.documents == []


def test_reupload_replaces_without_stale_chunks(project: Project):
    ingest_file(project, "research-q3.docx", research_docx(BURIED_FACT))
    old_ids = project.store.ids("documents")
    # Saved again (Word stamps a new modified time): different bytes, same content, no re-index.
    again = research_docx(BURIED_FACT, modified=datetime(2031, 1, 1))
    assert again != research_docx(BURIED_FACT)
    same = ingest_file(project, "research-q3.docx", again)
    assert same.ok and "nothing changed" in same.message
    assert project.store.ids("documents") == old_ids
    replaced = ingest_file(project, "research-q3.docx", research_docx("The Kestrel app now reaches 40 percent."))
    assert replaced.ok and replaced.message.startswith("Replaced")
    new_ids = project.store.ids("documents")
    assert not (new_ids & old_ids)
    entry = project.manifest().find("research-q3.docx")
    assert project.store.documents.file_ids() == {entry.file_id}
    assert len(project.manifest().file_summaries) == 1


def test_clone_without_vectors_is_rebuilt(project: Project, services):
    import shutil

    from pmforge.upkeep.reindex import reindex

    ingest_file(project, "research-q3.docx", research_docx(BURIED_FACT))
    run_turn(project, TURNS[0])
    run_turn(project, TURNS[2])
    # A teammate clones the repo: vectordb/ is not committed.
    clone_root = project.ws.root.parent / "clone"
    shutil.copytree(project.ws.root, clone_root, ignore=shutil.ignore_patterns("vectordb", ".lock"))
    clone = Project.open(services, "clone")
    assert "does not match" in clone.reindex_reason()
    message = reindex(clone)  # a catch-up: adds what the store lacks, drops nothing
    assert "1 file indexed, 2 turns remembered" in message
    assert clone.reindex_reason() is None
    assert clone.store.memory.turn_numbers() == {1, 2}
