"""The catalogue's one format and its one reader: Markdown files a PM can read and edit.

Built-in probes and patterns ship in `catalogue/probes/` and `catalogue/patterns/` (one file each, the file
name is the id); a project adds its own patterns in `projects/<slug>/patterns/` (id `<slug>.<file name>`).
A file is a `# Name` title and one `Label: value` line per field; a list is bullet lines under its label
(`Triggers` may also be one comma-separated line). Other lines are notes and are ignored:

    # Seasonal Staffing Blind Spot
    Mode: mode_1
    Triggers: holiday rota, seasonal staff, temp workers
    Signals: The plan assumes the same staff all year.
    Stay silent when: The PM has already planned for seasonal cover.
    Surface: Seasonal staff turn over before they learn a new routine.
    Question: Who runs this in December, and were they trained in October?

A probe has `Mode`, `Order`, `Purpose`, `Listen for` (list), `Questions` (list), `Satisfied when` and, optionally,
`Answered by` (comma-separated: the fields of a message, as the offline understanding files it, and the parts
people play, that answer the probe).
`Mode` defaults to mode_1; `Order` places an item in its mode (unnumbered ones follow, by file name).

The built-in part is read once per process (it ships with the code and never changes while Forge runs); a
project's part again whenever one of its files changes (the cache key is the files' names, mtimes and sizes).
"""

from __future__ import annotations

import logging
import re
from functools import cache, lru_cache
from pathlib import Path
from typing import Callable, TypeVar

from pmforge.core.tokens import count_tokens
from pmforge.knowledge.catalog import MODES, Catalogue, Pattern, Probe

log = logging.getLogger(__name__)

BUILTIN_DIR = Path(__file__).parent / "catalogue"
PROBE_BUDGET = 400  # tokens of a rendered probe in the prompt
PATTERN_BUDGET = 200  # tokens of a rendered pattern
# A project's triggers match inside any message, so short ones would fire on everyday words; the built-in
# ones ("pii") are reviewed with the code.
PROJECT_TRIGGER_MIN_CHARS = 4

PROBE_FIELDS = {"mode": "mode", "order": "order", "purpose": "purpose", "listen for": "look_for",
                "questions": "questions", "satisfied when": "satisfied_when", "answered by": "answered_by"}
PATTERN_FIELDS = {"mode": "mode", "order": "order", "triggers": "triggers", "signals": "signals",
                  "stay silent when": "stay_silent_when", "surface": "surface", "question": "question"}
_LISTS = {"look_for", "questions", "triggers", "answered_by"}
_COMMA_LISTS = {"triggers", "answered_by"}
_OPTIONAL = {"mode", "order", "answered_by"}

_TITLE = re.compile(r"^#\s+(.+?)\s*$")
_LABEL = re.compile(r"^([A-Za-z ]+):\s*(.*?)\s*$")
_BULLET = re.compile(r"^\s*(?:[-*]|\d+[.)])\s+(.+?)\s*$")

_T = TypeVar("_T", Probe, Pattern)


def read_fields(text: str) -> tuple[str | None, dict[str, str | list[str]]]:
    """The `# Name` title and every `Label: value` of a file, labels lower-cased. A label with nothing after
    it takes the bullet lines below it as a list, or else the next line as its value."""
    title: str | None = None
    fields: dict[str, str | list[str]] = {}
    waiting: str | None = None  # a label whose value is on the following lines
    for line in text.splitlines():
        if not line.strip():
            continue
        heading = _TITLE.match(line)
        bullet = _BULLET.match(line)
        label = _LABEL.match(line)
        if heading:
            title = title or heading.group(1)
            waiting = None
        elif bullet and waiting is not None and isinstance(items := fields.setdefault(waiting, []), list):
            items.append(bullet.group(1))
        elif label:
            name, value = label.group(1).strip().lower(), label.group(2)
            fields.pop(name, None)  # a label given twice: the last one counts
            if value:
                fields[name] = value
            waiting = None if value else name
        else:
            if waiting is not None and waiting not in fields:
                fields[waiting] = line.strip()
            waiting = None
    return title, fields


def _values(text: str, labels: dict[str, str]) -> tuple[str, dict[str, str | tuple[str, ...]]]:
    """The title and the fields a kind of item has, as the model names them; ValueError names what is missing."""
    title, raw = read_fields(text)
    values: dict[str, str | tuple[str, ...]] = {}
    for label, key in labels.items():
        value = raw.get(label)
        if not value:
            continue
        if key in _LISTS:
            # A list on one line: triggers are comma-separated; a single question or sign is one item.
            values[key] = tuple(value) if isinstance(value, list) else tuple(
                value.split(",") if key in _COMMA_LISTS else [value])
        elif isinstance(value, list):
            raise ValueError(f"has a list under '{label.capitalize()}:'; write it on one line")
        else:
            values[key] = value
    missing = [label for label, key in labels.items() if key not in values and key not in _OPTIONAL]
    if title is None or missing:
        needed = ([] if title else ["a '# Name' title"]) + [f"'{label.capitalize()}:'" for label in missing]
        raise ValueError("needs " + ", ".join(needed))
    return title, values


def _mode(values: dict) -> str:
    mode = str(values.get("mode", "mode_1")).strip().lower().replace(" ", "_")
    if mode not in MODES:
        raise ValueError(f"Mode must be mode_1 or mode_2, not {mode!r}")
    return mode


def _order(values: dict) -> int | None:
    if "order" not in values:
        return None
    text = str(values["order"]).strip()
    if not text.isdigit():
        raise ValueError(f"Order must be a whole number, not {text!r}")
    return int(text)


def _within(item: _T, budget: int) -> _T:
    if count_tokens(item.render()) > budget:
        raise ValueError(f"is over the {budget}-token budget for a {type(item).__name__.lower()}; shorten it")
    return item


def parse_probe(text: str, probe_id: str) -> Probe:
    name, v = _values(text, PROBE_FIELDS)
    answered_by = tuple(a.strip().lower().replace(" ", "_") for a in v.get("answered_by", ()) if a.strip())
    probe = Probe.model_validate({**v, "id": probe_id, "name": name, "mode": _mode(v), "order": _order(v),
                                  "answered_by": answered_by})
    return _within(probe, PROBE_BUDGET)


def parse_pattern(text: str, pattern_id: str, min_trigger_chars: int = 1) -> Pattern:
    name, v = _values(text, PATTERN_FIELDS)
    triggers = tuple(t.strip().lower() for t in v["triggers"] if len(t.strip()) >= min_trigger_chars)
    if not triggers:
        raise ValueError(f"needs at least one trigger phrase of {min_trigger_chars}+ characters")
    pattern = Pattern.model_validate(
        {**v, "id": pattern_id, "name": name, "mode": _mode(v), "order": _order(v), "triggers": triggers})
    return _within(pattern, PATTERN_BUDGET)


def item_id(path: Path, namespace: str = "") -> str:
    """`why_now` for catalogue/probes/why_now.md; `<slug>.seasonal_staffing` for a project's seasonal-staffing.md."""
    stem = re.sub(r"[^a-z0-9]+", "_", path.stem.lower()).strip("_")
    return f"{namespace}.{stem}" if namespace else stem


def read_folder(folder: Path, parse: Callable[[str, str], _T], namespace: str = "") -> tuple[list[_T], list[str]]:
    """Every `*.md` item of a folder, by file name, and one sentence per file that was skipped."""
    items: list[_T] = []
    problems: list[str] = []
    seen: set[str] = set()
    for path in sorted(folder.glob("*.md")) if folder.is_dir() else []:
        try:
            item = parse(path.read_text(encoding="utf-8-sig"), item_id(path, namespace))
            if item.id in seen:
                raise ValueError(f"has the same id as another file ({item.id})")
        except (ValueError, OSError, UnicodeDecodeError) as exc:
            problems.append(f"{folder.name}/{path.name} {exc}.")
            log.warning("skipped catalogue file %s: %s", path, exc)
            continue
        seen.add(item.id)
        items.append(item)
    return items, problems


@cache
def builtin_catalogue() -> Catalogue:
    """The probes and patterns that ship with Forge. A broken file is a bug in Forge, so it raises."""
    probes, bad_probes = read_folder(BUILTIN_DIR / "probes", parse_probe)
    patterns, bad_patterns = read_folder(BUILTIN_DIR / "patterns", parse_pattern)
    if bad_probes or bad_patterns:
        raise ValueError("The built-in catalogue has broken files: " + " ".join(bad_probes + bad_patterns))
    return Catalogue(probes=tuple(probes), patterns=tuple(patterns))


def _fingerprint(folder: Path) -> tuple[tuple[str, int, int], ...]:
    stats = []
    for path in sorted(folder.glob("*.md")) if folder.is_dir() else []:
        try:
            stat = path.stat()
        except OSError:  # removed between listing and stat: the next turn sees it gone
            continue
        stats.append((path.name, stat.st_mtime_ns, stat.st_size))
    return tuple(stats)


@lru_cache(maxsize=32)
def _project_catalogue(slug: str, folder: Path, _fingerprint: tuple) -> Catalogue:
    patterns, problems = read_folder(folder, _project_pattern, slug)
    return builtin_catalogue().with_patterns(patterns, problems)


def _project_pattern(text: str, pattern_id: str) -> Pattern:
    return parse_pattern(text, pattern_id, PROJECT_TRIGGER_MIN_CHARS)


def project_catalogue(slug: str, root: Path) -> Catalogue:
    """The built-ins plus the patterns in `root/patterns/`, read again only when a file there changed.
    `catalogue.problems` says which files were skipped and why."""
    folder = Path(root) / "patterns"
    return _project_catalogue(slug, folder, _fingerprint(folder))
