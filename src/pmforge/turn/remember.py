"""After the reply: summarize the turn, embed the summary, store it with the full pair."""

from __future__ import annotations

import logging

from config import Settings

from ..embed import Embedder
from ..errors import ForgeError
from ..llm import extractive
from ..llm.base import LLM, ChatRequest, SystemBlock
from ..models import RetrievedTurn, Turn
from ..store.collections import ProjectStore
from .render import inert

log = logging.getLogger(__name__)

SUMMARY_INSTRUCTIONS = (
    "Summarize this exchange between a product manager and Forge in one or two sentences for later search. "
    "Keep names, numbers, decisions and facts the PM stated, and the topic of the question they answered; "
    "leave out the new questions Forge asks at the end. No preamble."
)


def asked_before(turns: list[Turn], index: int) -> str:
    """The questions Forge asked just before `turns[index]`: the topic the PM's message answers."""
    return extractive.questions_in(turns[index - 1].assistant) if index > 0 else ""


def summarize_turn(llm: LLM, user: str, assistant: str, settings: Settings, asked: str = "") -> str:
    context = f"Forge had asked: {asked}\n\n" if asked else ""
    request = ChatRequest(
        purpose="summarize_turn",
        model=settings.summary_model,
        system=[SystemBlock(text=SUMMARY_INSTRUCTIONS)],
        messages=[{"role": "user", "content": f"<turn>\n{inert(context)}PM: {inert(user)}\n\n"
                                              f"Forge: {inert(assistant)}\n</turn>"}],
        max_tokens=150,
        context=(user, assistant, asked),
    )
    try:
        text = llm.complete(request).text.strip()
    except ForgeError as exc:  # a summary is never worth losing the turn over
        log.warning("turn summary fell back to extractive: %s", exc)
        text = ""
    return text or extractive.turn_summary(user, assistant, asked)


def remember(store: ProjectStore, embedder: Embedder, turn: Turn) -> None:
    """Index one finished turn (idempotent: the id is the turn number)."""
    record = RetrievedTurn(
        turn_number=turn.number,
        active_probe=turn.active_probe,
        active_mode=turn.active_mode,
        user=turn.user,
        assistant=turn.assistant,
        summary=turn.summary,
    )
    store.upsert_turn(record, embedder.embed_documents([turn.summary])[0])


def catch_up(store: ProjectStore, embedder: Embedder, llm: LLM, state, settings: Settings) -> list[int]:
    """Index turns that were saved but not remembered (the process died in between). Returns their numbers."""
    done = []
    for i, turn in enumerate(state.turns):
        if not turn.indexed:
            if not turn.summary:
                turn.summary = summarize_turn(llm, turn.user, turn.assistant, settings, asked_before(state.turns, i))
            remember(store, embedder, turn)
            turn.indexed = True
            done.append(turn.number)
    return done
