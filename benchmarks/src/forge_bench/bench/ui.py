"""`forge bench ui`: reply latency as a PM feels it, in a real Chromium.

`forge ui` runs offline on a free port with a throwaway projects folder; Chromium (1400×900) creates a
project through the sidebar, uploads one Markdown file, then sends ordinary turns, alternating content
questions about the file and filler answers. Every figure is taken inside the page: a MutationObserver
installed before Enter stamps each change with `performance.now()`, so Python's polling adds nothing.

- first words: Enter → the new assistant message first shows non-empty text (its markdown: a caption
  such as "Thinking…" or the label of a button or a spinner is not words of the reply);
- complete: Enter → the last of: the reply's text changing, a script run ending, the chat input
  becoming editable again — the moment the PM can read the whole reply and type the next message.

Only Streamlit's own test ids are read (chat messages, the assistant avatar, the chat input, the
status widget, markdown containers), so the figures survive changes to how the app draws a turn.
Figures, never assertions: the targets are printed beside them.
"""

from __future__ import annotations

import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel

from forge_bench.bench import browser
from pmforge.core.errors import ForgeError

if TYPE_CHECKING:
    from playwright.sync_api import ViewportSize

TARGET_FIRST_WORDS_S = 1.0        # the target for every turn
TARGET_FILLER_COMPLETE_S = 1.5    # the target for a filler turn, end to end
VIEWPORT: ViewportSize = {"width": 1400, "height": 900}
# The page counts as settled after this long with nothing changing. Longer than the 0.5 s Streamlit
# waits before it shows a run in progress, so a rerun that follows the reply is never missed.
QUIET_S = 2.0
TURN_TIMEOUT_S = 180.0
POLL_S = 0.1

FILENAME = "pilot-plan.md"
PILOT_PLAN = """# Pilot plan

A short plan for the Midwest markdown pilot.

## Scope

The pilot covers 20 stores in the Midwest region for eight weeks.

## Metrics

We track shrink as a share of sales, markdown sell-through and the staff hours spent on markdowns.
"""
FILLERS = ("ok", "go on", "yes, that's right", "makes sense")
QUESTIONS = ("How many stores are in the pilot?", "How long does the pilot run?",
             "Which metrics will we track in the pilot?")

# Shared by the page-load watch and the turn probe: what a PM sees, through Streamlit's test ids.
_PAGE_HELPERS = """
const forgeRunning = () => Array.from(document.querySelectorAll('[data-testid=stStatusWidget]'))
  // A widget playing its 0.2 s fade-out belongs to a run that has already ended.
  .some(w => !/StatusWidget-exit/.test(w.className));
const forgeInput = () => document.querySelector('[data-testid=stChatInput] textarea');
const forgeEditable = () => { const t = forgeInput(); return !!t && !t.disabled && !t.readOnly; };
const forgeAssistants = () => Array.from(document.querySelectorAll('[data-testid=stChatMessage]'))
  .filter(m => m.querySelector('[data-testid=stChatMessageAvatarAssistant]'));
// The reply's words: its markdown, not the labels of its buttons, expanders or a spinner (a caption
// such as "Thinking…" is a stCaptionContainer, so it is not counted either).
const forgeWords = m => Array.from(m.querySelectorAll('[data-testid=stMarkdownContainer]'))
  .filter(e => !e.closest('button, summary, [data-testid=stSpinner]'))
  .map(e => e.textContent).join('').trim();
"""

# Installed before the first load: when the app became ready for the PM (a field to type in, no run in
# progress), in milliseconds since navigation started.
_LOAD_WATCH = """
(() => {
""" + _PAGE_HELPERS + """
  const load = window.__forgeLoad = {ready: false, changedAt: 0};
  const look = () => {
    const field = document.querySelector('[data-testid=stSidebar] input, [data-testid=stChatInput] textarea');
    const ready = !!field && !forgeRunning();
    if (ready !== load.ready) { load.ready = ready; load.changedAt = performance.now(); }
  };
  new MutationObserver(look).observe(document, {subtree: true, childList: true, attributes: true});
})();
"""

# Installed before each Enter; `repliesBefore` is how many assistant messages the page shows then.
_TURN_PROBE = """
repliesBefore => {
""" + _PAGE_HELPERS + """
  if (window.__forgeObserver) window.__forgeObserver.disconnect();
  const probe = window.__forgeTurn = {enter: null, firstWords: null, firstText: '', text: '', textAt: null,
    running: forgeRunning(), runAt: null, editable: forgeEditable(), inputAt: null, fresh: false};
  const look = () => {
    if (probe.enter === null) return;
    const now = performance.now();
    const replies = forgeAssistants();
    if (replies.length > repliesBefore) probe.fresh = true;
    // Once the new message has shown, the newest assistant message is this turn's reply.
    const reply = probe.fresh ? replies[replies.length - 1] : null;
    if (reply && probe.firstWords === null) {
      const words = forgeWords(reply);
      if (words) { probe.firstWords = now; probe.firstText = words.slice(0, 80); }
    }
    const text = reply ? reply.textContent : '';
    if (text !== probe.text) { probe.text = text; probe.textAt = now; }
    const running = forgeRunning();
    if (running !== probe.running) { probe.running = running; probe.runAt = now; }
    const editable = forgeEditable();
    if (editable !== probe.editable) { probe.editable = editable; probe.inputAt = now; }
  };
  window.__forgeObserver = new MutationObserver(look);
  window.__forgeObserver.observe(document.body,
    {subtree: true, childList: true, characterData: true, attributes: true});
  const box = forgeInput();
  box.addEventListener('keydown', event => {
    if (event.key === 'Enter' && !event.shiftKey && probe.enter === null) probe.enter = performance.now();
  }, {capture: true, once: true});
}
"""

_TURN_STATE = """() => {
  const p = window.__forgeTurn;
  return {enter: p.enter, firstWords: p.firstWords, firstText: p.firstText, textAt: p.textAt, runAt: p.runAt, inputAt: p.inputAt,
          running: p.running, editable: p.editable, hasText: p.text.trim() !== '', now: performance.now()};
}"""


class TurnTiming(BaseModel):
    turn: int
    kind: str  # "filler" or "content"
    message: str
    first_words_s: float
    complete_s: float


# ---------------------------------------------------------------- pure parts

def turn_messages(turns: int) -> list[tuple[str, str]]:
    """(kind, message) for each turn: a content question first, then filler and content alternating."""
    plan = []
    for i in range(turns):
        if i % 2 == 0:
            plan.append(("content", QUESTIONS[(i // 2) % len(QUESTIONS)]))
        else:
            plan.append(("filler", FILLERS[(i // 2) % len(FILLERS)]))
    return plan


def waiting_for(state: dict, quiet_ms: float = QUIET_S * 1000) -> str | None:
    """What a turn still waits for, in words, or None once it is complete: the reply has words, no run
    is in progress, the PM can type, and nothing has changed for `quiet_ms`."""
    if state["enter"] is None:
        return "the page to see Enter"
    if state["firstWords"] is None or not state["hasText"]:
        return "the reply's first words"
    if state["running"]:
        return "the script run to end"
    if not state["editable"]:
        return "the chat input to take a message again"
    if state["now"] - last_change(state) < quiet_ms:
        return "the reply to stop changing"
    return None


def last_change(state: dict) -> float:
    return max(t for t in (state["enter"], state["textAt"], state["runAt"], state["inputAt"]) if t is not None)


def timing(turn: int, kind: str, message: str, state: dict) -> TurnTiming:
    return TurnTiming(turn=turn, kind=kind, message=message,
                      first_words_s=round((state["firstWords"] - state["enter"]) / 1000, 3),
                      complete_s=round((last_change(state) - state["enter"]) / 1000, 3))


def _spread(values: list[float]) -> dict:
    return {"median": round(statistics.median(values), 3), "max": round(max(values), 3)} if values else {}


def summarize(timings: list[TurnTiming]) -> dict:
    """Median and max of both figures for each kind of turn."""
    by_kind = {}
    for kind in ("filler", "content"):
        mine = [t for t in timings if t.kind == kind]
        by_kind[kind] = {"turns": len(mine),
                         "first_words_s": _spread([t.first_words_s for t in mine]),
                         "complete_s": _spread([t.complete_s for t in mine])}
    return by_kind


def cpu_count() -> int:
    """The CPUs this process may run on (a container's share, not the host's)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def _seconds(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f} s"


def format_table(figures: dict) -> str:
    """The figures as a short table for a terminal, targets beside them (text only, never a verdict)."""
    lines = [
        f"forge bench ui: {figures['turns']} turns in Chromium {figures['viewport']}, offline, "
        f"{figures['cpus']} CPUs",
        f"page load to ready: {_seconds(figures['page_load_s'])} "
        f"(server answering after {_seconds(figures['server_start_s'])})",
        "",
        f"{'turn kind':<10}{'turns':>6}   {'first words median / max':<27}{'complete median / max':<25}",
    ]
    for kind in ("filler", "content"):
        row = figures[kind]
        first, complete = row["first_words_s"], row["complete_s"]
        lines.append(
            f"{kind:<10}{row['turns']:>6}   "
            f"{_seconds(first.get('median')) + ' / ' + _seconds(first.get('max')):<27}"
            f"{_seconds(complete.get('median')) + ' / ' + _seconds(complete.get('max')):<25}")
    targets = figures["targets"]
    lines += ["", f"targets: first words ≤ {targets['first_words_s']:.1f} s (every turn), "
                  f"filler complete ≤ {targets['filler_complete_s']:.1f} s"]
    return "\n".join(line.rstrip() for line in lines)


# ---------------------------------------------------------------- driving the browser

def _wait_settled(page, what: str) -> None:
    """Wait until no script run has been in progress for QUIET_S."""
    started = time.monotonic()
    quiet_since = None
    while True:
        running = _running(page)
        now = time.monotonic()
        if running:
            quiet_since = None
        elif quiet_since is None:
            quiet_since = now
        elif now - quiet_since >= QUIET_S:
            return
        if now - started > TURN_TIMEOUT_S:
            raise ForgeError(f"The app was still busy {what} after {TURN_TIMEOUT_S:.0f} seconds.")
        time.sleep(POLL_S)


def _running(page) -> bool:
    return page.evaluate("() => {" + _PAGE_HELPERS + " return forgeRunning(); }")


def _page_load_s(page) -> float:
    deadline = time.monotonic() + TURN_TIMEOUT_S
    while time.monotonic() < deadline:
        load = page.evaluate("() => ({...window.__forgeLoad, now: performance.now()})")
        if load["ready"] and load["now"] - load["changedAt"] >= QUIET_S * 1000:
            return round(load["changedAt"] / 1000, 3)
        time.sleep(POLL_S)
    raise ForgeError(f"The app was not ready for typing {TURN_TIMEOUT_S:.0f} seconds after it loaded.")


def _raise_on_app_error(page, when: str) -> None:
    shown = page.get_by_test_id("stException")
    if shown.count():
        first_line = (shown.first.text_content() or "").strip().splitlines()[:1]
        raise ForgeError(f"The app showed an error {when}: {first_line[0] if first_line else 'no message'}.")


def _create_project_and_upload(page, workdir: Path) -> None:
    from playwright.sync_api import expect

    sidebar = page.get_by_test_id("stSidebar")
    sidebar.get_by_label("Project name").fill("UI bench")
    sidebar.get_by_role("button", name="Create project").click()
    expect(page.get_by_test_id("stMainBlockContainer").get_by_role("heading", name="UI bench")).to_be_visible(
        timeout=browser.WAIT_MS)
    _wait_settled(page, "creating the project")
    plan = workdir / FILENAME
    plan.write_text(PILOT_PLAN, encoding="utf-8")
    sidebar.get_by_test_id("stFileUploader").locator("input[type=file]").set_input_files(str(plan))
    expect(sidebar.locator("strong", has_text=FILENAME)).to_have_count(1, timeout=browser.WAIT_MS)
    _wait_settled(page, "indexing the uploaded file")
    _raise_on_app_error(page, "while the file was uploaded")


def _send(page, number: int, kind: str, message: str) -> TurnTiming:
    from playwright.sync_api import expect

    box = page.get_by_test_id("stChatInput").locator("textarea")
    expect(box).to_be_editable(timeout=browser.WAIT_MS)
    replies_before = page.get_by_test_id("stChatMessage").filter(
        has=page.get_by_test_id("stChatMessageAvatarAssistant")).count()
    page.evaluate(_TURN_PROBE, replies_before)
    box.fill(message)
    box.press("Enter")
    deadline = time.monotonic() + TURN_TIMEOUT_S
    while True:
        state = page.evaluate(_TURN_STATE)
        pending = waiting_for(state)
        if pending is None:
            break
        if time.monotonic() > deadline:
            _raise_on_app_error(page, f"on turn {number}")
            raise ForgeError(f"Turn {number} (“{message}”) was still waiting for {pending} after "
                             f"{TURN_TIMEOUT_S:.0f} seconds.")
        time.sleep(POLL_S)
    _raise_on_app_error(page, f"on turn {number}")
    return timing(number, kind, message, state)


def bench_ui(turns: int = 10) -> dict:
    """Drive `forge ui` in Chromium through `turns` turns; returns the figures (see the module's doc)."""
    if turns < 1:
        raise ForgeError("forge bench ui needs at least one turn (--turns 1 or more).")
    if reason := browser.missing_browser():
        raise ForgeError(reason)
    workdir = Path(tempfile.mkdtemp(prefix="forge-bench-ui-"))
    try:
        figures = _run(workdir, turns)
    except Exception as exc:  # ours, the app's start-up, Playwright's timeouts: one sentence, the log kept
        detail = str(exc).strip().splitlines()[0].rstrip(".:") if str(exc).strip() else type(exc).__name__
        raise ForgeError(f"forge bench ui stopped: {detail}; the app's log is kept in {workdir}.") from exc
    shutil.rmtree(workdir, ignore_errors=True)
    return figures


def _run(workdir: Path, turns: int) -> dict:
    started = time.monotonic()
    with browser.forge_ui(workdir) as url:
        server_start_s = round(time.monotonic() - started, 3)
        with browser.chromium() as chromium:
            context = chromium.new_context(viewport=VIEWPORT)
            context.add_init_script(_LOAD_WATCH)
            page = context.new_page()
            page.set_default_timeout(browser.WAIT_MS)
            loads = browser.open_app(page, url)
            page_load_s = _page_load_s(page)
            _raise_on_app_error(page, "on the first load")
            _create_project_and_upload(page, workdir)
            timings = [_send(page, n, kind, message)
                       for n, (kind, message) in enumerate(turn_messages(turns), start=1)]
            version = chromium.version
    return {
        "turns": len(timings),
        "cpus": cpu_count(),
        "viewport": f"{VIEWPORT['width']}x{VIEWPORT['height']}",
        "chromium": version,
        "server_start_s": server_start_s,
        "page_load_s": page_load_s,
        "page_loads": loads,
        **summarize(timings),
        "targets": {"first_words_s": TARGET_FIRST_WORDS_S, "filler_complete_s": TARGET_FILLER_COMPLETE_S},
        "per_turn": [t.model_dump() for t in timings],
        "note": "first words: Enter → the new reply's first text; complete: Enter → its text stopped changing, "
                "no run in progress and the chat input editable; both timed in the page (performance.now)",
    }
