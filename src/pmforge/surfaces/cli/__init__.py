"""The `forge` command: a package of subcommands (`main.py` parses and dispatches)."""

from pmforge.surfaces.cli.main import build_parser, main

__all__ = ["build_parser", "main"]
