"""Forge's discovery knowledge: the catalogue of probes and domain patterns (its behaviour rules and mode flows
are prompt wording, in `pmforge.prompt.wording`).

The catalogue is data (Markdown files in `catalogue/` and a project's `patterns/`), read by `loader` into a
`Catalogue` value that each turn builds for its project and passes to whoever needs it.
"""

from pmforge.knowledge.catalog import MODES, Catalogue, Mode, Pattern, Probe
from pmforge.knowledge.loader import builtin_catalogue, project_catalogue

__all__ = [
    "MODES",
    "Catalogue",
    "Mode",
    "Pattern",
    "Probe",
    "builtin_catalogue",
    "project_catalogue",
]
