"""The discovery knowledge: what must hold however the catalogue and the instructions are edited — ids, order,
budgets, lookups, and instructions that name exactly the tools and values Forge has. Nothing here pins a count,
an id's place or a wording: adding, reordering or rewording a probe breaks no test unless it breaks Forge."""

from __future__ import annotations

import re

import pytest

from pmforge.core.models import Manifest, RetrievedSection, SessionState
from pmforge.core.settings import get_settings
from pmforge.core.tokens import count_tokens
from pmforge.interviewer.rules import RouteInputs, rule_route
from pmforge.knowledge import MODES, builtin_catalogue
from pmforge.knowledge.loader import PATTERN_BUDGET, PROBE_BUDGET
from pmforge.prompt.wording import CORE_INSTRUCTIONS, MODE_CORE
from pmforge.tools import TOOLS
from pmforge.tools.assumptions import RegisterAssumption

CATALOGUE = builtin_catalogue()
PROBES = {p.id: p for p in CATALOGUE.probes}
PATTERNS = {p.id: p for p in CATALOGUE.patterns}
SNAKE_CASE = re.compile(r"[a-z0-9]+(_[a-z0-9]+)*")

# Ceilings of the always-on text (every Phase B request carries the core and its mode's flow; every routing
# request carries the mode's catalogue listing): room for the turn's context, whatever gets added.
CORE_MAX_TOKENS, MODE_CORE_MAX_TOKENS, LISTING_MAX_TOKENS = 800, 250, 450


def _schema_words(node) -> set[str]:
    """Every property name and every enum value of a tool's JSON schema."""
    found: set[str] = set()
    if isinstance(node, dict):
        found |= set(node.get("properties", {}))
        found |= {v for v in node.get("enum", []) if isinstance(v, str)}
        for value in node.values():
            found |= _schema_words(value)
    elif isinstance(node, list):
        for value in node:
            found |= _schema_words(value)
    return found


# --- structure ---------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_each_modes_probes_are_numbered_in_interview_order(mode):
    ids = CATALOGUE.order(mode)
    probes = CATALOGUE.probes_for(mode)
    assert ids and [p.id for p in probes] == list(ids)
    assert [p.order for p in probes] == list(range(1, len(ids) + 1))  # 1, 2, 3…: no gap, no tie
    assert all(p.mode == mode for p in probes)


def test_every_probe_is_in_exactly_one_modes_order():
    ordered = [pid for mode in MODES for pid in CATALOGUE.order(mode)]
    assert sorted(ordered) == sorted(PROBES)


def test_ids_unique_and_snake_case():
    ids = [p.id for p in CATALOGUE.probes] + [p.id for p in CATALOGUE.patterns]
    assert len(ids) == len(set(ids))
    assert all(SNAKE_CASE.fullmatch(i) for i in ids), [i for i in ids if not SNAKE_CASE.fullmatch(i)]


@pytest.mark.parametrize("probe", PROBES.values(), ids=lambda p: p.id)
def test_a_probe_asks_distinct_complete_questions(probe):
    # The offline interviewer asks these verbatim, so each must be a complete question, and none twice.
    assert probe.questions and all(q.strip().endswith("?") for q in probe.questions)
    assert len(set(probe.questions)) == len(probe.questions)
    assert len(set(probe.look_for)) == len(probe.look_for)


@pytest.mark.parametrize("pattern", PATTERNS.values(), ids=lambda p: p.id)
def test_each_trigger_fires_its_pattern_through_the_rule_router(pattern):
    """Triggers are matched as lower-case substrings of the PM's message (interviewer/rules.py): one with a
    capital or a stray space would never fire."""
    assert all(t == t.strip().lower() and t for t in pattern.triggers)
    assert len(set(pattern.triggers)) == len(pattern.triggers)
    state = SessionState(active_mode=pattern.mode)
    for trigger in pattern.triggers:
        message = f"Our notes say {trigger.upper()}, and nobody has looked at it since."
        decision = rule_route(RouteInputs(state, Manifest(), message, 1, CATALOGUE), get_settings())
        assert pattern.id in decision.patterns, (trigger, decision.patterns)


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
    assert count_tokens(CORE_INSTRUCTIONS) <= CORE_MAX_TOKENS


@pytest.mark.parametrize("mode", MODES)
def test_mode_core_budget(mode):
    assert count_tokens(MODE_CORE[mode]) <= MODE_CORE_MAX_TOKENS


@pytest.mark.parametrize("probe", PROBES.values(), ids=lambda p: p.id)
def test_a_rendered_probe_keeps_every_field_within_its_budget(probe):
    text = probe.render()
    for part in (probe.name, probe.purpose, probe.satisfied_when, *probe.look_for, *probe.questions):
        assert part in text
    assert count_tokens(text) <= PROBE_BUDGET


@pytest.mark.parametrize("pattern", PATTERNS.values(), ids=lambda p: p.id)
def test_a_rendered_pattern_keeps_every_field_within_its_budget(pattern):
    text = pattern.render()
    for part in (pattern.name, pattern.signals, pattern.stay_silent_when, pattern.surface, pattern.question):
        assert part in text
    assert count_tokens(text) <= PATTERN_BUDGET


@pytest.mark.parametrize("mode", MODES)
def test_the_routing_listing_names_this_modes_items_and_no_other(mode):
    text = CATALOGUE.text(mode)
    assert count_tokens(text) <= LISTING_MAX_TOKENS
    listed = set(re.findall(r"^(\S+) — ", text, flags=re.MULTILINE))
    assert listed == set(CATALOGUE.order(mode)) | {p.id for p in CATALOGUE.patterns_for(mode)}
    # Purposes lead with a short clause, so the gist is never cut mid-phrase.
    assert "…" not in text


# --- lookups -------------------------------------------------------------------


def _spellings(name: str) -> list[str]:
    """How a router or a PM may write a name: case, dashes and spacing vary."""
    plain = name.replace("–", "-").replace("—", "-")
    return [name, name.lower(), name.upper(), plain, plain.replace("-", " - "), f"  {name.lower()} ",
            plain.replace(" ", "_").lower()]


@pytest.mark.parametrize("probe", PROBES.values(), ids=lambda p: p.id)
def test_a_probe_is_found_by_its_id_and_any_spelling_of_its_name(probe):
    assert CATALOGUE.find_probe(probe.id) is probe
    for spelling in _spellings(probe.name):
        assert CATALOGUE.find_probe(spelling) is probe, spelling
    assert CATALOGUE.find_pattern(probe.name) is None  # a probe is never taken for a pattern


@pytest.mark.parametrize("pattern", PATTERNS.values(), ids=lambda p: p.id)
def test_a_pattern_is_found_by_its_id_and_any_spelling_of_its_name(pattern):
    assert CATALOGUE.find_pattern(pattern.id) is pattern
    for spelling in _spellings(pattern.name):
        assert CATALOGUE.find_pattern(spelling) is pattern, spelling
    assert CATALOGUE.find_probe(pattern.name) is None


def test_find_unknown_returns_none():
    for find in (CATALOGUE.find_probe, CATALOGUE.find_pattern):
        assert find("") is None and find(None) is None and find("nonexistent item") is None


# --- core instructions ----------------------------------------------------------


def test_core_names_all_tools():
    assert [tool for tool in TOOLS if tool not in CORE_INSTRUCTIONS] == []


def test_every_identifier_in_the_core_is_a_tool_or_one_of_its_arguments_or_values():
    # A renamed or removed tool, argument or value would leave the model calling something that is not there.
    named = set(re.findall(r"\b[a-z]+(?:_[a-z]+)+\b", CORE_INSTRUCTIONS))
    known = set(TOOLS) | {word for tool in TOOLS.values() for word in _schema_words(tool.spec().input_schema)}
    assert named <= known, named - known


def test_the_core_lists_every_value_register_assumption_accepts():
    properties = RegisterAssumption.model_json_schema()["properties"]
    for field in ("type", "impact", "confidence"):
        values = _schema_words(properties[field])
        assert values and [v for v in values if v not in CORE_INSTRUCTIONS] == [], field


def test_the_core_asks_for_the_formats_forge_reads_back():
    # Citations: what the reply is told to write is what Forge links to the passage.
    cite = RetrievedSection(id="p", file_id="f", filename="file", section="section", start=0, end=1, text="",
                            score=1.0).citation
    assert cite in CORE_INSTRUCTIONS
    # Numbered questions: the app's question picker and the offline interviewer use "Question N:".
    assert "Question 1:" in CORE_INSTRUCTIONS and "Question 2:" in CORE_INSTRUCTIONS


def test_each_mode_has_its_own_flow():
    assert set(MODE_CORE) == set(MODES)
    assert len({MODE_CORE[m] for m in MODES}) == len(MODES) and all(MODE_CORE[m].strip() for m in MODES)
