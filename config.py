"""Forge's settings, where the design puts them: at the repository root.

The model lives in `pmforge.core.settings`; this file re-exports it so `from config import Settings`
keeps working for scripts run from a checkout.
"""

from pmforge.core.settings import ModelPrice, Settings, get_settings

__all__ = ["ModelPrice", "Settings", "get_settings"]
