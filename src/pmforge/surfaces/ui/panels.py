"""Read-only views of the session for the sidebar and the main area (no business logic here)."""

from __future__ import annotations

from collections import Counter
from typing import Iterable

import streamlit as st

from pmforge.core.models import AssumptionStatus, Manifest, ManifestEntry, SessionState, Turn
from pmforge.knowledge import Catalogue
from pmforge.llm.costs import meter_lines
from pmforge.outputs.briefs import problem_brief_markdown, solution_evaluation_markdown
from pmforge.surfaces.ui.citations import literal, untrusted_markdown
from pmforge.tools.assumptions import dependents

MODE_NAMES = {"mode_1": "Mode 1 · Discover & Frame", "mode_2": "Mode 2 · Evaluate Solution"}
STATUS_COLOUR: dict[AssumptionStatus, str] = {
    "active": "blue", "at_risk": "orange", "confirmed": "green", "invalidated": "red",
}


def file_question(turn: Turn) -> bool:
    """A question the PM asked about their files (answered from them), not an answer in the interview."""
    return turn.user.rstrip().endswith("?") and any(s.citation in turn.assistant for s in turn.sources)


def progress_words(state: SessionState, catalogue: Catalogue) -> tuple[str, str]:
    """The session's place in plain words: how many messages the PM has sent (their questions about files
    counted apart, as a PM counts them), and what Forge asks about next out of how many areas."""
    asked = sum(1 for t in state.turns if file_question(t))
    answers = len(state.turns) - asked
    count = f"{answers} answer{'s' * (answers != 1)}" + (
        f" · {asked} file question{'s' * (asked != 1)}" if asked else "")
    probe = catalogue.find_probe(state.active_probe) if state.active_probe else None
    order = catalogue.order(state.active_mode)
    done = sum(1 for p in order if p in state.routing.probes_fired)
    upcoming = probe.name if probe else next((catalogue.probe_name(p) for p in order
                                              if p not in state.routing.probes_fired), "")
    next_up = f"Next up: {upcoming.lower()} · " if upcoming else ""
    return count, f"{next_up}{done} of {len(order)} areas covered"


def session_badge(state: SessionState, catalogue: Catalogue) -> None:
    count, place = progress_words(state, catalogue)
    st.markdown(f":violet-badge[{MODE_NAMES[state.active_mode]}] :gray-badge[{count}]")
    st.caption(place)


def org_context_panel(manifest: Manifest) -> None:
    with st.expander("Organisation context"):
        if manifest.org_context:  # the PM's words or a file's: shown, never loaded or run
            st.markdown(untrusted_markdown(manifest.org_context), unsafe_allow_html=True)
        else:
            st.markdown("_Nothing recorded yet. Tell Forge \u201cFor context, \u2026\u201d._")


def register_panel(state: SessionState) -> None:
    working = sorted((a for a in state.assumptions if not a.retired), key=lambda a: a.number)
    st.subheader("Assumptions")
    if not working:
        st.caption("None registered yet. Hedged statements (\u201cI think\u2026\u201d) become assumptions.")
        return
    by_status = Counter(a.status for a in working)
    by_confidence = Counter(a.confidence for a in working)
    st.markdown(" ".join(f":{STATUS_COLOUR[s]}-badge[{s.replace('_', ' ')} {by_status[s]}]"
                         for s in STATUS_COLOUR if by_status[s]))
    st.caption("Confidence: " + ", ".join(f"{c} {by_confidence[c]}" for c in ("guessed", "informed", "validated")))
    with st.expander(f"All {len(working)} assumption{'s' * (len(working) != 1)}"):
        for a in working:
            rests = f" · rests on {', '.join(a.depends_on)}" if a.depends_on else ""
            held = dependents(state, a.id)
            holds = f" · holds up {', '.join(held)}" if held else ""
            st.markdown(f"**{a.id}** :{STATUS_COLOUR[a.status]}[{a.status.replace('_', ' ')}] {literal(a.claim)}")
            st.caption(f"{a.type.replace('_', ' ')} · impact {a.impact} · {a.confidence}{literal(rests + holds)}")


def skeleton_panel(state: SessionState, manifest: Manifest, catalogue: Catalogue) -> None:
    mode_2 = state.active_mode == "mode_2"
    st.subheader("Solution evaluation" if mode_2 else "Problem brief")
    render = solution_evaluation_markdown if mode_2 else problem_brief_markdown
    _, missing = render(state, manifest, catalogue)
    if missing:
        st.caption("Still missing: " + ", ".join(missing))
    else:
        st.caption(":green[Every required field is filled.]")
    with st.expander("Show the fields"):
        if mode_2:
            ev = state.solution_evaluation
            st.markdown(f"**Solution:** {literal(ev.solution_name or '—')}")
            for dim in ("value", "usability", "feasibility", "viability"):
                risk = getattr(ev, f"{dim}_risk")
                st.markdown(f"**{dim.title()} risk:** {risk.level} — {literal(risk.summary or '…')}")
            st.markdown(f"**Build vs buy:** {ev.build_vs_buy.recommendation}")
            st.markdown(f"**Validation:** {literal(ev.validation_plan.approach or '—')}")
            st.markdown(f"**Go / no-go:** {ev.go_no_go.recommendation.replace('_', ' ')}")
        else:
            b = state.problem_brief
            st.markdown(f"**Problem:** {literal(b.problem_statement or '—')}")
            st.markdown(f"**Audience:** {literal(b.target_audience or '—')}")
            st.markdown("**Stakeholders:** " + (", ".join(f"{literal(s.name)} ({s.role.replace('_', ' ')})"
                                                        for s in b.stakeholders) or "—"))
            m = b.success_metrics
            st.markdown(f"**Metrics:** {len(m.leading)} leading, {len(m.lagging)} lagging, "
                        f"{len(m.anti_metrics)} anti")
            c = b.decision_criteria
            st.markdown(f"**Criteria:** {len(c.proceed_if)} proceed-if, {len(c.do_not_proceed_if)} stop-if")
            if b.why_now:
                st.markdown(f"**Why now:** {literal(b.why_now)}")
            if b.day_one_use_case:
                st.markdown(f"**Day one:** {literal(b.day_one_use_case)}")
            if b.out_of_scope:
                st.markdown(f"**Out of scope:** {len(b.out_of_scope)} item{'s' * (len(b.out_of_scope) != 1)}")


def meter_chart_data(turns: list[Turn]) -> dict[str, list[int]]:
    """The meter chart's columns: turns counted from 1, as the PM counts them, and each phase's prompt tokens."""
    return {"turn": list(range(1, len(turns) + 1)),
            "Phase A": [t.tokens.phase_a for t in turns], "Phase B": [t.tokens.phase_b for t in turns]}


def session_meter(state: SessionState, settings, online: bool, files: Iterable[ManifestEntry] = ()) -> None:
    """Prompt tokens per turn (native chart) and, online, what the session has cost: every call, by model."""
    if not state.turns:
        return
    prompt_tokens = sum(t.tokens.phase_a + t.tokens.phase_b for t in state.turns)
    turns = f"{len(state.turns)} turn{'s' * (len(state.turns) != 1)}"
    with st.expander(f"Session meter — {prompt_tokens:,} prompt tokens over {turns}"):
        st.line_chart(meter_chart_data(state.turns), x="turn", x_label="turn", y_label="prompt tokens", height=220)
        if online:
            for line in meter_lines(state.turns, settings, files):
                st.caption(line)
        else:
            st.caption("Offline: no tokens are billed. The chart shows what the prompts would weigh with Claude.")
