"""Project workspaces on disk: layout, atomic saves and a cross-process lock.

A workspace is committed to git and cloned, so nothing written here holds an
absolute path or a secret.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import secrets
import shutil
import signal
import tempfile
import time
import unicodedata
import uuid
from collections import Counter
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Hashable, Iterator

from filelock import FileLock, Timeout
from pydantic import ValidationError

from pmforge.core import conflicts, demo, transcript
from pmforge.core.errors import ForgeError
from pmforge.core.models import SCHEMA_VERSION, Manifest, SessionState, Turn

log = logging.getLogger(__name__)

MAX_FILENAME_CHARS = 120
MAX_FILENAME_BYTES = 180  # disks allow 255 bytes; leave room for ".md" and temp-file affixes
NAME_TAG_CHARS = 6
SUPPORTED_EXTENSIONS = (".md", ".markdown", ".docx")


SLUG_CHARS = 60
SLUG_HASH_CHARS = 8

# Scripts transliterated by table (cheap and unambiguous enough for a folder name); names in other
# scripts get a slug from their hash. Either way the name itself is kept as the display name.
_TRANSLIT = str.maketrans({
    **dict(zip("абвгдеёжзийклмнопрстуфхцчшщъыьэюяєіїґўђјљњћџ",
               ["a", "b", "v", "g", "d", "e", "e", "zh", "z", "i", "i", "k", "l", "m", "n", "o", "p", "r", "s",
                "t", "u", "f", "kh", "ts", "ch", "sh", "shch", "", "y", "", "e", "yu", "ya", "ye", "i", "yi", "g",
                "u", "dj", "j", "lj", "nj", "c", "dz"])),
    **dict(zip("αβγδεζηθικλμνξοπρσςτυφχψωάέήίόύώϊϋΐΰ",
               ["a", "v", "g", "d", "e", "z", "i", "th", "i", "k", "l", "m", "n", "x", "o", "p", "r", "s", "s",
                "t", "y", "f", "ch", "ps", "o", "a", "e", "i", "i", "o", "y", "o", "i", "y", "i", "y"])),
})


def _ascii_slug(text: str) -> str:
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-zA-Z0-9]+", "-", text).strip("-").lower()
    return slug[:SLUG_CHARS].strip("-")


def _non_latin(name: str) -> bool:
    """Whether the name has letters or digits outside the Latin script (which NFKD cannot spell in ASCII)."""
    return any(ch.isalnum() and not ch.isascii() and not unicodedata.name(ch, "").startswith("LATIN")
               for ch in name)


def slugify(name: str) -> str:
    """The project's folder name. Latin names keep the slug they always had; a name in another script
    gets its transliteration (Cyrillic, Greek) or "project", plus a short hash of the name, so two
    different names never share a folder and the same name always finds its own."""
    if not _non_latin(name):
        return _ascii_slug(name)
    key = unicodedata.normalize("NFC", name.strip()).casefold()
    digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:SLUG_HASH_CHARS]
    readable = _ascii_slug(unicodedata.normalize("NFC", name).lower().translate(_TRANSLIT))
    readable = readable[: SLUG_CHARS - SLUG_HASH_CHARS - 1].strip("-") or "project"
    return f"{readable}-{digest}"


MAX_DISPLAY_NAME_CHARS = 120


def display_name(manifest_name: str, session_name: str, slug: str) -> str:
    """What the PM sees for a project: the name kept in its manifest (typed at creation or given by a
    rename); a project made before names were kept there shows its session's name, else its slug."""
    # Names kept before bidi controls were dropped from them must not read backwards either.
    return printable(manifest_name or "").strip() or printable(session_name or "").strip() or slug


def printable(text: str) -> str:
    """The text without characters that are not shown yet change what is: controls, zero-width marks and bidi
    overrides ("Invoice \u202egpj.exe" reads as "Invoice exe.jpg")."""
    return "".join(ch for ch in text if ch.isprintable())


def clean_display_name(name: str) -> str:
    """A display name as typed, on one line and of a sensible length; one sentence when it cannot be one."""
    name = printable(" ".join(name.split()))  # newlines and tabs would break `forge projects` and the picker
    if not slugify(name):
        raise ForgeError("A project name needs at least one letter or digit.")
    if len(name) > MAX_DISPLAY_NAME_CHARS:
        raise ForgeError(f"A project name can be at most {MAX_DISPLAY_NAME_CHARS} characters; "
                         f"this one has {len(name)}.")
    return name


def picker_labels(names: dict[str, str]) -> dict[str, str]:
    """slug → what a project list shows: its display name, with the slug added where two projects
    show the same name (a rename may give one another's name)."""
    seen = Counter(name.casefold() for name in names.values())
    return {slug: name if seen[name.casefold()] == 1 else f"{name} ({slug})" for slug, name in names.items()}


def _json_field(path: Path, key: str) -> str:
    """One string field of a JSON file, or "" when the file is missing, damaged or mid-merge."""
    try:
        value = json.loads(path.read_text(encoding="utf-8")).get(key, "")
    except (OSError, ValueError, AttributeError):
        return ""
    return value if isinstance(value, str) else ""


def legacy_slug(name: str) -> str:
    """The slug names got before other scripts were spelled (their non-Latin letters simply dropped)."""
    return _ascii_slug(name)


def new_project_id() -> str:
    return uuid.uuid4().hex[:12]


def safe_filename(name: str) -> str:
    """A file name that cannot escape its folder: no directories, no control characters, bounded length."""
    base = name.replace("\\", "/").split("/")[-1]
    base = "".join(ch for ch in printable(unicodedata.normalize("NFC", base)) if ch not in '<>:"|?*')
    base = base.strip().lstrip(".").strip()
    if not base:
        raise ForgeError("That file has no usable name; rename it and upload it again.")
    stem, ext = _split_name(base)
    if _fit(stem, ext) != stem:  # two long names alike up to the cut must not become one file
        return tagged_filename(stem + ext)
    return stem.rstrip() + ext


def tagged_filename(name: str) -> str:
    """The name with a short tag from its hash before the extension: a name of its own, the same every time."""
    stem, ext = _split_name(name)
    tag = "-" + hashlib.sha256(name.encode("utf-8")).hexdigest()[:NAME_TAG_CHARS]
    return _fit(stem, tag + ext).rstrip() + tag + ext


def _split_name(name: str) -> tuple[str, str]:
    """(stem, ".ext" in lower case, or "")."""
    stem, dot, ext = name.rpartition(".")
    if not dot:
        return name, ""
    return stem, f".{ext.lower()}" if ext else ""


def _fit(stem: str, ending: str) -> str:
    """The stem, cut so that stem + ending keeps within the limits on names."""
    stem = stem[: MAX_FILENAME_CHARS - len(ending)]
    while len((stem + ending).encode("utf-8")) > MAX_FILENAME_BYTES:  # CJK and emoji take 3–4 bytes a character
        stem = stem[:-1]
    return stem


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


def _played_folder(folder: Path) -> Path:
    """Where a project's current names live: a shipped example's working copy once it has one (a rename
    in the app renames the copy), else the folder itself; a played copy whose example is gone, the copy.
    Listing never makes a copy."""
    copy = demo.copy_of(folder)
    return copy if (demo.is_example(folder) or not folder.exists()) and (copy / "state.json").is_file() else folder


class Workspace:
    """One project folder under the projects root."""

    STATE = "state.json"
    TRANSCRIPT = "turns.jsonl"
    PROJECT_STATE = "project_state.json"
    CONTEXT = "context.md"
    OPERATION = ".operation.json"

    def __init__(self, root: Path, lock_wait_s: float = 30.0):
        self.root = Path(root)
        self.lock_wait_s = lock_wait_s  # Settings.lock_wait_s, handed over by the project that opens it
        self.slug = self.root.name
        self.operations = OperationJournal(self)
        self.transcript_file = TranscriptFile(self)

    # ---- layout
    @property
    def state_path(self) -> Path:
        return self.root / self.STATE

    @property
    def transcript_path(self) -> Path:
        return self.root / self.TRANSCRIPT

    @property
    def manifest_path(self) -> Path:
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
        name = clean_display_name(name)
        slug = slugify(name)
        root = projects_folder(projects_root) / slug
        if root.exists():
            raise ForgeError(f"A project called '{slug}' already exists.")
        ws = cls(root)
        for folder in (ws.uploads, ws.converted, ws.artifacts):
            folder.mkdir(parents=True, exist_ok=True)
            (folder / ".gitkeep").touch()
        ws.save_state(SessionState(project_name=name))
        ws.save_manifest(Manifest(project_id=new_project_id(), display_name=name))
        return ws

    @classmethod
    def open(cls, projects_root: Path, name: str) -> "Workspace":
        folder = projects_folder(projects_root)
        # The slug, then the one a name got before other scripts were spelled (an older project's folder).
        for slug in dict.fromkeys((slugify(name), legacy_slug(name))):
            if slug and (folder / slug / cls.STATE).exists():
                # A shipped example opens as its own copy (made again while unplayed when the example changed).
                return cls(demo.working_folder(folder / slug, tell=notify))
            kept = demo.copy_of(folder / slug) if slug else None
            if kept is not None and kept in demo.orphaned_copies(folder):
                notify(f"The shipped example '{slug}' is no longer in this copy of the repository; the copy you played "
                       "is kept and opens as before.", once=("orphaned copy", str(kept)))
                return cls(kept)
        # A renamed project keeps its folder: its new display name finds it too (`forge chat "New name"`).
        wanted = printable(" ".join(name.split())).casefold()
        named = [slug for slug, shown in display_names(projects_root).items()
                 if " ".join(shown.split()).casefold() == wanted]
        if len(named) == 1:
            return cls.open(projects_root, named[0])
        raise ForgeError(f"There is no project called '{name}'. Create it with: forge new \"{name}\"")

    def read_display_name(self) -> str:
        """The project's display name, read without loading the transcript; a damaged or conflicted file
        shows the next best name rather than stopping a project list."""
        return display_name(_json_field(self.manifest_path, "display_name"),
                            _json_field(self.state_path, "project_name"), self.slug)

    def rename(self, name: str) -> str:
        """Give the project a new display name (the session's name, which briefs print, follows). The folder
        keeps its slug, so every command's PROJECT and every clone's path stay as they were."""
        name = clean_display_name(name)
        taken = slugify(name)
        if taken != self.slug and (self.root.parent / taken / self.STATE).exists():
            raise ForgeError(f"Project '{taken}' already goes by that name; pick another, or rename that "
                             "one first.")
        with self.locked():
            manifest = self.load_manifest()
            manifest.display_name = name
            self.save_manifest(manifest)
            state = self.load_state()
            state.project_name = name
            self.save_state(state)
        return name

    def remove(self) -> None:
        """Delete the project folder (hold the lock). It is first renamed to a dot-folder, one atomic step:
        the project leaves every list at once, and a project made meanwhile under the same name gets a
        folder of its own. Then the dot-folder is removed."""
        aside = self.root.with_name(f".deleted-{self.slug}-{secrets.token_hex(4)}")
        os.replace(self.root, aside)
        try:
            shutil.rmtree(aside)
        except OSError as exc:
            raise ForgeError(f"Project '{self.slug}' is deleted, but some of its files could not be removed "
                             f"({exc.strerror or exc}); delete the folder {aside} by hand.") from None

    # ---- concurrency
    @contextmanager
    def locked(self, timeout: float | None = None) -> Iterator[None]:
        """Hold the project's cross-process lock (an app and a CLI never write the same project at once).

        Re-entrant within a thread (one lock object per path), so an operation may call another."""
        lock = FileLock(str(self.root / ".lock"), is_singleton=True)
        try:
            self._acquire(lock, self.lock_wait_s if timeout is None else timeout)
        except Timeout:
            raise ProjectBusy(
                f"Project '{self.slug}' is busy in another Forge window or command; try again in a moment."
            ) from None
        try:
            yield
        finally:
            lock.release()

    def _acquire(self, lock: FileLock, timeout: float) -> None:
        """Take one of the project's lock files, or say in one sentence that the project was deleted:
        filelock makes a missing folder again, which would leave a stray one holding only the lock file."""
        gone = f"Project '{self.slug}' no longer exists (it was deleted in another Forge window or command)."
        try:
            folder = os.stat(self.root)
            lock.acquire(timeout=timeout)
        except FileNotFoundError:  # gone before, or while, this waited
            raise ProjectGone(gone) from None
        now = os.stat(self.root)
        if (now.st_dev, now.st_ino) != (folder.st_dev, folder.st_ino):  # deleted meanwhile, the folder made again
            lock.release()
            made = Path(lock.lock_file)
            try:
                if {p.name for p in self.root.iterdir()} <= {made.name}:
                    made.unlink(missing_ok=True)
                    self.root.rmdir()
            except OSError:  # something else arrived in it meanwhile: not ours to remove
                pass
            raise ProjectGone(gone)

    @contextmanager
    def turn_slot(self, wait_s: float, on_wait: Callable[[], None] | None = None) -> Iterator[None]:
        """Answer one message at a time per project: a second command waits (bounded) for the turn in
        progress instead of racing it and having its own reply refused. `on_wait` runs once, before waiting."""
        lock = FileLock(str(self.root / ".turn.lock"), is_singleton=True)
        try:
            self._acquire(lock, 0)
        except Timeout:
            if on_wait is not None:
                on_wait()
            try:
                self._acquire(lock, wait_s)
            except Timeout:
                raise ProjectBusy(
                    f"Project '{self.slug}' is still answering another message after {wait_s:.0f} s."
                ) from None
        try:
            yield
        finally:
            lock.release()

    # ---- state files
    def load_state(self) -> SessionState:
        """state.json with the transcript from turns.jsonl. Costs the same on turn 1,000 as on turn 1: the
        transcript is parsed once per process and then only what was appended (see transcript.load)."""
        state = self._parse_state(self.state_path.read_bytes())
        if state.schema_version < TRANSCRIPT_SCHEMA or state.turns:
            state = self._migrate_transcript()
        else:
            state.turns = transcript.load(self.transcript_path)
            taken = self._tell_turns_taken_from_under()
            if len(state.turns) + taken < state.turns_saved:
                self._tell_turns_lost(state)
        state.schema_version = SCHEMA_VERSION
        return state

    def _tell_turns_taken_from_under(self) -> int:
        """Once per process and turn: a turn another copy of the project took back after later turns here were
        answered on top of it. The later turns stay; their PM should look at them again. Returns how many."""
        taken = transcript.taken_from_under(self.transcript_path)
        for turn, later in taken:
            first_line = next((line.strip() for line in turn.user.splitlines() if line.strip()), "")
            after = ", ".join(map(str, later[:5])) + ("…" if len(later) > 5 else "")
            notify(f"In '{self.slug}', turn {turn.number} (\"{printable(first_line)[:80]}\") was taken back in another "
                   f"copy of this project after turn(s) {after} had been answered on top of it. It is no longer "
                   f"part of the session; the later turns and what they recorded stay, but they may answer a "
                   "question that is gone: look at them again. New turns are numbered after the latest one.",
                   log_text=f"{self.slug}: turn {turn.number} ({turn.id}) retracted under turn(s) {after}",
                   once=("taken from under", str(self.root.resolve()), turn.id))
        return len(taken)

    def _tell_turns_lost(self, state: SessionState) -> None:
        """Once per process and project: the transcript holds fewer turns than the session saved."""
        lost = state.turns_saved - len(state.turns)
        what = ("its conversation file (turns.jsonl) is missing" if not self.transcript_path.exists()
                else "its conversation file (turns.jsonl) is shorter than the session it belongs to")
        notify(f"'{self.slug}' lost {lost} turn(s) of its conversation: {what}. The brief and the register are "
               f"intact; `forge doctor {self.slug} --fix` puts the lost turns back from the conversation memory "
               "(before you send a new message).",
               once=("turns lost", str(self.root.resolve()), state.turns_saved, len(state.turns)))

    def _parse_state(self, raw: bytes) -> SessionState:
        # Parsed and validated in one pass; field validators migrate older schemas.
        try:
            return SessionState.model_validate_json(raw)
        except ValidationError as exc:
            if conflicts.has_markers(raw.decode("utf-8", "replace")):
                raise self.conflict_error(self.STATE) from None  # a merge to finish, not a damaged session
            reason: Exception = exc
            if exc.errors()[0]["type"] == "json_invalid":
                reason = ForgeError(f"{self.STATE} is not valid JSON")
            raise self._set_aside_unreadable_state(reason) from None

    def conflict_error(self, filename: str) -> "UnresolvedConflict":
        return UnresolvedConflict(f"Project '{self.slug}' has unresolved git conflict markers (in {filename}); "
                                  f"run `forge doctor --fix {self.slug}`.")

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
        self.save_state(SessionState(project_name=self._display_name(), recovered_from=aside.name))
        reason = str(exc).splitlines()[0]
        kept = " and the conversation" if self.transcript_path.exists() else ""
        error = ForgeError(
            f"The saved session of '{self.slug}' could not be read ({reason}); it was moved to {aside.name} "
            f"and a fresh session was started. Your uploads{kept} and files are untouched."
        )
        notify(str(error))  # also when a caller (recovery, say) goes on without showing the error
        return error

    def _display_name(self) -> str:
        try:
            return self.load_manifest().display_name or self.slug
        except ForgeError:
            return self.slug

    def save_state(self, state: SessionState) -> None:
        """state.json (small: no turns), after appending to turns.jsonl whatever of `state.turns` it lacks:
        new turns, and patches for changed summaries and indexed flags. Hold the lock when the state has
        new turns or changes to them."""
        lines = transcript.unsaved(self.transcript_path, state.turns)
        if lines:
            with self.locked():
                self.transcript_file.append_lines(lines)
        state.updated_at = saved_at()  # which side is newer, should two clones' saves meet in a git merge
        state.turns_saved = len(state.turns)
        atomic_write_text(self.state_path, state.model_dump_json(indent=1))

    def project_id(self) -> str:
        """The project's id, given one on first need (workspaces made before ids existed have none)."""
        manifest = self.load_manifest()
        if not manifest.project_id:
            with self.locked():
                manifest = self.load_manifest()
                if not manifest.project_id:
                    manifest.project_id = new_project_id()
                    self.save_manifest(manifest)
        return manifest.project_id

    def load_manifest(self) -> Manifest:
        if not self.manifest_path.exists():
            return Manifest()
        try:
            raw = self.manifest_path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise ForgeError(f"{self.PROJECT_STATE} in project '{self.slug}' is not text; restore it from git "
                             f"or run `forge doctor --fix {self.slug}`.") from None
        if conflicts.has_markers(raw):
            raise self.conflict_error(self.PROJECT_STATE)
        try:
            return Manifest.model_validate(json.loads(raw))
        except json.JSONDecodeError as exc:
            raise ForgeError(f"{self.PROJECT_STATE} in project '{self.slug}' is not valid JSON ({exc.msg}); "
                             "restore it from git.") from None
        except ValidationError as exc:
            where = ".".join(map(str, exc.errors()[0]["loc"])) or "the top level"
            raise ForgeError(f"{self.PROJECT_STATE} in project '{self.slug}' is not a Forge file list ({where}: "
                             f"{exc.errors()[0]['msg'].lower()}); restore it from git.") from None

    def save_manifest(self, manifest: Manifest) -> None:
        """project_state.json and context.md are written from the same value: one source of truth."""
        manifest.updated_at = saved_at()
        atomic_write_text(self.manifest_path, manifest.model_dump_json(indent=1))
        body = manifest.org_context.strip() or "_No organisation context recorded yet._"
        atomic_write_text(self.context_path, f"# Organisation context\n\n{body}\n")

    # ---- git merges (forge doctor --fix)
    def resolve_conflicts(self) -> "ConflictRepair":
        """Finish a git merge of this workspace Forge's way, keeping both sides (see conflicts.py). Each
        conflicted file is kept beside as NAME.conflict-STAMP; a file that cannot be merged stops here in
        one sentence, before anything is written."""
        repair = ConflictRepair()
        with self.locked():
            merged_files = []
            for path, merge, model in ((self.state_path, conflicts.merge_state, SessionState),
                                       (self.manifest_path, conflicts.merge_manifest, Manifest)):
                text = _read_text(path)
                if text is None or not conflicts.has_markers(text):
                    continue
                try:
                    ours, theirs = conflicts.parse_sides(text)
                    if not (isinstance(ours, dict) and isinstance(theirs, dict)):
                        raise conflicts.Unmergeable("a side is not a JSON object")
                    merged, notes = merge(ours, theirs)
                    model.model_validate(merged)
                except (conflicts.Unmergeable, ValidationError) as exc:
                    reason = str(exc).splitlines()[0]
                    raise ForgeError(f"{path.name} of project '{self.slug}' has git conflicts Forge cannot merge "
                                     f"({reason}); merge it by hand, then run `forge doctor --fix {self.slug}`."
                                     ) from None
                merged_files.append((path, merged, notes))
            for path, merged, notes in merged_files:  # all merges worked out: now write them
                aside = self._keep_aside(path)
                atomic_write_text(path, json.dumps(merged, indent=1, ensure_ascii=False))
                log.info("resolved the git conflict in %s of %s (%d values set aside)", path.name, self.slug,
                         len(notes))
                repair.lines.append(f"Merged the git conflict in {path.name}, keeping both sides (the conflicted "
                                    f"file is kept as {aside.name}).")
                repair.lines += [f"{path.name}: {note}." for note in notes]
            context = _read_text(self.context_path)
            if merged_files or (context is not None and conflicts.has_markers(context)):
                self.save_manifest(self.load_manifest())  # context.md is written from the manifest
                if context is not None and conflicts.has_markers(context):
                    repair.lines.append(f"Rewrote {self.CONTEXT} from {self.PROJECT_STATE} (it had git conflict "
                                        "markers).")
            self._repair_transcript(repair)
        return repair

    def _repair_transcript(self, repair: "ConflictRepair") -> None:
        """turns.jsonl: drop conflict markers (keeping both sides' lines), a turn twice once (by id), and
        renumber turns two clones numbered alike. Renumbered turns are marked unremembered, so memory is
        stored again under their new numbers."""
        try:
            raw = self.transcript_path.read_bytes()
        except FileNotFoundError:
            return
        text = raw.decode("utf-8", "surrogateescape")
        marked = conflicts.has_markers(text)
        if marked:
            kept = conflicts.transcript_lines(text)
            raw = "".join(f"{line}\n" for line in kept).encode("utf-8", "surrogateescape")
        turns = transcript.parse(raw, self.transcript_path)
        numbers = [t.number for t in turns]
        fixed = conflicts.renumber(numbers)
        if not marked and fixed == numbers:
            return
        repeated = {n for n, times in Counter(numbers).items() if times > 1}
        renumbered = [n for t, n in zip(turns, fixed) if t.number != n]
        for i, (turn, number) in enumerate(zip(turns, fixed)):
            if turn.number != number or turn.number in repeated:  # both turns of a pair: memory may hold either
                turns[i] = turn.model_copy(update={"number": number, "indexed": False})
        aside = self._keep_aside(self.transcript_path)
        atomic_write_bytes(self.transcript_path, transcript.encode(turns))
        transcript.fsync_dir(self.root)
        repair.renumbered |= set(renumbered)
        what = "joined both sides of its git conflict" if marked else "found turn numbers used twice"
        moved = f"; renumbered {len(renumbered)} turn(s) that two clones had numbered alike" if renumbered else ""
        repair.lines.append(f"{self.TRANSCRIPT}: {what}{moved} (the old file is kept as {aside.name}).")
        log.info("repaired the transcript of %s: %d turns, %d renumbered", self.slug, len(turns), len(renumbered))

    def _keep_aside(self, path: Path) -> Path:
        stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
        aside = path.with_name(f"{path.name}.conflict-{stamp}")
        atomic_write_bytes(aside, path.read_bytes())
        return aside


def list_projects(projects_root: Path) -> list[str]:
    """Slugs of the projects under the root, most recently active first."""
    root = projects_folder(projects_root)
    if not root.is_dir():
        return []
    # A dot-folder is a project being deleted (see `Workspace.remove`), never one to list. A played copy of an
    # example that is gone is listed under the example's name.
    found = [p for p in root.iterdir() if not p.name.startswith(".") and (p / Workspace.STATE).is_file()]
    found += demo.orphaned_copies(root)
    found.sort(key=lambda p: (p / Workspace.STATE).stat().st_mtime, reverse=True)
    return [p.name for p in found]


def display_names(projects_root: Path) -> dict[str, str]:
    """slug → display name of every project under the root, most recently active first."""
    return {slug: Workspace(_played_folder(projects_folder(projects_root) / slug)).read_display_name()
            for slug in list_projects(projects_root)}


class OperationJournal:
    """The marker a change spanning several files and the vector store leaves while it runs (and behind, when it
    dies): what recovery reads to finish or undo an interrupted operation."""

    def __init__(self, ws: "Workspace"):
        self.ws = ws

    @property
    def marker(self) -> Path:
        return self.ws.root / Workspace.OPERATION

    @contextmanager
    def marked(self, label: str, **details) -> Iterator[None]:
        """A change that spans several files and the vector store. The marker exists exactly as long as an
        operation holds the lock, and stays behind when it dies: finding it at the start of an operation
        means a crash (or an error) interrupted the last one.

        The marker is {"operation": label, "pid", "started", **details}: `label` reads "upload NAME",
        "delete NAME", "turn N", "reindex"...; `details` (JSON values, e.g. file=NAME) tell recovery more."""
        with self.ws.locked():
            key = str(self.ws.root.resolve())
            depth = _operation_depth.get(key, 0)
            if depth == 0:
                atomic_write_text(self.marker, json.dumps(
                    {**details, "operation": label, "pid": os.getpid(),
                     "started": datetime.now(timezone.utc).isoformat()}, ensure_ascii=False))
            _operation_depth[key] = depth + 1
            try:
                yield
            finally:
                _operation_depth[key] = depth
            if depth == 0:
                self.marker.unlink(missing_ok=True)

    def running(self) -> bool:
        """This process is inside a marked operation on the workspace."""
        return _operation_depth.get(str(self.ws.root.resolve()), 0) > 0

    def crash_point(self, step: str) -> None:
        # For the crash tests only, inert unless FORGE_CRASH_AT is set: FORGE_CRASH_AT="<operation label
        # prefix>:<step>" (e.g. "upload:indexed") SIGKILLs this process when the operation the marker names
        # reaches `step`. The steps: "indexed" (an upload's vectors are stored, its manifest entry is not),
        # "unindexed" (a delete's vectors are gone, the manifest still lists the file), "appended" (a turn is
        # in turns.jsonl, state.json is not yet saved).
        wanted = os.environ.get("FORGE_CRASH_AT")
        if wanted:
            prefix, _, at = wanted.rpartition(":")
            label = json.loads(self.marker.read_text(encoding="utf-8"))["operation"]
            if at == step and label.startswith(prefix):
                os.kill(os.getpid(), signal.SIGKILL)

    def interrupted(self) -> dict | None:
        """What the last operation was doing when it died (ask while holding the lock), or None."""
        if self.running():
            return None
        try:
            return json.loads(self.marker.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (json.JSONDecodeError, UnicodeDecodeError):
            return {"operation": "unknown"}

    def clear_interrupted(self) -> None:
        self.marker.unlink(missing_ok=True)

    def leftover_temp_files(self, older_than_s: float = 60.0) -> list[Path]:
        """Temp files of atomic writes a crash left behind (younger ones may belong to a live writer)."""
        cutoff = time.time() - older_than_s
        found = []
        for path in self.ws.root.rglob(".*.tmp"):
            try:
                if path.is_file() and path.stat().st_mtime < cutoff:
                    found.append(path)
            except FileNotFoundError:
                pass
        return found


class TranscriptFile:
    """turns.jsonl, appended to and never rewritten: finished turns, small patches, and a torn last line set
    aside with a word to the PM."""

    def __init__(self, ws: "Workspace"):
        self.ws = ws

    def append_turn(self, turn: Turn) -> None:
        """Add one finished turn to the transcript (fsynced before this returns)."""
        with self.ws.locked():
            self.append_lines(transcript.turn_line(turn))

    def patch_turn(self, turn: Turn) -> None:
        """Record a turn's new summary, indexed flag and billed calls: one small line, never a rewrite."""
        with self.ws.locked():
            billed = {"calls": [c.model_dump() for c in turn.calls]} if turn.calls else {}  # none offline
            self.append_lines(transcript.patch_line(turn.id, summary=turn.summary, indexed=turn.indexed, **billed))

    def append_lines(self, data: bytes) -> None:
        """Append whole lines to the transcript (hold the lock)."""
        self._tell_torn(transcript.append(self.ws.transcript_path, data))

    def mend(self) -> None:
        """Set aside a last line a crash cut off, and tell the PM (recovery, before anything reads on)."""
        with self.ws.locked():
            self._tell_torn(transcript.mend(self.ws.transcript_path))

    def _tell_torn(self, torn: transcript.Torn | None) -> None:
        if torn is None:
            return
        slug = self.ws.slug
        if not torn.said:
            notify(f"Forge stopped while saving the conversation of '{slug}' and its last record was cut off; "
                   f"what was written is kept in {torn.kept.name}, and the conversation before it is intact.")
            return
        told = (f"Forge stopped while saving your last message in '{slug}', so it and its reply are not in "
                f"the conversation; what was written is kept in {torn.kept.name}.")
        quoted = f"“{torn.said}”" if torn.whole else f"“{torn.said}…” (the rest was cut off)"
        # The PM's words go to the screen, never to the log.
        notify(f"{told} You wrote {quoted}; send it again for a reply.", log_text=told)


@dataclass
class ConflictRepair:
    lines: list[str] = field(default_factory=list)  # what was merged and what was set aside, for the PM
    renumbered: set[int] = field(default_factory=set)  # the new numbers of turns that had to move


def _read_text(path: Path) -> str | None:
    try:
        return path.read_bytes().decode("utf-8", "surrogateescape")
    except FileNotFoundError:
        return None


TRANSCRIPT_SCHEMA = 3  # the first schema whose state.json holds no turns


# Operations open in this process, by project folder (the lock makes other threads wait, so one counter
# per folder is enough).
_operation_depth: dict[str, int] = {}


def saved_at() -> str:
    return datetime.now(timezone.utc).isoformat()


def projects_folder(projects_root: Path) -> Path:
    """The folder projects live in; one sentence when the setting names something that is not a folder."""
    root = Path(projects_root)
    if root.exists() and not root.is_dir():
        raise ForgeError(f"FORGE_PROJECTS_DIR ({root}) is a file, not a folder; point it at a folder.")
    return root


class UnresolvedConflict(ForgeError):
    """A workspace file still holds git conflict markers: nothing can be read until `forge doctor --fix`."""


class ProjectBusy(ForgeError):
    """Another command or window holds the project for longer than the caller would wait."""


class ProjectGone(ForgeError):
    """The project was deleted (by another window or command) while this one had it open."""


# ---- notices: what the user must hear even when the code that noticed goes on (CLI stderr, app notices)
_notices: list[str] = []
_said_once: set[Hashable] = set()  # the `once` keys of notices already given in this process


def notify(text: str, log_text: str | None = None, once: Hashable | None = None) -> None:
    """`log_text`: what the log says instead, when the notice quotes what the PM wrote. `once`: a key for what
    the notice is about; a notice whose key was already given in this process is not given again (a condition
    found on every load is said once, not on every command or rerun)."""
    if once is not None:
        if once in _said_once:
            return
        _said_once.add(once)
    log.warning("%s", text if log_text is None else log_text)
    if text not in _notices:
        _notices.append(text)


def take_notices() -> list[str]:
    """The notices not yet shown, oldest first (each is shown once)."""
    taken = list(_notices)
    _notices.clear()
    return taken
