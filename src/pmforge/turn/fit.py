"""The last word on Phase B's size: make the assembled context fit the budget, whatever assembly produced.

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
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pmforge.core.models import Manifest, SessionState
from pmforge.core.settings import Settings
from pmforge.core.tokens import count_tokens, truncate_to_tokens
from pmforge.llm.base import ChatRequest
from pmforge.prompt import render
from pmforge.turn.assemble import AssembledContext, format_documents, format_turns
from pmforge.turn.execute import build_reply_request, reply_tokens

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


def refit_request(ctx: AssembledContext, state: SessionState, manifest: Manifest, settings: Settings,
                  target: int) -> ChatRequest:
    """A later tool-loop round: the reply request rebuilt from a further-trimmed copy of `ctx`. The copy
    keeps the turn record showing what round 1 sent; the static prefix comes out byte-identical."""
    copy = ctx.model_copy(update={
        "sections": dict(ctx.sections), "tokens": dict(ctx.tokens), "documents": list(ctx.documents),
        "conversations": list(ctx.conversations), "recent": list(ctx.recent),
    })
    fit_context(copy, state, manifest, settings, target)
    return build_reply_request(copy, state, settings)
