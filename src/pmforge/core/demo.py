"""Shipped examples (the demo project) are played on a private copy, so trying them never changes the
files a git checkout tracks.

A project folder holding an `EXAMPLE_MARKER` file is a shipped example. Opening it — in the app or from
the command line — opens its working copy, `<projects>/.yours/<slug>/` (git-ignored), made from the
committed folder on first use. `restore_example` puts the committed version back into the copy.

The copy remembers which shipped version it was made from (`SHIPPED`). When the committed example changes
(a pull), a copy the PM never played (no turn or upload of their own) is made again from the new version;
a played one is kept as it is, and the PM is told. When the committed example goes, a played copy stays
reachable under its name (`orphaned_copies`).
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import shutil
from pathlib import Path

EXAMPLE_MARKER = ".example"  # committed inside the example's folder; never copied
COPIES = ".yours"  # beside the projects: a dot-folder, so no project list shows it
DERIVED = "vectordb"  # rebuilt from the files by the copy itself, never copied or restored
KEPT = ".gitkeep"  # the only dot-file an example ships besides its marker (locks and temp files stay behind)
SHIPPED = ".shipped.json"  # in a copy: the shipped version it was made from, and what it held then


def is_example(folder: Path) -> bool:
    return (folder / EXAMPLE_MARKER).is_file()


def copy_of(example: Path) -> Path:
    return example.parent / COPIES / example.name


def example_of(folder: Path) -> Path | None:
    """The committed example a working copy was made from; None for any other project folder."""
    folder = Path(folder)
    if folder.parent.name != COPIES:
        return None
    example = folder.parent.parent / folder.name
    return example if is_example(example) else None


def working_folder(folder: Path, tell=None) -> Path:
    """The folder to open for a project folder: the folder itself, or for a shipped example its working
    copy, made on first use, and made again from a changed example while the PM has not played it (else
    `tell(sentence)` says the copy was kept)."""
    if not is_example(folder):
        return folder
    copy = copy_of(folder)
    if not (copy / "state.json").is_file():
        _make_copy(folder, copy)
        return copy
    made = _read_shipped(copy)
    shipped = fingerprint(folder)
    if made.get("example") == shipped:
        return copy
    if made and not played(copy, made):
        shutil.rmtree(copy, ignore_errors=True)  # unplayed: the new version replaces it whole
        _make_copy(folder, copy)
    elif tell is not None and made.get("told") != shipped:
        tell(f"The shipped example '{folder.name}' has changed since you started playing it; your copy is kept as "
             "you left it. Reset the demo to get the new version.")
        _write_shipped(copy, dict(made, told=shipped))
    return copy


def orphaned_copies(projects: Path) -> list[Path]:
    """Working copies whose shipped example is gone from the projects folder (a pull removed it), with a
    session of their own: they stay projects the PM can open."""
    copies = projects / COPIES
    if not copies.is_dir():
        return []
    return [c for c in copies.iterdir() if not c.name.startswith(".") and (c / "state.json").is_file()
            and not is_example(projects / c.name)]


def fingerprint(folder: Path) -> str:
    """The shipped files of an example (what a copy is made from), as one digest."""
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder)
        if path.is_file() and not _shipped(str(path.parent), [relative.parts[0]]) and not any(
                part.startswith(".") and part != KEPT for part in relative.parts):
            digest.update(str(relative).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def played(copy: Path, made: dict) -> bool:
    """Whether the PM has made the copy their own: a turn or an upload it did not ship with."""
    return _transcript_turns(copy) != made.get("turns") or _uploads(copy) != made.get("uploads")


def _transcript_turns(folder: Path) -> int:
    """Turn lines in the transcript (patch and retract lines aside): what a turn played adds to."""
    try:
        lines = (folder / "turns.jsonl").read_bytes().splitlines()
    except OSError:
        return 0
    return sum(1 for line in lines if line.strip() and b'"patch"' not in line[:12] and b'"retract"' not in line[:14])


def _uploads(folder: Path) -> list[str]:
    uploads = folder / "uploads"
    return sorted(p.name for p in uploads.iterdir() if not p.name.startswith(".")) if uploads.is_dir() else []


def _read_shipped(copy: Path) -> dict:
    try:
        data = json.loads((copy / SHIPPED).read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}  # a copy made before copies recorded their version: treated as played, never replaced


def _as_made(example: Path, copy: Path) -> dict:
    """What a copy records when it is made (or reset) from its example: the example's version, and the turns
    and uploads the copy then holds (`played` compares against them)."""
    return {"example": fingerprint(example), "turns": _transcript_turns(copy), "uploads": _uploads(copy)}


def _write_shipped(copy: Path, record: dict) -> None:
    (copy / SHIPPED).write_text(json.dumps(record), encoding="utf-8")


def _shipped(directory: str, names: list[str]) -> set[str]:
    """shutil.copytree's ignore: what an example's copy leaves out (locks, temp files, the marker, vectors)."""
    return {n for n in names if n == DERIVED or (n.startswith(".") and n != KEPT)}


def _make_copy(example: Path, copy: Path) -> None:
    """Copy into a staging folder, then rename it into place in one step: two windows opening the demo at
    once each build a copy, one wins, neither sees half of one."""
    copy.parent.mkdir(parents=True, exist_ok=True)
    staging = copy.with_name(f".{copy.name}-{secrets.token_hex(4)}.staging")
    shutil.copytree(example, staging, ignore=_shipped)
    _set_project_id(staging, secrets.token_hex(6))  # its own vectors on a shared server, not everyone's
    _write_shipped(staging, _as_made(example, staging))
    if copy.exists() and not (copy / "state.json").is_file():
        shutil.rmtree(copy, ignore_errors=True)  # a copy a crash left without its session: start it over
    try:
        os.rename(staging, copy)
    except OSError:  # another process put its copy there first: use that one
        shutil.rmtree(staging, ignore_errors=True)


def _set_project_id(folder: Path, project_id: str) -> None:
    path = folder / "project_state.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["project_id"] = project_id
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False), encoding="utf-8")


def _project_id(folder: Path) -> str:
    try:
        return json.loads((folder / "project_state.json").read_text(encoding="utf-8")).get("project_id") or ""
    except (OSError, ValueError):
        return ""


def restore_example(copy: Path) -> None:
    """Put the committed example back into its working copy (hold the project's lock): every file the PM
    added or changed goes, the example's files come back. The copy keeps its project id and its vectors'
    folder, so a store opened on it stays valid; rebuild the vectors afterwards (`reindex(force=True)`).

    The session file goes first and comes back last: a restore cut short leaves a copy without one, which
    the next open replaces with a fresh copy."""
    example = example_of(copy)
    if example is None:
        raise ValueError(f"{copy} is not the working copy of a shipped example")
    project_id = _project_id(copy)
    (copy / "state.json").unlink(missing_ok=True)
    for entry in copy.iterdir():
        if entry.name in _shipped(str(copy), [entry.name]):
            continue  # derived data, the lock files of whoever holds the project
        if entry.is_dir():
            shutil.rmtree(entry)
        else:
            entry.unlink()
    # New files, not copies of the old ones' times: readers that cache a file by its stat see the change.
    for source in sorted(example.iterdir(), key=lambda p: p.name == "state.json"):
        if source.name in _shipped(str(example), [source.name]):
            continue
        if source.is_dir():
            shutil.copytree(source, copy / source.name, ignore=_shipped, copy_function=shutil.copyfile)
        else:
            if source.name == "state.json" and project_id:
                _set_project_id(copy, project_id)  # before the session file: a copy with one is complete
            shutil.copyfile(source, copy / source.name)
    _write_shipped(copy, _as_made(example, copy))
