"""Taking back Forge's latest reply (Retry, Edit last message, `forge undo`): the session, the transcript,
the org context, the artifacts and the memory are as if the turn never happened; the transcript stays
append-only; only the latest turn, only once, only while nothing else changed; a crash mid-way is finished
by recovery like any other operation."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest

from pmforge.core import transcript
from pmforge.core.errors import ForgeError
from pmforge.core.models import Turn
from pmforge.core.workspace import Workspace, atomic_write_text
from pmforge.index.retrieval import Query, find_turns
from pmforge.project.project import Project
from pmforge.project.undo import (
    CHANGED_SINCE,
    NOT_THE_ONE,
    NOTHING_TO_UNDO,
    UNDO_LABEL,
    read_undo_point,
    session_fields,
    undo_last_turn,
    undo_path,
)
from pmforge.surfaces.cli import main as forge
from pmforge.turn.orchestrator import run_turn
from pmforge.upkeep.doctor import examine

OPENING = "Bakery shrink is 9 percent across our 62 stores and store managers blame the ordering app."
HEDGED = "I think store managers would adopt a fixed markdown time if labels printed faster."
ORG = "For context, we are a regional grocer with 120 stores and finance signs off every pilot."
ASK_FOR_BRIEF = "Please write up the problem brief."


def snapshot(project: Project) -> dict:
    """What a turn may change, as the PM would see it."""
    state, manifest = project.ws.load_state(), project.ws.load_manifest()
    return {
        "session": session_fields(state), "turns": [(t.id, t.number, t.user) for t in state.turns],
        "org": manifest.org_context, "context.md": project.ws.context_path.read_text(),
        "artifacts": sorted(p.name for p in project.ws.artifacts.iterdir()),
    }


def memory_search(project: Project, words: str) -> set[str]:
    """The turn ids the conversation memory returns for these words (vectors and keywords, as a turn asks)."""
    found = find_turns(project.store, Query(words, project.services.embedder), 10, "hybrid", project.settings)
    return {t.turn_id for t in found}


def transcript_turns(project: Project) -> list[Turn]:
    return transcript.parse(project.ws.transcript_path.read_bytes(), project.ws.transcript_path)


def other_window(project: Project) -> Workspace:
    return Workspace(project.ws.root)  # another handle, as another process would have


# ---------------------------------------------------------------- taking back


def test_undo_restores_the_register_org_context_transcript_and_memory(project: Project):
    run_turn(project, OPENING)
    before = snapshot(project)
    raw_before = project.ws.transcript_path.read_bytes()
    record = run_turn(project, f"{HEDGED} {ORG}")
    state = project.state()
    assert any("fixed markdown time" in a.claim for a in state.assumptions)  # the turn's tool effects
    assert "regional grocer" in project.manifest().org_context
    taken = state.turns[-1]
    assert taken.id in memory_search(project, "fixed markdown time labels printed faster")

    turn = undo_last_turn(project)

    assert (turn.id, turn.number, turn.user) == (taken.id, record.turn, f"{HEDGED} {ORG}")
    assert snapshot(project) == before  # register, brief, routing, org context, context.md, transcript
    assert project.state().turn_count == 1
    raw = project.ws.transcript_path.read_bytes()
    assert raw.startswith(raw_before)  # append-only: the turn's line is still in the file...
    assert json.loads(raw.splitlines()[-1]) == {"retract": taken.id}  # ...and taken back after it
    assert taken.id not in project.store.memory.turn_ids()
    assert taken.id not in memory_search(project, "fixed markdown time labels printed faster")
    assert memory_search(project, "bakery shrink ordering app")  # the earlier turn is still found
    assert not undo_path(project.ws).exists()
    assert examine(project).consistent  # memory and transcript agree: no turn the transcript lacks


def test_the_next_turn_takes_the_number_of_the_turn_taken_back(project: Project, services):
    run_turn(project, OPENING)
    run_turn(project, HEDGED)
    taken = undo_last_turn(project)

    again = run_turn(project, "Labels take forty minutes a round in store 12.")

    assert again.turn == taken.number == 2
    reopened = Project.open(services, project.ws.slug)  # read from the file, not this process's objects
    assert [t.number for t in reopened.state().turns] == [1, 2]
    assert reopened.state().turns[-1].user.startswith("Labels take forty minutes")
    assert not any("fixed markdown time" in a.claim for a in reopened.state().assumptions)
    assert reopened.store.memory.turn_ids() == {t.id for t in reopened.state().turns}


def test_artifacts_the_turn_wrote_are_removed_and_earlier_ones_kept(project: Project):
    run_turn(project, OPENING)
    run_turn(project, ASK_FOR_BRIEF)
    kept = {p.name: p.read_bytes() for p in project.ws.artifacts.iterdir()}
    written = project.state().turns[-1].artifacts
    run_turn(project, ASK_FOR_BRIEF)
    newer = project.state().turns[-1].artifacts
    assert newer and set(newer).isdisjoint(kept) and all((project.ws.artifacts / n).is_file() for n in newer)

    undo_last_turn(project)

    assert {p.name: p.read_bytes() for p in project.ws.artifacts.iterdir()} == kept  # the earlier brief stays
    assert set(written) <= set(kept)


# ---------------------------------------------------------------- the transcript


def test_a_retraction_read_before_its_turn_still_drops_it(isolated_env):
    """A git union merge may put the retraction line above the turn's own line (and a patch of it)."""
    path = isolated_env / "turns.jsonl"
    first, taken = Turn(number=1, user="One", assistant="A"), Turn(number=2, user="Two", assistant="B")
    transcript.append(path, transcript.retract_line(taken.id) + transcript.turn_line(first)
                      + transcript.patch_line(taken.id, summary="Two, summed up", indexed=True)
                      + transcript.turn_line(taken))

    assert [t.id for t in transcript.load(path)] == [first.id]
    assert transcript.count(path) == 1
    assert [t.id for t in transcript.parse(path.read_bytes(), path)] == [first.id]
    assert transcript.retracted(path) == {taken.id}
    assert transcript.unsaved(path, [first, taken]) == b""  # nothing to write back


def test_a_stale_copy_of_the_session_saved_after_undo_does_not_bring_the_turn_back(project: Project):
    run_turn(project, OPENING)
    run_turn(project, HEDGED)
    stale = other_window(project).load_state()  # another window still shows turn 2
    undo_last_turn(project)
    size = project.ws.transcript_path.stat().st_size

    stale.turns[-1].summary = "changed in the stale window"
    with other_window(project).locked():
        other_window(project).save_state(stale)

    assert project.ws.transcript_path.stat().st_size == size  # no line written for the retracted turn
    assert [t.number for t in project.ws.load_state().turns] == [1]
    assert [t.number for t in transcript_turns(project)] == [1]


# ---------------------------------------------------------------- refusals


def test_undo_is_refused_once_the_session_changed_since(project: Project):
    run_turn(project, OPENING)
    run_turn(project, HEDGED)
    ws = other_window(project)
    with ws.locked():  # another window edits the brief after the reply
        state = ws.load_state()
        state.problem_brief.target_audience = "Bakery leads in Ohio stores"
        ws.save_state(state)
    before, raw = snapshot(project), project.ws.transcript_path.read_bytes()

    with pytest.raises(ForgeError) as refused:
        undo_last_turn(project)

    assert str(refused.value) == CHANGED_SINCE
    assert snapshot(project) == before and project.ws.transcript_path.read_bytes() == raw
    assert not project.ws.operations.marker.exists()  # a refusal is not a crash for recovery to find


def test_undo_is_refused_the_second_time_in_a_row(project: Project):
    run_turn(project, OPENING)
    run_turn(project, HEDGED)
    undo_last_turn(project)
    before = snapshot(project)

    with pytest.raises(ForgeError) as refused:
        undo_last_turn(project)

    assert str(refused.value) == NOTHING_TO_UNDO
    assert snapshot(project) == before and project.state().turn_count == 1
    assert not project.ws.operations.marker.exists()


def test_undo_is_refused_without_an_undo_point(project: Project):
    with pytest.raises(ForgeError, match="no reply to take back"):
        undo_last_turn(project)  # a fresh project
    run_turn(project, OPENING)
    undo_path(project.ws).unlink()  # a turn saved before undo points existed, or on another clone
    with pytest.raises(ForgeError) as refused:
        undo_last_turn(project)
    assert str(refused.value) == NOTHING_TO_UNDO and project.state().turn_count == 1


def test_undo_of_a_turn_other_than_the_one_chosen_is_refused(project: Project):
    run_turn(project, OPENING)
    chosen = project.state().turns[-1].id
    run_turn(project, HEDGED)  # another window answered a message after the PM chose turn 1

    with pytest.raises(ForgeError) as refused:
        undo_last_turn(project, turn_id=chosen)

    assert str(refused.value) == NOT_THE_ONE and project.state().turn_count == 2


def test_undo_is_refused_when_the_org_context_changed_since(project: Project):
    run_turn(project, ORG)
    manifest = project.ws.load_manifest()
    manifest.org_context += " Stores close at 10 pm."
    project.ws.save_manifest(manifest)

    with pytest.raises(ForgeError) as refused:
        undo_last_turn(project)

    assert str(refused.value) == CHANGED_SINCE
    assert project.manifest().org_context.endswith("Stores close at 10 pm.")


# ---------------------------------------------------------------- interrupted


def crash_marker(ws: Workspace) -> None:
    """The operation marker an undo leaves behind when its process dies."""
    atomic_write_text(ws.operations.marker, json.dumps(
        {"operation": UNDO_LABEL, "pid": 0, "started": datetime.now(timezone.utc).isoformat()}))


def test_an_undo_cut_short_after_its_retraction_is_finished_on_opening(project: Project, services):
    run_turn(project, OPENING)
    before = snapshot(project)
    run_turn(project, f"{HEDGED} {ORG}")
    taken = project.state().turns[-1]
    # What a crash just after the commit point leaves: the marker, the retraction, nothing else done yet.
    crash_marker(project.ws)
    with project.ws.locked():
        transcript.append(project.ws.transcript_path, transcript.retract_line(taken.id))

    reopened = Project.open(services, project.ws.slug)

    assert reopened.recovered == UNDO_LABEL
    assert snapshot(reopened) == before
    assert taken.id not in reopened.store.memory.turn_ids() and not undo_path(reopened.ws).exists()
    assert not reopened.ws.operations.marker.exists()


def test_an_undo_cut_short_before_its_retraction_changed_nothing_and_can_be_done(project: Project, services):
    run_turn(project, OPENING)
    before = snapshot(project)
    run_turn(project, HEDGED)
    after = snapshot(project)
    crash_marker(project.ws)

    reopened = Project.open(services, project.ws.slug)

    assert reopened.recovered == UNDO_LABEL and snapshot(reopened) == after
    assert read_undo_point(reopened.ws) is not None
    undo_last_turn(reopened)
    assert snapshot(reopened) == before


# ---------------------------------------------------------------- forge undo


def test_forge_undo_shows_the_turn_and_takes_it_back_with_yes(project: Project, capsys):
    slug = project.ws.slug
    assert forge(["chat", slug, "-m", OPENING, "-m", f"{HEDGED}\nMore detail on a second line."]) == 0
    capsys.readouterr()

    assert forge(["undo", slug]) == 1  # no terminal to confirm on, no --yes: nothing is taken back
    assert "--yes" in capsys.readouterr().err and project.state().turn_count == 2

    assert forge(["undo", slug, "--yes"]) == 0
    out = capsys.readouterr().out
    assert f"Turn 2: {HEDGED}" in out and "second line" not in out
    assert project.state().turn_count == 1 and not project.state().assumptions

    assert forge(["undo", slug, "--yes"]) == 1
    assert capsys.readouterr().err.strip() == NOTHING_TO_UNDO
