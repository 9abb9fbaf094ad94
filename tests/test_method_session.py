"""A scripted offline session through both modes, in ordinary PM language: what the brief, the register
and the evaluation hold afterwards, not only that they exist."""

from __future__ import annotations

import io

import docx

from pmforge.outputs.artifacts import latest
from pmforge.project.project import Project
from pmforge.turn.orchestrator import run_turn

MODE_1 = [
    "Our bakery leads in enterprise stores mark bread down by gut feel at closing, and we bin about 9% of bakery sales.",
    "Dana Whitfield, our VP of Stores, signs off on the shrink budget.",
    "I think leads would follow a daily markdown list if it came on their handhelds.",
    "This came up because shrink rose two points in Q2 and the CFO asked for a plan by October.",
    "Priya Raman's reporting team likes the current manual process because they own the weekly shrink reports.",
    "Leads would have to change their closing routine, and Tom Baker's handheld team would have to push the list.",
    "ok",
    "Lagging: bakery shrink from 9% to under 6% by the end of Q4. I don't want out-of-stocks to get worse.",
    "If shrink hasn't dropped two points after eight weeks, I'd pull the plug.",
    "Actually it's 8.5% today, not 9%.",
    "Can you summarize where we are?",
    "Please write up the problem brief.",
]
MODE_2 = [
    "Ok, let's stress-test the markdown list idea.",
    "Usability: the handheld screens are tiny and leads wear gloves at the ovens.",
    "Feasibility: the pricing API already exposes sell-by dates, so the data exists.",
    "Viability: the union rep will want to know if this adds work to the evening shift.",
    "I'd lean towards buying, since two vendors already ship markdown apps.",
    "The cheapest test of whether leads follow the list is a three-week concierge pilot in two stores.",
    "generate the evaluation",
]


def _docx_text(path) -> str:
    document = docx.Document(io.BytesIO(path.read_bytes()))
    cells = [c.text for t in document.tables for row in t.rows for c in row.cells]
    return "\n".join([p.text for p in document.paragraphs] + cells)


def test_offline_session_through_both_modes(project: Project):
    records = [run_turn(project, message) for message in MODE_1]
    for record in records:
        assert all(call.ok for call in record.tool_calls), record.tool_calls
    state = project.state()
    brief = state.problem_brief
    assert "gut feel" in brief.problem_statement and "bin about 8.5%" in brief.problem_statement
    assert "9%" not in brief.problem_statement  # the correction replaced it everywhere
    people = {s.name: s.role for s in brief.stakeholders}
    assert people["Dana Whitfield"] == "decision_authority"
    assert "Tom Baker" in people and any("Priya" in name for name in people)
    metrics = brief.success_metrics
    assert any("under 6%" in m for m in metrics.lagging) and any("out-of-stocks" in m for m in metrics.anti_metrics)
    assert any("pull the plug" in c for c in brief.decision_criteria.do_not_proceed_if)
    assert [a.claim for a in state.assumptions] == [
        "Leads would follow a daily markdown list if it came on their handhelds."]
    assert any(c.old == "9%" and c.new == "8.5%" for c in state.brief_history)
    # Probes are answered by content, not by any message: the filler and the summary answered none.
    assert records[6].probes_answered == [] and records[10].probes_answered == []
    assert "why_now" in records[3].probes_answered
    assert "status_quo_beneficiaries" in records[4].probes_answered
    # Replies play back what was recorded, and the summary comes from the state.
    assert "Dana Whitfield added as decision authority" in records[1].reply
    assert "Corrected 9% → 8.5%" in records[9].reply
    assert records[10].reply.startswith("**Where we are**")
    files = latest(project.ws, "problem_brief")
    assert "Dana Whitfield" in _docx_text(files["docx"]) and "gut feel" in files["md"].read_text()
    assert "Problem brief saved (Markdown and Word)" in records[11].reply
    assert sorted(project.state().turns[11].artifacts) == sorted(p.name for p in files.values())

    records = [run_turn(project, message) for message in MODE_2]
    for record in records:
        assert all(call.ok for call in record.tool_calls), record.tool_calls
    state = project.state()
    assert state.active_mode == "mode_2" and records[0].routing.action == "enter_mode"
    evaluation = state.solution_evaluation
    assert evaluation.solution_name == "markdown list"
    assert evaluation.usability_risk.level != "unknown" and "gloves" in evaluation.usability_risk.summary
    assert evaluation.feasibility_risk.evidence_for
    assert "union" in evaluation.viability_risk.summary
    assert evaluation.build_vs_buy.recommendation == "buy"
    plan = evaluation.validation_plan
    assert plan.approach == "concierge" and "three-week" in plan.timeline and plan.riskiest_assumption == "A1"
    files = latest(project.ws, "solution_evaluation")
    assert "concierge" in _docx_text(files["docx"])
