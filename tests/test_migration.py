"""Projects saved by older Forges open forward with nothing lost.

The files are written here by hand, field for field, as those versions saved them (`model_dump_json(indent=1)`
of their models): schema 1 kept the transcript in state.json, turns without ids, and the build-vs-buy, validation
plan and go/no-go of the evaluation as free text, beside a project_state.json with no project id or display name;
schema 2 made those three structured and added Phase B's usage to each turn. Schema 3 moved the transcript into
turns.jsonl (tests/test_transcript.py follows that move turn by turn, and a crash in the middle of it)."""

from __future__ import annotations

import copy
import json
from decimal import Decimal

from pmforge.core import transcript
from pmforge.core.models import SCHEMA_VERSION, SessionState
from pmforge.core.settings import ModelPrice
from pmforge.core.workspace import Workspace
from pmforge.llm.costs import session_cost, usage_dollars
from pmforge.project.project import Project
from pmforge.turn.orchestrator import run_turn
from pmforge.upkeep import doctor

PLAN = b"# Bakery pilot\n\n## Scope\nTwelve stores mark bread down at four instead of six for eight weeks.\n"


def holds(got, want) -> bool:
    """`got` has everything `want` has (fields added to the models since have their defaults)."""
    if isinstance(want, dict):
        return isinstance(got, dict) and all(k in got and holds(got[k], v) for k, v in want.items())
    if isinstance(want, list):
        return isinstance(got, list) and len(got) == len(want) and all(map(holds, got, want))
    return got == want


def risk(level: str = "unknown", summary: str = "", against: list[str] | None = None) -> dict:
    return {"level": level, "summary": summary, "evidence_for": [], "evidence_against": against or []}


def schema_1_turn(number: int, user: str, assistant: str, **fields) -> dict:
    """A turn as schema 1 wrote it inside state.json: every field of its model, no id, no usage."""
    return {"number": number, "user": user, "assistant": assistant,
            "created_at": f"2024-03-0{number}T10:15:00+00:00", "active_mode": "mode_1", "active_probe": None,
            "routing": None, "retrieved": {"documents": [], "conversations": []}, "sources": [],
            "tokens": {"phase_a": 0, "phase_b": 0, "sections": {}}, "tool_calls": [], "summary": "",
            "indexed": False, **fields}


SCHEMA_1_TURNS = [
    schema_1_turn(
        1, "We bin 9% of bakery sales. I think leads would follow a markdown list.",
        "What I'm hearing: shrink in bakery.\n\nQuestion 1: Who owns the shrink target?",
        active_probe="solution_problem_separation",
        routing={"action": "ask_questions", "mode": "mode_1", "next_probe": "solution_problem_separation",
                 "patterns": [], "requires_retrieval": True, "retrieval_query": "bakery shrink",
                 "document_filter": [], "reasoning": "Substantive opening."},
        retrieved={"documents": ["0a1b2c3d4e5f6071:p0"], "conversations": []},
        sources=[{"citation": "[plan.md › Bakery pilot > Scope]", "file_id": "0a1b2c3d4e5f6071",
                  "filename": "plan.md", "start": 16, "end": 98}],
        tokens={"phase_a": 812, "phase_b": 3120, "sections": {"documents": 40, "recent_turns": 0}},
        tool_calls=[{"name": "register_assumption", "ok": True, "result": "Added A1",
                     "input": {"claim": "Leads would follow a markdown list", "type": "value"}}],
        summary="PM: bakery shrink is 9% of sales; Forge asked who owns the target.", indexed=True),
    schema_1_turn(
        2, "Dana Whitfield owns it; she reviews it monthly.", "Question 1: What would make Dana say no?",
        active_probe="why_now", summary="Dana Whitfield owns shrink.", indexed=True,
        retrieved={"documents": [], "conversations": [1]}),
    schema_1_turn(3, "ok", "Question 1: Since when has 9% been the figure?", active_mode="mode_2"),
]

SCHEMA_1_STATE = {
    "schema_version": 1, "project_name": "Bakery Shrink", "created_at": "2024-03-01T10:00:00+00:00",
    "active_mode": "mode_2", "active_probe": "solution_problem_fit", "turns": SCHEMA_1_TURNS,
    "assumptions": [
        {"id": "A1", "claim": "Leads would follow a markdown list", "type": "value", "impact": "high",
         "confidence": "informed", "status": "at_risk", "basis": "PM's hunch", "surfaced_by": "value_hypothesis",
         "surfaced_turn": 1, "depends_on": [], "recommended_action": "Shadow two leads at closing.",
         "history": [{"turn": 2, "field": "confidence", "old": "guessed", "new": "informed",
                      "reason": "Dana has seen it work in one store."}]},
        {"id": "A2", "claim": "Handhelds can show the list", "type": "technical", "impact": "medium",
         "confidence": "guessed", "status": "active", "basis": "", "surfaced_by": "", "surfaced_turn": 2,
         "depends_on": ["A1"], "recommended_action": "", "history": []},
    ],
    "problem_brief": {
        "problem_statement": "Bakery leads mark bread down by gut feel and bin 9% of sales.",
        "target_audience": "Bakery leads in the twelve pilot stores",
        "stakeholders": [{"name": "Dana Whitfield", "role": "decision_authority", "validated": True,
                          "notes": "Reviews shrink monthly."}],
        "success_metrics": {"leading": ["Lists followed on 4 of 5 evenings"], "lagging": ["Bakery shrink"],
                            "anti_metrics": ["Sold-out shelves before six"]},
        "decision_criteria": {"proceed_if": ["Shrink falls two points"], "do_not_proceed_if": []},
    },
    "solution_evaluation": {
        "solution_name": "Markdown list", "solution_description": "A daily list on the bakery handheld.",
        "value_risk": risk("medium", "Leads trust their own eye."),
        "usability_risk": risk("high", "Gloves at the ovens.", ["Leads wear gloves."]),
        "feasibility_risk": risk(), "viability_risk": risk(),
        "build_vs_buy": "Buy: the POS vendor already sells a markdown module.",
        "validation_plan": "Concierge test in two stores for three weeks.",
        "go_no_go": "",
    },
    "routing": {"probes_fired": ["solution_problem_separation", "why_now"], "patterns_fired": ["data_optimism"],
                "conversation_summary": "Bakery shrink, owned by Dana.", "last_synthesis_turn": 2,
                "completed_modes": ["mode_1"]},
}

SCHEMA_1_PROJECT_STATE = {
    "file_summaries": [{"filename": "plan.md", "file_id": "0a1b2c3d4e5f6071", "uploaded_at": "2024-03-01T10:05:00+00:00",
                        "summary": "The bakery pilot: twelve stores, markdowns at four.", "chunk_count": 1,
                        "parent_count": 1, "sha256": "", "content_sha256": "", "status": "indexed", "note": ""}],
    "org_context": "A regional grocer with 300 stores; shrink is reviewed monthly.",
}


def _write_schema_1_project(projects, slug: str = "bakery-shrink") -> Workspace:
    root = projects / slug
    for folder in ("uploads", "converted", "artifacts"):
        (root / folder).mkdir(parents=True)
        (root / folder / ".gitkeep").touch()
    (root / "state.json").write_text(json.dumps(SCHEMA_1_STATE, indent=1, ensure_ascii=False), encoding="utf-8")
    (root / "project_state.json").write_text(json.dumps(SCHEMA_1_PROJECT_STATE, indent=1, ensure_ascii=False),
                                             encoding="utf-8")
    (root / "uploads" / "plan.md").write_bytes(PLAN)
    (root / "converted" / "plan.md.md").write_bytes(PLAN)
    return Workspace(root)


def test_a_schema_1_project_opens_forward_with_nothing_lost(services):
    ws = _write_schema_1_project(services.projects_root)
    project = Project.open(services, "bakery-shrink")
    state = project.state()

    # Every turn, every field, in order; each given an id derived from the turn, the same on every read.
    assert [t.number for t in state.turns] == [1, 2, 3]
    for turn, old in zip(state.turns, SCHEMA_1_TURNS):
        assert holds(turn.model_dump(mode="json"), old), turn.number
    ids = [t.id for t in state.turns]
    assert len(set(ids)) == 3 and all(i.startswith("t-") for i in ids)
    transcript._cache.clear()  # as another process would read it
    assert [t.id for t in Workspace(ws.root).load_state().turns] == ids

    # The evaluation's free text is kept in the field that holds prose; an empty one becomes the default.
    evaluation = state.solution_evaluation
    assert evaluation.build_vs_buy.rationale == "Buy: the POS vendor already sells a markdown module."
    assert evaluation.build_vs_buy.recommendation == "undecided"  # not guessed from the prose
    assert evaluation.validation_plan.description == "Concierge test in two stores for three weeks."
    assert evaluation.go_no_go == type(evaluation.go_no_go)()
    # Everything else of the session comes across as it was.
    rest = {k: v for k, v in SCHEMA_1_STATE.items() if k not in ("turns", "schema_version", "solution_evaluation")}
    assert holds(state.model_dump(mode="json"), rest)
    kept = {k: v for k, v in SCHEMA_1_STATE["solution_evaluation"].items()
            if k not in ("build_vs_buy", "validation_plan", "go_no_go")}
    assert holds(evaluation.model_dump(mode="json"), kept)

    # Saved in the current schema: state.json without turns, the transcript in turns.jsonl.
    saved = json.loads(ws.state_path.read_text(encoding="utf-8"))
    assert saved["schema_version"] == SCHEMA_VERSION and "turns" not in saved
    assert [json.loads(line)["number"] for line in ws.transcript_path.read_bytes().splitlines()] == [1, 2, 3]
    assert holds(SessionState.model_validate(saved).model_dump(mode="json"), rest)

    # The old file list and organisation context too; the file gets its vectors as on a fresh clone.
    manifest = project.manifest()
    assert holds(manifest.model_dump(mode="json"), {k: v for k, v in SCHEMA_1_PROJECT_STATE.items()
                                                     if k != "file_summaries"})
    assert [f.filename for f in manifest.file_summaries] == ["plan.md"]
    assert manifest.file_summaries[0].summary == SCHEMA_1_PROJECT_STATE["file_summaries"][0]["summary"]
    assert doctor.repair(project).consistent
    assert project.manifest().find("plan.md").indexed

    # And the session goes on: the next turn is turn 4, the earlier ones untouched.
    before = [t.model_dump() for t in project.state().turns]
    record = run_turn(project, "Dana would say no if the bread sells out before six.")
    after = project.state().turns
    assert record.turn == 4 and [t.number for t in after] == [1, 2, 3, 4]
    assert [t.model_dump(exclude={"summary", "indexed", "calls"}) for t in after[:3]] == [
        {k: v for k, v in t.items() if k not in ("summary", "indexed", "calls")} for t in before]
    assert [t.summary for t in after[:2]] == [t["summary"] for t in before[:2]]


def test_a_schema_2_session_keeps_each_turns_usage_and_prices_it(services):
    """Schema 2 recorded Phase B's usage on each turn (no per-call record yet): it is kept and priced."""
    old = copy.deepcopy(SCHEMA_1_STATE)
    old["schema_version"] = 2
    old["recovered_from"] = ""
    old["brief_history"] = [{"turn": 2, "field": "problem_statement", "old": "Shrink is high.",
                             "new": SCHEMA_1_STATE["problem_brief"]["problem_statement"], "reason": "PM refined it."}]
    old["solution_evaluation"].update(
        build_vs_buy={"recommendation": "buy", "rationale": "The POS vendor sells one.", "options_considered": []},
        validation_plan={"riskiest_assumption": "A1", "approach": "concierge", "description": "",
                         "timeline": "three weeks", "success_criteria": ["4 of 5 evenings"]},
        go_no_go={"recommendation": "conditional_go", "conditions": ["The pilot passes."], "dealbreakers": []})
    usages = [{"input_tokens": 1200, "output_tokens": 300, "cache_read_input_tokens": 4000,
               "cache_creation_input_tokens": 900},
              {"input_tokens": 800, "output_tokens": 200, "cache_read_input_tokens": 5000,
               "cache_creation_input_tokens": 0},
              {"input_tokens": 0, "output_tokens": 0, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}]
    for turn, usage in zip(old["turns"], usages):
        turn.update(usage=usage, probes_answered=["why_now"] if turn["number"] == 2 else [])
    ws = _write_schema_1_project(services.projects_root)
    ws.state_path.write_text(json.dumps(old, indent=1, ensure_ascii=False), encoding="utf-8")

    state = Project.open(services, "bakery-shrink").state()
    for turn, before in zip(state.turns, old["turns"]):
        assert holds(turn.model_dump(mode="json"), before), turn.number
    assert holds(state.model_dump(mode="json"), {k: v for k, v in old.items() if k not in ("turns", "schema_version")})

    settings = services.settings
    price = ModelPrice(input=3.0, output=15.0, cache_read=0.3, cache_write=3.75)
    settings = settings.model_copy(update={"prices": {settings.phase_b_model: price}})
    cost = session_cost(state.turns, settings)
    assert cost.turns.dollars == sum((usage_dollars(t.usage, price) for t in state.turns), Decimal(0)) > 0
    assert cost.turns.by_model[settings.phase_b_model].calls == 2  # the turn that billed nothing is no call
