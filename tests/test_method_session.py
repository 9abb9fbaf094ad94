"""A scripted offline session through both modes: probes, register, skeletons, briefs."""

from __future__ import annotations

import io

import docx

from pmforge.artifacts import latest
from pmforge.knowledge import MODE_ORDER
from pmforge.project import Project
from pmforge.turn.orchestrator import run_turn

MODE_1 = [
    "The problem is that bakery shrink is 9 percent in enterprise stores. It is for department leads in enterprise stores.",
    "Dana Whitfield signs off on the shrink budget. I think leads will adopt a daily markdown list.",
    "Marco Rossi struggles with weekend staffing every week. The trigger was a two-point shrink rise in Q2.",
    "Priya Raman benefits from the current manual process because her team owns the reports.",
    "Tom Baker runs the handheld fleet and would have to change the rollout plan.",
    "A leading indicator is markdown rounds done by 4pm. The outcome we want is bakery shrink under 6 percent. "
    "Out-of-stocks must not get worse.",
    "We should proceed if shrink falls two points in eight weeks. Walk away if leads refuse the list.",
    "A1 turns out to be wrong: leads ignored the paper list in the 2023 trial.",
    "Please generate the brief.",
]
MODE_2 = [
    "Let's evaluate the solution: the solution is a daily markdown list on the handhelds, ranked by sell-by date.",
    "Value risk is high because leads ignored the paper list.",
    "Usability risk is medium since the handheld screens are small.",
    "Feasibility risk is low because the pricing API already exposes sell-by dates.",
    "Viability risk is medium because the union must agree to new tasks.",
    "We should buy, since two vendors already ship markdown apps. I assume the vendors integrate with our POS.",
    "Test A2 with a two-store concierge pilot over three weeks.",
    "My recommendation is a conditional go if the union agrees to the new tasks.",
    "Generate the evaluation brief.",
]


def _docx_text(path) -> str:
    document = docx.Document(io.BytesIO(path.read_bytes()))
    cells = [c.text for t in document.tables for row in t.rows for c in row.cells]
    return "\n".join([p.text for p in document.paragraphs] + cells)


def test_offline_session_through_both_modes(project: Project):
    for message in MODE_1:
        record = run_turn(project, message)
        assert all(call.ok for call in record.tool_calls), record.tool_calls
    state = project.state()
    assert set(MODE_ORDER["mode_1"]) <= set(state.routing.probes_fired)
    assert "mode_1" in state.routing.completed_modes
    brief = state.problem_brief
    assert brief.problem_statement.startswith("The problem is that bakery shrink")
    assert "department leads" in brief.target_audience
    assert {(s.name, s.role) for s in brief.stakeholders} == {
        ("Dana Whitfield", "decision_authority"), ("Marco Rossi", "pain_holder"),
        ("Priya Raman", "status_quo_beneficiary"), ("Tom Baker", "execution_dependency")}
    metrics = brief.success_metrics
    assert metrics.leading and metrics.lagging and metrics.anti_metrics
    assert brief.decision_criteria.proceed_if and brief.decision_criteria.do_not_proceed_if
    a1 = state.assumptions[0]
    assert a1.id == "A1" and a1.status == "invalidated" and "2023 trial" in a1.history[-1].reason

    files = latest(project.ws, "problem_brief")
    markdown = files["md"].read_text()
    assert "To be confirmed" not in markdown
    for section in ("Problem statement", "Target audience", "Stakeholders", "Success metrics", "Decision criteria"):
        assert section in markdown
    text = _docx_text(files["docx"])
    assert "Dana Whitfield" in text and "bakery shrink" in text

    for message in MODE_2:
        record = run_turn(project, message)
        assert all(call.ok for call in record.tool_calls), record.tool_calls
    state = project.state()
    assert state.active_mode == "mode_2"
    assert set(MODE_ORDER["mode_2"]) <= set(state.routing.probes_fired)
    assert "mode_2" in state.routing.completed_modes
    evaluation = state.solution_evaluation
    assert evaluation.solution_name and evaluation.solution_description
    assert [evaluation.value_risk.level, evaluation.usability_risk.level, evaluation.feasibility_risk.level,
            evaluation.viability_risk.level] == ["high", "medium", "low", "medium"]
    assert evaluation.build_vs_buy.recommendation == "buy"
    assert evaluation.validation_plan.riskiest_assumption == "A2"
    assert evaluation.go_no_go.recommendation == "conditional_go" and evaluation.go_no_go.conditions

    files = latest(project.ws, "solution_evaluation")
    assert "To be confirmed" not in files["md"].read_text()
    assert "concierge" in _docx_text(files["docx"])
