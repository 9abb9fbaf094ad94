"""The catalogue as data: one Markdown format for the built-in probes and patterns and a project's own,
one loader, and a `Catalogue` value per project."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path, PurePosixPath
from typing import get_args

import pytest

from pmforge.core.models import SessionState, StakeholderRole
from pmforge.knowledge import MODES, Catalogue, builtin_catalogue, project_catalogue
from pmforge.knowledge.loader import BUILTIN_DIR, parse_pattern, parse_probe
from pmforge.understand import fields, understand

CATALOGUE = builtin_catalogue()
ROOT = Path(__file__).resolve().parents[1]

# The example in DESIGN's contract for a project's pattern files (`projects/<slug>/patterns/*.md`).
SEASONAL = """# Seasonal Staffing Blind Spot
Mode: mode_1
Triggers: holiday rota, seasonal staff, temp workers
Signals: The plan assumes the same staff all year.
Stay silent when: The PM has already planned for seasonal cover.
Surface: Seasonal staff turn over before they learn a new routine.
Question: Who runs this in December, and were they trained in October?
"""


def _write(folder: Path, name: str, text: str, mtime_ns: int) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(mtime_ns, mtime_ns))  # explicit stamps: no reliance on the clock's resolution
    return path


# --- the built-in catalogue's invariants -------------------------------------------------------------


def test_every_built_in_file_is_named_by_its_id_and_read_into_the_catalogue():
    files = {p.stem: p.parent.name for p in BUILTIN_DIR.glob("*/*.md")}
    assert files == {**{p.id: "probes" for p in CATALOGUE.probes}, **{p.id: "patterns" for p in CATALOGUE.patterns}}
    assert all(re.fullmatch(r"[a-z0-9]+(_[a-z0-9]+)*", stem) for stem in files)


def test_names_are_unique_across_probes_and_patterns():
    names = [re.sub(r"[^a-z0-9]+", "", p.name.lower()) for p in (*CATALOGUE.probes, *CATALOGUE.patterns)]
    assert len(names) == len(set(names))


@pytest.mark.parametrize("mode", MODES)
def test_each_mode_has_probes_numbered_once_and_patterns(mode):
    orders = [p.order for p in CATALOGUE.probes_for(mode)]
    assert orders and None not in orders and orders == sorted(set(orders))
    assert CATALOGUE.patterns_for(mode)
    assert all(p.order is not None for p in CATALOGUE.patterns_for(mode))


@pytest.mark.parametrize("probe", CATALOGUE.probes, ids=lambda p: p.id)
def test_every_probe_has_a_purpose_signs_questions_and_an_end(probe):
    assert probe.purpose and probe.satisfied_when and probe.look_for
    assert probe.questions and all(q.endswith("?") for q in probe.questions)


@pytest.mark.parametrize("pattern", CATALOGUE.patterns, ids=lambda p: p.id)
def test_every_pattern_has_lower_case_triggers_and_a_question(pattern):
    assert pattern.triggers and all(t == t.strip().lower() and t for t in pattern.triggers)
    assert pattern.signals and pattern.stay_silent_when and pattern.surface and pattern.question.endswith("?")


@pytest.mark.parametrize("probe", CATALOGUE.probes, ids=lambda p: p.id)
def test_every_probe_says_what_answers_it_in_words_the_offline_reader_files(probe):
    # The offline reader says a probe is answered when a sentence is filed under one of the fields its file
    # names, or names someone playing one of its parts: a probe nothing answers could never be satisfied
    # offline, and a name the reader never files is a typo.
    known = set(fields.LABELS) | {"metric_anti"} | set(get_args(StakeholderRole))
    assert probe.answered_by and set(probe.answered_by) <= known


def test_answered_by_is_read_from_a_probe_file_and_drives_the_offline_reader():
    text = BUILTIN_DIR.joinpath("probes", "why_now.md").read_text()
    assert parse_probe(text, "why_now").answered_by == ("why_now", "tried_before")
    # Without the line, the same message answers nothing: the probe's file is where the rule lives.
    bare = parse_probe(re.sub(r"(?m)^Answered by:.*$", "", text), "why_now")
    message = "Why now: the council fined us twice in March."
    assert "why_now" in [a.probe for a in understand(message, SessionState(), catalogue=CATALOGUE).probes]
    changed = Catalogue(probes=tuple(bare if p.id == "why_now" else p for p in CATALOGUE.probes),
                        patterns=CATALOGUE.patterns)
    assert "why_now" not in [a.probe for a in understand(message, SessionState(), catalogue=changed).probes]


def test_the_built_in_part_is_read_once_per_process():
    assert builtin_catalogue() is CATALOGUE


def test_the_package_data_glob_ships_every_catalogue_file():
    globs = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["pmforge"]
    package = BUILTIN_DIR.parents[1]
    shipped = [p for p in BUILTIN_DIR.rglob("*") if p.is_file()]
    assert shipped and all(any(PurePosixPath(p.relative_to(package).as_posix()).match(g) for g in globs)
                           for p in shipped)


def test_knowledge_stands_alone_without_the_turn_the_tools_or_the_llms():
    code = ("import json, sys, pmforge.knowledge, pmforge.knowledge.loader; "
            "print(json.dumps(sorted(m for m in sys.modules if m.startswith('pmforge.'))))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    modules = json.loads(loaded)
    assert modules and all(m.startswith(("pmforge.knowledge", "pmforge.core")) for m in modules), modules


# --- one format for built-ins and a project's own --------------------------------------------------------


def test_a_project_pattern_file_in_the_documented_format_loads_as_before():
    pattern = parse_pattern(SEASONAL, "retail.seasonal_staffing", min_trigger_chars=4)
    assert pattern.model_dump() == {
        "id": "retail.seasonal_staffing", "name": "Seasonal Staffing Blind Spot", "mode": "mode_1", "order": None,
        "triggers": ("holiday rota", "seasonal staff", "temp workers"),
        "signals": "The plan assumes the same staff all year.",
        "stay_silent_when": "The PM has already planned for seasonal cover.",
        "surface": "Seasonal staff turn over before they learn a new routine.",
        "question": "Who runs this in December, and were they trained in October?",
    }


def test_the_same_fields_read_alike_as_a_line_as_bullets_or_below_the_label():
    bullets = SEASONAL.replace("Triggers: holiday rota, seasonal staff, temp workers",
                               "Triggers:\n- Holiday rota\n* seasonal staff\n1. temp workers, agency")
    below = SEASONAL.replace("Signals: The plan", "Signals:\n\nThe plan").replace("Mode: mode_1", "Mode: Mode 1")
    line = parse_pattern(SEASONAL, "x")
    assert parse_pattern(bullets, "x").triggers == (*line.triggers[:2], "temp workers, agency")
    assert parse_pattern(below, "x") == line


def test_a_probe_file_reads_like_a_pattern_file():
    probe = parse_probe("# Night Shift Reality\nMode: mode_2\nOrder: 8\nPurpose: See who runs it at 3 am.\n"
                        "A note the loader ignores.\nListen for:\n- one supervisor for three wards\n"
                        "Questions:\n1. Who is on shift at 3 am?\n2. What do they do when it fails?\n"
                        "Satisfied when: The night owner is named.\n", "night_shift")
    assert (probe.mode, probe.order, probe.look_for) == ("mode_2", 8, ("one supervisor for three wards",))
    assert probe.questions == ("Who is on shift at 3 am?", "What do they do when it fails?")


@pytest.mark.parametrize("text, problem", [
    ("# Untitled\n", "needs 'Triggers:', 'Signals:', 'Stay silent when:', 'Surface:', 'Question:'"),
    (SEASONAL.replace("# Seasonal Staffing Blind Spot\n", ""), "needs a '# Name' title"),
    (SEASONAL.replace("Mode: mode_1", "Mode: mode_3"), "Mode must be mode_1 or mode_2, not 'mode_3'"),
    (SEASONAL.replace("Mode: mode_1", "Mode: mode_1\nOrder: first"), "Order must be a whole number, not 'first'"),
    (SEASONAL.replace("holiday rota, seasonal staff, temp workers", "app, ux"),
     "needs at least one trigger phrase of 4+ characters"),
    (SEASONAL.replace("Signals: The plan assumes the same staff all year.", "Signals:\n- one\n- two"),
     "has a list under 'Signals:'; write it on one line"),
    (SEASONAL.replace("Question: Who", "Question: " + "Who and why " * 60 + "Who"),
     "is over the 200-token budget for a pattern; shorten it"),
])
def test_a_broken_project_file_is_skipped_with_a_sentence_that_says_why(tmp_path, text, problem):
    _write(tmp_path / "patterns", "broken.md", text, 10**18)
    _write(tmp_path / "patterns", "seasonal.md", SEASONAL, 10**18)
    catalogue = project_catalogue("retail", tmp_path)
    assert catalogue.problems == (f"patterns/broken.md {problem}.",)
    assert [p.id for p in catalogue.patterns_for("mode_1")][-1] == "retail.seasonal"


def test_of_two_files_that_would_share_an_id_the_first_is_kept(tmp_path):
    _write(tmp_path / "patterns", "seasonal-staffing.md", SEASONAL, 10**18)
    _write(tmp_path / "patterns", "seasonal_staffing.md", SEASONAL.replace("# Seasonal", "# Winter"), 10**18)
    catalogue = project_catalogue("retail", tmp_path)
    assert catalogue.pattern_name("retail.seasonal_staffing") == "Seasonal Staffing Blind Spot"
    assert catalogue.problems == ("patterns/seasonal_staffing.md has the same id as another file "
                                  "(retail.seasonal_staffing).",)


def test_a_project_pattern_follows_the_built_ins_unless_it_is_numbered(tmp_path):
    _write(tmp_path / "patterns", "b-late.md", SEASONAL.replace("# Seasonal", "# Late"), 10**18)
    _write(tmp_path / "patterns", "a-first.md", SEASONAL.replace("# Seasonal", "# First")
           .replace("Mode: mode_1", "Mode: mode_1\nOrder: 1"), 10**18)
    listed = [p.id for p in project_catalogue("retail", tmp_path).patterns_for("mode_1")]
    builtins = [p.id for p in CATALOGUE.patterns_for("mode_1")]
    assert listed == [builtins[0], "retail.a_first", *builtins[1:], "retail.b_late"]


# --- a project's part is read again when its files change, and only then ----------------------------------


def test_a_projects_patterns_are_read_again_when_a_file_changes_and_only_then(tmp_path):
    folder = tmp_path / "patterns"
    path = _write(folder, "seasonal.md", SEASONAL, 10**18)
    first = project_catalogue("retail", tmp_path)
    assert project_catalogue("retail", tmp_path) is first  # unchanged files: the same value, not re-read

    _write(folder, "seasonal.md", SEASONAL.replace("Who runs this", "Who staffs this"), 10**18 + 1)
    edited = project_catalogue("retail", tmp_path)
    assert edited is not first
    assert edited.find_pattern("retail.seasonal").question.startswith("Who staffs this")
    assert first.find_pattern("retail.seasonal").question.startswith("Who runs this")  # a value: never changed

    path.unlink()
    assert project_catalogue("retail", tmp_path).find_pattern("retail.seasonal") is None


def test_same_file_names_in_two_projects_make_two_catalogues(tmp_path):
    for slug in ("alpha", "beta"):
        _write(tmp_path / slug / "patterns", "seasonal.md", SEASONAL, 10**18)
    alpha, beta = project_catalogue("alpha", tmp_path / "alpha"), project_catalogue("beta", tmp_path / "beta")
    assert alpha.find_pattern("Seasonal Staffing Blind Spot").id == "alpha.seasonal"
    assert beta.find_pattern("Seasonal Staffing Blind Spot").id == "beta.seasonal"
    assert beta.find_pattern("alpha.seasonal") is None
