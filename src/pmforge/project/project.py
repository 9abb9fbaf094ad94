"""Process-wide services (settings, LLM, embedder) and an opened project (workspace + its store).

The CLI, the app, the tests and the benchmarks all open projects through here,
so they drive the very same code.
"""

from __future__ import annotations

import getpass
import json
import logging
import os
import secrets
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field, replace
from typing import Callable, Iterator

from pmforge.core import transcript
from pmforge.core.errors import ForgeError
from pmforge.core.models import Manifest, ManifestEntry, SessionState
from pmforge.core.settings import Settings
from pmforge.core.words import counted
from pmforge.core.workspace import ProjectBusy, Workspace, notify
from pmforge.embed import Embedder
from pmforge.index.client import StoreUnavailable, client_for, persistent_client
from pmforge.index.collections import KEYWORD_MIRRORED, REGISTRY, Clone, Lease, ProjectStore, reachable
from pmforge.knowledge import Catalogue, project_catalogue
from pmforge.project.recover import recover
from pmforge.project.services import Services

log = logging.getLogger(__name__)


def server_prefix(workspace: Workspace) -> str:
    """Collection-name prefix on a shared server: readable slug plus the project's random id, so two
    projects (even with the same name, from two repositories) never share a collection."""
    return f"forge-{workspace.slug[:40]}-{workspace.project_id()}-"


def author_label(settings: Settings) -> str:
    """Who this clone's turns and files say wrote them: FORGE_AUTHOR, else the OS user name."""
    if settings.author:
        return settings.author
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no user name in this environment (a bare container)
        return "unknown"


def clone_identity(workspace: Workspace, settings: Settings) -> Clone:
    """This clone's random id, kept in the git-ignored vectordb/ (a fresh clone gets its own), made once
    even when two processes open a fresh clone at the same moment."""
    path = workspace.vectordb / "clone.json"
    for _ in range(2):
        try:
            return Clone(json.loads(path.read_text(encoding="utf-8"))["clone_id"], author_label(settings))
        except FileNotFoundError:
            pass
        except (ValueError, KeyError):
            path.unlink(missing_ok=True)  # unreadable: this clone starts over with a new id
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            continue  # another process made it first: read theirs
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(json.dumps({"clone_id": "c-" + secrets.token_hex(6)}))
            fh.flush()
            os.fsync(fh.fileno())
    return Clone(json.loads(path.read_text(encoding="utf-8"))["clone_id"], author_label(settings))


def transcript_ids(workspace: Workspace) -> set[str]:
    """The turn ids of the workspace's transcript (parsed once per process, then only what was appended)."""
    return {t.id for t in transcript.load(workspace.transcript_path)}


def open_store(workspace: Workspace, signature: str, settings: Settings, server: bool | None = None) -> ProjectStore:
    """The project's store: embedded in the workspace, or on the Chroma server when one is configured
    (`server` overrides the configuration, for migrations)."""
    client, shared = client_for(workspace.vectordb, settings, server)
    prefix = server_prefix(workspace) if shared else ""
    return ProjectStore(client, signature, keyword_dir=workspace.vectordb / "keyword", prefix=prefix,
                        location=f"the Chroma server at {settings.chroma_host}:{settings.chroma_port}" if shared
                        else "the project's embedded vector store",
                        clone=clone_identity(workspace, settings), transcript=lambda: transcript_ids(workspace),
                        lease_seconds=settings.lease_seconds, memory_sync_threshold=settings.memory_sync_threshold,
                        busy_wait_s=settings.store_busy_wait_s)


@dataclass
class Upkeep:
    """What opening a project must do before its store can be trusted, cheapest first. None of it drops
    anything; only an embedder mismatch needs a rebuild (`forge reindex --force`)."""

    mismatch: str | None = None  # the embedder that filled the collections, when it is not ours
    signature: str = ""
    stale_keywords: list[str] = field(default_factory=list)  # local keyword caches behind their collection
    missing_files: list[str] = field(default_factory=list)  # listed files with no vectors: index them
    unclaimed_files: list[str] = field(default_factory=list)  # file ids already indexed (by a clone): claim
    # Turns the transcript says were remembered (here, or by the clone that wrote them) but the store lacks.
    # A turn saved but never remembered is caught up by the next turn, as before.
    unremembered: list[str] = field(default_factory=list)

    @property
    def reason(self) -> str | None:
        if self.mismatch:
            return f"its vectors were made with {self.mismatch}, and Forge now embeds with {self.signature}"
        if self.missing_files:
            return (f"the vector store does not match the uploaded files ({counted(len(self.missing_files), 'file')} "
                    "not indexed yet; a fresh clone has no vectors)")
        if self.unremembered:
            n = len(self.unremembered)
            return f"{counted(n, 'turn')} of the transcript {'is' if n == 1 else 'are'} not in the conversation memory"
        if self.stale_keywords:
            return "the keyword index does not match the vector store"
        if self.unclaimed_files:
            return f"this clone has not yet claimed {counted(len(self.unclaimed_files), 'shared file')}"
        return None


class Project:
    def __init__(self, workspace: Workspace, services: Services):
        self.ws = workspace
        self.ws.lock_wait_s = services.settings.lock_wait_s
        self.services = services
        self.store = open_store(workspace, services.embedder.signature, services.settings)
        self.recovered: str | None = None
        # Told (one sentence) when a change waits for another window's or command's write, e.g. an upload's.
        self.on_wait: Callable[[str], None] | None = None
        self.kept_index: str | None = None  # why the project searches an index of another embedder (keep_index)

    @classmethod
    def open(cls, services: Services, name: str) -> "Project":
        project = cls(Workspace.open(services.projects_root, name), services)
        project.recovered = project.recover()
        return project

    @contextmanager
    def operation(self, label: str) -> Iterator[None]:
        """A change spanning files and the store: finish whatever a crash interrupted first, then hold the
        project's lock and operation marker (see OperationJournal.marked)."""
        with self.write_window():
            self.recover()
            with self.ws.operations.marked(label):
                yield

    @contextmanager
    def write_window(self) -> Iterator[None]:
        """Hold the project's write lock. When another window or command holds it (an upload embeds its
        passages holding it), `on_wait` hears so once, and the wait lasts up to the workspace's lock wait."""
        with ExitStack() as held:
            try:
                held.enter_context(self.ws.locked(timeout=0))
            except ProjectBusy:
                if self.on_wait is not None:
                    marker = self.ws.operations.interrupted()  # the holder's operation, while it holds the lock
                    doing = f" ({marker['operation']})" if marker and marker.get("operation") != "unknown" else ""
                    self.on_wait(f"Project '{self.ws.slug}' is busy in another Forge window or command{doing}; "
                                 f"waiting up to {self.ws.lock_wait_s:.0f} s…")
                held.enter_context(self.ws.locked())
            yield

    def recover(self) -> str | None:
        """Finish whatever operation a crash interrupted on this project; what it was, or None."""
        if not self.ws.operations.marker.exists():  # the common case costs one stat
            return None
        return recover(self)

    @classmethod
    def create(cls, services: Services, name: str) -> "Project":
        return cls(Workspace.create(services.projects_root, name), services)

    @property
    def settings(self) -> Settings:
        return self.services.settings

    def state(self) -> SessionState:
        return self.ws.load_state()

    def manifest(self) -> Manifest:
        return self.ws.load_manifest()

    def catalogue(self) -> Catalogue:
        """The built-in probes and patterns plus this project's own (`patterns/*.md`, read again when they change)."""
        return project_catalogue(self.ws.slug, self.ws.root)

    def passage(self, source) -> str | None:
        """The exact text a citation points to, or None when that version of the file is gone."""
        return self.passage_reader()(source)

    def passage_reader(self, manifest: Manifest | None = None) -> Callable[[object], str | None]:
        """`passage` for the many citations of one page: the manifest (unless given) and each converted file
        read once."""
        manifest = manifest or self.manifest()
        texts: dict[str, str | None] = {}

        def passage(source) -> str | None:
            entry = manifest.find(source.filename)
            if entry is None or entry.file_id != source.file_id:
                return None
            if source.filename not in texts:
                path = self.ws.converted_path(source.filename)
                texts[source.filename] = path.read_text(encoding="utf-8") if path.exists() else None
            text = texts[source.filename]
            return None if text is None else text[source.start : source.end]
        return passage

    def upkeep(self) -> Upkeep:
        """What this clone must add to the store (never remove): a few cheap reads — one metadata read and
        a count per keyword cache, the stored file ids, the claims and the remembered turn ids. What other
        clones stored is theirs: it is never a reason to rebuild."""
        store = self.store
        mismatch = store.upkeep.mismatched()
        if mismatch:
            return Upkeep(mismatch=mismatch, signature=store.signature)
        listed = [f for f in self.manifest().file_summaries if f.indexed]
        stored = store.documents.file_ids()
        claimed = store.claims.claimed_here()
        remembered = store.memory.turn_ids()
        return Upkeep(
            signature=store.signature,
            stale_keywords=[name for name in KEYWORD_MIRRORED if not store.upkeep.keyword_current(name)],
            missing_files=[f.filename for f in listed if f.file_id not in stored],
            unclaimed_files=[f.file_id for f in listed if f.file_id in stored and f.file_id not in claimed],
            unremembered=[t.id for t in self.state().turns if t.indexed and t.id not in remembered],
        )

    def reindex_reason(self) -> str | None:
        """Why the store needs `forge reindex` (a catch-up that adds, never drops) before use; None when it
        does not."""
        return self.upkeep().reason

    def keep_index(self, built_with: str, why: ForgeError) -> str:
        """The embedder Forge now uses could not build the project a new index (`why`): go on with the index
        it has, searched with the embedder that built it when that one runs on this machine, else by keywords
        alone. Returns the one sentence that says so (also kept as `kept_index`)."""
        embedder = offline_embedder(built_with)
        settings, how = self.settings, "with that embedder"
        if embedder is None:
            settings = settings.model_copy(update={"document_retriever": "bm25", "conversation_retriever": "bm25"})
            embedder, how = NoVectors(built_with, str(why)), "by keywords alone (that embedder does not run here)"
        slug, wanted = self.ws.slug, self.store.signature
        self.services = replace(self.services, settings=settings, embedder=embedder)  # this project's only
        self.store = open_store(self.ws, built_with, settings)
        self.kept_index = (f"Kept the index of '{slug}' made with {built_with}, and searching it {how}: {wanted} "
                           f"could not build the new one ({str(why).rstrip('.')}); it is built the next time Forge "
                           f"opens the project with that embedder working (or with `forge reindex {slug}`).")
        log.warning("%s", self.kept_index)
        return self.kept_index


def offline_embedder(signature: str) -> Embedder | None:
    """An embedder that makes vectors of `signature` on this machine (the shipped model, the hashing one)."""
    from pmforge.embed.hashing import HashingEmbedder
    from pmforge.embed.local import LocalEmbedder

    return next((e for e in (LocalEmbedder(), HashingEmbedder()) if e.signature == signature), None)


class NoVectors(Embedder):
    """Stands in for an embedder that does not run here: its signature opens the index it built, and any
    vector asked of it is refused in one sentence, so no other model's vectors ever enter that index."""

    def __init__(self, signature: str, why: str):
        super().__init__()
        name, _, dimensions = signature.rpartition("/")
        self.name, self.dimensions, self.why = name, int(dimensions), why

    def _embed(self, texts: list[str], kind: str) -> list[list[float]]:
        raise ForgeError(self.why)


def listed_files(settings: Settings, name: str) -> list[ManifestEntry]:
    """The project's files as its manifest lists them (`forge files`): listing needs no vectors, so a vector
    server that is down does not stop it. What a crash interrupted is finished first when the store answers
    (an interrupted upload is then listed for a retry, not redone)."""
    workspace = Workspace.open(settings.projects_root(), name)
    if workspace.operations.marker.exists():
        try:
            Project.open(Services.from_settings(settings), name)
        except StoreUnavailable as exc:
            notify(f"{str(exc).rstrip('.')}; the files are listed as last saved, and what a crash interrupted "
                   "is finished once the store is back.")
    return workspace.load_manifest().file_summaries


# ---- deleting a project (`forge delete-project`, the sidebar's Delete)

def deletion_warning(workspace: Workspace, settings: Settings) -> str:
    """What deleting the project removes, said before the PM confirms."""
    name = workspace.read_display_name()
    text = (f"Deleting '{name}' removes its folder ({workspace.slug}: uploads, transcript, briefs) and its "
            "vectors, and cannot be undone (what was committed to git stays in its history).")
    if settings.chroma_host:
        text += (f" Its collections on the shared Chroma server at {settings.chroma_host}:{settings.chroma_port} "
                 "go too: other clones of this project may still use them, and each re-embeds its own files "
                 "and turns the next time it opens the project.")
    return text


def confirms_deletion(typed: str, workspace: Workspace) -> bool:
    """Whether what the PM typed names this project: its slug or its display name (case and spacing aside)."""
    def plain(text: str) -> str:
        return " ".join(text.split()).casefold()

    said = plain(typed)
    return bool(said) and said in {plain(workspace.slug), plain(workspace.read_display_name())}


def delete_project(services: Services, name: str, on_wait: Callable[[str], None] | None = None) -> str:
    """Delete a project: its vectors first (on a shared server, every collection under its prefix, the
    registry last), then its folder, all under the project's lock. On a server the project's lease is
    taken first, so nothing is deleted while another clone rebuilds, repairs or migrates it. A reply being
    written in the project is waited for (FORGE_DELETE_BUSY_WAIT_S, `on_wait` hears so), then refused:
    deleting under it would lose the reply. Returns one sentence saying what went."""
    workspace = Workspace.open(services.projects_root, name)
    shown = workspace.read_display_name()
    wait_s = services.settings.delete_busy_wait_s

    def waiting() -> None:
        if on_wait is not None:
            on_wait(f"Project '{workspace.slug}' is answering a message; waiting up to {wait_s:g} s before "
                    "deleting it…")

    with ExitStack() as held:
        try:
            held.enter_context(workspace.turn_slot(wait_s, on_wait=waiting))
        except ProjectBusy:
            raise ForgeError(f"Nothing was deleted: project '{shown}' is answering a message in another Forge "
                             "window or command; try again once the reply is done.") from None
        held.enter_context(workspace.locked())
        where = "its embedded vector store"
        if services.settings.chroma_host:
            store = open_store(workspace, services.embedder.signature, services.settings)
            dropped = _drop_server_collections(store)  # refused (lease, server down): nothing is deleted
            where = f"{counted(dropped, 'collection')} on {store.location}"
        _close_embedded_store(workspace)  # vectordb/ may also hold an embedded store from before a migration
        workspace.remove()
    return f"Deleted project '{shown}' ({workspace.slug}): its folder and {where}."


def _close_embedded_store(workspace: Workspace) -> None:
    """Close this process's client of the embedded store about to be deleted, so a project made later in
    the same folder gets a fresh one (a cached client would keep writing to the deleted database)."""
    if not (workspace.vectordb / "chroma.sqlite3").exists():
        return  # never opened: there is no client to close
    persistent_client(str(workspace.vectordb.resolve())).close()
    persistent_client.cache_clear()  # other projects' clients stay open: their stores hold them


def _drop_server_collections(store: ProjectStore) -> int:
    """Drop the project's collections on the server under its lease; how many went."""
    lease = Lease(store, "deleting", store.lease_seconds)
    lease.take()  # another clone holding it: one sentence, nothing deleted
    try:
        return reachable(_drop_prefixed)(store)
    except BaseException:
        try:
            lease.release()
        except ForgeError:
            pass  # the server went away: the lease expires by itself
        raise


def _drop_prefixed(store: ProjectStore) -> int:
    registry = f"{store.prefix}{REGISTRY}"
    names = [c.name for c in store.client.list_collections() if c.name.startswith(store.prefix)]
    for collection in sorted(names, key=lambda n: n == registry):  # the registry, which holds the lease, last
        store.client.delete_collection(collection)
    return len(names)
