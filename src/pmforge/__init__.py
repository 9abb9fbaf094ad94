"""Forge: a discovery copilot for product managers."""

__version__ = "0.1.0"
