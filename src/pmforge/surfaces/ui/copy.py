"""One-click Copy for a reply: plain text on the clipboard, its Markdown as the second choice.

Streamlit has no clipboard widget, so this is a small frame of Forge's own HTML (never the reply's: the
texts travel as JSON string literals and are only ever handed to the clipboard, never to the page).
"""

from __future__ import annotations

import json
import re

import streamlit as st

from pmforge.outputs.plain import plain_text

COPY_FRAME_TITLE = "Copy this reply"  # how a screen reader (and the browser test) finds the frame

_FRAME = """<!doctype html><html><head><meta charset="utf-8"><style>
  html, body { margin: 0; height: 100%; overflow: hidden; }
  body { display: flex; align-items: center; font-family: "Source Sans Pro", "Source Sans 3", sans-serif;
         color: #31333f; }
  button { font: inherit; font-size: 14px; background: none; border: none; padding: 4px 6px;
           color: inherit; cursor: pointer; border-radius: 6px; }
  #markdown { opacity: 0.7; }
  button:hover { color: #ff4b4b; }
  button:focus-visible { outline: 2px solid #ff4b4b; }
  .icon { vertical-align: -3px; margin-right: 6px; }
  button { display: inline-flex; align-items: center; }
</style></head><body>
<button id="plain" aria-label="Copy this reply as plain text"><svg class="icon" viewBox="0 0 24 24" width="15" height="15" aria-hidden="true"><path fill="currentColor" d="M16 1H4a2 2 0 0 0-2 2v14h2V3h12V1zm3 4H8a2 2 0 0 0-2 2v14a2 2 0 0 0 2 2h11a2 2 0 0 0 2-2V7a2 2 0 0 0-2-2zm0 16H8V7h11v14z"/></svg>Copy</button>
<button id="markdown" aria-label="Copy this reply as Markdown">as Markdown</button>
<script>
const TEXTS = {"plain": __PLAIN__, "markdown": __MARKDOWN__};
try {  // the app's own button style, light or dark theme
  const like = window.parent.document.querySelector('[data-testid="stBaseButton-tertiary"]');
  if (like) {
    const style = getComputedStyle(like);
    document.body.style.color = style.color;
    document.body.style.fontFamily = style.fontFamily;
  }
} catch (e) {}
async function put(text) {
  try { await navigator.clipboard.writeText(text); return; } catch (e) {}
  const area = document.createElement("textarea");  // older browsers, or a page without clipboard access
  area.value = text; document.body.appendChild(area); area.select(); document.execCommand("copy"); area.remove();
}
for (const id of Object.keys(TEXTS)) {
  const button = document.getElementById(id);
  const label = button.innerHTML;
  button.addEventListener("click", async () => {
    await put(TEXTS[id]);
    button.textContent = "Copied";
    setTimeout(() => { button.innerHTML = label; }, 1500);
  });
}
</script></body></html>"""


def _literal(text: str) -> str:
    """A JSON string that cannot end the script element it sits in."""
    return json.dumps(text, ensure_ascii=True).replace("<", "\\u003c").replace(">", "\\u003e")


def copy_frame(markdown: str) -> str:
    """The frame's HTML for one reply."""
    texts = {"__PLAIN__": _literal(plain_text(markdown)), "__MARKDOWN__": _literal(markdown)}
    # One pass: a reply that itself contains "__MARKDOWN__" is never substituted into.
    return re.sub("__PLAIN__|__MARKDOWN__", lambda m: texts[m.group()], _FRAME)


def copy_buttons(markdown: str) -> None:
    st.iframe(copy_frame(markdown), width=170, height=32, alt=COPY_FRAME_TITLE)
