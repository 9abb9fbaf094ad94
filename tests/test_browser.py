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

from forge_bench.bench.browser import CHROMIUM, WAIT_MS, chromium, forge_ui, open_app
from pmforge.interviewer.questions import questions_in
from pmforge.outputs.plain import plain_text
from pmforge.surfaces.ui.copy import COPY_FRAME_TITLE

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

BUDGET = "pilot__budget.docx"  # a double underscore: Markdown would read it as bold
# Questions about the files, each with the fact its reply must state in its first words.
FILE_QUESTIONS = [
    ("How many stores are in the pilot?", "20"),
    ("How much do the handhelds cost?", "$42,000"),
    ("How long does the pilot run?", "eight weeks"),
    ("What do we track in the pilot?", "shrink"),
    ("Who owns the training budget?", "Store ops"),
]
ORDINARY = [
    "Bakery leads lose about two hours a week on markdowns.",
    "ok",
    "I think store managers will adopt a daily markdown list.",
    "Dana Whitfield, our VP of Stores, signs off on the budget.",
    "go on",
    "Success is bakery shrink down from 9% to 7% by the end of the pilot, without out-of-stocks rising.",
    "Regional directors would have to own a daily markdown target.",
    "The trigger is the new CFO's cost review in March.",
    "yes, that's right",
    "We tried a markdown app in 2023 but leads stopped using it after a month.",
    "If shrink hasn't moved after four weeks, we stop.",
    "The loss-prevention team might resist, because markdowns lower their shrink numbers.",
]
# After the first question (sent during the upload): twelve ordinary turns with four file questions among them.
CONVERSATION = (ORDINARY[:2] + [FILE_QUESTIONS[1][0]] + ORDINARY[2:5] + [FILE_QUESTIONS[2][0]] + ORDINARY[5:8]
                + [FILE_QUESTIONS[3][0]] + ORDINARY[8:11] + [FILE_QUESTIONS[4][0]] + ORDINARY[11:])


def _budget_docx() -> bytes:
    """A Word file whose facts sit in a table."""
    import io

    from docx import Document

    doc = Document()
    doc.add_heading("Pilot budget", level=1)
    doc.add_paragraph("What the markdown pilot costs, by item, and who owns each line.")
    table = doc.add_table(rows=1, cols=3)
    for cell, text in zip(table.rows[0].cells, ("Item", "Cost", "Owner")):
        cell.text = text
    for row in (("Handhelds", "$42,000", "IT"), ("Training", "$8,500", "Store ops"),
                ("Labels", "$3,200", "Merchandising")):
        for cell, text in zip(table.add_row().cells, row):
            cell.text = text
    out = io.BytesIO()
    doc.save(out)
    return out.getvalue()


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


# Resolves 0.7 s after a Stop button first shows inside the window, with the spot where it showed and the name of
# what is at that spot then (a button's or frame's words, else the element's tag).
STOP_AT_0_7_S = """() => new Promise(resolve => {
  const look = () => {
    const stop = [...document.querySelectorAll('[data-testid=stMainBlockContainer] button')]
      .find(b => b.innerText.trim().endsWith('Stop'));
    const box = stop && stop.getBoundingClientRect();
    if (box && box.height && box.top >= 0 && box.bottom <= window.innerHeight) {
      const x = box.left + 10, y = box.top + box.height / 2;
      setTimeout(() => {
        const hit = document.elementFromPoint(x, y);
        const control = hit && hit.closest('button, iframe');
        resolve({x, y, under: control ? (control.innerText || control.title) : (hit ? hit.tagName : 'nothing')});
      }, 700);
    } else requestAnimationFrame(look);
  };
  look();
})"""


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


def _saved_turns(projects: Path, slug: str) -> list[dict]:
    import json

    path = projects / slug / "turns.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    return [json.loads(line) for line in lines if line.startswith('{"') and '"user"' in line]


def _saved_users(projects: Path, slug: str) -> list[str]:
    return [t["user"] for t in _saved_turns(projects, slug)]


def _saved_replies(projects: Path, slug: str) -> list[str]:
    return [t["assistant"] for t in _saved_turns(projects, slug)]


# ---------------------------------------------------------------- the journey

def test_a_new_pm_from_the_demo_to_deleting_a_project(tmp_path):
    """welcome (at the demo's explanation) → new project → three uploads while a message is sent (kept,
    answered) → sixteen streamed turns, five of them questions about the files → a cited passage and a table
    opened → Stop at 0.7 s → one-click Copy → Export from the latest reply → rename keeping the view → delete
    a file → delete the project."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for old in ARTIFACTS.glob("*.png"):  # only this run's pictures (and failure.png) remain
        old.unlink()
    projects = tmp_path / "projects"
    # What a fresh clone holds: the shipped demo, no vectors, no private copy.
    shutil.copytree(REPO / "projects" / "demo", projects / "demo",
                    ignore=shutil.ignore_patterns("vectordb", ".lock", ".turn.lock", ".operation.json", ".undo.json"))
    with forge_ui(tmp_path) as url, chromium() as browser:
        page = browser.new_context(viewport=SIZES["1400x900"], accept_downloads=True,
                                   permissions=["clipboard-read", "clipboard-write"]).new_page()
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
    _settled(page)
    page.wait_for_timeout(1000)  # the demo's nine turns are drawn: the chat would have scrolled to its end
    expect(main.get_by_text("Forge helps a product manager")).to_be_in_viewport()
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

    # 3. Three files, and a message sent while they are being prepared: kept, shown, answered after them; the
    # sidebar lists the files being prepared (never "No files yet"), and a `__` in a name stays as typed.
    plan, research, budget = tmp_path / FILENAME, tmp_path / RESEARCH, tmp_path / BUDGET
    plan.write_text(PILOT_PLAN, encoding="utf-8")
    research.write_text(RESEARCH_NOTES, encoding="utf-8")
    budget.write_bytes(_budget_docx())
    sidebar.get_by_test_id("stFileUploader").locator("input[type=file]").set_input_files(
        [str(research), str(plan), str(budget)])
    expect(main.get_by_text("Preparing your files…")).to_be_visible(timeout=WAIT)
    box = page.get_by_test_id("stChatInput").locator("textarea")
    expect(box).to_be_editable()  # the chat stays usable during the upload
    question = FILE_QUESTIONS[0][0]
    box.fill(question)
    box.press("Enter")
    expect(main.get_by_test_id("stChatMessage").filter(has_text=question)).to_have_count(1, timeout=WAIT)
    expect(main).to_contain_text("Waiting for your files to be ready", timeout=WAIT)
    expect(sidebar).to_contain_text(f"⏳ {BUDGET}", timeout=WAIT)
    expect(sidebar).not_to_contain_text("No files yet")
    _shots(page, "03-message-during-upload")
    reply = _assistant_replies(page).first
    expect(reply.get_by_role("button", name="Retry")).to_be_visible(timeout=120_000)
    _settled(page)
    expect(reply).to_contain_text("20 stores")
    for name in (FILENAME, RESEARCH, BUDGET):
        expect(_file_rows(sidebar, name)).to_have_count(1)
    assert _saved_users(projects, "browser-pilot") == [question]  # nothing lost: the message is the first turn
    _shots(page, "04-answered-after-upload")

    # 4. Twelve ordinary turns and four more questions about the files; each reply is seen streaming
    # (partial texts before the whole one), each file question is answered in its first words.
    expected = 1
    for message in CONVERSATION:
        expected += 1
        reply, seen = _send(page, message, expected_replies=expected)
        final = reply.get_by_test_id("stMarkdownContainer").first.inner_text()
        partial = [t for t in seen if t and len(t) < len(final) - 10 and not t.startswith("Waiting")]
        assert partial, f"turn {expected}: no partial reply seen; the page showed {seen!r}"
        fact = dict(FILE_QUESTIONS).get(message)
        if fact:
            assert fact in final[:120], f"{message!r} was answered with {final[:200]!r}"
    expect(sidebar).to_contain_text("12 answers · 5 file questions")
    assert len(_saved_users(projects, "browser-pilot")) == 1 + len(CONVERSATION)
    # A conversation, not a form: the first reply answers the file question first; no question asked twice.
    texts = [r.get_by_test_id("stMarkdownContainer").first.inner_text() for r in _assistant_replies(page).all()]
    assert "20" in texts[0][:60], texts[0]
    asked = [q for text in texts for q in questions_in(text)]
    assert len(asked) == len(set(asked)) and len(asked) >= 12, asked
    _shots(page, "05-seventeen-turns")

    # 5. The cited passage, opened from the citation inside the first reply, every quoted sentence highlighted.
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

    # 6. A Word table in a cited passage reads as a table, not as pipes.
    answer = _assistant_replies(page).filter(has_text="$42,000").first
    chip = answer.locator(".forge-cite-label", has_text=f"{BUDGET} ›").first
    chip.scroll_into_view_if_needed()
    chip.click()
    table = answer.get_by_role("table").filter(has_text="Handhelds")
    expect(table).to_be_visible()
    expect(answer).not_to_contain_text("| Handhelds")
    _shots(page, "07-table-in-passage", element=answer)
    chip.click()

    # 7. Stop, clicked 0.7 s after it appeared: whatever the reply did meanwhile, the click lands on Stop (live
    # or, once the reply has ended, inert in the same place), never on Copy or Retry.
    # Timed in the page itself: from the moment Stop shows in the window, 0.7 s, then what is at that spot.
    page.evaluate(f"() => {{ window.__stopSpot = ({STOP_AT_0_7_S})(); }}")
    box.fill("Store managers also complain that the markdown labels print slowly.")
    box.press("Enter")
    spot = page.evaluate("() => window.__stopSpot")
    page.mouse.click(spot["x"], spot["y"])
    under = spot["under"]
    # What the PM meant to hit, or an inert spot; never one of the finished reply's buttons. (Rarely, on a
    # loaded machine, the chat's end shifts by a line as the reply is redrawn and the spot is empty page.)
    assert "Stop" in under or under in ("DIV", "P", "SECTION", "MAIN"), \
        f"0.7 s after Stop appeared, the pointer was over {under!r}"
    _shots(page, "08-stop-at-0.7s")
    _settled(page)
    expect(main.get_by_role("button", name="Stop")).to_have_count(0, timeout=WAIT)
    if main.get_by_text("Stopped: nothing of that reply was recorded").count():
        main.get_by_role("button", name="Send it again").click()  # the kept message, answered after all
        expect(_assistant_replies(page)).to_have_count(len(CONVERSATION) + 2, timeout=WAIT)
    latest = _assistant_replies(page).last
    expect(latest.get_by_role("button", name="Retry")).to_be_visible(timeout=WAIT)
    _settled(page)

    # 8. Copy is one click, and the clipboard holds the reply as plain text (no Markdown markers).
    saved = _saved_replies(projects, "browser-pilot")[-1]
    latest.frame_locator(f'iframe[title="{COPY_FRAME_TITLE}"]').get_by_role(
        "button", name="Copy this reply as plain text").click()
    expect(latest.frame_locator(f'iframe[title="{COPY_FRAME_TITLE}"]').get_by_text("Copied")).to_be_visible()
    copied = page.evaluate("() => navigator.clipboard.readText()")
    assert copied == plain_text(saved) and "**" not in copied and "Recorded:" in copied, copied
    _shots(page, "09-copied")

    # 9. Export, reached from the latest reply without scrolling.
    export = latest.get_by_role("button", name="Export")
    expect(export).to_be_in_viewport()
    export.click()
    with page.expect_download() as download:
        page.get_by_role("button", name="Transcript (.md)").click()
    exported = Path(download.value.path()).read_text(encoding="utf-8")
    assert question in exported and "Browser Pilot" in exported
    _shots(page, "10-exported")
    page.keyboard.press("Escape")

    # 10. Rename: the picker and the heading show the new name, the folder keeps its slug, and the chat
    # stays where the PM was reading.
    reading = _assistant_replies(page).nth(8)
    _settled(page)
    for _ in range(5):  # the PM is reading reply 8 only once the view has stopped moving and shows it
        reading.evaluate("element => element.scrollIntoView({block: 'start'})")
        page.wait_for_timeout(700)
        top_before = reading.bounding_box()["y"]
        if 0 <= top_before < page.viewport_size["height"] / 2:
            break
    assert 0 <= top_before < page.viewport_size["height"] / 2, f"reply 8 could not be brought into view: {top_before}"
    sidebar.get_by_role("button", name="Rename").click()
    page.get_by_role("textbox", name="Display name").fill("Pilot Review")
    page.get_by_role("button", name="Rename", exact=True).last.click()
    expect(main.get_by_role("heading", name="Pilot Review")).to_have_count(1, timeout=WAIT)
    expect(sidebar.get_by_role("combobox", name="Project")).to_have_value("Pilot Review")
    assert (projects / "browser-pilot").is_dir()
    _settled(page)
    page.wait_for_timeout(3500)  # the page has settled and nothing holds the view any more
    top_after = reading.bounding_box()["y"]
    assert abs(top_after - top_before) < 40, f"the reply being read moved from y={top_before} to y={top_after}"
    _shots(page, "11-renamed")

    # 11. Delete a file (asked first).
    _delete_button(sidebar, FILENAME).click()
    expect(sidebar).to_contain_text(f"Delete {FILENAME}?", timeout=WAIT)
    sidebar.get_by_role("button", name="Yes, delete", exact=True).click()
    expect(_file_rows(sidebar, FILENAME)).to_have_count(0, timeout=WAIT)
    expect(sidebar).to_contain_text(f"Deleted {FILENAME}.")
    _settled(page)
    _shots(page, "12-file-deleted")

    # 12. Delete the project, after typing its name; the demo is what remains.
    sidebar.get_by_role("button", name="Delete…").click()
    page.get_by_role("textbox", name="Type 'Pilot Review' to confirm").fill("Pilot Review")
    page.get_by_role("button", name="Delete project").click()
    expect(main).to_contain_text("This is a finished example", timeout=WAIT)
    expect(sidebar.get_by_role("combobox", name="Project")).not_to_have_value("Pilot Review")
    assert not (projects / "browser-pilot").exists()
    _settled(page)
    _shots(page, "13-project-deleted")
