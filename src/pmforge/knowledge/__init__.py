"""Forge's discovery knowledge: behaviour rules, mode flows, probes and domain patterns."""

from pmforge.knowledge.catalog import (
    MODE_ORDER,
    PATTERNS,
    PROBES,
    Mode,
    Pattern,
    Probe,
    catalogue_text,
    find_pattern,
    find_probe,
    patterns_for,
    probes_for,
)
from pmforge.knowledge.core import CORE_INSTRUCTIONS, MODE_CORE

__all__ = [
    "CORE_INSTRUCTIONS",
    "MODE_CORE",
    "MODE_ORDER",
    "PATTERNS",
    "PROBES",
    "Mode",
    "Pattern",
    "Probe",
    "catalogue_text",
    "find_pattern",
    "find_probe",
    "patterns_for",
    "probes_for",
]
