"""turns.jsonl: a project's append-only transcript.

One line per turn (the `Turn` model's compact JSON) and, after it, small patch lines that change what is
settled later — `{"patch": "<turn id>", "summary": "...", "indexed": true}` — and a retraction
`{"retract": "<turn id>"}` when the PM takes Forge's latest reply back (Retry, Edit): readers drop that
turn wherever its line is, and nothing writes it again. Nothing here rewrites the file in the normal
path: rewriting a long transcript on every turn is what made turns slower as a session grew. Lines are
self-contained and turns carry stable ids, so git's union merge can join two clones.

Readers keep the parsed transcript per file in this process and parse only what was appended since
(see `load`); writers hold the project lock (see `Workspace.locked`).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from pydantic import ValidationError

from pmforge.core.conflicts import renumber
from pmforge.core.models import BilledCall, Turn

log = logging.getLogger(__name__)

# The only fields of a turn that change after it is written ("calls": the summary and memory embeddings are
# billed after the save).
PATCHED = ("summary", "indexed", "calls")


def legacy_turn_id(data: dict) -> str:
    """An id for a turn written before turns had ids: derived from the turn, so every process migrating
    (or merely reading) the same old file gives it the same id and nothing is appended twice."""
    key = "\0".join(str(data.get(k, "")) for k in ("number", "created_at", "user", "assistant"))
    return "t-" + hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:12]


def turn_line(turn: Turn) -> bytes:
    return turn.model_dump_json().encode("utf-8") + b"\n"


def patch_line(turn_id: str, **changes) -> bytes:
    body = {"patch": turn_id, **{k: v for k, v in changes.items() if k in PATCHED}}
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"


def retract_line(turn_id: str) -> bytes:
    return json.dumps({"retract": turn_id}, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"


def encode(turns: list[Turn]) -> bytes:
    return b"".join(turn_line(t) for t in turns)


# ---------------------------------------------------------------- reading


@dataclass
class _Parsed:
    ino: int = -1
    dev: int = -1
    size: int = -1  # as stat saw it when last read: unchanged size and mtime mean nothing to read
    mtime_ns: int = -1
    offset: int = 0  # bytes parsed: always just after a newline (a line still being written waits)
    turns: list[Turn] = field(default_factory=list)
    where: dict[str, int] = field(default_factory=dict)  # turn id -> index in turns
    # What the file says each turn's patched fields are. Kept apart from the Turn objects, which are
    # shared with callers (who may change them before saving): `unsaved` compares against this.
    saved: dict[str, tuple[str, bool]] = field(default_factory=dict)
    early: dict[str, dict] = field(default_factory=dict)  # patches read before their turn (a union merge)
    retracted: set[str] = field(default_factory=set)  # taken back: never read, patched or written again
    # Turns taken back after later turns were written on top of them (a merged clone's undo): the turn as it
    # was, and the numbers of the turns that followed it then.
    taken_from_under: list[tuple[Turn, list[int]]] = field(default_factory=list)
    warned: bool = False  # repeated turn numbers were logged once

    def apply(self, line: bytes, path: Path) -> None:
        try:
            data = json.loads(line)
            if not isinstance(data, dict):
                raise ValueError("not an object")
            if "patch" in data:
                self._patch(str(data["patch"]), {k: data[k] for k in PATCHED if k in data})
                return
            if "retract" in data:
                self._retract(str(data["retract"]))
                return
            if not data.get("id"):
                data["id"] = legacy_turn_id(data)
            turn = Turn.model_validate(data)
        except (ValueError, ValidationError) as exc:  # json.JSONDecodeError is a ValueError
            # A hand edit or a conflicted merge: skip the line, keep every other turn.
            log.warning("%s: skipped an unreadable line (%s)", path, str(exc).splitlines()[0][:200])
            return
        if turn.id in self.retracted:  # its retraction came first (a union merge puts lines in any order)
            return
        if turn.id in self.where:  # the same turn twice (merged clones): the later line wins
            self.turns[self.where[turn.id]] = turn
        else:
            self.where[turn.id] = len(self.turns)
            self.turns.append(turn)
        self.saved[turn.id] = (turn.summary, turn.indexed)
        if turn.id in self.early:
            self._patch(turn.id, self.early.pop(turn.id))

    def numbered(self) -> list[Turn]:
        """The turns in file order with numbers that go strictly up. After a union merge both clones' turn
        12 are in the file; readers see them as 12 and 13 (copies: the file and the shared objects keep what
        was written) until `forge doctor --fix` renumbers the file itself."""
        numbers = [t.number for t in self.turns]
        fixed = renumber(numbers)
        if fixed == numbers:
            return list(self.turns)
        if not self.warned:
            log.warning("%d turn numbers are repeated in the transcript; run forge doctor --fix",
                        sum(a != b for a, b in zip(numbers, fixed)))
            self.warned = True
        return [t if t.number == n else t.model_copy(update={"number": n}) for t, n in zip(self.turns, fixed)]

    def _retract(self, turn_id: str) -> None:
        self.retracted.add(turn_id)
        self.early.pop(turn_id, None)
        self.saved.pop(turn_id, None)
        i = self.where.pop(turn_id, None)
        if i is None:
            return
        if i < len(self.turns) - 1:
            self.taken_from_under.append((self.turns[i], [t.number for t in self.turns[i + 1:]]))
        del self.turns[i]
        self.where = {t.id: n for n, t in enumerate(self.turns)}  # rare (one undo): a full re-index is fine

    def _patch(self, turn_id: str, changes: dict) -> None:
        if turn_id in self.retracted:
            return
        i = self.where.get(turn_id)
        if i is None:
            self.early.setdefault(turn_id, {}).update(changes)
            return
        if "calls" in changes:  # a patch line holds them as JSON; the turn holds models
            changes = dict(changes, calls=[BilledCall.model_validate(c) for c in changes["calls"]])
        # A new object, not a change to the shared one: lists handed out earlier stay as they were read.
        turn = self.turns[i] = self.turns[i].model_copy(update=changes)
        self.saved[turn_id] = (turn.summary, turn.indexed)


_cache: dict[str, _Parsed] = {}
_cache_lock = threading.Lock()


def _refresh(path: Path) -> _Parsed:
    """The parsed transcript, brought up to date with the file (call holding _cache_lock)."""
    key = os.path.abspath(path)
    try:
        st = os.stat(key)
    except FileNotFoundError:
        _cache.pop(key, None)
        return _Parsed()
    entry = _cache.get(key)
    if entry is not None and (entry.ino, entry.dev, entry.size, entry.mtime_ns) == (
        st.st_ino, st.st_dev, st.st_size, st.st_mtime_ns
    ):
        return entry
    with open(key, "rb") as fh:
        # Only a file changed by appending (after a torn tail was set aside, perhaps) can be read from where we
        # stopped; one that was replaced (a git checkout, a migration), shrank below what we parsed or was
        # rewritten with the same size is read again from the start.
        grown = (entry is not None and (entry.ino, entry.dev) == (st.st_ino, st.st_dev)
                 and st.st_size >= entry.offset and st.st_size != entry.size)
        if grown and entry is not None and entry.offset:
            fh.seek(entry.offset - 1)
            grown = fh.read(1) == b"\n"  # still a line boundary: the bytes before it were not rewritten
        if not grown or entry is None:  # (entry is None only when grown is False)
            entry = _Parsed()
            fh.seek(0)
        data = fh.read()
    end = data.rfind(b"\n") + 1  # a last line without its newline is torn or still being written: not yet
    for line in data[:end].split(b"\n"):  # bytes, never str.splitlines: U+2028 inside a reply is no line end
        if line.strip():
            entry.apply(line, path)
    # Recorded only once parsed: a read that failed halfway is redone (re-applying a line is harmless).
    entry.ino, entry.dev, entry.size, entry.mtime_ns = st.st_ino, st.st_dev, st.st_size, st.st_mtime_ns
    entry.offset += end
    _cache[key] = entry
    return entry


def load(path: Path) -> list[Turn]:
    """The transcript's turns, in file order. The list is the caller's (append to it freely); the turns are
    shared with every other caller in this process, so change a past turn only to save it."""
    with _cache_lock:
        return _refresh(path).numbered()


def count(path: Path) -> int:
    with _cache_lock:
        return len(_refresh(path).turns)


def retracted(path: Path) -> set[str]:
    """The ids of the turns the file says were taken back."""
    with _cache_lock:
        return set(_refresh(path).retracted)


def taken_from_under(path: Path) -> list[tuple[Turn, list[int]]]:
    """Turns taken back after later turns had been answered on top of them (which only a merge of a clone that
    undid a turn writes): each with the numbers of the turns that followed it."""
    with _cache_lock:
        return list(_refresh(path).taken_from_under)


def unsaved(path: Path, turns: list[Turn]) -> bytes:
    """The lines that would bring the file up to `turns`: turns it lacks, and patches for turns whose
    summary or indexed flag differ from what it holds. Never removes a turn: a stale copy of the session
    cannot erase one that another window wrote — nor bring back one that was taken back."""
    lines = []
    with _cache_lock:
        entry = _refresh(path)
        for turn in turns:
            if turn.id in entry.retracted:
                continue
            saved = entry.saved.get(turn.id)
            if saved is None:
                lines.append(turn_line(turn))
            elif saved != (turn.summary, turn.indexed):
                lines.append(patch_line(turn.id, summary=turn.summary, indexed=turn.indexed))
    return b"".join(lines)


def parse(data: bytes, path: Path) -> list[Turn]:
    """Turns of transcript lines (patches applied, a turn twice kept once, retracted turns dropped), numbered
    as they were written."""
    entry = _Parsed()
    for line in data.split(b"\n"):
        if line.strip():
            entry.apply(line, path)
    return entry.turns


# ---------------------------------------------------------------- writing (hold the project lock)


@dataclass
class Torn:
    """A last line a crash cut off mid-write, moved out of the transcript into a file of its own."""

    kept: Path  # the file beside the transcript that holds the line's bytes
    said: str = ""  # the PM's message, as far as the line got
    whole: bool = False  # `said` is the whole message


def append(path: Path, data: bytes) -> Torn | None:
    """Append whole lines and fsync them. A torn last line (a process killed mid-append) is set aside first,
    so it can never glue itself to the new line; one that is complete but lost its newline (a hand edit)
    gets the newline back instead. Returns the torn line set aside, if there was one."""
    if not data:
        return None
    created = not path.exists()
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o666)
    try:
        torn = _mend_tail(fd, path)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    finally:
        os.close(fd)
    if created:
        fsync_dir(path.parent)
    return torn


def mend(path: Path) -> Torn | None:
    """Set a torn last line aside now rather than at the next append (hold the project lock: a line another
    process is still writing looks torn too)."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_APPEND)
    except FileNotFoundError:
        return None
    try:
        torn = _mend_tail(fd, path)
        os.fsync(fd)
    finally:
        os.close(fd)
    return torn


def _mend_tail(fd: int, path: Path) -> Torn | None:
    size = os.fstat(fd).st_size
    if not size or os.pread(fd, 1, size - 1) == b"\n":
        return None
    start, step = size, 1 << 16
    while start > 0:
        lo = max(0, start - step)
        nl = os.pread(fd, start - lo, lo).rfind(b"\n")
        if nl >= 0:
            start = lo + nl + 1
            break
        start = lo
    fragment = os.pread(fd, size - start, start)
    try:
        complete = isinstance(json.loads(fragment), dict)
    except ValueError:
        complete = False
    if complete:
        os.write(fd, b"\n")
        return None
    kept = _keep_torn(path, fragment)  # durable before the transcript lets go of it
    os.ftruncate(fd, start)
    log.warning("%s: moved a torn last line (%d bytes) to %s", path, size - start, kept.name)
    said, whole = _said(fragment)
    return Torn(kept, said, whole)


def _keep_torn(path: Path, fragment: bytes) -> Path:
    stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
    for n in range(1, 1000):
        kept = path.with_name(f"{path.name}.torn-{stamp}" + (f"-{n}" if n > 1 else ""))
        try:
            fd = os.open(kept, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            continue
        try:
            os.write(fd, fragment)
            os.fsync(fd)
        finally:
            os.close(fd)
        fsync_dir(path.parent)
        return kept
    raise OSError(f"no free name for the torn line of {path.name}")


def _said(fragment: bytes) -> tuple[str, bool]:
    """The PM's message in a torn turn line as far as it got, and whether it is whole; ("", False) for a
    line that is no turn's or broke off before it. A turn line holds `user` third (after id and number), so a
    crash anywhere past its first few dozen bytes leaves some of the message."""
    text = fragment.decode("utf-8", "ignore")  # a character cut in half is dropped
    decoder = json.JSONDecoder()
    at = 1 if text.startswith("{") else len(text)
    try:
        while at < len(text):  # the top-level keys in turn; nested values are skipped whole
            key, at = decoder.raw_decode(text, at)
            if text[at : at + 1] != ":":
                break
            if key == "user":
                try:
                    value = decoder.raw_decode(text, at + 1)[0]
                except ValueError:
                    return _string_start(text[at + 1 :]), False
                return (value, True) if isinstance(value, str) else ("", False)
            at = decoder.raw_decode(text, at + 1)[1]
            if text[at : at + 1] != ",":
                break
            at += 1
    except ValueError:
        pass
    return "", False


def _string_start(cut: str) -> str:
    """What a JSON string cut off before its closing quote says (an escape cut in half is dropped)."""
    if not cut.startswith('"'):
        return ""
    for end in range(len(cut), max(len(cut) - 7, 0), -1):
        try:
            value = json.loads(cut[:end] + '"')
        except ValueError:
            continue
        return value if isinstance(value, str) else ""
    return ""


def fsync_dir(folder: Path) -> None:
    """Make a new or renamed file's directory entry durable (not just its bytes)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
