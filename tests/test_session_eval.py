"""Session evaluation: the matcher, the scores, `forge eval sessions` end to end, and `forge brief`."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest

from forge_bench.session_eval import (
    at_path,
    find_sessions,
    flat_text,
    gold_probe_pairs,
    item_matches,
    modes_reached,
    probe_pairs,
    score_assumptions,
    score_fields,
    score_must_not,
    score_probes,
    score_session,
    term_matches,
)
from pmforge.core.errors import ForgeError
from pmforge.core.models import (
    Assumption,
    AssumptionChange,
    ProblemBrief,
    RoutingContext,
    SessionState,
    Stakeholder,
    SuccessMetrics,
    Turn,
)
from pmforge.outputs.record import scored_record
from pmforge.surfaces.cli import main as forge


def _state() -> SessionState:
    return SessionState(
        project_name="Fresh",
        problem_brief=ProblemBrief(
            problem_statement="Store managers order Produce by gut feel; 8% is thrown away.",
            target_audience="Midwest store managers",
            stakeholders=[Stakeholder(name="Dana Ortiz", role="decision_authority", notes="VP Operations"),
                          Stakeholder(name="Lee", notes="Bakery lead")],
            success_metrics=SuccessMetrics(leading=["Suggested orders accepted"], lagging=["Shrink below 4.5%"]),
        ),
        assumptions=[
            Assumption(id="A1", claim="Managers trust a suggested order that explains itself",
                       history=[AssumptionChange(turn=3, field="claim", old="Managers trust any dashboard")]),
            Assumption(id="A2", claim="POS data arrives within the hour", type="technical"),
            Assumption(id="A3", claim="Bakery wants the same tool", retired=True),
        ],
        routing=RoutingContext(completed_modes=["mode_1"]),
        active_mode="mode_2",
    )


# ---------------------------------------------------------------- the scored record

def test_scored_record_has_the_designed_shape_and_only_working_assumptions():
    record = scored_record(_state())
    assert {"problem_brief", "solution_evaluation", "register", "active_mode", "completed_modes"} <= set(record)
    brief = record["problem_brief"]
    assert set(brief) >= {"problem_statement", "target_audience", "stakeholders", "success_metrics", "decision_criteria"}
    assert {"name", "role", "notes"} <= set(brief["stakeholders"][0])
    assert set(brief["success_metrics"]) == {"leading", "lagging", "anti_metrics"}
    assert set(brief["decision_criteria"]) == {"proceed_if", "do_not_proceed_if"}
    ev = record["solution_evaluation"]
    for risk in ("value_risk", "usability_risk", "feasibility_risk", "viability_risk"):
        assert set(ev[risk]) == {"level", "summary", "evidence_for", "evidence_against"}
    assert set(ev["build_vs_buy"]) == {"recommendation", "rationale", "options_considered"}
    assert {"riskiest_assumption", "approach", "description", "timeline", "success_criteria"} <= set(ev["validation_plan"])
    assert [a["id"] for a in record["register"]] == ["A1", "A2"]  # A3 is retired
    assert {"id", "claim", "status", "confidence", "type", "impact"} <= set(record["register"][0])
    assert "history" not in record["register"][0]  # superseded values must not count as present
    assert record["active_mode"] == "mode_2" and record["completed_modes"] == ["mode_1"]
    json.dumps(record)  # plain JSON


# ---------------------------------------------------------------- matching

def test_a_term_matches_any_alternative_case_insensitively():
    assert term_matches("waste|thrown away", "8% is thrown away")
    assert term_matches("PRODUCE", "produce")
    assert not term_matches("bakery|deli", "produce")
    assert not term_matches(" | ", "anything")  # empty alternatives never match


def test_an_item_needs_every_term():
    text = "store managers order produce by gut feel"
    assert item_matches(["produce", "gut|instinct"], text)
    assert not item_matches(["produce", "bakery"], text)


def test_flattening_walks_nested_dicts_and_lists():
    record = scored_record(_state())
    text = flat_text(record["problem_brief"])
    for expected in ("dana ortiz", "vp operations", "suggested orders accepted", "shrink below 4.5%", "decision_authority"):
        assert expected in text
    assert flat_text({"a": [{"b": 3}, ["X"]], "c": True}) == "3\nx"  # numbers as text, booleans skipped


def test_paths_index_lists_map_names_over_them_and_refuse_unknown_keys():
    record = scored_record(_state())
    assert at_path(record, "problem_brief.stakeholders.name") == ["Dana Ortiz", "Lee"]
    assert at_path(record, "problem_brief.stakeholders.1.notes") == "Bakery lead"
    assert at_path(record, "problem_brief.stakeholders.7.notes") is None
    with pytest.raises(ForgeError, match="problem_brief.problem_statment"):
        at_path(record, "problem_brief.problem_statment")


def test_field_capture_counts_items_per_path():
    record = scored_record(_state())
    result = score_fields(record, {
        "problem_brief.problem_statement": [["produce", "gut"], ["waste|thrown"], ["bakery"]],
        "problem_brief.stakeholders": [["dana", "vp"]],
        "problem_brief.target_audience": [["produce"]],  # in another field, so not captured here
    })
    assert (result["captured"], result["total"], result["share"]) == (3, 5, 0.6)
    assert result["by_path"]["problem_brief.problem_statement"]["captured"] == 2
    assert result["by_path"]["problem_brief.problem_statement"]["missed"] == [["bakery"]]
    assert result["by_path"]["problem_brief.target_audience"] == {"captured": 0, "total": 1, "missed": [["produce"]]}


def test_must_not_counts_facts_still_present():
    record = scored_record(_state())
    result = score_must_not(record, {
        "problem_brief": [["bakery"], ["12%"]],
        "register": [["any dashboard"], ["bakery wants"]],  # only in history / a retired assumption: gone
    })
    assert result["hits"] == 1 and result["total"] == 4
    assert result["items"] == [{"path": "problem_brief", "item": ["bakery"]}]


def test_an_assumption_is_captured_only_within_one_claim():
    record = scored_record(_state())
    result = score_assumptions(record, [
        ["trust", "explain"],  # both in A1
        ["pos", "hour"],  # both in A2
        ["trust", "pos"],  # spread over A1 and A2: not captured
    ])
    assert (result["captured"], result["total"]) == (2, 3)
    assert (result["registered"], result["unmatched"], result["unmatched_share"]) == (2, 0, 0.0)

    result = score_assumptions(record, [["trust"]])
    assert result["unmatched"] == 1 and result["unmatched_share"] == 0.5
    assert result["unmatched_claims"] == ["pos data arrives within the hour"]


def test_probe_precision_and_recall_over_pm_turn_pairs():
    state = SessionState(turns=[
        Turn(number=1, user="a", assistant="", probes_answered=["why_now"]),
        Turn(number=2, user="b", assistant=""),
        Turn(number=3, user="c", assistant="", probes_answered=["edge_mapping", "value_hypothesis"]),
    ])
    assert probe_pairs(state) == {("why_now", 1), ("edge_mapping", 3), ("value_hypothesis", 3)}
    # Saved turn numbers are mapped to PM turns when they differ.
    assert probe_pairs(state, {1: 1, 2: 2, 3: 4}) == {("why_now", 1), ("edge_mapping", 4), ("value_hypothesis", 4)}

    gold = {("why_now", 1), ("edge_mapping", 2), ("value_hypothesis", 3), ("status_quo_beneficiaries", 5)}
    result = score_probes(probe_pairs(state), gold)
    assert (result["hits"], result["predicted"], result["gold"]) == (2, 3, 4)
    assert result["precision"] == round(2 / 3, 4) and result["recall"] == 0.5
    assert result["false_positives"] == [["edge_mapping", 3]]

    # Gold may name a probe as the catalogue does; it is scored by id.
    assert gold_probe_pairs({"Why Now": [1], "edge_mapping": [2, 3]}) == {
        ("why_now", 1), ("edge_mapping", 2), ("edge_mapping", 3)}

    nothing = score_probes(set(), gold)
    assert nothing["precision"] is None and nothing["predicted"] == 0 and nothing["recall"] == 0.0


def test_a_whole_session_score_from_a_hand_built_state():
    state = _state()
    state.turns = [Turn(number=1, user="a", assistant="", active_mode="mode_1", probes_answered=["why_now"])]
    gold = {"fields": {"problem_brief.problem_statement": [["produce"]]}, "must_not": {},
            "assumptions": [["trust"]], "probes": {"why_now": [1]}}
    report = score_session("hand", state, gold, times=[0.5, 1.5, 1.0])
    assert report["fields"]["share"] == 1.0
    assert (report["probes"]["precision"], report["probes"]["recall"]) == (1.0, 1.0)
    assert report["modes_reached"] == ["mode_1", "mode_2"]  # the state is in mode 2 now
    assert report["completed_modes"] == ["mode_1"]
    assert report["seconds_per_turn"] == {"mean": 1.0, "p50": 1.0}
    assert modes_reached(SessionState()) == ["mode_1"]


# ---------------------------------------------------------------- reading sessions

def _write(folder: Path, name: str, rows: list[dict], gold: dict | None) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.conversation.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    if gold is not None:
        (folder / f"{name}.gold.json").write_text(json.dumps(gold))


GOLD = {"fields": {"problem_brief.problem_statement": [["produce"]]}, "must_not": {"problem_brief": [["bakery"]]},
        "assumptions": [["trust"]], "probes": {"solution_problem_separation": [2]}}


@pytest.mark.parametrize("rows, gold, message", [
    ([{"user": "hi"}], None, "no tiny.gold.json"),
    ([{"upload": "missing.md"}, {"user": "hi"}], GOLD, "missing.md, which is not a file"),
    ([{"say": "hi"}], GOLD, "must be"),
    ([{"user": "  "}], GOLD, "empty user message"),
    ([{"user": "hi"}], {"fields": {"a": "produce"}}, "list of items"),
    ([{"user": "hi"}], {"probes": {"why_now": ["two"]}}, "1-based"),
    ([{"user": "hi"}], {"must_not": {"problem_brief.problem": [["x"]]}}, "gold path 'problem_brief.problem'"),
    ([{"user": "hi"}], {"probes": {"why_not": [1]}}, "probe 'why_not' is not in the catalogue"),
])
def test_bad_input_is_one_sentence_before_any_turn_runs(tmp_path, rows, gold, message):
    _write(tmp_path / "s", "tiny", rows, gold)
    with pytest.raises(ForgeError, match=message):
        find_sessions(tmp_path / "s")


def test_a_bad_json_line_and_an_unknown_session_are_refused_from_the_cli(tmp_path, capsys):
    folder = tmp_path / "s"
    _write(folder, "tiny", [{"user": "hi"}], GOLD)
    with (folder / "tiny.conversation.jsonl").open("a") as f:
        f.write("{not json\n")
    assert forge(["eval", "sessions", "--dir", str(folder)]) == 1
    assert capsys.readouterr().err.strip() == "tiny.conversation.jsonl, line 2, is not valid JSON."
    assert forge(["eval", "sessions", "--dir", str(folder), "--only", "other"]) == 1
    assert "no other.conversation.jsonl" in capsys.readouterr().err
    assert forge(["eval", "sessions", "--dir", str(tmp_path / "nowhere")]) == 1


# ---------------------------------------------------------------- end to end, offline

def test_eval_sessions_plays_a_short_session_through_the_real_turn_loop(tmp_path, isolated_env, capsys):
    folder = tmp_path / "sessions"
    _write(folder, "tiny", [
        {"user": "Our store managers order produce by gut feel and we throw away a lot of it."},
        {"upload": "notes.md"},
        {"user": "I think managers would trust a suggested order if it explained itself."},
        {"user": "Please write up the problem brief."},
    ], GOLD)
    (folder / "notes.md").write_text("# Notes\n\n## Waste\nProduce waste is 8 percent of sales.\n")
    kept = tmp_path / "kept"

    assert forge(["eval", "sessions", "--dir", str(folder), "--json", "--keep", str(kept)]) == 0
    report = json.loads(capsys.readouterr().out)
    (session,) = report["sessions"]
    assert session["name"] == "tiny" and session["turns"] == 3
    assert session["uploads"][0]["ok"]
    assert set(session) >= {"fields", "must_not", "assumptions", "probes", "modes_reached", "completed_modes",
                            "seconds_per_turn"}
    assert session["fields"]["total"] == 1 and session["must_not"]["total"] == 1
    assert session["assumptions"]["total"] == 1
    assert session["probes"]["gold"] == 1
    assert session["modes_reached"][0] == "mode_1"
    assert session["seconds_per_turn"]["p50"] > 0
    assert set(report["overall"]) >= {"field_capture", "must_not_hits", "assumption_capture",
                                      "assumption_unmatched_share", "probe_precision", "probe_recall",
                                      "mode_2_reached", "seconds_per_turn_p50"}
    assert report["overall"]["mode_2_reached"] == "0 of 0"  # the gold expects no solution evaluation

    # The scratch project is where --keep put it, its score matches its saved state, and the configured
    # projects folder was never touched.
    from pmforge.core.workspace import Workspace
    state = Workspace.open(kept, "tiny").load_state()
    assert len(state.turns) == 3
    assert session["assumptions"]["registered"] == sum(not a.retired for a in state.assumptions)
    assert not (isolated_env / "projects").exists()
    # Keeping into the same folder again is refused before any turn runs.
    assert forge(["eval", "sessions", "--dir", str(folder), "--keep", str(kept)]) == 1
    assert "choose an empty --keep folder" in capsys.readouterr().err

    # Without --json: a table with one row per session and an overall row.
    assert forge(["eval", "sessions", "--dir", str(folder), "--only", "tiny"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:2] == ["session", "turns"]
    assert lines[2].startswith("tiny") and lines[3].startswith("overall")


# ---------------------------------------------------------------- forge brief

def test_forge_brief_writes_each_format_and_prints_the_record(project, capsys):
    slug = project.ws.slug
    assert forge(["brief", slug]) == 0  # an empty project still gets its brief (with TBC markers)
    md = Path(capsys.readouterr().out.strip())
    assert md.suffix == ".md" and md.parent == project.ws.artifacts and md.read_text().startswith("# Problem Brief")

    assert forge(["brief", slug, "--kind", "solution-evaluation", "--format", "docx"]) == 0
    assert Path(capsys.readouterr().out.strip()).suffix == ".docx"

    state = project.state()
    state.assumptions.append(Assumption(id="A1", claim="Managers trust explained orders"))
    project.ws.save_state(state)
    assert forge(["brief", slug, "--kind", "register", "--format", "csv"]) == 0
    path = Path(capsys.readouterr().out.strip())
    rows = list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8-sig"))))
    assert [r["claim"] for r in rows] == ["Managers trust explained orders"]

    assert forge(["brief", slug, "--format", "json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record == scored_record(project.state())
    assert record["register"][0]["claim"] == "Managers trust explained orders"


@pytest.mark.parametrize("argv, says", [
    (["--kind", "register", "--format", "docx"], "The register comes as csv or json, not docx."),
    (["--format", "csv"], "The problem brief comes as md, docx or json, not csv."),
])
def test_forge_brief_refuses_a_format_the_kind_does_not_come_in(project, capsys, argv, says):
    before = set(project.ws.artifacts.glob("*")) if project.ws.artifacts.exists() else set()
    assert forge(["brief", project.ws.slug, *argv]) == 1
    assert capsys.readouterr().err.strip() == says
    after = set(project.ws.artifacts.glob("*")) if project.ws.artifacts.exists() else set()
    assert after == before


# ---------------------------------------------------------------- the README's figures, guarded

README_ROW = re.compile(r"^\| `(?P<set>benchmarks/sessions/\w+)` \| (?P<cells>.+) \|$", re.M)
README_COLUMNS = ("fields", "stakeholder_precision", "rows_per_gold", "sentence_precision", "misfiled_share",
                  "problem_statement_words", "must_not", "assumptions", "unmatched", "probe_precision",
                  "probe_recall", "mode_2", "asked_again")


def readme_session_figures(set_path: str) -> dict[str, float]:
    """The row the README's discovery-quality table gives a session set, by column."""
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    for match in README_ROW.finditer(readme):
        if match.group("set") == set_path:
            cells = [c.strip() for c in match.group("cells").split("|")]
            return {k: float(re.match(r"[\d.]+", c).group(0)) for k, c in zip(README_COLUMNS, cells)}
    raise AssertionError(f"README.md has no figures row for {set_path}")


@pytest.mark.slow
def test_the_readme_figures_on_the_dev_sessions_still_hold(real_embedder, capsys):
    """`forge eval sessions` on the dev set, offline with the shipped model: a change that costs more than a
    little recall or precision fails here before the README goes stale."""
    quoted = readme_session_figures("benchmarks/sessions/dev")
    root = Path(__file__).resolve().parents[1]
    assert forge(["eval", "sessions", "--dir", str(root / "benchmarks" / "sessions" / "dev"), "--json"]) == 0
    o = json.loads(capsys.readouterr().out)["overall"]
    assert o["field_capture"] >= quoted["fields"] - 0.02, o["field_capture"]
    assert o["stakeholder_precision"] >= quoted["stakeholder_precision"] - 0.03
    assert o["sentence_precision"] >= quoted["sentence_precision"] - 0.03
    assert o["misfiled_share"] <= quoted["misfiled_share"] + 0.02
    assert o["problem_statement_words"]["max"] <= 90
    assert o["must_not_hits"] <= quoted["must_not"]
    assert o["assumption_capture"] >= quoted["assumptions"] - 0.03
    assert o["probe_precision"] >= quoted["probe_precision"] - 0.03
    assert o["probe_recall"] >= quoted["probe_recall"] - 0.03
    assert o["replies"]["questions_asked_again"] == 0
