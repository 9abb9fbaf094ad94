"""The real `forge` command run inside the test process: the same `main(argv)` the console script calls,
with the environment and working folder a test gives it and its output captured. A fresh process costs
about 1.5 s of imports per command; tests that need a second process (a lock held here, a kill, a
terminal) start one instead."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

from pmforge.core import settings as config
from pmforge.surfaces.cli import main

SRC = Path(__file__).parents[1] / "src"


def start_forge(cwd: Path, *args: str, env: dict[str, str | None]) -> subprocess.Popen:
    """`forge ARGS` in a process of its own, for two commands at once (a chat reading stdin while another
    command runs): `env` over this process's environment (None removes a variable); stdin, stdout and
    stderr are text pipes."""
    full = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(SRC), os.environ.get("PYTHONPATH")]))}
    for name, value in env.items():
        if value is None:
            full.pop(name, None)
        else:
            full[name] = value
    return subprocess.Popen([sys.executable, "-m", "pmforge.surfaces.cli", *args], cwd=cwd, env=full,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def run_forge(cwd: Path, *args: str, env: dict[str, str | None]) -> subprocess.CompletedProcess:
    """`forge ARGS` in `cwd` with `env` over this process's environment (None removes a variable); stdin is
    not a terminal. Returns what a subprocess run would: exit code, stdout, stderr."""
    saved_env, saved_cwd, saved_stdin = dict(os.environ), os.getcwd(), sys.stdin
    out_bytes = io.BytesIO()
    out = io.TextIOWrapper(out_bytes, encoding="utf-8", newline="")  # has .buffer, as a real stdout does
    err = io.StringIO()
    try:
        for name, value in env.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        os.chdir(cwd)
        sys.stdin = io.StringIO("")
        config.get_settings.cache_clear()
        with redirect_stdout(out), redirect_stderr(err):
            try:
                code = main(list(args))
            except SystemExit as exit_:  # argparse refusing the words
                code = exit_.code if isinstance(exit_.code, int) else 1
    finally:
        os.environ.clear()
        os.environ.update(saved_env)
        os.chdir(saved_cwd)
        sys.stdin = saved_stdin
        config.get_settings.cache_clear()
    out.flush()
    return subprocess.CompletedProcess(["forge", *args], code, out_bytes.getvalue().decode("utf-8", "replace"),
                                       err.getvalue())
