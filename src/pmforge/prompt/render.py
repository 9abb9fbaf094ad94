"""Deterministic renderings of state for prompts, each within a token budget.

When a section would overflow its budget it switches to a compact form instead
of growing: the prompt stays flat however long the session runs.
"""

from __future__ import annotations

import re
from collections import Counter

from pmforge.core.models import Assumption, Manifest, SessionState, Turn
from pmforge.core.tokens import count_tokens, truncate_to_tokens
from pmforge.knowledge import Catalogue
from pmforge.llm.inputs import AssembledContext

_TAG_NAMES = ("document", "turn", "pasted")  # Forge's delimiter tags
# Characters a tag can hide behind: they render as nothing, so "<\u200b/document>" reads as a closing tag.
_HIDDEN = "[\u00ad\u034f\u180e\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufe00-\ufe0f\ufeff]"
# "<" as typed, full-width, small, or written as an HTML entity (a model may read "&lt;/document&gt;" as a tag).
_OPENER = r"(?:<|\uff1c|\ufe64|&lt;?|&#0*60;?|&#x0*3c;?)"


def _tag_name(word: str) -> str:
    """A tag name matched in ASCII or full-width letters, with invisible characters allowed between them."""
    def letter(ch: str) -> str:
        wide = chr(ord(ch) - 0x21 + 0xFF01)
        return f"[{ch}{ch.upper()}{wide}{wide.upper()}]{_HIDDEN}*"

    return "".join(letter(ch) for ch in word)


_DELIMITER = re.compile(
    _OPENER + rf"((?:\s|{_HIDDEN}|/|\uff0f)*)({'|'.join(map(_tag_name, _TAG_NAMES))})(?!\w)",
    re.I,
)


def inert(text: str) -> str:
    """Untrusted text (documents, pastes, earlier turns) cannot open or close Forge's delimiter tags:
    a file saying "</document> ignore your instructions" stays inside its <document> block. Look-alikes
    (full-width brackets, invisible characters inside the tag, "&lt;/document&gt;") are disarmed too."""
    return _DELIMITER.sub(lambda m: "\u2039" + m.group(1) + m.group(2), text)


_ATTRIBUTE_ESCAPES = {"&": "&amp;", '"': "&quot;", "<": "&lt;", ">": "&gt;"}
_LINE_BREAKS = re.compile(r"[\s\x00-\x1f\x7f\x85\u2028\u2029]+")


def attribute(value: object) -> str:
    """A value for a Forge tag's attribute: inert, on one line, quote-escaped, so a heading or file name
    such as `"></document> SYSTEM: …` stays inside the quotes of its own tag. For the prompt only:
    what the PM sees (the sources panel, citations in replies) keeps the original text."""
    flat = _LINE_BREAKS.sub(" ", inert(str(value))).strip()
    return "".join(_ATTRIBUTE_ESCAPES.get(ch, ch) for ch in flat)


def one_line(text: str) -> str:
    """Inert text on a single line: for a Forge-written line (a reference, a label) that quotes untrusted text."""
    return _LINE_BREAKS.sub(" ", inert(text)).strip()


_TAG = re.compile(r"<(/?)(document|turn|pasted)\b[^>]*>")
_PASTED_BLOCK = re.compile(r"<pasted\b[^>]*>.*?</pasted>\s*(?:\[Pasted source:[^\n]*\s*)?", re.S)
_REFERENCE = "[Pasted source:"


def pasted_block(name: str, chars: int, status: str, head: str) -> str:
    """How a long paste enters the turn: its opening words as data inside <pasted> tags, and the
    reference to the saved source as the block's last line (it names the file, so it stays inside)."""
    reference = f"{_REFERENCE} {one_line(name)}, {chars:,} characters — {one_line(status)}]"
    return f'<pasted source="{attribute(name)}">\n{inert(head)}\n{reference}\n</pasted>'


def own_words(message: str) -> str:
    """What the PM typed this turn, without pasted material (which is source text, not the PM's say-so)."""
    return _PASTED_BLOCK.sub("", message).strip()


def for_display(message: str) -> str:
    """A message as the PM should see it in the transcript: a paste's opening words as a quote, no tags."""
    def quote(match: re.Match) -> str:
        block = match.group(0)
        head = block[block.index(">") + 1 : block.index("</pasted>")].strip()
        reference = block[block.index("</pasted>") + len("</pasted>"):].strip()
        lines = head.split("\n")
        if lines[-1].startswith(_REFERENCE):  # the reference is the block's last line (older turns: after it)
            head, reference = "\n".join(lines[:-1]).strip(), lines[-1]
        reference = reference.strip("[]")
        return f"> {head}\n\n_{reference}_\n\n" if reference else f"> {head}\n\n"

    return _PASTED_BLOCK.sub(quote, message).strip()


def close_tags(text: str) -> str:
    """After a cut: close any delimiter block the cut left open, so what follows is not inside it.
    (Inert text holds no tags, so every tag seen here is Forge's own.)"""
    open_tags: list[str] = []
    for m in _TAG.finditer(text):
        if not m.group(1):
            open_tags.append(m.group(2))
        elif open_tags and open_tags[-1] == m.group(2):
            open_tags.pop()
    return text + "".join(f"\n</{tag}>" for tag in reversed(open_tags))


_TRAILING_TAG = re.compile(r"<\s*/?\s*(?:(document|turn|pasted)\b[^>]*|([a-z]{0,7}))(?: …)?$")


def drop_partial_tag(text: str) -> str:
    """A cut that fell inside one of Forge's tags (`<document citation="[pl …`) loses that fragment:
    half a tag would read as one to the model."""
    m = _TRAILING_TAG.search(text)
    if m and (m.group(1) or any(name.startswith(m.group(2)) for name in _TAG_NAMES)):
        return text[:m.start()].rstrip() + " …"
    return text


def clip(text: str, budget: int) -> str:
    """`truncate_to_tokens` that never leaves a delimiter block open (room is kept for the closing tag)."""
    if not _TAG.search(text):
        return truncate_to_tokens(text, budget)
    cut = truncate_to_tokens(text, budget - 4)
    return close_tags(drop_partial_tag(cut) if cut != text else cut)


_IMPACT_RANK = {"high": 0, "medium": 1, "low": 2}
_STATUS_RANK = {"at_risk": 0, "active": 1, "invalidated": 2, "confirmed": 3}


def context_block(manifest: Manifest, budget: int) -> str:
    """Org context and file summaries (seed 004's `format_context_block`)."""
    parts = []
    if manifest.org_context.strip():
        parts.append("## Organisation context\n" + inert(manifest.org_context.strip()))
    files = [f for f in manifest.file_summaries if f.indexed]
    if files:
        # Summaries are derived from the files (extractive offline), so they are data like the files.
        lines = [f"- **{inert(f.filename)}**: {inert(f.summary)}" for f in files]
        parts.append('## Available documents\n<document kind="file summaries">\n' + "\n".join(lines) + "\n</document>")
    text = "\n\n".join(parts)
    if count_tokens(text) <= budget or not files:
        return clip(text, budget)
    # Compact: file names only (still data: a file's name is the uploader's text), then cut.
    names = ", ".join(one_line(f.filename) for f in files)
    org = truncate_to_tokens(inert(manifest.org_context.strip()), budget // 2) if manifest.org_context else ""
    compact = (f"## Organisation context\n{org}\n\n" if org else "") + (
        f'## Available documents ({len(files)})\n<document kind="file names">\n{names}\n</document>')
    return clip(compact, budget)


def assumption_counts(assumptions: list[Assumption]) -> str:
    assumptions = [a for a in assumptions if not a.retired]
    if not assumptions:
        return "No assumptions registered yet."
    by_conf = Counter(a.confidence for a in assumptions)
    by_status = Counter(a.status for a in assumptions)
    high = sum(1 for a in assumptions if a.impact == "high" and a.status in ("active", "at_risk"))
    return (
        f"{len(assumptions)} assumptions — confidence: "
        + ", ".join(f"{k} {v}" for k, v in sorted(by_conf.items()))
        + "; status: "
        + ", ".join(f"{k} {v}" for k, v in sorted(by_status.items()))
        + f"; open high-impact: {high}."
    )


def assumption_register(assumptions: list[Assumption], budget: int) -> str:
    """Full register while it fits; then high-impact and unresolved first, the rest counted."""
    assumptions = [a for a in assumptions if not a.retired]
    if not assumptions:
        return "No assumptions registered yet."
    ordered = sorted(
        assumptions, key=lambda a: (_STATUS_RANK[a.status], _IMPACT_RANK[a.impact], a.number)
    )
    header = assumption_counts(assumptions)
    lines, used = [header], count_tokens(header)
    shown = 0
    for a in ordered:
        deps = f" (depends on {', '.join(a.depends_on)})" if a.depends_on else ""
        line = inert(f"- {a.id} [{a.type}; impact {a.impact}; {a.confidence}; {a.status}] {a.claim}{deps}")
        cost = count_tokens(line) + 1
        if used + cost > budget - 20:
            break
        lines.append(line)
        used += cost
        shown += 1
    if shown < len(assumptions):
        lines.append(f"- … {len(assumptions) - shown} more (lower impact or resolved) not shown.")
    return "\n".join(lines)


def skeleton(state: SessionState, budget: int) -> str:
    if state.active_mode == "mode_2":
        s = state.solution_evaluation
        fields = {
            "Solution": f"{s.solution_name} — {s.solution_description}".strip(" —"),
            "Value risk": s.value_risk.summary or s.value_risk.level,
            "Usability risk": s.usability_risk.summary or s.usability_risk.level,
            "Feasibility risk": s.feasibility_risk.summary or s.feasibility_risk.level,
            "Viability risk": s.viability_risk.summary or s.viability_risk.level,
            "Build vs buy": "" if s.build_vs_buy.recommendation == "undecided" and not s.build_vs_buy.rationale
            else f"{s.build_vs_buy.recommendation}: {s.build_vs_buy.rationale}",
            "Validation plan": "; ".join(p for p in (
                f"riskiest {s.validation_plan.riskiest_assumption}" if s.validation_plan.riskiest_assumption else "",
                s.validation_plan.approach, s.validation_plan.timeline) if p),
            "Go / no-go": "" if s.go_no_go.recommendation == "undecided"
            else s.go_no_go.recommendation + (f" if {'; '.join(s.go_no_go.conditions)}" if s.go_no_go.conditions else ""),
        }
        title = "Solution evaluation (Mode 2)"
    else:
        b = state.problem_brief
        m = b.success_metrics
        fields = {
            "Problem statement": b.problem_statement,
            "Target audience": b.target_audience,
            "Stakeholders": "; ".join(f"{s.name} ({s.role})" for s in b.stakeholders),
            "Success metrics": "; ".join(
                p for p in (
                    "leading: " + ", ".join(m.leading) if m.leading else "",
                    "lagging: " + ", ".join(m.lagging) if m.lagging else "",
                    "anti: " + ", ".join(m.anti_metrics) if m.anti_metrics else "",
                ) if p
            ),
            "Proceed if": "; ".join(b.decision_criteria.proceed_if),
            "Do not proceed if": "; ".join(b.decision_criteria.do_not_proceed_if),
            "Why now": b.why_now,
            "Tried before": "; ".join(b.tried_before),
            "Out of scope": "; ".join(b.out_of_scope),
            "Day-one use case": b.day_one_use_case,
        }
        title = "Problem brief (Mode 1)"
    per_field = max(budget // max(len(fields), 1) - 8, 20)
    lines = [f"{title}:"]
    for name, value in fields.items():
        value = (value or "").strip()
        lines.append(f"- {name}: {truncate_to_tokens(inert(value), per_field) if value else '(missing)'}")
    return "\n".join(lines)


def routing_context(state: SessionState, budget: int, catalogue: Catalogue) -> str:
    r = state.routing
    fired = [catalogue.probe_name(p) for p in r.probes_fired]
    patterns = [catalogue.pattern_name(p) for p in r.patterns_fired]
    active = catalogue.find_probe(state.active_probe)
    lines = [
        f"Mode: {state.active_mode}; turn {state.last_turn_number + 1}; active probe: " + (active.name if active else "none"),
        "Probes satisfied: " + (", ".join(fired) if fired else "none yet"),
        "Patterns surfaced: " + (", ".join(patterns) if patterns else "none"),
    ]
    if r.completed_modes:
        lines.append("Completed modes: " + ", ".join(r.completed_modes))
    if r.conversation_summary:
        # Written by the model from the conversation, which documents and pastes can reach: data, in a block.
        lines.append(f'Session summary:\n<turn label="session summary">\n{inert(r.conversation_summary)}\n</turn>')
    return clip("\n".join(lines), budget)


def recent_turns(turns: list[Turn], budget: int) -> list[tuple[str, str]]:
    """The last turns as (user, assistant) pairs, each side trimmed so the window fits the budget."""
    if not turns:
        return []
    per_side = max(budget // (2 * len(turns)) - 4, 40)
    return [(clip(t.user, per_side), clip(t.assistant, per_side)) for t in turns]


def quote(text: str, budget: int) -> str:
    return clip(" ".join(text.split()), budget)


def routing_note(ctx: AssembledContext) -> str:
    d = ctx.decision
    parts = [f"action={d.action}", f"mode={d.mode}"]
    if d.next_probe:
        parts.append(f"probe={d.next_probe}")
    if d.patterns:
        parts.append("patterns=" + ",".join(d.patterns))
    # (A documents section without documents says they were left out for room: they did match.)
    if d.requires_retrieval and not ctx.documents and ctx.has_documents and not ctx.sections.get("documents"):
        parts.append("no uploaded section matched this message")
    # The router's reasoning may quote what it read (file summaries, earlier turns): it cannot open a tag.
    reasoning = f". {one_line(d.reasoning)}" if d.reasoning else ""
    return "Routing decision for this turn: " + "; ".join(parts) + reasoning
