"""The Problem Brief (Mode 1) and the Solution Evaluation Brief (Mode 2), rendered as Markdown from the
session state; the Word file is converted from that same Markdown (outputs/word.py), so the two never disagree.

Text taken from the session state is escaped before it goes into Markdown, so a `|`, a newline or a
leading `#` in a claim cannot break a table or become a heading; emphasis the model wrote is kept.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone

from pmforge.core.models import Assumption, Manifest, Mode, RiskAssessment, SessionState
from pmforge.knowledge import Catalogue

TBC = "To be confirmed"

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


# What would make an exported document load or run something when a viewer renders it: raw HTML (a tag, a
# comment, an autolink), an image, and a link to anything but a web or mail address.
_RAW_HTML = re.compile(r"<(?=[A-Za-z/!?])")
_IMAGE = re.compile(r"!(?=\[)")
_OTHER_SCHEME = re.compile(r"\]\((?=\s*<?\s*(?!https?:|mailto:)[A-Za-z][A-Za-z0-9+.\-]*:)")
_REFERENCE_DEFINITION = re.compile(r"^(\s{0,3})\[(?=[^\]\n]+\]:)", re.M)


def inert_markdown(text: str) -> str:
    """Markdown from the PM, a document or a model, made inert for an export: its formatting stays, but a tag
    is text, an image is a plain link to its address, and a link to another scheme (javascript:, data:) is not a
    link."""
    text = _RAW_HTML.sub(r"\\<", text)
    text = _IMAGE.sub(r"\\!", text)
    text = _OTHER_SCHEME.sub(r"]\\(", text)
    return _REFERENCE_DEFINITION.sub(r"\1\\[", text)


def escape_markdown(text: str) -> str:
    """One line of state text, safe inside a paragraph, bullet or table cell, and inert (`inert_markdown`).

    Emphasis the model wrote (`**bold**`, `*italic*`, `_italic_`) is kept; what would break the document's
    structure is escaped: backslashes, pipes (table cells), newlines (bullets, rows) and block markers.
    """
    text = " ".join(str(text).split())
    text = inert_markdown(text.replace("\\", "\\\\").replace("|", "\\|"))
    text = re.sub(r"^(#|>|[-+*](?= ))", r"\\\1", text)  # would start a heading, quote or bullet
    return re.sub(r"^(\d+)\.(?= )", r"\1\\.", text)  # would start a numbered list


def _prose(text: str) -> list[str]:
    """Free text (possibly Markdown itself) as blocks: paragraphs and bullet lists, never headings or tables."""
    blocks: list[str] = []
    para: list[str] = []
    bullets: list[str] = []

    def flush() -> None:
        if para:
            blocks.append(escape_markdown(" ".join(para)))
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
            bullets.append(f"- {escape_markdown(bullet.group(1))}")
        elif heading:
            flush()
            blocks.append(f"**{escape_markdown(heading.group(1))}**" if heading.group(1) else "")
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
    return "\n".join(f"- {escape_markdown(item)}" for item in items if item.strip())


def _nonempty(items: list[str]) -> list[str]:
    return [item for item in items if item.strip()]


def _table(header: list[str], rows: list[list[str]]) -> str:
    """Cells must already be escaped Markdown."""
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    lines += ["| " + " | ".join(cell if cell else " " for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def _labelled(label: str, value_md: str) -> str:
    return f"**{label}:** {value_md}"


def stamp(now: datetime | None) -> datetime:
    now = now or datetime.now(timezone.utc)
    return now.astimezone(timezone.utc) if now.tzinfo else now


def _generated_line(now: datetime) -> str:
    zone = f" {now.tzname()}" if now.tzinfo else ""
    return f"Generated by Forge on {now.day} {now:%B %Y} at {now:%H:%M}{zone}."


def _title(kind_title: str, state: SessionState) -> str:
    name = state.project_name.strip() or "Untitled project"
    return f"# {kind_title} — {escape_markdown(name)}"


def _open_items(missing: list[str]) -> list[str]:
    if not missing:
        return []
    return [_labelled(TBC, escape_markdown("; ".join(missing)) + ".")]


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
        [escape_markdown(a.id), escape_markdown(a.claim), _words(a.type), _words(a.impact), _words(a.confidence), _words(a.status)]
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
    state: SessionState, manifest: Manifest, catalogue: Catalogue, now: datetime | None = None
) -> tuple[str, list[str]]:
    """The Mode 1 brief as Markdown, and the required fields that are still empty."""
    now = stamp(now)
    brief = state.problem_brief
    missing: list[str] = []
    body: list[str] = []

    body += ["## Problem statement", *_text_or_tbc(brief.problem_statement, "Problem statement", missing)]
    body += ["## Target audience", *_text_or_tbc(brief.target_audience, "Target audience", missing)]
    # Context the brief is better for but can go out without: shown when recorded, never listed as missing.
    if brief.why_now.strip():
        body += ["## Why now", *_prose(brief.why_now)]
    if brief.day_one_use_case.strip():
        body += ["## Day-one use case", *_prose(brief.day_one_use_case)]
    for heading, items in (("Tried before", brief.tried_before), ("Out of scope", brief.out_of_scope)):
        if _nonempty(items):
            body += [f"## {heading}", _bullets(_nonempty(items))]

    body.append("## Stakeholders")
    stakeholders = [s for s in brief.stakeholders if s.name.strip()]
    if stakeholders:
        rows = [
            [escape_markdown(s.name), _ROLE_WORDS.get(s.role, _words(s.role)), "Yes" if s.validated else "No", escape_markdown(s.notes)]
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
    if manifest.org_context.strip():
        body += ["## Organisation context", *_prose(manifest.org_context)]

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
                return f"{escape_markdown(a.id)} — {escape_markdown(a.claim)}{note}"
    return escape_markdown(value)


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
    state: SessionState, manifest: Manifest, catalogue: Catalogue, now: datetime | None = None
) -> tuple[str, list[str]]:
    """The Mode 2 brief as Markdown, and the required fields that are still empty."""
    now = stamp(now)
    ev = state.solution_evaluation
    missing: list[str] = []
    body: list[str] = []

    body.append("## Solution")
    if ev.solution_name.strip():
        body.append(_labelled("Name", escape_markdown(ev.solution_name)))
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
        if risk.level == "unknown" and risk.summary.strip():
            missing.append(f"{label} risk level")
            level = "_Not assessed_"  # the PM described the risk but neither rated it nor said which way it points
        elif risk.level == "unknown":
            missing.append(f"{label} risk level")
            level = _TBC_MD
        else:
            level = _words(risk.level)
        rows.append([label, level, escape_markdown(risk.summary)])
        evidence += _evidence(label, risk)
    body += [_table(["Risk", "Level", "Summary"], rows), *evidence]

    body.append("## Build vs buy vs partner")
    bvb = ev.build_vs_buy
    if bvb.recommendation == "undecided":
        missing.append("Build vs buy recommendation")
        body.append(_labelled("Recommendation", _TBC_MD))
    else:
        body.append(_labelled("Recommendation", _BUILD_WORDS.get(bvb.recommendation, _words(bvb.recommendation))))
    body.append(_labelled("Rationale", escape_markdown(bvb.rationale) if bvb.rationale.strip() else _NOT_RECORDED))
    options = _nonempty(bvb.options_considered)
    body += ["**Options considered**", _bullets(options) if options else _NOT_RECORDED]

    body.append("## Validation plan")
    plan = ev.validation_plan
    riskiest = _riskiest(state, plan.riskiest_assumption) if plan.riskiest_assumption.strip() else _NOT_RECORDED
    body.append(_labelled("Riskiest assumption", riskiest))
    if plan.approach.strip():
        body.append(_labelled("Approach", escape_markdown(plan.approach)))
    else:
        missing.append("Validation approach")
        body.append(_labelled("Approach", _TBC_MD))
    if plan.description.strip():
        body += ["**Description**", *_prose(plan.description)]
    body.append(_labelled("Timeline", escape_markdown(plan.timeline) if plan.timeline.strip() else _NOT_RECORDED))
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
    if manifest.org_context.strip():
        body += ["## Organisation context", *_prose(manifest.org_context)]

    head = [_title("Solution Evaluation Brief", state), _generated_line(now), *_open_items(missing)]
    return "\n\n".join(head + body) + "\n", missing
