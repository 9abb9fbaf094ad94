"""Artifacts: the two briefs (Markdown and Word), the assumption register (JSON and CSV), and the files on disk."""

from __future__ import annotations

import csv
import io
import json
from datetime import datetime, timedelta, timezone

import docx
import pytest

from pmforge.core.models import (
    Assumption,
    AssumptionChange,
    BuildVsBuy,
    DecisionCriteria,
    GoNoGo,
    Manifest,
    ProblemBrief,
    RiskAssessment,
    SessionState,
    SolutionEvaluation,
    Stakeholder,
    SuccessMetrics,
    ValidationPlan,
)
from pmforge.knowledge import builtin_catalogue
from pmforge.outputs.artifacts import generate, latest
from pmforge.outputs.briefs import TBC, problem_brief_markdown, solution_evaluation_markdown
from pmforge.outputs.register import register_csv, register_json
from pmforge.outputs.word import markdown_to_docx

NOW = datetime(2026, 11, 22, 15, 12, 0, tzinfo=timezone.utc)
CATALOGUE = builtin_catalogue()
UNICODE_CLAIM = "Zoë's 店舗 team “trusts” the dashboard — ✓, even at 5 a.m.\nSecond line"

MODE_1_HEADINGS = [
    "Problem statement", "Target audience", "Stakeholders", "Success metrics", "Decision criteria",
    "Key assumptions", "Diagnostic coverage", "Organisation context",
]
MODE_1_REQUIRED = ["Problem statement", "Target audience", "Stakeholders", "Success metrics", "Decision criteria"]
MODE_2_HEADINGS = [
    "Solution", "Problem addressed", "Risk assessment", "Build vs buy vs partner", "Validation plan",
    "Go / no-go", "Key assumptions",
]
MODE_2_REQUIRED = [
    "Solution name", "Value risk level", "Usability risk level", "Feasibility risk level", "Viability risk level",
    "Build vs buy recommendation", "Validation approach", "Go / no-go recommendation",
]


def _assumptions() -> list[Assumption]:
    return [
        Assumption(id="A1", claim="Bakery leads will act on a 2pm alert", impact="medium"),
        Assumption(id="A10", claim="Store POS data arrives within the hour", type="technical", impact="high",
                   confidence="informed", depends_on=["A2"]),
        Assumption(id="A2", claim="Shrink is driven by late markdowns", impact="high", status="at_risk"),
        Assumption(id="A3", claim="Regional directors back the pilot", type="stakeholder_dependency",
                   impact="low", status="at_risk"),
        Assumption(id="A4", claim="Retired claim about printers", retired=True, impact="high"),
        Assumption(id="A5", claim="# Not a heading | nor a cell break"),
    ]


def mode_1_state() -> SessionState:
    return SessionState(
        project_name="Fresh Shrink Pilot",
        problem_brief=ProblemBrief(
            problem_statement="Stores discard **12%** of fresh bakery stock because markdowns happen too late.\n\n"
                              "The current check is manual.",
            target_audience="Store managers in the 40 mid-size stores",
            stakeholders=[
                Stakeholder(name="Dana Ruiz", role="decision_authority", validated=True,
                            notes="VP Operations | owns the budget"),
                Stakeholder(name="Bakery leads", role="pain_holder"),
                Stakeholder(name="Zoë Müller", role="status_quo_beneficiary", notes="Runs today's markdown process"),
            ],
            success_metrics=SuccessMetrics(
                leading=["Markdown applied before 3pm in 80% of stores"],
                lagging=["Bakery shrink down 3 points"],
                anti_metrics=["Full-price sell-through does not drop"],
            ),
            decision_criteria=DecisionCriteria(
                proceed_if=["Pilot stores cut shrink by 2 points in 8 weeks"],
                do_not_proceed_if=["Store labour rises by more than 1 hour a day"],
            ),
        ),
        assumptions=_assumptions(),
        routing={"probes_fired": ["why_now", "solution_problem_separation", "value_risk"],
                 "patterns_fired": ["analytics_execution_gap"]},
    )


def mode_2_state() -> SessionState:
    state = mode_1_state()
    state.solution_evaluation = SolutionEvaluation(
        solution_name="Dynamic markdown alerts",
        solution_description="A 2pm alert telling bakery leads which lines to mark down.",
        value_risk=RiskAssessment(level="high", summary="Unclear leads will act",
                                  evidence_for=["Two stores already mark down at 2pm"],
                                  evidence_against=["Leads ignored the last alert rollout"]),
        usability_risk=RiskAssessment(level="low", summary="One screen on the handheld"),
        feasibility_risk=RiskAssessment(level="medium", summary="POS feed latency"),
        viability_risk=RiskAssessment(level="low", summary="Fits the ops budget"),
        build_vs_buy=BuildVsBuy(recommendation="buy", rationale="A vendor already integrates with our POS",
                                options_considered=["Build in-house", "Buy from ShelfSense"]),
        validation_plan=ValidationPlan(riskiest_assumption="a2", approach="Concierge pilot",
                                       description="Send alerts by hand to 5 stores.", timeline="6 weeks",
                                       success_criteria=["4 of 5 stores act on 70% of alerts"]),
        go_no_go=GoNoGo(recommendation="conditional_go", conditions=["Vendor signs a 3-month trial"],
                        dealbreakers=["POS data older than 2 hours"]),
    )
    return state


def org() -> Manifest:
    return Manifest(org_context="Regional grocer with 120 stores.\n\n- Ops owns shrink targets")


def docx_of(data: bytes) -> docx.document.Document:
    return docx.Document(io.BytesIO(data))


def docx_text(document) -> str:
    parts = [p.text for p in document.paragraphs]
    for table in document.tables:
        parts += [cell.text for row in table.rows for cell in row.cells]
    return "\n".join(parts)


def headings(document) -> dict[str, str]:
    return {p.text: p.style.name for p in document.paragraphs if p.style.name.startswith("Heading")}


def rows(table) -> list[list[str]]:
    return [[cell.text for cell in row.cells] for row in table.rows]


# ---------------------------------------------------------------- Problem Brief

def test_problem_brief_complete():
    md, missing = problem_brief_markdown(mode_1_state(), org(), CATALOGUE, now=NOW)
    assert missing == []
    assert TBC not in md
    assert md.startswith("# Problem Brief — Fresh Shrink Pilot\n")
    assert "Generated by Forge on 22 November 2026 at 15:12 UTC." in md
    for heading in MODE_1_HEADINGS:
        assert f"\n## {heading}\n" in md
    assert "| Dana Ruiz | Decision authority | Yes | VP Operations \\| owns the budget |" in md
    assert "Status-quo beneficiary" in md and "Pain holder" in md
    for item in ("Markdown applied before 3pm", "Bakery shrink down", "Full-price sell-through",
                 "cut shrink by 2 points", "more than 1 hour a day", "Regional grocer with 120 stores."):
        assert item in md
    # coverage: Mode 1 probe names from the catalogue; the Mode 2 probe stays out
    assert "Probes satisfied (2 of 7)" in md
    assert "- Solution–Problem Separation\n- Why Now" in md
    assert "- Analytics–Execution Gap" in md
    assert "Value Risk" not in md
    # retired assumptions are out; high impact + at risk first, then either, then the rest, numeric within
    assert "Retired claim" not in md
    order = [md.index(f"| {aid} |") for aid in ("A2", "A3", "A10", "A1", "A5")]
    assert order == sorted(order)
    assert "\n#" not in md.split("## Key assumptions")[1].split("## Diagnostic")[0]  # the '#' claim stays a cell


def test_problem_brief_docx_complete():
    md, _ = problem_brief_markdown(mode_1_state(), org(), CATALOGUE, now=NOW)
    document = docx_of(markdown_to_docx(md))
    found = headings(document)
    assert found["Problem Brief — Fresh Shrink Pilot"] == "Heading 1"
    for heading in MODE_1_HEADINGS:
        assert found[heading] == "Heading 2"
    assert "# Not a heading | nor a cell break" not in found
    assert document.core_properties.title == "Problem Brief — Fresh Shrink Pilot"

    stakeholders, assumptions = document.tables
    assert rows(stakeholders) == [
        ["Name", "Role", "Validated", "Notes"],
        ["Dana Ruiz", "Decision authority", "Yes", "VP Operations | owns the budget"],
        ["Bakery leads", "Pain holder", "No", ""],
        ["Zoë Müller", "Status-quo beneficiary", "No", "Runs today's markdown process"],
    ]
    assert all(run.bold for run in stakeholders.rows[0].cells[0].paragraphs[0].runs)
    table = rows(assumptions)
    assert table[0] == ["ID", "Assumption", "Type", "Impact", "Confidence", "Status"]
    assert [r[0] for r in table[1:]] == ["A2", "A3", "A10", "A1", "A5"]
    assert table[2] == ["A3", "Regional directors back the pilot", "Stakeholder dependency", "Low", "Guessed",
                        "At risk"]
    assert table[5][1] == "# Not a heading | nor a cell break"

    statement = next(p for p in document.paragraphs if p.text.startswith("Stores discard"))
    assert statement.text == "Stores discard 12% of fresh bakery stock because markdowns happen too late."
    assert [r.text for r in statement.runs if r.bold] == ["12%"]
    bullets = [p.text for p in document.paragraphs if p.style.name == "List Bullet"]
    assert "Bakery shrink down 3 points" in bullets and "Why Now" in bullets
    assert TBC not in docx_text(document)


def test_problem_brief_empty():
    md, missing = problem_brief_markdown(SessionState(project_name="Empty"), Manifest(), CATALOGUE, now=NOW)
    assert missing == MODE_1_REQUIRED
    assert md.count(f"_{TBC}_") == len(MODE_1_REQUIRED)
    assert f"**{TBC}:** Problem statement; Target audience; Stakeholders; Success metrics; Decision criteria." in md
    assert "## Organisation context" not in md
    assert "_No assumptions registered yet._" in md
    document = docx_of(markdown_to_docx(md))
    assert TBC in docx_text(document)
    assert document.tables == []
    tbc_runs = [r for p in document.paragraphs for r in p.runs if r.text == TBC]
    assert len(tbc_runs) == len(MODE_1_REQUIRED) and all(r.italic for r in tbc_runs)


def test_problem_brief_partial_lists_only_what_is_empty():
    state = SessionState(problem_brief=ProblemBrief(
        problem_statement="Shrink is high.", success_metrics=SuccessMetrics(anti_metrics=["NPS holds"]),
        decision_criteria=DecisionCriteria(do_not_proceed_if=["No budget"]),
        stakeholders=[Stakeholder(name="  ")],  # a blank name is not a stakeholder
    ))
    md, missing = problem_brief_markdown(state, Manifest(), CATALOGUE, now=NOW)
    assert missing == ["Target audience", "Stakeholders"]
    assert "# Problem Brief — Untitled project" in md
    assert "**Leading indicators**\n\n_Not recorded_" in md
    assert "**Proceed if**\n\n_Not recorded_\n\n**Do not proceed if**\n\n- No budget" in md


# ---------------------------------------------------------------- Solution Evaluation Brief

def test_solution_evaluation_complete():
    md, missing = solution_evaluation_markdown(mode_2_state(), org(), CATALOGUE, now=NOW)
    assert missing == []
    assert TBC not in md
    assert md.startswith("# Solution Evaluation Brief — Fresh Shrink Pilot\n")
    for heading in MODE_2_HEADINGS:
        assert f"\n## {heading}\n" in md
    assert "**Name:** Dynamic markdown alerts" in md
    assert "A 2pm alert telling bakery leads" in md
    assert "Stores discard **12%** of fresh bakery stock" in md  # the link back to the problem
    assert "| Value | High | Unclear leads will act |" in md
    assert "| Feasibility | Medium | POS feed latency |" in md
    assert "### Value risk evidence\n\n**Evidence for**\n\n- Two stores already mark down at 2pm" in md
    assert "**Evidence against**\n\n- Leads ignored the last alert rollout" in md
    assert "### Usability risk evidence" not in md  # no evidence recorded there
    assert "**Recommendation:** Buy" in md and "- Buy from ShelfSense" in md
    assert "**Riskiest assumption:** A2 — Shrink is driven by late markdowns" in md
    assert "**Approach:** Concierge pilot" in md and "**Timeline:** 6 weeks" in md
    assert "- 4 of 5 stores act on 70% of alerts" in md
    assert "**Recommendation:** Conditional go" in md
    assert "- Vendor signs a 3-month trial" in md and "- POS data older than 2 hours" in md
    assert "- Value Risk" in md and "Why Now" not in md  # Mode 2 coverage only


def test_solution_evaluation_docx_complete():
    md, _ = solution_evaluation_markdown(mode_2_state(), org(), CATALOGUE, now=NOW)
    document = docx_of(markdown_to_docx(md))
    found = headings(document)
    assert found["Solution Evaluation Brief — Fresh Shrink Pilot"] == "Heading 1"
    for heading in MODE_2_HEADINGS:
        assert found[heading] == "Heading 2"
    assert found["Value risk evidence"] == "Heading 3"
    risks, assumptions = document.tables
    assert rows(risks) == [
        ["Risk", "Level", "Summary"],
        ["Value", "High", "Unclear leads will act"],
        ["Usability", "Low", "One screen on the handheld"],
        ["Feasibility", "Medium", "POS feed latency"],
        ["Viability", "Low", "Fits the ops budget"],
    ]
    assert [r[0] for r in rows(assumptions)[1:]] == ["A2", "A3", "A10", "A1", "A5"]
    approach = next(p for p in document.paragraphs if p.text.startswith("Approach:"))
    assert [(r.text, bool(r.bold)) for r in approach.runs] == [("Approach:", True), (" Concierge pilot", False)]
    assert TBC not in docx_text(document)


def test_solution_evaluation_empty():
    md, missing = solution_evaluation_markdown(SessionState(), Manifest(), CATALOGUE, now=NOW)
    assert missing == MODE_2_REQUIRED
    assert md.count(f"_{TBC}_") == len(MODE_2_REQUIRED)
    assert "complete the Problem Brief first" in md
    text = docx_text(docx_of(markdown_to_docx(md)))
    assert text.count(TBC) >= len(MODE_2_REQUIRED)


def test_solution_evaluation_unregistered_riskiest_assumption_is_shown_as_written():
    state = mode_2_state()
    state.solution_evaluation.validation_plan.riskiest_assumption = "Leads trust the alert"
    md, _ = solution_evaluation_markdown(state, Manifest(), CATALOGUE, now=NOW)
    assert "**Riskiest assumption:** Leads trust the alert" in md
    state.solution_evaluation.validation_plan.riskiest_assumption = "A4"
    md, _ = solution_evaluation_markdown(state, Manifest(), CATALOGUE, now=NOW)
    assert "**Riskiest assumption:** A4 — Retired claim about printers (retired)" in md


# ---------------------------------------------------------------- Markdown -> Word

def test_markdown_to_docx_subset():
    md = ("# Title\n\nIntro line one\ncontinues here with **bold** and _italic_ and snake_case_name.\n\n"
          "### Third\n\n- first\n- second **b**\n\n| A | B |\n| --- | --- |\n| x \\| y | **z** |\n| only |\n\n"
          "\\# not a heading\n\n\\- not a bullet")
    document = docx_of(markdown_to_docx(md))
    paragraphs = [(p.style.name, p.text) for p in document.paragraphs]
    assert paragraphs == [
        ("Heading 1", "Title"),
        ("Normal", "Intro line one continues here with bold and italic and snake_case_name."),
        ("Heading 3", "Third"),
        ("List Bullet", "first"),
        ("List Bullet", "second b"),
        ("Normal", "# not a heading"),
        ("Normal", "- not a bullet"),
    ]
    intro = document.paragraphs[1]
    assert [r.text for r in intro.runs if r.bold] == ["bold"]
    assert [r.text for r in intro.runs if r.italic] == ["italic"]
    (table,) = document.tables
    assert rows(table) == [["A", "B"], ["x | y", "z"], ["only", ""]]


def test_emphasis_nests_and_stray_markers_stay_as_written():
    md = "***both*** then **bold *and italic* inside** and 2 * 3 * 4, a_b_c, *unclosed and ** alone"
    (paragraph,) = docx_of(markdown_to_docx(md)).paragraphs
    assert paragraph.text == ("both then bold and italic inside and 2 * 3 * 4, a_b_c, *unclosed and ** alone")
    styled = [(r.text, bool(r.bold), bool(r.italic)) for r in paragraph.runs if r.bold or r.italic]
    assert styled == [("both", True, True), ("bold ", True, False), ("and italic", True, True), (" inside", True, False)]


def test_a_long_line_of_unmatched_markers_is_exported_whole():
    # A pasted log or table dump can hold tens of thousands of stray "*" and "_": every character reaches the
    # Word file (the parser is linear; the pattern it replaced took hours on a megabyte of them).
    line = "*a _b **c " * 40_000
    (paragraph,) = docx_of(markdown_to_docx(line)).paragraphs
    assert paragraph.text == line.strip()


# ---------------------------------------------------------------- assumption register

def register_state() -> SessionState:
    return SessionState(assumptions=[
        Assumption(id="A10", claim="Depends on both", depends_on=["A1", "a2"], implied_stakeholders=["IT", "Ops"]),
        Assumption(id="A2", claim=UNICODE_CLAIM, depends_on=["A1"], status="at_risk",
                   history=[AssumptionChange(turn=1, field="created", new="x"),
                            AssumptionChange(turn=4, field="status", old="active", new="at_risk",
                                             reason="pilot data, late")]),
        Assumption(id="A1", claim="Root, with a comma", basis="Store visit", retired=True),
    ])


def test_register_json():
    data = json.loads(register_json(register_state()))
    assert [a["id"] for a in data] == ["A1", "A2", "A10"]
    assert {a["id"]: a["dependents"] for a in data} == {"A1": ["A2", "A10"], "A2": ["A10"], "A10": []}
    a1, a2, a10 = data
    assert a2["claim"] == UNICODE_CLAIM
    assert a2["history"][1] == {"turn": 4, "field": "status", "old": "active", "new": "at_risk",
                                "reason": "pilot data, late"}
    assert a1["retired"] is True and a1["basis"] == "Store visit"
    assert a10["implied_stakeholders"] == ["IT", "Ops"]
    assert set(a1) >= set(Assumption.model_fields) | {"dependents"}
    assert "店舗" in register_json(register_state())  # written as text, not \u escapes


def test_register_csv():
    parsed = list(csv.DictReader(io.StringIO(register_csv(register_state()))))
    assert [r["id"] for r in parsed] == ["A1", "A2", "A10"]
    a1, a2, a10 = parsed
    assert a2["claim"] == UNICODE_CLAIM
    assert a1["claim"] == "Root, with a comma" and a1["retired"] == "yes"
    assert a1["dependents"] == "A2; A10"
    assert a10["depends_on"] == "A1; a2" and a10["implied_stakeholders"] == "IT; Ops"
    assert a2["history"] == "turn 1 created; turn 4 status: active → at_risk (pilot data, late)"


def test_register_empty():
    assert json.loads(register_json(SessionState())) == []
    assert list(csv.reader(io.StringIO(register_csv(SessionState()))))[1:] == []


# ---------------------------------------------------------------- files on disk

def test_generate_and_latest(project):
    state = project.state()
    state.problem_brief = mode_1_state().problem_brief
    state.assumptions = _assumptions()
    folder = project.ws.artifacts
    assert latest(project.ws, "problem_brief") == {}

    first = generate(project.ws, state, project.manifest(), "problem_brief", project.catalogue(), now=NOW)
    assert first.kind == "problem_brief" and first.missing == []
    assert [p.name for p in first.paths] == ["problem-brief-20261122-151200.md", "problem-brief-20261122-151200.docx"]
    assert all(p.parent == folder and p.is_file() for p in first.paths)
    md_path, docx_path = first.paths
    assert md_path.read_text(encoding="utf-8").startswith("# Problem Brief — Fresh Shrink Pilot")
    assert "Dana Ruiz" in docx_text(docx.Document(str(docx_path)))
    assert latest(project.ws, "problem_brief") == {"md": md_path, "docx": docx_path}

    later = NOW + timedelta(minutes=5)
    second = generate(project.ws, state, project.manifest(), "problem_brief", project.catalogue(), now=later)
    assert latest(project.ws, "problem_brief") == {"md": second.paths[0], "docx": second.paths[1]}
    assert second.paths[0].name == "problem-brief-20261122-151700.md"
    assert md_path.exists()  # earlier generations are kept

    # the same second again: a new file beside it, nothing overwritten, and it counts as the newest
    third = generate(project.ws, state, project.manifest(), "problem_brief", project.catalogue(), now=later)
    assert third.paths[0].name == "problem-brief-20261122-151700-2.md"
    assert latest(project.ws, "problem_brief")["md"] == third.paths[0]

    # a generation missing one of its files loses to the newest complete one
    third.paths[1].unlink()
    assert latest(project.ws, "problem_brief") == {"md": second.paths[0], "docx": second.paths[1]}

    assert latest(project.ws, "solution_evaluation") == {}
    assert not list(folder.glob(".*.tmp"))


def test_generate_solution_evaluation_reports_missing(project):
    result = generate(project.ws, project.state(), project.manifest(), "solution_evaluation", project.catalogue(),
                      now=NOW)
    assert result.missing == MODE_2_REQUIRED
    assert [p.suffix for p in result.paths] == [".md", ".docx"]
    assert TBC in docx_text(docx.Document(str(result.paths[1])))
    assert latest(project.ws, "solution_evaluation")["docx"] == result.paths[1]


def test_generate_register(project):
    state = register_state()
    result = generate(project.ws, state, project.manifest(), "assumption_register", project.catalogue(), now=NOW)
    assert result.missing == []
    json_path, csv_path = result.paths
    assert (json_path.name, csv_path.name) == ("assumption-register-20261122-151200.json",
                                               "assumption-register-20261122-151200.csv")
    assert [a["id"] for a in json.loads(json_path.read_text(encoding="utf-8"))] == ["A1", "A2", "A10"]
    assert csv_path.read_bytes().startswith(b"\xef\xbb\xbf")  # BOM: Excel opens it as UTF-8
    with csv_path.open(encoding="utf-8-sig", newline="") as fh:
        parsed = list(csv.DictReader(fh))
    assert [r["id"] for r in parsed] == ["A1", "A2", "A10"] and parsed[1]["claim"] == UNICODE_CLAIM
    assert latest(project.ws, "assumption_register") == {"json": json_path, "csv": csv_path}
    assert latest(project.ws, "problem_brief") == {}


def test_generate_default_time_and_unknown_kind(project):
    result = generate(project.ws, project.state(), project.manifest(), "assumption_register",
                      project.catalogue())
    stamp = result.paths[0].name.removeprefix("assumption-register-").removesuffix(".json")
    written = datetime.strptime(stamp, "%Y%m%d-%H%M%S").replace(tzinfo=timezone.utc)
    assert abs(datetime.now(timezone.utc) - written) < timedelta(minutes=1)
    with pytest.raises(ValueError):
        generate(project.ws, project.state(), project.manifest(), "roadmap",  # type: ignore[arg-type]
                 project.catalogue())


def test_register_csv_cells_cannot_run_as_formulas():
    import csv as _csv

    from pmforge.core.models import Assumption, SessionState

    state = SessionState(assumptions=[Assumption(id="A1", claim='=HYPERLINK("http://x","click")')])
    rows = list(_csv.reader(io.StringIO(register_csv(state))))
    assert rows[1][1] == "'=HYPERLINK(\"http://x\",\"click\")"
