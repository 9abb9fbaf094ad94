"""Where the PM is looking in the chat, kept across a change that redraws the page (a rename).

Streamlit moves the chat's scroll position when a rerun changes what is drawn above it; these small frames of
Forge's own script (no PM or document text in them) note which message is at the top of the view and put it
back. The view is noted in the browser tab's session storage, never sent anywhere.
"""

from __future__ import annotations

import streamlit as st

_COMMON = """
const page = window.parent.document;
const chat = () => page.querySelector('[data-testid="stAppScrollToBottomContainer"]') || page.querySelector('section.main');
const messages = () => [...page.querySelectorAll('[data-testid="stChatMessage"]')];
"""

_REMEMBER = "<script>" + _COMMON + """
const main = chat();
if (main) {
  const top = main.getBoundingClientRect().top;
  const all = messages();
  const index = all.findIndex(el => el.getBoundingClientRect().bottom > top);
  const offset = index >= 0 ? all[index].getBoundingClientRect().top - top : 0;
  window.parent.sessionStorage.setItem("forge-view", JSON.stringify({index, offset, count: all.length}));
}
</script>"""

_RESTORE = "<script>" + _COMMON + """
const saved = JSON.parse(window.parent.sessionStorage.getItem("forge-view") || "null");
let tries = 0, holding = true;
for (const kind of ["wheel", "touchstart", "keydown", "mousedown"]) {
  page.addEventListener(kind, event => { if (event.isTrusted) holding = false; }, {capture: true});
}
const put = () => {
  const main = chat(), all = messages();
  if (!saved || !main || !holding || saved.index < 0) return;
  if (all.length === saved.count) {  // the same conversation, fully drawn: line the message up again
    main.dispatchEvent(new WheelEvent("wheel", {deltaY: -1, bubbles: true}));  // the chat stops following its end
    const el = all[saved.index];
    main.scrollTop += el.getBoundingClientRect().top - main.getBoundingClientRect().top - saved.offset;
  }
  if (++tries < 30) setTimeout(put, 100);  // the page may still be settling
};
put();
</script>"""


_TO_END = "<script>" + _COMMON + """
let tries = 0, holding = true;
for (const kind of ["wheel", "touchstart", "mousedown"]) {
  page.addEventListener(kind, event => { if (event.isTrusted) holding = false; }, {capture: true});
}
const down = () => {
  const main = chat();
  if (!main || !holding) return;
  main.scrollTop = main.scrollHeight;
  if (++tries < 15) setTimeout(down, 100);
};
down();
</script>"""


def to_end() -> None:
    """Bring the chat's end into view: the PM just sent a message from the box below it, perhaps while
    reading further up, and its reply appears there."""
    st.iframe(_TO_END, height=1)


def remember() -> None:
    """Note the message at the top of the chat's view now."""
    st.iframe(_REMEMBER, height=1)


def restore() -> None:
    """Bring the noted message back to where it was (for about three seconds, or until the PM scrolls)."""
    st.iframe(_RESTORE, height=1)
