"""Artifact files: the documents a PM takes out of Forge, written under the project's artifacts/ folder as
`<kind>-YYYYMMDD-HHMMSS.<ext>`; earlier generations are kept, and `latest` finds the newest. The CLI and the
sidebar write at once (`generate`); a turn's tool call only prepares the files, and the turn writes them when
it commits (`prepare`, `write_all`). What goes in them: outputs/briefs.py, outputs/word.py,
outputs/register.py.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Callable, Collection, Literal

from pmforge.core.models import Manifest, SessionState
from pmforge.core.workspace import Workspace, atomic_write_bytes
from pmforge.knowledge import Catalogue
from pmforge.outputs.briefs import problem_brief_markdown, solution_evaluation_markdown, stamp
from pmforge.outputs.register import register_csv, register_json
from pmforge.outputs.word import markdown_to_docx

log = logging.getLogger(__name__)

ArtifactKind = Literal["problem_brief", "solution_evaluation", "assumption_register"]

KINDS: tuple[ArtifactKind, ...] = ("problem_brief", "solution_evaluation", "assumption_register")
_FILE_SLUG: dict[str, str] = {
    "problem_brief": "problem-brief",
    "solution_evaluation": "solution-evaluation",
    "assumption_register": "assumption-register",
}
_EXTENSIONS: dict[str, tuple[str, ...]] = {
    "problem_brief": ("md", "docx"),
    "solution_evaluation": ("md", "docx"),
    "assumption_register": ("json", "csv"),
}


@dataclass
class ArtifactResult:
    kind: ArtifactKind
    paths: list[Path] = field(default_factory=list)  # files written, inside ws.artifacts
    missing: list[str] = field(default_factory=list)  # required fields that were empty, e.g. "Problem statement"


# ---------------------------------------------------------------- files

_Renderer = Callable[..., tuple[str, list[str]]]
_RENDERERS: dict[str, _Renderer] = {
    "problem_brief": problem_brief_markdown,
    "solution_evaluation": solution_evaluation_markdown,
}


def _check_kind(kind: str) -> None:
    if kind not in _FILE_SLUG:
        raise ValueError(f"Unknown artifact kind {kind!r}; expected one of {', '.join(KINDS)}.")


def _free_stem(folder: Path, kind: str, now: datetime, taken: Collection[str] = frozenset()) -> str:
    """`<kind>-YYYYMMDD-HHMMSS`, with -2, -3… if that second is already taken (nothing is overwritten);
    `taken` holds stems promised to files not written yet (earlier calls of the same turn)."""
    base = f"{_FILE_SLUG[kind]}-{now:%Y%m%d-%H%M%S}"
    stem, n = base, 1
    while stem in taken or any((folder / f"{stem}.{ext}").exists() for ext in _EXTENSIONS[kind]):
        n += 1
        stem = f"{base}-{n}"
    return stem


@dataclass
class PreparedArtifact:
    """An artifact rendered in memory and not yet on disk: what a turn's tool call leaves for the turn's
    commit, so a turn that fails afterwards writes nothing."""

    kind: ArtifactKind
    now: datetime
    stem: str  # the file names it will get, unless another window takes them before it is written
    files: dict[str, bytes]
    missing: list[str] = field(default_factory=list)

    @property
    def names(self) -> list[str]:
        return [f"{self.stem}.{ext}" for ext in self.files]


def prepare(
    ws: Workspace,
    state: SessionState,
    manifest: Manifest,
    kind: ArtifactKind,
    catalogue: Catalogue,
    now: datetime | None = None,
    taken: Collection[str] = frozenset(),
) -> PreparedArtifact:
    """Render one artifact in memory (a rendering error writes nothing). `now` defaults to the current
    UTC time; an aware `now` is converted to UTC, a naive one is used as given."""
    _check_kind(kind)
    now = stamp(now)
    if kind == "assumption_register":
        missing: list[str] = []
        # The BOM lets Excel read the CSV as UTF-8; without it accented and CJK claims turn to mojibake.
        files = {"json": register_json(state).encode("utf-8"), "csv": register_csv(state).encode("utf-8-sig")}
    else:
        markdown, missing = _RENDERERS[kind](state, manifest, catalogue, now=now)
        files = {"md": markdown.encode("utf-8"), "docx": markdown_to_docx(markdown)}
    return PreparedArtifact(kind=kind, now=now, stem=_free_stem(ws.artifacts, kind, now, taken), files=files,
                            missing=missing)


def write(ws: Workspace, artifact: PreparedArtifact) -> ArtifactResult:
    """Write a prepared artifact's files atomically into ws.artifacts, never over an existing file."""
    stem = artifact.stem
    if any((ws.artifacts / f"{stem}.{ext}").exists() for ext in artifact.files):
        stem = _free_stem(ws.artifacts, artifact.kind, artifact.now)  # taken meanwhile (another window)
    paths = []
    for ext, data in artifact.files.items():
        path = ws.artifacts / f"{stem}.{ext}"
        atomic_write_bytes(path, data)
        paths.append(path)
    return ArtifactResult(kind=artifact.kind, paths=paths, missing=artifact.missing)


def write_all(ws: Workspace, artifacts: list[PreparedArtifact]) -> list[ArtifactResult]:
    """A committing turn's prepared artifacts, in the order its tool calls made them. A file that cannot
    be written (a full disk) is logged and skipped: the turn's state matters more, and the sidebar or
    `forge brief` writes the artifact again from that state."""
    results = []
    for artifact in artifacts:
        try:
            results.append(write(ws, artifact))
        except OSError as exc:
            log.warning("could not write %s to %s: %s", ", ".join(artifact.names), ws.artifacts, exc)
    return results


def generate(
    ws: Workspace,
    state: SessionState,
    manifest: Manifest,
    kind: ArtifactKind,
    catalogue: Catalogue,
    now: datetime | None = None,
) -> ArtifactResult:
    """Render one artifact and write its files at once (the CLI and the sidebar; a turn's tool call
    prepares instead, and the turn writes on commit)."""
    return write(ws, prepare(ws, state, manifest, kind, catalogue, now))


def latest(ws: Workspace, kind: ArtifactKind) -> dict[str, Path]:
    """The newest generation of `kind` as {extension: path}; {} if there is none.

    A generation with all its files wins over a newer one missing a file (e.g. a crash between writes).
    """
    _check_kind(kind)
    folder = ws.artifacts
    if not folder.is_dir():
        return {}
    extensions = _EXTENSIONS[kind]
    name = re.compile(
        rf"{re.escape(_FILE_SLUG[kind])}-(\d{{8}}-\d{{6}})(?:-(\d+))?\.({'|'.join(extensions)})"
    )
    generations: dict[tuple[str, int], dict[str, Path]] = {}
    for path in folder.iterdir():
        match = name.fullmatch(path.name)
        if match and path.is_file():
            generations.setdefault((match.group(1), int(match.group(2) or 1)), {})[match.group(3)] = path
    if not generations:
        return {}
    complete = [key for key, files in generations.items() if len(files) == len(extensions)]
    newest = generations[max(complete or generations)]
    return {ext: newest[ext] for ext in extensions if ext in newest}
