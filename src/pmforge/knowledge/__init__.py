"""Forge's discovery knowledge: behaviour rules, mode flows, and the catalogue of probes and domain patterns.

The catalogue is data (Markdown files in `catalogue/` and a project's `patterns/`), read by `loader` into a
`Catalogue` value that each turn builds for its project and passes to whoever needs it.
"""

from pmforge.knowledge.catalog import MODES, Catalogue, Mode, Pattern, Probe
from pmforge.knowledge.core import CORE_INSTRUCTIONS, MODE_CORE
from pmforge.knowledge.loader import builtin_catalogue, project_catalogue

__all__ = [
    "CORE_INSTRUCTIONS",
    "MODES",
    "MODE_CORE",
    "Catalogue",
    "Mode",
    "Pattern",
    "Probe",
    "builtin_catalogue",
    "project_catalogue",
]
