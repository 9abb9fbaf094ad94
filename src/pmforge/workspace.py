"""Project workspaces on disk: layout, atomic saves and a cross-process lock.

A workspace is committed to git and cloned, so nothing written here holds an
absolute path or a secret.
"""

from __future__ import annotations

import json
import logging
import os
import re
import tempfile
import time
import unicodedata
import uuid
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Iterator

from datetime import datetime, timezone

from filelock import FileLock, Timeout
from pydantic import ValidationError

from . import transcript
from .errors import ForgeError
from .models import SCHEMA_VERSION, ProjectState, SessionState, Turn

log = logging.getLogger(__name__)

MAX_FILENAME_CHARS = 120
MAX_FILENAME_BYTES = 180  # disks allow 255 bytes; leave room for ".md" and temp-file affixes
SUPPORTED_EXTENSIONS = (".md", ".markdown", ".docx")


def slugify(name: str) -> str:
    text = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-zA-Z0-9]+", "-", text).strip("-").lower()
    return slug[:60].strip("-")


def new_project_id() -> str:
    return uuid.uuid4().hex[:12]


def safe_filename(name: str) -> str:
    """A file name that cannot escape its folder: no directories, no control characters, bounded length."""
    base = name.replace("\\", "/").split("/")[-1]
    base = unicodedata.normalize("NFC", base)
    base = "".join(ch for ch in base if ch.isprintable() and ch not in '<>:"|?*')
    base = base.strip().lstrip(".").strip()
    if not base:
        raise ForgeError("That file has no usable name; rename it and upload it again.")
    stem, dot, ext = base.rpartition(".")
    if not dot:
        stem, ext = base, ""
    ext = ext.lower()
    limit = MAX_FILENAME_CHARS - len(ext) - 1
    if len(stem) > limit:
        stem = stem[:limit].rstrip()
    byte_limit = MAX_FILENAME_BYTES - len(ext.encode()) - 1
    while len(stem.encode("utf-8")) > byte_limit:  # CJK and emoji take 3–4 bytes a character
        stem = stem[:-1]
    stem = stem.rstrip()
    return f"{stem}.{ext}" if ext else stem


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_UMASK = _current_umask()


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write via a unique temp file in the same folder, fsync, then replace: a crash leaves old or new, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, 0o666 & ~_UMASK)  # mkstemp makes 0600; workspace files are shared through git
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


class Workspace:
    """One project folder under the projects root."""

    STATE = "state.json"
    TRANSCRIPT = "turns.jsonl"
    PROJECT_STATE = "project_state.json"
    CONTEXT = "context.md"
    OPERATION = ".operation.json"

    def __init__(self, root: Path):
        self.root = Path(root)
        self.slug = self.root.name

    # ---- layout
    @property
    def state_path(self) -> Path:
        return self.root / self.STATE

    @property
    def transcript_path(self) -> Path:
        return self.root / self.TRANSCRIPT

    @property
    def project_state_path(self) -> Path:
        return self.root / self.PROJECT_STATE

    @property
    def context_path(self) -> Path:
        return self.root / self.CONTEXT

    @property
    def uploads(self) -> Path:
        return self.root / "uploads"

    @property
    def converted(self) -> Path:
        return self.root / "converted"

    @property
    def artifacts(self) -> Path:
        return self.root / "artifacts"

    @property
    def vectordb(self) -> Path:
        return self.root / "vectordb"

    def converted_path(self, filename: str) -> Path:
        return self.converted / f"{filename}.md"

    # ---- creation and discovery
    @classmethod
    def create(cls, projects_root: Path, name: str) -> "Workspace":
        slug = slugify(name)
        if not slug:
            raise ForgeError("A project name needs at least one letter or digit.")
        root = Path(projects_root) / slug
        if root.exists():
            raise ForgeError(f"A project called '{slug}' already exists.")
        ws = cls(root)
        for folder in (ws.uploads, ws.converted, ws.artifacts):
            folder.mkdir(parents=True, exist_ok=True)
            (folder / ".gitkeep").touch()
        ws.save_state(SessionState(project_name=name.strip()))
        ws.save_project_state(ProjectState(project_id=new_project_id()))
        return ws

    @classmethod
    def open(cls, projects_root: Path, name: str) -> "Workspace":
        root = Path(projects_root) / slugify(name)
        if not (root / cls.STATE).exists():
            raise ForgeError(f"There is no project called '{name}'. Create it with: forge new \"{name}\"")
        return cls(root)

    @staticmethod
    def list_projects(projects_root: Path) -> list[str]:
        """Slugs of the projects under the root, most recently active first."""
        root = Path(projects_root)
        if not root.is_dir():
            return []
        found = [p for p in root.iterdir() if (p / Workspace.STATE).is_file()]
        found.sort(key=lambda p: (p / Workspace.STATE).stat().st_mtime, reverse=True)
        return [p.name for p in found]

    # ---- concurrency
    @contextmanager
    def locked(self, timeout: float = 30.0) -> Iterator[None]:
        """Hold the project's cross-process lock (an app and a CLI never write the same project at once).

        Re-entrant within a thread (one lock object per path), so an operation may call another."""
        lock = FileLock(str(self.root / ".lock"), is_singleton=True)
        try:
            lock.acquire(timeout=timeout)
        except Timeout:
            raise ForgeError(
                f"Project '{self.slug}' is busy in another Forge window or command; try again in a moment."
            ) from None
        try:
            yield
        finally:
            lock.release()

    @property
    def operation_marker(self) -> Path:
        return self.root / self.OPERATION

    @contextmanager
    def operation(self, label: str) -> Iterator[None]:
        """A change that spans several files and the vector store. The marker exists exactly as long as an
        operation holds the lock, and stays behind when it dies: finding it at the start of an operation
        means a crash (or an error) interrupted the last one."""
        with self.locked():
            key = str(self.root.resolve())
            depth = _operation_depth.get(key, 0)
            if depth == 0:
                atomic_write_text(self.operation_marker, json.dumps(
                    {"operation": label, "pid": os.getpid(), "started": datetime.now(timezone.utc).isoformat()}))
            _operation_depth[key] = depth + 1
            try:
                yield
            finally:
                _operation_depth[key] = depth
            if depth == 0:
                self.operation_marker.unlink(missing_ok=True)

    def in_operation(self) -> bool:
        return _operation_depth.get(str(self.root.resolve()), 0) > 0

    def interrupted_operation(self) -> dict | None:
        """What the last operation was doing when it died (ask while holding the lock), or None."""
        if self.in_operation():
            return None
        try:
            return json.loads(self.operation_marker.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (json.JSONDecodeError, UnicodeDecodeError):
            return {"operation": "unknown"}

    def clear_interrupted_operation(self) -> None:
        self.operation_marker.unlink(missing_ok=True)

    def leftover_temp_files(self, older_than_s: float = 60.0) -> list[Path]:
        """Temp files of atomic writes a crash left behind (younger ones may belong to a live writer)."""
        cutoff = time.time() - older_than_s
        found = []
        for path in self.root.rglob(".*.tmp"):
            try:
                if path.is_file() and path.stat().st_mtime < cutoff:
                    found.append(path)
            except FileNotFoundError:
                pass
        return found

    # ---- state files
    def load_state(self) -> SessionState:
        """state.json with the transcript from turns.jsonl. Costs the same on turn 1,000 as on turn 1: the
        transcript is parsed once per process and then only what was appended (see transcript.load)."""
        state = self._parse_state(self.state_path.read_bytes())
        if state.schema_version < TRANSCRIPT_SCHEMA or state.turns:
            state = self._migrate_transcript()
        else:
            state.turns = transcript.load(self.transcript_path)
        state.schema_version = SCHEMA_VERSION
        return state

    def _parse_state(self, raw: bytes) -> SessionState:
        # Parsed and validated in one pass; field validators migrate older schemas.
        try:
            return SessionState.model_validate_json(raw)
        except ValidationError as exc:
            if exc.errors()[0]["type"] == "json_invalid":
                exc = ForgeError(f"{self.STATE} is not valid JSON")
            raise self._set_aside_unreadable_state(exc) from None

    def _migrate_transcript(self) -> SessionState:
        """Move the turns of an older state.json (schema 2 and before) into turns.jsonl.

        turns.jsonl is written in full and fsynced before state.json drops its copy, so a crash in between
        leaves both, and then turns.jsonl wins. When another process holds the lock, the session is read
        as it is and the move waits for the next load."""
        with ExitStack() as held:
            try:
                held.enter_context(self.locked(timeout=2.0))
            except ForgeError:  # busy
                state = self._legacy_state(self.state_path.read_bytes())
                return state if state is not None else self.load_state()
            state = self._legacy_state(self.state_path.read_bytes())  # again: someone may have migrated
            if state is None:
                return self.load_state()
            if not transcript.count(self.transcript_path):
                atomic_write_bytes(self.transcript_path, transcript.encode(state.turns))
                transcript.fsync_dir(self.root)
            state.schema_version = SCHEMA_VERSION
            self.save_state(state)
            log.info("moved %d turns of %s from %s to %s", len(state.turns), self.slug, self.STATE, self.TRANSCRIPT)
            return state

    def _legacy_state(self, raw: bytes) -> SessionState | None:
        """An older state.json with its turns (from turns.jsonl if that already holds them); None if the
        file is no longer older (another process migrated it)."""
        state = self._parse_state(raw)
        if state.schema_version >= TRANSCRIPT_SCHEMA and not state.turns:
            return None
        data = json.loads(raw)
        turns = data.pop("turns", None) or []
        for turn in turns:
            if isinstance(turn, dict) and not turn.get("id"):
                turn["id"] = transcript.legacy_turn_id(turn)
        state.turns = transcript.load(self.transcript_path) or [Turn.model_validate(t) for t in turns]
        return state

    def state_signature(self) -> tuple | None:
        """Changes whenever state.json is replaced (every save is a new file) or the transcript grows:
        cheaper than reading them. Take it *before* loading: a save in between then shows as a change,
        never hides one."""
        try:
            st = self.state_path.stat()
        except FileNotFoundError:
            return None
        try:
            tr = self.transcript_path.stat()
            turns = (tr.st_ino, tr.st_size)
        except FileNotFoundError:
            turns = None
        return st.st_ino, st.st_mtime_ns, st.st_size, turns

    def _set_aside_unreadable_state(self, exc: Exception) -> ForgeError:
        """Keep the damaged file (it may be repairable by hand), start a fresh state that says so, and tell
        the user once: the session is never silently replaced by an empty one."""
        stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
        aside = self.state_path.with_name(f"state.unreadable-{stamp}.json")
        os.replace(self.state_path, aside)
        name = self.slug
        self.save_state(SessionState(project_name=name, recovered_from=aside.name))
        reason = str(exc).splitlines()[0]
        kept = " and the conversation" if self.transcript_path.exists() else ""
        return ForgeError(
            f"The saved session of '{self.slug}' could not be read ({reason}); it was moved to {aside.name} "
            f"and a fresh session was started. Your uploads{kept} and files are untouched."
        )

    def save_state(self, state: SessionState) -> None:
        """state.json (small: no turns), after appending to turns.jsonl whatever of `state.turns` it lacks:
        new turns, and patches for changed summaries and indexed flags. Hold the lock when the state has
        new turns or changes to them."""
        lines = transcript.unsaved(self.transcript_path, state.turns)
        if lines:
            with self.locked():
                transcript.append(self.transcript_path, lines)
        atomic_write_text(self.state_path, state.model_dump_json(indent=1))

    def append_turn(self, turn: Turn) -> None:
        """Add one finished turn to the transcript (fsynced before this returns)."""
        with self.locked():
            transcript.append(self.transcript_path, transcript.turn_line(turn))

    def patch_turn(self, turn: Turn) -> None:
        """Record a turn's new summary and indexed flag: one small line, never a rewrite."""
        with self.locked():
            transcript.append(self.transcript_path,
                              transcript.patch_line(turn.id, summary=turn.summary, indexed=turn.indexed))

    def project_id(self) -> str:
        """The project's id, given one on first need (workspaces made before ids existed have none)."""
        manifest = self.load_project_state()
        if not manifest.project_id:
            with self.locked():
                manifest = self.load_project_state()
                if not manifest.project_id:
                    manifest.project_id = new_project_id()
                    self.save_project_state(manifest)
        return manifest.project_id

    def load_project_state(self) -> ProjectState:
        if not self.project_state_path.exists():
            return ProjectState()
        return ProjectState.model_validate(_read_json(self.project_state_path))

    def save_project_state(self, project_state: ProjectState) -> None:
        """project_state.json and context.md are written from the same value: one source of truth."""
        atomic_write_text(self.project_state_path, project_state.model_dump_json(indent=1))
        body = project_state.org_context.strip() or "_No organisation context recorded yet._"
        atomic_write_text(self.context_path, f"# Organisation context\n\n{body}\n")


TRANSCRIPT_SCHEMA = 3  # the first schema whose state.json holds no turns


# Operations open in this process, by project folder (the lock makes other threads wait, so one counter
# per folder is enough).
_operation_depth: dict[str, int] = {}


def _read_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ForgeError(f"{path.name} in project '{path.parent.name}' is not valid JSON ({exc.msg}).") from None
