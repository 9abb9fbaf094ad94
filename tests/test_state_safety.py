"""Workspace state that never loses anything: a finishing turn merges with (or refuses) what another window
saved, an interrupted upload is listed for a retry instead of redone by an unrelated command, git conflicts
in a committed workspace are resolved keeping both sides, failures on user input leave no false "crash",
names in any script get a folder, and a busy project keeps a second message instead of dropping it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from docs import PLAN
from forge_cli import run_forge
from pmforge.core import conflicts
from pmforge.core.errors import ForgeError
from pmforge.core.models import ToolCallRecord
from pmforge.core.workspace import Workspace, slugify
from pmforge.ingest.pipeline import ingest_file
from pmforge.project.project import Project
from pmforge.turn.orchestrator import run_turn, start_turn

ROOT = Path(__file__).parents[1]
HEDGED = "I think store managers would adopt a fixed markdown time if labels printed faster."


def _env(tmp: Path, **env) -> dict:
    return {"FORGE_PROJECTS_DIR": str(tmp / "projects"), "FORGE_LLM": "offline",
            "FORGE_EMBEDDINGS": os.environ.get("FORGE_EMBEDDINGS", "local"),
            "ANTHROPIC_API_KEY": None, "VOYAGE_API_KEY": None, "CHROMA_HOST": None, **env}


def forge(tmp: Path, *args: str, **env) -> subprocess.CompletedProcess:
    """The real `forge` command, offline, with the test's projects folder (run in this process)."""
    return run_forge(tmp, *args, env=_env(tmp, **env))


def forge_process(tmp: Path, *args: str, timeout: float = 300, **env) -> subprocess.CompletedProcess:
    """The same in a process of its own: for a command that must meet this process's locks as another
    window's would."""
    full = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}"}
    for name, value in _env(tmp, **env).items():
        if value is None:
            full.pop(name, None)
        else:
            full[name] = value
    return subprocess.run([sys.executable, "-m", "pmforge.surfaces.cli", *args], cwd=tmp, env=full, capture_output=True,
                          text=True, timeout=timeout)


# ---------------------------------------------------------------- a finishing turn and another window's save


def _other_window_sets_audience(project: Project, audience: str) -> None:
    ws = Workspace(project.ws.root)  # another handle, as another process would have
    with ws.locked():
        state = ws.load_state()
        state.problem_brief.target_audience = audience
        ws.save_state(state)


def test_a_finishing_turn_keeps_what_another_window_saved_meanwhile(project: Project):
    run_turn(project, "We want to cut fresh shrink in the bakery.")
    pending = start_turn(project, HEDGED)
    for _ in pending:  # the reply streams; its tools change the turn's working copy
        pass
    assert any(c.ok and c.name == "register_assumption" for c in pending.execution.result.tool_calls)
    _other_window_sets_audience(project, "Bakery leads in Ohio stores")

    record = pending.finish()
    state = project.ws.load_state()
    assert record.turn == 2 and [t.number for t in state.turns] == [1, 2]
    assert state.problem_brief.target_audience == "Bakery leads in Ohio stores"  # the other window's edit
    assert any("fixed markdown time" in a.claim for a in state.assumptions)  # this turn's tool effect


def test_a_turn_whose_changes_no_longer_fit_is_refused_in_one_sentence(project: Project):
    run_turn(project, HEDGED)
    assert project.ws.load_state().assumptions
    pending = start_turn(project, "Labels take forty minutes a round.")
    for _ in pending:
        pass
    pending.execution.result.tool_calls.append(ToolCallRecord(
        name="update_assumption_confidence", input={"id": "A1", "confidence": "informed", "reason": "measured"},
        ok=True, result="ok"))
    other = Workspace(project.ws.root)
    with other.locked():  # another window drops the assumption this turn's call changes
        state = other.load_state()
        state.assumptions = []
        other.save_state(state)

    with pytest.raises(ForgeError, match="no longer fit") as refused:
        pending.finish()
    assert "\n" not in str(refused.value)
    state = project.ws.load_state()
    assert state.assumptions == [] and state.turn_count == 1  # the other window's save stands, nothing half-saved


def test_two_turns_started_together_never_both_save_under_one_number(project: Project, services):
    other = Project.open(services, project.ws.slug)
    slow = start_turn(project, "What should the pilot measure first?")
    run_turn(other, "Dana says bread sells out by noon on Saturdays.")
    with pytest.raises(ForgeError, match="another message was answered first"):
        slow.finish()
    assert [t.number for t in project.ws.load_state().turns] == [1]


# ---------------------------------------------------------------- bounded recovery

BIG = ("# Field report\n\n" + "\n\n".join(
    f"## Store {i}\n" + " ".join(f"Store {i} notes markdown timing, label printing and weekend staffing gaps "
                                 f"in week {w}." for w in range(40)) for i in range(60))).encode()


def test_an_upload_stopped_mid_way_is_listed_for_a_retry_not_redone_by_forge_files(isolated_env):
    tmp = isolated_env
    assert forge(tmp, "new", "Slow").returncode == 0
    (tmp / "big.md").write_bytes(BIG)
    root = tmp / "projects" / "slow"
    env = {**os.environ, "FORGE_PROJECTS_DIR": str(tmp / "projects"), "FORGE_LLM": "offline",
           "FORGE_EMBEDDINGS": os.environ.get("FORGE_EMBEDDINGS", "local"), "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}"}
    upload = subprocess.Popen([sys.executable, "-m", "pmforge.surfaces.cli", "ingest", "slow", str(tmp / "big.md")],
                              cwd=tmp, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    # Converted, its operation still marked: embedding (the slow part) is under way. Stopped at once: an idle
    # machine embeds the whole file in well under a second.
    while not ((root / "converted" / "big.md.md").exists() and (root / ".operation.json").exists()):
        assert upload.poll() is None, upload.stderr.read()
        assert time.monotonic() < deadline
        time.sleep(0.01)
    upload.send_signal(signal.SIGTERM)
    upload.wait(timeout=60)
    assert upload.returncode == -signal.SIGTERM and (root / ".operation.json").exists()

    started = time.monotonic()
    files = forge(tmp, "files", "slow")
    assert time.monotonic() - started < 60  # the hard limit: it used to re-run the whole upload first
    assert files.returncode == 0, files.stderr
    assert "big.md" in files.stdout and "not indexed: interrupted — retry" in files.stdout
    assert "upload big.md" in files.stderr and "forge doctor --fix slow" in files.stderr  # said, once
    assert not (root / ".operation.json").exists() and not (root / "converted" / "big.md.md").exists()

    doctor = forge(tmp, "doctor", "slow")
    assert "Indexing big.md was interrupted" in doctor.stdout and doctor.returncode == 1
    assert "Finished an operation" not in doctor.stdout  # nothing is mistaken for a fresh crash


def test_recovery_on_open_is_quick_and_forge_doctor_still_finishes_the_work(project: Project, services):
    from pmforge.upkeep import doctor
    ws = project.ws
    ws.operations.marker.write_text(json.dumps({"operation": "upload gone.md", "pid": 1}))
    (ws.uploads / "gone.md").write_bytes(b"# Gone\n\nThe upload finished but the manifest was never written.\n")
    reopened = Project.open(services, ws.slug)
    assert reopened.recovered == "upload gone.md" and not ws.operations.marker.exists()
    assert ws.load_manifest().find("gone.md").status == "not indexed: interrupted — retry"
    report = doctor.repair(reopened)
    assert report.consistent, report.findings
    assert ws.load_manifest().find("gone.md").indexed


def test_an_interrupted_delete_is_finished_quickly_on_open(project: Project, services):
    assert ingest_file(project, "plan.md", PLAN).ok
    entry = project.ws.load_manifest().find("plan.md")
    project.store.documents.delete_file(entry.file_id)  # the crash came after the store, before the manifest
    project.ws.operations.marker.write_text(json.dumps({"operation": "delete plan.md", "pid": 1}))
    reopened = Project.open(services, project.ws.slug)
    assert reopened.recovered == "delete plan.md"
    assert project.ws.load_manifest().find("plan.md") is None
    assert not (project.ws.uploads / "plan.md").exists()


# ---------------------------------------------------------------- git conflicts


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, timeout=60)


@pytest.fixture
def merged(isolated_env) -> Path:
    """A committed workspace two clones changed: each chatted and uploaded a file, then one merged the other."""
    tmp = isolated_env
    assert forge(tmp, "new", "Pilot").returncode == 0
    (tmp / ".gitattributes").write_text((ROOT / ".gitattributes").read_text())
    (tmp / ".gitignore").write_text((ROOT / ".gitignore").read_text())
    for args in (("init", "-q", "-b", "main"), ("config", "user.email", "pm@example.com"),
                 ("config", "user.name", "PM")):
        _git(tmp, *args)
    assert forge(tmp, "chat", "pilot", "-m", "We want to cut fresh shrink in the bakery.").returncode == 0
    _git(tmp, "add", "-A"), _git(tmp, "commit", "-qm", "start")
    _git(tmp, "checkout", "-qb", "other")
    (tmp / "theirs.md").write_bytes(b"# Their notes\n\nDana says the buy-back is never claimed.\n")
    assert forge(tmp, "ingest", "pilot", str(tmp / "theirs.md")).returncode == 0
    assert forge(tmp, "chat", "pilot", "-m", "I believe suppliers would take back unsold bread.").returncode == 0
    _git(tmp, "add", "-A"), _git(tmp, "commit", "-qm", "other clone")
    _git(tmp, "checkout", "-q", "main")
    (tmp / "ours.md").write_bytes(PLAN)
    assert forge(tmp, "ingest", "pilot", str(tmp / "ours.md")).returncode == 0
    assert forge(tmp, "chat", "pilot", "-m", HEDGED).returncode == 0
    _git(tmp, "add", "-A"), _git(tmp, "commit", "-qm", "this clone")
    result = _git(tmp, "merge", "other")
    assert result.returncode != 0 and "CONFLICT" in result.stdout, result.stdout
    return tmp


def test_conflict_markers_stop_chat_in_one_sentence_and_doctor_fix_keeps_both_sides(merged: Path):
    root = merged / "projects" / "pilot"
    assert conflicts.has_markers((root / "state.json").read_text())
    assert conflicts.has_markers((root / "project_state.json").read_text())

    chat = forge(merged, "chat", "pilot", "-m", "Where were we?")
    assert chat.returncode == 1
    assert chat.stderr.strip().splitlines() == [chat.stderr.strip().splitlines()[0]]  # no traceback
    assert "has unresolved git conflict markers" in chat.stderr and "forge doctor --fix pilot" in chat.stderr
    assert not list(root.glob("state.unreadable-*"))  # a merge to finish, not a session to set aside

    fixed = forge(merged, "doctor", "pilot", "--fix")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "Merged the git conflict in state.json" in fixed.stdout
    assert "Merged the git conflict in project_state.json" in fixed.stdout
    assert "renumbered 1 turn(s)" in fixed.stdout
    assert list(root.glob("state.json.conflict-*")) and list(root.glob("project_state.json.conflict-*"))

    ws = Workspace(root)
    state = ws.load_state()
    claims = " ".join(a.claim for a in state.assumptions).lower()
    assert "suppliers" in claims and "fixed markdown time" in claims  # both clones' assumptions
    assert len({a.id for a in state.assumptions}) == len(state.assumptions)
    assert [t.number for t in state.turns] == [1, 2, 3]
    numbers = [json.loads(l)["number"] for l in ws.transcript_path.read_text().splitlines()
               if "patch" not in json.loads(l)]
    assert sorted(numbers) == [1, 2, 3]  # the file itself renumbered
    assert {f.filename for f in ws.load_manifest().file_summaries} == {"ours.md", "theirs.md"}
    assert "# Organisation context" in (root / "context.md").read_text()

    after = forge(merged, "chat", "pilot", "--json", "-m", "Labels take forty minutes a round.")
    assert after.returncode == 0, after.stderr
    assert json.loads(after.stdout)["turn"] == 4


def test_a_union_merged_transcript_with_one_number_twice_loads_in_order(project: Project):
    run_turn(project, "We want to cut fresh shrink in the bakery.")
    run_turn(project, "Dana owns the shrink target.")
    second = [r for r in map(json.loads, project.ws.transcript_path.read_text().splitlines()) if "patch" not in r][-1]
    twin = {**second, "id": "t-0therc10ne", "user": "The other clone's turn two."}
    with open(project.ws.transcript_path, "a", encoding="utf-8") as fh:  # what git's union merge leaves
        fh.write(json.dumps(twin) + "\n" + json.dumps(second) + "\n")  # and a line twice

    state = Workspace(project.ws.root).load_state()
    assert [t.number for t in state.turns] == [1, 2, 3]
    assert [t.user for t in state.turns][-1] == "The other clone's turn two."
    assert run_turn(project, "Next.").turn == 4

    repair = project.ws.resolve_conflicts()
    assert repair.renumbered == {3}
    written = [json.loads(l) for l in project.ws.transcript_path.read_text().splitlines()]
    assert [r["number"] for r in written if "patch" not in r] == [1, 2, 3, 4]
    assert [r["id"] for r in written if "patch" not in r].count(second["id"]) == 1


def test_the_merge_rules_keep_both_sides_and_say_what_was_set_aside():
    text = ('{\n<<<<<<< HEAD\n "active_mode": "mode_2",\n "updated_at": "2025-01-02",\n'
            ' "assumptions": [{"id": "A1", "claim": "ours"}]\n'
            '||||||| base\n "active_mode": "mode_1",\n=======\n "active_mode": "mode_1",\n'
            ' "updated_at": "2025-01-01",\n "assumptions": [{"id": "A1", "claim": "theirs"}]\n>>>>>>> other\n}\n')
    ours, theirs = conflicts.parse_sides(text)
    merged, notes = conflicts.merge_state(ours, theirs)
    assert merged["active_mode"] == "mode_2"  # ours was saved later
    assert [a["claim"] for a in merged["assumptions"]] == ["ours", "theirs"]
    assert [a["id"] for a in merged["assumptions"]] == ["A1", "A2"]
    assert any("active_mode" in n and "mode_1" in n for n in notes)
    assert any("kept it as A2" in n for n in notes)
    manifest, notes = conflicts.merge_manifest(
        {"file_summaries": [{"file_id": "a", "filename": "x.md", "uploaded_at": "2025-01-01"},
                            {"file_id": "d", "filename": "Straße.md", "uploaded_at": "2025-01-01"}]},
        {"file_summaries": [{"file_id": "b", "filename": "x.md", "uploaded_at": "2025-01-03"},
                            {"file_id": "c", "filename": "y.md", "uploaded_at": "2025-01-02"},
                            {"file_id": "e", "filename": "STRASSE.md", "uploaded_at": "2025-01-02"}]})
    # One name uploaded on both sides: the later upload. Names alike but for case are two files, as on upload.
    assert sorted(f["file_id"] for f in manifest["file_summaries"]) == ["b", "c", "d", "e"]
    assert len(notes) == 1 and "(2025-01-01)" in notes[0]
    assert conflicts.renumber([1, 2, 3, 3, 4, 6, 6]) == [1, 2, 3, 4, 5, 6, 7]
    with pytest.raises(conflicts.Unmergeable):
        conflicts.parse_sides('{\n<<<<<<< HEAD\n "a": 1,\n=======\n "a": \n>>>>>>> x\n}\n')


# ---------------------------------------------------------------- no false crashes, one sentence


def test_user_mistakes_leave_no_operation_marker_and_no_traceback(isolated_env):
    tmp = isolated_env
    assert forge(tmp, "new", "Pilot").returncode == 0
    root = tmp / "projects" / "pilot"
    missing = forge(tmp, "delete", "pilot", "nothing.md")
    assert missing.returncode == 1 and "There is no file called 'nothing.md'" in missing.stderr
    assert not (root / ".operation.json").exists()
    assert "Finished an operation" not in forge(tmp, "doctor", "pilot").stdout

    good = (root / "project_state.json").read_text()
    (root / "project_state.json").write_text('{"file_summaries": {"plan.md": 3}}')
    for args in (("files", "pilot"), ("chat", "pilot", "-m", "hi"), ("doctor", "pilot", "--fix")):
        done = forge(tmp, *args)
        assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
        assert "project_state.json in project 'pilot' is not a Forge file list" in done.stderr
        assert not (root / ".operation.json").exists(), args
    (root / "project_state.json").write_text(good)
    assert "Finished an operation" not in forge(tmp, "doctor", "pilot").stdout

    (tmp / "a-file").write_text("not a folder")
    for args in (("new", "X"), ("projects",), ("files", "x")):
        done = forge(tmp, *args, FORGE_PROJECTS_DIR=str(tmp / "a-file"))
        assert done.returncode == 1 and done.stderr.strip() == (
            f"FORGE_PROJECTS_DIR ({tmp / 'a-file'}) is a file, not a folder; point it at a folder.")


def test_a_damaged_session_is_never_set_aside_silently_even_during_recovery(isolated_env):
    tmp = isolated_env
    assert forge(tmp, "new", "Pilot").returncode == 0
    root = tmp / "projects" / "pilot"
    assert forge(tmp, "chat", "pilot", "-m", "We want to cut fresh shrink.").returncode == 0
    (root / "state.json").write_text('{"active_mode": "mode_9"}')  # valid JSON, not a session
    (root / ".operation.json").write_text(json.dumps({"operation": "forge doctor --fix", "pid": 1}))
    done = forge(tmp, "chat", "pilot", "-m", "Where were we?")
    assert "could not be read" in done.stderr and "state.unreadable-" in done.stderr
    assert list(root.glob("state.unreadable-*.json"))
    assert json.loads((root / "state.json").read_text())["project_name"] == "Pilot"  # the display name stays


# ---------------------------------------------------------------- names in any script


def test_names_in_any_script_get_distinct_folders_and_keep_their_display_name(isolated_env):
    tmp = isolated_env
    names = ["Пилот магазинов", "试点项目", "测试项目", "مشروع تجريبي", "Fresh Shrink Pilot"]
    slugs = []
    for name in names:
        made = forge(tmp, "new", name)
        assert made.returncode == 0, made.stderr
        slugs.append(slugify(name))
    assert len(set(slugs)) == len(names) and all(s.isascii() and s for s in slugs)
    assert slugs[0].startswith("pilot-magazinov-") and slugs[-1] == "fresh-shrink-pilot"
    assert slugify("пилот МАГАЗИНОВ") == slugs[0]  # the same name, however typed, finds its project
    chat = forge(tmp, "chat", "试点项目", "--json", "-m", "We want to cut fresh shrink.")
    assert chat.returncode == 0, chat.stderr
    ws = Workspace(tmp / "projects" / slugs[1])
    assert ws.load_state().project_name == "试点项目" and ws.load_manifest().display_name == "试点项目"
    Workspace.create(tmp / "projects", "2024")  # before scripts were spelled, "Пилот 2024" got the folder "2024"
    assert Workspace.open(tmp / "projects", "Пилот 2024").slug == "2024"


# ---------------------------------------------------------------- a busy project


def test_a_second_chat_waits_for_the_turn_in_progress_and_never_drops_its_message(project: Project, isolated_env):
    held, release = threading.Event(), threading.Event()

    def other_turn():
        with Workspace(project.ws.root).turn_slot(5):
            held.set()
            release.wait(60)

    worker = threading.Thread(target=other_turn)
    worker.start()
    held.wait(10)
    try:
        busy = forge_process(isolated_env, "chat", project.ws.slug, "-m", "Dana owns the shrink target.",
                             FORGE_CHAT_BUSY_WAIT_S="1")
        assert busy.returncode == 1
        assert "still answering another message" in busy.stderr
        assert busy.stderr.rstrip().endswith("Dana owns the shrink target.")  # given back, not lost
        assert project.ws.load_state().turn_count == 0

        env = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}", "FORGE_LLM": "offline"}
        waiting = subprocess.Popen([sys.executable, "-m", "pmforge.surfaces.cli", "chat", project.ws.slug, "--json", "-m",
                                    "Dana owns the shrink target."], cwd=isolated_env, env=env,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        notice = waiting.stderr.readline()  # said before it waits
        release.set()  # the other turn ends; the waiting message goes ahead
        out, err = waiting.communicate(timeout=300)
    finally:
        release.set()
        worker.join()
    assert "is answering another message; waiting up to 120 s" in notice
    assert waiting.returncode == 0, err
    assert json.loads(out)["turn"] == 1


def test_two_chats_at_once_both_save_their_turn(project: Project, isolated_env):
    run_turn(project, "We want to cut fresh shrink.")
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}", "FORGE_LLM": "offline"}
    first = subprocess.Popen([sys.executable, "-m", "pmforge.surfaces.cli", "chat", project.ws.slug, "--json", "-m",
                              "First message about stores."], cwd=isolated_env, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    second = forge_process(isolated_env, "chat", project.ws.slug, "--json", "-m", "Second message about shrink.")
    out, err = first.communicate(timeout=300)
    assert first.returncode == 0 and second.returncode == 0, err + second.stderr
    state = project.ws.load_state()
    assert [t.number for t in state.turns] == [1, 2, 3]
    assert {t.user for t in state.turns[1:]} == {"First message about stores.", "Second message about shrink."}


# ---------------------------------------------------------------- the app says it too


def test_the_app_stops_on_conflict_markers_and_shows_an_interrupted_upload(isolated_env, services):
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    import pmforge

    project = Project.create(services, "Pilot")
    ws = project.ws
    ws.operations.marker.write_text(json.dumps({"operation": "upload gone.md", "pid": 1}))
    (ws.uploads / "gone.md").write_bytes(b"# Gone\n\nThe upload was stopped before it was indexed.\n")
    st.cache_resource.clear()
    try:
        at = AppTest.from_file(str(Path(pmforge.__file__).parent / "surfaces" / "app.py"), default_timeout=120)
        at.run()
        assert not at.exception, at.exception
        warnings = " ".join(w.value for w in at.sidebar.warning)
        assert "gone.md is listed as" in warnings and "interrupted — retry" in warnings

        good = ws.state_path.read_text().rstrip("\n") + "\n"
        ws.state_path.write_text("<<<<<<< HEAD\n" + good + "=======\n" + good + ">>>>>>> other\n")
        st.cache_resource.clear()
        at = AppTest.from_file(str(Path(pmforge.__file__).parent / "surfaces" / "app.py"), default_timeout=120)
        at.run()
        assert not at.exception, at.exception
        assert any("unresolved git conflict markers" in e.value for e in at.sidebar.error)
        assert not list(ws.root.glob("state.unreadable-*"))
    finally:
        st.cache_resource.clear()
