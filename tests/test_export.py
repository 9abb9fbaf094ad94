"""The transcript exported as Markdown and Word (read back with python-docx), from the CLI and the app;
files a turn wrote are recorded on the turn and offered under its reply."""

from __future__ import annotations

import io
import json
import subprocess
from datetime import datetime, timezone
from pathlib import Path

from docx import Document
from streamlit.testing.v1 import AppTest

from forge_cli import run_forge
from pmforge.core.models import SessionState, SourceRef, Turn
from pmforge.core.transcript import turn_line
from pmforge.outputs.export import transcript_docx, transcript_file_name, transcript_markdown
from pmforge.project.project import Project
from pmforge.turn.orchestrator import run_turn

NOW = datetime(2025, 3, 4, 9, 30, tzinfo=timezone.utc)
CITATION = "[plan_v2.md › Pilot plan > Scope]"


def session() -> SessionState:
    return SessionState(turns=[
        Turn(number=1, user="We want to cut fresh shrink.\n# not a heading\n- nor a bullet | nor a cell",
             assistant="**Filling the gaps**\n\nQuestion 1: Who feels it most?"),
        Turn(number=2, user="How many stores are in the pilot?",
             assistant=f"From your files, {CITATION}: “The pilot covers 20 stores.”\n\n## Next\n\n"
                       "Question 1: Why now?",
             sources=[SourceRef(citation=CITATION, file_id="f1", filename="plan_v2.md", start=0, end=10)],
             artifacts=["problem-brief-20250304-093000.md", "problem-brief-20250304-093000.docx"]),
    ])


def test_markdown_has_numbered_turns_both_voices_and_citations_as_text():
    md = transcript_markdown(session(), "Fresh Shrink Pilot", NOW)

    assert md.startswith("# Transcript — Fresh Shrink Pilot\n\n"
                         "_Exported from Forge on 2025-03-04 09:30 UTC · 2 turns_")
    assert md.index("## Turn 1") < md.index("## Turn 2") and "## Turn 0" not in md
    turn_1 = md[md.index("## Turn 1"):md.index("## Turn 2")]
    assert turn_1.index("**PM:**") < turn_1.index("We want to cut fresh shrink.") < turn_1.index("**Forge:**")
    assert "\\# not a heading" in turn_1 and "\\- nor a bullet \\| nor a cell" in turn_1  # the PM's text stays text
    assert "Question 1: Who feels it most?" in turn_1
    turn_2 = md[md.index("## Turn 2"):]
    assert f"From your files, {CITATION}:" in turn_2  # the reply's citation, as it was shown
    assert "#### Next" in turn_2 and "\n## Next" not in md  # a heading in a reply sits under its turn
    assert "Sources: [plan\\_v2.md › Pilot plan > Scope]" in turn_2
    assert "Files written: problem-brief-20250304-093000.md, problem-brief-20250304-093000.docx" in turn_2
    assert transcript_markdown(SessionState(), "Empty", NOW).endswith("No turns yet.\n")


def test_word_file_reads_back_with_the_same_turns_and_words():
    doc = Document(io.BytesIO(transcript_docx(session(), "Fresh Shrink Pilot", NOW)))
    headings = [p.text for p in doc.paragraphs if p.style.name.startswith("Heading")]
    assert headings[0] == "Transcript — Fresh Shrink Pilot"
    assert [h.split(" · ")[0] for h in headings if h.startswith("Turn ")] == ["Turn 1", "Turn 2"]
    texts = [p.text for p in doc.paragraphs]
    assert "# not a heading" in texts and "- nor a bullet | nor a cell" in texts  # the PM's lines, verbatim
    assert texts.count("PM:") == 2 and texts.count("Forge:") == 2
    assert f"From your files, {CITATION}: “The pilot covers 20 stores.”" in texts
    assert "Sources: [plan_v2.md › Pilot plan > Scope]" in texts
    assert doc.core_properties.title == "Transcript — Fresh Shrink Pilot"


def test_old_turn_lines_load_without_the_artifacts_field():
    line = json.loads(turn_line(Turn(number=1, user="Hi", assistant="Hello")))
    line.pop("artifacts")
    assert Turn.model_validate(line).artifacts == []


def test_a_turn_that_wrote_a_brief_names_its_files(project: Project):
    run_turn(project, "Bakery shrink is 9 percent across our 62 stores and managers blame the ordering app.")
    run_turn(project, "Please write up the problem brief.")

    turn = project.state().turns[-1]
    assert len(turn.artifacts) == 2 and {Path(n).suffix for n in turn.artifacts} == {".md", ".docx"}
    assert all((project.ws.artifacts / name).is_file() for name in turn.artifacts)
    assert project.state().turns[0].artifacts == []
    assert "**Recorded:** Problem brief saved (Markdown and Word)." in turn.assistant


def _forge(*args: str, env: dict) -> subprocess.CompletedProcess:
    return run_forge(Path.cwd(), *args, env=env)


def test_forge_export_writes_markdown_and_word(isolated_env):
    env = {"FORGE_LLM": "offline"}
    assert _forge("new", "Export Pilot", env=env).returncode == 0
    chat = _forge("chat", "export-pilot", "-m", "We want to cut fresh shrink by a third.",
                  "-m", "I think store managers will accept a weekly count.", env=env)
    assert chat.returncode == 0, chat.stderr

    default = _forge("export", "export-pilot", env=env)  # Markdown into the project's artifacts/
    assert default.returncode == 0, default.stderr
    path = Path(default.stdout.strip())
    assert path.parent == isolated_env / "projects" / "export-pilot" / "artifacts"
    assert path.name.startswith("transcript-export-pilot-") and path.suffix == ".md"
    md = path.read_text()
    assert md.startswith("# Transcript — Export Pilot") and "## Turn 2" in md and "## Turn 3" not in md
    assert "We want to cut fresh shrink by a third." in md and "Added A1 — " in md

    out = isolated_env / "transcript.docx"
    word = _forge("export", "export-pilot", "--format", "docx", "--out", str(out), env=env)
    assert word.returncode == 0 and word.stdout.strip() == str(out)
    texts = [p.text for p in Document(str(out)).paragraphs]
    assert "I think store managers will accept a weekly count." in texts
    assert [t.split(" · ")[0] for t in texts if t.startswith("Turn ")] == ["Turn 1", "Turn 2"]

    stdout = _forge("export", "export-pilot", "--out", "-", env=env)
    assert stdout.stdout.startswith("# Transcript — Export Pilot")

    nowhere = _forge("export", "export-pilot", "--out", str(isolated_env / "missing" / "t.md"), env=env)
    assert nowhere.returncode == 1 and "Traceback" not in nowhere.stderr
    assert nowhere.stderr.strip() == f"The folder {isolated_env / 'missing'} does not exist; create it or " \
                                             "choose another --out."
    unknown = _forge("export", "nope", env=env)
    assert unknown.returncode == 1 and "There is no project called 'nope'" in unknown.stderr


def test_file_names_carry_the_project_and_the_time():
    assert transcript_file_name("fresh-shrink", "docx", NOW) == "transcript-fresh-shrink-20250304-093000.docx"


# ---------------------------------------------------------------- the app



def popover_labels(at: AppTest) -> list[str]:
    return [p.proto.popover.label for p in at.get("popover")]


def test_the_app_offers_a_turns_files_under_its_reply_and_exports_the_transcript(app: AppTest, isolated_env):
    app.sidebar.text_input[0].set_value("Downloads Pilot")
    app.sidebar.button[0].click().run()
    assert "Export" not in popover_labels(app)  # nothing to export yet

    app.chat_input[0].set_value("Bakery shrink is 9 percent across our 62 stores.").run()
    app.chat_input[0].set_value("Please write up the problem brief.").run()
    assert not app.exception and not app.error

    folder = isolated_env / "projects" / "downloads-pilot" / "artifacts"
    written = sorted(p.name for p in folder.glob("problem-brief-*"))
    replies = [m for m in app.chat_message if m.name == "assistant"]
    assert [b.label for b in replies[0].get("download_button")] == []
    under_reply = [b.label for b in replies[1].get("download_button") if not b.label.startswith("Transcript")]
    assert sorted(under_reply) == written and len(written) == 2

    # Export sits with the latest reply (reachable without scrolling back up a long session), and only there.
    assert [p.proto.popover.label for p in replies[1].get("popover")].count("Export") == 1
    assert "Export" not in [p.proto.popover.label for p in replies[0].get("popover")]
    export = next(p for p in app.get("popover") if p.proto.popover.label == "Export")
    assert [b.label for b in export.get("download_button")] == ["Transcript (.md)", "Transcript (.docx)"]
    assert not export.markdown and not export.caption  # buttons only
