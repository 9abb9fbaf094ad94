"""Team mode: two clones of one project (the committed files copied, vectordb/ not) on one real `chroma run`.

Neither clone ever drops the shared collections implicitly; each clone's memory searches only its own
transcript; files stay while any clone claims them; destructive work is serialised by a lease."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from chroma_server import ChromaServer
from docs import PLAN, research_docx
from forge_cli import run_forge
from pmforge.core.errors import ForgeError
from pmforge.index.collections import (
    CONVERSATIONS,
    DOCUMENTS,
    MEMORY,
    PARENTS,
    LeaseHeld,
    ProjectStore,
    StoreGone,
    turn_record_id,
)
from pmforge.index.retrieval import Query, find_sections, find_turns
from pmforge.ingest.pipeline import delete_file, ingest_file
from pmforge.project.project import Project
from pmforge.project.services import Services
from pmforge.surfaces.cli.common import open_project
from pmforge.turn.orchestrator import run_turn
from pmforge.upkeep import doctor
from pmforge.upkeep.reindex import reindex

SRC = str(Path(__file__).resolve().parents[1] / "src")
NOTES = b"# Interview notes\n\nDana from the Duluth store says the ZX-42 label printer jams every Saturday.\n"
ALICE_SAYS = ["Alice here: the Zanzibar warehouse loses pallets every Tuesday.",
              "Alice again: our Quetzal scanner pilot starts in May."]
BOB_SAYS = ["Bob here: the Kookaburra bakery throws away bread at closing.",
            "Bob again: the Wombat dairy supplier delivers late on Mondays."]


@pytest.fixture(scope="module")
def chroma(tmp_path_factory):
    with ChromaServer(tmp_path_factory.mktemp("team-chroma") / "db") as server:
        yield server


def clone_services(root: Path, server: ChromaServer, author: str) -> Services:
    """One clone's services: its own projects folder, the shared server, its author label."""
    from pmforge.core import settings as config

    settings = config.get_settings().model_copy(update={
        "projects_dir": root, "chroma_host": server.host, "chroma_port": server.port, "author": author})
    return Services.from_settings(settings)


def clone_of(project: Project, root: Path) -> Path:
    """What `git clone` gives a teammate: the committed files, without vectordb/, .lock, .operation.json."""
    target = root / project.ws.slug
    shutil.copytree(project.ws.root, target, ignore=shutil.ignore_patterns("vectordb", ".lock", ".operation.json"))
    return target


def collection_ids(store: ProjectStore) -> dict[str, str]:
    return {c.name: str(c.id) for c in store.client.list_collections() if c.name.startswith(store.prefix)}


def record_counts(store: ProjectStore) -> dict[str, int]:
    """Records of the searched collections (the registry holds claims and the lease, which come and go)."""
    return {c.name: store.client.get_collection(c.name).count() for c in store.client.list_collections()
            if c.name.startswith(store.prefix) and not c.name.endswith("registry")}


def counting_embeddings(monkeypatch, project: Project) -> list[int]:
    """Count the texts this clone embeds (documents and turns)."""
    embedder = project.services.embedder
    texts: list[int] = []
    original = embedder.embed_documents

    def counted(batch):
        texts.append(len(batch))
        return original(batch)

    monkeypatch.setattr(embedder, "embed_documents", counted)
    return texts


def memory_words(project: Project, query: str, retriever: str) -> str:
    found = find_turns(project.store, Query(query, project.services.embedder), 10, retriever, project.settings)
    return "\n".join(t.user for t in found)


@pytest.fixture
def team(chroma, tmp_path):
    """Alice's project with one file and two turns, committed; Bob's clone of it, opened (caught up)."""
    alice_services = clone_services(tmp_path / "alice", chroma, "alice")
    alice = Project.create(alice_services, "Pilot")
    assert ingest_file(alice, "plan.md", PLAN).ok
    for message in ALICE_SAYS:
        run_turn(alice, message)
    clone_of(alice, tmp_path / "bob")
    bob_services = clone_services(tmp_path / "bob", chroma, "bob")
    return alice, bob_services


def test_two_clones_work_interleaved_without_dropping_or_colliding(team, monkeypatch):
    alice, bob_services = team
    before_ids, before_counts = collection_ids(alice.store), record_counts(alice.store)

    bob = Project.open(bob_services, "pilot")
    assert bob.store.prefix == alice.store.prefix  # same project id: the same shared collections
    assert bob.store.clone.id != alice.store.clone.id and bob.store.clone.author == "bob"
    upkeep = bob.upkeep()
    # A fresh clone: its keyword cache is empty and it has claimed nothing, but nothing needs embedding.
    assert upkeep.stale_keywords and upkeep.unclaimed_files and not upkeep.missing_files and not upkeep.unremembered
    embedded = counting_embeddings(monkeypatch, bob)
    bob = open_project(bob_services, "pilot")  # what every CLI command does on opening
    assert sum(embedded) == 0 and bob.reindex_reason() is None
    assert {c["author"] for c in bob.store.claims.all()[bob.manifest().find("plan.md").file_id]} == {"alice", "bob"}
    assert collection_ids(bob.store) == before_ids and record_counts(bob.store) == before_counts

    # Interleaved turns and uploads from both clones; both write turn 3 and turn 4.
    run_turn(bob, BOB_SAYS[0])
    run_turn(alice, "Alice: the Zanzibar pallets go missing after the night shift.")
    assert ingest_file(bob, "research.docx", research_docx("Shrink fell 3 percent in Duluth.")).ok
    assert ingest_file(alice, "notes.md", NOTES).ok
    run_turn(bob, BOB_SAYS[1])
    run_turn(alice, "Alice: the Quetzal scanners arrive in April.")

    assert [t.number for t in bob.state().turns] == [1, 2, 3, 4] == [t.number for t in alice.state().turns]
    assert len(alice.store.memory.turn_ids()) == 6  # 2 shared + 2 of Alice's + 2 of Bob's: no turn overwrote another
    assert collection_ids(alice.store) == before_ids  # nothing was dropped
    after = record_counts(alice.store)
    assert all(after[name] >= count for name, count in before_counts.items())

    for retriever in ("vector", "bm25", "hybrid"):
        bobs = memory_words(bob, "Kookaburra bakery bread Wombat dairy", retriever)
        alices = memory_words(alice, "Kookaburra bakery bread Wombat dairy", retriever)
        assert "Kookaburra" in bobs or "Wombat" in bobs
        assert "Kookaburra" not in alices and "Wombat" not in alices, retriever
        alices = memory_words(alice, "Zanzibar night shift Quetzal scanners April", retriever)
        bobs = memory_words(bob, "Zanzibar night shift Quetzal scanners April", retriever)
        assert "night shift" in alices or "April" in alices
        assert "night shift" not in bobs and "April" not in bobs, retriever
    # The turns both clones share (Alice's first two, committed before the clone) are found by both.
    assert "Zanzibar warehouse" in memory_words(bob, "Zanzibar warehouse pallets Tuesday", "hybrid")

    for project in (alice, bob):
        report = doctor.examine(project)
        assert report.consistent, report.findings
        assert any("belong to another clone" in note for note in report.notes)
    assert any("research.docx belongs to another clone (bob)" in n for n in doctor.examine(alice).notes)
    assert any("notes.md belongs to another clone (alice)" in n for n in doctor.examine(bob).notes)
    assert doctor.repair(bob).consistent  # --fix never deletes Alice's file or turns
    assert record_counts(alice.store) == after and collection_ids(alice.store) == before_ids
    assert doctor.examine(alice).consistent


def test_a_turn_searches_only_the_files_its_own_clone_lists(real_embedder, team):
    alice, bob_services = team
    bob = open_project(bob_services, "pilot")
    assert ingest_file(alice, "notes.md", NOTES).ok  # on the server, but not in Bob's manifest
    question = "What did Dana from the Duluth store say about the ZX-42 label printer jams on Saturday?"
    alices = run_turn(alice, question).retrieved.documents
    bobs = run_turn(bob, question).retrieved.documents
    notes_id = alice.manifest().find("notes.md").file_id
    assert any(notes_id in section for section in alices)
    assert bobs and not any(notes_id in section for section in bobs)  # Bob still finds his own files


def test_a_file_goes_only_when_the_last_clone_that_lists_it_deletes_it(team):
    alice, bob_services = team
    bob = open_project(bob_services, "pilot")
    plan_id = alice.manifest().find("plan.md").file_id
    assert ingest_file(alice, "notes.md", NOTES).ok
    notes_id = alice.manifest().find("notes.md").file_id

    delete_file(alice, "plan.md")
    assert plan_id in alice.store.documents.file_ids()  # Bob still lists it: its vectors stay
    hits = find_sections(bob.store, Query("pilot plan stores weeks", bob.services.embedder), 2000, "hybrid",
                         bob.settings)
    assert any(h.filename == "plan.md" for h in hits)
    assert doctor.examine(alice).consistent and doctor.examine(bob).consistent
    delete_file(bob, "plan.md")
    assert plan_id not in alice.store.documents.file_ids()  # the last claim went: so did the vectors

    delete_file(alice, "notes.md")  # listed by Alice alone
    assert notes_id not in alice.store.documents.file_ids()
    assert doctor.examine(alice).consistent and doctor.examine(bob).consistent


def test_only_reindex_force_drops_and_other_clones_recover(team, capsys):
    alice, bob_services = team
    bob = open_project(bob_services, "pilot")
    run_turn(bob, BOB_SAYS[0])
    assert ingest_file(bob, "notes.md", NOTES).ok
    ids = collection_ids(alice.store)

    assert reindex(alice) .startswith("Caught up") and collection_ids(alice.store) == ids  # plain: no drop
    assert reindex(alice, force=True).startswith("Re-indexed 1 files and 2 turns")
    changed = collection_ids(alice.store)
    assert all(changed[name] != ids[name] for name in ids if not name.endswith("registry"))

    # Bob's cached collection handles point at the dropped collections: fetched again, no crash.
    assert "Kookaburra" not in memory_words(bob, "Kookaburra bakery", "hybrid")  # gone until Bob catches up
    assert "Kookaburra" not in memory_words(alice, "Kookaburra bakery", "hybrid")
    assert "notes.md" in bob.reindex_reason() or "does not match" in bob.reindex_reason()
    bob = open_project(bob_services, "pilot")  # Bob's catch-up adds back his file and his turn, dropping nothing
    assert collection_ids(bob.store) == changed
    assert "Kookaburra" in memory_words(bob, "Kookaburra bakery", "hybrid")
    assert bob.reindex_reason() is None and doctor.examine(bob).consistent and doctor.examine(alice).consistent


def test_a_lease_serialises_destructive_work(team):
    alice, bob_services = team
    bob = open_project(bob_services, "pilot")
    ids = collection_ids(alice.store)
    with alice.store.claims.lease("rebuilding", 600):
        with pytest.raises(LeaseHeld, match=r"Another clone of this project \(alice\) is rebuilding"):
            reindex(bob, force=True)
        with pytest.raises(LeaseHeld, match="alice"):
            doctor.repair(bob)
        assert collection_ids(alice.store) == ids  # nothing was dropped while Alice held it
    with bob.store.claims.lease("repairing", -1):  # a holder that died: the lease expires and anyone may take it
        assert doctor.repair(alice).consistent
    assert reindex(bob, force=True).startswith("Re-indexed")


def test_a_vanished_collection_is_fetched_again_or_reported_in_one_sentence(team):
    alice, bob_services = team
    bob = open_project(bob_services, "pilot")
    stale = bob.store.collection(CONVERSATIONS)
    bob.store.client.delete_collection(f"{bob.store.prefix}{CONVERSATIONS}")  # another clone dropped it
    assert bob.store.memory.turn_ids() == set()  # fetched again (empty now), not a crash
    monkeypatched = bob.store.collection
    bob.store.collection = lambda name: stale if name == CONVERSATIONS else monkeypatched(name)
    with pytest.raises(StoreGone, match=r"^This project's collections on the Chroma server .* were removed"):
        bob.store.memory.turn_ids()


def test_memory_from_before_turn_ids_is_adopted_without_embedding(team, monkeypatch):
    alice, _ = team
    store, turns = alice.store, alice.state().turns
    for turn in turns:  # what an older Forge stored: records keyed by turn number, with no id and no clone
        old, new = f"turn-{turn.number}", turn_record_id(turn.id)
        for name in (CONVERSATIONS, MEMORY):
            col = store.collection(name)
            got = col.get(ids=[new] + [f"{new}:p{i}" for i in range(64)],
                          include=["embeddings", "documents", "metadatas"])
            legacy = [{k: v for k, v in m.items() if k not in ("turn_id", "clone", "author")} for m in got["metadatas"]]
            col.add(ids=[old + i[len(new):] for i in got["ids"]], embeddings=[list(e) for e in got["embeddings"]],
                    documents=got["documents"], metadatas=legacy)
            col.delete(ids=got["ids"])
            # An older Forge's collections carry no content stamp either.
            col.modify(metadata={k: v for k, v in col.metadata.items() if k.startswith("embedder")})
    assert store.memory.turn_ids() == {"1", "2"} and "2 turns" in alice.reindex_reason()
    embedded = counting_embeddings(monkeypatch, alice)
    assert "0 turns remembered" in reindex(alice)
    assert sum(embedded) == 0 and store.memory.turn_ids() == {t.id for t in turns}
    assert "Zanzibar" in memory_words(alice, "Zanzibar warehouse pallets", "hybrid")
    assert doctor.examine(alice).consistent


def test_a_merged_transcript_shares_the_other_clones_turns_on_purpose(team):
    alice, bob_services = team
    bob = open_project(bob_services, "pilot")
    run_turn(alice, "Alice: the Zanzibar pallets go missing after the night shift.")
    assert "night shift" not in memory_words(bob, "Zanzibar night shift", "hybrid")
    # git's union merge of turns.jsonl: Bob's transcript now holds Alice's turn 3 too.
    with open(bob.ws.transcript_path, "ab") as fh:
        fh.write(alice.ws.transcript_path.read_bytes().splitlines(keepends=True)[-2])
    bob = open_project(bob_services, "pilot")
    assert "night shift" in memory_words(bob, "Zanzibar night shift", "vector")
    assert "night shift" in memory_words(bob, "Zanzibar night shift", "bm25")


def test_vectors_of_another_embedder_on_the_server_need_reindex_force(team, tmp_path):
    alice, bob_services = team
    for name in (DOCUMENTS, PARENTS):
        alice.store.client.delete_collection(f"{alice.store.prefix}{name}")
    other = ProjectStore(alice.store.client, "some-other-model:64", tmp_path / "kw", prefix=alice.store.prefix)
    other.collection(DOCUMENTS)  # a teammate with another embedder filled it
    ids = collection_ids(alice.store)
    with pytest.raises(ForgeError, match=r"run `forge reindex --force pilot` to rebuild them for every clone\.$"):
        reindex(alice)
    assert collection_ids(alice.store) == ids
    assert reindex(alice, force=True).startswith("Re-indexed 1 files")
    assert alice.reindex_reason() is None


def _forge(args: list[str], root: Path, server: ChromaServer, author: str) -> subprocess.CompletedProcess:
    """The real `forge` command as that clone's author would run it (in this process)."""
    return run_forge(root, *args, env={"FORGE_PROJECTS_DIR": str(root), "CHROMA_HOST": server.host,
                                       "CHROMA_PORT": str(server.port), "FORGE_AUTHOR": author})


def test_the_cli_says_what_reindex_force_will_drop_before_doing_it(team, chroma, tmp_path):
    alice, _ = team
    plain = _forge(["reindex", "pilot"], tmp_path / "bob", chroma, "bob")
    assert plain.returncode == 0 and "nothing was dropped" in plain.stdout, plain.stderr
    with alice.store.claims.lease("rebuilding", 600):
        refused = _forge(["reindex", "pilot", "--force"], tmp_path / "bob", chroma, "bob")
    assert refused.returncode == 1 and "holds its lease" in refused.stderr and "Traceback" not in refused.stderr
    forced = _forge(["reindex", "pilot", "--force"], tmp_path / "bob", chroma, "bob")
    assert forced.returncode == 0, forced.stderr
    assert "every clone's files and turns included" in forced.stderr and forced.stdout.startswith("Re-indexed")
