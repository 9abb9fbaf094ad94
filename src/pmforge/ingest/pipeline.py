"""Upload → convert → chunk → summarize → embed → store → manifest; delete; reindex.

One code path behind `forge ingest`, the sidebar upload and `forge reindex`.
The original of a readable type is kept in `uploads/`, even when it cannot be parsed;
a file of another type, or one that looks like a credential, is refused before
anything is written (a workspace is committed to git). The vector store and the
manifest are changed together: a new version of an indexed file is converted, checked
and indexed beside the old one and only then swapped in, so a replaced file is never
missing from search and a refused replacement leaves the old version as it was.
"""

from __future__ import annotations

import fnmatch
import hashlib
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from pmforge.core.errors import ForgeError
from pmforge.core.models import Manifest, ManifestEntry, name_key, now_iso
from pmforge.core.workspace import atomic_write_bytes, atomic_write_text, printable, safe_filename, tagged_filename
from pmforge.embed import Embeds
from pmforge.index.client import StoreUnavailable
from pmforge.index.collections import LeafRecord, ParentRecord
from pmforge.ingest.chunk import ChunkSizes, Parent, TableHeaders, breadcrumb, chunk_markdown, record_spans
from pmforge.ingest.convert import SUPPORTED, Budget, Converted, convert, extension, unsupported_message
from pmforge.llm.base import ChatRequest, SystemBlock
from pmforge.llm.costs import Ledger, MeteredEmbedder, MeteredLLM
from pmforge.llm.inputs import FileToSummarize
from pmforge.llm.messages import Message
from pmforge.llm.summary import checked_summary
from pmforge.project.project import Project
from pmforge.project.recover import INTERRUPTED, file_id_for
from pmforge.prompt.render import attribute, inert
from pmforge.prompt.wording import FILE_SUMMARY_INSTRUCTIONS
from pmforge.understand import extractive

log = logging.getLogger(__name__)

Progress = Callable[[str, int, int], None]  # (stage, done, total)



@dataclass
class IngestResult:
    filename: str
    ok: bool
    message: str
    entry: ManifestEntry | None = None


# Pastes are saved as "pasted-turn-N.md" (turn/paste.py). The prefix is theirs alone: an upload with such a
# name is stored as "upload-pasted-turn-N.md", so a paste never overwrites a PM's file, nor a file a paste.
PASTE_PREFIX = "pasted-turn-"
RENAMED_PASTE_PREFIX = "upload-"

# Files a workspace never keeps, whatever their extension: it is committed to git and shared.
CREDENTIAL_NAMES = (
    ".env", ".env.*", "*.env", "*.pem", "*.key", "*.p12", "*.pfx", "*.jks", "*.keystore", "*.ppk", "*.kdbx",
    "id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*", "credentials", "credentials*.json", "client_secret*.json",
    "service-account*.json", ".netrc", ".npmrc", ".pypirc", ".git-credentials", ".htpasswd",
)


def quiet(stage: str, done: int, total: int) -> None:
    pass


def summarize_file(project: Project, filename: str, markdown: str, ledger: Ledger | None = None) -> str:
    """A short summary of an upload (Haiku; extractive if it fails). With a ledger, its usage is recorded there."""
    settings = project.settings
    llm = MeteredLLM(project.services.llm, ledger) if ledger is not None else project.services.llm
    request = ChatRequest(
        purpose="summarize_file",
        model=settings.summary_model,
        system=[SystemBlock(text=FILE_SUMMARY_INSTRUCTIONS)],
        messages=[Message.user(f'<document name="{attribute(filename)}">\n{inert(markdown[:24000])}\n</document>')],
        max_tokens=settings.file_summary_max_output_tokens,
        context=FileToSummarize(filename, markdown),
    )
    return checked_summary(llm, request, lambda: extractive.file_summary(filename, markdown), "file summary")


def _index(
    project: Project, file_id: str, filename: str, markdown: str, parents: list[Parent], progress: Progress,
    ledger: Ledger | None = None,
) -> int:
    """Embed leaf windows (breadcrumb, and a table's header rows, prepended) and store leaves and
    parents. Returns the leaf count."""
    embedder: Embeds = project.services.embedder
    settings = project.settings
    if ledger is not None:  # the embeddings' tokens are billed to the upload
        embedder = MeteredEmbedder(project.services.embedder, ledger)
    tables = TableHeaders(markdown)  # one pass over the lines, not one walk back per leaf
    spans = iter(record_spans([embedder.windows(leaf.text) for parent in parents for leaf in parent.leaves],
                              settings.max_embed_windows))
    inputs: list[str] = []  # what each record's vector is made from
    leaves: list[LeafRecord] = []
    parent_records: list[ParentRecord] = []
    for pi, parent in enumerate(parents):
        pid = f"{file_id}:p{pi}"
        parent_records.append(ParentRecord(pid, parent.text, parent.section, parent.start, parent.end))
        crumb = breadcrumb(filename, parent.path)
        for li, leaf in enumerate(parent.leaves):
            leaf_id = f"{pid}:l{li}"
            context = f"{crumb}\n{tables.at(leaf.start)}"
            for wi, (ws, we, read) in enumerate(next(spans)):
                leaves.append(LeafRecord(
                    f"{leaf_id}:w{wi}", leaf_id, pid, context + leaf.text[ws:we], leaf.start + ws, leaf.start + we
                ))
                inputs.append(context + leaf.text[ws:read])
    vectors: list[list[float]] = []
    # Progress counts passages (what the file card shows), a batch at a time: the bar moves every few seconds
    # even on a slow machine. A passage longer than the embedder's window has several windows.
    passages = len({l.leaf_id for l in leaves})
    embedded: set[str] = set()
    step = settings.embed_progress_passages
    for i in range(0, len(leaves), step):
        progress("Embedding", len(embedded), passages)
        batch = leaves[i : i + step]
        vectors.extend(embedder.embed_documents(inputs[i : i + step]))
        embedded.update(l.leaf_id for l in batch)
    progress("Embedding", passages, passages)
    # A parent's vector is the mean of its leaves': it is fetched by id, never searched, but Chroma wants one.
    parent_vectors = []
    for rec in parent_records:
        rows = [v for l, v in zip(leaves, vectors) if l.parent_id == rec.id]
        mean = np.mean(np.array(rows), axis=0)
        parent_vectors.append((mean / (np.linalg.norm(mean) or 1.0)).tolist())
    progress("Saving", 0, 1)
    try:
        project.store.documents.add_file(file_id, filename, leaves, vectors, parent_records, parent_vectors)
    except StoreUnavailable:
        raise  # cannot clean up now; the unfinished-operation marker gets it cleaned later
    except Exception:
        project.store.documents.delete_file(file_id)  # never leave half a file searchable
        raise
    return len({l.leaf_id for l in leaves})


def ingest_file(project: Project, filename: str, data: bytes, progress: Progress | None = None, *,
                named_by_forge: bool = False) -> IngestResult:
    """Index one upload. `named_by_forge`: the name is Forge's own (a paste), so it may use the paste prefix."""
    progress = progress or quiet
    ws = project.ws
    try:
        asked = _stored_name(ws, safe_filename(filename), data, named_by_forge)
    except ForgeError as exc:
        return IngestResult(filename, False, str(exc))
    sha = hashlib.sha256(data).hexdigest()
    with ws.locked():  # the name depends on the files listed: it is settled before the operation names it
        project.recover()
        name, beside = own_name(ws.load_manifest(), asked)
        with project.operation(f"upload {name}"):
            return _ingest(project, filename, name, data, sha, progress, _kept_as(asked, name, beside))


def own_name(manifest: Manifest, name: str) -> tuple[str, str | None]:
    """The name an upload is kept under, and the listed file that made it take a name of its own (or None).
    The same name (NFC) is a new version of that file. A name that differs from a listed one only in case or
    form (see name_key) is another file, which a case-insensitive disk would store over the first: it gets a
    stable name of its own, and keeps it after the other file is deleted."""
    listed = {f.filename for f in manifest.file_summaries}
    if name in listed:
        return name, None
    tagged = tagged_filename(name)
    if tagged in listed:
        return tagged, None
    alike = {name_key(f): f for f in listed}.get(name_key(name))
    return (name, None) if alike is None else (tagged, alike)


def _kept_as(asked: str, name: str, beside: str | None) -> str:
    """How the upload message names the file: as asked, or as asked and kept under a name of its own."""
    if name == asked:
        return name
    why = f" ({beside} is already here, and many disks see the two names as one)" if beside else ""
    return f"{asked} as {name}{why}"


def _ingest(project: Project, filename: str, name: str, data: bytes, sha: str, progress: Progress,
            shown: str) -> IngestResult:
    """ingest_file, holding the operation; `shown`: the file as the messages name it."""
    settings = project.settings
    ws = project.ws
    refusal = _refusal(filename, name, data)
    manifest = ws.load_manifest()
    previous = next((f for f in manifest.file_summaries if f.filename == name), None)  # see own_name
    if refusal:
        if previous is not None and not previous.indexed and _refusal(previous.filename, previous.filename, b""):
            _forget(project, manifest, previous)  # kept by an older Forge: its bytes leave the workspace now
        log.warning("refused an upload: %s", refusal)
        return IngestResult(name, False, refusal)
    if previous and previous.sha256 == sha and previous.indexed:
        return IngestResult(name, True, f"{shown} is already uploaded with the same content; nothing changed.", previous)
    # An indexed version stays in place, searchable, until the new one is indexed: the new bytes wait
    # beside it under a hidden temporary name (git-ignored, and swept by recovery if Forge dies).
    replacing = previous is not None and previous.indexed
    upload = ws.uploads / (f".{name}.{os.urandom(6).hex()}.tmp" if replacing else name)
    atomic_write_bytes(upload, data)  # a new file is kept whatever happens next
    entry = ManifestEntry(filename=name, file_id=file_id_for(name, sha), sha256=sha, uploaded_at=now_iso())
    try:
        progress("Converting", 0, 1)
        converted = convert_upload(project, name, data)
        entry.note = converted.note
        entry.content_sha256 = hashlib.sha256(converted.markdown.encode("utf-8")).hexdigest()
        if replacing and previous is not None and previous.content_sha256 == entry.content_sha256:
            _put_upload(ws, upload, name)
            previous.sha256 = sha
            _swap_entry(project, manifest, previous, previous)
            return IngestResult(name, True, f"{shown} has the same content as before; nothing changed.", previous)
        twin = next((f for f in manifest.file_summaries if f.indexed and f is not previous
                     and f.content_sha256 == entry.content_sha256), None)
        if twin:
            _put_upload(ws, upload, name)
            ws.converted_path(name).unlink(missing_ok=True)
            entry.status = _twin_status(twin.filename)
            _swap_entry(project, manifest, previous, entry)
            return IngestResult(name, True, f"{shown} has the same content as {twin.filename}, which is "
                                "already indexed; it is kept but not indexed twice.", entry)
        entry.file_id = file_id_for(name, entry.content_sha256)
        if not replacing:
            atomic_write_text(ws.converted_path(name), converted.markdown)
        progress("Chunking", 0, 1)
        parents = chunk_markdown(converted.markdown, chunk_sizes(settings))
        if not parents:
            raise ForgeError(f"{name} has no text Forge can index.")
        progress("Summarizing", 0, 1)
        ledger = Ledger()  # what this upload bills, kept with its entry
        entry.summary = summarize_file(project, name, converted.markdown, ledger)
        entry.chunk_count = _index(project, entry.file_id, name, converted.markdown, parents, progress, ledger)
        entry.calls = ledger.take()
        entry.parent_count = len(parents)
        if replacing:
            # The swap: the upload first (from here on, recovery sees new bytes and finishes or retries
            # the upload), then its converted text, then the manifest; the old passages go last.
            _put_upload(ws, upload, name)
            atomic_write_text(ws.converted_path(name), converted.markdown)
    except StoreUnavailable as exc:
        # The store may hold part of the file and cannot be cleaned now: keep the operation marked
        # unfinished, so the next operation (or forge doctor) removes the remains once the store is back.
        if replacing:  # the indexed version stays listed; only the new version's remains are unlisted
            raise
        entry.status = f"{INTERRUPTED} ({exc})"
        ws.converted_path(name).unlink(missing_ok=True)
        manifest.file_summaries = [f for f in manifest.file_summaries if f is not previous] + [entry]
        ws.save_manifest(manifest)
        raise
    except ForgeError as exc:
        if replacing:
            message = f"{str(exc).rstrip('.')}; the previous version of {name} stays indexed."
            log.warning("kept the previous version of %s: %s", name, exc)
            return IngestResult(name, False, message, previous)
        log.warning("not indexed %s: %s", name, exc)
        entry.status = f"not indexed: {exc}"
        ws.converted_path(name).unlink(missing_ok=True)  # no Markdown without chunks behind it
        _swap_entry(project, manifest, previous, entry)
        return IngestResult(name, False, str(exc), entry)
    finally:
        if replacing:  # new bytes not swapped in (refused, failed, interrupted) leave no trace
            upload.unlink(missing_ok=True)
    ws.operations.crash_point("indexed")
    _swap_entry(project, manifest, previous, entry)
    progress("Done", 1, 1)
    log.info("indexed %s: %d passages in %d sections", name, entry.chunk_count, entry.parent_count)
    verb = "Replaced" if previous else "Indexed"
    passages = f"{entry.chunk_count} passage{'s' * (entry.chunk_count != 1)}"
    sections = f"{entry.parent_count} section{'s' * (entry.parent_count != 1)}"
    return IngestResult(name, True, f"{verb} {shown}: {passages} in {sections}.", entry)


def _stored_name(ws, name: str, data: bytes, named_by_forge: bool) -> str:
    """The name an upload is kept under: a PM's file named like a paste is renamed (see PASTE_PREFIX). A
    file Forge reads back from uploads/ (forge doctor, a twin standing in for a deleted file) arrives with
    the very bytes stored under its name and keeps that name: nothing else can be overwritten that way."""
    if named_by_forge or not name.casefold().startswith(PASTE_PREFIX):
        return name
    stored = ws.uploads / name
    if stored.is_file() and stored.read_bytes() == data:
        return name
    return safe_filename(RENAMED_PASTE_PREFIX + name)


def _refusal(filename: str, name: str, data: bytes) -> str | None:
    """Why an upload is not even kept, or None: a credential (by name, or a private key inside), or a type
    Forge cannot read (its bytes would sit in a folder committed to git for nothing)."""
    base = printable(filename.replace("\\", "/").split("/")[-1]).strip() or name
    if looks_like_credentials(base) or looks_like_credentials(name) or _holds_private_key(data):
        return (f"Forge did not keep {base}: it looks like a credentials file, and a project is shared through "
                "git, so keys and passwords must stay out of it.")
    if extension(name) not in SUPPORTED:
        return unsupported_message(name)
    return None


def looks_like_credentials(filename: str) -> bool:
    base = filename.casefold()
    return any(fnmatch.fnmatchcase(base, pattern) for pattern in CREDENTIAL_NAMES)


def _holds_private_key(data: bytes) -> bool:
    return b"-----BEGIN" in data and b"PRIVATE KEY-----" in data


def _forget(project: Project, manifest, entry: ManifestEntry) -> None:
    manifest.file_summaries = [f for f in manifest.file_summaries if f is not entry]
    project.ws.save_manifest(manifest)
    _remove_files(project.ws, entry.filename)


def _remove_files(ws, filename: str) -> None:
    (ws.uploads / filename).unlink(missing_ok=True)
    ws.converted_path(filename).unlink(missing_ok=True)


def _put_upload(ws, staged: Path, name: str) -> None:
    """Move a staged upload into place (a no-op for one written in place)."""
    target = ws.uploads / name
    if staged != target:
        os.replace(staged, target)


def convert_upload(project: Project, filename: str, data: bytes) -> Converted:
    """Convert under the project's budgets (time, memory, text size): ForgeError over any."""
    settings = project.settings
    budget = Budget(settings.convert_timeout_s, settings.convert_memory_mb, settings.max_text_chars)
    return convert(filename, data, int(settings.max_upload_mb * 1_000_000), budget)


def chunk_sizes(settings) -> ChunkSizes:
    return ChunkSizes(settings.leaf_max_tokens, settings.parent_max_tokens, settings.merge_below_tokens,
                      settings.max_sections)


def _swap_entry(project: Project, manifest, previous: ManifestEntry | None, entry: ManifestEntry) -> None:
    """Record the new entry, then drop the old file's chunks (new ones are already searchable)."""
    manifest.file_summaries = [f for f in manifest.file_summaries
                               if f is not previous and f.filename != entry.filename] + [entry]
    project.ws.save_manifest(manifest)
    if previous and previous.file_id != entry.file_id:
        project.store.documents.delete_file(previous.file_id)


def delete_file(project: Project, filename: str) -> str:
    ws = project.ws
    with project.operation(f"delete {filename}"):
        manifest = ws.load_manifest()
        entry = manifest.find(filename)
        if entry is None:
            raise ForgeError(f"There is no file called '{filename}' in project '{ws.slug}'.")
        project.store.documents.delete_file(entry.file_id)
        ws.operations.crash_point("unindexed")
        manifest.file_summaries = [f for f in manifest.file_summaries if f is not entry]
        ws.save_manifest(manifest)
        (ws.uploads / entry.filename).unlink(missing_ok=True)
        ws.converted_path(entry.filename).unlink(missing_ok=True)
        twins = [f.filename for f in manifest.file_summaries if f.status == _twin_status(entry.filename)]
    # Copies that were held back as duplicates of the deleted file now stand on their own.
    for twin in twins:
        upload = ws.uploads / twin
        if upload.exists():
            ingest_file(project, twin, upload.read_bytes(), named_by_forge=True)
    log.info("deleted %s", entry.filename)
    return f"Deleted {entry.filename}."


def _twin_status(filename: str) -> str:
    return f"not indexed: same content as {filename}"


def reindex_file(project: Project, entry: ManifestEntry) -> None:
    """Convert, chunk and index one listed file again from its upload (its old vectors must be gone)."""
    ws, settings = project.ws, project.settings
    upload = ws.uploads / entry.filename
    if not upload.exists():
        entry.status = "not indexed: the original upload is missing"
        return
    converted = convert_upload(project, entry.filename, upload.read_bytes())
    atomic_write_text(ws.converted_path(entry.filename), converted.markdown)
    parents = chunk_markdown(converted.markdown, chunk_sizes(settings))
    entry.chunk_count = _index(project, entry.file_id, entry.filename, converted.markdown, parents, quiet)
    entry.parent_count = len(parents)


