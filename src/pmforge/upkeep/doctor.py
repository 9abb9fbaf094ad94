"""`forge doctor`: do uploads, converted files, manifest, vector store, keyword indexes and transcript agree?

Checks run in layers, each trusting the one before it: the files on disk and the manifest, then the vector
store against the manifest, then the keyword indexes against the vector store, then the conversation memory
against the transcript. Repairs go layer by layer too, re-checking in between, because fixing the files
(re-ingesting one, say) also changes the store.

Recovery on opening (project/recover.py) does only the quick repairs; the ones here finish the rest.

On a Chroma server other clones of the project store their files and turns beside this clone's: those are
reported as belonging to another clone (notes, not problems) and never deleted, and repairs hold the
project's lease so that no two clones delete at once.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass, field
from functools import partial
from typing import Callable

from pmforge.core.errors import ForgeError
from pmforge.core.models import Turn
from pmforge.core.workspace import atomic_write_text
from pmforge.index.collections import CONVERSATIONS, DOCUMENTS, PARENTS
from pmforge.ingest.pipeline import convert_upload, delete_file, ingest_file, reindex_file
from pmforge.project.project import Project
from pmforge.project.recover import INTERRUPTED
from pmforge.turn.remember import catch_up
from pmforge.upkeep.reindex import reindex

log = logging.getLogger(__name__)


@dataclass
class Finding:
    layer: str
    problem: str  # one sentence, for the PM
    repair: str  # what --fix does about it
    fix: Callable[[], object] = field(repr=False, default=lambda: None)  # what it returns is not used
    note: bool = False  # not a problem: another clone's data, or a cache brought up to date while looking


@dataclass
class Report:
    project: str
    findings: list[Finding]
    repaired: list[str] = field(default_factory=list)
    recovered: str | None = None  # the interrupted operation finished on opening
    totals: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # other clones' files and turns; nothing to repair

    @property
    def consistent(self) -> bool:
        return not self.findings

    def as_dict(self) -> dict:
        return {
            "project": self.project, "consistent": self.consistent, "recovered": self.recovered,
            "repaired": self.repaired, "totals": self.totals, "notes": self.notes,
            "problems": [{"layer": f.layer, "problem": f.problem, "repair": f.repair} for f in self.findings],
        }


def _files(project: Project) -> list[Finding]:
    ws = project.ws
    manifest = ws.load_manifest()
    found: list[Finding] = []
    listed = {f.filename for f in manifest.file_summaries}
    on_disk = {p.name for p in ws.uploads.iterdir() if p.is_file() and not p.name.startswith(".")} \
        if ws.uploads.is_dir() else set()

    for entry in manifest.file_summaries:
        upload = ws.uploads / entry.filename
        if entry.filename not in on_disk:
            found.append(Finding("files", f"{entry.filename} is listed but its upload is missing.",
                                 "remove it from the file list and the search index",
                                 partial(delete_file, project, entry.filename)))
            continue
        if entry.status.startswith(INTERRUPTED):
            found.append(Finding("files", f"Indexing {entry.filename} was interrupted.", "index it",
                                 partial(_reingest, project, entry.filename)))
            continue
        if not entry.indexed:
            continue
        sha = hashlib.sha256(upload.read_bytes()).hexdigest()
        if sha != entry.sha256:
            found.append(Finding("files", f"{entry.filename} changed on disk since it was indexed.",
                                 "index the file as it is now",
                                 partial(_reingest, project, entry.filename)))
        elif not ws.converted_path(entry.filename).exists():
            found.append(Finding("files", f"The converted text of {entry.filename} is missing.",
                                 "convert the upload again", partial(_reconvert, project, entry.filename)))
    for name in sorted(on_disk - listed):
        found.append(Finding("files", f"uploads/{name} is not in the file list (an upload was interrupted).",
                             "index it", partial(_reingest, project, name)))
    indexed = {f"{f.filename}.md" for f in manifest.file_summaries if f.indexed}
    if ws.converted.is_dir():
        for path in sorted(ws.converted.glob("*.md")):
            if path.name not in indexed:
                found.append(Finding("files", f"converted/{path.name} belongs to no indexed file.",
                                     "delete it", partial(path.unlink, missing_ok=True)))
    return found


def _vectors(project: Project) -> list[Finding]:
    store = project.store
    mismatch = store.upkeep.mismatched()
    if mismatch:
        if store.shared:  # dropping is every clone's business: only `forge reindex --force` does it
            return [Finding("vectors", f"The shared vectors were made with {mismatch}, not {store.signature}.",
                            f"nothing: run `forge reindex --force {project.ws.slug}` (it rebuilds them for every "
                            "clone)")]
        return [Finding("vectors", f"The vectors were made with {mismatch}, not {store.signature}.",
                        "rebuild the whole index", lambda: reindex(project, force=True))]
    manifest = project.ws.load_manifest()
    expected = {f.file_id: f for f in manifest.file_summaries if f.indexed}
    stored = store.documents.file_counts()
    claims = store.claims.all()
    claimed_here = store.claims.claimed_here(claims)
    found: list[Finding] = []
    for file_id, entry in expected.items():
        have = stored.get(file_id)
        if have is None:
            found.append(Finding("vectors", f"{entry.filename} is not in the vector store.", "index it",
                                 partial(_index_missing, project, entry.filename)))
            continue
        if have != (entry.parent_count, entry.chunk_count):
            problem = (f"{entry.filename} is only partly in the vector store ({have[0]} of {entry.parent_count} "
                       f"sections, {have[1]} of {entry.chunk_count} passages).")
        elif not _content_matches(project, entry):
            problem = f"The stored sections of {entry.filename} differ from its converted text."
        elif file_id not in claimed_here:
            found.append(Finding("vectors", f"{entry.filename} is indexed but not claimed by this clone, so another "
                                 "clone's delete would remove it.", "claim it",
                                 partial(store.claims.claim, entry.file_id, entry.filename)))
            continue
        else:
            continue
        found.append(Finding("vectors", problem, "index it again",
                             partial(_drop_and_reindex_file, project, entry.filename)))
    orphans = set()
    for file_id in sorted(set(stored) - set(expected)):
        others = [c for c in claims.get(file_id, []) if c["clone"] != store.clone.id]
        if not others:
            orphans.add(file_id)
            continue
        found.append(Finding("vectors", f"{others[0]['filename']} belongs to another clone "
                             f"({', '.join(sorted({c['author'] or 'unknown' for c in others}))}).", "nothing",
                             note=True))
        if file_id in claimed_here:  # this clone deleted it, but its claim outlived the delete
            found.append(Finding("vectors", f"This clone still claims {others[0]['filename']}, which it no longer "
                                 "lists.", "withdraw the claim (the other clone's vectors stay)",
                                 partial(store.documents.delete_file, file_id)))
    if orphans:
        found.append(Finding("vectors", f"The vector store holds passages of {len(orphans)} file(s) that are no "
                             "longer listed.", "delete them",
                             lambda: [store.documents.delete_file(fid) for fid in orphans]))
    return found


def _content_matches(project: Project, entry) -> bool:
    """Whether every stored section of the file is the converted text at its offsets (a digest of
    contents, not just a count)."""
    path = project.ws.converted_path(entry.filename)
    if not path.exists():
        return True  # the files layer reports (and repairs) a missing converted text
    text = path.read_text(encoding="utf-8")
    got = project.store.collection(PARENTS).get(where={"file_id": entry.file_id}, include=["documents", "metadatas"])
    return all(doc == text[m["start"] : m["end"]] for doc, m in zip(got["documents"], got["metadatas"]))


def _keywords(project: Project) -> list[Finding]:
    store = project.store
    found = []
    for name, what in ((DOCUMENTS, "documents"), (CONVERSATIONS, "conversation memory")):
        if store.upkeep.stamp(name) != store.upkeep.true_stamp(name):  # contents compared by digest, not just ids
            found.append(Finding("keywords", f"The content stamp of the {what} does not match its records (two "
                                 "clones wrote at once, or the store predates stamps).",
                                 "recompute it and rebuild the keyword index",
                                 partial(store.upkeep.reindex_keywords, name)))
            continue
        if not store.upkeep.keyword_current(name):
            # The records themselves check out (above), so the local cache is merely behind them: other clones
            # wrote since it was filled, or a crash cut its last update short. Refreshing it from Chroma's
            # texts is the catch-up every open does, not a repair.
            store.upkeep.reindex_keywords(name)
            found.append(Finding("keywords", f"Refreshed the local keyword index of the {what} from the vector "
                                 "store (other clones wrote, or its last update was cut short).", "nothing",
                                 note=True))
        vector_ids, keyword_ids = store.ids(name), store.keyword(name).ids()
        if vector_ids != keyword_ids or not store.upkeep.keyword_current(name):
            found.append(Finding("keywords", f"The keyword index of the {what} disagrees with the vector store "
                                 f"({len(keyword_ids - vector_ids)} extra, {len(vector_ids - keyword_ids)} missing).",
                                 "rebuild it from the vector store", partial(store.upkeep.reindex_keywords, name)))
    return found


def _memory(project: Project) -> list[Finding]:
    """Turns compared by transcript id and by their words; another clone's turns are noted, never deleted."""
    store = project.store
    state = project.ws.load_state()
    said = {t.id: t for t in state.turns}
    records = store.memory.turn_records()
    found = []
    missing = {t.id for t in state.turns if t.id not in records}
    if missing:
        found.append(Finding("memory", f"{len(missing)} turn(s) of the transcript are not in the conversation memory.",
                             "remember them", lambda: _remember(project, missing)))
    differ = {tid for tid, t in said.items() if tid in records
              and (records[tid][0].get("user"), records[tid][0].get("assistant")) != (t.user, t.assistant)}
    if differ:
        found.append(Finding("memory", f"{len(differ)} turn(s) in the conversation memory differ from the transcript.",
                             "remember them again", lambda: _remember(project, differ)))
    others: dict[str, str] = {}
    extra = set()
    for tid, (meta, _) in records.items():
        if tid in said:
            continue
        if meta.get("clone") not in (None, store.clone.id):
            others[tid] = meta.get("author") or "unknown"
        else:
            extra.add(tid)
    lost = len(state.turns) < state.turns_saved  # the transcript was deleted or replaced: memory is all that is left
    if extra and lost and not state.turns:
        found.append(Finding("memory", f"The conversation file lost {state.turns_saved} turn(s); the conversation "
                             f"memory still holds {len(extra)} of them.", "put them back into the transcript",
                             lambda: _restore_transcript(project, {tid: records[tid] for tid in extra})))
    elif extra and lost:
        found.append(Finding("memory", f"The conversation file lost turns and new ones were numbered over them; "
                             f"the {len(extra)} lost turn(s) stay in the conversation memory, searchable by their "
                             "words, but cannot be put back in order.", "nothing", note=True))
    elif extra:
        found.append(Finding("memory", f"The conversation memory holds {len(extra)} turn(s) the transcript does not.",
                             "delete them", lambda: store.memory.delete_turns(extra)))
    if others:
        found.append(Finding("memory", f"{len(others)} turn(s) in the memory belong to another clone "
                             f"({', '.join(sorted(set(others.values())))}); they are not searched here.", "nothing",
                             note=True))
    return found


LAYERS = (_files, _vectors, _keywords, _memory)


def examine(project: Project) -> Report:
    findings: list[Finding] = []
    for layer in LAYERS:
        findings += layer(project)
    return Report(project.ws.slug, [f for f in findings if not f.note], totals=_totals(project),
                  notes=[f.problem for f in findings if f.note])


def repair(project: Project) -> Report:
    """Fix every layer in order, re-checking each after its fixes; then examine everything again. Holds the
    project's lease throughout, so no other clone deletes or rebuilds meanwhile."""
    repaired: list[str] = _before_repair(project)  # git conflicts, unreadable files: before the marker
    with project.ws.operations.marked("forge doctor --fix"), project.store.claims.lease("repairing"):
        for path in project.ws.operations.leftover_temp_files():
            path.unlink(missing_ok=True)
            repaired.append(f"Removed a leftover temporary file ({path.name}).")
        for layer in LAYERS:
            for _ in range(2):  # a second pass catches what the first one's fixes uncovered
                findings = [f for f in layer(project) if not f.note]
                if not findings:
                    break
                for finding in findings:
                    finding.fix()
                    repaired.append(f"{finding.problem} Fixed: {finding.repair}.")
                    log.info("doctor repaired %s: %s", project.ws.slug, repaired[-1])
    report = examine(project)
    report.repaired = repaired
    return report


def _before_repair(project: Project) -> list[str]:
    """What `repair` settles before it opens its operation: a git merge of the workspace's files (the layers
    read them), and a state.json Forge cannot read (moved aside, said so). A file that cannot be fixed
    stops the repair here, in one sentence, without leaving an operation marker behind."""
    done = project.ws.resolve_conflicts().lines
    try:
        project.ws.load_state()
    except ForgeError as exc:  # moved aside and a fresh session started: a repair to report, not a failure
        done.append(str(exc))
    project.ws.load_manifest()
    return done


# ---- repairs
def _reingest(project: Project, filename: str) -> None:
    upload = project.ws.uploads / filename
    result = ingest_file(project, filename, upload.read_bytes())
    if not result.ok:
        log.warning("doctor could not index %s: %s", filename, result.message)


def _drop_and_reindex_file(project: Project, filename: str) -> None:
    manifest = project.ws.load_manifest()
    entry = manifest.find(filename)
    if entry is not None:
        project.store.documents.delete_file(entry.file_id)
        reindex_file(project, entry)
        project.ws.save_manifest(manifest)


def _reconvert(project: Project, filename: str) -> None:
    converted = convert_upload(project, filename, (project.ws.uploads / filename).read_bytes())
    atomic_write_text(project.ws.converted_path(filename), converted.markdown)


def _remember(project: Project, turn_ids: set[str]) -> None:
    state = project.ws.load_state()
    if any(tid.isdigit() for tid in project.store.memory.turn_ids()):
        project.store.memory.adopt_numbered_turns(state.turns)  # memory from before turn ids: re-keyed, not re-embedded
    stored = project.store.memory.turn_ids() - set(turn_ids)
    s = project.services
    catch_up(project.store, s.embedder, s.llm, state, project.settings, stored=stored)
    project.ws.save_state(state)


def _restore_transcript(project: Project, records: dict[str, tuple[dict, str]]) -> None:
    """Rebuild a lost transcript from the conversation memory: each turn's words, summary, mode and probe, in
    turn order (the tool calls, sources and costs of those turns are not kept there, so they stay lost)."""
    turns = sorted((Turn(id=tid, number=meta["turn_number"], user=meta.get("user", ""),
                         assistant=meta.get("assistant", ""), summary=summary, indexed=True,
                         active_mode=meta.get("active_mode") or "mode_1", active_probe=meta.get("active_probe"))
                    for tid, (meta, summary) in records.items()), key=lambda t: t.number)
    ws = project.ws
    with ws.operations.marked("restore transcript"):
        for turn in turns:
            ws.transcript_file.append_turn(turn)
        state = ws.load_state()
        ws.save_state(state)  # its turn count now matches the transcript


def _index_missing(project: Project, filename: str) -> None:
    """Index a listed file the store lacks (nothing to delete first)."""
    manifest = project.ws.load_manifest()
    entry = manifest.find(filename)
    if entry is not None:
        reindex_file(project, entry)
        project.ws.save_manifest(manifest)


def _totals(project: Project) -> dict[str, int]:
    manifest = project.ws.load_manifest()
    return {
        "files": len(manifest.file_summaries),
        "indexed_files": sum(1 for f in manifest.file_summaries if f.indexed),
        "passages": len(project.store.keyword(DOCUMENTS)),
        "turns": project.ws.load_state().turn_count,
    }
