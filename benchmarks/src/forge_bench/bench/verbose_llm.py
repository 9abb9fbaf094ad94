"""Bench-only: the offline interviewer made as long-winded as Claude is allowed to be.

The heavy workload of `forge bench prompt` needs replies near the output cap and a second tool-loop
round that carries a long assistant message, produced by the real turn loop. This wraps `OfflineLLM`:
every reply round is the offline reply padded to ~1,100 words (about 1,450 cl100k tokens, under the
1,500-token cap), and the first round always calls tools, so round 2 always carries that long text back.
It also records what each reply round really sent, as an independent check on the turn's token report.
"""

from __future__ import annotations

import random

from forge_bench.bench import session
from pmforge.llm.base import LLM, ChatRequest, ChatResponse
from pmforge.llm.inputs import AssembledContext
from pmforge.llm.messages import ToolCall
from pmforge.tools import tool_for
from pmforge.tools.session import UpdateConversationSummary


def _after_tools(request: ChatRequest) -> bool:
    return bool(request.messages and request.messages[-1].tool_results)


class VerboseLLM(LLM):
    def __init__(self, inner: LLM, words: int = 1100, seed: int = 23):
        self.inner, self.words = inner, words
        self.name, self.online = f"verbose-{inner.name}", inner.online
        self.rng = random.Random(seed)
        self.sent: list[int] = []  # tokens of each reply request since the last `take_rounds`

    def take_rounds(self) -> list[int]:
        rounds, self.sent = self.sent, []
        return rounds

    def complete(self, request: ChatRequest) -> ChatResponse:
        if request.purpose != "reply":
            return self.inner.complete(request)
        self.sent.append(request.token_count())
        response = self.inner.complete(request)
        if not _after_tools(request) and not response.tool_calls:
            # Nothing to record this turn: a summary update still makes a second round, as Claude often does.
            ctx = request.context
            words = (ctx.user_message.split()[:120] if isinstance(ctx, AssembledContext)
                     else ["The", "session", "goes", "on."])
            summary = " ".join(words)
            response = ChatResponse(
                tool_calls=[ToolCall(id="bench_1", name=tool_for(UpdateConversationSummary).name,
                                 input={"summary": f"Latest from the PM: {summary}"[:1500]})],
                stop_reason="tool_use",
            )
        return response.model_copy(update={"text": self._pad(response.text)})

    def _pad(self, text: str) -> str:
        missing = self.words - len(text.split())
        if missing <= 0:
            return text
        filler = "To think this through out loud before we go on: " + session.prose(self.rng, missing)
        return f"{text}\n\n{filler}".strip()
