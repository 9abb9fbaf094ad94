"""turns.jsonl: the append-only transcript. Turns and patches are appended, a torn last line is ignored and
then cut off, readers parse only what was appended, older state.json files migrate without losing a turn,
and a turn another process writes is still noticed by a window finishing its own."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from pmforge.core.errors import ForgeError
from pmforge.core.models import SCHEMA_VERSION, Turn
from pmforge.core.workspace import Workspace
from pmforge.project.project import Project
from pmforge.turn.orchestrator import run_turn, start_turn

SRC = str(Path(__file__).parents[1] / "src")


@pytest.fixture
def ws(isolated_env) -> Workspace:
    return Workspace.create(isolated_env / "projects", "Transcript")


def lines(ws: Workspace) -> list[dict]:
    return [json.loads(line) for line in ws.transcript_path.read_bytes().splitlines()]


def holds(got, want) -> bool:
    """`got` has everything `want` has (fields added to the models since have their defaults)."""
    if isinstance(want, dict):
        return isinstance(got, dict) and all(k in got and holds(got[k], v) for k, v in want.items())
    return got == want


def add_turns(ws: Workspace, *users: str) -> list[Turn]:
    state = ws.load_state()
    new = [Turn(number=state.turn_count + i, user=u, assistant=f"Reply to {u}") for i, u in enumerate(users, 1)]
    state.turns += new
    with ws.locked():
        ws.save_state(state)
    return new


def test_turns_are_appended_one_line_each_and_reload(ws: Workspace):
    first = add_turns(ws, "We lose 4 percent of bakery items.", "Dana owns shrink — 🍞 and U+2028\u2028 too.")
    add_turns(ws, "The pilot is in Ohio.")
    raw = lines(ws)
    assert [r["number"] for r in raw] == [1, 2, 3] and all(r["id"].startswith("t-") for r in raw)
    assert len({r["id"] for r in raw}) == 3

    reread = Workspace(ws.root).load_state()  # a second handle on the same folder
    assert [t.user for t in reread.turns] == [t.user for t in first] + ["The pilot is in Ohio."]
    assert [t.id for t in reread.turns[:2]] == [t.id for t in first]  # ids are kept, not regenerated

    saved = json.loads(ws.state_path.read_text())
    assert "turns" not in saved and saved["schema_version"] == SCHEMA_VERSION

    # Saving the same state again writes nothing to the transcript; the list handed out is the caller's.
    size = ws.transcript_path.stat().st_size
    state = ws.load_state()
    ws.save_state(state)
    assert ws.transcript_path.stat().st_size == size
    state.turns.append(Turn(number=99, user="never saved", assistant=""))
    assert ws.load_state().turn_count == 3


def test_a_torn_last_line_is_ignored_then_cut_off(ws: Workspace):
    add_turns(ws, "One.", "Two.")
    whole = ws.transcript_path.read_bytes()
    torn = Turn(number=3, user="Three, cut off mid-write.", assistant="...").model_dump_json().encode()[:40]
    with open(ws.transcript_path, "ab") as fh:  # as a process killed mid-append leaves it
        fh.write(torn)

    assert [t.user for t in Workspace(ws.root).load_state().turns] == ["One.", "Two."]
    add_turns(ws, "Three again.")
    assert ws.transcript_path.read_bytes().startswith(whole)
    assert torn not in ws.transcript_path.read_bytes()
    assert [r["user"] for r in lines(ws)] == ["One.", "Two.", "Three again."]  # every line parses

    # A last line that is whole but lost its newline (a hand edit) is kept, not cut.
    data = ws.transcript_path.read_bytes()
    ws.transcript_path.write_bytes(data.rstrip(b"\n"))
    add_turns(ws, "Four.")
    assert [r["user"] for r in lines(ws)] == ["One.", "Two.", "Three again.", "Four."]


def test_patch_lines_change_summary_and_indexed(ws: Workspace, isolated_env):
    turn, other = add_turns(ws, "Dana owns the shrink target.", "Labels are printed by hand.")
    turn.summary, turn.indexed = "Dana owns shrink.", True
    ws.transcript_file.patch_turn(turn)
    state = ws.load_state()  # the loaded turns are shared with other readers; changing one needs a save
    state.turns[1] = state.turns[1].model_copy(update={"summary": "Manual labels.", "indexed": True})
    ws.save_state(state)

    raw = lines(ws)
    assert len(raw) == 4 and raw[2] == {"patch": turn.id, "summary": "Dana owns shrink.", "indexed": True}
    assert raw[3]["patch"] == other.id

    # A reader that never saw the file before (a copy elsewhere) applies them too.
    copy = isolated_env / "elsewhere" / "transcript"
    shutil.copytree(ws.root, copy)
    for reader in (ws, Workspace(copy)):
        got = [(t.summary, t.indexed) for t in reader.load_state().turns]
        assert got == [("Dana owns shrink.", True), ("Manual labels.", True)]


def test_readers_parse_only_what_another_process_appended(ws: Workspace):
    add_turns(ws, "One.", "Two.")
    before = ws.load_state().turns
    signature = ws.state_signature()

    code = ("import sys; sys.path.insert(0, %r)\n"
            "from pmforge.core.models import Turn\nfrom pmforge.core.workspace import Workspace\n"
            "ws = Workspace(%r)\nwith ws.locked():\n"
            "    ws.transcript_file.append_turn(Turn(number=3, user='Three, from another process.', assistant='Ok.'))\n")
    subprocess.run([sys.executable, "-c", code % (SRC, str(ws.root))], check=True, timeout=120)

    assert ws.state_signature() != signature  # state.json was not touched, the transcript grew
    after = ws.load_state().turns
    assert [t.user for t in after] == ["One.", "Two.", "Three, from another process."]
    assert all(a is b for a, b in zip(after, before))  # the first two were not parsed again

    # A replaced file (a git checkout, say) is read again from the start.
    data = ws.transcript_path.read_bytes().splitlines(keepends=True)
    tmp = ws.root / "replacement"
    tmp.write_bytes(b"".join(data[:1]))
    os.replace(tmp, ws.transcript_path)
    assert [t.user for t in ws.load_state().turns] == ["One."]


def test_an_old_state_json_is_migrated_without_losing_anything(isolated_env):
    root = isolated_env / "projects" / "legacy"
    (root / "uploads").mkdir(parents=True)
    old_turns = [
        {"number": n, "user": f"Message {n}: bakery shrink is {n} percent.", "assistant": f"Reply {n}",
         "created_at": f"2024-05-0{n}T10:00:00+00:00", "active_mode": "mode_1", "active_probe": "why_now",
         "routing": None, "retrieved": {"documents": [], "conversations": [n - 1] if n > 1 else []},
         "sources": [], "tokens": {"phase_a": 100 * n, "phase_b": 900, "sections": {"recent_turns": 40}},
         "tool_calls": [{"name": "record_probe", "input": {"probe": "why_now"}, "ok": True, "result": "ok"}],
         "summary": f"Shrink is {n} percent." if n < 5 else "", "indexed": n < 5}
        for n in range(1, 6)
    ]
    old = {"schema_version": 2, "project_name": "Legacy", "created_at": "2024-05-01T09:00:00+00:00",
           "active_mode": "mode_1", "active_probe": "why_now", "turns": old_turns,
           "assumptions": [{"id": "A1", "claim": "Managers would mark down earlier", "surfaced_turn": 2}],
           "problem_brief": {"problem_statement": "Bakery shrink is too high"},
           "solution_evaluation": {}, "routing": {"probes_fired": ["why_now"], "last_synthesis_turn": 3},
           "brief_history": []}
    (root / "state.json").write_text(json.dumps(old, indent=1))

    ws = Workspace(root)
    state = ws.load_state()
    assert [t.number for t in state.turns] == [1, 2, 3, 4, 5]
    for turn, before in zip(state.turns, old_turns):  # every field of every turn came across
        assert holds(turn.model_dump(mode="json"), before)
    assert state.assumptions[0].claim == "Managers would mark down earlier"
    assert state.problem_brief.problem_statement == "Bakery shrink is too high"
    assert state.routing.last_synthesis_turn == 3

    saved = json.loads(ws.state_path.read_text())
    assert "turns" not in saved and saved["schema_version"] == SCHEMA_VERSION
    assert saved["assumptions"] == json.loads(state.model_dump_json())["assumptions"]
    assert [r["number"] for r in lines(ws)] == [1, 2, 3, 4, 5]
    ids = [t.id for t in state.turns]

    # Idempotent: loading again changes neither file and keeps the ids.
    files = ws.state_path.read_bytes(), ws.transcript_path.read_bytes()
    assert [t.id for t in Workspace(root).load_state().turns] == ids
    assert (ws.state_path.read_bytes(), ws.transcript_path.read_bytes()) == files

    # Killed between the two writes: turns.jsonl was complete, state.json still the old one. The transcript
    # wins (even over later appends) and no turn is doubled.
    add_turns(ws, "Message 6, after the migration.")
    (root / "state.json").write_text(json.dumps(old, indent=1))
    again = Workspace(root).load_state()
    assert [t.number for t in again.turns] == [1, 2, 3, 4, 5, 6] and [t.id for t in again.turns[:5]] == ids
    assert "turns" not in json.loads(ws.state_path.read_text())

    # The turn that was never remembered is caught up through patch lines.
    assert not again.turns[4].indexed


def test_a_busy_project_reads_an_old_state_as_it_is_and_migrates_later(isolated_env):
    root = isolated_env / "projects" / "busy"
    root.mkdir(parents=True)
    turns = [{"number": n, "user": f"U{n}", "assistant": f"A{n}", "created_at": "2024-01-01T00:00:00+00:00"}
             for n in (1, 2)]
    old = json.dumps({"schema_version": 1, "project_name": "Busy", "turns": turns})
    (root / "state.json").write_text(old)
    ws = Workspace(root)

    held, release = threading.Event(), threading.Event()

    def other_window():
        with ws.locked():
            held.set()
            release.wait(30)

    holder = threading.Thread(target=other_window)
    holder.start()
    held.wait(10)
    try:
        busy = ws.load_state()
    finally:
        release.set()
        holder.join()
    assert [t.user for t in busy.turns] == ["U1", "U2"]
    assert (root / "state.json").read_text() == old and not ws.transcript_path.exists()
    migrated = ws.load_state()
    assert [t.id for t in migrated.turns] == [t.id for t in busy.turns]  # derived ids: the same both times
    with ws.locked():
        ws.save_state(busy)  # a save from the unmigrated read doubles nothing
    assert [r["user"] for r in lines(ws)] == ["U1", "U2"]


def test_after_a_turn_state_json_holds_no_turns(project: Project):
    run_turn(project, "We want to cut fresh shrink; Dana Whitfield owns the target.")
    run_turn(project, "The pilot covers 20 Ohio stores.")
    saved = json.loads(project.ws.state_path.read_text())
    assert "turns" not in saved
    raw = lines(project.ws)
    turns = [r for r in raw if "patch" not in r]
    patches = [r for r in raw if "patch" in r]
    assert [t["number"] for t in turns] == [1, 2]
    # Each turn is written once, then marked remembered with a patch line naming it by id.
    assert [p["patch"] for p in patches] == [t["id"] for t in turns] and all(p["indexed"] for p in patches)
    state = project.state()
    assert all(t.indexed and t.summary for t in state.turns)
    assert project.reindex_reason() is None


def test_a_turn_another_process_added_stops_this_window_from_saving(project: Project):
    run_turn(project, "We want to cut fresh shrink.")
    slow = start_turn(project, "What should the pilot measure first?")
    code = ("import sys; sys.path.insert(0, %r)\n"
            "from pmforge.core.models import Turn\nfrom pmforge.core.workspace import Workspace\n"
            "ws = Workspace(%r)\nwith ws.locked():\n"
            "    state = ws.load_state()\n"
            "    state.turns.append(Turn(number=state.turn_count + 1, user='Bread sells out by noon.', "
            "assistant='Noted.'))\n"
            "    ws.save_state(state)\n")
    subprocess.run([sys.executable, "-c", code % (SRC, str(project.ws.root))], check=True, timeout=120)
    with pytest.raises(ForgeError, match="changed in another window"):
        slow.finish()
    state = project.state()
    assert [(t.number, t.user) for t in state.turns] == [(1, "We want to cut fresh shrink."),
                                                         (2, "Bread sells out by noon.")]
    # The next turn catches the other window's turn up (indexes it) and goes on as turn 3.
    assert run_turn(project, "What should the pilot measure first?").turn == 3
    assert all(t.indexed for t in project.state().turns)


def test_reindex_and_doctor_go_through_the_workspace_without_doubling_turns(project: Project):
    from pmforge.upkeep import doctor
    from pmforge.upkeep.reindex import reindex

    run_turn(project, "We want to cut fresh shrink.")
    run_turn(project, "Dana Whitfield owns the target.")
    # A turn saved without a summary and never remembered (an older Forge, or a crash in between).
    state = project.state()
    state.turns.append(Turn(number=3, user="Labels are printed by hand.", assistant="Noted."))
    project.ws.save_state(state)
    reindex(project)
    turns = [r for r in lines(project.ws) if "patch" not in r]
    assert [t["number"] for t in turns] == [1, 2, 3]
    assert all(t.indexed and t.summary for t in project.state().turns)
    assert project.store.memory.turn_numbers() == {1, 2, 3}

    project.store.memory.delete_turns({2})
    assert doctor.repair(project).consistent
    assert [t["number"] for t in lines(project.ws) if "patch" not in t] == [1, 2, 3]
