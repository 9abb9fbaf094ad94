"""The session's discovery output as one plain JSON record: what `forge brief --format json` prints, and the
shape `forge eval sessions` scores (so what is scored is exactly what a PM can export)."""

from __future__ import annotations

from pmforge.core.models import SessionState


def scored_record(state: SessionState) -> dict:
    """The two skeletons and the working register.

    Dumped from the models, so a field added to a skeleton is scored without touching this function.
    An assumption's `history` is left out: it holds superseded values, which are exactly what
    `must_not` checks are gone.
    """
    register = sorted((a for a in state.assumptions if not a.retired), key=lambda a: (a.number, a.id))
    return {
        "active_mode": state.active_mode,
        "completed_modes": list(state.routing.completed_modes),
        "problem_brief": state.problem_brief.model_dump(mode="json"),
        "solution_evaluation": state.solution_evaluation.model_dump(mode="json"),
        "register": [a.model_dump(mode="json", exclude={"history"}) for a in register],
    }
