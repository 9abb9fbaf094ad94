"""The house-keeping figures of scripts/house-check: each concept in one home, counts that may only fall."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_tools_splitters_and_the_request_size_formula_each_live_in_one_place_and_requests_are_typed():
    run = subprocess.run([sys.executable, str(ROOT / "scripts" / "house-check"), "--json"],
                         capture_output=True, text=True, timeout=120)
    figures = json.loads(run.stdout)
    assert run.returncode == 0, figures["over"]
    assert figures["tool-name literals outside tools/"]["count"] == 0
    assert [w.split(":")[0] for w in figures["sentence splitters"]["where"]] == ["src/pmforge/core/sentences.py"]
    assert [w.split(":")[0] for w in figures["request-size formulas"]["where"]] == ["src/pmforge/llm/base.py"]
    assert figures["Any in llm/ request types"]["count"] == 0
    assert figures["message dicts outside llm/"]["count"] == 0
    assert figures["functions or classes in __init__ files"]["count"] == 0
    assert figures["classes over 25 public methods"]["count"] == 0
