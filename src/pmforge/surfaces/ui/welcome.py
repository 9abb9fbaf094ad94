"""What a newcomer sees: what Forge is for and what to do first, starter prompts, the upload hint, the
demo's banner, and plain words while a project's files are being prepared. The app decides when each
shows; nothing here reads or writes a project."""

from __future__ import annotations

from typing import Callable

import streamlit as st

from pmforge.core.models import Manifest
from pmforge.core.words import counted
from pmforge.project.project import Upkeep

WHAT_FORGE_DOES = (
    "Forge helps a product manager work out whether a product question is worth pursuing: it interviews you, "
    "two or three sharp questions at a time, grounded in the documents behind the question. "
    "As you answer, it keeps a problem brief and an assumption register up to date, so you come away with a "
    "written case instead of a chat log."
)
STEPS = (
    ("Upload the files behind your question", "interview notes, research, a pilot plan (DOCX or Markdown), "
                                              "with the uploader in the sidebar."),
    ("Talk it through", "answer Forge's questions; it quotes your files and remembers what you said."),
    ("Take away the brief and the assumption register", "download them from the sidebar at any point."),
)
# Sent as the PM's first message. Each reads well to Claude and leaves the offline interviewer's brief clean
# (no instruction ends up recorded as a problem statement or a stakeholder).
STARTER_PROMPTS = (
    "Start the interview: ask me your first questions.",
    "Start with my files: ask me about what they show.",
    "Start with the people: ask me who is involved.",
    "Start with the risks: ask me what could sink this.",
)
UPLOAD_HINT = (
    "**Start by uploading your files.** Use **Upload DOCX or Markdown** in the sidebar, under *Project Files*: "
    "interview notes, research, a pilot plan. Forge quotes them when it answers."
)
EXAMPLE_NOTE = (
    "**This is a finished example.** A product manager talked through a round of store interviews: read the "
    "conversation below (each answer cites the interview file), then the problem brief and the assumption "
    "register in the sidebar. Try it yourself: your changes stay in a private copy, and **Reset demo** "
    "brings the example back."
)


def intro() -> None:
    st.markdown(WHAT_FORGE_DOES)
    st.markdown("\n".join(f"{i}. **{title}** — {detail}" for i, (title, detail) in enumerate(STEPS, 1)))


def upload_hint() -> None:
    st.info(UPLOAD_HINT, icon=":material/upload_file:")


def starter_prompts(on_pick: Callable[[str], None]) -> None:
    st.caption("Or begin with one of these:")
    columns = st.columns(2)
    for i, prompt in enumerate(STARTER_PROMPTS):
        columns[i % 2].button(prompt, key=f"starter-{i}", on_click=on_pick, args=(prompt,),
                              use_container_width=True)


def example_banner(on_reset: Callable[[], None]) -> None:
    with st.container(border=True):
        intro()
        st.markdown(EXAMPLE_NOTE)
        st.button("Reset demo", key="reset-demo", icon=":material/restart_alt:", on_click=on_reset,
                  help="Put the example back as it was shipped; what you added to it is removed.")


# The chat keeps itself scrolled to its end as the page draws, which would open the example at its last reply,
# far below the explanation. This frame (Forge's own script, no PM or document text) brings the top back into
# view while the page settles, and lets go as soon as the PM scrolls, types or clicks.
_OPEN_AT_TOP = """<script>
const page = window.parent.document;
const main = page.querySelector('[data-testid="stAppScrollToBottomContainer"]') || page.querySelector('section.main');
let holding = true;
for (const kind of ["wheel", "touchstart", "keydown", "mousedown"]) {
  page.addEventListener(kind, event => { if (event.isTrusted) holding = false; }, {capture: true});
}
// Held until the page has been still for a while (a slow machine draws the demo's turns for seconds, and the
// chat only lets go of its end once a scroll happens while nothing grows), at most half a minute.
let changed = Date.now();
if (main) new MutationObserver(() => { changed = Date.now(); }).observe(main, {subtree: true, childList: true});
const started = Date.now();
let tick = 0;
const hold = () => {
  if (!main || !holding) return;
  // The chat stops following its end after a wheel event and a scroll while nothing grows: both are given,
  // the scroll as a one-pixel step that ends at the top.
  main.dispatchEvent(new WheelEvent("wheel", {deltaY: -1, bubbles: true}));
  const settled = Date.now() - changed > 3000 && Date.now() - started > 8000;
  main.scrollTop = !settled && tick++ % 2 ? 1 : 0;
  if (!settled && Date.now() - started < 30000) setTimeout(hold, 100);
};
hold();
</script>"""


def open_at_top() -> None:
    """Show the page from its top on this run (the example's explanation), not from its last reply."""
    st.iframe(_OPEN_AT_TOP, height=1)


# ---------------------------------------------------------------- preparing a project's files, in plain words

def preparing_label(upkeep: Upkeep, manifest: Manifest) -> str:
    """What the app says while it catches a project's search up (a fresh clone or copy has no vectors):
    what is being prepared, in files and passages, never the store's or the embedder's names."""
    indexed = [f for f in manifest.file_summaries if f.indexed]
    files = indexed if upkeep.mismatch else [f for f in indexed if f.filename in upkeep.missing_files]
    passages = sum(f.chunk_count for f in files)
    what = [f"{counted(len(files), 'file', thousands=True)}, {counted(passages, 'passage', thousands=True)}"] if files else []
    if upkeep.unremembered:
        what.append(counted(len(upkeep.unremembered), "earlier turn", thousands=True))
    return "Preparing your files…" + (f" ({'; '.join(what)})" if what else "")


def ready_label(manifest: Manifest, remembered_turns: int) -> str:
    """What the app says once the catch-up is done: everything the next turn can search."""
    indexed = [f for f in manifest.file_summaries if f.indexed]
    said = (f"Your files are ready: {counted(sum(f.chunk_count for f in indexed), 'passage', thousands=True)} from "
            f"{counted(len(indexed), 'file', thousands=True)}." if indexed else "Ready.")
    if remembered_turns:
        said += f" {counted(remembered_turns, 'earlier turn', thousands=True)} remembered."
    return said


def plain_stage(stage: str) -> str:
    """A progress stage of the catch-up, as the app shows it under the bar."""
    for before, after in (("Re-indexing conversation", "Remembering the conversation"),
                          ("Re-indexing ", "Preparing "), ("Indexing ", "Preparing "),
                          ("Rebuilding the keyword index", "Preparing the keyword search")):
        if stage.startswith(before):
            return after + stage[len(before):]
    return stage


def waiting_caption(waited_s: float, slow_after_s: float, model: str | None) -> str:
    """Under a message being answered, before its first words: what Forge is doing, and for a model that is
    slow to start (a local model on a CPU can take minutes), which model it waits for and for how long."""
    if model is None or waited_s < slow_after_s:
        return "Thinking…"
    return (f"Waiting for the model ({model})… {waited_s:.0f} s. A local model can take minutes; Stop keeps "
            "your message.")

