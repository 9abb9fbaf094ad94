"""A Chroma server that is paused, refuses, or never completes a connection fails the call in one sentence
within FORGE_CHROMA_TIMEOUT_S, instead of hanging a turn."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from contextlib import contextmanager

import pytest

from chroma_server import ChromaServer, free_port
from docs import PLAN
from pmforge.core.errors import ForgeError
from pmforge.index.client import StoreUnavailable, http_client
from pmforge.ingest.pipeline import ingest_file
from pmforge.project.project import Project
from pmforge.project.services import Services
from pmforge.turn.orchestrator import run_turn

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

TIMEOUT_S = 2
SLACK_S = 20  # process start-up and the few calls a turn makes before its first store call


def on_server(monkeypatch, host: str, port: int) -> Services:
    from pmforge.core import settings as config

    monkeypatch.setenv("CHROMA_HOST", host)
    monkeypatch.setenv("CHROMA_PORT", str(port))
    monkeypatch.setenv("FORGE_CHROMA_TIMEOUT_S", str(TIMEOUT_S))
    config.get_settings.cache_clear()
    http_client.cache_clear()  # a fresh process: no client made before this test
    return Services.from_settings(config.get_settings())


@contextmanager
def paused(server: ChromaServer):
    """The server process stopped (SIGSTOP): it keeps its port, accepts connections, and answers nothing."""
    os.kill(server.process.pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(server.process.pid, signal.SIGCONT)


def finishes_within(seconds: float, call) -> BaseException | None:
    """Run `call` in a thread; fail the test if it is still running after `seconds`; return what it raised."""
    raised: list[BaseException] = []

    def run():
        try:
            call()
        except BaseException as exc:  # noqa: BLE001 - handed back to the test
            raised.append(exc)

    worker = threading.Thread(target=run, daemon=True)
    started = time.monotonic()
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), f"still waiting on the server after {time.monotonic() - started:.0f} s"
    return raised[0] if raised else None


def forge(*args: str, env: dict, cwd, limit: float) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pmforge.surfaces.cli", *args], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=limit)


def server_env(host: str, port: int, projects) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FORGE_", "CHROMA_", "ANTHROPIC_", "VOYAGE_"))}
    return {**env, "CHROMA_HOST": host, "CHROMA_PORT": str(port), "FORGE_CHROMA_TIMEOUT_S": str(TIMEOUT_S),
            "FORGE_PROJECTS_DIR": str(projects)}


@pytest.fixture
def server(tmp_path):
    server = ChromaServer(tmp_path / "paused-db").start()
    try:
        yield server
    finally:
        if server.process and server.process.poll() is None:
            os.kill(server.process.pid, signal.SIGCONT)  # a stopped process cannot act on its terminate signal
        server.stop()


def test_a_paused_server_fails_a_turn_in_one_sentence_and_the_next_turn_works(server, monkeypatch, isolated_env):
    project = Project.create(on_server(monkeypatch, server.host, server.port), "Paused server")
    assert ingest_file(project, "plan.md", PLAN).ok
    run_turn(project, "We think weekend shrink is the problem.")
    before = project.ws.state_path.read_bytes()

    with paused(server):
        error = finishes_within(TIMEOUT_S + SLACK_S, lambda: run_turn(project, "What does the plan say about scope?"))
        assert isinstance(error, ForgeError), error
        assert f"Chroma server at {server.host}:{server.port} is not reachable (ReadTimeout)" in str(error)
        assert "\n" not in str(error)  # one sentence, no traceback
        assert project.ws.state_path.read_bytes() == before  # the turn was not half-saved

        error = finishes_within(TIMEOUT_S + SLACK_S, project.store.documents.file_ids)  # a single store call
        assert isinstance(error, StoreUnavailable), error

    assert run_turn(project, "What does the plan say about scope?").turn == 2  # same client, server back


def test_a_command_on_a_paused_server_says_so_within_the_timeout(server, monkeypatch, isolated_env):
    slug = Project.create(on_server(monkeypatch, server.host, server.port), "Paused CLI").ws.slug
    env = server_env(server.host, server.port, isolated_env / "projects")
    assert forge("reindex", slug, env=env, cwd=isolated_env, limit=120).returncode == 0

    with paused(server):
        done = forge("reindex", slug, env=env, cwd=isolated_env, limit=TIMEOUT_S + SLACK_S)  # old: hung for ever
        listed = forge("files", slug, env=env, cwd=isolated_env, limit=120)  # the file list needs no vectors
    assert listed.returncode == 0 and listed.stderr == ""
    assert done.returncode == 1
    assert done.stderr.strip() == (
        f"The Chroma server at {server.host}:{server.port} is not reachable (no answer within {TIMEOUT_S} s); "
        "start it, or unset CHROMA_HOST to use the embedded store."
    )


def test_a_closed_port_says_so_at_once(monkeypatch, isolated_env):
    port = free_port()  # nothing listens there
    services = on_server(monkeypatch, "127.0.0.1", port)
    error = finishes_within(TIMEOUT_S + SLACK_S, lambda: Project.create(services, "Nobody home"))
    assert isinstance(error, StoreUnavailable)
    assert str(error) == (f"The Chroma server at 127.0.0.1:{port} is not reachable (ConnectError); "
                          "start it, or unset CHROMA_HOST to use the embedded store.")


@contextmanager
def never_accepting():
    """A port whose listener never accepts and whose queue is full: connecting hangs, as to a host that
    silently drops packets."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port = listener.getsockname()[1]
    queued = []
    for _ in range(4):
        s = socket.socket()
        s.setblocking(False)
        try:
            s.connect(("127.0.0.1", port))
        except BlockingIOError:
            pass
        queued.append(s)
    try:
        yield port
    finally:
        for s in queued + [listener]:
            s.close()


def test_a_server_that_never_completes_the_connection_fails_within_the_timeout(monkeypatch, isolated_env):
    with never_accepting() as port:
        services = on_server(monkeypatch, "127.0.0.1", port)
        error = finishes_within(TIMEOUT_S + SLACK_S, lambda: Project.create(services, "Black hole"))
    assert isinstance(error, StoreUnavailable)
    assert f"127.0.0.1:{port} is not reachable (no answer within {TIMEOUT_S} s)" in str(error)
