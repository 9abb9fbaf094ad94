"""Domain patterns a project adds as Markdown files in `projects/<slug>/patterns/`.

One file per pattern:

    # Seasonal Staffing Blind Spot
    Mode: mode_1
    Triggers: holiday rota, seasonal staff, temp workers
    Signals: The plan assumes the same staff all year.
    Stay silent when: The PM has already planned for seasonal cover.
    Surface: Seasonal staff turn over before they learn a new routine.
    Question: Who runs this in December, and were they trained in October?

They join the built-in dictionary and Phase A's catalogue for that project only.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

from pmforge.core.tokens import count_tokens
from pmforge.knowledge.catalog import Pattern, set_project_patterns

log = logging.getLogger(__name__)

FIELDS = {"mode": "mode", "triggers": "triggers", "signals": "signals", "stay silent when": "stay_silent_when",
          "surface": "surface", "question": "question"}
RENDER_BUDGET = 200


def parse_pattern(project: str, path: Path) -> Pattern:
    text = path.read_text(encoding="utf-8-sig")
    title = re.search(r"^#\s+(.+?)\s*$", text, re.M)
    values: dict[str, str] = {}
    for match in re.finditer(r"^([A-Za-z ]+):\s*(.+?)\s*$", text, re.M):
        key = FIELDS.get(match.group(1).strip().lower())
        if key:
            values[key] = match.group(2)
    missing = [label for label, key in FIELDS.items() if key not in values and key != "mode"]
    if not title or missing:
        raise ValueError("needs a '# Name' title and " + ", ".join(f"'{m.title()}:'" for m in missing or ["title"]))
    mode = values.get("mode", "mode_1").strip().lower().replace(" ", "_")
    if mode not in ("mode_1", "mode_2"):
        raise ValueError(f"Mode must be mode_1 or mode_2, not {mode!r}")
    triggers = tuple(t.strip().lower() for t in values["triggers"].split(",") if len(t.strip()) >= 4)
    if not triggers:
        raise ValueError("needs at least one trigger phrase of 4+ characters")
    stem = re.sub(r"[^a-z0-9]+", "_", path.stem.lower()).strip("_")
    pattern = Pattern(
        id=f"{project}.{stem}", name=title.group(1).strip(), mode=mode, triggers=triggers,
        signals=values["signals"], stay_silent_when=values["stay_silent_when"], surface=values["surface"],
        question=values["question"],
    )
    if count_tokens(pattern.render()) > RENDER_BUDGET:
        raise ValueError(f"is over the {RENDER_BUDGET}-token budget for a pattern; shorten it")
    return pattern


def load_project_patterns(project: str, folder: Path) -> list[str]:
    """(Re)load a project's patterns; returns one sentence per file that was skipped."""
    patterns, problems = [], []
    for path in sorted(Path(folder).glob("*.md")) if Path(folder).is_dir() else []:
        try:
            patterns.append(parse_pattern(project, path))
        except (ValueError, OSError, UnicodeDecodeError) as exc:
            problems.append(f"patterns/{path.name} {exc}.")
            log.warning("skipped project pattern %s: %s", path.name, exc)
    set_project_patterns(project, patterns)
    return problems
