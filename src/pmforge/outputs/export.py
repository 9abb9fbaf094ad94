"""The session transcript as a document the PM can share: Markdown, and Word converted from that same
Markdown (as the briefs are), so the two never disagree.

Each turn is numbered as Forge numbered it (from 1) and holds the PM's words, Forge's reply as it was
shown (its citations stay as text, e.g. [plan.md › Scope]), the sources the reply drew on and the files the
turn wrote. The PM's words are escaped, so a line they typed starting with `#` or `-` stays a line of
text; Forge's reply keeps its Markdown, with any heading in it sitting below the turn's own heading.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Literal

from pmforge.core.models import SessionState, Turn
from pmforge.core.words import counted
from pmforge.outputs.briefs import escape_markdown, inert_markdown
from pmforge.outputs.word import markdown_to_docx
from pmforge.prompt.render import for_display

ExportFormat = Literal["md", "docx"]
MIME: dict[str, str] = {
    "md": "text/markdown",
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
}
_HEADING = re.compile(r"^#{1,6}\s+", re.M)


def _literal(text: str) -> str:
    """A citation or a file name as plain text: an underscore or an asterisk in it is never emphasis."""
    return re.sub(r"([*_])", r"\\\1", escape_markdown(text))


def _pm_words(message: str) -> list[str]:
    """The PM's message as paragraphs, one per line they typed (their line breaks are theirs)."""
    return [escape_markdown(line) for line in for_display(message).splitlines() if line.strip()]


def _forge_words(reply: str) -> str:
    return inert_markdown(_HEADING.sub("#### ", reply.strip())) or "_(no reply)_"


def _turn_markdown(turn: Turn) -> list[str]:
    when = turn.created_at[:16].replace("T", " ")
    blocks = [f"## Turn {turn.number}" + (f" · {when}" if when else ""), "**PM:**"]
    blocks += _pm_words(turn.user) or ["_(no message)_"]
    blocks += ["**Forge:**", _forge_words(turn.assistant)]
    if turn.sources:
        blocks.append("Sources: " + "; ".join(dict.fromkeys(_literal(s.citation) for s in turn.sources)))
    if turn.artifacts:
        blocks.append("Files written: " + ", ".join(_literal(name) for name in turn.artifacts))
    return blocks


def transcript_markdown(state: SessionState, title: str, now: datetime | None = None) -> str:
    """The whole transcript as Markdown; `now` stamps the export (UTC when not given)."""
    now = now or datetime.now(timezone.utc)
    blocks = [f"# Transcript — {escape_markdown(title)}",
              f"_Exported from Forge on {now:%Y-%m-%d %H:%M} UTC · {counted(len(state.turns), 'turn')}_"]
    if not state.turns:
        blocks.append("No turns yet.")
    for turn in state.turns:
        blocks += _turn_markdown(turn)
    return "\n\n".join(blocks) + "\n"


def transcript_docx(state: SessionState, title: str, now: datetime | None = None) -> bytes:
    """The same transcript as a Word file."""
    return markdown_to_docx(transcript_markdown(state, title, now))


def transcript_bytes(state: SessionState, title: str, fmt: ExportFormat, now: datetime | None = None) -> bytes:
    if fmt == "docx":
        return transcript_docx(state, title, now)
    return transcript_markdown(state, title, now).encode("utf-8")


def transcript_file_name(slug: str, fmt: ExportFormat, now: datetime | None = None) -> str:
    now = now or datetime.now(timezone.utc)
    return f"transcript-{slug}-{now:%Y%m%d-%H%M%S}.{fmt}"
