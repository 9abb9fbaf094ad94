"""The assumption register exported as JSON (the full record) and CSV (for spreadsheets)."""

from __future__ import annotations

import csv
import io
import json

from pmforge.core.models import Assumption, AssumptionChange, SessionState


def _numeric(assumptions: list[Assumption]) -> list[Assumption]:
    return sorted(assumptions, key=lambda a: (a.number, a.id))


def _dependents(state: SessionState) -> dict[str, list[str]]:
    """id -> ids of the assumptions that list it in depends_on (numeric order, no self-references)."""
    found: dict[str, list[str]] = {}
    for a in _numeric(state.assumptions):
        for target in dict.fromkeys(d.strip().upper() for d in a.depends_on if d.strip()):
            if target != a.id.strip().upper():
                found.setdefault(target, []).append(a.id)
    return found


def register_json(state: SessionState) -> str:
    """Every assumption (retired ones too, flagged), every field and its history, plus its dependents."""
    dependents = _dependents(state)
    items = [
        {**a.model_dump(mode="json"), "dependents": dependents.get(a.id.strip().upper(), [])}
        for a in _numeric(state.assumptions)
    ]
    return json.dumps(items, indent=2, ensure_ascii=False) + "\n"


_CSV_COLUMNS = (
    "id", "claim", "type", "impact", "confidence", "status", "retired", "basis", "recommended_action",
    "depends_on", "dependents", "implied_stakeholders", "surfaced_by", "surfaced_turn", "history",
)


def _change(change: AssumptionChange) -> str:
    text = f"turn {change.turn} {change.field}"
    if change.old is not None:
        text += f": {change.old} → {change.new if change.new is not None else '—'}"
    elif change.new is not None and change.field != "created":
        text += f": {change.new}"
    return text + (f" ({change.reason})" if change.reason else "")


def register_csv(state: SessionState) -> str:
    """One row per assumption in numeric order; list fields joined with "; "."""
    dependents = _dependents(state)
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(_CSV_COLUMNS)
    for a in _numeric(state.assumptions):
        writer.writerow(_inert_row([
            a.id, a.claim, a.type, a.impact, a.confidence, a.status, "yes" if a.retired else "no", a.basis,
            a.recommended_action, "; ".join(a.depends_on), "; ".join(dependents.get(a.id.strip().upper(), [])),
            "; ".join(a.implied_stakeholders), a.surfaced_by, a.surfaced_turn,
            "; ".join(_change(c) for c in a.history),
        ]))
    return buffer.getvalue()


def _inert_row(cells: list) -> list:
    """A cell a spreadsheet would run as a formula (=, +, -, @) gets a leading apostrophe: text stays text."""
    return [f"'{c}" if isinstance(c, str) and c[:1] in ("=", "+", "-", "@") else c for c in cells]
