"""Counting words for messages the PM reads: "1 file", "3 passages"."""

from __future__ import annotations


def counted(n: int, word: str, thousands: bool = False) -> str:
    """`n` with `word`, plural unless n is 1 (regular plurals only: every word Forge counts has one)."""
    return f"{n:,} {word}{'' if n == 1 else 's'}" if thousands else f"{n} {word}{'' if n == 1 else 's'}"
