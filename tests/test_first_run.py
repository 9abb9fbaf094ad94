"""A first run that explains itself: the welcome and its starter prompts, plain words while files are
prepared, and the shipped demo played on a private copy (reset restores it; the committed files never
change). The real app through AppTest and the real `forge` command, offline, on copies of the repo's demo."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

import pmforge
from pmforge.core import demo
from pmforge.core.models import Manifest, ManifestEntry, SessionState
from pmforge.core.workspace import Workspace, display_names
from pmforge.project.project import Project, Upkeep
from pmforge.surfaces.ui import welcome

ROOT = Path(__file__).resolve().parents[1]
APP = str(Path(pmforge.__file__).parent / "surfaces" / "app.py")
SHIPPED_DEMO = ROOT / "projects" / "demo"
PLAN = b"# Pilot plan\n\n## Scope\n\nThe pilot covers 20 stores in the Midwest region for eight weeks.\n"


# ---------------------------------------------------------------- helpers


def _tree(folder: Path) -> dict[str, str]:
    """Every file under the folder (dot-files included) → its sha256."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _place_demo(projects: Path) -> Path:
    """The repo's demo as a fresh clone has it: its tracked files, no vectors, no lock files."""
    target = projects / "demo"
    shutil.copytree(SHIPPED_DEMO, target, ignore=shutil.ignore_patterns("vectordb", ".lock", ".turn.lock",
                                                                         ".operation.json", ".*.tmp"))
    return target


def _session(folder: Path) -> dict:
    data = json.loads((folder / "state.json").read_text(encoding="utf-8"))
    for bookkeeping in ("updated_at", "turns_saved"):  # what a save writes for itself
        data.pop(bookkeeping, None)
    return data


def _main_text(at: AppTest) -> str:
    parts = [e.value for e in at.main.markdown] + [e.value for e in at.main.caption]
    parts += [e.value for e in at.main.info] + [b.label for b in at.main.button]
    return " ".join(parts)


@pytest.fixture
def fresh_app(isolated_env):
    """Returns `start()`: a new AppTest session, as a browser opening the app (caches cleared)."""
    sessions = []

    def start() -> AppTest:
        st.cache_resource.clear()
        at = AppTest.from_file(APP, default_timeout=180)
        at.run()
        assert not at.exception, at.exception
        sessions.append(at)
        return at

    yield start
    st.cache_resource.clear()


def _create_project(at: AppTest, name: str) -> None:
    at.sidebar.text_input[0].set_value(name)
    at.sidebar.button[0].click().run()  # the new-project form's submit button
    assert not at.exception, at.exception


def _starters(at: AppTest):
    found = [b for b in at.main.button if b.key and b.key.startswith("starter-")]
    return sorted(found, key=lambda b: int(b.key.split("-")[1]))  # laid out in columns: back in order


# ---------------------------------------------------------------- the welcome


def test_no_project_yet_says_what_forge_does(fresh_app):
    at = fresh_app()
    text = _main_text(at)
    assert welcome.WHAT_FORGE_DOES in text
    for title, _ in welcome.STEPS:
        assert title in text
    assert "Create a project in the sidebar" in text
    assert not _starters(at)  # nothing to send a prompt to yet


def test_a_new_project_welcomes_with_steps_prompts_and_the_upload_hint(fresh_app):
    at = fresh_app()
    _create_project(at, "Fresh Shrink Pilot")
    text = _main_text(at)
    assert welcome.WHAT_FORGE_DOES in text
    assert [title in text for title, _ in welcome.STEPS] == [True, True, True]
    assert [b.label for b in _starters(at)] == list(welcome.STARTER_PROMPTS)
    hints = [i.value for i in at.main.info]
    assert any("Upload DOCX or Markdown" in h and "sidebar" in h for h in hints), hints

    # With a file uploaded the hint has done its job; the welcome stays until the first turn.
    at.sidebar.get("file_uploader")[0].upload("plan.md", PLAN, "text/markdown").run()
    assert not at.exception and not at.error
    assert not any("Upload DOCX or Markdown" in i.value for i in at.main.info)
    assert welcome.WHAT_FORGE_DOES in _main_text(at) and len(_starters(at)) == len(welcome.STARTER_PROMPTS)

    # The first message ends the welcome: the conversation takes the page.
    at.chat_input[0].set_value("How many stores are in the pilot?").run()
    assert not at.exception
    assert welcome.WHAT_FORGE_DOES not in _main_text(at) and not _starters(at)


def test_a_starter_prompt_is_sent_as_the_pms_message(fresh_app, services):
    at = fresh_app()
    _create_project(at, "Starter Pilot")
    prompt = welcome.STARTER_PROMPTS[1]
    [b for b in _starters(at) if b.label == prompt][0].click().run()
    assert not at.exception and not at.error
    assert [m.name for m in at.chat_message] == ["user", "assistant"]
    assert at.chat_message[0].markdown[0].value == prompt
    assert at.pills and at.pills[0].options[0] == "Question 1"  # a real reply, with its questions
    turns = Project.open(services, "starter-pilot").state().turns
    assert [t.user for t in turns] == [prompt]  # saved as the PM's own words, once
    assert not _starters(at)
    at.run()  # a later rerun sends nothing again
    assert len(Project.open(services, "starter-pilot").state().turns) == 1


# ---------------------------------------------------------------- plain words while files are prepared


def _entry(name: str, passages: int) -> ManifestEntry:
    return ManifestEntry(filename=name, file_id=name, uploaded_at="2026-01-01T00:00:00+00:00", chunk_count=passages,
                       status="indexed")


def test_preparing_labels_count_files_and_passages_in_plain_words():
    one = Manifest(file_summaries=[_entry("notes.md", 1)])
    assert welcome.preparing_label(Upkeep(missing_files=["notes.md"]), one) == "Preparing your files… (1 file, 1 passage)"
    two = Manifest(file_summaries=[_entry("a.md", 3), _entry("b.docx", 1200)])
    both = Upkeep(missing_files=["a.md", "b.docx"], unremembered=["t-1", "t-2"])
    assert welcome.preparing_label(both, two) == "Preparing your files… (2 files, 1,203 passages; 2 earlier turns)"
    # Another embedder's vectors: every file is prepared again, and no embedder is named.
    assert welcome.preparing_label(Upkeep(mismatch="all-MiniLM-L6-v2-onnx-int8/384", signature="voyage/512"),
                                   two) == "Preparing your files… (2 files, 1,203 passages)"
    assert welcome.preparing_label(Upkeep(stale_keywords=["documents"]), two) == "Preparing your files…"
    assert welcome.ready_label(one, 0) == "Your files are ready: 1 passage from 1 file."
    assert welcome.ready_label(two, 1) == "Your files are ready: 1,203 passages from 2 files. 1 earlier turn remembered."
    assert welcome.plain_stage("Indexing notes.md") == "Preparing notes.md"
    assert welcome.plain_stage("Re-indexing conversation") == "Remembering the conversation"


def test_the_app_prepares_a_fresh_clone_in_plain_words(fresh_app, isolated_env):
    _place_demo(isolated_env / "projects")
    manifest = Manifest.model_validate_json((SHIPPED_DEMO / "project_state.json").read_text())
    passages = sum(f.chunk_count for f in manifest.file_summaries)
    files = len(manifest.file_summaries)
    at = fresh_app()  # opens the demo, the only project: its copy has no vectors yet
    assert not at.error, [e.value for e in at.error]
    labels = [s.label for s in at.status]
    assert len(labels) == 1, labels
    assert labels[0].startswith(f"Your files are ready: {passages} passages from {files} file"), labels
    assert "earlier turns remembered" in labels[0]
    for jargon in ("vector store", "does not match", "onnx", "MiniLM", "/384", "1 files", "Caught up"):
        assert jargon not in labels[0]
    at.run()
    assert not at.status  # prepared once per session


# ---------------------------------------------------------------- the demo: a finished example, on a private copy


def test_the_shipped_demo_is_a_finished_example():
    manifest = Manifest.model_validate_json((SHIPPED_DEMO / "project_state.json").read_text())
    assert demo.is_example(SHIPPED_DEMO)
    indexed = [f.filename for f in manifest.file_summaries if f.indexed]
    assert indexed and all((SHIPPED_DEMO / "uploads" / name).is_file() for name in indexed)  # a clone can index them
    state = SessionState.model_validate_json((SHIPPED_DEMO / "state.json").read_text())
    brief = state.problem_brief
    assert brief.problem_statement and brief.target_audience and brief.stakeholders
    assert brief.success_metrics.leading and brief.success_metrics.lagging
    assert brief.decision_criteria.proceed_if and brief.decision_criteria.do_not_proceed_if
    assert len(state.assumptions) >= 2
    lines = (SHIPPED_DEMO / "turns.jsonl").read_text().splitlines()
    cited = [line for line in lines if '"sources":[{' in line]
    assert len(cited) >= 3  # answers that quote the interview file
    artifacts = {p.suffix for p in (SHIPPED_DEMO / "artifacts").iterdir() if not p.name.startswith(".")}
    assert {".md", ".docx", ".csv", ".json"} <= artifacts


def test_the_demo_opens_on_a_copy_and_reset_restores_it(fresh_app, isolated_env, services):
    committed = _place_demo(isolated_env / "projects")
    before = _tree(committed)
    at = fresh_app()
    assert at.sidebar.selectbox[0].value == "demo"
    text = _main_text(at)
    assert "This is a finished example" in text and welcome.WHAT_FORGE_DOES in text
    assert not _starters(at)  # the demo already has its conversation
    shipped_turns = len(at.chat_message)
    assert shipped_turns >= 6
    # The shipped conversation can be copied, not taken back: there is nothing of the PM's to undo.
    assert [b.label for b in at.main.button if b.label in ("Retry", "Edit message")] == []

    copy = isolated_env / "projects" / demo.COPIES / "demo"
    assert (copy / "state.json").is_file()
    at.chat_input[0].set_value("The bakery team already discounts bread after 4pm by hand.").run()
    assert not at.exception and not at.error
    assert len(at.chat_message) == shipped_turns + 2
    assert [b.label for b in at.main.button if b.label == "Retry"] == ["Retry"]  # the PM's own reply can be
    played = Project.open(services, "demo")
    assert played.ws.root == copy
    assert played.state().turn_count == shipped_turns // 2 + 1

    [b for b in at.main.button if b.label == "Reset demo"][0].click().run()
    assert not at.exception and not at.error
    assert any("back as shipped" in s.value for s in at.main.success)
    assert len(at.chat_message) == shipped_turns
    for name in ("turns.jsonl", "context.md", "uploads/store-interviews-q3.md"):
        assert (copy / name).read_bytes() == (committed / name).read_bytes(), name
    assert _session(copy) == _session(committed)  # as shipped, but for when it was last saved
    reopened = Project.open(services, "demo")
    assert reopened.state().turn_count == shipped_turns // 2
    assert reopened.store.memory.turn_ids() == {t.id for t in reopened.state().turns}  # the played turn is forgotten
    assert reopened.reindex_reason() is None
    assert _tree(committed) == before  # the committed example never changed, not even a lock file


def _forge(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items()
           if k not in ("ANTHROPIC_API_KEY", "VOYAGE_API_KEY", "CHROMA_HOST", "CHROMA_PORT")}
    env.update(FORGE_PROJECTS_DIR=str(cwd / "projects"), FORGE_LLM="offline", FORGE_EMBEDDINGS="local",
               PYTHONPATH=f"{ROOT / 'src'}{os.pathsep}{ROOT}")
    return subprocess.run([sys.executable, "-m", "pmforge.surfaces.cli", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600)


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_chatting_with_the_demo_from_a_clone_leaves_git_status_clean(isolated_env):
    repo = isolated_env / "clone"
    repo.mkdir()
    shutil.copy(ROOT / ".gitignore", repo / ".gitignore")
    committed = _place_demo(repo / "projects")
    for args in (("init", "-q", "-b", "main"), ("config", "user.email", "pm@example.com"),
                 ("config", "user.name", "PM"), ("add", "-A"), ("commit", "-qm", "clone")):
        _git(repo, *args)
    before = _tree(committed)

    shipped = sum('"patch"' not in line for line in (committed / "turns.jsonl").read_text().splitlines())
    said = _forge(repo, "chat", "demo", "-m", "Regional directors review shrink monthly, but nobody owns it.",
                  "--verbose")
    assert said.returncode == 0, said.stderr
    assert f"[turn {shipped + 1} " in said.stderr  # the shipped conversation goes on
    assert _forge(repo, "brief", "demo", "--kind", "register", "--format", "csv").returncode == 0

    assert _git(repo, "status", "--porcelain", "--untracked-files=all") == ""
    assert _tree(committed) == before
    copy = repo / "projects" / demo.COPIES / "demo"
    assert len((copy / "turns.jsonl").read_text().splitlines()) > len((committed / "turns.jsonl").read_text().splitlines())
    assert [line.split("\t")[0] for line in _forge(repo, "projects").stdout.splitlines()] == ["demo"]


def test_an_ordinary_project_called_demo_is_not_redirected(services):
    created = Project.create(services, "Demo")
    assert not demo.is_example(created.ws.root)
    assert Project.open(services, "demo").ws.root == created.ws.root
    assert not (services.projects_root / demo.COPIES).exists()


def test_a_copy_has_its_own_project_id_and_is_made_once(isolated_env):
    committed = _place_demo(isolated_env / "projects")
    copy = demo.working_folder(committed)
    assert copy == committed.parent / demo.COPIES / "demo"
    ids = {Manifest.model_validate_json((f / "project_state.json").read_text()).project_id for f in (committed, copy)}
    assert len(ids) == 2  # its vectors on a shared server are its own
    (copy / "mine.txt").write_text("kept")
    assert demo.working_folder(committed) == copy and (copy / "mine.txt").exists()  # not copied again
    assert not (copy / demo.EXAMPLE_MARKER).exists() and demo.example_of(copy) == committed
    assert demo.example_of(committed) is None


def test_renaming_the_demo_renames_its_copy_and_the_picker_shows_it(isolated_env):
    committed = _place_demo(isolated_env / "projects")
    before = _tree(committed)
    assert display_names(isolated_env / "projects")["demo"]  # listing makes no copy
    assert not demo.copy_of(committed).exists()
    Workspace.open(isolated_env / "projects", "demo").rename("My store pilot")
    assert display_names(isolated_env / "projects")["demo"] == "My store pilot"
    assert _tree(committed) == before


def test_a_changed_example_refreshes_an_unplayed_copy_keeps_a_played_one_with_a_word_and_a_gone_one_stays(
        isolated_env):
    from forge_cli import run_forge

    projects = isolated_env / "projects"
    committed = _place_demo(projects)
    env = {"FORGE_PROJECTS_DIR": str(projects), "FORGE_LLM": "offline", "FORGE_EMBEDDINGS": "local"}

    def forge(*args: str) -> subprocess.CompletedProcess:
        return run_forge(isolated_env, *args, env=env)

    copy = demo.working_folder(committed)
    # A pull changes the shipped demo: a copy the PM only opened is made again from the new version.
    (committed / "context.md").write_text("The shipped demo, second edition.\n", encoding="utf-8")
    assert forge("files", "demo").returncode == 0
    assert (copy / "context.md").read_text(encoding="utf-8") == "The shipped demo, second edition.\n"

    # Played, then changed again: the PM's copy is kept as it is, and they are told once.
    assert forge("chat", "demo", "-m", "Regional directors review shrink monthly.").returncode == 0
    played = (copy / "turns.jsonl").read_bytes()
    (committed / "context.md").write_text("The shipped demo, third edition.\n", encoding="utf-8")
    opened = forge("files", "demo")
    assert opened.returncode == 0 and "The shipped example 'demo' has changed since you started playing it" in (
        opened.stderr)
    assert (copy / "turns.jsonl").read_bytes() == played
    assert "has changed" not in forge("files", "demo").stderr  # said once

    # A pull removes the shipped demo: the played copy is still a project, under its name, with a word.
    shutil.rmtree(committed)
    assert [line.split("\t")[0] for line in forge("projects").stdout.splitlines()] == ["demo"]
    chat = forge("chat", "demo", "-m", "Store managers print the labels.")
    assert chat.returncode == 0, chat.stderr
    assert "The shipped example 'demo' is no longer in this copy of the repository" in chat.stderr
    assert b"Store managers print the labels." in (copy / "turns.jsonl").read_bytes()
