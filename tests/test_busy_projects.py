"""Nothing loads, nothing is lost, when Forge commands meet on one project: `forge delete-project` waits for
(or refuses) a reply being written and leaves no stray folder; a `forge chat` between two messages holds
nothing, and hands back every message it can no longer send; a chat waits for an upload instead of failing,
and answers every message it reads; `forge files` needs no vector server; and an embedder that cannot be
reached keeps the index the project has in use. Real processes (a chat reading stdin, a real
`forge delete-project`, a real `forge ingest`), the real embedded Chroma or a real `chroma run` server, and
the Voyage stub where a reply or an upload must be held mid-way."""

from __future__ import annotations

import json
import queue
import subprocess
import threading
import time
from pathlib import Path

import pytest

from chroma_server import ChromaServer, free_port
from docs import PLAN
from forge_cli import run_forge, start_forge
from pmforge.index.client import persistent_client

WAIT_S = 120  # the longest any step waits for another process: a bound, never a measure
QUESTION = "How many stores are in the pilot?"


def forge(tmp: Path, *args: str, **env) -> subprocess.CompletedProcess:
    """`forge ARGS` in this process, offline, on the test's projects folder."""
    return run_forge(tmp, *args, env={"FORGE_LLM": "offline", **env})


def start(tmp: Path, *args: str, **env) -> subprocess.Popen:
    """`forge ARGS` in a process of its own, offline."""
    return start_forge(tmp, *args, env={"FORGE_LLM": "offline", **env})


def forge_process(tmp: Path, *args: str, **env) -> subprocess.CompletedProcess:
    """The same, run to its end with nothing on stdin."""
    process = start(tmp, *args, **env)
    out, err = process.communicate(timeout=WAIT_S)
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


class Lines:
    """A process's output read line by line in a thread, so a test can wait (bounded) for one line."""

    def __init__(self, stream):
        self.lines: list[str] = []
        self._queue: queue.Queue[str | None] = queue.Queue()
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._thread.start()

    def _read(self, stream) -> None:
        for line in stream:
            self._queue.put(line)
        self._queue.put(None)

    def wait_for(self, text: str) -> str:
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:
            try:
                line = self._queue.get(timeout=1)
            except queue.Empty:
                continue
            if line is None:
                self._queue.put(None)
                raise AssertionError(f"the output ended without {text!r}:\n{self.text()}")
            self.lines.append(line)
            if text in line:
                return line
        raise AssertionError(f"no {text!r} within {WAIT_S} s:\n{self.text()}")

    def rest(self) -> str:
        """Everything, once the process has ended."""
        self._thread.join(WAIT_S)
        while (line := self._queue.get_nowait()) is not None:
            self.lines.append(line)
        self._queue.put(None)
        return self.text()

    def text(self) -> str:
        return "".join(self.lines)


def finish(process: subprocess.Popen, stdin: str = "") -> tuple[Lines, Lines]:
    """Send the rest of stdin, close it, and wait for the process to end."""
    out, err = Lines(process.stdout), Lines(process.stderr)
    if stdin:
        process.stdin.write(stdin)
    process.stdin.close()
    process.wait(WAIT_S)
    out.rest(), err.rest()
    return out, err


def no_trace_of(projects: Path, slug: str) -> None:
    """The project is gone, and nothing of it came back: no folder holding only a lock file, no dot-folder."""
    assert not (projects / slug).exists(), sorted(p.name for p in (projects / slug).iterdir())
    assert [p.name for p in projects.iterdir() if slug in p.name] == []


def handed_back(stderr: str, message: str) -> bool:
    return f"Your message was not saved; here it is to send again:\n{message}\n" in stderr


@pytest.fixture
def voyage(stub, isolated_env):
    """Environment for Forge on the Voyage stub (offline replies), and a gate on its embeddings: set
    `held` to "query" or "document" and requests of that kind wait for `release`."""
    gate = {"held": "", "entered": threading.Event(), "release": threading.Event()}

    def answer(request: dict):
        if gate["held"] and request.get("input_type") == gate["held"] and not gate["release"].is_set():
            gate["entered"].set()
            gate["release"].wait(WAIT_S)
        return None  # the stub's own deterministic vectors

    stub.voyage_fallback = answer
    env = {"FORGE_EMBEDDINGS": "voyage", "VOYAGE_API_KEY": "test-voyage", "VOYAGE_BASE_URL": stub.url + "/v1",
           "FORGE_VOYAGE_BACKOFF_S": "0.001", "FORGE_MIN_SIMILARITY": "-1"}  # stub vectors: any similarity
    yield env, gate
    gate["release"].set()


def _pilot(tmp: Path, **env) -> Path:
    assert forge(tmp, "new", "Pilot", **env).returncode == 0
    (tmp / "plan.md").write_bytes(PLAN)
    done = forge(tmp, "ingest", "pilot", str(tmp / "plan.md"), **env)
    assert done.returncode == 0, done.stderr
    return tmp / "projects"


# ---------------------------------------------------------------- delete-project and a chat


def test_delete_project_waits_for_a_reply_being_written_or_refuses_and_leaves_no_stray_folder(isolated_env, voyage):
    tmp, (env, gate) = isolated_env, voyage
    projects = _pilot(tmp, **env)
    gate["held"] = "query"  # the chat's search waits: it is writing its reply, holding the turn slot
    chat = start(tmp, "chat", "pilot", "--json", **env)
    chat.stdin.write(QUESTION + "\n")
    chat.stdin.flush()
    assert gate["entered"].wait(WAIT_S)

    refused = forge_process(tmp, "delete-project", "pilot", "--yes", FORGE_DELETE_BUSY_WAIT_S="1", **env)
    assert refused.returncode == 1 and "Traceback" not in refused.stderr
    assert refused.stderr.strip().splitlines()[-1] == (
        "Nothing was deleted: project 'Pilot' is answering a message in another Forge window or command; "
        "try again once the reply is done.")
    assert (projects / "pilot" / "state.json").exists()

    # Given long enough, the delete waits for the reply, then deletes (long enough on a loaded machine too).
    deleting = start(tmp, "delete-project", "pilot", "--yes", FORGE_DELETE_BUSY_WAIT_S="60", **env)
    deleting_err = Lines(deleting.stderr)
    assert "is answering a message; waiting up to 60 s" in deleting_err.wait_for("waiting up to")
    gate["release"].set()
    deleting.stdin.close()
    assert deleting.wait(WAIT_S) == 0, deleting_err.rest()
    assert deleting.stdout.read().startswith("Deleted project 'Pilot' (pilot)")

    out, err = finish(chat, "How long does the pilot run?\nWho owns the target?\n")
    assert json.loads(out.lines[0])["turn"] == 1  # the reply it was writing was given in full
    assert chat.returncode == 1
    for message in ("How long does the pilot run?", "Who owns the target?"):
        assert handed_back(err.text(), message)
    assert "Project 'pilot' no longer exists (it was deleted in another Forge window or command)" in err.text()
    assert "Traceback" not in err.text()
    no_trace_of(projects, "pilot")


def test_a_chat_between_two_messages_holds_nothing_and_hands_back_what_it_cannot_send(isolated_env):
    tmp = isolated_env
    projects = _pilot(tmp)
    chat = start(tmp, "chat", "pilot", "--json")
    chat_out = Lines(chat.stdout)
    chat.stdin.write(QUESTION + "\n")
    chat.stdin.flush()
    assert json.loads(chat_out.wait_for('"turn"'))["turn"] == 1  # now it waits on stdin

    deleted = forge_process(tmp, "delete-project", "pilot", "--yes")
    assert deleted.returncode == 0, deleted.stderr
    assert "waiting" not in deleted.stderr  # the chat held no slot while it waited for the PM

    chat.stdin.write("How long does the pilot run?\nWho owns the target?\n")
    chat.stdin.close()
    chat.wait(WAIT_S)
    err = chat.stderr.read()
    assert chat.returncode == 1 and "Traceback" not in err and "could not read or write" not in err
    for message in ("How long does the pilot run?", "Who owns the target?"):
        assert handed_back(err, message)
    no_trace_of(projects, "pilot")
    assert forge(tmp, "new", "Pilot").returncode == 0  # the name is free again


# ---------------------------------------------------------------- a chat during an upload


def _report(passages: int = 80) -> bytes:
    """A report of `passages` paragraphs, one passage each, four to a section."""
    out = ["# Store visits\n"]
    for s in range(passages // 4):
        out.append(f"## Store {s}\n")
        out += [" ".join(f"Visit note {s}.{p}.{k}: the team in store {s} counted {s * 4 + p + k} reduced items on "
                         f"day {p}." for k in range(14)) + "\n" for p in range(4)]
    return "\n".join(out).encode()


def test_a_chat_waits_for_an_upload_and_answers_every_message(isolated_env, voyage):
    tmp, (env, gate) = isolated_env, voyage
    projects = _pilot(tmp, **env)
    (tmp / "visits.md").write_bytes(_report())
    gate["held"] = "document"  # the upload embeds its passages holding the project's write lock
    upload = start(tmp, "ingest", "pilot", str(tmp / "visits.md"), **env)
    assert gate["entered"].wait(WAIT_S)

    messages = [QUESTION, "How long does the pilot run?", "Dana owns the shrink target.",
                "We think weekend staffing drives shrink.", "What is the success metric?"]
    # A write waits 1 s for another command before it says "busy": the chat's turns must wait longer.
    chat = start(tmp, "chat", "pilot", "--json", FORGE_LOCK_WAIT_S="1", **env)
    chat.stdin.write("".join(m + "\n" for m in messages))
    chat.stdin.close()
    chat_err = Lines(chat.stderr)
    notice = chat_err.wait_for("waiting up to")
    assert "Project 'pilot' is busy in another Forge window or command (upload visits.md); waiting up to 120 s" in notice
    gate["release"].set()

    upload_out, _ = finish(upload)
    assert upload.returncode == 0 and "Indexed visits.md: 80 passages" in upload_out.text()
    chat.wait(WAIT_S)
    records = [json.loads(line) for line in chat.stdout.read().splitlines()]
    assert chat.returncode == 0, chat_err.rest()
    assert [r["turn"] for r in records] == [1, 2, 3, 4, 5]
    turns = [json.loads(line) for line in (projects / "pilot" / "turns.jsonl").read_text().splitlines()]
    assert [t["user"] for t in turns if "user" in t] == messages


def test_a_message_that_could_not_be_saved_is_handed_back_and_the_next_one_is_answered(isolated_env, voyage):
    tmp, (env, gate) = isolated_env, voyage
    projects = _pilot(tmp, **env)
    (tmp / "visits.md").write_bytes(_report())
    gate["held"] = "document"
    upload = start(tmp, "ingest", "pilot", str(tmp / "visits.md"), **env)
    assert gate["entered"].wait(WAIT_S)

    chat = start(tmp, "chat", "pilot", "--json", FORGE_LOCK_WAIT_S="1", FORGE_CHAT_BUSY_WAIT_S="1", **env)
    chat_err = Lines(chat.stderr)
    chat.stdin.write(QUESTION + "\n")
    chat.stdin.flush()
    chat_err.wait_for("Your message was not saved")  # waited its 1 s for the upload, then gave up
    assert chat_err.wait_for(QUESTION) == QUESTION + "\n"  # handed back
    gate["release"].set()
    assert upload.wait(WAIT_S) == 0

    chat.stdin.write("How long does the pilot run?\n")  # the same chat goes on with the next message
    chat.stdin.close()
    chat.wait(WAIT_S)
    assert chat.returncode == 1  # one message failed
    assert [json.loads(line)["turn"] for line in chat.stdout.read().splitlines()] == [1]
    saved = json.loads((projects / "pilot" / "turns.jsonl").read_text().splitlines()[0])
    assert saved["user"] == "How long does the pilot run?"
    assert "Traceback" not in chat_err.rest()


# ---------------------------------------------------------------- forge files without the vector server


def test_forge_files_lists_the_files_while_the_chroma_server_is_down(isolated_env, tmp_path_factory):
    tmp = isolated_env
    with ChromaServer(tmp_path_factory.mktemp("files-chroma") / "db") as server:
        env = {"CHROMA_HOST": server.host, "CHROMA_PORT": str(server.port), "FORGE_CHROMA_TIMEOUT_S": "2"}
        _pilot(tmp, **env)
    listed = forge_process(tmp, "files", "pilot", **env)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.startswith("plan.md\t") and "\t1 passages\tindexed\t" in listed.stdout
    assert listed.stderr == ""


# ---------------------------------------------------------------- an embedder that cannot be reached


def _collections(projects: Path) -> dict[str, tuple[str, int]]:
    """name → (embedder, records) of the project's embedded collections, read with a client of their own."""
    client = persistent_client(str((projects / "pilot" / "vectordb").resolve()))
    try:
        return {c.name: ((c.metadata or {}).get("embedder", ""), c.count()) for c in client.list_collections()}
    finally:
        client.close()
        persistent_client.cache_clear()


def test_an_embedder_that_cannot_be_reached_keeps_the_index_in_use_until_the_new_one_is_built(isolated_env, stub):
    tmp = isolated_env
    projects = _pilot(tmp)
    assert forge(tmp, "chat", "pilot", "-m", "We want to cut fresh shrink in the bakery.").returncode == 0
    before = _collections(projects)
    assert {"documents", "conversations"} <= set(before) and before["documents"] == ("hashing-bow/384", 1)

    refused = {"FORGE_EMBEDDINGS": "voyage", "VOYAGE_API_KEY": "test-voyage",
               "VOYAGE_BASE_URL": f"http://127.0.0.1:{free_port()}/v1", "FORGE_VOYAGE_BACKOFF_S": "0.001"}
    done = forge_process(tmp, "chat", "pilot", "--json", "-m", QUESTION, **refused)
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    assert record["retrieved"]["documents"] and "[plan.md" in record["reply"]  # found, as before
    said = [line for line in done.stderr.splitlines() if line.startswith("Kept the index")]
    assert said == [
        "Kept the index of 'pilot' made with hashing-bow/384, and searching it with that embedder: voyage-3.5-lite/512 "
        "could not build the new one (Voyage embeddings are unavailable right now (APIConnectionError); try again in "
        "a minute); it is built the next time Forge opens the project with that embedder working "
        "(or with `forge reindex pilot`)."]
    after = _collections(projects)
    assert after["documents"] == before["documents"]  # nothing dropped, nothing of another model added
    assert after["conversations"] == ("hashing-bow/384", 2)  # the new turn is remembered in the index in use
    assert not [name for name in after if name.startswith("rebuild-")]

    # Voyage answers: the new index is built, then takes over.
    online = {**refused, "VOYAGE_BASE_URL": stub.url + "/v1", "FORGE_MIN_SIMILARITY": "-1"}
    done = forge_process(tmp, "chat", "pilot", "--json", "-m", QUESTION, **online)
    assert done.returncode == 0, done.stderr
    assert "Re-indexed 1 files and 2 turns with voyage-3.5-lite/512." in done.stderr
    rebuilt = _collections(projects)
    assert rebuilt["documents"] == ("voyage-3.5-lite/512", 1) and rebuilt["conversations"] == ("voyage-3.5-lite/512", 3)
    assert not [name for name in rebuilt if name.startswith("rebuild-")]


def test_an_index_whose_embedder_does_not_run_here_is_searched_by_keywords(isolated_env, voyage):
    tmp, (env, _) = isolated_env, voyage
    projects = _pilot(tmp, **env)  # built with Voyage's voyage-3.5-lite
    before = _collections(projects)
    other = {**env, "FORGE_VOYAGE_MODEL": "voyage-3.5", "VOYAGE_BASE_URL": f"http://127.0.0.1:{free_port()}/v1"}
    done = forge_process(tmp, "chat", "pilot", "--json", "-m", QUESTION, "-m", "How long does the pilot run?",
                         **other)
    assert done.returncode == 0, done.stderr
    first, second = map(json.loads, done.stdout.splitlines())
    assert "[plan.md" in first["reply"] and "[plan.md" in second["reply"]
    assert ("Kept the index of 'pilot' made with voyage-3.5-lite/512, and searching it by keywords alone (that "
            "embedder does not run here): voyage-3.5/512 could not build the new one") in done.stderr
    assert _collections(projects) == before  # no vector of either model was added


def test_a_new_embedder_failing_half_way_through_the_rebuild_drops_nothing(isolated_env, stub):
    tmp = isolated_env
    projects = _pilot(tmp)
    (tmp / "visits.md").write_bytes(_report())
    assert forge(tmp, "ingest", "pilot", str(tmp / "visits.md")).returncode == 0
    before = _collections(projects)
    served = iter(range(1_000))
    stub.voyage_fallback = lambda request: None if next(served) < 1 else 503  # one batch, then an outage
    online = {"FORGE_EMBEDDINGS": "voyage", "VOYAGE_API_KEY": "test-voyage", "VOYAGE_BASE_URL": stub.url + "/v1",
              "FORGE_VOYAGE_BACKOFF_S": "0.001", "FORGE_VOYAGE_MAX_ATTEMPTS": "2", "FORGE_VOYAGE_BATCH_SIZE": "8"}
    done = forge(tmp, "reindex", "pilot", **online)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "Kept the index of 'pilot' made with hashing-bow/384" in done.stderr
    assert _collections(projects) == before
