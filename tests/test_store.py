"""The store test-suite, run against the embedded client and against a real `chroma run` server; then
what only a server has: names that cannot collide, migration there and back, a server that stops."""

from __future__ import annotations

import os

import pytest
from tenacity import Retrying, retry_if_exception, stop_after_delay, wait_fixed

from chroma_server import ChromaServer
from docs import PLAN, research_docx
from pmforge.core.errors import ForgeError
from pmforge.index.collections import CONVERSATIONS, DOCUMENTS, MEMORY, EmbedderMismatch, ProjectStore, _busy
from pmforge.index.retrieval import Query, find_parents, find_turns
from pmforge.ingest.pipeline import delete_file, ingest_file
from pmforge.project.project import Project
from pmforge.project.services import Services
from pmforge.surfaces.cli import main as forge
from pmforge.turn.orchestrator import run_turn
from pmforge.upkeep import doctor
from pmforge.upkeep.reindex import reindex

NOTES = b"# Interview notes\n\nDana from the Duluth store says the ZX-42 label printer jams every Saturday.\n"


@pytest.fixture(scope="session")
def chroma(tmp_path_factory):
    """The server .ci/run started (FORGE_TEST_CHROMA_PORT), or one of our own for this session."""
    port = os.environ.get("FORGE_TEST_CHROMA_PORT")
    if port:
        yield ChromaServer(tmp_path_factory.mktemp("unused"), int(port))  # not ours to start or stop
        return
    with ChromaServer(tmp_path_factory.mktemp("chroma") / "db") as server:
        yield server


def use_server(monkeypatch, server: ChromaServer | None) -> Services:
    from pmforge.core import settings as config

    if server:
        monkeypatch.setenv("CHROMA_HOST", server.host)
        monkeypatch.setenv("CHROMA_PORT", str(server.port))
    else:
        monkeypatch.delenv("CHROMA_HOST", raising=False)
    config.get_settings.cache_clear()
    return Services.from_settings(config.get_settings())


@pytest.fixture(params=["embedded", "server"])
def backend(request, monkeypatch, isolated_env) -> Services:
    server = request.getfixturevalue("chroma") if request.param == "server" else None
    return use_server(monkeypatch, server)


def _query(project: Project, text: str) -> Query:
    return Query(text, project.services.embedder)


def sections(project: Project, text: str):
    return find_parents(project.store, _query(project, text), 4, "hybrid", project.settings)


def test_documents_are_stored_searched_and_deleted(backend: Services):
    project = Project.create(backend, "Store suite")
    assert (project.store.prefix != "") == bool(backend.settings.chroma_host)
    assert ingest_file(project, "plan.md", PLAN).ok and ingest_file(project, "notes.md", NOTES).ok
    assert ingest_file(project, "research.docx", research_docx("Shrink fell 3 percent in Duluth.")).ok
    hits = sections(project, "Which printer jams on Saturdays?")
    assert hits and hits[0].filename == "notes.md"
    converted = project.ws.converted_path("notes.md").read_text()
    assert hits[0].text == converted[hits[0].start : hits[0].end]  # offsets are exact on either backend
    keyword = project.store.documents.keyword_windows("ZX-42", 4)
    assert keyword and keyword[0][2]["parent_id"] == hits[0].id
    delete_file(project, "notes.md")
    assert all(s.filename != "notes.md" for s in sections(project, "ZX-42 printer"))
    assert project.store.keyword(DOCUMENTS).ids() == project.store.ids(DOCUMENTS)
    assert doctor.examine(project).consistent


def test_conversation_memory_is_stored_and_filtered_by_turn(backend: Services):
    project = Project.create(backend, "Memory suite")
    for message in ("Dana runs the Duluth bakery.", "Weekend shrink is the worst.", "Labels take forty minutes.",
                    "The regional director wants a number by March.", "Okay."):
        run_turn(project, message)
    assert project.store.memory.turn_numbers() == {1, 2, 3, 4, 5}
    query = _query(project, "Who runs the bakery in Duluth?")
    assert find_turns(project.store, query, 1, "hybrid", project.settings)[0].turn_number == 1
    found = find_turns(project.store, query, 3, "hybrid", project.settings, before_turn=3)
    assert {t.turn_number for t in found} == {1, 2}  # nothing from turn 3 on
    assert project.store.keyword(CONVERSATIONS).ids() == project.store.ids(CONVERSATIONS)
    assert doctor.examine(project).consistent


def test_memory_collections_save_their_index_often_even_when_made_before(backend: Services):
    """Conversation memory gains a few vectors a turn: its collections save their vector index every
    `memory_sync_threshold` writes (at Chroma's default of 1,000 each write costs more than the last), and a
    project whose collections were made before that setting is switched when it is opened."""
    project = Project.create(backend, "Sync suite")
    run_turn(project, "Dana runs the Duluth bakery.")
    wanted = project.settings.memory_sync_threshold
    for name in (CONVERSATIONS, MEMORY):
        collection = project.store.collection(name)
        assert collection.configuration["hnsw"]["sync_threshold"] == wanted
        # As an earlier Forge made it. A raw client call: on the suite's shared server another worker's write
        # can make SQLite answer "database is locked", which Forge's own calls wait out; so does this one.
        for attempt in Retrying(retry=retry_if_exception(_busy), stop=stop_after_delay(30), wait=wait_fixed(0.2),
                                reraise=True):
            with attempt:
                collection.modify(configuration={"hnsw": {"sync_threshold": 1000}})
    again = Project.open(backend, project.ws.slug)
    for name in (CONVERSATIONS, MEMORY):
        assert again.store.collection(name).configuration["hnsw"]["sync_threshold"] == wanted
    run_turn(again, "Weekend shrink is the worst.")
    assert again.store.memory.turn_numbers() == {1, 2} and doctor.examine(again).consistent


def test_a_database_busy_with_another_writer_is_waited_for(monkeypatch, isolated_env):
    """A Chroma server several clones share answers "database is locked" now and then (SQLite refuses a
    write that would deadlock with another writer's). That cannot be provoked on cue here, so the refusal
    is injected into the real client: a turn waits it out, and a database that stays busy gives a sentence,
    not a stack trace, with nothing half-written."""
    from chromadb.api.models.Collection import Collection
    from chromadb.errors import InternalError

    from pmforge.index.client import StoreUnavailable
    from pmforge.turn.remember import remember

    project = Project.create(use_server(monkeypatch, None), "Busy suite")
    real_upsert, refusals = Collection.upsert, {"left": 2}

    def upsert(self, *args, **kwargs):
        if refusals["left"]:
            refusals["left"] -= 1
            raise InternalError("Database error: error returned from database: (code: 5) database is locked")
        return real_upsert(self, *args, **kwargs)

    monkeypatch.setattr(Collection, "upsert", upsert)
    run_turn(project, "Dana runs the Duluth bakery.")
    assert refusals["left"] == 0 and project.store.memory.turn_numbers() == {1}
    refusals["left"] = 10**6
    project.store.busy_wait_s = 0.2
    with pytest.raises(StoreUnavailable, match="busy"):
        remember(project.store, project.services.embedder, project.state().turns[0])
    refusals["left"] = 0
    assert doctor.examine(project).consistent


def test_vectors_of_another_embedder_are_refused_until_reindexed(backend: Services):
    project = Project.create(backend, "Mismatch suite")
    ingest_file(project, "plan.md", PLAN)
    other = ProjectStore(project.store.client, "some-other-model:64", project.ws.vectordb / "keyword",
                         prefix=project.store.prefix)
    assert other.upkeep.mismatched() == project.store.signature
    with pytest.raises(EmbedderMismatch):
        other.collection(DOCUMENTS)
    assert reindex(project, force=True).startswith("Re-indexed 1 files")  # only --force drops and rebuilds
    assert doctor.examine(project).consistent


def test_copying_a_store_keeps_every_vector(backend: Services, chroma):
    project = Project.create(backend, "Copy suite")
    ingest_file(project, "notes.md", NOTES)
    run_turn(project, "Dana thinks the printer is the bottleneck.")
    from pmforge.project.project import open_store

    elsewhere = open_store(project.ws, project.store.signature, project.settings.model_copy(
        update={"chroma_host": chroma.host, "chroma_port": chroma.port}), server=not project.store.prefix)
    copied = elsewhere.upkeep.copy_from(project.store)
    assert copied == {name: project.store.collection(name).count() for name in copied}
    assert sorted(r["id"] for r in elsewhere.upkeep.rows(DOCUMENTS)) == sorted(r["id"] for r in project.store.upkeep.rows(DOCUMENTS))
    original = {r["id"]: r["embedding"] for r in project.store.upkeep.rows(DOCUMENTS)}
    assert all(pytest.approx(original[r["id"]], abs=1e-6) == r["embedding"] for r in elsewhere.upkeep.rows(DOCUMENTS))


# ---- only a server


def test_projects_with_the_same_name_never_share_collections(chroma, monkeypatch, isolated_env, tmp_path):
    from pmforge.core import settings as config

    services = use_server(monkeypatch, chroma)
    monkeypatch.setenv("FORGE_PROJECTS_DIR", str(tmp_path / "laptop-a"))
    config.get_settings.cache_clear()
    a = Project.create(Services.from_settings(config.get_settings()), "Pilot")
    monkeypatch.setenv("FORGE_PROJECTS_DIR", str(tmp_path / "laptop-b"))
    config.get_settings.cache_clear()
    b = Project.create(Services.from_settings(config.get_settings()), "Pilot")
    assert a.ws.slug == b.ws.slug == "pilot" and a.store.prefix != b.store.prefix
    ingest_file(a, "plan.md", PLAN)
    ingest_file(b, "notes.md", NOTES)
    assert {a.ws.load_manifest().find("plan.md").file_id} == a.store.documents.file_ids()
    assert {b.ws.load_manifest().find("notes.md").file_id} == b.store.documents.file_ids()
    names = {c.name for c in services and a.store.client.list_collections()}
    assert f"{a.store.prefix}documents" in names and f"{b.store.prefix}documents" in names
    assert a.store.prefix.startswith("forge-pilot-")


def test_migrate_to_the_server_and_back(chroma, monkeypatch, isolated_env, capsys):
    local = use_server(monkeypatch, None)
    project = Project.create(local, "Moving house")
    ingest_file(project, "plan.md", PLAN)
    ingest_file(project, "notes.md", NOTES)
    run_turn(project, "Dana says labels take forty minutes.")
    slug = project.ws.slug

    assert forge(["migrate", slug, "--to-server", "--host", chroma.host, "--port", str(chroma.port)]) == 0
    assert "Copied" in capsys.readouterr().out
    on_server = Project.open(use_server(monkeypatch, chroma), slug)
    assert on_server.store.prefix and on_server.reindex_reason() is None
    assert doctor.examine(on_server).consistent
    assert sections(on_server, "ZX-42 printer")[0].filename == "notes.md"
    run_turn(on_server, "The director wants a number by March.")  # work continues on the server

    assert forge(["migrate", slug, "--to-local"]) == 0  # CHROMA_HOST is still set: that server is the source
    capsys.readouterr()
    back = Project.open(use_server(monkeypatch, None), slug)
    assert back.store.prefix == "" and back.store.memory.turn_numbers() == {1, 2}
    assert doctor.examine(back).consistent


def test_migrate_refuses_a_store_that_does_not_match_the_files(chroma, monkeypatch, isolated_env, capsys):
    project = Project.create(use_server(monkeypatch, None), "Half done")
    ingest_file(project, "plan.md", PLAN)
    project.store.upkeep.drop_all()
    assert forge(["migrate", project.ws.slug, "--to-server", "--host", chroma.host, "--port", str(chroma.port)]) == 1
    assert "forge doctor half-done --fix" in capsys.readouterr().err


def test_a_server_that_stops_mid_session_gives_a_clear_message_and_recovers(monkeypatch, isolated_env, tmp_path):
    server = ChromaServer(tmp_path / "stopping-db").start()
    try:
        project = Project.create(use_server(monkeypatch, server), "Flaky server")
        ingest_file(project, "plan.md", PLAN)
        run_turn(project, "We think weekend shrink is the problem.")
        before = project.ws.state_path.read_bytes()

        server.stop()
        with pytest.raises(ForgeError, match=r"Chroma server at 127\.0\.0\.1:\d+ is not reachable"):
            run_turn(project, "What does the plan say about scope?")
        assert project.ws.state_path.read_bytes() == before  # the turn was not half-saved
        with pytest.raises(ForgeError, match="not reachable"):
            ingest_file(project, "notes.md", NOTES)
        assert (project.ws.uploads / "notes.md").exists()  # the upload is kept

        server.start()  # same data, same port: the same client carries on
        record = run_turn(project, "What does the plan say about scope?")
        assert record.turn == 2
        assert project.recovered is None and not project.ws.operations.marker.exists()
        assert doctor.repair(project).consistent  # the kept upload gets indexed; nothing is orphaned
        assert project.ws.load_manifest().find("notes.md").indexed
    finally:
        server.stop()


def test_a_server_that_is_down_when_a_project_opens_says_so(monkeypatch, isolated_env, tmp_path):
    server = ChromaServer(tmp_path / "down-db").start()
    services = use_server(monkeypatch, server)
    Project.create(services, "Down")
    server.stop()
    from pmforge.index.client import http_client

    http_client.cache_clear()  # a fresh process: no client made while the server was up
    with pytest.raises(ForgeError, match="not reachable.*unset CHROMA_HOST"):
        Project.open(services, "down")
