"""Upload → convert → chunk → summarize → embed → store → manifest; delete; reindex.

One code path behind `forge ingest`, the sidebar upload and `forge reindex`.
The original is always kept in `uploads/`, even when it cannot be parsed, and the
vector store and the manifest are changed together: new chunks go in before old
ones come out, so a replaced file is never missing from search.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..errors import ForgeError
from ..llm import extractive
from ..llm.base import ChatRequest, SystemBlock
from ..models import FileSummary, now_iso
from ..project import Project
from ..store.client import StoreUnavailable
from ..store.collections import LeafRecord, ParentRecord
from ..turn.render import inert
from ..turn.remember import asked_before, remember, summarize_turn
from ..workspace import atomic_write_bytes, atomic_write_text, safe_filename
from .chunk import ChunkSizes, Parent, breadcrumb, chunk_markdown, table_header_at
from .convert import convert

log = logging.getLogger(__name__)

Progress = Callable[[str, int, int], None]  # (stage, done, total)

FILE_SUMMARY_INSTRUCTIONS = (
    "Write a one-paragraph summary (at most 70 words) of this document for a product manager's file list: "
    "what it is and what it covers. Only state what the document says."
)


@dataclass
class IngestResult:
    filename: str
    ok: bool
    message: str
    entry: FileSummary | None = None


# Status of a file whose indexing the vector store broke off; forge doctor --fix (or recovery) retries it.
INTERRUPTED = "not indexed: interrupted"


def _quiet(stage: str, done: int, total: int) -> None:
    pass


def file_id_for(filename: str, sha256: str) -> str:
    return hashlib.sha256(f"{filename}\0{sha256}".encode()).hexdigest()[:16]


def summarize_file(project: Project, filename: str, markdown: str) -> str:
    settings = project.settings
    request = ChatRequest(
        purpose="summarize_file",
        model=settings.summary_model,
        system=[SystemBlock(text=FILE_SUMMARY_INSTRUCTIONS)],
        messages=[{"role": "user", "content": f'<document name="{filename}">\n{inert(markdown[:24000])}\n</document>'}],
        max_tokens=200,
        context=(filename, markdown),
    )
    try:
        text = project.services.llm.complete(request).text.strip()
    except ForgeError as exc:
        log.warning("file summary fell back to extractive: %s", exc)
        text = ""
    return text or extractive.file_summary(filename, markdown)


def _index(
    project: Project, file_id: str, filename: str, markdown: str, parents: list[Parent], progress: Progress
) -> int:
    """Embed leaf windows (breadcrumb, and a table's header rows, prepended) and store leaves and
    parents. Returns the leaf count."""
    embedder = project.services.embedder
    leaves: list[LeafRecord] = []
    parent_records: list[ParentRecord] = []
    for pi, parent in enumerate(parents):
        pid = f"{file_id}:p{pi}"
        parent_records.append(ParentRecord(pid, parent.text, parent.section, parent.start, parent.end))
        crumb = breadcrumb(filename, parent.path)
        for li, leaf in enumerate(parent.leaves):
            leaf_id = f"{pid}:l{li}"
            context = f"{crumb}\n{table_header_at(markdown, leaf.start)}"
            for wi, (ws, we) in enumerate(embedder.windows(leaf.text)):
                leaves.append(LeafRecord(
                    f"{leaf_id}:w{wi}", leaf_id, pid, context + leaf.text[ws:we], leaf.start + ws, leaf.start + we
                ))
    vectors: list[list[float]] = []
    step = 32
    for i in range(0, len(leaves), step):
        progress("Embedding", min(i, len(leaves)), len(leaves))
        vectors.extend(embedder.embed_documents([l.text for l in leaves[i : i + step]]))
    progress("Embedding", len(leaves), len(leaves))
    # A parent's vector is the mean of its leaves': it is fetched by id, never searched, but Chroma wants one.
    parent_vectors = []
    for rec in parent_records:
        rows = [v for l, v in zip(leaves, vectors) if l.parent_id == rec.id]
        mean = np.mean(np.array(rows), axis=0)
        parent_vectors.append((mean / (np.linalg.norm(mean) or 1.0)).tolist())
    progress("Saving", 0, 1)
    try:
        project.store.add_file(file_id, filename, leaves, vectors, parent_records, parent_vectors)
    except StoreUnavailable:
        raise  # cannot clean up now; the unfinished-operation marker gets it cleaned later
    except Exception:
        project.store.delete_file(file_id)  # never leave half a file searchable
        raise
    return len({l.leaf_id for l in leaves})


def ingest_file(project: Project, filename: str, data: bytes, progress: Progress | None = None) -> IngestResult:
    progress = progress or _quiet
    settings = project.settings
    ws = project.ws
    try:
        name = safe_filename(filename)
    except ForgeError as exc:
        return IngestResult(filename, False, str(exc))
    sha = hashlib.sha256(data).hexdigest()
    with project.operation(f"upload {name}"):
        manifest = ws.load_project_state()
        previous = manifest.find(name)  # case-insensitive: "Plan.md" replaces "plan.md"
        if previous and previous.sha256 == sha and previous.indexed:
            return IngestResult(name, True, f"{name} is already uploaded with the same content; nothing changed.", previous)
        if previous and previous.filename != name:
            (ws.uploads / previous.filename).unlink(missing_ok=True)
            ws.converted_path(previous.filename).unlink(missing_ok=True)
        atomic_write_bytes(ws.uploads / name, data)  # kept whatever happens next
        entry = FileSummary(filename=name, file_id=file_id_for(name, sha), sha256=sha, uploaded_at=now_iso())
        try:
            progress("Converting", 0, 1)
            converted = convert_upload(project, name, data)
            entry.note = converted.note
            entry.content_sha256 = hashlib.sha256(converted.markdown.encode("utf-8")).hexdigest()
            if (previous and previous.indexed and previous.filename == name
                    and previous.content_sha256 == entry.content_sha256):
                previous.sha256 = sha
                _swap_entry(project, manifest, previous, previous)
                return IngestResult(name, True, f"{name} has the same content as before; nothing changed.", previous)
            twin = next((f for f in manifest.file_summaries if f.indexed and f is not previous
                         and f.content_sha256 == entry.content_sha256), None)
            if twin:
                ws.converted_path(name).unlink(missing_ok=True)
                entry.status = _twin_status(twin.filename)
                _swap_entry(project, manifest, previous, entry)
                return IngestResult(name, True, f"{name} has the same content as {twin.filename}, which is "
                                    "already indexed; it is kept but not indexed twice.", entry)
            entry.file_id = file_id_for(name, entry.content_sha256)
            atomic_write_text(ws.converted_path(name), converted.markdown)
            progress("Chunking", 0, 1)
            parents = chunk_markdown(converted.markdown, chunk_sizes(settings))
            if not parents:
                raise ForgeError(f"{name} has no text Forge can index.")
            progress("Summarizing", 0, 1)
            entry.summary = summarize_file(project, name, converted.markdown)
            entry.chunk_count = _index(project, entry.file_id, name, converted.markdown, parents, progress)
            entry.parent_count = len(parents)
        except StoreUnavailable as exc:
            # The store may hold part of the file and cannot be cleaned now: keep the operation marked
            # unfinished, so the next operation (or forge doctor) removes the remains once the store is back.
            entry.status = f"{INTERRUPTED} ({exc})"
            ws.converted_path(name).unlink(missing_ok=True)
            manifest.file_summaries = [f for f in manifest.file_summaries if f is not previous] + [entry]
            ws.save_project_state(manifest)
            raise
        except ForgeError as exc:
            log.warning("not indexed %s: %s", name, exc)
            entry.status = f"not indexed: {exc}"
            ws.converted_path(name).unlink(missing_ok=True)  # no Markdown without chunks behind it
            _swap_entry(project, manifest, previous, entry)
            return IngestResult(name, False, str(exc), entry)
        _swap_entry(project, manifest, previous, entry)
        progress("Done", 1, 1)
    log.info("indexed %s: %d passages in %d sections", name, entry.chunk_count, entry.parent_count)
    verb = "Replaced" if previous else "Indexed"
    passages = f"{entry.chunk_count} passage{'s' * (entry.chunk_count != 1)}"
    sections = f"{entry.parent_count} section{'s' * (entry.parent_count != 1)}"
    return IngestResult(name, True, f"{verb} {name}: {passages} in {sections}.", entry)


def convert_upload(project: Project, filename: str, data: bytes):
    return convert(filename, data, int(project.settings.max_upload_mb * 1_000_000))


def chunk_sizes(settings) -> ChunkSizes:
    return ChunkSizes(settings.leaf_max_tokens, settings.parent_max_tokens, settings.merge_below_tokens)


def _swap_entry(project: Project, manifest, previous: FileSummary | None, entry: FileSummary) -> None:
    """Record the new entry, then drop the old file's chunks (new ones are already searchable)."""
    replaced = {entry.filename.casefold()} | ({previous.filename.casefold()} if previous else set())
    manifest.file_summaries = [f for f in manifest.file_summaries if f.filename.casefold() not in replaced] + [entry]
    project.ws.save_project_state(manifest)
    if previous and previous.file_id != entry.file_id:
        project.store.delete_file(previous.file_id)


def delete_file(project: Project, filename: str) -> str:
    ws = project.ws
    with project.operation(f"delete {filename}"):
        manifest = ws.load_project_state()
        entry = manifest.find(filename)
        if entry is None:
            raise ForgeError(f"There is no file called '{filename}' in project '{ws.slug}'.")
        project.store.delete_file(entry.file_id)
        manifest.file_summaries = [f for f in manifest.file_summaries if f is not entry]
        ws.save_project_state(manifest)
        (ws.uploads / entry.filename).unlink(missing_ok=True)
        ws.converted_path(entry.filename).unlink(missing_ok=True)
        twins = [f.filename for f in manifest.file_summaries if f.status == _twin_status(entry.filename)]
    # Copies that were held back as duplicates of the deleted file now stand on their own.
    for twin in twins:
        upload = ws.uploads / twin
        if upload.exists():
            ingest_file(project, twin, upload.read_bytes())
    log.info("deleted %s", entry.filename)
    return f"Deleted {entry.filename}."


def _twin_status(filename: str) -> str:
    return f"not indexed: same content as {filename}"


def reindex_entry(project: Project, entry: FileSummary) -> None:
    """Convert, chunk and index one listed file again from its upload (its old vectors must be gone)."""
    ws, settings = project.ws, project.settings
    upload = ws.uploads / entry.filename
    if not upload.exists():
        entry.status = "not indexed: the original upload is missing"
        return
    converted = convert_upload(project, entry.filename, upload.read_bytes())
    atomic_write_text(ws.converted_path(entry.filename), converted.markdown)
    parents = chunk_markdown(converted.markdown, chunk_sizes(settings))
    entry.chunk_count = _index(project, entry.file_id, entry.filename, converted.markdown, parents, _quiet)
    entry.parent_count = len(parents)


def reindex(project: Project, progress: Progress | None = None) -> str:
    """Rebuild the project's vectors from uploads/ and the transcript (after a clone or an embedder change)."""
    progress = progress or _quiet
    ws = project.ws
    with ws.operation("reindex"):
        project.store.drop_all()
        manifest = ws.load_project_state()
        files = [f for f in manifest.file_summaries if f.indexed]
        for i, entry in enumerate(files):
            progress(f"Re-indexing {entry.filename}", i, len(files))
            reindex_entry(project, entry)
        ws.save_project_state(manifest)
        state = ws.load_state()
        for i, turn in enumerate(state.turns):
            progress("Re-indexing conversation", i, len(state.turns))
            asked = asked_before(state.turns, i)
            if not turn.summary:
                turn.summary = summarize_turn(project.services.llm, turn.user, turn.assistant, project.settings, asked)
            remember(project.store, project.services.embedder, turn, asked)
            turn.indexed = True
        ws.save_state(state)
    progress("Done", 1, 1)
    return f"Re-indexed {len(files)} files and {len(state.turns)} turns with {project.store.signature}."
