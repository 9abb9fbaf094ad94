"""Phase B's tools: schemas from models, validation, the assumption cascade, every tool good and bad."""

from __future__ import annotations

import pytest

from pmforge.core.models import Manifest, SessionState
from pmforge.knowledge import builtin_catalogue
from pmforge.tools import TOOLS, ToolContext, run_tool


def _ctx(turn: int = 5) -> ToolContext:
    return ToolContext(state=SessionState(), manifest=Manifest(), turn_number=turn,
                       catalogue=builtin_catalogue())


def _register(ctx: ToolContext, claim: str, depends_on: list[str] | None = None, confidence: str = "guessed") -> str:
    ok, text = run_tool("register_assumption", {"claim": claim, "type": "value", "impact": "high",
                                                "confidence": confidence, "depends_on": depends_on or []}, ctx)
    assert ok, text
    return text.split()[-1].rstrip(".")


def _get(ctx: ToolContext, assumption_id: str):
    return next(a for a in ctx.state.assumptions if a.id == assumption_id)


def test_invalidation_cascades_to_every_depth_with_reasons():
    ctx = _ctx()
    a1 = _register(ctx, "Department leads have ten spare minutes a day")
    a2 = _register(ctx, "Leads will run a daily markdown list", [a1])
    a3 = _register(ctx, "Markdown sell-through rises 20 percent", [a2])
    a4 = _register(ctx, "Shrink falls by a third within a year", [a3])
    unrelated = _register(ctx, "Finance will fund the handhelds")
    ok, text = run_tool("update_assumption_status", {"id": a1, "status": "invalidated",
                                                     "reason": "Time study: leads have no slack on weekends"}, ctx)
    assert ok and "Now at risk: A2, A3, A4" in text
    for dep in (a2, a3, a4):
        assumption = _get(ctx, dep)
        assert assumption.status == "at_risk"
        assert assumption.history[-1].reason.startswith(f"rests on {a1}, invalidated: Time study")
        assert assumption.history[-1].turn == 5
    assert _get(ctx, unrelated).status == "active"


def test_confirmation_upgrades_guessed_dependents_only():
    ctx = _ctx()
    a1 = _register(ctx, "Stores have reliable wifi at the shelf edge")
    a2 = _register(ctx, "The handheld app works offline-free", [a1])
    a3 = _register(ctx, "Leads finish a markdown round in ten minutes", [a2])
    a4 = _register(ctx, "Leads prefer handhelds to paper", [a1], confidence="validated")
    ok, text = run_tool("update_assumption_status", {"id": a1, "status": "confirmed", "reason": "IT survey"}, ctx)
    assert ok
    assert _get(ctx, a1).confidence == "validated"
    assert [_get(ctx, x).confidence for x in (a2, a3, a4)] == ["informed", "informed", "validated"]


def test_cycles_are_refused():
    ctx = _ctx()
    a1 = _register(ctx, "Claim one about the pilot")
    a2 = _register(ctx, "Claim two about the pilot", [a1])
    a3 = _register(ctx, "Claim three about the pilot", [a2])
    ok, text = run_tool("edit_assumption", {"id": a1, "depends_on": [a3], "reason": "link"}, ctx)
    assert not ok and "cycle" in text
    ok, text = run_tool("edit_assumption", {"id": a1, "depends_on": [a1], "reason": "self"}, ctx)
    assert not ok and "itself" in text
    assert _get(ctx, a1).depends_on == []


def test_ids_sort_numerically_and_retired_ones_leave_the_register():
    from pmforge.prompt.render import assumption_register

    ctx = _ctx()
    ids = [_register(ctx, f"Claim number {i} about stores") for i in range(1, 12)]
    assert ids[1] == "A2" and ids[9] == "A10"
    run_tool("retire_assumption", {"id": "A3", "reason": "duplicate of A2"}, ctx)
    text = assumption_register(ctx.state.assumptions, 2000)
    assert "A3 " not in text and text.index("A2 ") < text.index("A10 ")
    assert _get(ctx, "A3").retired and _get(ctx, "A3").history[-1].reason == "duplicate of A2"


# Every tool: one valid call and one the schema or the state refuses.
CASES = {
    "register_assumption": ({"claim": "Leads will adopt it", "type": "value", "impact": "high"},
                            {"claim": "Leads will adopt it", "type": "vibes", "impact": "high"}),
    "update_assumption_status": ({"id": "A1", "status": "at_risk", "reason": "new interview"},
                                 {"id": "A9", "status": "at_risk", "reason": "new interview"}),
    "update_assumption_confidence": ({"id": "A1", "confidence": "informed", "reason": "pilot data"},
                                     {"id": "A1", "confidence": "sure", "reason": "pilot data"}),
    "edit_assumption": ({"id": "A1", "impact": "low", "reason": "less central"}, {"id": "A1", "reason": "nothing"}),
    "retire_assumption": ({"id": "A1", "reason": "duplicate"}, {"id": "A1"}),
    "update_problem_statement": ({"problem_statement": "Fresh shrink is 9 percent in bakery."},
                                 {"problem_statement": "short"}),
    "update_target_audience": ({"target_audience": "Bakery department leads"}, {}),
    "update_problem_context": ({"why_now": "The regional VP wants a plan by October.", "out_of_scope": ["Meat"]},
                               {}),
    "add_stakeholder": ({"name": "Dana Whitfield", "role": "decision_authority"}, {"name": "Dana", "role": "boss"}),
    "update_stakeholder": ({"name": "Priya", "validated": True}, {"name": "Nobody Known", "validated": True}),
    "remove_stakeholder": ({"name": "Priya"}, {"name": "Nobody Known"}),
    "correct_fact": ({"old": "Leads opt in", "new": "Leads and managers opt in"}, {"old": "never said", "new": "x"}),
    "update_success_metrics": ({"leading": ["Markdown rounds done by 4pm"]}, {}),
    "add_decision_criterion": ({"kind": "proceed_if", "criterion": "Shrink falls 2 points in 8 weeks"},
                               {"kind": "maybe", "criterion": "Shrink falls 2 points"}),
    "remove_decision_criterion": ({"kind": "proceed_if", "criterion": "Leads opt in"},
                                  {"kind": "proceed_if", "criterion": "Not listed"}),
    "set_solution_info": ({"name": "Markdown list", "description": "A daily list on the handheld."}, {"name": "X"}),
    "set_risk_assessment": ({"dimension": "value", "level": "high", "summary": "Leads may ignore it."},
                            {"dimension": "karma", "level": "high", "summary": "Leads may ignore it."}),
    "set_build_vs_buy": ({"recommendation": "buy", "rationale": "Two vendors do this already."},
                         {"recommendation": "steal", "rationale": "Two vendors do this already."}),
    "set_validation_plan": ({"riskiest_assumption": "A1", "approach": "concierge test"},
                            {"riskiest_assumption": "A99", "approach": "concierge test"}),
    "set_go_no_go": ({"recommendation": "conditional_go", "conditions": ["Union agrees"]},
                     {"recommendation": "conditional_go"}),
    "record_probe": ({"probe": "Why Now"}, {"probe": "Probe 99"}),
    "record_pattern": ({"pattern": "analytics_execution_gap"}, {"pattern": "not a pattern"}),
    "update_conversation_summary": ({"summary": "The PM wants to cut bakery shrink; leads lack time."},
                                    {"summary": "short"}),
    "update_org_context": ({"org_context": "62-store grocer; VP of stores owns shrink."}, {"org_context": ""}),
    "complete_mode": ({"mode": "mode_1"}, {"mode": "mode_3"}),
    "generate_artifact": ({"kind": "assumption_register"}, {"kind": "poster"}),
}


def test_every_registered_tool_has_cases():
    assert set(CASES) == set(TOOLS)


@pytest.mark.parametrize("name", sorted(CASES))
def test_tool_valid_and_invalid(name, project):
    # The PM's own words back the calls that need them (complete_mode, update_org_context; see test_injection).
    ctx = ToolContext(state=project.state(), manifest=project.manifest(), turn_number=2,
                      catalogue=project.catalogue(), workspace=project.ws,
                      pm_words="We are a 62-store grocer; the VP of stores owns shrink. Let's wrap up mode 1.")
    _register(ctx, "Bakery leads will trust head-office lists")
    ctx.state.problem_brief.stakeholders.append(__import__("pmforge.core.models", fromlist=["Stakeholder"]).Stakeholder(
        name="Priya", role="pain_holder"))
    ctx.state.problem_brief.decision_criteria.proceed_if.append("Leads opt in")
    good, bad = CASES[name]
    before = ctx.state.model_dump_json()
    ok, text = run_tool(name, bad, ctx)
    assert not ok, text
    assert ctx.state.model_dump_json() == before  # a refused call changes nothing
    ok, text = run_tool(name, good, ctx)
    assert ok, text


def test_correct_fact_replaces_a_number_everywhere_and_keeps_the_history():
    ctx = _ctx()
    ctx.state.problem_brief.problem_statement = "Churn is 4.8% a month, against 14.8% at peak."
    ctx.state.problem_brief.success_metrics.lagging = ["Churn from 4.8% to 3% by Q4."]
    _register(ctx, "Customers leaving at 4.8% would stay with a cheaper tier")
    ok, text = run_tool("correct_fact", {"old": "4.8%", "new": "3.4%", "reason": "actually it's 3.4%"}, ctx)
    assert ok, text
    brief = ctx.state.problem_brief
    assert brief.problem_statement == "Churn is 3.4% a month, against 14.8% at peak."  # 14.8 untouched
    assert brief.success_metrics.lagging == ["Churn from 3.4% to 3% by Q4."]
    assert "3.4%" in ctx.state.assumptions[0].claim and ctx.state.assumptions[0].history[-1].old.count("4.8%")
    assert {c.old for c in ctx.state.brief_history} == {"4.8%"}
    ok, _ = run_tool("correct_fact", {"old": "4.8%", "new": "3.4%"}, ctx)
    assert not ok  # nothing left to correct


def test_schemas_are_generated_from_the_models():
    for tool in TOOLS.values():
        spec = tool.spec()
        generated = tool.model.model_json_schema()["properties"]
        assert set(spec.input_schema["properties"]) == set(generated)
        for name, prop in spec.input_schema["properties"].items():
            assert prop == {k: v for k, v in generated[name].items() if k != "title"}
        assert spec.description
