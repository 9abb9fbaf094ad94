"""Taking back Forge's latest reply (Retry, Edit last message, `forge undo`): as if the turn never happened.

When a turn commits it leaves an undo point beside the session (`.undo.json`, this clone's own, never
committed): the session fields as they were before the turn, the org context it replaced, the artifact
files it wrote, and a digest of the session fields it saved. Only the latest turn has one (each commit
replaces it), so only one step can be taken back.

Taking back checks under the project's lock, then holds its operation. The retraction line appended to turns.jsonl is the commit
point: before it nothing has changed; after it, the rest (session fields, org context, artifacts, memory,
the point itself) is finished again by `finish_interrupted_undo` should a crash cut it short.
"""

from __future__ import annotations

import hashlib
import json
import logging
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field, ValidationError

from pmforge.core import transcript
from pmforge.core.errors import ForgeError
from pmforge.core.models import SessionState, Turn
from pmforge.core.workspace import ProjectBusy, Workspace, atomic_write_text

if TYPE_CHECKING:  # recovery finishes an undo; the project only hands over its parts
    from pmforge.project.project import Project

log = logging.getLogger(__name__)

UNDO_FILE = ".undo.json"
UNDO_LABEL = "undo last turn"  # the operation marker's label: recovery finishes what it started

NOTHING_TO_UNDO = "There is no reply to take back: only Forge's latest reply can be taken back, and only once."
CHANGED_SINCE = "Only Forge's latest reply can be taken back, and only while nothing else has changed since."
NOT_THE_ONE = "Forge's latest reply is no longer the one you chose to take back, so nothing was taken back."
BUSY = "Forge is answering a message in this project; take back a reply once it has finished."

# Not the session's content: a rename since the turn is kept, and save bookkeeping never blocks an undo.
NOT_SESSION = SessionState.SAVE_BOOKKEEPING | {"project_name"}


class UndoPoint(BaseModel):
    """What taking back the latest turn needs."""

    turn_id: str
    turn_number: int
    session_before: dict  # the session fields (see `session_fields`) before the turn
    session_after: str  # digest of the session fields the turn saved: any later save changes it
    org_before: str | None = None  # the org context the turn replaced; None when it left it alone
    org_after: str | None = None
    artifacts: list[str] = Field(default_factory=list)  # file names the turn wrote under artifacts/

    @property
    def changed_org(self) -> bool:
        return self.org_before is not None and self.org_before != self.org_after


def session_fields(state: SessionState) -> dict:
    """The session as a turn changes it, in JSON values (what the undo point keeps and compares)."""
    return state.model_dump(mode="json", exclude=set(NOT_SESSION))


def session_digest(state: SessionState) -> str:
    body = json.dumps(session_fields(state), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


def undo_path(ws: Workspace) -> Path:
    return ws.root / UNDO_FILE


# ---------------------------------------------------------------- at commit (PendingTurn.finish)


def keep_undo_point(ws: Workspace, turn: Turn, after: SessionState, org_before: str | None,
                    org_after: str) -> None:
    """Record how to take `turn` back (hold the turn's operation; call before the turn is appended, while
    state.json still holds the session as it was before the turn). `after` is the session about to be
    saved; `org_before` the manifest's org context the turn replaced, None when it left it alone."""
    before = ws.load_state()
    point = UndoPoint(
        turn_id=turn.id, turn_number=turn.number, session_before=session_fields(before),
        session_after=session_digest(after), org_before=org_before,
        org_after=org_after if org_before is not None else None, artifacts=list(turn.artifacts),
    )
    atomic_write_text(undo_path(ws), point.model_dump_json())


def read_undo_point(ws: Workspace) -> UndoPoint | None:
    try:
        return UndoPoint.model_validate_json(undo_path(ws).read_bytes())
    except FileNotFoundError:
        return None
    except (ValidationError, ValueError) as exc:  # a hand edit or a damaged disk: nothing to take back
        log.warning("%s: unreadable undo point ignored (%s)", ws.slug, str(exc).splitlines()[0][:200])
        return None


# ---------------------------------------------------------------- taking back


def turn_to_undo(project: Project) -> Turn:
    """The turn `undo_last_turn` would take back now; one sentence (ForgeError) when none can be."""
    project.recover()
    ws = project.ws
    return _undoable(read_undo_point(ws), ws.load_state(), ws.load_manifest().org_context)


def undo_last_turn(project: Project, turn_id: str | None = None) -> Turn:
    """Take back Forge's latest reply, as if its turn never happened, and return that turn (the caller
    resends `turn.user`, or an edited message). `turn_id`: only if the latest turn is still this one (what
    the PM saw when they chose it). Refuses in one sentence when it cannot: no undo point, a later turn,
    or anything saved since the turn."""
    ws = project.ws
    with ExitStack() as held:
        try:  # a turn being answered (and then remembered) in another window would race this
            held.enter_context(ws.turn_slot(0))
        except ProjectBusy:
            raise ForgeError(BUSY) from None
        project.recover()
        with ws.locked():  # checked before the operation begins: a refusal is no crash to recover from
            point = read_undo_point(ws)
            if point is None:
                raise ForgeError(NOTHING_TO_UNDO)
            if turn_id is not None and point.turn_id != turn_id:
                raise ForgeError(NOT_THE_ONE)
            turn = _undoable(point, ws.load_state(), ws.load_manifest().org_context)
            with ws.operations.marked(UNDO_LABEL):
                ws.transcript_file.append_lines(transcript.retract_line(turn.id))  # the commit point
                _finish(project, point)
    log.info("took back turn %d (%s) of %s", turn.number, turn.id, ws.slug)
    return turn


def _undoable(point: UndoPoint | None, state: SessionState, org_context: str) -> Turn:
    if point is None:
        raise ForgeError(NOTHING_TO_UNDO)
    if not state.turns or state.turns[-1].id != point.turn_id:  # a later turn, or the turn never saved
        raise ForgeError(CHANGED_SINCE)
    if session_digest(state) != point.session_after:
        raise ForgeError(CHANGED_SINCE)
    if point.changed_org and org_context != point.org_after:
        raise ForgeError(CHANGED_SINCE)
    return state.turns[-1]


def _finish(project: Project, point: UndoPoint) -> None:
    """Everything after the retraction. Safe to run again: each step checks it is still due, and nothing
    saved since the crash (another window's edit) is overwritten."""
    ws = project.ws
    state = ws.load_state()  # without the retracted turn
    if session_digest(state) == point.session_after:
        restored = SessionState.model_validate({**point.session_before, "project_name": state.project_name})
        restored.turns = state.turns
        ws.save_state(restored)
    if point.changed_org:
        manifest = ws.load_manifest()
        if manifest.org_context == point.org_after and point.org_before is not None:  # (changed_org: it is)
            manifest.org_context = point.org_before
            ws.save_manifest(manifest)
    for name in point.artifacts:
        if name and Path(name).name == name:  # a file name, never a path out of artifacts/
            (ws.artifacts / name).unlink(missing_ok=True)
    project.store.memory.delete_turns({point.turn_id})  # the keyword cache too: memory search forgets it
    undo_path(ws).unlink(missing_ok=True)


def finish_interrupted_undo(project: Project) -> None:
    """Recovery (hold the operation): an undo a crash cut short after its retraction is finished; one cut
    short before it changed nothing, and its undo point stays for another try."""
    ws = project.ws
    point = read_undo_point(ws)
    if point is not None and point.turn_id in transcript.retracted(ws.transcript_path):
        _finish(project, point)
        log.info("finished taking back turn %d (%s) of %s after an interruption", point.turn_number,
                 point.turn_id, ws.slug)
