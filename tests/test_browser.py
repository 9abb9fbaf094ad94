"""The real app in a real browser: `forge ui` driven through Chromium with Playwright, offline.

Run it alone with `pytest tests/test_browser.py -q -x` (or `-m browser`). It needs the
Debian Chromium at /usr/bin/chromium (override with FORGE_CHROMIUM) and the `playwright`
Python package; nothing is downloaded. Screenshots of every step, at 1400×900 and at 1280×720, land in
test-artifacts/browser/ (CI keeps that folder).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from pmforge.interviewer.questions import questions_in
from pmforge.surfaces.bench.browser import CHROMIUM, WAIT_MS, chromium, forge_ui, open_app

REPO = Path(__file__).resolve().parents[1]
ARTIFACTS = REPO / "test-artifacts" / "browser"
WAIT = WAIT_MS  # milliseconds, for a Streamlit rerun to show its result (ingest and replies embed)

FILENAME = "pilot-plan.md"
STARTER = "Start the interview: ask me your first questions."  # one of the welcome's starter prompts
RESEARCH = "store-research.md"
RESEARCH_NOTES = "# Store research\n\n" + "\n\n".join(
    f"## Store {i}\n\nStore {i} reports bakery shrink of {i % 9 + 2} percent, mostly from late markdowns and "
    "over-ordering before weekends; leads say the handheld markdown tool is slow." for i in range(80))
PILOT_PLAN = """# Pilot plan

A short plan for the Midwest markdown pilot.

## Scope

The pilot covers 20 stores in the Midwest region for eight weeks.

## Metrics

We track shrink as a share of sales, markdown sell-through and the staff hours spent on markdowns.
"""

try:
    from playwright.sync_api import expect, sync_playwright

    # A Streamlit rerun on this 2-core machine can take more than Playwright's default 5 s when the language
    # model loads for the first time: every expectation waits as long as a rerun may take.
    expect.set_options(timeout=20_000)
except ImportError:  # pragma: no cover - depends on the environment
    sync_playwright = None

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(sync_playwright is None, reason="the playwright Python package is not installed"),
    pytest.mark.skipif(not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)),
                       reason=f"no Chromium at {CHROMIUM} (set FORGE_CHROMIUM to its path)"),
]


# ---------------------------------------------------------------- helpers

SIZES = {"1400x900": {"width": 1400, "height": 900}, "1280x720": {"width": 1280, "height": 720}}


def _shots(page, name: str, element=None) -> None:
    """The page as it is now, at both window sizes a PM is likely to use (then back to the larger one);
    with `element`, that part of the page only (the chat keeps itself scrolled to its end on a resize)."""
    for size, viewport in SIZES.items():
        page.set_viewport_size(viewport)
        page.wait_for_timeout(300)  # the layout settles after a resize
        (element or page).screenshot(path=str(ARTIFACTS / f"{name}-{size}.png"), animations="disabled",
                                     caret="hide")
    page.set_viewport_size(SIZES["1400x900"])


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


# Records, for the reply being written, every text the page showed: streaming means several partial texts.
WATCH_REPLY = """() => {
  window.__forgeSeen = [];
  const record = () => {
    const replies = document.querySelectorAll('[data-testid=stChatMessage]:has([data-testid=stChatMessageAvatarAssistant])');
    const last = replies[replies.length - 1];
    const text = last ? (last.querySelector('[data-testid=stMarkdownContainer]') || {}).innerText || '' : '';
    if (window.__forgeSeen[window.__forgeSeen.length - 1] !== text) window.__forgeSeen.push(text);
  };
  new MutationObserver(record).observe(document.body, {subtree: true, childList: true, characterData: true});
}"""


def _send(page, message: str, expected_replies: int):
    """Type a message, press Enter, wait for the finished reply (its Retry button), and return the reply
    with every text the page showed for it on the way."""
    box = page.get_by_test_id("stChatInput").locator("textarea")
    expect(box).to_be_editable()
    page.evaluate(WATCH_REPLY)
    box.fill(message)
    box.press("Enter")
    replies = _assistant_replies(page)
    expect(replies).to_have_count(expected_replies, timeout=WAIT)
    reply = replies.nth(expected_replies - 1)
    expect(reply.get_by_role("button", name="Retry")).to_be_visible(timeout=WAIT)  # drawn from the saved turn
    _settled(page)
    return reply, page.evaluate("() => window.__forgeSeen")


def _saved_users(projects: Path, slug: str) -> list[str]:
    import json

    path = projects / slug / "turns.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    return [json.loads(line)["user"] for line in lines if line.startswith('{"') and '"user"' in line]


# ---------------------------------------------------------------- the journey

def test_a_new_pm_from_the_demo_to_deleting_a_project(tmp_path):
    """welcome → demo → new project → two uploads while a message is sent (kept, answered) → five streamed
    turns → a cited passage opened → rename → export → delete a file → delete the project."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for old in ARTIFACTS.glob("*.png"):  # only this run's pictures (and failure.png) remain
        old.unlink()
    projects = tmp_path / "projects"
    # What a fresh clone holds: the shipped demo, no vectors, no private copy.
    shutil.copytree(REPO / "projects" / "demo", projects / "demo",
                    ignore=shutil.ignore_patterns("vectordb", ".lock", ".turn.lock", ".operation.json", ".undo.json"))
    with forge_ui(tmp_path) as url, chromium() as browser:
        page = browser.new_context(viewport=SIZES["1400x900"], accept_downloads=True).new_page()
        page.set_default_timeout(30_000)
        try:
            open_app(page, url)
            _journey(page, tmp_path, projects)
        except BaseException:
            try:
                page.screenshot(path=str(ARTIFACTS / "failure.png"))  # what the browser showed when it broke
            except Exception:
                pass
            raise


def _journey(page, tmp_path: Path, projects: Path) -> None:
    sidebar = page.get_by_test_id("stSidebar")
    main = page.get_by_test_id("stMainBlockContainer")
    expect(sidebar.get_by_text("Running offline")).to_be_visible(timeout=WAIT)

    # 1. The first screen: the finished demo, saying what Forge is for and what it is.
    expect(main).to_contain_text("This is a finished example", timeout=WAIT)
    expect(main).to_contain_text("Forge helps a product manager")
    expect(main.get_by_role("button", name="Reset demo")).to_be_visible()
    expect(sidebar).to_contain_text("store-interviews-q3.md")
    _settled(page)
    _shots(page, "01-demo")

    # 2. A new project from the sidebar's New menu; the form folds away once used.
    sidebar.get_by_role("button", name="New").click()
    page.get_by_label("Project name").fill("Browser Pilot")
    page.get_by_role("button", name="Create project").click()
    expect(main.get_by_role("heading", name="Browser Pilot")).to_be_visible(timeout=WAIT)
    expect(main).to_contain_text("Upload the files behind your question")
    expect(main).to_contain_text("Start by uploading your files.")
    expect(main.get_by_role("button", name=STARTER)).to_be_visible()
    expect(page.get_by_label("Project name")).to_have_count(0)
    _settled(page)
    _shots(page, "02-new-project")

    # 3. Two files, and a message sent while they are being prepared: kept, shown, answered after them.
    plan, research = tmp_path / FILENAME, tmp_path / RESEARCH
    plan.write_text(PILOT_PLAN, encoding="utf-8")
    research.write_text(RESEARCH_NOTES, encoding="utf-8")
    sidebar.get_by_test_id("stFileUploader").locator("input[type=file]").set_input_files([str(research), str(plan)])
    expect(main.get_by_text("Preparing your files…")).to_be_visible(timeout=WAIT)
    box = page.get_by_test_id("stChatInput").locator("textarea")
    expect(box).to_be_editable()  # the chat stays usable during the upload
    question = "How many stores are in the pilot?"
    box.fill(question)
    box.press("Enter")
    expect(main.get_by_test_id("stChatMessage").filter(has_text=question)).to_have_count(1, timeout=WAIT)
    expect(main).to_contain_text("Waiting for your files to be ready", timeout=WAIT)
    _shots(page, "03-message-during-upload")
    reply = _assistant_replies(page).first
    expect(reply.get_by_role("button", name="Retry")).to_be_visible(timeout=120_000)
    _settled(page)
    expect(reply).to_contain_text("20 stores")
    expect(_file_rows(sidebar, FILENAME)).to_have_count(1)
    expect(_file_rows(sidebar, RESEARCH)).to_have_count(1)
    assert _saved_users(projects, "browser-pilot") == [question]  # nothing lost: the message is the first turn
    _shots(page, "04-answered-after-upload")

    # 4. Five more turns; each reply is seen streaming (partial texts before the whole one).
    for i, message in enumerate(["ok", "Bakery leads lose about two hours a week on markdowns.", "go on",
                                 "I think store managers will adopt a daily markdown list.", "yes, that's right"]):
        reply, seen = _send(page, message, expected_replies=i + 2)
        final = reply.get_by_test_id("stMarkdownContainer").first.inner_text()
        partial = [t for t in seen if t and len(t) < len(final) - 10 and not t.startswith("Waiting")]
        assert partial, f"turn {i + 2}: no partial reply seen; the page showed {seen!r}"
    expect(sidebar).to_contain_text("turn 6")
    assert len(_saved_users(projects, "browser-pilot")) == 6
    # A conversation, not a form: the file question answered first, and no question asked twice.
    texts = [r.get_by_test_id("stMarkdownContainer").first.inner_text() for r in _assistant_replies(page).all()]
    assert "20" in texts[0][:60], texts[0]
    asked = [q for text in texts for q in questions_in(text)]
    assert len(asked) == len(set(asked)) and len(asked) >= 5, asked
    _shots(page, "05-five-turns")

    # 5. The cited passage, opened from the citation inside the first reply, with its sentence highlighted.
    first = _assistant_replies(page).first
    chip = first.locator(".forge-cite-label", has_text=f"{FILENAME} ›").first
    chip.scroll_into_view_if_needed()
    highlighted = first.locator("mark", has_text="The pilot covers 20 stores in the Midwest region")
    expect(highlighted).to_be_hidden()
    chip.click()
    expect(highlighted).to_be_visible()
    _shots(page, "06-cited-passage", element=first)
    chip.click()
    expect(highlighted).to_be_hidden()

    # 6. Rename: the picker and the heading show the new name; the folder keeps its slug.
    sidebar.get_by_role("button", name="Rename").click()
    page.get_by_role("textbox", name="Display name").fill("Pilot Review")
    page.get_by_role("button", name="Rename", exact=True).last.click()
    expect(main.get_by_role("heading", name="Pilot Review")).to_be_visible(timeout=WAIT)
    expect(sidebar.get_by_role("combobox", name="Project")).to_have_value("Pilot Review")
    assert (projects / "browser-pilot").is_dir()
    _settled(page)
    _shots(page, "07-renamed")

    # 7. Export the transcript as Markdown (its menu opens below the button: the button is brought into view
    # first, or the menu can open below the window's edge).
    export = main.get_by_role("button", name="Export")
    export.evaluate("element => element.scrollIntoView({block: 'start'})")
    export.click()
    with page.expect_download() as download:
        # The menu can still open partly below the window's edge: the click is sent to the button itself.
        page.get_by_role("button", name="Transcript (.md)").dispatch_event("click")
    exported = Path(download.value.path()).read_text(encoding="utf-8")
    assert question in exported and "Pilot Review" in exported
    page.keyboard.press("Escape")
    _shots(page, "08-exported")

    # 8. Delete a file (asked first).
    _delete_button(sidebar, FILENAME).click()
    expect(sidebar).to_contain_text(f"Delete {FILENAME}?", timeout=WAIT)
    sidebar.get_by_role("button", name="Yes, delete", exact=True).click()
    expect(_file_rows(sidebar, FILENAME)).to_have_count(0, timeout=WAIT)
    expect(sidebar).to_contain_text(f"Deleted {FILENAME}.")
    _settled(page)
    _shots(page, "09-file-deleted")

    # 9. Delete the project, after typing its name; the demo is what remains.
    sidebar.get_by_role("button", name="Delete…").click()
    page.get_by_role("textbox", name="Type 'Pilot Review' to confirm").fill("Pilot Review")
    page.get_by_role("button", name="Delete project").click()
    expect(main).to_contain_text("This is a finished example", timeout=WAIT)
    expect(sidebar.get_by_role("combobox", name="Project")).not_to_have_value("Pilot Review")
    assert not (projects / "browser-pilot").exists()
    _settled(page)
    _shots(page, "10-project-deleted")
