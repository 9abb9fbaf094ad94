"""Turning state into prompt text within budgets, and the boundary that keeps uploaded or pasted text inert."""
