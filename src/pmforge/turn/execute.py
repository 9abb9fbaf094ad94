"""Phase B: the reply and the tool calls that keep state current.

Prompt order is built for caching: tool schemas and the static system block
(Forge's instructions, core behavioural rules, the mode's core) come first and are
marked for Anthropic prompt caching; the per-turn context follows in a second
system block; the recent turns are real user/assistant messages.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable, Iterator

from pmforge.core.errors import ForgeError
from pmforge.core.models import SessionState, ToolCallRecord
from pmforge.core.settings import Settings
from pmforge.core.tokens import count_tokens, truncate_to_tokens
from pmforge.llm.base import LLM, ChatRequest, SystemBlock, Usage, request_tokens, tool_tokens
from pmforge.prompt.render import routing_note
from pmforge.prompt.wording import CONTEXT_HEADINGS, static_prefix
from pmforge.tools import ToolContext, run_tool, tool_specs
from pmforge.turn.acknowledge import ImitationGuard, neutralise, without_acknowledgement
from pmforge.turn.assemble import AssembledContext

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


def reply_messages(ctx: AssembledContext) -> list[dict]:
    messages: list[dict] = []
    for user, assistant in ctx.recent:
        messages.append({"role": "user", "content": user})
        # Forge's "Recorded:" lines are its own words, never the model's: a model that reads them back writes its own.
        messages.append({"role": "assistant", "content": without_acknowledgement(assistant)})
    messages.append({"role": "user", "content": ctx.user_message})
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


def prefix_tokens(request: ChatRequest) -> int:
    """Tokens of the cacheable prefix: tool schemas + the static system block."""
    return tool_tokens(request.tools) + sum(count_tokens(b.text) for b in request.system if b.cache)


REJECTED_INPUT_CHARS = 2000


def _clip_rejected(arguments):
    """A refused call's arguments are kept for the record, but a runaway one (a 200k-character string)
    must not bloat state.json, which is read on every turn."""
    text = json.dumps(arguments, ensure_ascii=False, default=str)
    return arguments if len(text) <= REJECTED_INPUT_CHARS else {"clipped": text[:REJECTED_INPUT_CHARS]}


@dataclass
class ExecutionResult:
    reply: str = ""
    tool_calls: list[ToolCallRecord] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    rounds: int = 0
    stop_reason: str = ""
    request_tokens: list[int] = field(default_factory=list)  # what each round sent (cl100k)


# Refit: (the context the current request was built from, a token target) -> a request rebuilt from a
# further-trimmed copy of it, with the same static prefix.
Refit = Callable[[Any, int], ChatRequest]

# Earlier rounds' text is cut in steps: every block keeps a readable head before any is cut to a stub.
_LOOP_FLOORS = (200, 60, 15)


class Execution:
    """Runs the tool loop; iterate it for reply text as it streams. `result` is complete afterwards.

    With a `budget`, no round is sent over it: each round after the first carries the previous rounds'
    text, calls and results, so before it goes out the context is re-trimmed (`refit`), and if that is
    not enough the oldest loop text is shortened."""

    def __init__(self, llm: LLM, request: ChatRequest, tool_ctx: ToolContext, max_rounds: int,
                 budget: int | None = None, refit: Refit | None = None):
        self.llm, self.request, self.tool_ctx, self.max_rounds = llm, request, tool_ctx, max_rounds
        self.budget, self.refit = budget, refit
        self.result = ExecutionResult()
        # Every round of one turn sends the same tool schemas: count them once, not at every check.
        self._tools_tokens = tool_tokens(request.tools)

    def tokens(self, request: ChatRequest) -> int:
        """`request.token_count()` for a request of this loop."""
        return request_tokens(request.system_text(), request.messages, self._tools_tokens)

    def _next_request(self, base: ChatRequest, loop: list[dict]) -> tuple[ChatRequest, ChatRequest]:
        """The request for a round after the first, and the base it was built on (for later rounds)."""
        request = _with_messages(base, base.messages + loop)
        if self.budget is None or self.tokens(request) <= self.budget:
            return request, base
        loop_tokens = self.tokens(request) - self.tokens(base)
        if self.refit is not None:
            base = self.refit(base.context, self.budget - loop_tokens)
            request = _with_messages(base, base.messages + loop)
        shortened = loop
        for _ in range(len(_LOOP_FLOORS) + 1):  # a cut is counted as text, the request as JSON: re-check
            over = self.tokens(request) - self.budget
            if over <= 0:
                break
            shortened = _shorten(shortened, over)
            request = _with_messages(base, base.messages + shortened)
        else:
            log.warning("phase B round over budget even trimmed: %d > %d", self.tokens(request), self.budget)
        return request, base

    def __iter__(self) -> Iterator[str]:
        base = _with_messages(self.request, list(self.request.messages))
        request = base
        loop: list[dict] = []  # what the rounds so far added: assistant content, then tool results
        texts: list[str] = []
        for round_no in range(1, self.max_rounds + 1):
            if round_no > 1:
                request, base = self._next_request(base, loop)
            self.result.request_tokens.append(self.tokens(request))
            stream = self.llm.stream(request)
            if texts:
                yield "\n\n"
            guard = ImitationGuard()  # the model's imitations of Forge's acknowledgement never reach the PM
            for delta in stream:
                shown = guard.feed(delta)
                if shown:
                    yield shown
            rest = guard.flush()
            if rest:
                yield rest
            response = stream.consume()  # the stream is spent: this is the response it ended with
            self.result.rounds = round_no
            self.result.stop_reason = response.stop_reason
            _add_usage(self.result.usage, response.usage)
            text = neutralise(response.text)  # what was shown, to be saved
            if text.strip():
                texts.append(text.strip())
            if not response.tool_uses:
                break
            results = []
            for use in response.tool_uses:
                ok, text = run_tool(use.name, use.input, self.tool_ctx)
                kept = use.input if ok else _clip_rejected(use.input)
                self.result.tool_calls.append(ToolCallRecord(name=use.name, input=kept, ok=ok, result=text))
                results.append({"type": "tool_result", "tool_use_id": use.id, "content": text, "is_error": not ok})
            loop = loop + [
                {"role": "assistant", "content": response.assistant_content()},
                {"role": "user", "content": results},
            ]
        if not texts and not self.result.tool_calls:  # nothing to show or save: the turn fails, nothing is kept
            raise ForgeError("The model sent an empty answer (no text and no tool call); nothing was saved and "
                             "your message is kept.")
        if response.stop_reason == "max_tokens":
            note = "(Reply cut short at the length limit.)"
            texts.append(note)
            yield "\n\n" + note
        self.result.reply = "\n\n".join(texts)

    def run(self) -> ExecutionResult:
        for _ in self:
            pass
        return self.result


def _with_messages(request: ChatRequest, messages: list[dict]) -> ChatRequest:
    copy = request.model_copy(update={"messages": messages})
    copy.context = request.context  # excluded from dumps, kept by reference
    return copy


def _shorten(loop: list[dict], over: int) -> list[dict]:
    """Copies of the loop messages with `over` tokens cut from the oldest text first: the assistant's
    earlier text (already shown to the PM), tool results, then long strings in earlier tool calls'
    arguments. Block structure and ids stay, so the API still pairs each call with its result."""
    loop = json.loads(json.dumps(loop))  # never touch what the turn record keeps

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
            for block in message["content"] if isinstance(message["content"], list) else []:
                if block.get("type") == "text":
                    block["text"] = cut(block["text"], floor)
                elif block.get("type") == "tool_result" and isinstance(block.get("content"), str):
                    block["content"] = cut(block["content"], floor)
        for message in loop:
            for block in message["content"] if isinstance(message["content"], list) else []:
                if block.get("type") == "tool_use":
                    block["input"] = cut_strings(block.get("input"), floor)
        if over <= 0:
            break
    return loop


def _add_usage(total: Usage, more: Usage) -> None:
    total.input_tokens += more.input_tokens
    total.output_tokens += more.output_tokens
    total.cache_read_input_tokens += more.cache_read_input_tokens
    total.cache_creation_input_tokens += more.cache_creation_input_tokens
