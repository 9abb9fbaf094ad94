"""Hostile and pathological uploads, through the real pipeline (offline embedder, real Chroma, real
MarkItDown in its worker process, DOCX files built here).

- a refused or failed replacement leaves the previous version exactly as it was; a crash in the middle
  of a replacement is finished or rolled back when the project is next opened;
- a paste never overwrites the PM's own file named like one;
- files built to hang or exhaust ingestion finish (indexed or refused, in one sentence) within the
  hard limit of 60 s, and the project answers afterwards;
- a DOCX declaring external entities is read by the plain reader with nothing fetched;
- credentials and unreadable types are refused without their bytes ever reaching the workspace.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

import broken_files as bf
from forge_cli import run_forge
from pmforge.ingest.chunk import ChunkSizes, TableHeaders, chunk_markdown
from pmforge.ingest.pipeline import ingest_file
from pmforge.project.project import Project
from pmforge.project.services import Services
from pmforge.surfaces.cli import main as forge
from pmforge.turn.orchestrator import run_turn

HARD_LIMIT_S = 60  # the requirement: every pathological file finishes (indexed or refused) within it
FACT = "The Marigold freezer audit found 314 unlabelled trays in the Dayton stores."
REPO = Path(__file__).resolve().parents[1]


# ---------------------------------------------------------------- helpers

def md(title: str, *paragraphs: str) -> bytes:
    return ("# " + title + "\n\n" + "\n\n".join(paragraphs) + "\n").encode("utf-8")


def assert_one_sentence(message: str) -> None:
    assert message and len(message) < 300, message
    assert "\n" not in message and "Traceback" not in message, message
    ends = re.findall(r"[.!?](?=\s|$)", message)
    assert len(ends) == 1 and message.rstrip().endswith(ends[0]), message


def uploads(project: Project) -> set[str]:
    """Everything in uploads/, hidden files included."""
    return {p.name for p in project.ws.uploads.iterdir() if p.name != ".gitkeep"}


def snapshot(project: Project, filename: str) -> dict:
    """All there is of one file: manifest entry, upload, converted text, stored passages."""
    entry = project.manifest().find(filename)
    return {
        "entry": entry,
        "upload": (project.ws.uploads / entry.filename).read_bytes(),
        "converted": project.ws.converted_path(entry.filename).read_bytes(),
        "documents": project.store.ids("documents"),
        "parents": project.store.ids("document_parents"),
        "keyword": project.store.keyword("documents").ids(),
    }


def assert_still_usable(project: Project, capsys) -> None:
    """The project takes a small upload and lists its files from the CLI after a hostile one."""
    result = ingest_file(project, "after.md", md("After", "A small note uploaded after the hostile file."))
    assert result.ok, result.message
    capsys.readouterr()
    assert forge(["files", project.ws.slug]) == 0
    assert "after.md" in capsys.readouterr().out


def timed_ingest(project: Project, filename: str, data: bytes):
    started = time.monotonic()
    result = ingest_file(project, filename, data)
    elapsed = time.monotonic() - started
    assert elapsed < HARD_LIMIT_S, f"{filename} took {elapsed:.0f} s"
    return result


# ---------------------------------------------------------------- atomic replacement

REFUSED_REPLACEMENTS = [
    pytest.param("plan.md", md("Plan", FACT), lambda: b"", "is empty", id="empty-md-over-md"),
    pytest.param("plan.md", md("Plan", FACT), lambda: bf.random_blob(20_000), "not text", id="junk-over-md"),
    pytest.param("plan.docx", bf.plain_docx("Plan notes: " + FACT), bf.truncated_docx, "not a valid Word",
                 id="truncated-docx-over-docx"),
    pytest.param("plan.docx", bf.plain_docx("Plan notes: " + FACT), bf.empty_docx, "no text", id="empty-docx-over-docx"),
]


@pytest.mark.parametrize("name, good, build_bad, expect", REFUSED_REPLACEMENTS)
def test_a_refused_replacement_leaves_the_previous_version_exactly_as_it_was(project: Project, name, good,
                                                                              build_bad, expect):
    assert ingest_file(project, name, good).ok
    before = snapshot(project, name)
    result = ingest_file(project, name, build_bad())
    assert not result.ok
    assert_one_sentence(result.message)
    assert expect in result.message and "previous version" in result.message, result.message
    assert snapshot(project, name) == before
    assert uploads(project) == {name}  # the refused bytes were not left behind, not even hidden
    hits = project.store.documents.search_documents(project.services.embedder.embed_query("unlabelled trays freezer audit"), 8, 2)
    assert any("314 unlabelled trays" in h.text for h in hits)


def test_a_good_replacement_swaps_upload_text_and_passages_together(project: Project):
    assert ingest_file(project, "plan.md", md("Plan", FACT)).ok
    old = snapshot(project, "plan.md")
    result = ingest_file(project, "plan.md", md("Plan", "Version two: the pilot moved to May."))
    assert result.ok and result.message.startswith("Replaced")
    new = snapshot(project, "plan.md")
    assert b"Version two" in new["upload"] and b"Version two" in new["converted"]
    assert not (new["documents"] & old["documents"]) and new["documents"] == new["keyword"]
    assert uploads(project) == {"plan.md"}


CRASH = textwrap.dedent("""
    import json, os, signal, sys
    from pmforge.core.settings import get_settings
    from pmforge.ingest import pipeline
    from pmforge.project.project import Project
    from pmforge.project.services import Services

    step, slug = sys.argv[1], "crash"
    services = Services.from_settings(get_settings())
    if step == "create":
        project = Project.create(services, slug)
        assert pipeline.ingest_file(project, "plan.md", open(sys.argv[2], "rb").read()).ok
    elif step in ("before-swap", "after-upload"):
        project = Project.open(services, slug)
        put = pipeline._put_upload

        def killed(*args, **kwargs):
            if step == "after-upload":
                put(*args, **kwargs)
            os.kill(os.getpid(), signal.SIGKILL)

        pipeline._put_upload = killed
        pipeline.ingest_file(project, "plan.md", open(sys.argv[2], "rb").read())
    else:
        from pmforge.upkeep import doctor
        project = Project.open(services, slug)
        recovered = project.recovered if hasattr(project, "recovered") else None
        if step == "repair":
            doctor.repair(project)
        entry = project.manifest().find("plan.md")
        print(json.dumps({"recovered": recovered, "entry": entry.model_dump(),
                          "documents": sorted(project.store.ids("documents")),
                          "consistent": doctor.examine(project).consistent}))
""")


def _child(isolated_env: Path, *args: str, expect_kill: bool = False) -> str:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO)])}
    done = subprocess.run([sys.executable, "-c", CRASH, *args], env=env, cwd=isolated_env, capture_output=True,
                          text=True, timeout=300)
    if expect_kill:
        assert done.returncode == -9, done.stderr
    else:
        assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_crash_before_the_swap_rolls_back_to_the_previous_version(isolated_env: Path):
    old, new = isolated_env / "old.md", isolated_env / "new.md"
    old.write_bytes(md("Plan", FACT))
    new.write_bytes(md("Plan", "Version two: the pilot moved to May and grew to nine stores."))
    _child(isolated_env, "create", str(old))
    before = json.loads(_child(isolated_env, "check"))
    root = isolated_env / "projects" / "crash"
    converted = (root / "converted" / "plan.md.md").read_bytes()

    _child(isolated_env, "before-swap", str(new), expect_kill=True)  # the new version is indexed, not swapped
    staged = [p for p in (root / "uploads").iterdir() if p.name.startswith(".plan.md.")]
    assert staged and (root / ".operation.json").exists()
    for path in staged:  # as if the crash happened a while ago (younger temp files may be a live writer's)
        os.utime(path, (time.time() - 3600, time.time() - 3600))

    after = json.loads(_child(isolated_env, "check"))
    assert after["recovered"] == "upload plan.md"
    assert after["entry"] == before["entry"] and after["documents"] == before["documents"]
    assert after["consistent"]
    assert (root / "uploads" / "plan.md").read_bytes() == old.read_bytes()
    assert (root / "converted" / "plan.md.md").read_bytes() == converted
    assert {p.name for p in (root / "uploads").iterdir()} == {".gitkeep", "plan.md"}


def test_a_crash_after_the_new_upload_is_in_place_is_finished_by_forge_doctor(isolated_env: Path):
    old, new = isolated_env / "old.md", isolated_env / "new.md"
    old.write_bytes(md("Plan", FACT))
    new.write_bytes(md("Plan", "Version two: the pilot moved to May and grew to nine stores."))
    _child(isolated_env, "create", str(old))
    _child(isolated_env, "after-upload", str(new), expect_kill=True)
    root = isolated_env / "projects" / "crash"
    assert (root / "uploads" / "plan.md").read_bytes() == new.read_bytes()

    after = json.loads(_child(isolated_env, "repair"))
    assert after["consistent"] and after["entry"]["status"] == "indexed"
    assert after["entry"]["sha256"] == __import__("hashlib").sha256(new.read_bytes()).hexdigest()
    assert b"Version two" in (root / "converted" / "plan.md.md").read_bytes()


# ---------------------------------------------------------------- pastes and uploads never collide

def test_a_long_paste_never_overwrites_the_pms_own_file_named_like_a_paste(project: Project):
    own = md("My pasted notes", "Dana says the Duluth store reprices bread at 6pm on weekends.")
    result = ingest_file(project, "pasted-turn-1.md", own)
    assert result.ok and result.filename == "upload-pasted-turn-1.md", result.message
    assert ingest_file(project, "Pasted-Turn-2.md", own.replace(b"Dana", b"Lee")).filename == "upload-Pasted-Turn-2.md"

    paste = "# Interview dump\n\n" + "\n\n".join(
        f"Interview {n}: the store manager in town {n} says markdown labels come too late." for n in range(60))
    assert len(paste) > project.settings.paste_threshold_chars
    run_turn(project, paste)  # turn 1: its paste is saved as pasted-turn-1.md

    ws = project.ws
    assert (ws.uploads / "upload-pasted-turn-1.md").read_bytes() == own
    assert (ws.uploads / "pasted-turn-1.md").read_text(encoding="utf-8") == paste
    names = {f.filename: f for f in project.manifest().file_summaries}
    assert names["upload-pasted-turn-1.md"].indexed and names["pasted-turn-1.md"].indexed
    # Forge reading a paste back from uploads/ (forge doctor) keeps its name: same bytes, nothing replaced.
    again = ingest_file(project, "pasted-turn-1.md", (ws.uploads / "pasted-turn-1.md").read_bytes())
    assert again.ok and again.filename == "pasted-turn-1.md" and "nothing changed" in again.message


# ---------------------------------------------------------------- pathological files, through the pipeline

HOSTILE = [
    pytest.param("one-line.md", lambda: bf.one_line_markdown(5_000_000), "characters of text", id="5mb-one-line"),
    pytest.param("noise.md", lambda: bf.random_blob(5_000_000), "not text", id="5mb-random-bytes-md"),
    pytest.param("noise2.md", lambda: bf.random_blob(2_000_000, seed=9), "not text", id="2mb-random-bytes-md"),
    pytest.param("nul.md", lambda: md("Plan", FACT).replace(b" ", b"\x00"), "not text", id="nul-bytes-md"),
    pytest.param("quotes.md", lambda: bf.nested_quotes(5000), None, id="5000-nested-quotes"),
    pytest.param("headings.md", lambda: bf.many_headings(20_000), None, id="20000-headings"),
    pytest.param("huge.docx", lambda: bf.docx_unpacking_to(150), "characters of text", id="docx-unpacking-to-150mb"),
    pytest.param("slow.docx", lambda: bf.docx_with_paragraphs(50_000), "characters of text",
                 id="docx-markitdown-cannot-finish"),
]


@pytest.fixture
def quick_conversion_limit(isolated_env, monkeypatch):
    """The conversion worker's time limit at 5 s instead of 20: the same path (the worker stopped, the plain
    reader's turn, a refusal), a quarter of the wait."""
    from pmforge.core import settings as config

    monkeypatch.setenv("FORGE_CONVERT_TIMEOUT_S", "5")
    config.get_settings.cache_clear()


@pytest.mark.parametrize("filename, build, refused_because", HOSTILE)
def test_a_pathological_file_finishes_within_the_hard_limit(quick_conversion_limit, project: Project, capsys,
                                                            filename, build, refused_because):
    result = timed_ingest(project, filename, build())
    assert_one_sentence(result.message)
    if refused_because is None:
        assert result.ok, result.message
    else:
        assert not result.ok and refused_because in result.message, result.message
        entry = project.manifest().find(filename)
        assert entry.status == f"not indexed: {result.message}" and not project.ws.converted_path(filename).exists()
        assert project.store.documents.file_ids() == set()
    assert_still_usable(project, capsys)


def test_markdown_in_another_legacy_encoding_is_still_text(project: Project):
    """The binary check must not refuse ordinary Windows-1252 text (accents, curly quotes, the euro)."""
    body = "# Café plan\n\nThe “naïve” forecast costs 12 € per store — déjà vu for the Zürich team.\n" * 50
    result = ingest_file(project, "cafe.md", body.encode("cp1252"))
    assert result.ok and "Windows-1252" in result.entry.note, result.message


def test_a_docx_markitdown_cannot_convert_within_budget_is_read_by_the_plain_reader(project: Project, monkeypatch):
    monkeypatch.setenv("FORGE_CONVERT_MEMORY_MB", "200")  # MarkItDown's own imports need about 400 MB
    from pmforge.core import settings as config

    config.get_settings.cache_clear()
    small = Project.open(Services.from_settings(config.get_settings()), project.ws.slug)
    result = ingest_file(small, "review.docx", bf.rich_docx(FACT, table_rows=8))
    assert result.ok, result.message
    assert "plain" in result.entry.note
    text = small.ws.converted_path("review.docx").read_text(encoding="utf-8")
    assert "# Markdown Pilot Review" in text and "### Findings in Dayton" in text and FACT in text
    assert "| Store | City | Department | Shrink % |" in text
    assert "- Bakery counts unsold bread at 4pm" in text


def test_chunking_is_linear_on_pathological_markdown():
    """Chunking alone, on inputs as large as the upload caps let through (1,000,000 characters): each finishes
    within the hard limit, leaves stay within their size and every offset is exact."""
    sizes = ChunkSizes()
    cases = {
        "1 MB on one line": bf.one_line_markdown(1_000_000).decode(),
        "a heading line of 1 MB of '# '": "# " + "# " * 500_000 + "x\n",
        "5,000 nested quotes": bf.nested_quotes(5000).decode(),
        "20,000 headings": bf.many_headings(20_000).decode(),
        "a 1 MB inline image": "![chart](data:image/png;base64," + "iVBORw0KGgo" * 90_000 + ")\n",
        "a 20,000-row table": "| Store | Shrink |\n| --- | --- |\n" + "".join(f"| {i} | {i % 9}.5 |\n" for i in range(20_000)),
    }
    for name, text in cases.items():
        started = time.monotonic()
        parents = chunk_markdown(text, sizes)
        tables = TableHeaders(text)
        headers = [tables.at(leaf.start) for p in parents for leaf in p.leaves]
        elapsed = time.monotonic() - started
        assert elapsed < HARD_LIMIT_S, f"{name}: {elapsed:.0f} s"
        assert parents, name
        for parent in parents:
            assert all(len(title) <= 200 for title in parent.path), name
            for leaf in parent.leaves:
                assert text[leaf.start : leaf.end] == leaf.text
                assert leaf.tokens <= sizes.leaf_max + 5, (name, leaf.tokens)
        if "table" in name:
            assert sum(1 for h in headers if h == "| Store | Shrink |\n| --- | --- |\n") >= len(headers) - 1


def test_table_headers_match_rows_below_the_header_only():
    text = "Intro\n\n| | |\n| --- | --- |\n| Store | City |\n| 1 | Akron |\n| 2 | Canton |\n\nAfter\n"
    tables = TableHeaders(text)
    assert tables.at(text.index("Intro")) == ""
    assert tables.at(text.index("| --- |")) == ""
    assert tables.at(text.index("| Store |")) == "| | |\n| --- | --- |\n"
    assert tables.at(text.index("| 2 |")) == "| | |\n| --- | --- |\n| Store | City |\n"
    assert tables.at(text.index("After")) == ""


# ---------------------------------------------------------------- a DOCX with external entities

class CountingServer:
    """A local TCP listener that counts connections: any fetch of an entity would reach it."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self.connections = 0
        self.running = True
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}/entity.xml"

    def _serve(self):
        while self.running:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.connections += 1
            conn.close()

    def close(self):
        self.running = False
        self.thread.join()
        self.sock.close()


@pytest.mark.parametrize("target, parameter", [("file", False), ("http", False), ("http", True)],
                         ids=["file-entity", "http-entity", "http-parameter-entity"])
def test_a_docx_declaring_an_external_entity_is_read_and_nothing_is_fetched(project: Project, isolated_env: Path,
                                                                         target, parameter):
    secret = isolated_env / "secret.txt"
    secret.write_text("SECRET-MARKER-7731")
    server = CountingServer()
    try:
        url = secret.as_uri() if target == "file" else server.url
        data = bf.docx_with_external_entity(url, "Visible paragraph: " + FACT, parameter=parameter)
        result = ingest_file(project, "entity.docx", data)
    finally:
        server.close()
    assert result.ok, result.message
    text = project.ws.converted_path("entity.docx").read_text(encoding="utf-8")
    assert FACT in text and "Entity here" in text
    assert "SECRET-MARKER" not in text
    assert server.connections == 0
    stored = " ".join(project.store.collection("documents").get(include=["documents"])["documents"])
    assert "SECRET-MARKER" not in stored


# ---------------------------------------------------------------- refused files are not kept

NEVER_KEPT = [
    pytest.param(".env", b"ANTHROPIC_API_KEY=sk-ant-secret\n", "credentials", id="dotenv"),
    pytest.param(".env.production", b"DB_PASSWORD=hunter2\n", "credentials", id="dotenv-variant"),
    pytest.param(".env.md", b"# Notes\n\nTOKEN=abc\n", "credentials", id="dotenv-named-md"),
    pytest.param("server.pem", b"-----BEGIN CERTIFICATE-----\nMIIB\n", "credentials", id="pem"),
    pytest.param("deploy.key", b"secret", "credentials", id="key"),
    pytest.param("id_rsa", b"-----BEGIN RSA PRIVATE KEY-----\nMIIE\n", "credentials", id="ssh-key"),
    pytest.param("id_ed25519.md", b"# My key\n\nAAAA\n", "credentials", id="ssh-key-named-md"),
    pytest.param("credentials-prod.json", b'{"secret": "x"}', "credentials", id="credentials-json"),
    pytest.param("deploy.md", bf.markdown_with_private_key(), "credentials", id="private-key-inside-md"),
    pytest.param("report.pdf", bf.minimal_pdf(), ".docx and .md", id="pdf-extension"),
    pytest.param("notes.txt", b"Plain text notes about the pilot.\n", ".docx and .md", id="txt-extension"),
    pytest.param("noext", b"# Title\n\nText.\n", ".docx and .md", id="no-extension"),
]


@pytest.mark.parametrize("filename, data, expect", NEVER_KEPT)
def test_credentials_and_unreadable_types_are_refused_without_keeping_their_bytes(project: Project, filename,
                                                                                 data, expect):
    result = ingest_file(project, filename, data)
    assert not result.ok and expect in result.message, result.message
    assert_one_sentence(result.message)
    assert uploads(project) == set()
    assert project.manifest().file_summaries == []
    assert [p.name for p in project.ws.converted.iterdir()] == [".gitkeep"]
    for path in project.ws.root.rglob("*"):  # the bytes are nowhere in the workspace
        if path.is_file() and len(data) > 8:
            assert data not in path.read_bytes(), path


def test_a_credential_replacing_an_indexed_file_keeps_the_indexed_version(project: Project):
    assert ingest_file(project, "deploy.md", md("Deploy", FACT)).ok
    before = snapshot(project, "deploy.md")
    result = ingest_file(project, "deploy.md", bf.markdown_with_private_key())
    assert not result.ok and "credentials" in result.message
    assert snapshot(project, "deploy.md") == before


def test_a_credential_kept_by_an_older_forge_leaves_the_workspace_when_uploaded_again(project: Project):
    from pmforge.core.models import ManifestEntry

    ws = project.ws
    (ws.uploads / "env").write_bytes(b"ANTHROPIC_API_KEY=sk-ant-secret\n")  # what the red team found
    manifest = ws.load_manifest()
    manifest.file_summaries.append(ManifestEntry(filename="env", file_id="0" * 16,
                                               status="not indexed: env: only .docx and .md files can be uploaded."))
    ws.save_manifest(manifest)
    result = ingest_file(project, ".env", b"ANTHROPIC_API_KEY=sk-ant-secret\n")
    assert not result.ok and "credentials" in result.message
    assert uploads(project) == set() and project.manifest().file_summaries == []


def test_forge_ingest_of_a_dotenv_file_from_the_cli_keeps_nothing(project: Project, isolated_env: Path):
    secret = isolated_env / ".env"
    secret.write_text("ANTHROPIC_API_KEY=sk-ant-do-not-commit\n")
    done = run_forge(isolated_env, "ingest", project.ws.slug, str(secret), env={})
    assert done.returncode == 1, done.stdout + done.stderr
    assert "credentials" in done.stderr and "Traceback" not in done.stderr
    assert uploads(project) == set() and project.manifest().file_summaries == []
    for path in project.ws.root.rglob("*"):
        assert not path.is_file() or b"sk-ant-do-not-commit" not in path.read_bytes(), path
