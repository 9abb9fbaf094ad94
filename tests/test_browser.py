"""The real app in a real browser: `forge ui` driven through Chromium with Playwright, offline.

Run it alone with `pytest tests/test_browser.py -q -x` (or `-m browser`). It needs the
Debian Chromium at /usr/bin/chromium (override with FORGE_CHROMIUM) and the `playwright`
Python package; nothing is downloaded. Screenshots land in test-artifacts/browser/.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
ARTIFACTS = REPO / "test-artifacts" / "browser"
CHROMIUM = os.environ.get("FORGE_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
# Keys and remote services must never reach the app under test.
SCRUBBED = ("ANTHROPIC_API_KEY", "VOYAGE_API_KEY", "ANTHROPIC_BASE_URL", "VOYAGE_BASE_URL",
            "CHROMA_HOST", "CHROMA_PORT")

STARTUP_TIMEOUT = 60  # seconds, for the server to answer its health check
WAIT = 60_000         # milliseconds, for a Streamlit rerun to show its result (ingest and replies embed)

FILENAME = "pilot-plan.md"
STARTER = "Start the interview: ask me your first questions."  # one of the welcome's starter prompts
PILOT_PLAN = """# Pilot plan

A short plan for the Midwest markdown pilot.

## Scope

The pilot covers 20 stores in the Midwest region for eight weeks.

## Metrics

We track shrink as a share of sales, markdown sell-through and the staff hours spent on markdowns.
"""

try:
    from playwright.sync_api import expect, sync_playwright
except ImportError:  # pragma: no cover - depends on the environment
    sync_playwright = None

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(sync_playwright is None, reason="the playwright Python package is not installed"),
    pytest.mark.skipif(not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)),
                       reason=f"no Chromium at {CHROMIUM} (set FORGE_CHROMIUM to its path)"),
]


# ---------------------------------------------------------------- the server

def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _tail(path: Path, lines: int = 40) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
            return response.status == 200 and response.read().strip() == b"ok"
    except (urllib.error.URLError, OSError):
        return False


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover - a reused id owned by someone else
        return False
    return True


def _stop(proc: subprocess.Popen) -> None:
    """`forge ui` runs Streamlit as its child: stop the whole process group we started.

    SIGTERM first, then SIGKILL after a grace period; returns once `forge` and Streamlit are both gone.
    """
    pgid = proc.pid  # start_new_session=True: the group's id is forge's pid
    for sig, grace in ((signal.SIGTERM, 10.0), (signal.SIGKILL, 5.0)):
        if proc.poll() is not None and not _group_alive(pgid):
            return
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            pass
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            if proc.poll() is not None and not _group_alive(pgid):
                return
            time.sleep(0.1)
    proc.wait(timeout=5)


@pytest.fixture
def forge_url(tmp_path):
    """`forge ui` on a free loopback port, offline, with its own projects folder; yields its URL."""
    forge = Path(sys.executable).with_name("forge")
    assert forge.exists(), f"{forge} is missing: install pmforge into this environment"
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k not in SCRUBBED}
    env.update(
        FORGE_PROJECTS_DIR=str(tmp_path / "projects"),
        FORGE_LLM="offline",
        FORGE_EMBEDDINGS="local",
        # Edits to the source while the test runs must not trigger Streamlit's "File change" banner.
        STREAMLIT_SERVER_FILE_WATCHER_TYPE="none",
        PYTHONUNBUFFERED="1",
    )
    log_path = tmp_path / "forge-ui.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [str(forge), "ui", "--port", str(port), "--address", "127.0.0.1"],
            cwd=tmp_path,  # a developer's .env in the repository must not be read
            env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group, so Streamlit stops with it
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while not _healthy(url):
            if proc.poll() is not None:
                pytest.fail(f"forge ui exited with {proc.returncode}:\n{_tail(log_path)}")
            if time.monotonic() > deadline:
                pytest.fail(f"forge ui not healthy after {STARTUP_TIMEOUT}s:\n{_tail(log_path)}")
            time.sleep(0.25)
        yield url
    finally:
        _stop(proc)


@pytest.fixture
def page(forge_url):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for old in ARTIFACTS.glob("*.png"):  # only this run's pictures (and failure.png) remain
        old.unlink()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport={"width": 1400, "height": 1000})
            page = context.new_page()
            page.set_default_timeout(30_000)
            _open_app(page, forge_url)
            yield page
        finally:
            browser.close()


# ---------------------------------------------------------------- helpers

def _open_app(page, url: str, attempts: int = 3) -> None:
    """Load the app. On a loaded 2-core machine the first websocket handshake can time out while the
    server imports its libraries, and Streamlit then shows "Connection error"; a reload is what a person
    would do, so do it (a few times at most) instead of failing on the first try."""
    ready = page.get_by_text("Running offline")
    trouble = page.get_by_role("heading", name="Connection error")
    for attempt in range(attempts):
        page.goto(url, wait_until="domcontentloaded")
        expect(ready.or_(trouble).first).to_be_visible(timeout=WAIT)
        if ready.is_visible():
            return
    raise AssertionError(f"the app showed 'Connection error' on {attempts} loads")


def _shot(page, name: str) -> None:
    # Finish the expander's opening transition and hide the blinking caret: stable pictures.
    page.screenshot(path=str(ARTIFACTS / name), animations="disabled", caret="hide")


def _settled(page) -> None:
    """Wait until no script run is in progress (Streamlit's "Running…" status widget is gone)."""
    expect(page.get_by_test_id("stStatusWidget")).to_have_count(0, timeout=WAIT)


def _assistant_replies(page):
    return page.get_by_test_id("stChatMessage").filter(has=page.get_by_test_id("stChatMessageAvatarAssistant"))


def _file_rows(sidebar, filename: str):
    """The file list entries naming `filename` (its bold name; the uploader's own chip is not bold)."""
    return sidebar.locator("strong", has_text=filename)


def _delete_button(sidebar, filename: str):
    """The delete button in the same row (columns) as the file's name."""
    name = sidebar.page.locator("strong", has_text=filename)  # `has=` is matched inside each row
    return sidebar.get_by_test_id("stHorizontalBlock").filter(has=name).get_by_role("button")


def _send(page, message: str, expected_replies: int):
    """Type a message into the chat input, press Enter, and return the finished assistant reply."""
    box = page.get_by_test_id("stChatInput").locator("textarea")
    expect(box).to_be_editable()
    box.fill(message)
    box.press("Enter")
    replies = _assistant_replies(page)
    expect(replies).to_have_count(expected_replies, timeout=WAIT)
    reply = replies.nth(expected_replies - 1)
    # The expander is drawn only from the saved turn, after the rerun that ends the turn.
    expect(reply.get_by_test_id("stExpander")).to_contain_text("What Forge looked at", timeout=WAIT)
    _settled(page)
    return reply


# ---------------------------------------------------------------- the journey

def test_create_upload_chat_delete_in_chromium(page, tmp_path):
    try:
        _journey(page, tmp_path)
    except BaseException:
        try:
            _shot(page, "failure.png")  # what the browser showed when the journey broke
        except Exception:
            pass
        raise


def _journey(page, tmp_path) -> None:
    sidebar = page.get_by_test_id("stSidebar")
    main = page.get_by_test_id("stMainBlockContainer")
    expect(sidebar.get_by_text("Running offline")).to_be_visible(timeout=WAIT)

    # Create a project through the sidebar form ("New project" starts open while there are none).
    name_box = sidebar.get_by_label("Project name")
    expect(name_box).to_be_visible(timeout=WAIT)
    name_box.fill("Browser Pilot")
    sidebar.get_by_role("button", name="Create project").click()
    expect(main.get_by_role("heading", name="Browser Pilot")).to_be_visible(timeout=WAIT)
    expect(sidebar.get_by_role("heading", name="Project Files")).to_be_visible(timeout=WAIT)
    expect(sidebar).to_contain_text("No files yet", timeout=WAIT)
    # A project with no turns yet welcomes: the three steps, the upload hint, starter prompts.
    expect(main).to_contain_text("Upload the files behind your question")
    expect(main).to_contain_text("Start by uploading your files.")
    expect(main.get_by_role("button", name=STARTER)).to_be_visible()
    _settled(page)
    _shot(page, "01-created.png")

    # Upload a Markdown file through the sidebar uploader.
    plan = tmp_path / FILENAME
    plan.write_text(PILOT_PLAN, encoding="utf-8")
    sidebar.get_by_test_id("stFileUploader").locator("input[type=file]").set_input_files(str(plan))
    expect(_file_rows(sidebar, FILENAME)).to_have_count(1, timeout=WAIT)
    expect(sidebar).not_to_contain_text("No files yet", timeout=WAIT)
    _settled(page)
    _shot(page, "02-uploaded.png")

    # Routing and token telemetry wait behind the sidebar's Developer details toggle (off by default).
    expect(main).not_to_contain_text("What Forge looked at")
    sidebar.get_by_text("Developer details").click()
    _settled(page)

    # Ask about the file: the offline interviewer quotes it and asks its first question.
    reply = _send(page, "How many stores are in the pilot?", expected_replies=1)
    expect(reply).to_contain_text("Question 1:")
    expect(reply).to_contain_text(re.compile(r"From your files, \[" + re.escape(FILENAME) + " ›"))
    expect(reply).to_contain_text("20 stores")
    expect(sidebar).to_contain_text("turn 1")
    expect(main.get_by_role("button", name=STARTER)).to_have_count(0)  # the conversation took the page
    _shot(page, "03-reply.png")

    # What Forge looked at, under the latest reply.
    expander = reply.get_by_test_id("stExpander")
    expander.locator("summary").click()
    details = expander.get_by_test_id("stExpanderDetails")
    expect(details).to_be_visible()
    expect(details).to_contain_text("Routing")
    expect(details).to_contain_text("Document sections")
    # Let the panel finish opening, then bring its end clear of the chat input pinned at the bottom.
    expander.evaluate("e => Promise.allSettled(e.getAnimations({subtree: true}).map(a => a.finished))")
    details.get_by_text("Prompt tokens").evaluate("e => e.scrollIntoView({block: 'center'})")
    _shot(page, "04-expander.png")

    # A second turn.
    second = _send(page, "yes", expected_replies=2)
    expect(second.get_by_test_id("stMarkdownContainer").first).not_to_have_text("")
    expect(page.get_by_test_id("stChatMessage")).to_have_count(4)
    expect(sidebar).to_contain_text("turn 2")

    # Delete the file with its delete button (its tooltip names the file).
    delete = _delete_button(sidebar, FILENAME)
    expect(delete).to_have_count(1)
    delete.hover()
    expect(page.get_by_role("tooltip")).to_contain_text(f"Delete {FILENAME}")
    delete.click()
    expect(sidebar).to_contain_text(f"Delete {FILENAME}?", timeout=WAIT)  # asks before deleting
    sidebar.get_by_role("button", name="Yes, delete", exact=True).click()
    expect(_file_rows(sidebar, FILENAME)).to_have_count(0, timeout=WAIT)
    expect(sidebar).to_contain_text("No files yet", timeout=WAIT)
    expect(sidebar).to_contain_text(f"Deleted {FILENAME}.")  # the confirmation survives the rerun
    expect(sidebar).not_to_contain_text(f"Indexed {FILENAME}")  # the upload notice was one-shot
    _settled(page)
    _shot(page, "05-deleted.png")
