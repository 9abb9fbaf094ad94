"""Nothing loads, nothing is lost: file names alike but for case or form, or alike up to where a long name is
cut, stay two files; a transcript line a crash cut off is kept beside the transcript and the PM is told, with
their message offered back; a project name never holds characters that make it read otherwise than it is.
Through the real `forge` command, files on disk and the real ingest pipeline."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from forge_cli import run_forge
from pmforge.core.models import Turn, name_key
from pmforge.core.workspace import MAX_FILENAME_BYTES, Workspace, take_notices
from pmforge.project.project import Project

SRC = str(Path(__file__).parents[1] / "src")
BIDI = set("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def forge(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return run_forge(cwd, *args, env={})


def upload(cwd: Path, slug: str, name: str, text: str) -> subprocess.CompletedProcess:
    """`forge ingest` of a file of that name (each in a folder of its own: some disks cannot hold both)."""
    folder = cwd / "to-upload" / os.urandom(4).hex()
    folder.mkdir(parents=True)
    (folder / name).write_bytes(doc(text))
    return forge(cwd, "ingest", slug, str(folder / name))


def doc(text: str) -> bytes:
    return f"# Notes\n\n{text}\n".encode("utf-8")


def assert_consistent(cwd: Path, project: Project) -> None:
    """forge doctor finds nothing wrong, and no two kept names are one file on a case-insensitive disk."""
    done = forge(cwd, "doctor", project.ws.slug, "--json")
    report = json.loads(done.stdout)
    assert done.returncode == 0 and report["consistent"], report
    names = [f.filename for f in project.manifest().file_summaries]
    assert len({name_key(n) for n in names}) == len(names), names
    assert {p.name for p in project.ws.uploads.iterdir() if p.name != ".gitkeep"} == set(names)


# ---------------------------------------------------------------- names that never collide

@pytest.mark.parametrize("first, second", [("Straße.md", "STRASSE.md"), ("ﬁnance.md", "finance.md"),
                                           ("ΟΔΟΣ.md", "οδος.md"), ("Plan.md", "plan.md")])
def test_names_alike_but_for_case_or_form_are_two_files(project: Project, isolated_env: Path, first, second):
    slug, uploads = project.ws.slug, project.ws.uploads
    one = upload(isolated_env, slug, first, "The Marigold audit found 314 unlabelled trays.")
    assert one.returncode == 0 and one.stdout.startswith(f"Indexed {first}:"), one.stdout + one.stderr
    two = upload(isolated_env, slug, second, "The Juniper audit found 27 crates of expired yoghurt.")
    assert two.returncode == 0, two.stdout + two.stderr
    assert not two.stdout.startswith("Replaced"), two.stdout

    files = {f.filename: f for f in project.manifest().file_summaries}
    assert len(files) == 2 and all(f.indexed for f in files.values()), files
    kept = next(name for name in files if name != first)
    assert kept != second and kept.startswith(second[:-3]) and kept.endswith(".md")  # readable, and its own
    assert f"{second} as {kept}" in two.stdout and first in two.stdout  # the PM is told where it went
    assert uploads.joinpath(first).read_bytes() == doc("The Marigold audit found 314 unlabelled trays.")
    assert uploads.joinpath(kept).read_bytes() == doc("The Juniper audit found 27 crates of expired yoghurt.")
    assert project.store.documents.file_ids() == {f.file_id for f in files.values()}
    assert_consistent(isolated_env, project)

    # The same name again is a new version of the file it named, kept under the same name.
    again = upload(isolated_env, slug, second, "The Juniper audit was redone: 12 crates.")
    assert again.returncode == 0 and again.stdout.startswith(f"Replaced {second} as {kept}"), again.stdout
    back = upload(isolated_env, slug, first, "The Marigold audit was redone: 290 trays.")
    assert back.returncode == 0 and back.stdout.startswith(f"Replaced {first}:"), back.stdout
    assert sorted(f.filename for f in project.manifest().file_summaries) == sorted([first, kept])
    assert uploads.joinpath(kept).read_bytes() == doc("The Juniper audit was redone: 12 crates.")
    assert uploads.joinpath(first).read_bytes() == doc("The Marigold audit was redone: 290 trays.")
    assert_consistent(isolated_env, project)


def test_long_names_alike_up_to_the_cut_are_two_files(project: Project, isolated_env: Path):
    stem = "第三季度门店访谈记录" * 7  # 70 characters, 210 bytes: longer than a kept name may be
    first, second = stem + "甲.md", stem + "乙.md"
    assert len(stem.encode("utf-8")) > MAX_FILENAME_BYTES
    slug = project.ws.slug
    assert upload(isolated_env, slug, first, "Store 12 marks bread down at 6 pm.").returncode == 0
    two = upload(isolated_env, slug, second, "Store 40 marks bread down at 8 pm.")
    assert two.returncode == 0 and two.stdout.startswith("Indexed"), two.stdout + two.stderr

    names = [f.filename for f in project.manifest().file_summaries]
    assert len(names) == 2 and names[0] != names[1], names
    for name in names:
        assert len(name.encode("utf-8")) <= MAX_FILENAME_BYTES and name.startswith(stem[:40]) and name.endswith(".md")
    texts = {project.ws.uploads.joinpath(n).read_bytes() for n in names}
    assert texts == {doc("Store 12 marks bread down at 6 pm."), doc("Store 40 marks bread down at 8 pm.")}
    assert_consistent(isolated_env, project)

    # The same long name again finds its own file.
    again = upload(isolated_env, slug, first, "Store 12 now marks bread down at 5 pm.")
    assert again.returncode == 0 and again.stdout.startswith(f"Replaced {names[0]}:"), again.stdout
    assert sorted(f.filename for f in project.manifest().file_summaries) == sorted(names)
    assert project.ws.uploads.joinpath(names[0]).read_bytes() == doc("Store 12 now marks bread down at 5 pm.")
    assert_consistent(isolated_env, project)


# ---------------------------------------------------------------- transcript damage is never silent

# Answers one message and is killed by SIGKILL halfway through writing its turn to turns.jsonl.
TEARING_WORKER = textwrap.dedent("""
    import os, signal, sys
    from pmforge.core.settings import get_settings
    from pmforge.project.project import Project
    from pmforge.project.services import Services
    from pmforge.turn.orchestrator import run_turn

    message = sys.argv[2]
    write = os.write

    def write_until_killed(fd, data):
        data = bytes(data)
        if data.startswith(b'{"id":') and message.encode() in data:  # the turn's line
            write(fd, data[: data.index(b'"assistant"') + 30])
            os.kill(os.getpid(), signal.SIGKILL)
        return write(fd, data)

    os.write = write_until_killed
    run_turn(Project.open(Services.from_settings(get_settings()), sys.argv[1]), message)
""")


def torn_files(ws: Workspace) -> list[Path]:
    return sorted(ws.root.glob(f"{ws.TRANSCRIPT}.torn-*"))


def test_a_turn_a_crash_cut_off_is_kept_and_the_message_offered_back(project: Project, isolated_env: Path):
    ws, slug = project.ws, project.ws.slug
    assert forge(isolated_env, "chat", slug, "-m", "We lose 4 percent of bakery items to shrink.").returncode == 0
    message = "Dana says the Duluth store marks bread down at 6 pm — too late for the evening rush."
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [SRC, os.environ.get("PYTHONPATH")]))}
    worker = subprocess.run([sys.executable, "-c", TEARING_WORKER, slug, message], env=env, cwd=isolated_env,
                            capture_output=True, text=True, timeout=300)
    assert worker.returncode == -signal.SIGKILL, worker.stdout + worker.stderr
    raw = ws.transcript_path.read_bytes()
    fragment = raw[raw.rindex(b"\n") + 1 :]
    assert message.encode() in fragment and not raw.endswith(b"\n")  # the crash left its line half written

    opened = forge(isolated_env, "files", slug)  # the next command that opens the project
    assert opened.returncode == 0, opened.stderr
    kept = torn_files(ws)
    assert len(kept) == 1 and kept[0].read_bytes() == fragment  # nothing of it is lost
    assert kept[0].name in opened.stderr and f"“{message}”" in opened.stderr and "send it again" in opened.stderr
    assert ws.transcript_path.read_bytes() == raw[: raw.rindex(b"\n") + 1]
    assert [t.user for t in ws.load_state().turns] == ["We lose 4 percent of bakery items to shrink."]
    log = isolated_env / "logs" / "forge.log"
    assert kept[0].name in log.read_text(encoding="utf-8")
    assert "Duluth" not in log.read_text(encoding="utf-8")  # the PM's words are shown, never logged

    told_again = forge(isolated_env, "chat", slug, "-m", message)
    assert told_again.returncode == 0 and message not in told_again.stderr  # told once
    assert [t.user for t in ws.load_state().turns][-1] == message
    assert_consistent(isolated_env, project)


def test_a_torn_line_met_by_the_next_message_is_kept_and_its_beginning_offered_back(project: Project,
                                                                                  isolated_env: Path):
    ws, slug = project.ws, project.ws.slug
    assert forge(isolated_env, "chat", slug, "-m", "We lose 4 percent of bakery items to shrink.").returncode == 0
    said = "Bakery shrink — 4 percent — is the target for the Duluth pilot."
    line = Turn(number=2, user=said, assistant="Noted.").model_dump_json().encode("utf-8")
    cut = line[: line.index("— is".encode("utf-8")) + 1]  # inside the second dash's three bytes
    with open(ws.transcript_path, "ab") as fh:
        fh.write(cut)

    done = forge(isolated_env, "chat", slug, "-m", "What should I measure first?")
    assert done.returncode == 0, done.stderr
    kept = torn_files(ws)
    assert len(kept) == 1 and kept[0].read_bytes() == cut
    assert "“Bakery shrink — 4 percent …” (the rest was cut off)" in done.stderr, done.stderr
    assert kept[0].name in done.stderr
    assert [t.user for t in ws.load_state().turns] == ["We lose 4 percent of bakery items to shrink.",
                                                       "What should I measure first?"]
    assert_consistent(isolated_env, project)


@pytest.mark.parametrize("line, cut_after, offered", [
    pytest.param(Turn(number=1, user='She said "now"\nthen left.', assistant="Ok.").model_dump_json(), "\\n",
                 "“She said \"now\"…”", id="cut-inside-an-escape"),
    pytest.param('{"patch":"t-0123456789ab","summary":"Dana owns shrink.","indexed":true}', "Dana", None,
                 id="a-patch-line"),
    pytest.param(Turn(number=1, user="Short.", assistant="Ok.").model_dump_json(), '"numb', None,
                 id="cut-before-the-message"),
])
def test_every_torn_line_is_kept_and_said(isolated_env: Path, line: str, cut_after: str, offered: str | None):
    ws = Workspace.create(isolated_env / "projects", "Torn")
    take_notices()
    cut = line.encode("utf-8")[: line.encode("utf-8").index(cut_after.encode("utf-8")) + 1]
    ws.transcript_path.write_bytes(cut)
    ws.transcript_file.append_turn(Turn(number=1, user="Again.", assistant="Ok."))

    [notice] = take_notices()
    [kept] = torn_files(ws)
    assert kept.read_bytes() == cut and kept.name in notice
    assert [t.user for t in ws.load_state().turns] == ["Again."]
    if offered:
        assert offered in notice, notice
    else:
        assert "You wrote" not in notice and "intact" in notice, notice


# ---------------------------------------------------------------- project names read as typed

def test_bidi_controls_never_reach_a_project_name(isolated_env: Path):
    typed = "Invoice \u202egpj.exe"  # would display as "Invoice exe.jpg"
    made = forge(isolated_env, "new", typed)
    assert made.returncode == 0, made.stderr
    listed = forge(isolated_env, "projects").stdout
    assert listed == "invoice-gpj-exe\tInvoice gpj.exe\n", listed
    assert forge(isolated_env, "files", typed).returncode == 0  # the name as typed still finds it

    renamed = forge(isolated_env, "rename", "invoice-gpj-exe", "Refund \u2067fdp.bat\u2069 \u200fQ3")
    assert renamed.returncode == 0 and "'Refund fdp.bat Q3'" in renamed.stdout, renamed.stdout + renamed.stderr
    assert forge(isolated_env, "projects").stdout == "invoice-gpj-exe\tRefund fdp.bat Q3\n"
    ws = Workspace.open(isolated_env / "projects", "invoice-gpj-exe")
    for path in (ws.manifest_path, ws.state_path):
        assert not BIDI & set(path.read_text(encoding="utf-8")), path

    nothing = forge(isolated_env, "new", "\u202e\u2066\u2069")
    assert nothing.returncode == 1 and "at least one letter or digit" in nothing.stderr


def test_a_lost_conversation_file_is_told_and_put_back_from_memory(project: Project, isolated_env: Path):
    ws, slug = project.ws, project.ws.slug
    said = ["We lose 4 percent of bakery items to shrink.", "Maria Lopez, VP of stores, has the final say."]
    for message in said:
        assert forge(isolated_env, "chat", slug, "-m", message).returncode == 0
    before = ws.load_state().turns
    ws.transcript_path.unlink()  # deleted by hand, or lost to a bad sync

    opened = forge(isolated_env, "brief", slug)  # the next command that reads the session
    assert opened.returncode == 0, opened.stderr
    assert (f"'{slug}' lost 2 turn(s) of its conversation: its conversation file (turns.jsonl) is missing"
            in opened.stderr)
    assert f"forge doctor {slug} --fix" in opened.stderr
    checked = json.loads(forge(isolated_env, "doctor", slug, "--json").stdout)
    assert any("lost 2 turn(s)" in f["problem"] for f in checked["problems"]), checked  # not offered for deletion
    assert not any(f["repair"] == "delete them" for f in checked["problems"])

    fixed = forge(isolated_env, "doctor", slug, "--fix")
    assert fixed.returncode == 0, fixed.stderr
    back = ws.load_state().turns
    assert [(t.number, t.id, t.user, t.assistant) for t in back] == [
        (t.number, t.id, t.user, t.assistant) for t in before]
    next_turn = forge(isolated_env, "chat", slug, "-m", "The pilot runs in 20 stores.")
    assert next_turn.returncode == 0 and "lost" not in next_turn.stderr
    assert [t.number for t in ws.load_state().turns] == [1, 2, 3]
    assert_consistent(isolated_env, project)


def test_a_turn_taken_back_from_under_later_ones_is_told_and_numbering_stays_unique(project: Project,
                                                                                   isolated_env: Path):
    """What merging a clone that undid turn 2 (after this copy answered turn 3 on top of it) leaves: a retract
    line for a middle turn. The turn leaves the session with a word, the later turn stays, and the next
    message never takes a number already used."""
    from pmforge.core import transcript

    ws, slug = project.ws, project.ws.slug
    for message in ["We lose 4 percent of bakery items to shrink.", "Maria Lopez has the final say on pilots.",
                    "The pilot runs in 20 stores."]:
        assert forge(isolated_env, "chat", slug, "-m", message).returncode == 0
    second = ws.load_state().turns[1]
    with ws.locked():
        ws.transcript_file.append_lines(transcript.retract_line(second.id))

    opened = forge(isolated_env, "brief", slug)
    assert opened.returncode == 0, opened.stderr
    assert (f"In '{slug}', turn 2 (\"Maria Lopez has the final say on pilots.\") was taken back in another copy "
            "of this project after turn(s) 3 had been answered on top of it") in opened.stderr
    assert "lost" not in opened.stderr  # taken back, not lost: no repair is offered
    assert [t.number for t in ws.load_state().turns] == [1, 3]
    assert forge(isolated_env, "chat", slug, "-m", "Store managers print the labels.").returncode == 0
    assert [t.number for t in ws.load_state().turns] == [1, 3, 4]  # never a second turn 3
    assert_consistent(isolated_env, project)
