"""A summary asked of a model, kept only as far as it can be trusted: the summarizers of turns and of files."""

from __future__ import annotations

import logging
from typing import Callable

from pmforge.core.errors import ForgeError
from pmforge.core.sentences import sentence_spans
from pmforge.llm.base import LLM, ChatRequest

log = logging.getLogger(__name__)



def checked_summary(llm: LLM, request: ChatRequest, fallback: Callable[[], str], what: str) -> str:
    """The model's summary; cut at the length limit, only its whole sentences; the extractive `fallback` when
    the model fails, says nothing, or gave no whole sentence before the cut. `what` names it in the log."""
    try:
        response = llm.complete(request)
    except ForgeError as exc:  # a summary is never worth losing a turn or an upload over
        log.warning("%s fell back to extractive: %s", what, exc)
        return fallback()
    text = response.text.strip()
    if text and response.stop_reason == "max_tokens":
        text = whole_sentences(text)
        if not text:
            log.warning("%s was cut at the length limit before a whole sentence; extractive instead", what)
    return text or fallback()


def whole_sentences(text: str) -> str:
    """`text` up to the end of its last sentence that was finished (a cut one has no end mark)."""
    # A finished sentence ends in an end mark, perhaps inside closing quotes or brackets ("…a pilot.”).
    ends = [end for start, end in sentence_spans(text)
            if text[start:end].rstrip("\"”’')]").endswith((".", "!", "?", "…"))]
    return text[:ends[-1]] if ends else ""
