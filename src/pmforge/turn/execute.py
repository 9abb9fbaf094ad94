"""Phase B: the reply and the tool calls that keep state current.

Each round sends the request `turn.fit.ReplyPrompt` builds (within the budget), runs the
tool calls it answers with, and hands their results to the next round. What the model
writes in Forge's own acknowledgement voice is neutralised before the PM sees it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Iterator

from pmforge.core.errors import ForgeError
from pmforge.core.models import ToolCallRecord
from pmforge.llm.base import LLM, Usage
from pmforge.llm.messages import Message, ToolResult
from pmforge.tools import ToolContext, run_tool
from pmforge.turn.acknowledge import ImitationGuard, neutralise
from pmforge.turn.fit import ReplyPrompt

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


class Execution:
    """Runs the tool loop; iterate it for reply text as it streams. `result` is complete afterwards.
    Each round's request comes from `prompt`, which keeps every round within the budget."""

    def __init__(self, llm: LLM, prompt: ReplyPrompt, tool_ctx: ToolContext, max_rounds: int):
        self.llm, self.prompt, self.tool_ctx, self.max_rounds = llm, prompt, tool_ctx, max_rounds
        self.result = ExecutionResult()

    def __iter__(self) -> Iterator[str]:
        loop: list[Message] = []  # what the rounds so far added: assistant content, then tool results
        texts: list[str] = []
        for round_no in range(1, self.max_rounds + 1):
            request = self.prompt.round(loop)
            self.result.request_tokens.append(self.prompt.tokens(request))
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
            if not response.tool_calls:
                break
            results: list[ToolResult] = []
            for call in response.tool_calls:
                ok, text = run_tool(call.name, call.input, self.tool_ctx)
                kept = call.input if ok else _clip_rejected(call.input)
                self.result.tool_calls.append(ToolCallRecord(name=call.name, input=kept, ok=ok, result=text))
                results.append(ToolResult(call_id=call.id, content=text, is_error=not ok))
            loop = loop + [response.as_message(), Message(role="user", parts=list(results))]
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


def _add_usage(total: Usage, more: Usage) -> None:
    total.input_tokens += more.input_tokens
    total.output_tokens += more.output_tokens
    total.cache_read_input_tokens += more.cache_read_input_tokens
    total.cache_creation_input_tokens += more.cache_creation_input_tokens
