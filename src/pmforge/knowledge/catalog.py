"""Probes and patterns as values, and the `Catalogue` one project works with: lookups by id or name, each
mode's probe order, and the compact listing Phase A routes from. Reading them from their Markdown files is
`loader`'s job; this module reads no files and holds no state."""

from __future__ import annotations

import re
from typing import Literal, Sequence, TypeVar

from pydantic import BaseModel, ConfigDict, PrivateAttr

Mode = Literal["mode_1", "mode_2"]
MODES: tuple[Mode, ...] = ("mode_1", "mode_2")


class Probe(BaseModel):
    """A line of inquiry the interviewer works through, in a fixed order per mode."""

    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    mode: Mode
    order: int | None = None  # place in the mode's interview; unnumbered ones come last
    purpose: str
    look_for: tuple[str, ...]
    questions: tuple[str, ...]
    satisfied_when: str
    # What answers it, as Forge's offline understanding files a message: the fields a sentence is filed under
    # (`why_now`, `metric_lagging`) and the part a person named plays (`execution_dependency`). Never rendered
    # into the prompt (Claude judges from `satisfied_when`).
    answered_by: tuple[str, ...] = ()

    def render(self) -> str:
        questions = "\n".join(f"- {q}" for q in self.questions)
        return (
            f"### Probe: {self.name}\n"
            f"Purpose: {self.purpose}\n"
            f"Listen for: {'; '.join(self.look_for)}\n"
            f"Questions to draw on:\n{questions}\n"
            f"Satisfied when: {self.satisfied_when}"
        )


class Pattern(BaseModel):
    """A recurring failure mode that is surfaced only when its signals show up."""

    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    mode: Mode
    order: int | None = None  # place in the mode's listing (of several that fire, the first two are taken)
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


def _in_order(items: Sequence[_T], mode: Mode) -> tuple[_T, ...]:
    # Stable: items without an order keep the sequence they were given in (built-ins first, then by file name).
    mine = [item for item in items if item.mode == mode]
    return tuple(sorted(mine, key=lambda item: (item.order is None, item.order or 0)))


def _index(items: Sequence[_T]) -> dict[str, _T]:
    index: dict[str, _T] = {}
    for item in items:  # the first item to claim a key keeps it: built-ins before a project's own
        index.setdefault(_key(item.id), item)
        index.setdefault(_key(item.name), item)
    return index


def _gist(text: str, words: int = 8) -> str:
    """The lead clause of a purpose, capped at `words` words.

    The routing model only needs a hint; the full purpose reaches the prompt once a probe is chosen.
    Purposes are written so their lead clause (before ; : ? ( or a dash) is already short.
    """
    lead = re.split(r"[;:?(.]| — ", text, maxsplit=1)[0].strip()
    parts = lead.split()
    return " ".join(parts[:words]) + ("…" if len(parts) > words else "")


class Catalogue(BaseModel):
    """Every probe and pattern one project works with: the built-ins, then the project's own patterns.

    A value: built per turn (see `loader.project_catalogue`) and handed to whoever needs it, so the router
    and the tools of one project never see another project's patterns.
    """

    model_config = ConfigDict(frozen=True)

    probes: tuple[Probe, ...]
    patterns: tuple[Pattern, ...]
    problems: tuple[str, ...] = ()  # one sentence per project file that was skipped

    _probe_ids: dict[str, Probe] = PrivateAttr(default_factory=dict)
    _pattern_ids: dict[str, Pattern] = PrivateAttr(default_factory=dict)
    _probe_keys: dict[str, Probe] = PrivateAttr(default_factory=dict)
    _pattern_keys: dict[str, Pattern] = PrivateAttr(default_factory=dict)
    _order: dict[str, tuple[str, ...]] = PrivateAttr(default_factory=dict)

    def model_post_init(self, _context: object) -> None:
        ids = [p.id for p in self.probes] + [p.id for p in self.patterns]
        repeated = sorted({i for i in ids if ids.count(i) > 1})
        if repeated:
            raise ValueError(f"duplicate probe or pattern id: {', '.join(repeated)}")
        self._probe_ids = {p.id: p for p in self.probes}
        self._pattern_ids = {p.id: p for p in self.patterns}
        self._probe_keys = _index(self.probes)
        self._pattern_keys = _index(self.patterns)
        self._order = {mode: tuple(p.id for p in _in_order(self.probes, mode)) for mode in MODES}

    def with_patterns(self, patterns: Sequence[Pattern], problems: Sequence[str] = ()) -> "Catalogue":
        """This catalogue plus a project's own patterns (after the built-ins)."""
        return Catalogue(probes=self.probes, patterns=(*self.patterns, *patterns),
                         problems=(*self.problems, *problems))

    def order(self, mode: Mode) -> tuple[str, ...]:
        """The ids of the mode's probes, in interview order."""
        return self._order[mode]

    def probes_for(self, mode: Mode) -> list[Probe]:
        return [self._probe_ids[pid] for pid in self._order[mode]]

    def patterns_for(self, mode: Mode) -> list[Pattern]:
        return list(_in_order(self.patterns, mode))

    def find_probe(self, name_or_id: str | None) -> Probe | None:
        return self._probe_ids.get(name_or_id or "") or self._probe_keys.get(_key(name_or_id or ""))

    def find_pattern(self, name_or_id: str | None) -> Pattern | None:
        return self._pattern_ids.get(name_or_id or "") or self._pattern_keys.get(_key(name_or_id or ""))

    def probe_name(self, probe_id: str) -> str:
        """The probe's name; an id the catalogue no longer knows is shown as it is."""
        probe = self.find_probe(probe_id)
        return probe.name if probe else probe_id

    def pattern_name(self, pattern_id: str) -> str:
        pattern = self.find_pattern(pattern_id)
        return pattern.name if pattern else pattern_id

    def text(self, mode: Mode) -> str:
        """The compact listing Phase A chooses from: each probe with the gist of its purpose, each pattern."""
        lines = ["Probes (in order):"]
        lines += [f"{p.id} — {p.name}: {_gist(p.purpose)}" for p in self.probes_for(mode)]
        lines.append("Patterns:")
        lines += [f"{p.id} — {p.name}" for p in self.patterns_for(mode)]
        return "\n".join(lines)
