"""The catalogue as data: the Markdown files hold exactly what the Python literals held."""

from __future__ import annotations

import pytest

from pmforge.knowledge import mode1, mode2
from pmforge.knowledge.loader import builtin_catalogue

LITERAL_PROBES = [p for m in (mode1, mode2) for p in m.PROBES]
LITERAL_PATTERNS = [p for m in (mode1, mode2) for p in m.PATTERNS]


@pytest.mark.parametrize("literal", LITERAL_PROBES, ids=lambda p: p.id)
def test_each_probe_file_holds_the_literal_field_by_field(literal):
    loaded = builtin_catalogue().find_probe(literal.id)
    assert loaded is not None and loaded.id == literal.id
    for field in ("name", "mode", "order", "purpose", "look_for", "questions", "satisfied_when"):
        assert getattr(loaded, field) == getattr(literal, field), field
    assert loaded.render() == literal.render()


@pytest.mark.parametrize("literal", LITERAL_PATTERNS, ids=lambda p: p.id)
def test_each_pattern_file_holds_the_literal_field_by_field(literal):
    loaded = builtin_catalogue().find_pattern(literal.id)
    assert loaded is not None and loaded.id == literal.id
    for field in ("name", "mode", "triggers", "signals", "stay_silent_when", "surface", "question"):
        assert getattr(loaded, field) == getattr(literal, field), field
    assert loaded.render() == literal.render()


@pytest.mark.parametrize("mode", ["mode_1", "mode_2"])
def test_the_files_keep_the_literals_order_and_nothing_more(mode):
    catalogue = builtin_catalogue()
    assert [p.id for p in catalogue.probes_for(mode)] == [p.id for p in LITERAL_PROBES if p.mode == mode]
    assert [p.id for p in catalogue.patterns_for(mode)] == [p.id for p in LITERAL_PATTERNS if p.mode == mode]
    assert len(catalogue.probes) == len(LITERAL_PROBES) and len(catalogue.patterns) == len(LITERAL_PATTERNS)
    from pmforge.knowledge import catalogue_text
    assert catalogue.text(mode) == catalogue_text(mode)
