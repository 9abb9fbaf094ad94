"""Projects a PM can manage: display names in lists and the picker, rename (the folder keeps its slug), and
delete-project (folder and vectors: embedded, or the project's collections on a real `chroma run` server,
under its lease) — through the real `forge` command and the real app under AppTest."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from chroma_server import ChromaServer
from conftest import as_shown
from docs import PLAN
from forge_cli import run_forge
from pmforge.core.workspace import Workspace, display_name, picker_labels
from pmforge.index.client import http_client
from pmforge.index.collections import Clone, Lease, ProjectStore
from pmforge.index.retrieval import Query, find_sections
from pmforge.ingest.pipeline import ingest_file
from pmforge.project.project import Project, delete_project

ROOT = Path(__file__).parents[1]


def _env(tmp: Path, **extra) -> dict:
    env = {**os.environ, "FORGE_PROJECTS_DIR": str(tmp / "projects"), "FORGE_LLM": "offline",
           "FORGE_EMBEDDINGS": os.environ.get("FORGE_EMBEDDINGS", "local"), "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}"}
    for var in ("ANTHROPIC_API_KEY", "VOYAGE_API_KEY", "CHROMA_HOST", "CHROMA_PORT"):
        env.pop(var, None)
    return {**env, **extra}


def forge(tmp: Path, *args: str, **extra) -> subprocess.CompletedProcess:
    """The real `forge` command (run in this process), offline, with the test's projects folder and exactly
    the environment a subprocess would get; stdin is not a terminal."""
    wanted = _env(tmp, **extra)
    return run_forge(tmp, *args, env={**{name: None for name in os.environ if name not in wanted}, **wanted})


def forge_on_a_terminal(tmp: Path, typed: str, *args: str, **extra) -> subprocess.CompletedProcess:
    """`forge` with a terminal as stdin, on which the PM types `typed` and Enter."""
    main, terminal = pty.openpty()
    try:
        proc = subprocess.Popen([sys.executable, "-m", "pmforge.surfaces.cli", *args], cwd=tmp, env=_env(tmp, **extra),
                                stdin=terminal, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        os.close(terminal)
        os.write(main, typed.encode() + b"\n")
        out, err = proc.communicate(timeout=300)
    finally:
        os.close(main)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def listed(done: subprocess.CompletedProcess) -> list[list[str]]:
    assert done.returncode == 0, done.stderr
    return [line.split("\t") for line in done.stdout.splitlines()]


# ---------------------------------------------------------------- display names

def test_display_name_falls_back_to_the_session_name_then_the_slug():
    assert display_name("Fresh Shrink Pilot", "old", "fresh-shrink-pilot") == "Fresh Shrink Pilot"
    assert display_name("", "Пилот 2024", "pilot-2024-ec1f408e") == "Пилот 2024"  # before names were kept
    assert display_name(" ", "", "pilot") == "pilot"
    assert picker_labels({"a": "Pilot", "b": "pilot", "c": "Other"}) == {"a": "Pilot (a)", "b": "pilot (b)",
                                                                         "c": "Other"}


def test_forge_projects_lists_slug_and_display_name(isolated_env):
    tmp = isolated_env
    for name in ("Fresh Shrink Pilot", "Пилот 2024", "Older"):
        assert forge(tmp, "new", name).returncode == 0
    older = tmp / "projects" / "older"
    manifest = json.loads((older / "project_state.json").read_text())
    manifest.pop("display_name")  # a project made before the manifest kept its name
    (older / "project_state.json").write_text(json.dumps(manifest))
    rows = listed(forge(tmp, "projects"))
    assert sorted(rows) == sorted([["fresh-shrink-pilot", "Fresh Shrink Pilot"],
                                   [Workspace.open(tmp / "projects", "Пилот 2024").slug, "Пилот 2024"],
                                   ["older", "Older"]])  # the session's name stands in
    (older / "state.json").write_text("{ not json")  # a damaged file never stops the list
    assert ["older", "older"] in listed(forge(tmp, "projects"))


# ---------------------------------------------------------------- rename

def test_rename_changes_the_display_name_and_keeps_the_folder(isolated_env):
    tmp = isolated_env
    assert forge(tmp, "new", "Fresh Shrink Pilot").returncode == 0
    assert forge(tmp, "new", "Bakery").returncode == 0
    done = forge(tmp, "rename", "fresh-shrink-pilot", "Shrink pilot — Midwest")
    assert done.returncode == 0, done.stderr
    assert "'Shrink pilot — Midwest'" in done.stdout and "stay 'fresh-shrink-pilot'" in done.stdout
    assert ["fresh-shrink-pilot", "Shrink pilot — Midwest"] in listed(forge(tmp, "projects"))
    root = tmp / "projects" / "fresh-shrink-pilot"
    assert json.loads((root / "state.json").read_text())["project_name"] == "Shrink pilot — Midwest"
    assert not (tmp / "projects" / "shrink-pilot-midwest").exists()
    brief = forge(tmp, "brief", "fresh-shrink-pilot", "--format", "md")  # commands still take the slug
    assert brief.returncode == 0, brief.stderr
    assert "Shrink pilot — Midwest" in Path(brief.stdout.strip()).read_text()
    by_name = forge(tmp, "files", "shrink PILOT — midwest")  # ...and so does the new name, in any case
    assert by_name.returncode == 0, by_name.stderr

    for args, said in ((("fresh-shrink-pilot", "  "), "A project name needs at least one letter or digit."),
                       (("fresh-shrink-pilot", "bakery"), "Project 'bakery' already goes by that name; pick "
                                                           "another, or rename that one first."),
                       (("nope", "X"), "There is no project called 'nope' (`forge projects` lists them).")):
        done = forge(tmp, "rename", *args)
        assert done.returncode == 1 and done.stderr.strip() == said
    assert ["fresh-shrink-pilot", "Shrink pilot — Midwest"] in listed(forge(tmp, "projects"))


# ---------------------------------------------------------------- delete-project, embedded store

def test_delete_project_removes_the_folder_and_its_embedded_vectors(isolated_env):
    tmp = isolated_env
    (tmp / "plan.md").write_bytes(PLAN)
    assert forge(tmp, "new", "Pilot").returncode == 0
    assert forge(tmp, "new", "Bakery").returncode == 0
    assert forge(tmp, "ingest", "pilot", str(tmp / "plan.md")).returncode == 0
    assert (tmp / "projects" / "pilot" / "vectordb" / "chroma.sqlite3").exists()

    done = forge(tmp, "delete-project", "pilot", "--yes")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Deleted project 'Pilot' (pilot): its folder and its embedded vector store."
    assert sorted(p.name for p in (tmp / "projects").iterdir()) == ["bakery"]  # nothing left aside either
    assert listed(forge(tmp, "projects")) == [["bakery", "Bakery"]]
    done = forge(tmp, "delete-project", "pilot", "--yes")
    assert done.returncode == 1 and done.stderr.strip() == ("There is no project called 'pilot' (`forge projects` "
                                                            "lists them).")


def test_delete_project_asks_on_a_terminal_and_refuses_without_one(isolated_env):
    tmp = isolated_env
    assert forge(tmp, "new", "Pilot").returncode == 0
    root = tmp / "projects" / "pilot"

    done = forge(tmp, "delete-project", "pilot")  # stdin is no terminal: one sentence, nothing deleted
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.strip() == ("Deleting project 'pilot' needs a typed confirmation, and there is no terminal "
                                   "to ask on; add --yes to delete it anyway.")
    assert root.exists()

    done = forge_on_a_terminal(tmp, "pilto", "delete-project", "pilot")
    assert done.returncode == 1 and root.exists()
    assert "Deleting 'Pilot' removes its folder" in done.stderr and "Type the project's name (pilot)" in done.stderr
    assert done.stderr.strip().endswith("Nothing was deleted: what you typed is not 'pilot'.")
    assert "Chroma server" not in done.stderr  # embedded: no other clone shares these vectors

    done = forge_on_a_terminal(tmp, "Pilot", "delete-project", "pilot")  # the display name does too
    assert done.returncode == 0, done.stderr
    assert not root.exists()


def test_a_project_deleted_and_made_again_in_one_process_starts_afresh(services, isolated_env):
    """The app keeps its projects open across reruns: the deleted project's embedded store must not be
    reused for a project made later under the same name."""
    first = Project.create(services, "Pilot")
    assert ingest_file(first, "plan.md", PLAN).ok
    assert delete_project(services, "pilot").startswith("Deleted project 'Pilot'")

    again = Project.create(services, "Pilot")
    assert again.store.documents.file_ids() == set() and again.manifest().file_summaries == []
    assert ingest_file(again, "notes.md", b"# Notes\n\nThe Quetzal scanner pilot starts in May.\n").ok
    found = find_sections(again.store, Query("When does the scanner pilot start?", services.embedder), 2000,
                          "hybrid", services.settings)
    assert [s.filename for s in found] == ["notes.md"]
    # What a fresh process reads from disk: the new store holds the new file, and agrees with the manifest.
    done = forge(isolated_env, "doctor", "pilot", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["totals"]["indexed_files"] == 1


# ---------------------------------------------------------------- delete-project on a Chroma server

@pytest.fixture(scope="module")
def chroma(tmp_path_factory):
    with ChromaServer(tmp_path_factory.mktemp("projects-chroma") / "db") as server:
        yield server


def _prefix(root: Path) -> str:
    project_id = json.loads((root / "project_state.json").read_text())["project_id"]
    return f"forge-{root.name[:40]}-{project_id}-"


def test_delete_project_on_a_chroma_server_drops_only_its_collections(isolated_env, chroma):
    tmp = isolated_env
    server = {"CHROMA_HOST": chroma.host, "CHROMA_PORT": str(chroma.port)}
    client = http_client(chroma.host, chroma.port)
    (tmp / "plan.md").write_bytes(PLAN)
    for name in ("Pilot", "Bakery"):
        assert forge(tmp, "new", name, **server).returncode == 0
        done = forge(tmp, "ingest", name.lower(), str(tmp / "plan.md"), **server)
        assert done.returncode == 0, done.stderr
    pilot, bakery = (_prefix(tmp / "projects" / slug) for slug in ("pilot", "bakery"))

    def names(prefix: str) -> set[str]:
        return {c.name[len(prefix):] for c in client.list_collections() if c.name.startswith(prefix)}

    assert {"documents", "document_parents", "registry"} <= names(pilot)
    bakery_before = {n: client.get_collection(bakery + n).count() for n in names(bakery)}

    # The confirmation says other clones may still use the shared collections.
    done = forge_on_a_terminal(tmp, "no", "delete-project", "pilot", **server)
    assert done.returncode == 1
    assert f"on the shared Chroma server at {chroma.host}:{chroma.port} go too: other clones" in done.stderr

    # Another clone holds the project's lease (rebuilding its vectors): nothing is deleted.
    other = ProjectStore(client, "any", keyword_dir=tmp / "other-clone", prefix=pilot,
                         clone=Clone("c-other", "Dana"))
    lease = Lease(other, "rebuilding", 600)
    lease.take()
    done = forge(tmp, "delete-project", "pilot", "--yes", **server)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "Another clone of this project (Dana) is rebuilding the shared vector store" in done.stderr
    assert (tmp / "projects" / "pilot").exists() and "documents" in names(pilot)
    lease.release()

    done = forge(tmp, "delete-project", "pilot", "--yes", **server)
    assert done.returncode == 0, done.stderr
    assert f"collections on the Chroma server at {chroma.host}:{chroma.port}" in done.stdout
    assert names(pilot) == set()  # the registry (claims and lease) included
    assert not (tmp / "projects" / "pilot").exists()
    assert {n: client.get_collection(bakery + n).count() for n in names(bakery)} == bakery_before
    assert forge(tmp, "files", "bakery", **server).stdout.startswith("plan.md\t")


# ---------------------------------------------------------------- the app's sidebar

def _popover(at: AppTest, label: str):
    return next(p for p in at.sidebar.get("popover") if p.proto.popover.label == label)


def _button(at: AppTest, label: str):
    return next(b for b in at.sidebar.button if b.label == label)


def _create(at: AppTest, name: str) -> None:
    if at.sidebar.selectbox:
        at.session_state["new_project_menu"] = True  # the PM opens the "New" menu
        at.run()
    at.sidebar.text_input(key="new_project_name").set_value(name)
    _button(at, "Create project").click().run()
    assert not at.exception, at.exception


def test_picker_shows_display_names_and_the_create_form_folds_away(app: AppTest):
    assert app.sidebar.text_input(key="new_project_name").label == "Project name"  # no project yet: shown
    _create(app, "Fresh Shrink Pilot")
    picker = app.sidebar.selectbox[0]
    assert picker.value == "fresh-shrink-pilot" and picker.options == ["Fresh Shrink Pilot"]
    assert _popover(app, "New").proto.popover.open is False  # the form is folded into a closed menu

    _create(app, "Пилот 2024")
    assert _popover(app, "New").proto.popover.open is False  # and closes again once used
    picker = app.sidebar.selectbox[0]
    assert picker.options == ["Пилот 2024", "Fresh Shrink Pilot"] and picker.value.startswith("pilot-2024-")
    assert not app.sidebar.error


def test_rename_from_the_sidebar(app: AppTest, isolated_env):
    _create(app, "Fresh Shrink Pilot")
    app.session_state["rename_project_menu"] = True
    app.run()
    box = app.sidebar.text_input(key="rename-fresh-shrink-pilot")
    assert box.value == "Fresh Shrink Pilot"
    box.set_value("Shrink pilot, Midwest")
    _button(app, "Rename").click().run()
    assert not app.exception and not app.sidebar.error
    picker = app.sidebar.selectbox[0]
    assert picker.value == "fresh-shrink-pilot" and picker.options == ["Shrink pilot, Midwest"]
    assert _popover(app, "Rename").proto.popover.open is False
    assert [as_shown(t.value) for t in app.toast] == ["Renamed to 'Shrink pilot, Midwest'; its folder stays "
                                            "'fresh-shrink-pilot'."]
    assert (isolated_env / "projects" / "fresh-shrink-pilot" / "state.json").exists()
    assert as_shown(app.title[0].value) == "Shrink pilot, Midwest"  # the session's name followed


def test_delete_from_the_sidebar_asks_then_opens_another_project(app: AppTest, isolated_env):
    projects = isolated_env / "projects"
    _create(app, "Alpha")
    _create(app, "Beta")
    app.sidebar.get("file_uploader")[0].upload("plan.md", PLAN, "text/markdown").run()
    assert app.sidebar.selectbox[0].value == "beta"

    app.session_state["delete_project_menu"] = True
    app.run()
    assert "Deleting 'Beta' removes its folder" in app.sidebar.info[0].value
    app.sidebar.text_input(key="delete-beta").set_value("Alpha")  # not this project's name
    _button(app, "Delete project").click().run()
    assert [as_shown(e.value) for e in app.sidebar.error] == [
        "Nothing was deleted: type 'Beta' to delete this project."]
    assert (projects / "beta").exists()

    app.sidebar.text_input(key="delete-beta").set_value("beta")
    _button(app, "Delete project").click().run()
    assert not app.exception and not app.sidebar.error
    assert not (projects / "beta").exists()
    assert app.sidebar.selectbox[0].value == "alpha"  # another project opens
    assert app.sidebar.selectbox[0].options == ["Alpha"]
    assert _popover(app, "Delete…").proto.popover.open is False
    assert [as_shown(t.value) for t in app.toast] == ["Deleted project 'Beta' (beta): its folder and its embedded "
                                            "vector store."]

    # Made again under the same name, it is a fresh project (no cached one from before the delete).
    _create(app, "Beta")
    assert app.sidebar.selectbox[0].value == "beta"
    assert "plan.md" not in " ".join(m.value for m in app.sidebar.markdown)
    app.sidebar.get("file_uploader")[0].upload("plan.md", PLAN, "text/markdown").run()
    assert not app.exception and [as_shown(s.value) for s in app.sidebar.success] == ["Indexed plan.md: 1 passage in 1 "
                                                                           "section."]

    for slug in ("beta", "alpha"):  # deleting the last project leaves the empty state
        app.session_state["delete_project_menu"] = True
        app.run()
        app.sidebar.text_input(key=f"delete-{slug}").set_value(slug)
        _button(app, "Delete project").click().run()
        assert not app.exception
    assert not app.sidebar.selectbox and not list(projects.iterdir())
    assert app.sidebar.text_input(key="new_project_name").label == "Project name"
