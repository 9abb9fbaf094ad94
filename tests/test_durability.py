"""Nothing lost: forge doctor finds and repairs every kind of disagreement, interrupted operations are
finished on the next open, a SIGKILL at a named point mid-work leaves a project that recovers and checks clean, a second
window never overwrites a turn, and the log holds no document text."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from docs import PLAN, research_docx
from pmforge.core import transcript
from pmforge.core.errors import ForgeError
from pmforge.core.workspace import Workspace
from pmforge.index.collections import CONVERSATIONS, DOCUMENTS, PARENTS
from pmforge.ingest.pipeline import ingest_file
from pmforge.project.project import Project
from pmforge.surfaces.cli import main as forge
from pmforge.turn.orchestrator import run_turn, start_turn
from pmforge.upkeep import doctor

NOTES = b"# Interview notes\n\nDana from the Duluth store says weekend markdowns happen too late to sell the bread.\n"


@pytest.fixture(scope="module")
def filled_template(tmp_path_factory) -> Path:
    """Three files and two turns, made once per module (ingesting and answering is most of these tests' time);
    each test gets its own copy of the folder, vectors included."""
    from pmforge.core.settings import Settings
    from pmforge.project.services import Services

    root = tmp_path_factory.mktemp("filled") / "projects"
    settings = Settings(projects_dir=root, llm="offline", embeddings="hashing", _env_file=None)
    project = Project.create(Services.from_settings(settings), "Fresh Shrink Pilot")
    assert ingest_file(project, "plan.md", PLAN).ok
    assert ingest_file(project, "notes.md", NOTES).ok
    assert ingest_file(project, "report.docx", research_docx("The Duluth pilot saved 3 percent of fresh shrink.")).ok
    run_turn(project, "We think weekend markdowns come too late; I believe store managers would adopt a fixed time.")
    run_turn(project, "The pilot covers the Midwest stores.")
    assert doctor.examine(project).consistent
    return project.ws.root


@pytest.fixture
def filled(filled_template: Path, services) -> Project:
    shutil.copytree(filled_template, services.projects_root / filled_template.name,
                    ignore=shutil.ignore_patterns(".lock", ".turn.lock"))
    project = Project.open(services, filled_template.name)
    assert doctor.examine(project).consistent
    return project


def problems(project: Project) -> list[str]:
    return [f"[{f.layer}] {f.problem}" for f in doctor.examine(project).findings]


def test_a_healthy_project_is_consistent_from_the_cli(filled: Project, capsys):
    assert forge(["doctor", filled.ws.slug]) == 0
    out = capsys.readouterr().out
    assert "Consistent" in out and "3 files (3 indexed)" in out and "2 turns" in out
    assert forge(["doctor", filled.ws.slug, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["consistent"] and report["problems"] == [] and report["totals"]["turns"] == 2


def test_file_layer_problems_are_reported_then_repaired(filled: Project, capsys):
    ws = filled.ws
    ws.converted_path("notes.md").unlink()
    (ws.uploads / "plan.md").write_bytes(PLAN + b"\n## Budget\nThe pilot budget is 350k.\n")
    (ws.uploads / "stray.md").write_bytes(b"# Stray\n\nA file whose upload was cut off before the manifest.\n")
    (ws.converted / "ghost.md.md").write_text("orphan")
    found = problems(filled)
    assert any("plan.md changed on disk" in p for p in found)
    assert any("converted text of notes.md is missing" in p for p in found)
    assert any("uploads/stray.md is not in the file list" in p for p in found)
    assert any("converted/ghost.md.md" in p for p in found)

    assert forge(["doctor", ws.slug]) == 1
    assert "--fix" in capsys.readouterr().out
    assert forge(["doctor", ws.slug, "--fix"]) == 0
    out = capsys.readouterr().out
    assert out.count("repaired:") == 4 and "Consistent" in out
    manifest = ws.load_manifest()
    assert manifest.find("stray.md").indexed
    assert "350k" in ws.converted_path("plan.md").read_text()
    assert ws.converted_path("notes.md").exists() and not (ws.converted / "ghost.md.md").exists()


def test_a_listed_file_whose_upload_vanished_is_dropped_from_search(filled: Project):
    entry = filled.ws.load_manifest().find("notes.md")
    (filled.ws.uploads / "notes.md").unlink()
    assert any("notes.md is listed but its upload is missing" in p for p in problems(filled))
    report = doctor.repair(filled)
    assert report.consistent
    assert filled.ws.load_manifest().find("notes.md") is None
    assert entry.file_id not in filled.store.documents.file_ids()


def test_vector_layer_orphans_and_partial_files_are_repaired(filled: Project):
    store = filled.store
    report_entry = filled.ws.load_manifest().find("report.docx")
    docs = store.collection(DOCUMENTS)
    some_leaves = docs.get(where={"file_id": report_entry.file_id}, include=[])["ids"][:3]
    docs.delete(ids=some_leaves)
    store.keyword(DOCUMENTS).delete_where("file_id", report_entry.file_id)
    # Passages of a file no manifest lists (an upload killed between the store and the manifest).
    vec = filled.services.embedder.embed_documents(["orphan passage"])[0]
    from pmforge.index.collections import LeafRecord, ParentRecord

    store.documents.add_file("deadbeefdeadbeef", "gone.md", [LeafRecord("deadbeefdeadbeef:p0:l0:w0", "deadbeefdeadbeef:p0:l0",
                   "deadbeefdeadbeef:p0", "orphan passage", 0, 14)], [vec],
                   [ParentRecord("deadbeefdeadbeef:p0", "orphan passage", "Gone", 0, 14)], [vec])
    found = problems(filled)
    assert any("report.docx is only partly in the vector store" in p for p in found)
    assert any("1 file(s) that are no longer listed" in p for p in found)
    report = doctor.repair(filled)
    assert report.consistent, report.findings
    assert "deadbeefdeadbeef" not in store.documents.file_ids()
    counts = store.documents.file_counts()[report_entry.file_id]
    assert counts == (report_entry.parent_count, report_entry.chunk_count)


def test_keyword_and_memory_layers_are_repaired(filled: Project):
    store = filled.store
    store.keyword(DOCUMENTS).clear()
    store.keyword(CONVERSATIONS).delete_where("turn_number", 1)
    said = [f"turn-{t.id}" for t in filled.state().turns]  # memory records are keyed by transcript id
    store.collection(CONVERSATIONS).delete(ids=[said[1]])
    vec = filled.services.embedder.embed_documents(["never said"])[0]
    from pmforge.core.models import RetrievedTurn

    store.memory.upsert_turn(RetrievedTurn(turn_number=9, user="never", assistant="said", summary="never said"), vec)
    report = doctor.examine(filled)
    found = [f"[{f.layer}] {f.problem}" for f in report.findings]
    # A local keyword cache behind Chroma's records is refreshed from them while looking (a note, not a
    # problem): the records were checked first, and refreshing is what every open does anyway.
    assert any("keyword index of the documents" in n for n in report.notes)
    assert store.keyword(DOCUMENTS).ids() == store.ids(DOCUMENTS)
    assert any("1 turn(s) the transcript does not" in p for p in found)
    assert any("1 turn(s) of the transcript are not in the conversation memory" in p for p in found)
    report = doctor.repair(filled)
    assert report.consistent, report.findings
    assert store.memory.turn_numbers() == {1, 2}
    assert store.keyword(DOCUMENTS).ids() == store.ids(DOCUMENTS)
    assert store.keyword(CONVERSATIONS).ids() == set(said)
    assert filled.store.keyword(DOCUMENTS).search("Duluth bread", 3)  # rebuilt from Chroma's texts, searchable


def test_a_keyword_update_cut_short_by_a_crash_is_refreshed_not_reported(filled: Project):
    """A kill between a record's write to Chroma and its keyword cache's stamp leaves the cache one update
    behind; doctor refreshes it from the records and still finds the project consistent."""
    store = filled.store
    stamps = json.loads(store.stamps_path.read_text(encoding="utf-8"))
    stamps[CONVERSATIONS]["keyword_records"] += 1  # the update's stamp was never written
    store.stamps_path.write_text(json.dumps(stamps), encoding="utf-8")
    assert not store.upkeep.keyword_current(CONVERSATIONS)
    report = doctor.examine(filled)
    assert report.consistent, report.findings
    assert any("cut short" in n for n in report.notes)
    assert store.upkeep.keyword_current(CONVERSATIONS)


def test_an_interrupted_operation_is_finished_when_the_project_is_next_opened(filled: Project, services):
    ws = filled.ws
    # What a crash between the store write and the manifest save leaves: the marker and orphan passages.
    ws.operations.marker.write_text(json.dumps({"operation": "upload gone.md", "pid": 1}))
    (ws.uploads / "gone.md").write_bytes(b"# Gone\n\nThe upload finished but the manifest was never written.\n")
    reopened = Project.open(services, ws.slug)
    assert reopened.recovered == "upload gone.md"
    assert not ws.operations.marker.exists()
    # Opening stays quick: the upload is listed for a retry, and forge doctor --fix finishes it.
    assert reopened.ws.load_manifest().find("gone.md").status == "not indexed: interrupted — retry"
    assert doctor.repair(reopened).consistent
    assert reopened.ws.load_manifest().find("gone.md").indexed


def test_an_operation_in_progress_elsewhere_is_not_mistaken_for_a_crash(filled: Project, services):
    with filled.ws.operations.marked("upload busy.md"):
        # Another thread (another Streamlit session) opening the project must not "recover" live work.
        import threading

        seen = {}
        t = threading.Thread(target=lambda: seen.setdefault("r", Project.open(services, filled.ws.slug).recovered))
        t.start()
        t.join()
        assert seen["r"] is None
        assert filled.ws.operations.marker.exists()
    assert not filled.ws.operations.marker.exists()


def test_a_second_window_cannot_overwrite_a_turn(filled: Project, services):
    other_window = Project.open(services, filled.ws.slug)
    slow = start_turn(filled, "What should the pilot measure first?")
    run_turn(other_window, "Dana says bread sells out by noon on Saturdays.")  # answered meanwhile
    with pytest.raises(ForgeError, match="changed in another window"):
        slow.finish()
    state = filled.ws.load_state()
    assert [t.number for t in state.turns] == [1, 2, 3]
    assert "bread sells out" in state.turns[-1].user
    assert doctor.examine(filled).consistent


def test_the_lock_is_reentrant_and_a_busy_project_says_so(filled: Project):
    ws = filled.ws
    with ws.locked(), ws.locked():  # an operation calling another (delete promoting a twin) must not deadlock
        code = ("import sys; sys.path.insert(0, %r); from pmforge.core.workspace import Workspace; "
                "from pmforge.core.errors import ForgeError\n"
                "try:\n    Workspace(%r).locked(timeout=0.2).__enter__()\nexcept ForgeError as e:\n    print(e)")
        out = subprocess.run([sys.executable, "-c", code % (str(Path(__file__).parents[1] / "src"), str(ws.root))],
                             capture_output=True, text=True, timeout=60).stdout
    assert "is busy in another Forge window or command" in out


def test_the_log_records_operations_but_never_document_text(filled: Project, isolated_env, capsys):
    assert forge(["doctor", filled.ws.slug]) == 0  # the CLI opens the log (the default folder: ./logs)
    capsys.readouterr()
    assert forge(["chat", filled.ws.slug, "-m", "Dana thinks the Duluth bakery buy-back is never claimed."]) == 0
    assert forge(["ingest", filled.ws.slug, str(_write(isolated_env / "extra.md", NOTES + b"\nZephyrine 4471.\n"))]) == 0
    log = (isolated_env / "logs" / "forge.log").read_text()
    assert "turn 3 saved" in log and "indexed extra.md" in log
    for secret_text in ("Duluth", "buy-back", "Zephyrine", "Midwest", "markdowns"):
        assert secret_text not in log
    assert not any(p.name == "forge.log" for p in Path.home().glob("**/forge.log") if "pytest" not in str(p))


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


# ---- SIGKILL at named points in the middle of work

# One operation per worker, killed by the crash point it names (OperationJournal.crash_point, FORGE_CRASH_AT).
WORKER = textwrap.dedent("""
    import sys
    from pmforge.core.settings import get_settings
    from pmforge.ingest.pipeline import delete_file, ingest_file
    from pmforge.project.project import Project
    from pmforge.project.services import Services
    from pmforge.turn.orchestrator import run_turn

    project = Project.open(Services.from_settings(get_settings()), sys.argv[1])
    if sys.argv[2] == "upload":
        ingest_file(project, "late.md", b"# Late notes\\n\\nDana says the Duluth markdown walk should start at four.\\n")
    elif sys.argv[2] == "delete":
        delete_file(project, "notes.md")
    else:
        run_turn(project, "Dana says the markdown walk should start at four, not six.")
    print("finished: the crash point was never reached")
""")

# FORGE_CRASH_AT -> the operation the marker left behind must name.
CRASH_POINTS = {
    "upload:indexed": "upload late.md",  # the upload's vectors are stored, the manifest does not list it yet
    "delete:unindexed": "delete notes.md",  # the file's vectors are gone, the manifest still lists it
    "turn:appended": "turn 3",  # the turn is in turns.jsonl, state.json not yet saved
}


def _all_json_parses(root: Path) -> None:
    for path in root.rglob("*.json"):
        json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("point", CRASH_POINTS, ids=list(CRASH_POINTS))
def test_a_sigkill_at_a_named_point_leaves_a_project_that_recovers(filled_template: Path, services, isolated_env,
                                                                  capsys, point):
    # A copy nobody in this process has opened: the worker is the only one using its vector store until it dies.
    root = services.projects_root / filled_template.name
    shutil.copytree(filled_template, root, ignore=shutil.ignore_patterns(".lock", ".turn.lock"))
    ws = Workspace(root)
    state_before, notes = ws.state_path.read_bytes(), ws.load_manifest().find("notes.md")
    env = {**os.environ, "FORGE_CRASH_AT": point,
           "PYTHONPATH": os.pathsep.join(filter(None, [str(Path(__file__).parents[1] / "src"),
                                                       os.environ.get("PYTHONPATH")]))}
    worker = subprocess.run([sys.executable, "-c", WORKER, ws.slug, point.split(":")[0]], env=env, cwd=isolated_env,
                            capture_output=True, text=True, timeout=300)

    # (a) It died by SIGKILL, inside the operation the crash point names, with that step's work on disk.
    assert worker.returncode == -signal.SIGKILL, worker.stdout + worker.stderr
    assert json.loads(ws.operations.marker.read_text(encoding="utf-8"))["operation"] == CRASH_POINTS[point]
    _all_json_parses(root)
    crashed = Project(ws, services)  # opened without recovering, to see what the kill left
    manifest = ws.load_manifest()
    if point == "upload:indexed":
        assert manifest.find("late.md") is None and (ws.uploads / "late.md").is_file()
        assert crashed.store.collection(PARENTS).get(where={"filename": "late.md"})["ids"]
    elif point == "delete:unindexed":
        assert manifest.find("notes.md") == notes and notes.file_id not in crashed.store.documents.file_ids()
    else:
        assert [t.number for t in transcript.load(ws.transcript_path)] == [1, 2, 3]
        assert ws.state_path.read_bytes() == state_before

    # (b) The first open after the kill, `forge doctor`, finishes what it cut short; the project checks clean.
    capsys.readouterr()
    assert forge(["doctor", ws.slug]) == 0
    out = capsys.readouterr().out
    assert f"Finished an operation a crash interrupted ({CRASH_POINTS[point]})." in out and "Consistent" in out
    assert not ws.operations.marker.exists()
    _all_json_parses(root)
    reopened = Project.open(services, ws.slug)
    if point == "upload:indexed":  # the interrupted upload is indexed afresh, once
        entry = reopened.manifest().find("late.md")
        assert entry.indexed and reopened.store.documents.file_counts()[entry.file_id] == (entry.parent_count, entry.chunk_count)
    elif point == "delete:unindexed":  # the delete is finished
        assert reopened.manifest().find("notes.md") is None and not (ws.uploads / "notes.md").exists()
    else:  # the turn the PM saw is kept, and remembered
        assert [t.number for t in reopened.state().turns] == [1, 2, 3] and reopened.store.memory.turn_numbers() == {1, 2, 3}
    assert forge(["doctor", ws.slug, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["consistent"] and report["recovered"] is None  # nothing left to recover the second time
