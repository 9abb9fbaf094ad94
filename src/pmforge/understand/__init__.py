"""Understanding a PM's message: from ordinary language to typed records for the session state.

`understand(message, state)` is deterministic and local (no network): sentences are parsed by spaCy's small
English pipeline, filed under the brief's fields by a classifier learnt from labelled PM sentences, and read
into records (metrics, criteria, people, assumptions) by the field's reader (`read`). The offline interviewer
acts on its output through the same tools Claude calls; the router reads its intent (summarise, write the
brief, evaluate an option) and the probes the message answers. Only the PM's own words are understood:
pasted material is source text, never the PM's say-so.
"""

from __future__ import annotations

from pmforge.understand.intent import evaluation_target, speaks_beyond_session
from pmforge.understand.model import (
    Correction,
    Departure,
    Fact,
    Hedge,
    Metric,
    Person,
    ProbeAnswer,
    StatusChange,
    Understanding,
)
from pmforge.understand.read import filled_slots, understand
from pmforge.understand.text import sentences

__all__ = ["Correction", "Departure", "Fact", "Hedge", "Metric", "Person", "ProbeAnswer", "StatusChange",
           "Understanding", "evaluation_target", "filled_slots", "sentences", "speaks_beyond_session", "understand"]
