"""Forge and its benchmark tools are two parts: `forge bench` and `forge eval` arrive through an entry point of
the benchmark part (benchmarks/), and the product runs without it."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

cli = importlib.import_module("pmforge.surfaces.cli.main")  # the module (the package re-exports its `main`)


def test_the_measuring_commands_come_from_the_benchmark_part_and_load_nothing_else_until_run():
    probe = ("import importlib, sys; importlib.import_module('pmforge.surfaces.cli.main').build_parser(); "
             "print(sorted(m for m in sys.modules if m.startswith('forge_bench')))")
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    # Only the module that registers the commands: the benchmarks themselves load when a command runs.
    assert run.stdout.strip() == "['forge_bench', 'forge_bench.commands']"
    choices = cli.build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    assert {"bench", "eval"} <= set(choices)
    assert "sessions" in choices["eval"].format_help() and "understand" in choices["bench"].format_help()


def test_without_the_benchmark_part_forge_says_how_to_add_it(monkeypatch, capsys):
    monkeypatch.setattr(cli, "entry_points", lambda group: [])
    for command in (["bench", "prompt", "--turns", "5"], ["eval", "sessions", "--dir", "x"]):
        assert cli.main(command) == 1
        err = capsys.readouterr().err
        assert f"forge {command[0]} comes with Forge's benchmark tools" in err and "./scripts/setup bench" in err
    with pytest.raises(SystemExit):  # every other command is there as before
        cli.main(["chat", "--help"])
    assert "Ctrl-D" in capsys.readouterr().out
