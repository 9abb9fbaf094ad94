"""`forge ui` never leaves a Streamlit server behind: a stop signal sent to `forge` stops the server too,
and the port is free again. Real `forge ui`, real Streamlit, on a free local port; offline."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from forge_bench.bench.browser import free_port, group_alive, healthy

STOP_WITHIN_S = 15  # the hard limit for everything to be gone after the signal
START_WITHIN_S = 90


def _forge_command() -> list[str]:
    script = Path(sys.executable).with_name("forge")
    return [str(script)] if script.exists() else [sys.executable, "-m", "pmforge.surfaces.cli"]


def _port_free(port: int) -> bool:
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # a closed connection's TIME_WAIT is not a server
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _servers_on(port: int) -> list[str]:
    """Command lines of live processes that were started to serve `port`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            status = (entry / "status").read_text()
        except OSError:
            continue
        if "State:\tZ" in status:
            continue
        words = [a.decode(errors="replace") for a in argv]
        if "--server.port" in words and str(port) in words:
            found.append(" ".join(words))
    return found


def _wait_until(check, limit_s: float) -> bool:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.2)
    return check()


def _leave_nothing_behind(forge: subprocess.Popen) -> None:
    """Whatever a test asserted, no process of its group outlives it."""
    if group_alive(forge.pid):
        os.killpg(forge.pid, signal.SIGKILL)
    if forge.poll() is None:
        forge.kill()
        forge.wait()


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="POSIX signals, process groups and /proc")
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP], ids=["TERM", "INT", "HUP"])
def test_stopping_forge_ui_stops_streamlit_and_frees_the_port(isolated_env, signum):
    port = free_port()
    env = dict(os.environ, FORGE_PROJECTS_DIR=str(isolated_env / "projects"))
    # Its own process group, as a service manager would start it: everything Forge starts is in it.
    forge = subprocess.Popen([*_forge_command(), "ui", "--port", str(port)], env=env, cwd=isolated_env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        assert _wait_until(lambda: healthy(f"http://127.0.0.1:{port}") or forge.poll() is not None, START_WITHIN_S)
        assert forge.poll() is None and healthy(f"http://127.0.0.1:{port}"), "forge ui did not come up"
        assert _servers_on(port)  # the Streamlit server, started by forge

        forge.send_signal(signum)  # to forge alone, not its group: forge must pass it on
        forge.wait(timeout=STOP_WITHIN_S)
        assert _wait_until(lambda: not group_alive(forge.pid), STOP_WITHIN_S), _servers_on(port)
        assert _servers_on(port) == []
        assert _wait_until(lambda: _port_free(port), STOP_WITHIN_S)
    finally:
        _leave_nothing_behind(forge)


STUBBORN = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('up', flush=True); time.sleep(600)"


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and process groups")
def test_a_server_that_ignores_the_stop_signal_is_killed_after_the_grace_period(tmp_path):
    runner = ("import sys; from pmforge.surfaces.cli.serve import serve_until_stopped; "
              f"sys.exit(serve_until_stopped([sys.executable, '-c', {STUBBORN!r}], 1.0))")
    forge = subprocess.Popen([sys.executable, "-c", runner], stdout=subprocess.PIPE, text=True,
                             start_new_session=True, cwd=tmp_path)
    try:
        assert forge.stdout.readline().strip() == "up"  # the child is running and ignores SIGTERM
        forge.send_signal(signal.SIGTERM)
        forge.wait(timeout=STOP_WITHIN_S)
        assert _wait_until(lambda: not group_alive(forge.pid), STOP_WITHIN_S)
    finally:
        _leave_nothing_behind(forge)
