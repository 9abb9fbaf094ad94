"""One opened project serves several browser sessions at once (the app caches it): a turn remembered in one
tab while another tab searches must never pair an id with another record's metadata, lose a record, or fail."""

from __future__ import annotations

import itertools
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from pmforge.core.models import Turn
from pmforge.index.collections import CONVERSATIONS, DOCUMENTS, LeafRecord, ParentRecord
from pmforge.index.keyword import KeywordIndex, TurnIndex
from pmforge.index.retrieval import Query, find_sections, find_turns
from pmforge.turn.remember import remember

SLOTS = 40  # records replaced in turn, so every write moves rows around inside the index


@pytest.fixture
def frequent_thread_switches():
    """Switch threads every 10 µs instead of every 5 ms, so interleavings that are rare in use happen here."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    yield
    sys.setswitchinterval(before)


def _slot_text(slot: int, generation: int) -> str:
    return f"Printer note slot{slot} generation{generation}: the label printer jams on Saturdays."


def _run_together(writer, *readers) -> None:
    """Run `writer` beside `readers` (each called until the writer is done); re-raise the first failure."""
    done = threading.Event()

    def write():
        try:
            writer()
        finally:
            done.set()

    def read(check):
        check()
        while not done.is_set():
            check()

    with ThreadPoolExecutor(max_workers=1 + len(readers)) as pool:
        futures = [pool.submit(write)] + [pool.submit(read, r) for r in readers]
        for future in futures:
            future.result()


def test_keyword_index_reads_stay_consistent_while_another_thread_upserts(tmp_path, frequent_thread_switches):
    index = KeywordIndex(tmp_path, "documents")
    for slot in range(SLOTS):
        index.upsert([f"rec-{slot}"], [_slot_text(slot, 0)], [{"slot": slot, "generation": 0}])
    everyone = {f"rec-{slot}" for slot in range(SLOTS)}
    generations = 400
    ticks = itertools.count()

    def write():
        for generation in range(1, generations + 1):
            slot = generation % SLOTS
            index.upsert([f"rec-{slot}"], [_slot_text(slot, generation)], [{"slot": slot, "generation": generation}])

    def search():
        slot = next(ticks) % SLOTS
        hits = index.search(f"slot{slot}", 3)
        assert hits, f"slot{slot} vanished"
        best_id, _, best_meta = hits[0]
        assert best_id == f"rec-{slot}" and best_meta["slot"] == slot  # the row the matrix scored
        for record_id, _, meta in hits:
            assert record_id == f"rec-{meta['slot']}"
        for record_id, _, meta in index.search("slot7 printer", 3, allow=lambda m: m["slot"] != 7):
            assert meta["slot"] != 7 and record_id == f"rec-{meta['slot']}"  # the filter reads the same rows

    def count():
        assert len(index) == SLOTS
        assert index.ids() == everyone
        assert 0.0 < index.coverage("slot3 printer", 0) <= 1.0

    _run_together(write, search, search, count)
    assert index.ids() == everyone and len(index) == SLOTS  # no record lost to a torn reload
    assert KeywordIndex(tmp_path, "documents").search(f"generation{generations}", 1)[0][2]["generation"] == generations


def test_turn_index_reads_stay_consistent_while_another_thread_upserts(tmp_path, frequent_thread_switches):
    index = TurnIndex(tmp_path, "conversations")
    rounds = 1500
    index.upsert(["turn-1"], ["turn1 the pilot marker1"], [{"turn_number": 1}])

    def write():
        for n in range(2, rounds + 1):
            index.upsert([f"turn-{n}"], [f"turn{n} the pilot marker{n % SLOTS}"], [{"turn_number": n}])
            if n % 100 == 0:
                index.delete_where("turn_number", n - 1)
                index.upsert([f"turn-{n - 1}"], [f"turn{n - 1} the pilot marker{(n - 1) % SLOTS}"],
                             [{"turn_number": n - 1}])

    def search():
        for record_id, _, meta in index.search("pilot marker3", 10):
            assert record_id == f"turn-{meta['turn_number']}"
        assert index.ids() >= {"turn-1"}
        assert not index.stale

    _run_together(write, search, search)
    assert len(index) == rounds and len(index.ids()) == rounds


def _turn(n: int) -> Turn:
    return Turn(
        number=n,
        user=f"Turn {n}: the pilot marker{n} covers store{n % SLOTS} in Duluth.",
        assistant=f"Noted for turn {n}: marker{n} at store{n % SLOTS}. What shrink figure did they report?",
        summary=f"Turn {n} recorded marker{n} for store{n % SLOTS}.",
    )


def _file_record(project, slot: int, generation: int) -> LeafRecord:
    """One small file whose only section is replaced in place (a re-upload of the same file id)."""
    text = _slot_text(slot, generation)
    file_id = f"file-{slot}"
    leaf = LeafRecord(id=f"{file_id}:0", leaf_id=f"{file_id}:0", parent_id=f"{file_id}:p0", text=text,
                      start=0, end=len(text))
    parent = ParentRecord(id=f"{file_id}:p0", text=text, section=f"slot{slot}", start=0, end=len(text))
    vectors = project.services.embedder.embed_documents([text, text])
    project.store.documents.add_file(file_id, f"slot{slot}.md", [leaf], vectors[:1], [parent], vectors[1:])
    return leaf


def _reads_alongside_writes(read_once, reads: int, write_once) -> int:
    """Call `read_once(i)` `reads` times in one thread while another calls `write_once(i)` until the reads are
    done; re-raise the first failure of either. Returns how many writes ran."""
    reads_done, write_failed = threading.Event(), threading.Event()

    def write():
        writes = 0
        try:
            while not reads_done.is_set():
                write_once(writes)
                writes += 1
        except BaseException:
            write_failed.set()
            raise
        return writes

    def read():
        try:
            for i in range(reads):
                if write_failed.is_set():
                    return
                read_once(i)
        finally:
            reads_done.set()

    with ThreadPoolExecutor(max_workers=2) as pool:
        writer, reader = pool.submit(write), pool.submit(read)
        reader.result()
        return writer.result()


def test_one_project_searched_while_another_session_remembers_turns(project, frequent_thread_switches):
    """Two threads on one opened project, as two browser tabs: one runs 120 rounds of the searches a turn
    makes while the other remembers turns and re-indexes files the whole time."""
    store, embedder, settings = project.store, project.services.embedder, project.settings
    for slot in range(SLOTS):
        _file_record(project, slot, 0)
    # keyword record id -> turn number, filled before the turn is stored (ids by transcript id, or by number)
    number_of: dict[str, int] = {}
    # Queries embedded up front: the reads then wait on the store alone, never on the writer's embedding.
    turn_queries = [Query(f"marker{k} store{k}", embedder) for k in range(SLOTS)]
    file_queries = [Query(f"slot{k} label printer", embedder) for k in range(SLOTS)]
    for query in turn_queries + file_queries:
        query.vector

    def write(i: int) -> None:
        turn = _turn(i + 1)
        number_of[f"turn-{turn.id}"] = number_of[f"turn-{turn.number}"] = turn.number
        remember(store, embedder, turn)
        leaf = _file_record(project, i % SLOTS, i + 1)
        meta = {"file_id": f"file-{i % SLOTS}", "parent_id": leaf.parent_id, "start": leaf.start, "end": leaf.end}
        for _ in range(10):  # the same passage indexed again: its row moves inside the index, Chroma is unchanged
            store.keyword(DOCUMENTS).upsert([leaf.id], [leaf.text], [meta])

    def read(i: int) -> None:
        slot = i % SLOTS
        for turn in find_turns(store, turn_queries[slot], 4, "hybrid", settings):
            assert f"marker{turn.turn_number} " in turn.user  # the record belongs to the number it was found by
        for section in find_sections(store, file_queries[slot], 2000, "hybrid", settings):
            assert f"slot{section.file_id.split('-')[1]} " in section.text
        for _ in range(10):  # the cheap calls, many times: they meet the index's swaps most often
            for record_id, _, meta in store.keyword(CONVERSATIONS).search(f"marker{slot} store{slot}", 5):
                assert number_of[record_id] == meta["turn_number"]
            for record_id, _, meta in store.keyword(DOCUMENTS).search(f"slot{slot} printer", 5):
                assert record_id == f"{meta['file_id']}:0" and meta["parent_id"] == f"{meta['file_id']}:p0"
            for _ in range(50):
                assert len(store.keyword(DOCUMENTS)) == SLOTS

    writes = _reads_alongside_writes(read, 120, write)  # thread switches are forced often: 120 rounds meet many swaps
    assert writes > 1
    assert {number_of[i] for i in store.keyword(CONVERSATIONS).ids()} == set(range(1, writes + 1))
    assert store.keyword(DOCUMENTS).ids() == store.ids(DOCUMENTS)
