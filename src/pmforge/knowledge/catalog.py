"""Probe and pattern types, the combined registry, and lookup helpers."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, TypeVar

Mode = Literal["mode_1", "mode_2"]


@dataclass(frozen=True)
class Probe:
    """A line of inquiry the interviewer works through, in a fixed order per mode."""

    id: str
    name: str
    mode: Mode
    order: int
    purpose: str
    look_for: tuple[str, ...]
    questions: tuple[str, ...]
    satisfied_when: str

    def render(self) -> str:
        questions = "\n".join(f"- {q}" for q in self.questions)
        return (
            f"### Probe: {self.name}\n"
            f"Purpose: {self.purpose}\n"
            f"Listen for: {'; '.join(self.look_for)}\n"
            f"Questions to draw on:\n{questions}\n"
            f"Satisfied when: {self.satisfied_when}"
        )


@dataclass(frozen=True)
class Pattern:
    """A recurring failure mode that is surfaced only when its signals show up."""

    id: str
    name: str
    mode: Mode
    triggers: tuple[str, ...]
    signals: str
    stay_silent_when: str
    surface: str
    question: str

    def render(self) -> str:
        return (
            f"### Pattern: {self.name}\n"
            f"Signals: {self.signals}\n"
            f"Stay silent when: {self.stay_silent_when}\n"
            f"Surface: {self.surface}\n"
            f"Ask: {self.question}"
        )


def _key(text: str) -> str:
    # Router output and user typing vary in case, dashes (– — -) and spacing; compare on letters only.
    return re.sub(r"[^a-z0-9]+", "", text.lower())


_T = TypeVar("_T", Probe, Pattern)


def _index(items: dict[str, _T]) -> dict[str, _T]:
    index: dict[str, _T] = {}
    for item in items.values():
        index[_key(item.id)] = item
        index[_key(item.name)] = item
    return index


def _build() -> tuple[dict[str, Probe], dict[str, Pattern], dict[Mode, tuple[str, ...]]]:
    # Imported here so mode modules can import the dataclasses from this module without a cycle.
    from pmforge.knowledge import mode1, mode2

    probes: dict[str, Probe] = {}
    patterns: dict[str, Pattern] = {}
    for module in (mode1, mode2):
        for p in module.PROBES:
            if p.id in probes:
                raise ValueError(f"duplicate probe id: {p.id}")
            probes[p.id] = p
        for p in module.PATTERNS:
            if p.id in patterns or p.id in probes:
                raise ValueError(f"duplicate pattern id: {p.id}")
            patterns[p.id] = p
    order = {
        mode: tuple(p.id for p in sorted((p for p in probes.values() if p.mode == mode), key=lambda p: p.order))
        for mode in ("mode_1", "mode_2")
    }
    return probes, patterns, order


PROBES, PATTERNS, MODE_ORDER = _build()
_PROBE_INDEX = _index(PROBES)
_PATTERN_INDEX = _index(PATTERNS)


# Patterns a project adds in projects/<slug>/patterns/*.md, by project slug (ids are namespaced by slug,
# so several projects open in one process never see each other's).
_PROJECT_PATTERNS: dict[str, list[Pattern]] = {}


def set_project_patterns(project: str, patterns: list[Pattern]) -> None:
    _PROJECT_PATTERNS[project] = list(patterns)


def probes_for(mode: Mode) -> list[Probe]:
    return [PROBES[pid] for pid in MODE_ORDER[mode]]


def patterns_for(mode: Mode, project: str | None = None) -> list[Pattern]:
    extra = _PROJECT_PATTERNS.get(project, []) if project else []
    return [p for p in [*PATTERNS.values(), *extra] if p.mode == mode]


def find_probe(name_or_id: str) -> Probe | None:
    return PROBES.get(name_or_id) or _PROBE_INDEX.get(_key(name_or_id or ""))


def find_pattern(name_or_id: str, project: str | None = None) -> Pattern | None:
    """A built-in pattern by id or name, or `project`'s own. Without a project (showing what an earlier turn
    recorded), a project's pattern only by its exact namespaced id: the router and the tools of one project
    never accept another project's pattern, even one with the same name, when one app serves several."""
    found = PATTERNS.get(name_or_id) or _PATTERN_INDEX.get(_key(name_or_id or ""))
    if found is not None:
        return found
    if project is not None:
        wanted = _key(name_or_id or "")
        return next((p for p in _PROJECT_PATTERNS.get(project, []) if wanted in (_key(p.id), _key(p.name))), None)
    return next((p for extra in _PROJECT_PATTERNS.values() for p in extra if p.id == name_or_id), None)


def _gist(text: str, words: int = 8) -> str:
    """The lead clause of a purpose, capped at `words` words.

    The routing model only needs a hint; the full purpose reaches the prompt once a probe is chosen.
    Purposes are written so their lead clause (before ; : ? ( or a dash) is already short.
    """
    lead = re.split(r"[;:?(.]| — ", text, maxsplit=1)[0].strip()
    parts = lead.split()
    return " ".join(parts[:words]) + ("…" if len(parts) > words else "")


def catalogue_text(mode: Mode, project: str | None = None) -> str:
    lines = ["Probes (in order):"]
    lines += [f"{p.id} — {p.name}: {_gist(p.purpose)}" for p in probes_for(mode)]
    lines.append("Patterns:")
    lines += [f"{p.id} — {p.name}" for p in patterns_for(mode, project)]
    return "\n".join(lines)
