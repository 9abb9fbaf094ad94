"""`forge bench soak`: a session with file churn, run short. Checked for what it reports, never for a time."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from forge_cli import run_forge


def test_a_short_soak_reports_no_errors_a_consistent_project_and_the_files_each_window_had(isolated_env, monkeypatch):
    scratch = isolated_env / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))  # where the bench makes its throwaway projects
    done = run_forge(Path(isolated_env), "bench", "soak", "--turns", "12", "--ops", "6", "--json", env={})
    assert done.returncode == 0, done.stderr
    figures = json.loads(done.stdout)
    assert figures["turns"] == 12 and sum(figures["operations"].values()) == 6
    assert figures["errors"] == 0, figures["first_errors"]
    assert figures["doctor_consistent"], figures["doctor_problems"]
    for window in ("turn_latency_start", "turn_latency_end"):
        assert set(figures[window]) == {"p50_ms", "p95_ms"} and figures[window]["p50_ms"] > 0
    # Both windows are the whole of a 12-turn run, so they saw the same files on average.
    assert figures["files_start"] == figures["files_end"] > 0
    assert figures["final_files"] >= 0 and figures["max_phase_b_tokens"] > 0
    assert not list(scratch.glob("forge-*"))  # its scratch projects are gone
