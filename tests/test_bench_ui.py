"""`forge bench ui`: reply latency measured in a real Chromium driving the real `forge ui`, offline.

The browser run is marked like tests/test_browser.py (`-m browser`, skipped without Playwright or
Chromium). Figures are checked for shape only, never against a time.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from forge_bench.bench import ui
from forge_bench.bench.browser import missing_browser

FORGE = Path(sys.executable).with_name("forge")
BENCH_TIMEOUT_S = 600  # a hung browser must not hang the suite; not a figure under test


def _forge(*args: str, tmp_path: Path, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(FORGE), *args], capture_output=True, text=True, timeout=BENCH_TIMEOUT_S, cwd=tmp_path,
        env={**os.environ, "TMPDIR": str(tmp_path), **env},  # the bench's scratch folder lands in tmp_path
    )


@pytest.fixture
def short_tmp():
    """A scratch folder with a short path: Chromium puts its sockets under TMPDIR, and a Unix socket path
    must stay under ~108 bytes, which pytest-xdist's nested temp folders exceed."""
    folder = Path(tempfile.mkdtemp(prefix="fbu-", dir="/tmp"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.browser
@pytest.mark.skipif(missing_browser() is not None, reason=missing_browser() or "")
def test_bench_ui_reports_latency_figures_as_json(short_tmp):
    tmp_path = short_tmp
    result = _forge("bench", "ui", "--turns", "2", "--json", tmp_path=tmp_path)
    assert result.returncode == 0, result.stderr
    figures = json.loads(result.stdout)

    assert figures["turns"] == 2
    assert figures["cpus"] >= 1
    assert figures["viewport"] == "1400x900"
    assert figures["page_load_s"] > 0 and figures["server_start_s"] > 0
    assert figures["targets"] == {"first_words_s": 1.0, "filler_complete_s": 1.5}
    for kind in ("filler", "content"):
        assert figures[kind]["turns"] == 1
        for figure in ("first_words_s", "complete_s"):
            assert set(figures[kind][figure]) == {"median", "max"}
            assert figures[kind][figure]["median"] > 0
    assert [t["kind"] for t in figures["per_turn"]] == ["content", "filler"]
    for turn in figures["per_turn"]:
        # A reply is complete only once its first words have shown.
        assert 0 < turn["first_words_s"] <= turn["complete_s"]
    # The throwaway projects folder is gone, and nothing was written to the test's own projects folder.
    assert not list(tmp_path.glob("forge-bench-ui-*"))
    assert not (tmp_path / "projects").exists()


def test_bench_ui_without_chromium_says_so_in_one_sentence(tmp_path):
    missing = tmp_path / "no-chromium"
    result = _forge("bench", "ui", "--turns", "1", tmp_path=tmp_path, FORGE_CHROMIUM=str(missing))
    assert result.returncode == 1
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr  # a sentence, not a traceback
    assert str(missing) in lines[0] or "playwright" in lines[0]  # whichever of the two is missing here


def test_turns_alternate_content_questions_and_filler():
    plan = ui.turn_messages(6)
    assert [kind for kind, _ in plan] == ["content", "filler"] * 3
    assert {message for kind, message in plan if kind == "filler"} <= set(ui.FILLERS)
    assert plan[0] == ("content", "How many stores are in the pilot?")


def _state(**changes) -> dict:
    state = {"enter": 1000.0, "firstWords": 1200.0, "textAt": 1800.0, "runAt": 1900.0, "inputAt": None,
             "running": False, "editable": True, "hasText": True, "now": 5000.0}
    return {**state, **changes}


def test_a_turn_is_complete_at_the_last_change_once_the_page_is_quiet():
    assert ui.waiting_for(_state()) is None
    timing = ui.timing(1, "filler", "ok", _state())
    assert (timing.first_words_s, timing.complete_s) == (0.2, 0.9)  # the run ended after the text settled
    assert ui.waiting_for(_state(firstWords=None, hasText=False)) == "the reply's first words"
    assert ui.waiting_for(_state(running=True)) == "the script run to end"
    assert ui.waiting_for(_state(editable=False)) == "the chat input to take a message again"
    assert ui.waiting_for(_state(now=2500.0)) == "the reply to stop changing"
    assert ui.timing(1, "filler", "ok", _state(inputAt=2100.0)).complete_s == 1.1  # the input came back last


def test_the_table_names_both_kinds_and_the_targets():
    timings = [ui.TurnTiming(turn=1, kind="content", message="q", first_words_s=0.4, complete_s=2.0),
               ui.TurnTiming(turn=2, kind="filler", message="ok", first_words_s=0.2, complete_s=1.0),
               ui.TurnTiming(turn=4, kind="filler", message="go on", first_words_s=0.6, complete_s=1.4)]
    summary = ui.summarize(timings)
    assert summary["filler"] == {"turns": 2, "first_words_s": {"median": 0.4, "max": 0.6},
                                 "complete_s": {"median": 1.2, "max": 1.4}}
    figures = {"turns": 3, "cpus": 2, "viewport": "1400x900", "page_load_s": 3.2, "server_start_s": 0.8,
               **summary, "targets": {"first_words_s": 1.0, "filler_complete_s": 1.5}}
    table = ui.format_table(figures)
    assert "filler" in table and "content" in table and "2 CPUs" in table
    assert "0.40 s / 0.60 s" in table and "1.20 s / 1.40 s" in table
    assert "first words ≤ 1.0 s" in table and "filler complete ≤ 1.5 s" in table
