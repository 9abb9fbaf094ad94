"""Large pastes become source material, not prompt text.

A message over the paste threshold is saved and indexed as a Markdown "pasted
source" through the normal ingestion path (so it is kept, searchable and
listed with the files); the turn carries a short reference instead, and the
relevant sections come back through retrieval like any document's. The paste's
opening words travel inside <pasted> tags the paste cannot close: like a
document, it is data, never the PM's instruction (`render.own_words` drops it).
"""

from __future__ import annotations

from pmforge.ingest.pipeline import PASTE_PREFIX, ingest_file
from pmforge.project.project import Project
from pmforge.prompt import render
from pmforge.understand import extractive


def pasted_name(turn_number: int) -> str:
    """The prefix is reserved for pastes: an upload named like this is stored under another name
    (see ingest.pipeline.PASTE_PREFIX), so a paste can never replace one of the PM's files."""
    return f"{PASTE_PREFIX}{turn_number}.md"


def set_aside_paste(project: Project, message: str, turn_number: int) -> tuple[str, str | None]:
    """Returns (the message the turn works with, the pasted file's name or None)."""
    if len(message) <= project.settings.paste_threshold_chars:
        return message, None
    name = pasted_name(turn_number)
    result = ingest_file(project, name, message.encode("utf-8"), named_by_forge=True)
    head = extractive.clip_words(" ".join(message.split()), 60)
    status = "indexed; relevant sections are retrieved below" if result.ok else f"not indexed: {result.message}"
    return render.pasted_block(name, len(message), status, head), name
