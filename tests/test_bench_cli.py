"""`forge bench cli`: real `forge` processes in a throwaway folder, run short. Checked for what it reports and
that every turn succeeded, never for a time."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from forge_cli import run_forge


def test_two_cold_turns_report_their_times_the_help_and_the_heaviest_imports(isolated_env, monkeypatch):
    scratch = isolated_env / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))  # where the bench makes its throwaway projects
    done = run_forge(Path(isolated_env), "bench", "cli", "--turns", "2", "--json", env={})
    assert done.returncode == 0, done.stderr
    figures = json.loads(done.stdout)
    assert figures["turns"] == 2 and len(figures["each"]) == 2
    for turn in figures["each"]:
        assert turn["ok"], turn.get("error")
        assert turn["message"].strip() and turn["s"] > 0
    assert any(turn["message"].endswith("?") for turn in figures["each"])  # a question about the files
    assert set(figures["turn_s"]) == {"p50", "max"} and figures["turn_s"]["max"] >= figures["turn_s"]["p50"] > 0
    assert figures["help_s"] > 0 and set(figures["setup_s"]) == {"new", "ingest_two_files"}
    imports = figures["imports"]
    assert imports["total_s"] > imports["forge_own_s"] > 0
    assert 0 < len(imports["heaviest"]) <= 5 and all(set(p) == {"package", "s"} for p in imports["heaviest"])
    assert not list(scratch.glob("forge-*"))  # its scratch folder is gone
