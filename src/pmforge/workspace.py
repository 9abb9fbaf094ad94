"""Project workspaces on disk: layout, atomic saves and a cross-process lock.

A workspace is committed to git and cloned, so nothing written here holds an
absolute path or a secret.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import unicodedata
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from datetime import datetime, timezone

from filelock import FileLock, Timeout
from pydantic import ValidationError

from .errors import ForgeError
from .models import SCHEMA_VERSION, ProjectState, SessionState

MAX_FILENAME_CHARS = 120
MAX_FILENAME_BYTES = 180  # disks allow 255 bytes; leave room for ".md" and temp-file affixes
SUPPORTED_EXTENSIONS = (".md", ".markdown", ".docx")


def slugify(name: str) -> str:
    text = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-zA-Z0-9]+", "-", text).strip("-").lower()
    return slug[:60].strip("-")


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
    PROJECT_STATE = "project_state.json"
    CONTEXT = "context.md"

    def __init__(self, root: Path):
        self.root = Path(root)
        self.slug = self.root.name

    # ---- layout
    @property
    def state_path(self) -> Path:
        return self.root / self.STATE

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
        ws.save_project_state(ProjectState())
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
        """Hold the project's cross-process lock (an app and a CLI never write the same project at once)."""
        lock = FileLock(str(self.root / ".lock"), timeout=timeout)
        try:
            with lock:
                yield
        except Timeout:
            raise ForgeError(
                f"Project '{self.slug}' is busy in another Forge window or command; try again in a moment."
            ) from None

    # ---- state files
    def load_state(self) -> SessionState:
        try:
            state = SessionState.model_validate(_read_json(self.state_path))  # validators migrate older schemas
        except (ForgeError, ValidationError) as exc:
            raise self._set_aside_unreadable_state(exc) from None
        state.schema_version = SCHEMA_VERSION
        return state

    def _set_aside_unreadable_state(self, exc: Exception) -> ForgeError:
        """Keep the damaged file (it may be repairable by hand), start a fresh state that says so, and tell
        the user once: the session is never silently replaced by an empty one."""
        stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
        aside = self.state_path.with_name(f"state.unreadable-{stamp}.json")
        os.replace(self.state_path, aside)
        name = self.slug
        self.save_state(SessionState(project_name=name, recovered_from=aside.name))
        reason = str(exc).splitlines()[0]
        return ForgeError(
            f"The saved session of '{self.slug}' could not be read ({reason}); it was moved to {aside.name} "
            "and a fresh session was started. Your uploads and files are untouched."
        )

    def save_state(self, state: SessionState) -> None:
        atomic_write_text(self.state_path, state.model_dump_json(indent=1))

    def load_project_state(self) -> ProjectState:
        if not self.project_state_path.exists():
            return ProjectState()
        return ProjectState.model_validate(_read_json(self.project_state_path))

    def save_project_state(self, project_state: ProjectState) -> None:
        """project_state.json and context.md are written from the same value: one source of truth."""
        atomic_write_text(self.project_state_path, project_state.model_dump_json(indent=1))
        body = project_state.org_context.strip() or "_No organisation context recorded yet._"
        atomic_write_text(self.context_path, f"# Organisation context\n\n{body}\n")


def _read_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ForgeError(f"{path.name} in project '{path.parent.name}' is not valid JSON ({exc.msg}).") from None
