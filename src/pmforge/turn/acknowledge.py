"""What a turn recorded, told back to the PM in a line or a short list at the end of the reply.

Worded from what Forge knows for certain — each successful tool call's validated arguments and the state
before and after the turn's tools ran (the ids the register assigned, the dependants a status change put at
risk) — never from the model's prose, so the line is the same with Claude and with the offline interviewer,
and it never claims what did not happen: a call that changed nothing (a duplicate claim, a criterion
already listed) is not acknowledged. Each tool words its own line, beside its effect (`@TOOLS.acknowledges` in
`pmforge.tools`); bookkeeping the PM never asked for (probes, patterns, the running summary) is left out.
"""

from __future__ import annotations

import re

from pydantic import ValidationError

from pmforge.core.models import SessionState, ToolCallRecord
from pmforge.tools import TOOLS

HEADING = "**Recorded:**"


def acknowledgement_lines(calls: list[ToolCallRecord], before: SessionState, after: SessionState,
                          org_before: str = "") -> list[str]:
    """One line per successful call that changed something, in call order, each said once.
    `org_before` is the organisation context as the turn began (it lives in the project manifest)."""
    lines: list[str] = []
    for call in calls:
        tool = TOOLS.get(call.name)
        if not call.ok or tool is None or tool.acknowledge is None:
            continue
        try:
            args = tool.model.model_validate(call.input or {})
        except ValidationError:  # it validated when it ran; a record from an older schema may not
            continue
        line = tool.acknowledge(args, before, after, org_before)
        line = line and line[0].upper() + line[1:]  # a name typed in lower case still starts the line
        if line and line not in lines:
            lines.append(line)
    return lines


def acknowledgement(calls: list[ToolCallRecord], before: SessionState, after: SessionState,
                    org_before: str = "") -> str:
    """The turn's acknowledgement as Markdown: "" when nothing was recorded, one line for one change,
    a short list for several."""
    lines = acknowledgement_lines(calls, before, after, org_before)
    if not lines:
        return ""
    if len(lines) == 1:
        return f"{HEADING} {lines[0]}."
    return HEADING + "\n" + "\n".join(f"- {line}" for line in lines)


def with_acknowledgement(reply: str, ack: str) -> str:
    """The reply as saved and shown: the model's words, then what was recorded."""
    return "\n\n".join(part for part in (reply, ack) if part)


# ---------------------------------------------------------------- kept apart from the model's words

# A real acknowledgement as `with_acknowledgement` appends it: a paragraph of its own, one line or a list.
_ACK_BLOCK = re.compile(r"(?:\A|\n\n)" + re.escape(HEADING) + r"(?:[ \t][^\n]*|(?:\n- [^\n]*)+)(?=\n\n|\Z)")

# What in a model's text could pass for Forge's own words: the acknowledgement's heading (bold, underlined or
# a Markdown heading, with or without its colon) and the tool-protocol tags of chat templates.
_IMITATION = re.compile(
    r"\*\*[ \t]{0,3}recorded[ \t]{0,3}:?[ \t]{0,3}\*\*(?:[ \t]{0,3}:)?"
    r"|__[ \t]{0,3}recorded[ \t]{0,3}:?[ \t]{0,3}__(?:[ \t]{0,3}:)?"
    r"|#{1,6}[ \t]{0,3}recorded[ \t]{0,3}:"
    r"|<[ \t]{0,3}/?[ \t]{0,3}tool_(?:response|call|result|use)[ \t]{0,3}>", re.I)
_IMITATION_HOLD = 40  # longer than any imitation: a stream holds back at most this much while it may be one
_IMITATION_STARTS = "*_#<"
NOT_RECORDED = "Noted (not recorded by Forge):"


def _imitation_replacement(match: re.Match) -> str:
    return "" if match.group().startswith("<") else NOT_RECORDED


class ImitationGuard:
    """Neutralises imitations of Forge's acknowledgement in a model's streamed text, before it is shown:
    a "**Recorded:**" heading the model wrote reads "Noted (not recorded by Forge):", tool-protocol tags
    (`<tool_response>`, `<tool_call>`) are dropped. Feed the deltas in order, then `flush()`; what comes out,
    joined, is `neutralise(text)` however the text was cut into deltas."""

    def __init__(self) -> None:
        self._pending = ""

    def feed(self, text: str) -> str:
        self._pending += text
        return self._release(final=False)

    def flush(self) -> str:
        return self._release(final=True)

    def _release(self, final: bool) -> str:
        text, cut = self._pending, len(self._pending)
        if not final:  # an imitation may be starting in the tail: hold it back until it is whole or is not one
            tail = max(len(text) - _IMITATION_HOLD, 0)
            cut = next((i for i in range(tail, len(text)) if text[i] in _IMITATION_STARTS), cut)
        out, pos = [], 0
        for match in _IMITATION.finditer(text):
            if match.end() > cut:
                cut = min(cut, match.start())
                break
            out += [text[pos:match.start()], _imitation_replacement(match)]
            pos = match.end()
        out.append(text[pos:cut])
        self._pending = text[cut:]
        return "".join(out)


def neutralise(text: str) -> str:
    """A model's whole text with its imitations of Forge's acknowledgement neutralised (see ImitationGuard)."""
    guard = ImitationGuard()
    return guard.feed(text) + guard.flush()


def without_acknowledgement(reply: str) -> str:
    """A saved reply as a model may read it again (history, memory, summaries): Forge's acknowledgements
    taken out, so no model learns to write its own "Recorded:" lines, and anything left that imitates them
    (a reply saved before imitations were neutralised) neutralised."""
    return neutralise(_ACK_BLOCK.sub("", reply)).strip()
