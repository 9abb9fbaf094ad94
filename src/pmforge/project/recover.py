"""Recovery after a crash: opening a project, or starting an operation, first finishes what a killed
process left half done — the way a database replays its journal when it opens. Only quick repairs run here
(temp files removed, a half-finished delete finished, half-written records of an upload dropped); an upload
that did not finish is listed as interrupted for the PM to retry or `forge doctor --fix`."""

from __future__ import annotations

import hashlib
import logging
from typing import TYPE_CHECKING

from pmforge.core.errors import ForgeError
from pmforge.core.models import ManifestEntry
from pmforge.core.workspace import notify
from pmforge.index.client import StoreUnavailable
from pmforge.index.collections import PARENTS
from pmforge.project.undo import UNDO_LABEL, finish_interrupted_undo

if TYPE_CHECKING:  # the project calls recovery before every operation; recovery only reads its parts
    from pmforge.project.project import Project

log = logging.getLogger(__name__)


# Status of a file whose indexing the vector store broke off; forge doctor --fix (or recovery) retries it.
INTERRUPTED = "not indexed: interrupted"


def file_id_for(filename: str, sha256: str) -> str:
    return hashlib.sha256(f"{filename}\0{sha256}".encode()).hexdigest()[:16]


def recover(project: Project) -> str | None:
    """Deal with an operation a crash interrupted (the marker it leaves while it holds the lock is still
    there). Returns what was interrupted, or None when nothing was. Busy projects are left to their holder.

    Opening a project must stay quick whatever died (an upload of a long report takes minutes to embed), so
    only quick repairs run here, and an upload that did not finish is listed as "not indexed: interrupted —
    retry" for the PM to upload again or `forge doctor --fix` (which re-indexes it)."""
    ws = project.ws
    if not ws.operations.marker.exists() or ws.operations.running():
        return None
    try:
        with ws.locked(timeout=0.5):
            marker = ws.operations.interrupted()
            if marker is None:  # the holder finished while we waited
                return None
            label = str(marker.get("operation", "unknown"))
            log.warning("recovering project %s after an interrupted operation (%s)", ws.slug, label)
            with ws.operations.marked(label, **_marker_details(marker)):  # dying here leaves the same marker behind
                marked = _quick_recovery(project, marker)
            if marked:
                notify(f"An earlier operation on '{ws.slug}' did not finish ({label}); "
                       f"{_join(marked)} {'is' if len(marked) == 1 else 'are'} listed as \"{INTERRUPTED_RETRY}\": "
                       f"upload {'it' if len(marked) == 1 else 'them'} again or run `forge doctor --fix {ws.slug}`.")
            ws.operations.clear_interrupted()
            return label
    except ForgeError as exc:
        log.warning("recovery of %s postponed: %s", ws.slug, exc)
        return None


# What an upload a crash cut short is listed as ("not indexed: interrupted..." is what `_files` retries).
INTERRUPTED_RETRY = f"{INTERRUPTED} — retry"


def _marker_details(marker: dict) -> dict:
    return {k: v for k, v in marker.items() if k not in ("operation", "pid", "started")}


def _marker_file(marker: dict) -> str | None:
    """The file an upload or delete was about: the marker's `file`, else its label ("upload NAME")."""
    if isinstance(marker.get("file"), str):
        return marker["file"]
    verb, _, rest = str(marker.get("operation", "")).partition(" ")
    return rest if verb in ("upload", "delete") and rest else None


def _quick_recovery(project: Project, marker: dict) -> list[str]:
    """Repairs that take about as long as reading the manifest, whatever the files' size. Returns the files
    now listed as interrupted."""
    ws = project.ws
    for path in ws.operations.leftover_temp_files():
        path.unlink(missing_ok=True)
    ws.transcript_file.mend()  # a turn cut off mid-append: said now, not at the next message
    name = _marker_file(marker)
    if name and str(marker.get("operation", "")).startswith("delete "):
        _finish_delete(project, name)
    if marker.get("operation") == UNDO_LABEL:  # a reply taken back half-way: finish taking it back
        finish_interrupted_undo(project)
    manifest = ws.load_manifest()
    marked: list[str] = []
    on_disk = sorted(p.name for p in ws.uploads.iterdir() if p.is_file() and not p.name.startswith(".")) \
        if ws.uploads.is_dir() else []
    for filename in on_disk:
        entry = manifest.find(filename)
        if entry is not None and filename != name:
            continue
        # An upload the manifest does not list, or the interrupted one whose entry no longer matches the
        # bytes on disk (they were replaced): listed as interrupted, its half-written records dropped.
        sha = hashlib.sha256((ws.uploads / filename).read_bytes()).hexdigest()
        if entry is not None and entry.sha256 == sha:
            continue
        fresh = ManifestEntry(filename=filename, file_id=file_id_for(filename, sha), sha256=sha,
                            status=INTERRUPTED_RETRY)
        manifest.file_summaries = [f for f in manifest.file_summaries if f is not entry] + [fresh]
        marked.append(filename)
    if marked:
        ws.save_manifest(manifest)
    indexed = {f.file_id for f in manifest.file_summaries if f.indexed}
    for filename in marked:
        ws.converted_path(filename).unlink(missing_ok=True)
    for filename in dict.fromkeys(marked + ([name] if name else [])):
        _drop_unlisted_vectors(project, filename, indexed)
    return marked


def _finish_delete(project: Project, filename: str) -> None:
    """A delete is quick to finish (nothing to embed); copies held back as its twins wait for a retry."""
    ws = project.ws
    manifest = ws.load_manifest()
    entry = manifest.find(filename)
    if entry is not None:
        project.store.documents.delete_file(entry.file_id)
        manifest.file_summaries = [f for f in manifest.file_summaries if f is not entry]
        filename = entry.filename
    twin_status = f"not indexed: same content as {filename}"
    for f in manifest.file_summaries:
        if f.status == twin_status:
            f.status = INTERRUPTED_RETRY
    ws.save_manifest(manifest)
    (ws.uploads / filename).unlink(missing_ok=True)
    ws.converted_path(filename).unlink(missing_ok=True)


def _drop_unlisted_vectors(project: Project, filename: str, indexed: set[str]) -> None:
    """Passages stored under this file name by a version the manifest does not list as indexed (half an
    upload): one filtered read, no scan of the store."""
    try:
        got = project.store.collection(PARENTS).get(where={"filename": filename}, include=["metadatas"])
    except ForgeError:
        raise
    except Exception as exc:  # a server that is down: recovery waits for it, the marker stays
        raise StoreUnavailable(f"the vector store could not be read ({type(exc).__name__})") from None
    for file_id in sorted({m["file_id"] for m in got["metadatas"]} - indexed):
        project.store.documents.delete_file(file_id)


def _join(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
