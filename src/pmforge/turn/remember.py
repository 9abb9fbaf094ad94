"""After the reply: summarize the turn, embed what both sides said, store it with the full pair."""

from __future__ import annotations

import logging

from pmforge.core.models import RetrievedTurn, Turn
from pmforge.core.settings import Settings
from pmforge.embed import Embedder, Embeds
from pmforge.index.collections import MemoryPassage, ProjectStore
from pmforge.llm.base import LLM, ChatRequest, SystemBlock
from pmforge.llm.costs import Ledger, MeteredEmbedder, MeteredLLM
from pmforge.llm.inputs import TurnToSummarize
from pmforge.llm.messages import Message
from pmforge.llm.summary import checked_summary
from pmforge.prompt.render import inert
from pmforge.prompt.wording import TURN_SUMMARY_INSTRUCTIONS
from pmforge.understand import extractive

log = logging.getLogger(__name__)



def asked_before(turns: list[Turn], index: int) -> str:
    """The questions Forge asked just before `turns[index]`: the topic the PM's message answers."""
    return extractive.questions_in(turns[index - 1].assistant) if index > 0 else ""


def summarize_turn(llm: LLM, user: str, assistant: str, settings: Settings, asked: str = "") -> str:
    context = f"Forge had asked: {asked}\n\n" if asked else ""
    request = ChatRequest(
        purpose="summarize_turn",
        model=settings.summary_model,
        system=[SystemBlock(text=TURN_SUMMARY_INSTRUCTIONS)],
        messages=[Message.user(f"<turn>\n{inert(context)}PM: {inert(user)}\n\n"
                               f"Forge: {inert(assistant)}\n</turn>")],
        max_tokens=settings.turn_summary_max_output_tokens,
        context=TurnToSummarize(user, assistant, asked),
    )
    return checked_summary(llm, request, lambda: extractive.turn_summary(user, assistant, asked), "turn summary")


TERSE_WORDS = 25  # an answer this short is searched together with the question it answers


def memory_passages(embedder: Embeds, turn: Turn, asked: str) -> list[MemoryPassage]:
    """What a turn is found by: its summary, and each side in windows the embedder reads whole (a fact
    Forge stated, or one said in passing, is often not in the summary). A terse answer ("yes, the second
    one") is embedded with the question it answers, which is where its topic words are."""
    passages = [MemoryPassage("summary", turn.summary)] if turn.summary.strip() else []
    for side, text in (("user", turn.user), ("assistant", turn.assistant)):
        if not text.strip():
            continue
        if side == "user" and asked and len(text.split()) <= TERSE_WORDS:
            passages.append(MemoryPassage(side, f"{asked}\n{text}", 0, len(text)))
            continue
        passages += [MemoryPassage(side, text[s:e], s, e) for s, e in embedder.windows(text)]
    return passages


def remember(store: ProjectStore, embedder: Embeds, turn: Turn, asked: str = "") -> None:
    """Index one finished turn (idempotent: the record is keyed by the turn's stable transcript id, so two
    clones' turns with the same number never overwrite each other)."""
    record = RetrievedTurn(
        turn_number=turn.number,
        turn_id=turn.id,
        active_probe=turn.active_probe,
        active_mode=turn.active_mode,
        user=turn.user,
        assistant=turn.assistant,
        asked=asked,
        summary=turn.summary,
    )
    passages = memory_passages(embedder, turn, asked)
    vectors = embedder.embed_documents([turn.summary or turn.user] + [p.text for p in passages])
    store.memory.upsert_turn(record, vectors[0], passages, vectors[1:])


def catch_up(
    store: ProjectStore, embedder: Embedder, llm: LLM, state, settings: Settings, ws=None,
    stored: set[str] | None = None,
) -> list[int]:
    """Remember the turns the store lacks: turns saved but not remembered (the process died in between),
    and — given `stored`, the turn ids the store holds — any turn it lacks whatever its flag says (a fresh
    clone's transcript says every turn was remembered: by the clone that wrote it). A turn the store
    already holds is never embedded again, only marked. Returns the numbers of the turns remembered.

    With `ws` (hold its lock), each turn is marked in the transcript as soon as it is remembered, so a
    crash halfway keeps the work done; without it, the caller saves `state`."""
    if stored is None:
        if all(t.indexed for t in state.turns):
            return []  # the common case costs no read of the store
        stored = store.memory.turn_ids()
    done = []
    for i, turn in enumerate(state.turns):
        if turn.id in stored:
            if not turn.indexed:  # remembered (by another clone, or before a crash), flag never written
                turn = state.turns[i] = turn.model_copy(update={"indexed": True})
                if ws is not None:
                    ws.transcript_file.patch_turn(turn)
            continue
        asked = asked_before(state.turns, i)
        ledger = Ledger()  # what remembering it late bills is the turn's own cost, recorded with it
        summary = turn.summary or summarize_turn(MeteredLLM(llm, ledger), turn.user, turn.assistant, settings, asked)
        # A changed copy: loaded turns are shared with every other reader of the transcript in this process.
        turn = state.turns[i] = turn.model_copy(update={"summary": summary})
        remember(store, MeteredEmbedder(embedder, ledger), turn, asked)
        turn.indexed = True
        turn.calls = turn.calls + ledger.take()
        if ws is not None:
            ws.transcript_file.patch_turn(turn)
        done.append(turn.number)
    return done
