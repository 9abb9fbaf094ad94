"""Re-indexing: what `forge reindex` and the app's rebuild do — bring the store up to this clone's files and
transcript (nothing dropped), or drop and rebuild it (`--force`)."""

from __future__ import annotations

import copy

from pmforge.core.errors import ForgeError
from pmforge.core.words import counted
from pmforge.index.client import StoreUnavailable
from pmforge.ingest.pipeline import Progress, quiet, reindex_file
from pmforge.project.project import Project
from pmforge.turn.remember import asked_before, catch_up, remember, summarize_turn


def reindex(project: Project, progress: Progress | None = None, force: bool = False) -> str:
    """`forge reindex`: add what this clone's files and transcript need and the store lacks — listed files
    with no vectors are indexed (one another clone already indexed, same file id, is only claimed, not
    embedded again), turns the memory lacks are remembered, keyword caches behind their collection are
    rebuilt from the texts Chroma holds. Nothing is dropped, so it is safe on a store other clones share.

    `force` (`forge reindex --force`, the only way anything is dropped): replace the project's collections —
    on a shared server every clone's — with ones rebuilt from this clone's files and transcript, holding the
    project's lease. An embedded store is this clone's alone: vectors of another embedder are rebuilt there
    without asking, as a fresh clone's would be; when the new embedder cannot build them, the project goes
    on with the index it has (Project.keep_index) and the sentence returned says so."""
    progress = progress or quiet
    store = project.store
    mismatch = store.upkeep.mismatched()
    if mismatch and not force:
        if store.shared:
            raise ForgeError(
                f"The shared vectors of '{project.ws.slug}' were made with {mismatch}, not {store.signature}; "
                f"run `forge reindex --force {project.ws.slug}` to rebuild them for every clone."
            )
        try:
            return _rebuild(project, progress)
        except StoreUnavailable:
            raise  # no index to keep using either
        except ForgeError as exc:
            if "/" not in mismatch:
                raise  # collections that do not name their embedder cannot be searched with it
            return project.keep_index(mismatch, exc)
    return _rebuild(project, progress) if force else _catch_up(project, progress)


def _catch_up(project: Project, progress: Progress) -> str:
    ws, store, services = project.ws, project.store, project.services
    with ws.operations.marked("reindex"):
        upkeep = project.upkeep()  # again, under the lock: another window may have caught up meanwhile
        for name in upkeep.stale_keywords:
            progress("Rebuilding the keyword index", 0, 1)
            store.upkeep.reindex_keywords(name)
        manifest = ws.load_manifest()
        listed = [f for f in manifest.file_summaries if f.indexed]
        missing = [f for f in listed if f.filename in upkeep.missing_files]
        for i, entry in enumerate(missing):
            progress(f"Indexing {entry.filename}", i, len(missing))
            reindex_file(project, entry)
        for entry in listed:
            if entry.file_id in upkeep.unclaimed_files:
                store.claims.claim(entry.file_id, entry.filename)
        if missing:
            ws.save_manifest(manifest)
        state = ws.load_state()
        stored = store.memory.turn_ids()
        if upkeep.unremembered and any(turn_id.isdigit() for turn_id in stored):
            store.memory.adopt_numbered_turns(state.turns)  # memory from before turn ids: re-keyed, not re-embedded
            stored = store.memory.turn_ids()
        progress("Remembering the conversation", 0, 1)
        remembered = catch_up(store, services.embedder, services.llm, state, project.settings, ws=ws, stored=stored)
    progress("Done", 1, 1)
    done = [f"{counted(len(missing), 'file')} indexed", f"{counted(len(remembered), 'turn')} remembered"]
    if upkeep.stale_keywords:
        done.append("keyword index rebuilt")
    return f"Caught up '{ws.slug}': {', '.join(done)}; nothing was dropped."


def _rebuild(project: Project, progress: Progress) -> str:
    """Rebuild beside the index in use, which is replaced only once the new one is complete: an embedder
    failing half-way drops nothing. Holds the project's lease (renewed between files) so no other clone
    drops or deletes at the same time."""
    ws, store = project.ws, project.store
    with ws.operations.marked("reindex --force"), store.claims.lease("rebuilding") as lease:
        building = copy.copy(project)
        building.store = store.upkeep.beside()
        try:
            manifest = ws.load_manifest()
            files = [f for f in manifest.file_summaries if f.indexed]
            for i, entry in enumerate(files):
                progress(f"Re-indexing {entry.filename}", i, len(files))
                reindex_file(building, entry)
                lease.renew()
            state = ws.load_state()
            for i, turn in enumerate(state.turns):
                progress("Re-indexing conversation", i, len(state.turns))
                asked = asked_before(state.turns, i)
                if not turn.summary:
                    turn.summary = summarize_turn(project.services.llm, turn.user, turn.assistant, project.settings,
                                                  asked)
                remember(building.store, project.services.embedder, turn, asked)
                turn.indexed = True
            store.upkeep.take_over_from(building.store)
        finally:
            building.store.upkeep.discard()
        ws.save_manifest(manifest)
        ws.save_state(state)
    progress("Done", 1, 1)
    return f"Re-indexed {len(files)} files and {len(state.turns)} turns with {project.store.signature}."
