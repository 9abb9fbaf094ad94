"""`forge doctor`: do uploads, converted files, manifest, vector store, keyword indexes and transcript agree?

Checks run in layers, each trusting the one before it: the files on disk and the manifest, then the vector
store against the manifest, then the keyword indexes against the vector store, then the conversation memory
against the transcript. Repairs go layer by layer too, re-checking in between, because fixing the files
(re-ingesting one, say) also changes the store.

The same repairs finish an operation a crash interrupted: `recover` runs them when the operation marker was
left behind, the way a database replays its journal when it opens.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass, field
from typing import Callable

from .errors import ForgeError
from .ingest.pipeline import INTERRUPTED, convert_upload, delete_file, ingest_file, reindex, reindex_entry
from .project import Project
from .store.collections import CONVERSATIONS, DOCUMENTS
from .turn.remember import catch_up
from .workspace import atomic_write_text

log = logging.getLogger(__name__)


@dataclass
class Finding:
    layer: str
    problem: str  # one sentence, for the PM
    repair: str  # what --fix does about it
    fix: Callable[[], None] = field(repr=False, default=lambda: None)


@dataclass
class Report:
    project: str
    findings: list[Finding]
    repaired: list[str] = field(default_factory=list)
    recovered: str | None = None  # the interrupted operation finished on opening
    totals: dict[str, int] = field(default_factory=dict)

    @property
    def consistent(self) -> bool:
        return not self.findings

    def as_dict(self) -> dict:
        return {
            "project": self.project, "consistent": self.consistent, "recovered": self.recovered,
            "repaired": self.repaired, "totals": self.totals,
            "problems": [{"layer": f.layer, "problem": f.problem, "repair": f.repair} for f in self.findings],
        }


def _files(project: Project) -> list[Finding]:
    ws = project.ws
    manifest = ws.load_project_state()
    found: list[Finding] = []
    listed = {f.filename for f in manifest.file_summaries}
    on_disk = {p.name for p in ws.uploads.iterdir() if p.is_file() and not p.name.startswith(".")} \
        if ws.uploads.is_dir() else set()

    for entry in manifest.file_summaries:
        upload = ws.uploads / entry.filename
        if entry.filename not in on_disk:
            found.append(Finding("files", f"{entry.filename} is listed but its upload is missing.",
                                 "remove it from the file list and the search index",
                                 lambda e=entry: delete_file(project, e.filename)))
            continue
        if entry.status.startswith(INTERRUPTED):
            found.append(Finding("files", f"Indexing {entry.filename} was interrupted.", "index it",
                                 lambda e=entry: _reingest(project, e.filename)))
            continue
        if not entry.indexed:
            continue
        sha = hashlib.sha256(upload.read_bytes()).hexdigest()
        if sha != entry.sha256:
            found.append(Finding("files", f"{entry.filename} changed on disk since it was indexed.",
                                 "index the file as it is now",
                                 lambda e=entry: _reingest(project, e.filename)))
        elif not ws.converted_path(entry.filename).exists():
            found.append(Finding("files", f"The converted text of {entry.filename} is missing.",
                                 "convert the upload again", lambda e=entry: _reconvert(project, e.filename)))
    for name in sorted(on_disk - listed):
        found.append(Finding("files", f"uploads/{name} is not in the file list (an upload was interrupted).",
                             "index it", lambda n=name: _reingest(project, n)))
    indexed = {f"{f.filename}.md" for f in manifest.file_summaries if f.indexed}
    if ws.converted.is_dir():
        for path in sorted(ws.converted.glob("*.md")):
            if path.name not in indexed:
                found.append(Finding("files", f"converted/{path.name} belongs to no indexed file.",
                                     "delete it", lambda p=path: p.unlink(missing_ok=True)))
    return found


def _vectors(project: Project) -> list[Finding]:
    store = project.store
    mismatch = store.mismatched()
    if mismatch:
        return [Finding("vectors", f"The vectors were made with {mismatch}, not {store.signature}.",
                        "rebuild the whole index", lambda: reindex(project))]
    manifest = project.ws.load_project_state()
    expected = {f.file_id: f for f in manifest.file_summaries if f.indexed}
    stored = store.file_counts()
    found: list[Finding] = []
    for file_id, entry in expected.items():
        have = stored.get(file_id)
        if have is None:
            problem = f"{entry.filename} is not in the vector store."
        elif have != (entry.parent_count, entry.chunk_count):
            problem = (f"{entry.filename} is only partly in the vector store ({have[0]} of {entry.parent_count} "
                       f"sections, {have[1]} of {entry.chunk_count} passages).")
        else:
            continue
        found.append(Finding("vectors", problem, "index it again", lambda e=entry: _reindex_one(project, e.filename)))
    orphans = set(stored) - set(expected)
    if orphans:
        found.append(Finding("vectors", f"The vector store holds passages of {len(orphans)} file(s) that are no "
                             "longer listed.", "delete them",
                             lambda: [store.delete_file(fid) for fid in orphans]))
    return found


def _keywords(project: Project) -> list[Finding]:
    store = project.store
    found = []
    for name, what in ((DOCUMENTS, "documents"), (CONVERSATIONS, "conversation memory")):
        vector_ids, keyword_ids = store.ids(name), store.keyword(name).ids()
        if vector_ids != keyword_ids:
            found.append(Finding("keywords", f"The keyword index of the {what} disagrees with the vector store "
                                 f"({len(keyword_ids - vector_ids)} extra, {len(vector_ids - keyword_ids)} missing).",
                                 "rebuild it from the vector store", lambda n=name: store.rebuild_keyword(n)))
    return found


def _memory(project: Project) -> list[Finding]:
    store = project.store
    state = project.ws.load_state()
    said = {t.number for t in state.turns}
    remembered = store.turn_numbers()
    found = []
    extra = remembered - said
    if extra:
        found.append(Finding("memory", f"The conversation memory holds {len(extra)} turn(s) the transcript does not.",
                             "delete them", lambda: store.delete_turns(extra)))
    missing = {t.number for t in state.turns if t.number not in remembered}
    if missing:
        found.append(Finding("memory", f"{len(missing)} turn(s) of the transcript are not in the conversation memory.",
                             "remember them", lambda: _remember(project, missing)))
    return found


LAYERS = (_files, _vectors, _keywords, _memory)


def examine(project: Project) -> Report:
    findings: list[Finding] = []
    for layer in LAYERS:
        findings += layer(project)
    return Report(project.ws.slug, findings, totals=_totals(project))


def repair(project: Project) -> Report:
    """Fix every layer in order, re-checking each after its fixes; then examine everything again."""
    repaired: list[str] = []
    with project.ws.operation("forge doctor --fix"):
        for path in project.ws.leftover_temp_files():
            path.unlink(missing_ok=True)
            repaired.append(f"Removed a leftover temporary file ({path.name}).")
        for layer in LAYERS:
            for _ in range(2):  # a second pass catches what the first one's fixes uncovered
                findings = layer(project)
                if not findings:
                    break
                for finding in findings:
                    finding.fix()
                    repaired.append(f"{finding.problem} Fixed: {finding.repair}.")
                    log.info("doctor repaired %s: %s", project.ws.slug, repaired[-1])
    report = examine(project)
    report.repaired = repaired
    return report


def recover(project: Project) -> str | None:
    """Finish an operation a crash interrupted (the marker it leaves while it holds the lock is still there).
    Returns what was interrupted, or None when nothing was. Busy projects are left to their current holder."""
    ws = project.ws
    if not ws.operation_marker.exists() or ws.in_operation():
        return None
    try:
        with ws.locked(timeout=0.5):
            marker = ws.interrupted_operation()
            if marker is None:  # the holder finished while we waited
                return None
            label = marker.get("operation", "unknown")
            log.warning("recovering project %s after an interrupted operation (%s)", ws.slug, label)
            repair(project)
            ws.clear_interrupted_operation()
            return label
    except ForgeError as exc:
        log.warning("recovery of %s postponed: %s", ws.slug, exc)
        return None


# ---- repairs
def _reingest(project: Project, filename: str) -> None:
    upload = project.ws.uploads / filename
    result = ingest_file(project, filename, upload.read_bytes())
    if not result.ok:
        log.warning("doctor could not index %s: %s", filename, result.message)


def _reindex_one(project: Project, filename: str) -> None:
    manifest = project.ws.load_project_state()
    entry = manifest.find(filename)
    if entry is not None:
        project.store.delete_file(entry.file_id)
        reindex_entry(project, entry)
        project.ws.save_project_state(manifest)


def _reconvert(project: Project, filename: str) -> None:
    converted = convert_upload(project, filename, (project.ws.uploads / filename).read_bytes())
    atomic_write_text(project.ws.converted_path(filename), converted.markdown)


def _remember(project: Project, numbers: set[int]) -> None:
    state = project.ws.load_state()
    for turn in state.turns:
        if turn.number in numbers:
            turn.indexed = False
    s = project.services
    catch_up(project.store, s.embedder, s.llm, state, project.settings)
    project.ws.save_state(state)


def _totals(project: Project) -> dict[str, int]:
    manifest = project.ws.load_project_state()
    return {
        "files": len(manifest.file_summaries),
        "indexed_files": sum(1 for f in manifest.file_summaries if f.indexed),
        "passages": len(project.store.keyword(DOCUMENTS)),
        "turns": project.ws.load_state().turn_count,
    }
