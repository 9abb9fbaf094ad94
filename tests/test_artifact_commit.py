"""Artifacts asked for during a turn are written when the turn commits, and only then: a turn that fails
after the tool call leaves artifacts/ exactly as it was. Outside a turn (`forge brief`, the sidebar)
artifacts are written at once."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pmforge.core.errors import ForgeError
from pmforge.outputs.artifacts import generate, latest
from pmforge.project.project import Project
from pmforge.surfaces.cli import main as forge
from pmforge.turn.orchestrator import run_turn, start_turn
from stubs import tool_use_message

OPENING = "Bakery shrink is 9 percent across our 62 stores and store managers blame the ordering app."
ASK_FOR_BRIEF = "Please write up the problem brief."
ROUTE = {
    "action": "ask_questions", "mode": "mode_1", "next_probe": "solution_problem_separation", "patterns": [],
    "requires_retrieval": False, "retrieval_query": "", "reasoning": "The PM asked for the brief.",
}
_NAME = re.compile(r"(?:problem-brief|assumption-register)-\d{8}-\d{6}(?:-\d+)?\.(?:md|docx|json|csv)")


def on_disk(project: Project) -> dict[str, bytes]:
    folder = project.ws.artifacts
    return {p.name: p.read_bytes() for p in folder.iterdir()} if folder.is_dir() else {}


def test_a_brief_asked_for_in_a_turn_is_written_when_the_turn_commits(project: Project):
    run_turn(project, OPENING)
    before = on_disk(project)
    pending = start_turn(project, ASK_FOR_BRIEF)
    reply = "".join(pending)  # the whole reply, tool calls included: the turn is not saved yet

    assert on_disk(project) == before  # nothing written while the turn is open
    call = next(c for c in pending.execution.result.tool_calls if c.name == "generate_artifact")
    promised = set(_NAME.findall(call.result))
    assert call.ok and len(promised) == 2 and "with this turn" in call.result  # the model is told the names

    pending.finish()
    written = set(on_disk(project)) - set(before)
    assert written == promised
    assert set(_NAME.findall(reply)) <= written  # what the reply names is there
    md = next(project.ws.artifacts / name for name in written if name.endswith(".md"))
    assert md.read_text().startswith("# Problem Brief")
    assert latest(project.ws, "problem_brief") == {"md": md, "docx": md.with_suffix(".docx")}


def test_a_turn_whose_reply_fails_after_the_tool_call_writes_no_artifact(online: Project, stub):
    before, turns = on_disk(online), online.state().turn_count
    stub.queue_anthropic(
        tool_use_message([("route", ROUTE)]),
        tool_use_message([("generate_artifact", {"kind": "problem_brief"}),
                          ("generate_artifact", {"kind": "assumption_register"})], text="Writing it up."),
    )
    stub.anthropic_fallback = 400  # the round after the tool calls fails (not retried)

    with pytest.raises(ForgeError, match="your message is kept"):
        run_turn(online, ASK_FOR_BRIEF)

    assert on_disk(online) == before
    assert online.state().turn_count == turns
    phase_b = [r for r in stub.anthropic_requests() if r.get("stream")]
    results = phase_b[-1]["messages"][-1]["content"]
    assert [r["is_error"] for r in results] == [False, False]  # both tool calls ran before the failure
    assert all("with this turn" in r["content"] for r in results)


def test_a_turn_refused_at_commit_writes_no_artifact(project: Project):
    run_turn(project, OPENING)
    before = on_disk(project)
    pending = start_turn(project, ASK_FOR_BRIEF)
    "".join(pending)
    assert any(c.name == "generate_artifact" and c.ok for c in pending.execution.result.tool_calls)
    run_turn(project, "Store managers say the app orders too much bread on Mondays.")  # another window, first

    with pytest.raises(ForgeError, match="another window"):
        pending.finish()
    assert on_disk(project) == before


def test_a_turn_whose_state_was_saved_meanwhile_writes_its_artifact_once(project: Project):
    """Another window saved the session while the brief was being written: the turn's calls are applied to
    that state, and the brief written at commit is one generation made from it."""
    run_turn(project, OPENING)
    before = on_disk(project)
    pending = start_turn(project, ASK_FOR_BRIEF)
    "".join(pending)
    with project.ws.locked():  # e.g. the PM edited the brief in the sidebar of another tab
        state = project.state()
        state.problem_brief.target_audience = "Bakery department leads in the 62 stores"
        project.ws.save_state(state)

    pending.finish()
    written = sorted(set(on_disk(project)) - set(before))
    assert len(written) == 2 and {Path(n).suffix for n in written} == {".md", ".docx"}
    md = next(project.ws.artifacts / n for n in written if n.endswith(".md"))
    assert "Bakery department leads in the 62 stores" in md.read_text()


def test_artifacts_made_outside_a_turn_are_written_at_once(project: Project, capsys):
    result = generate(project.ws, project.state(), project.manifest(), "assumption_register",
                      project.catalogue())
    assert all(p.is_file() for p in result.paths)

    assert forge(["brief", project.ws.slug]) == 0
    path = Path(capsys.readouterr().out.strip())
    assert path.is_file() and path.parent == project.ws.artifacts
