"""Phase B's budget is a guarantee: every round of every turn, however heavy the turn.

Real components throughout (store, embedder, router, assembly, tools, turn loop); only the reply model
is a long-winded stand-in, so the turns carry what a verbose Claude would send back.
"""

from __future__ import annotations

import json
import random

import pytest

from forge_bench.bench import session
from pmforge.core.models import Assumption
from pmforge.core.tokens import count_tokens, truncate_to_tokens
from pmforge.ingest.pipeline import ingest_file
from pmforge.interviewer.offline import OfflineLLM
from pmforge.llm.base import LLM, ChatRequest, ChatResponse
from pmforge.llm.messages import ToolCall
from pmforge.project.project import Project
from pmforge.turn.assemble import assemble
from pmforge.turn.execute import Execution
from pmforge.turn.fit import build_reply_request, first_round_target, fit_context, reply_tokens
from pmforge.turn.orchestrator import start_turn

LONG_REPLY = truncate_to_tokens(session.prose(random.Random(5), 1400), 1500, marker="")


class LongWinded(LLM):
    """Routing and summaries from the offline interviewer; every reply round is ~1,500 tokens of text,
    with a tool call in each of the first `tool_rounds` rounds, so later rounds carry it all back."""

    name, online = "long-winded", False

    def __init__(self, tool_rounds: int = 2):
        self.offline, self.tool_rounds = OfflineLLM(), tool_rounds
        self.replies: list[ChatRequest] = []  # every reply request, exactly as sent

    def complete(self, request: ChatRequest) -> ChatResponse:
        if request.purpose != "reply":
            return self.offline.complete(request)
        self.replies.append(request)
        round_no = 1 + sum(1 for m in request.messages if m.tool_calls)
        if round_no > self.tool_rounds:
            return ChatResponse(text=LONG_REPLY)
        summary = f"Round {round_no}: " + " ".join(request.context.user_message.split()[:200])
        return ChatResponse(
            text=LONG_REPLY, stop_reason="tool_use",
            tool_calls=[ToolCall(id=f"call_{round_no}", name="update_conversation_summary",
                             input={"summary": summary[:1500]})],
        )


def _heavy_project(project: Project) -> LongWinded:
    """A 600-word org context, a document whose sections are ~1,750-token parents, a register and a brief
    that fill their sections. Replies come from `LongWinded` (its offline interviewer until then)."""
    llm = LongWinded()
    claim = "Department leads will follow a suggested markdown list if it is short and arrives before noon"
    with project.operation("heavy state"):
        state = project.state()
        state.assumptions = [
            Assumption(id=f"A{i}", claim=f"{claim} in store {100 + i}.", impact=("high", "medium", "low")[i % 3],
                       status=("active", "at_risk")[i % 2])
            for i in range(1, 61)
        ]
        state.problem_brief.problem_statement = session.prose(random.Random(9), 120)
        state.problem_brief.target_audience = session.prose(random.Random(10), 80)
        project.ws.save_state(state)
    rng = random.Random(3)
    sections = "\n".join(
        f"## {title}\n\n" + "\n\n".join(session.prose(rng, 450) for _ in range(3)) + "\n"
        for title in ("Bakery findings", "Produce findings", "Dairy findings", "Risks"))
    assert ingest_file(project, "long-research.md", f"# Long research\n\n{sections}".encode()).ok
    with project.operation("org context"):
        manifest = project.manifest()
        manifest.org_context = session.org_context(600)
        project.ws.save_manifest(manifest)
    return llm


@pytest.fixture
def heavy(project: Project) -> tuple[Project, LongWinded]:
    return project, _heavy_project(project)


def test_a_heavy_turn_never_exceeds_the_budget_in_any_round(heavy):
    project, llm = heavy
    project.services.llm = llm
    budget = project.settings.phase_b_budget
    trimmed, refitted = [], []
    for message in session.heavy_messages(4):
        llm.replies.clear()
        pending = start_turn(project, message)
        record = pending.finish()
        sent = [r.token_count() for r in llm.replies]
        assert len(sent) == 3  # two tool rounds, then the reply
        assert max(sent) <= budget, sent
        assert record.tokens.phase_b_rounds == sent  # the report counts what was really sent
        assert record.tokens.phase_b == max(sent)
        # The static prefix is the same bytes in every round, trimmed or not: it is what the cache holds.
        statics = {(r.system[0].text, r.system[0].cache, json.dumps([t.model_dump() for t in r.tools]))
                   for r in llm.replies}
        assert len(statics) == 1
        assert sent[0] <= first_round_target(project.settings)  # round 1 keeps room for what the loop appends
        trimmed += record.tokens.trimmed
        refitted.append(len({r.system[1].text for r in llm.replies}) > 1)  # a later round got a trimmed context
    # The run is heavy enough that fitting had work to do, in round 1 and in the loop.
    assert any(step.startswith("documents") for step in trimmed) and any(refitted)
    stored = project.state().turns[-1].tokens  # the saved turn keeps the true maximum too
    assert stored.phase_b == max(stored.phase_b_rounds) == record.tokens.phase_b
    carried = [p for m in llm.replies[1].messages if not m.is_plain() for p in m.parts]
    assert [p.kind for p in carried] == ["text", "tool_call", "tool_result"]  # round 2 carries round 1 back


def _untrimmed(project: Project, message: str):
    """A fresh, unfitted context for a turn about to start (the real assembly, on the real store)."""
    pending = start_turn(project, message)
    ctx = assemble(pending.decision, pending.state, pending.manifest, pending.message, pending.number,
                   project.store, project.services.embedder, project.settings, pending.catalogue)
    return pending, ctx


def _copy(ctx):
    return ctx.model_copy(update={
        "sections": dict(ctx.sections), "tokens": dict(ctx.tokens), "documents": list(ctx.documents),
        "conversations": list(ctx.conversations), "recent": list(ctx.recent)})


def test_trimming_order_documents_then_earlier_turns_then_recent_turns(heavy):
    project, _ = heavy  # earlier turns from the offline interviewer: short replies, quick to remember
    settings = project.settings
    messages = session.heavy_messages(8)
    for message in messages[:7]:
        start_turn(project, message).finish()
    pending, ctx = _untrimmed(project, messages[7])
    docs, convs, recent = len(ctx.documents), len(ctx.conversations), len(ctx.recent)
    assert docs >= 2 and convs >= 1 and recent == settings.recent_turns  # every kind is there to trim
    full = reply_tokens(ctx)
    assert full == build_reply_request(ctx, pending.state, settings).token_count()
    best_docs = [d.id for d in sorted(ctx.documents, key=lambda d: -d.score)]
    always_on = {k: ctx.tokens[k] for k in ("context_block", "assumptions", "skeleton", "routing_context", "probe")}

    seen = []
    for target in range(full - 200, 4000, -250):
        trimmed = _copy(ctx)
        report = fit_context(trimmed, pending.state, pending.manifest, settings, target)
        size = build_reply_request(trimmed, pending.state, settings).token_count()
        assert report.after == size
        n_docs, n_convs, n_recent = len(trimmed.documents), len(trimmed.conversations), len(trimmed.recent)
        compacted = any(trimmed.tokens[k] < v for k, v in always_on.items())
        seen.append((n_docs, n_convs, n_recent, compacted))
        if size > target:
            assert n_docs == n_convs == n_recent == 0  # only what can never go is left
        # What goes is the lowest-scored: the documents kept are the best ones.
        assert sorted(d.id for d in trimmed.documents) == sorted(best_docs[:n_docs])
        if n_convs < convs:
            assert n_docs == 0, seen  # earlier turns only go once the documents have
        if n_recent < recent or trimmed.recent != ctx.recent:
            assert n_docs == 0 and n_convs == 0, seen  # recent turns only after both
        if compacted:
            assert n_docs == n_convs == 0 and n_recent <= 1, seen  # always-on sections last
        # The record shows what is sent: the section counts follow the trimming.
        assert trimmed.tokens["documents"] == count_tokens(trimmed.sections["documents"])
        assert trimmed.tokens["recent_turns"] == sum(count_tokens(u) + count_tokens(a) for u, a in trimmed.recent)
        # Trimmed or not, the static prefix is the same bytes (it is what the cache holds), and the PM's
        # message is never cut.
        request, untrimmed = build_reply_request(trimmed, pending.state, settings), build_reply_request(
            ctx, pending.state, settings)
        assert request.system[0] == untrimmed.system[0] and request.system[0].cache
        assert request.tools == untrimmed.tools and request.messages[-1] == untrimmed.messages[-1]
    # The sweep went all the way: each stage was reached.
    assert seen[0][0] >= 1 and any(s[0] == 0 and s[1] >= 1 for s in seen)
    assert any(s[1] == 0 and s[2] >= 1 for s in seen) and any(s[3] for s in seen)


def test_later_rounds_shorten_the_oldest_loop_text_when_the_context_cannot_give_more(project: Project):
    """When re-trimming the context cannot give enough (a fresh project has little to trim), round 2+ must
    still fit: the earlier rounds' text is cut, oldest first, and every tool call keeps its result."""
    llm = LongWinded(tool_rounds=3)
    project.services.llm = llm
    pending = start_turn(project, "We want to cut fresh shrink in bakery by a third this year.")
    budget = pending.reply_request.token_count() + 2000  # room for round 1's text, not for three rounds
    pending.prompt.budget = budget
    execution = Execution(llm, pending.prompt, pending.tool_ctx, 4)
    result = execution.run()
    assert len(llm.replies) == 4 and max(execution.result.request_tokens) <= budget
    assert execution.result.request_tokens == [r.token_count() for r in llm.replies]
    last = llm.replies[-1].messages
    loop = [m for m in last if not m.is_plain()]
    calls = [c.id for m in loop for c in m.tool_calls]
    results = [r.call_id for m in loop for r in m.tool_results]
    assert calls == results == ["call_1", "call_2", "call_3"]
    texts = [m.text for m in loop if m.text]
    assert count_tokens(texts[0]) < count_tokens(LONG_REPLY)  # the oldest was cut
    assert result.reply.count(LONG_REPLY[:200]) == 4  # the PM still got every round's text in full
