"""The real app in a real browser: `forge ui` started offline on a free loopback port with its own
projects folder, and the Debian Chromium driven through Playwright. Shared by `forge bench ui` and
the browser tests, so starting, opening and stopping the app exists once.

Playwright is imported only inside the functions that drive Chromium: without it, `forge bench ui`
can still say in one sentence what is missing.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

if TYPE_CHECKING:
    from playwright.sync_api import Browser

CHROMIUM = os.environ.get("FORGE_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
# Keys and remote services must never reach the app under test (nor any OPENAI_* setting).
SCRUBBED = ("ANTHROPIC_API_KEY", "VOYAGE_API_KEY", "ANTHROPIC_BASE_URL", "VOYAGE_BASE_URL",
            "CHROMA_HOST", "CHROMA_PORT")

STARTUP_TIMEOUT = 60  # seconds, for the server to answer its health check
WAIT_MS = 60_000      # milliseconds, for a Streamlit rerun to show its result (ingest and replies embed)


class AppDidNotStart(RuntimeError):
    """`forge ui` exited or never answered its health check; the message ends with its log's tail."""


# ---------------------------------------------------------------- what is installed

def playwright_installed() -> bool:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return False
    return True


def chromium_installed(path: str = CHROMIUM) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def missing_browser() -> str | None:
    """One sentence naming what the browser needs and is missing, or None when all is there."""
    if not playwright_installed():
        return ("The playwright Python package is not installed: install Forge's test extra "
                "(pip install -e '.[test]').")
    if not chromium_installed():
        return f"No Chromium at {CHROMIUM}: install the chromium package or set FORGE_CHROMIUM to its path."
    return None


# ---------------------------------------------------------------- the server

def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tail(path: Path, lines: int = 40) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
            return response.status == 200 and response.read().strip() == b"ok"
    except (urllib.error.URLError, OSError):
        return False


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover - a reused id owned by someone else
        return False
    return True


def stop(proc: subprocess.Popen) -> None:
    """`forge ui` runs Streamlit as its child: stop the whole process group we started.

    SIGTERM first, then SIGKILL after a grace period; returns once `forge` and Streamlit are both gone.
    """
    pgid = proc.pid  # start_new_session=True: the group's id is forge's pid
    for sig, grace in ((signal.SIGTERM, 10.0), (signal.SIGKILL, 5.0)):
        if proc.poll() is not None and not group_alive(pgid):
            return
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            pass
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            if proc.poll() is not None and not group_alive(pgid):
                return
            time.sleep(0.1)
    proc.wait(timeout=5)


def offline_env(projects_dir: Path) -> dict[str, str]:
    """The environment of an offline `forge` command: no keys, no remote services, its own projects folder."""
    env = {k: v for k, v in os.environ.items() if k not in SCRUBBED and not k.startswith("OPENAI_")}
    env.update(
        FORGE_PROJECTS_DIR=str(projects_dir),
        FORGE_LLM="offline",
        FORGE_EMBEDDINGS="local",
        # Edits to the source while the app runs must not trigger Streamlit's "File change" banner.
        STREAMLIT_SERVER_FILE_WATCHER_TYPE="none",
        PYTHONUNBUFFERED="1",
    )
    return env


@contextmanager
def forge_ui(workdir: Path) -> Iterator[str]:
    """`forge ui` on a free loopback port, offline, with its projects in `workdir`/projects; yields its URL.

    The log goes to `workdir`/forge-ui.log; the whole process group is stopped on the way out.
    """
    forge = Path(sys.executable).with_name("forge")
    if not forge.exists():
        raise AppDidNotStart(f"{forge} is missing: install pmforge into this environment")
    port = free_port()
    log_path = workdir / "forge-ui.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [str(forge), "ui", "--port", str(port), "--address", "127.0.0.1"],
            cwd=workdir,  # a developer's .env in the repository must not be read
            env=offline_env(workdir / "projects"), stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group, so Streamlit stops with it
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while not healthy(url):
            if proc.poll() is not None:
                raise AppDidNotStart(f"forge ui exited with {proc.returncode}:\n{tail(log_path)}")
            if time.monotonic() > deadline:
                raise AppDidNotStart(f"forge ui not healthy after {STARTUP_TIMEOUT}s:\n{tail(log_path)}")
            time.sleep(0.25)
        yield url
    finally:
        stop(proc)


# ---------------------------------------------------------------- the browser

@contextmanager
def chromium() -> Iterator[Browser]:
    """A headless Chromium (a Playwright Browser) from the system's own binary; nothing is downloaded."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def open_app(page, url: str, attempts: int = 3) -> int:
    """Load the app; returns how many loads it took. On a loaded 2-core machine the first websocket
    handshake can time out while the server imports its libraries, and Streamlit then shows "Connection
    error"; a reload is what a person would do, so do it (a few times at most) instead of failing."""
    from playwright.sync_api import expect

    ready = page.get_by_text("Running offline")
    trouble = page.get_by_role("heading", name="Connection error")
    for attempt in range(1, attempts + 1):
        page.goto(url, wait_until="domcontentloaded")
        expect(ready.or_(trouble).first).to_be_visible(timeout=WAIT_MS)
        if ready.is_visible():
            return attempt
    raise AssertionError(f"the app showed 'Connection error' on {attempts} loads")
