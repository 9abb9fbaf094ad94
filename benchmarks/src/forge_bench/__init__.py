"""Forge's benchmarks and evaluations (`forge bench`, `forge eval`): a part installed on its own beside Forge.

commands.py adds the two commands to `forge`; bench/ drives the real code paths and prints figures;
evaluation.py (docs and memory retrieval), session_eval.py (whole discovery sessions against gold) and
answer_eval.py (factual questions about files) score Forge on labelled sets."""
