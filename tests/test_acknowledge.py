"""A turn's reply ends by saying what the turn recorded, worded from the tool calls and the state they left
(never from the model's prose), in both modes; the offline notice is said once per session, never in a reply."""

from __future__ import annotations

from pathlib import Path

from forge_cli import run_forge
from pmforge.core.models import Assumption, Manifest, SessionState, Stakeholder, ToolCallRecord
from pmforge.core.workspace import Workspace
from pmforge.knowledge import builtin_catalogue
from pmforge.project.project import Project
from pmforge.tools import TOOLS, ToolContext, run_tool, tool_call
from pmforge.tools.assumptions import (
    EditAssumption,
    RegisterAssumption,
    RetireAssumption,
    UpdateAssumptionConfidence,
    UpdateAssumptionStatus,
)
from pmforge.tools.brief import (
    AddDecisionCriterion,
    AddStakeholder,
    CorrectFact,
    RemoveDecisionCriterion,
    RemoveStakeholder,
    UpdateProblemContext,
    UpdateProblemStatement,
    UpdateStakeholder,
    UpdateSuccessMetrics,
    UpdateTargetAudience,
)
from pmforge.tools.session import CompleteMode, GenerateArtifact, UpdateOrgContext
from pmforge.tools.solution import SetBuildVsBuy, SetGoNoGo, SetRiskAssessment, SetSolutionInfo, SetValidationPlan
from pmforge.turn.acknowledge import HEADING, acknowledgement, acknowledgement_lines
from pmforge.turn.orchestrator import run_turn, start_turn, working_copy
from stubs import text_message, tool_use_message

OPENING = ("We want to cut fresh shrink in our 62 stores. I think store managers will accept a weekly count. "
           "Maria Lopez, our VP of stores, has the final say.")


def run_calls(before: SessionState, calls: list[tuple[str, dict]], pm_words: str = "",
              org: str = "") -> tuple[SessionState, list[ToolCallRecord]]:
    """The state after Forge's real tools ran `calls` on a copy of `before`, and the records of the calls."""
    ctx = ToolContext(state=working_copy(before), manifest=Manifest(org_context=org), turn_number=4,
                      catalogue=builtin_catalogue(), pm_words=pm_words)
    records = []
    for name, args in calls:
        ok, text = run_tool(name, args, ctx)
        records.append(ToolCallRecord(name=name, input=args, ok=ok, result=text))
    return ctx.state, records


def register(*claims: tuple[str, str, list[str]]) -> SessionState:
    return SessionState(assumptions=[Assumption(id=i, claim=c, depends_on=d) for i, c, d in claims])


# ---------------------------------------------------------------- the pure function

def test_a_registered_assumption_is_acknowledged_with_the_id_the_register_gave_it():
    before = register(("A1", "Stores have a scanner", []), ("A2", "Managers read the report", []))
    after, calls = run_calls(before, [("register_assumption", {
        "claim": "Stores will accept a weekly count.", "type": "value", "impact": "high"})])

    assert acknowledgement_lines(calls, before, after) == ["Added A3 — Stores will accept a weekly count"]
    assert acknowledgement(calls, before, after) == f"{HEADING} Added A3 — Stores will accept a weekly count."


def test_invalidating_names_every_dependant_now_at_risk():
    before = register(("A2", "Stores have a scanner", []), ("A5", "Counts can be scanned", ["A2"]),
                      ("A7", "Counts take ten minutes", ["A5"]), ("A8", "Unrelated", []))
    after, calls = run_calls(before, [("update_assumption_status", {
        "id": "a2", "status": "invalidated", "reason": "No store has one."})])

    assert acknowledgement_lines(calls, before, after) == ["A2 marked invalidated; A5 and A7 now at risk"]


def test_stakeholders_org_context_metrics_criteria_and_artifacts_each_get_a_line():
    before = SessionState()
    org = "We run 62 grocery stores."
    after, calls = run_calls(before, [
        ("add_stakeholder", {"name": "Maria Lopez", "role": "decision_authority"}),
        ("update_org_context", {"org_context": org + " Finance signs off every pilot."}),
        ("update_success_metrics", {"leading": ["Weekly counts done in 90% of stores"]}),
        ("add_decision_criterion", {"kind": "do_not_proceed_if", "criterion": "Out-of-stocks rise by 2 points"}),
        ("generate_artifact", {"kind": "problem_brief"}),  # refused: no workspace in this context
    ], pm_words="Finance signs off every pilot.", org=org)

    lines = acknowledgement_lines(calls, before, after, org_before=org)
    assert lines == [
        "Maria Lopez added as decision authority",
        "Org context updated: Finance signs off every pilot",
        "Problem brief: leading indicator recorded — Weekly counts done in 90% of stores",
        "Problem brief: stop criterion added — Out-of-stocks rise by 2 points",
    ]
    assert acknowledgement(calls, before, after, org) == HEADING + "\n" + "\n".join(f"- {x}" for x in lines)


def test_one_sentence_that_sets_a_target_and_its_guardrail_is_quoted_once():
    before = SessionState()
    said = "Shrink down to 5% by Q4, without out-of-stocks going up."
    after, calls = run_calls(before, [("update_success_metrics", {"lagging": [said], "anti_metrics": [said]})])
    assert acknowledgement_lines(calls, before, after) == [
        "Problem brief: lagging outcome and anti-metric recorded — Shrink down to 5% by Q4, without "
        "out-of-stocks going up"]


def test_calls_that_changed_nothing_failed_or_are_bookkeeping_are_not_acknowledged():
    before = register(("A1", "Stores will accept a weekly count", []))
    after, calls = run_calls(before, [
        ("register_assumption", {"claim": "Stores will accept a weekly count", "type": "value", "impact": "high"}),
        ("update_assumption_status", {"id": "A9", "status": "confirmed", "reason": "Asked them."}),  # no A9
        ("record_probe", {"probe": "why_now"}),
        ("update_conversation_summary", {"summary": "The PM wants to cut fresh shrink in 62 stores."}),
    ])
    assert [c.ok for c in calls] == [True, False, True, True]
    assert acknowledgement(calls, before, after) == ""


def test_the_wording_comes_from_the_tools_not_from_what_the_model_says():
    before = SessionState()
    after, calls = run_calls(before, [("add_stakeholder", {"name": "maria lopez", "role": "pain_holder"})])
    calls[0].result = "Stakeholder Maria Lopez added as CEO with a veto."  # whatever the text says
    assert acknowledgement_lines(calls, before, after) == ["Maria lopez added as someone who feels the pain"]


# ---------------------------------------------------------------- real turns

def test_an_offline_turn_saves_and_streams_the_acknowledgement_once_and_last(project: Project):
    pending = start_turn(project, OPENING)
    streamed = "".join(pending)
    record = pending.finish()

    saved = project.state().turns[-1].assistant
    assert streamed == saved == record.reply
    ack = saved[saved.index(HEADING):]
    assert "- Added A1 — Store managers will accept a weekly count" in ack
    assert "- Maria Lopez added as decision authority" in ack
    assert saved.count("Added A1") == 1 and "Noted:" not in saved  # one source: the interviewer no longer says it
    assert project.state().assumptions[0].id == "A1"


def test_a_reply_saved_after_another_window_took_the_id_names_the_id_actually_given(project: Project):
    pending = start_turn(project, OPENING)
    streamed = "".join(pending)
    assert "Added A1" in streamed
    with project.ws.locked():  # meanwhile the PM registered an assumption in another tab
        state = project.state()
        state.assumptions.append(Assumption(id="A1", claim="Bakery waste is half of fresh shrink"))
        project.ws.save_state(state)

    pending.finish()
    saved = project.state()
    assert [a.id for a in saved.assumptions] == ["A1", "A2"]
    assert "Added A2 — Store managers will accept a weekly count" in saved.turns[-1].assistant
    assert "Added A1" not in saved.turns[-1].assistant


ROUTE = {
    "action": "ask_questions", "mode": "mode_1", "next_probe": "solution_problem_separation", "patterns": [],
    "requires_retrieval": False, "retrieval_query": "", "reasoning": "Substantive opening.",
}


def test_an_online_turn_acknowledges_the_assumption_claude_registered(online: Project, stub):
    claim = {"claim": "Store managers will adopt a markdown app", "type": "value", "impact": "high"}
    stub.queue_anthropic(
        tool_use_message([("route", ROUTE)]),
        tool_use_message([("add_assumption_typo", {}), ("register_assumption", claim)], text="Let me note that."),
        text_message("Question 1: Who feels this most?"),
        text_message("PM expects managers to adopt a markdown app."),  # the turn summary
    )
    record = run_turn(online, "I think store managers will adopt a markdown app.")

    assert record.reply == ("Let me note that.\n\nQuestion 1: Who feels this most?\n\n"
                            f"{HEADING} Added A1 — Store managers will adopt a markdown app.")
    assert online.state().turns[-1].assistant == record.reply
    phase_b = [r for r in stub.anthropic_requests() if r.get("stream")]
    assert len(phase_b) == 2 and all(HEADING not in str(r) for r in phase_b)  # output, never sent as prompt


def test_forge_chat_says_it_is_offline_once_on_stderr_and_never_in_a_reply(isolated_env):
    env = {"FORGE_LLM": "offline"}
    assert run_forge(isolated_env, "new", "Notice", env=env).returncode == 0
    done = run_forge(isolated_env, "chat", "notice", "-m", OPENING, "-m", "Who else should I talk to?", "--verbose",
                     env=env)

    assert done.returncode == 0, done.stderr
    assert done.stderr.count("Forge is running offline") == 1 and "ANTHROPIC_API_KEY" in done.stderr
    assert "ANTHROPIC_API_KEY" not in done.stdout and "offline" not in done.stdout.lower()
    assert done.stdout.count("> ") == 2 and "[turn " not in done.stdout  # telemetry only with --verbose, on stderr
    assert done.stderr.count("[turn ") == 2
    turns = (Path(isolated_env) / "projects" / "notice" / "turns.jsonl").read_text()
    assert "ANTHROPIC_API_KEY" not in turns


# ---------------------------------------------------------------- every tool, walked from the registry

def _state_with_something_of_each() -> SessionState:
    state = register(("A1", "Stores have a handheld scanner", []), ("A2", "Counts can be scanned", ["A1"]))
    state.problem_brief.problem_statement = "Fresh shrink runs at 4.8% of produce sales in 62 stores."
    state.problem_brief.stakeholders.append(Stakeholder(name="Maria Lopez", role="decision_authority"))
    state.problem_brief.decision_criteria.proceed_if.append("Counts take under ten minutes")
    return state


# One call a PM's session could make of each tool, keyed by the tool's argument model (never its name).
SAMPLE_CALLS: dict[type, dict] = {
    RegisterAssumption: {"claim": "Managers read the weekly report", "type": "value", "impact": "high"},
    UpdateAssumptionStatus: {"id": "A1", "status": "invalidated", "reason": "No store has one."},
    UpdateAssumptionConfidence: {"id": "A1", "confidence": "informed", "reason": "Ops said so."},
    EditAssumption: {"id": "A2", "claim": "Counts can be scanned in aisle", "reason": "Sharper."},
    RetireAssumption: {"id": "A2", "reason": "No longer relevant."},
    UpdateProblemStatement: {"problem_statement": "Produce is thrown away because orders ignore the weather."},
    UpdateTargetAudience: {"target_audience": "Produce managers in 62 stores"},
    AddStakeholder: {"name": "Dev Patel", "role": "execution_dependency"},
    UpdateStakeholder: {"name": "Maria Lopez", "notes": "Wants a pilot first."},
    RemoveStakeholder: {"name": "Maria Lopez", "reason": "Left the company."},
    CorrectFact: {"old": "4.8%", "new": "3.4%", "reason": "Finance's figure."},
    UpdateSuccessMetrics: {"lagging": ["Shrink down to 3% by Q4"]},
    UpdateProblemContext: {"why_now": "The Q3 results showed shrink doubling."},
    AddDecisionCriterion: {"kind": "do_not_proceed_if", "criterion": "Out-of-stocks rise by 2 points"},
    RemoveDecisionCriterion: {"kind": "proceed_if", "criterion": "Counts take under ten minutes"},
    UpdateOrgContext: {"org_context": "We run 62 grocery stores."},
    SetSolutionInfo: {"name": "Weekly count app", "description": "Managers count produce on a phone each week."},
    SetRiskAssessment: {"dimension": "usability", "level": "medium", "summary": "Counting takes time."},
    SetBuildVsBuy: {"recommendation": "buy", "rationale": "Two vendors do this already."},
    SetValidationPlan: {"approach": "pilot", "timeline": "eight weeks"},
    SetGoNoGo: {"recommendation": "go"},
    CompleteMode: {"mode": "mode_1"},
    GenerateArtifact: {"kind": "assumption_register"},
}


def test_every_tool_either_tells_the_pm_what_it_recorded_or_is_bookkeeping(tmp_path: Path):
    """Walks the registry: a tool added without a line for the PM (or a bookkeeping mark) fails here."""
    for tool in TOOLS.values():
        assert (tool.acknowledge is None) == tool.bookkeeping, tool.name
    told = {tool.model for tool in TOOLS.values() if not tool.bookkeeping}
    assert set(SAMPLE_CALLS) == told

    before = _state_with_something_of_each()
    for model, arguments in SAMPLE_CALLS.items():
        name, _ = tool_call(model, arguments)
        ctx = ToolContext(state=working_copy(before), manifest=Manifest(), turn_number=4,
                          catalogue=builtin_catalogue(), workspace=Workspace(tmp_path / "p"),
                          pm_words="Let's wrap up. We run 62 grocery stores.")
        ok, result = run_tool(name, arguments, ctx)
        assert ok, (name, result)
        call = ToolCallRecord(name=name, input=arguments, ok=ok, result=result)
        lines = acknowledgement_lines([call], before, ctx.state)
        assert len(lines) == 1 and lines[0].strip(), (name, lines)
