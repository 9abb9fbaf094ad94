"""Phase B's request in one place: built from the assembled context, measured with the one size formula
(`llm.base.request_tokens`), and trimmed to the budget for every round of the tool loop (`ReplyPrompt`).

Prompt order is built for caching: tool schemas and the static system block (Forge's instructions, core
behavioural rules, the mode's core) come first and are marked for Anthropic prompt caching; the per-turn
context follows in a second system block; the recent turns are real user/assistant messages.

Fitting is the last word on the size, whatever assembly produced.

Each section has its own budget, but the budgets add up to more than `phase_b_budget` (they are sized
for the common turn, where most sections are short). On a heavy turn — long documents, long earlier
replies, a long org context — the sum is what must hold, so this pass trims after assembly, cheapest
loss first:

1. retrieved documents, lowest score first (the best match is the last to go);
2. retrieved earlier turns, lowest score first;
3. the recent turns, oldest first; the last exchange is only shortened (the PM's message usually
   answers it);
4. the always-on sections, re-rendered smaller (their own compact forms).

The static prefix (instructions, mode core, tool schemas) is never touched: it is cached across turns.
`ctx` is changed in place, so the turn record, `forge chat --json` and the UI report what was sent.

A round after the first carries the previous rounds' text, calls and results: before it goes out, a copy
of the context is re-trimmed, and if that is not enough the oldest loop text is shortened.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from functools import lru_cache

from pmforge.core.models import Manifest, SessionState
from pmforge.core.settings import Settings
from pmforge.core.tokens import count_tokens, truncate_to_tokens
from pmforge.llm.base import ChatRequest, SystemBlock, request_tokens, tool_tokens
from pmforge.llm.messages import Message, TextPart, ToolCall, ToolResult
from pmforge.prompt import render
from pmforge.prompt.render import routing_note
from pmforge.prompt.wording import CONTEXT_HEADINGS, static_prefix
from pmforge.tools import tool_specs
from pmforge.turn.acknowledge import without_acknowledgement
from pmforge.turn.assemble import AssembledContext, format_documents, format_turns

log = logging.getLogger(__name__)


def reply_system(ctx: AssembledContext) -> list[SystemBlock]:
    dynamic = []
    for name, heading in CONTEXT_HEADINGS.items():
        text = ctx.sections.get(name, "").strip()
        if text:
            dynamic.append(f"# {heading}\n{text}")
    dynamic.append(routing_note(ctx))
    return [
        SystemBlock(text=static_prefix(ctx.decision.mode), cache=True, label="static"),
        SystemBlock(text="\n\n".join(dynamic), label="turn_context"),
    ]


def reply_messages(ctx: AssembledContext) -> list[Message]:
    messages: list[Message] = []
    for user, assistant in ctx.recent:
        messages.append(Message.user(user))
        # Forge's "Recorded:" lines are its own words, never the model's: a model that reads them back writes its own.
        messages.append(Message.assistant(without_acknowledgement(assistant)))
    messages.append(Message.user(ctx.user_message))
    return messages


def build_reply_request(ctx: AssembledContext, state: SessionState, settings: Settings) -> ChatRequest:
    return ChatRequest(
        purpose="reply",
        model=settings.phase_b_model,
        system=reply_system(ctx),
        messages=reply_messages(ctx),
        tools=tool_specs(),
        max_tokens=settings.phase_b_max_output_tokens,
        context=ctx,
    )


@lru_cache(maxsize=1)
def tool_schema_tokens() -> int:
    """The tool schemas' share of a reply request's token_count(). They are fixed in code, and slow to
    build and count (a third of the prompt, as JSON), so they are counted once per process."""
    return tool_tokens(tool_specs())


def reply_tokens(ctx: AssembledContext) -> int:
    """`build_reply_request(ctx, ...).token_count()`, cheaply enough to measure after every trimming step."""
    system = "\n\n".join(b.text for b in reply_system(ctx))
    return request_tokens(system, reply_messages(ctx), tool_schema_tokens())


# Always-on sections in the order they give way, and how each re-renders within a smaller budget.
# The org context and file list come first (summaries of files that are searched anyway); the probe
# last (it is this turn's question).
_ALWAYS_ON = ("context_block", "assumptions", "routing_context", "skeleton", "probe")
_COMPACT_SHARES = (0.5, 0.25, 0.0)


@dataclass
class FitReport:
    target: int
    before: int = 0
    after: int = 0
    steps: list[str] = field(default_factory=list)  # what was given up, for the token report


def _budget(name: str, settings: Settings) -> int:
    return getattr(settings, f"budget_{name}")


def _render(name: str, budget: int, ctx: AssembledContext, state: SessionState, manifest: Manifest) -> str:
    if budget <= 0:
        return ""
    if name == "context_block":
        return render.context_block(manifest, budget)
    if name == "assumptions":
        return render.assumption_register(state.assumptions, budget)
    if name == "skeleton":
        return render.skeleton(state, budget)
    if name == "routing_context":
        return render.routing_context(state, budget, ctx.catalogue)
    return truncate_to_tokens(ctx.sections.get(name, ""), budget)  # the probe: a catalogue lookup, cut


def _best(items: list, k: int) -> list:
    """The k best-scored items, in their original order (earlier turns stay chronological)."""
    best = set(map(id, sorted(items, key=lambda x: -x.score)[:k]))
    return [x for x in items if id(x) in best]


class _Fitter:
    def __init__(self, ctx: AssembledContext, state: SessionState, manifest: Manifest, settings: Settings,
                 target: int, report: FitReport):
        self.ctx, self.state, self.manifest, self.settings = ctx, state, manifest, settings
        self.target, self.report = target, report
        self.size = self.measure()

    def measure(self) -> int:
        return reply_tokens(self.ctx)

    @property
    def excess(self) -> int:
        return self.size - self.target

    def set_section(self, name: str, text: str) -> None:
        self.ctx.sections[name] = text
        self.ctx.tokens[name] = count_tokens(text)
        self.size = self.measure()

    def retrieved(self, name: str, floor: int) -> None:
        """Documents or earlier turns: drop the lowest-scored, one at a time, and let the rest use what is
        left for the section (fewer, fuller sections rather than many cut short), never under `floor`
        tokens each."""
        ctx = self.ctx
        items = ctx.documents if name == "documents" else ctx.conversations
        if self.excess <= 0 or not items:
            return
        found = len(items)
        tokens = ctx.tokens.get(name) or count_tokens(ctx.sections.get(name, ""))
        allowance = min(tokens - self.excess, _budget(name, self.settings))
        most = min(found - 1, max(allowance, 0) // floor)
        if most == 0 and allowance >= floor:
            most = 1  # the best one alone is shortened before it is dropped
        for keep in range(most, -1, -1):
            kept = _best(items, keep)
            budget = allowance
            self._show(name, kept, budget, found)
            for _ in range(3):
                # A rendering may overshoot its budget a little (tags, token boundaries): correct it
                # before giving up one more section.
                if self.excess <= 0 or not kept:
                    break
                budget -= self.excess + 2
                self._show(name, kept, budget, found)
            if self.excess <= 0:
                break
        self.report.steps.append(f"{name} {found}->{len(kept)}" + (" shortened" if len(kept) == found else ""))

    def _show(self, name: str, kept: list, budget: int, found: int) -> None:
        if name == "documents":
            self.ctx.documents = kept
            # Matches left out for room are not "nothing matched": say so, or the model would claim it.
            text = format_documents(kept, budget) if kept else (
                f"({found} matching sections were left out: no room in this turn's prompt.)")
        else:
            self.ctx.conversations = kept
            text = format_turns(kept, budget, self.ctx.catalogue, self.settings.turn_side_whole_tokens) if kept else ""
        self.set_section(name, text)

    def recent(self) -> None:
        ctx, settings = self.ctx, self.settings
        found = len(ctx.recent)
        while self.excess > 0 and len(ctx.recent) > 1:
            ctx.recent = ctx.recent[1:]
            self._recount_recent()
        if len(ctx.recent) < found:
            self.report.steps.append(f"recent_turns {found}->{len(ctx.recent)}")
        if self.excess > 0 and ctx.recent:
            user, assistant = ctx.recent[-1]
            floor, user_tokens = settings.fit_recent_min_tokens, count_tokens(user)
            room = user_tokens + count_tokens(assistant) - self.excess
            user_budget = max(min(user_tokens, room // 2), floor)  # the longer side gives more
            shorter = (render.clip(user, user_budget), render.clip(assistant, max(room - user_budget, floor)))
            if shorter != ctx.recent[-1]:
                ctx.recent = [shorter]
                self._recount_recent()
                self.report.steps.append("recent_turns shortened")

    def _recount_recent(self) -> None:
        self.ctx.tokens["recent_turns"] = sum(count_tokens(u) + count_tokens(a) for u, a in self.ctx.recent)
        self.size = self.measure()

    def always_on(self) -> None:
        for share in _COMPACT_SHARES:
            for name in _ALWAYS_ON:
                if self.excess <= 0:
                    return
                if not self.ctx.sections.get(name):
                    continue
                budget = int(_budget(name, self.settings) * share)
                if self.ctx.tokens.get(name, 0) <= budget:
                    continue
                self.set_section(name, _render(name, budget, self.ctx, self.state, self.manifest))
                self.report.steps.append(f"{name} compact" if share else f"{name} left out")

    def drop_last_exchange(self) -> None:
        if self.excess > 0 and self.ctx.recent:
            self.ctx.recent = []
            self._recount_recent()
            self.report.steps.append("recent_turns left out")


def fit_context(ctx: AssembledContext, state: SessionState, manifest: Manifest, settings: Settings,
                target: int) -> FitReport:
    """Trim `ctx` in place until the reply request is at most `target` tokens (or nothing is left to trim)."""
    report = FitReport(target=target)
    fitter = _Fitter(ctx, state, manifest, settings, target, report)
    report.before = fitter.size
    if fitter.excess > 0:
        fitter.retrieved("documents", settings.fit_document_min_tokens)
    if fitter.excess > 0:
        fitter.retrieved("conversations", settings.fit_turn_min_tokens)
    if fitter.excess > 0:
        fitter.recent()
    if fitter.excess > 0:
        fitter.always_on()
    fitter.drop_last_exchange()  # only if even the compact sections are too much
    report.after = fitter.size
    return report


def first_round_target(settings: Settings) -> int:
    return settings.phase_b_budget - settings.phase_b_round_reserve


def refitted(ctx: AssembledContext, state: SessionState, manifest: Manifest, settings: Settings,
             target: int) -> AssembledContext:
    """A further-trimmed copy of `ctx` (the original keeps the turn record showing what round 1 sent)."""
    copy = ctx.model_copy(update={
        "sections": dict(ctx.sections), "tokens": dict(ctx.tokens), "documents": list(ctx.documents),
        "conversations": list(ctx.conversations), "recent": list(ctx.recent),
    })
    fit_context(copy, state, manifest, settings, target)
    return copy


# Earlier rounds' text is cut in steps: every part keeps a readable head before any is cut to a stub.
_LOOP_FLOORS = (200, 60, 15)


class ReplyPrompt:
    """Phase B's request for each round of one turn, never over `budget`.

    Round 1 is fitted at construction, leaving room for what a tool round appends (the context is trimmed in
    place and `report` says what was given up). Later rounds re-fit a copy of the context; the static prefix
    comes out byte-identical, so it stays cached."""

    def __init__(self, ctx: AssembledContext, state: SessionState, manifest: Manifest, settings: Settings,
                 budget: int | None = None):
        self.ctx, self.state, self.manifest, self.settings = ctx, state, manifest, settings
        self.budget = settings.phase_b_budget if budget is None else budget
        self.report = fit_context(ctx, state, manifest, settings, first_round_target(settings))
        self.request = build_reply_request(ctx, state, settings)
        self._base = self.request  # what later rounds append to: round 1's request, or a re-fitted one

    def tokens(self, request: ChatRequest) -> int:
        """`request.token_count()` for a reply request, with the tool schemas counted once per process."""
        return request_tokens(request.system_text(), request.messages, tool_schema_tokens())

    def prefix_tokens(self) -> int:
        """Tokens of the cacheable prefix: tool schemas + the static system block."""
        return tool_schema_tokens() + sum(count_tokens(b.text) for b in self.request.system if b.cache)

    def round(self, loop: list[Message]) -> ChatRequest:
        """The request for the next round: the base request and what the rounds so far added (`loop`)."""
        if not loop:
            return self.request
        request = _with_messages(self._base, self._base.messages + loop)
        size = self.tokens(request)
        if size <= self.budget:
            return request
        loop_tokens = size - self.tokens(self._base)
        ctx = self._base.context if isinstance(self._base.context, AssembledContext) else self.ctx
        self._base = build_reply_request(refitted(ctx, self.state, self.manifest, self.settings,
                                                  self.budget - loop_tokens), self.state, self.settings)
        request = _with_messages(self._base, self._base.messages + loop)
        shortened = loop
        for _ in range(len(_LOOP_FLOORS) + 1):  # a cut is counted as text, the request as JSON: re-check
            over = self.tokens(request) - self.budget
            if over <= 0:
                break
            shortened = _shorten(shortened, over)
            request = _with_messages(self._base, self._base.messages + shortened)
        else:
            log.warning("phase B round over budget even trimmed: %d > %d", self.tokens(request), self.budget)
        return request


def _with_messages(request: ChatRequest, messages: list[Message]) -> ChatRequest:
    copy = request.model_copy(update={"messages": messages})
    copy.context = request.context  # excluded from dumps, kept by reference
    return copy


def _shorten(loop: list[Message], over: int) -> list[Message]:
    """Copies of the loop messages with `over` tokens cut from the oldest text first: the assistant's
    earlier text (already shown to the PM), tool results, then long strings in earlier tool calls'
    arguments. Parts and ids stay, so the provider still pairs each call with its result."""
    loop = [m.model_copy(deep=True) for m in loop]  # never touch what the turn record keeps

    def cut(text: str, floor: int) -> str:
        nonlocal over
        tokens = count_tokens(text)
        if over <= 0 or tokens <= floor:
            return text
        shorter = truncate_to_tokens(text, max(tokens - over, floor))
        over -= tokens - count_tokens(shorter)
        return shorter

    def cut_strings(value, floor: int):
        if isinstance(value, str):
            return cut(value, floor)
        if isinstance(value, dict):
            return {k: cut_strings(v, floor) for k, v in value.items()}
        if isinstance(value, list):
            return [cut_strings(v, floor) for v in value]
        return value

    for floor in _LOOP_FLOORS:
        for message in loop:
            for part in message.parts:
                if isinstance(part, TextPart):
                    part.text = cut(part.text, floor)
                elif isinstance(part, ToolResult):
                    part.content = cut(part.content, floor)
        for message in loop:
            for part in message.parts:
                if isinstance(part, ToolCall):
                    part.input = cut_strings(part.input, floor)
        if over <= 0:
            break
    return loop


