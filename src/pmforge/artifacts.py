"""Artifacts: the documents a PM takes out of Forge.

The Problem Brief (Mode 1) and the Solution Evaluation Brief (Mode 2) are rendered as Markdown, and the
Word file is converted from that same Markdown, so the two never disagree. The assumption register is
exported as JSON (the full record) and CSV (for spreadsheets).

Files land in the project's artifacts/ folder as `<kind>-YYYYMMDD-HHMMSS.<ext>`; earlier generations are
kept, and `latest` finds the newest. The CLI and the sidebar write at once (`generate`); a turn's tool call
only prepares the files, and the turn writes them when it commits (`prepare`, `write_all`).

Text taken from the session state is escaped before it goes into Markdown, so a `|`, a newline or a
leading `#` in a claim cannot break a table or become a heading; emphasis the model wrote is kept.
"""

from __future__ import annotations

import csv
import io
import json
import logging
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Literal

from docx import Document

from .knowledge import Catalogue
from .models import Assumption, AssumptionChange, Mode, ProjectState, RiskAssessment, SessionState
from .workspace import Workspace, atomic_write_bytes

log = logging.getLogger(__name__)

ArtifactKind = Literal["problem_brief", "solution_evaluation", "assumption_register"]
TBC = "To be confirmed"

KINDS: tuple[ArtifactKind, ...] = ("problem_brief", "solution_evaluation", "assumption_register")
_FILE_SLUG: dict[str, str] = {
    "problem_brief": "problem-brief",
    "solution_evaluation": "solution-evaluation",
    "assumption_register": "assumption-register",
}
_EXTENSIONS: dict[str, tuple[str, ...]] = {
    "problem_brief": ("md", "docx"),
    "solution_evaluation": ("md", "docx"),
    "assumption_register": ("json", "csv"),
}


@dataclass
class ArtifactResult:
    kind: ArtifactKind
    paths: list[Path] = field(default_factory=list)  # files written, inside ws.artifacts
    missing: list[str] = field(default_factory=list)  # required fields that were empty, e.g. "Problem statement"


# ---------------------------------------------------------------- Markdown helpers

_TBC_MD = f"_{TBC}_"
_NOT_RECORDED = "_Not recorded_"

_ROLE_WORDS = {
    "decision_authority": "Decision authority",
    "pain_holder": "Pain holder",
    "status_quo_beneficiary": "Status-quo beneficiary",
    "execution_dependency": "Execution dependency",
    "other": "Other",
}
_BUILD_WORDS = {"build": "Build", "buy": "Buy", "partner": "Partner"}
_GO_WORDS = {"go": "Go", "conditional_go": "Conditional go", "no_go": "No-go"}
_RISKS = (
    ("Value", "value_risk"),
    ("Usability", "usability_risk"),
    ("Feasibility", "feasibility_risk"),
    ("Viability", "viability_risk"),
)


def _words(value: str) -> str:
    """An enum value in plain words: "stakeholder_dependency" -> "Stakeholder dependency"."""
    return value.replace("_", " ").strip().capitalize()


def _esc(text: str) -> str:
    """One line of state text, safe inside a paragraph, bullet or table cell.

    Emphasis the model wrote (`**bold**`, `*italic*`, `_italic_`) is kept; what would break the document's
    structure is escaped: backslashes, pipes (table cells), newlines (bullets, rows) and block markers.
    """
    text = " ".join(str(text).split())
    text = text.replace("\\", "\\\\").replace("|", "\\|")
    text = re.sub(r"^(#|>|[-+*](?= ))", r"\\\1", text)  # would start a heading, quote or bullet
    return re.sub(r"^(\d+)\.(?= )", r"\1\\.", text)  # would start a numbered list


def _prose(text: str) -> list[str]:
    """Free text (possibly Markdown itself) as blocks: paragraphs and bullet lists, never headings or tables."""
    blocks: list[str] = []
    para: list[str] = []
    bullets: list[str] = []

    def flush() -> None:
        if para:
            blocks.append(_esc(" ".join(para)))
            para.clear()
        if bullets:
            blocks.append("\n".join(bullets))
            bullets.clear()

    for raw in text.strip().splitlines():
        line = raw.strip()
        bullet = re.match(r"^[-*+•]\s+(.*)", line)
        heading = re.match(r"^#{1,6}\s+(.*?)(?:\s+#+)?\s*$", line)
        if not line:
            flush()
        elif bullet:
            if para:
                flush()
            bullets.append(f"- {_esc(bullet.group(1))}")
        elif heading:
            flush()
            blocks.append(f"**{_esc(heading.group(1))}**" if heading.group(1) else "")
        else:
            if bullets:
                flush()
            para.append(line)
    flush()
    return [b for b in blocks if b]


def _text_or_tbc(text: str, label: str, missing: list[str]) -> list[str]:
    if text.strip():
        return _prose(text)
    missing.append(label)
    return [_TBC_MD]


def _bullets(items: list[str]) -> str:
    return "\n".join(f"- {_esc(item)}" for item in items if item.strip())


def _nonempty(items: list[str]) -> list[str]:
    return [item for item in items if item.strip()]


def _table(header: list[str], rows: list[list[str]]) -> str:
    """Cells must already be escaped Markdown."""
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    lines += ["| " + " | ".join(cell if cell else " " for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def _labelled(label: str, value_md: str) -> str:
    return f"**{label}:** {value_md}"


def _stamp(now: datetime | None) -> datetime:
    now = now or datetime.now(timezone.utc)
    return now.astimezone(timezone.utc) if now.tzinfo else now


def _generated_line(now: datetime) -> str:
    zone = f" {now.tzname()}" if now.tzinfo else ""
    return f"Generated by Forge on {now.day} {now:%B %Y} at {now:%H:%M}{zone}."


def _title(kind_title: str, state: SessionState) -> str:
    name = state.project_name.strip() or "Untitled project"
    return f"# {kind_title} — {_esc(name)}"


def _open_items(missing: list[str]) -> list[str]:
    if not missing:
        return []
    return [_labelled(TBC, _esc("; ".join(missing)) + ".")]


# ---------------------------------------------------------------- shared sections

def _priority(a: Assumption) -> tuple[int, int, str]:
    """High impact and at risk first, then either, then the rest; numeric id within each group."""
    flags = (a.impact == "high") + (a.status == "at_risk")
    return (2 - flags, a.number, a.id)


def working_assumptions(state: SessionState) -> list[Assumption]:
    """The non-retired assumptions in the order the briefs show them."""
    return sorted((a for a in state.assumptions if not a.retired), key=_priority)


def _assumptions_section(state: SessionState) -> list[str]:
    blocks = ["## Key assumptions"]
    working = working_assumptions(state)
    if not working:
        return blocks + ["_No assumptions registered yet._"]
    rows = [
        [_esc(a.id), _esc(a.claim), _words(a.type), _words(a.impact), _words(a.confidence), _words(a.status)]
        for a in working
    ]
    blocks.append(_table(["ID", "Assumption", "Type", "Impact", "Confidence", "Status"], rows))
    return blocks


def _coverage_section(state: SessionState, mode: Mode, catalogue: Catalogue) -> list[str]:
    """Probes satisfied and patterns surfaced for one mode (ids the catalogue no longer knows are shown as-is)."""
    order = catalogue.order(mode)
    fired_probes = [pid for pid in dict.fromkeys(state.routing.probes_fired) if pid]
    known = [catalogue.find_probe(pid) for pid in fired_probes]
    satisfied_ids = {p.id for p in known if p is not None and p.mode == mode}
    satisfied = [catalogue.probe_name(pid) for pid in order if pid in satisfied_ids]
    satisfied += [pid for pid, p in zip(fired_probes, known) if p is None]
    open_probes = [catalogue.probe_name(pid) for pid in order if pid not in satisfied_ids]

    patterns: list[str] = []
    for pid in dict.fromkeys(state.routing.patterns_fired):
        pattern = catalogue.find_pattern(pid) if pid else None
        if pattern is None and pid:
            patterns.append(pid)
        elif pattern is not None and pattern.mode == mode and pattern.name not in patterns:
            patterns.append(pattern.name)
    mode_patterns = len(catalogue.patterns_for(mode))

    blocks = ["## Diagnostic coverage", f"### Probes satisfied ({len(satisfied_ids)} of {len(order)})"]
    blocks.append(_bullets(satisfied) if satisfied else "_None yet._")
    if open_probes:
        blocks += ["### Not yet explored", _bullets(open_probes)]
    blocks.append(f"### Patterns surfaced ({len(patterns)} of {mode_patterns} watched for)")
    blocks.append(_bullets(patterns) if patterns else "_None surfaced._")
    return blocks


# ---------------------------------------------------------------- Problem Brief (Mode 1)

def problem_brief_markdown(
    state: SessionState, project_state: ProjectState, catalogue: Catalogue, now: datetime | None = None
) -> tuple[str, list[str]]:
    """The Mode 1 brief as Markdown, and the required fields that are still empty."""
    now = _stamp(now)
    brief = state.problem_brief
    missing: list[str] = []
    body: list[str] = []

    body += ["## Problem statement", *_text_or_tbc(brief.problem_statement, "Problem statement", missing)]
    body += ["## Target audience", *_text_or_tbc(brief.target_audience, "Target audience", missing)]

    body.append("## Stakeholders")
    stakeholders = [s for s in brief.stakeholders if s.name.strip()]
    if stakeholders:
        rows = [
            [_esc(s.name), _ROLE_WORDS.get(s.role, _words(s.role)), "Yes" if s.validated else "No", _esc(s.notes)]
            for s in stakeholders
        ]
        body.append(_table(["Name", "Role", "Validated", "Notes"], rows))
    else:
        missing.append("Stakeholders")
        body.append(_TBC_MD)

    body.append("## Success metrics")
    metrics = brief.success_metrics
    groups = (
        ("Leading indicators", _nonempty(metrics.leading)),
        ("Lagging indicators", _nonempty(metrics.lagging)),
        ("Anti-metrics (must not get worse)", _nonempty(metrics.anti_metrics)),
    )
    if any(items for _, items in groups):
        for label, items in groups:
            body += [f"**{label}**", _bullets(items) if items else _NOT_RECORDED]
    else:
        missing.append("Success metrics")
        body.append(_TBC_MD)

    body.append("## Decision criteria")
    criteria = brief.decision_criteria
    proceed, stop = _nonempty(criteria.proceed_if), _nonempty(criteria.do_not_proceed_if)
    if proceed or stop:
        body += ["**Proceed if**", _bullets(proceed) if proceed else _NOT_RECORDED]
        body += ["**Do not proceed if**", _bullets(stop) if stop else _NOT_RECORDED]
    else:
        missing.append("Decision criteria")
        body.append(_TBC_MD)

    body += _assumptions_section(state)
    body += _coverage_section(state, "mode_1", catalogue)
    if project_state.org_context.strip():
        body += ["## Organisation context", *_prose(project_state.org_context)]

    head = [_title("Problem Brief", state), _generated_line(now), *_open_items(missing)]
    return "\n\n".join(head + body) + "\n", missing


# ---------------------------------------------------------------- Solution Evaluation Brief (Mode 2)

def _riskiest(state: SessionState, value: str) -> str:
    """"A3" (or "a3", "A3: ...") shown with the registered claim; anything else shown as written."""
    match = re.match(r"\s*([A-Za-z]\d+)\b", value)
    if match:
        wanted = match.group(1).upper()
        for a in state.assumptions:
            if a.id.strip().upper() == wanted:
                note = " (retired)" if a.retired else ""
                return f"{_esc(a.id)} — {_esc(a.claim)}{note}"
    return _esc(value)


def _evidence(label: str, risk: RiskAssessment) -> list[str]:
    pro, con = _nonempty(risk.evidence_for), _nonempty(risk.evidence_against)
    if not (pro or con):
        return []
    blocks = [f"### {label} risk evidence"]
    if pro:
        blocks += ["**Evidence for**", _bullets(pro)]
    if con:
        blocks += ["**Evidence against**", _bullets(con)]
    return blocks


def solution_evaluation_markdown(
    state: SessionState, project_state: ProjectState, catalogue: Catalogue, now: datetime | None = None
) -> tuple[str, list[str]]:
    """The Mode 2 brief as Markdown, and the required fields that are still empty."""
    now = _stamp(now)
    ev = state.solution_evaluation
    missing: list[str] = []
    body: list[str] = []

    body.append("## Solution")
    if ev.solution_name.strip():
        body.append(_labelled("Name", _esc(ev.solution_name)))
    else:
        missing.append("Solution name")
        body.append(_labelled("Name", _TBC_MD))
    body += _prose(ev.solution_description) if ev.solution_description.strip() else []

    body.append("## Problem addressed")
    statement = state.problem_brief.problem_statement
    if statement.strip():
        body += ["This evaluation tests a solution to the problem set out in the Problem Brief:", *_prose(statement)]
    else:
        body.append("_No problem statement has been recorded yet; complete the Problem Brief first._")

    body.append("## Risk assessment")
    rows, evidence = [], []
    for label, attr in _RISKS:
        risk: RiskAssessment = getattr(ev, attr)
        if risk.level == "unknown":
            missing.append(f"{label} risk level")
            level = _TBC_MD
        else:
            level = _words(risk.level)
        rows.append([label, level, _esc(risk.summary)])
        evidence += _evidence(label, risk)
    body += [_table(["Risk", "Level", "Summary"], rows), *evidence]

    body.append("## Build vs buy vs partner")
    bvb = ev.build_vs_buy
    if bvb.recommendation == "undecided":
        missing.append("Build vs buy recommendation")
        body.append(_labelled("Recommendation", _TBC_MD))
    else:
        body.append(_labelled("Recommendation", _BUILD_WORDS.get(bvb.recommendation, _words(bvb.recommendation))))
    body.append(_labelled("Rationale", _esc(bvb.rationale) if bvb.rationale.strip() else _NOT_RECORDED))
    options = _nonempty(bvb.options_considered)
    body += ["**Options considered**", _bullets(options) if options else _NOT_RECORDED]

    body.append("## Validation plan")
    plan = ev.validation_plan
    riskiest = _riskiest(state, plan.riskiest_assumption) if plan.riskiest_assumption.strip() else _NOT_RECORDED
    body.append(_labelled("Riskiest assumption", riskiest))
    if plan.approach.strip():
        body.append(_labelled("Approach", _esc(plan.approach)))
    else:
        missing.append("Validation approach")
        body.append(_labelled("Approach", _TBC_MD))
    if plan.description.strip():
        body += ["**Description**", *_prose(plan.description)]
    body.append(_labelled("Timeline", _esc(plan.timeline) if plan.timeline.strip() else _NOT_RECORDED))
    criteria = _nonempty(plan.success_criteria)
    body += ["**Success criteria**", _bullets(criteria) if criteria else _NOT_RECORDED]

    body.append("## Go / no-go")
    go = ev.go_no_go
    if go.recommendation == "undecided":
        missing.append("Go / no-go recommendation")
        body.append(_labelled("Recommendation", _TBC_MD))
    else:
        body.append(_labelled("Recommendation", _GO_WORDS.get(go.recommendation, _words(go.recommendation))))
    conditions, dealbreakers = _nonempty(go.conditions), _nonempty(go.dealbreakers)
    body += ["**Conditions**", _bullets(conditions) if conditions else _NOT_RECORDED]
    body += ["**Dealbreakers**", _bullets(dealbreakers) if dealbreakers else _NOT_RECORDED]

    body += _assumptions_section(state)
    body += _coverage_section(state, "mode_2", catalogue)
    if project_state.org_context.strip():
        body += ["## Organisation context", *_prose(project_state.org_context)]

    head = [_title("Solution Evaluation Brief", state), _generated_line(now), *_open_items(missing)]
    return "\n\n".join(head + body) + "\n", missing


# ---------------------------------------------------------------- Markdown -> Word

_PUA = 0xE000  # backslash-escaped ASCII punctuation is parked here while markup is parsed
_INLINE = re.compile(
    r"\*\*(?=\S)(.+?)(?<=\S)\*\*"  # **bold**
    r"|(?<![\w*])\*(?=[^\s*])(.+?)(?<=[^\s*])\*(?![\w*])"  # *italic*
    r"|(?<!\w)_(?=\S)(.+?)(?<=\S)_(?!\w)"  # _italic_, never inside snake_case
)
_SEPARATOR_CELL = re.compile(r"\s*:?-{3,}:?\s*")


def _protect(text: str) -> str:
    return re.sub(r"\\([!-/:-@\[-`{-~])", lambda m: chr(_PUA + ord(m.group(1))), text)


def _restore(text: str) -> str:
    return re.sub("[\ue021-\ue07e]", lambda m: chr(ord(m.group(0)) - _PUA), text)


def _runs(text: str, bold: bool = False, italic: bool = False) -> list[tuple[str, bool, bool]]:
    out: list[tuple[str, bool, bool]] = []
    pos = 0
    for m in _INLINE.finditer(text):
        if m.start() > pos:
            out.append((text[pos:m.start()], bold, italic))
        if m.group(1) is not None:
            out += _runs(m.group(1), True, italic)
        else:
            out += _runs(m.group(2) if m.group(2) is not None else m.group(3), bold, True)
        pos = m.end()
    if pos < len(text):
        out.append((text[pos:], bold, italic))
    return out


def _add_runs(paragraph, text: str, bold: bool = False) -> None:
    for chunk, is_bold, is_italic in _runs(text, bold=bold):
        run = paragraph.add_run(_restore(chunk))
        run.bold = is_bold or None
        run.italic = is_italic or None


def _cells(line: str) -> list[str]:
    line = line.strip()
    line = line[1:] if line.startswith("|") else line
    line = line[:-1] if line.endswith("|") else line
    return [cell.strip() for cell in line.split("|")]


def _add_table(doc, lines: list[str]) -> None:
    rows = [_cells(line) for line in lines]
    rows = [r for r in rows if not all(_SEPARATOR_CELL.fullmatch(c) for c in r)]
    if not rows:
        return
    width = max(len(r) for r in rows)
    table = doc.add_table(rows=0, cols=width)
    table.style = "Table Grid"
    for index, row in enumerate(rows):
        cells = table.add_row().cells
        for cell, text in zip(cells, row + [""] * (width - len(row))):
            _add_runs(cell.paragraphs[0], text, bold=index == 0)


def markdown_to_docx(markdown: str) -> bytes:
    """A Word file from the Markdown subset the renderers emit.

    Supported: `#`–`######` headings, paragraphs (consecutive lines join), `- ` bullets (two-space indents
    nest), `**bold**`, `*italic*` and `_italic_` spans, backslash escapes, and `|` tables whose first row
    is the header (a `---` separator row is skipped).
    """
    doc = Document()
    lines = [_protect(line.rstrip()) for line in markdown.splitlines()]
    para: list[str] = []

    def flush() -> None:
        if para:
            _add_runs(doc.add_paragraph(), " ".join(para))
            para.clear()

    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        heading = re.match(r"^(#{1,6})\s+(.*?)(?:\s+#+)?\s*$", stripped)
        bullet = re.match(r"^( *)[-*+]\s+(.*)$", line)
        if not stripped:
            flush()
        elif heading:
            flush()
            level = len(heading.group(1))
            text = heading.group(2)
            _add_runs(doc.add_heading("", level=level), text)
            if level == 1 and not doc.core_properties.title:
                doc.core_properties.title = _restore("".join(chunk for chunk, _, _ in _runs(text)))
        elif bullet:
            flush()
            depth = min(len(bullet.group(1)) // 2, 2)
            style = "List Bullet" if depth == 0 else f"List Bullet {depth + 1}"
            _add_runs(doc.add_paragraph(style=style), bullet.group(2).strip())
        elif stripped.startswith("|"):
            flush()
            block = []
            while i < len(lines) and lines[i].strip().startswith("|"):
                block.append(lines[i])
                i += 1
            _add_table(doc, block)
            continue
        else:
            para.append(stripped)
        i += 1
    flush()

    buffer = io.BytesIO()
    doc.save(buffer)
    return buffer.getvalue()


# ---------------------------------------------------------------- assumption register

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


# ---------------------------------------------------------------- files

_Renderer = Callable[..., tuple[str, list[str]]]
_RENDERERS: dict[str, _Renderer] = {
    "problem_brief": problem_brief_markdown,
    "solution_evaluation": solution_evaluation_markdown,
}


def _check_kind(kind: str) -> None:
    if kind not in _FILE_SLUG:
        raise ValueError(f"Unknown artifact kind {kind!r}; expected one of {', '.join(KINDS)}.")


def _free_stem(folder: Path, kind: str, now: datetime, taken: set[str] = frozenset()) -> str:
    """`<kind>-YYYYMMDD-HHMMSS`, with -2, -3… if that second is already taken (nothing is overwritten);
    `taken` holds stems promised to files not written yet (earlier calls of the same turn)."""
    base = f"{_FILE_SLUG[kind]}-{now:%Y%m%d-%H%M%S}"
    stem, n = base, 1
    while stem in taken or any((folder / f"{stem}.{ext}").exists() for ext in _EXTENSIONS[kind]):
        n += 1
        stem = f"{base}-{n}"
    return stem


@dataclass
class PreparedArtifact:
    """An artifact rendered in memory and not yet on disk: what a turn's tool call leaves for the turn's
    commit, so a turn that fails afterwards writes nothing."""

    kind: ArtifactKind
    now: datetime
    stem: str  # the file names it will get, unless another window takes them before it is written
    files: dict[str, bytes]
    missing: list[str] = field(default_factory=list)

    @property
    def names(self) -> list[str]:
        return [f"{self.stem}.{ext}" for ext in self.files]


def prepare(
    ws: Workspace,
    state: SessionState,
    project_state: ProjectState,
    kind: ArtifactKind,
    catalogue: Catalogue,
    now: datetime | None = None,
    taken: set[str] = frozenset(),
) -> PreparedArtifact:
    """Render one artifact in memory (a rendering error writes nothing). `now` defaults to the current
    UTC time; an aware `now` is converted to UTC, a naive one is used as given."""
    _check_kind(kind)
    now = _stamp(now)
    if kind == "assumption_register":
        missing: list[str] = []
        # The BOM lets Excel read the CSV as UTF-8; without it accented and CJK claims turn to mojibake.
        files = {"json": register_json(state).encode("utf-8"), "csv": register_csv(state).encode("utf-8-sig")}
    else:
        markdown, missing = _RENDERERS[kind](state, project_state, catalogue, now=now)
        files = {"md": markdown.encode("utf-8"), "docx": markdown_to_docx(markdown)}
    return PreparedArtifact(kind=kind, now=now, stem=_free_stem(ws.artifacts, kind, now, taken), files=files,
                            missing=missing)


def write(ws: Workspace, artifact: PreparedArtifact) -> ArtifactResult:
    """Write a prepared artifact's files atomically into ws.artifacts, never over an existing file."""
    stem = artifact.stem
    if any((ws.artifacts / f"{stem}.{ext}").exists() for ext in artifact.files):
        stem = _free_stem(ws.artifacts, artifact.kind, artifact.now)  # taken meanwhile (another window)
    paths = []
    for ext, data in artifact.files.items():
        path = ws.artifacts / f"{stem}.{ext}"
        atomic_write_bytes(path, data)
        paths.append(path)
    return ArtifactResult(kind=artifact.kind, paths=paths, missing=artifact.missing)


def write_all(ws: Workspace, artifacts: list[PreparedArtifact]) -> list[ArtifactResult]:
    """A committing turn's prepared artifacts, in the order its tool calls made them. A file that cannot
    be written (a full disk) is logged and skipped: the turn's state matters more, and the sidebar or
    `forge brief` writes the artifact again from that state."""
    results = []
    for artifact in artifacts:
        try:
            results.append(write(ws, artifact))
        except OSError as exc:
            log.warning("could not write %s to %s: %s", ", ".join(artifact.names), ws.artifacts, exc)
    return results


def generate(
    ws: Workspace,
    state: SessionState,
    project_state: ProjectState,
    kind: ArtifactKind,
    catalogue: Catalogue,
    now: datetime | None = None,
) -> ArtifactResult:
    """Render one artifact and write its files at once (the CLI and the sidebar; a turn's tool call
    prepares instead, and the turn writes on commit)."""
    return write(ws, prepare(ws, state, project_state, kind, catalogue, now))


def latest(ws: Workspace, kind: ArtifactKind) -> dict[str, Path]:
    """The newest generation of `kind` as {extension: path}; {} if there is none.

    A generation with all its files wins over a newer one missing a file (e.g. a crash between writes).
    """
    _check_kind(kind)
    folder = ws.artifacts
    if not folder.is_dir():
        return {}
    extensions = _EXTENSIONS[kind]
    name = re.compile(
        rf"{re.escape(_FILE_SLUG[kind])}-(\d{{8}}-\d{{6}})(?:-(\d+))?\.({'|'.join(extensions)})"
    )
    generations: dict[tuple[str, int], dict[str, Path]] = {}
    for path in folder.iterdir():
        match = name.fullmatch(path.name)
        if match and path.is_file():
            generations.setdefault((match.group(1), int(match.group(2) or 1)), {})[match.group(3)] = path
    if not generations:
        return {}
    complete = [key for key, files in generations.items() if len(files) == len(extensions)]
    newest = generations[max(complete or generations)]
    return {ext: newest[ext] for ext in extensions if ext in newest}
