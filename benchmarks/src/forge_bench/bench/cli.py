"""`forge bench cli`: what a PM waits for at the terminal, as whole-process wall time.

In a throwaway folder, offline: `forge new`, `forge ingest` of a Markdown report and a Word proposal, then one
new `forge chat PROJECT -m MESSAGE` process per turn (the environment's real `forge` console script, so
interpreter start, imports and model loading are all in the figure), and a cold `forge --help`. One more,
untimed turn runs with Python's import timer on, for the heaviest imports.
"""

from __future__ import annotations

import io
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from forge_bench.bench.browser import offline_env
from forge_bench.bench.figures import scratch_folder
from forge_bench.bench.ui import cpu_count
from pmforge.core.errors import ForgeError

PROJECT = "produce-ordering"
# Realistic PM messages: statements (they load the language model), a filler, a synthesis and questions about
# both files (they search them). The second is a file question, so even `--turns 2` asks one.
MESSAGES = (
    "Our store managers order produce by gut feel, and we throw away about 7% of fresh sales.",
    "What does the store visit report say about weekend orders?",
    "Maria Lopez, our VP of Stores, signs off on anything here. Priya from finance is nervous about the cost.",
    "I'd bet managers would trust a suggested order if it explained itself.",
    "Success is shrink down to 5% by Q4, without out-of-stocks going up.",
    "ok",
    "where are we?",
    "How long does the vendor say setup takes?",
)

REPORT = """# Store visits: how produce gets ordered

Six stores were visited in October (two urban, three suburban, one rural), each with the produce lead on shift.

## Summary

Produce is ordered by each store's produce lead on the handheld by 2pm for next-morning delivery. Nobody uses
the forecast shown on the ordering screen: leads order from memory and from what is left on the shelf at noon.

## What we saw

- Weekend orders are placed on Friday afternoon for Saturday and Sunday together, and leads over-order to avoid
  empty shelves: Monday waste was the highest of the week in five of the six stores.
- New leads copy last week's order; experienced leads adjust for weather and local events.
- Waste is logged at the end of the day by scanning discarded items; the scan is skipped on busy days.

## Numbers

| Store | Format | Produce waste, % of sales | Out-of-stocks a week |
|---|---|---|---|
| 112 | Urban | 8.4 | 3 |
| 118 | Urban | 7.9 | 5 |
| 204 | Suburban | 6.1 | 2 |
| 231 | Suburban | 6.8 | 4 |
| 256 | Suburban | 5.7 | 6 |
| 301 | Rural | 9.2 | 1 |

## What managers asked for

A suggested order they can change, with the reason next to each line ("rain forecast", "school holiday").
"""


def proposal_docx() -> bytes:
    """A vendor's two-page pilot proposal, as Word makes them: headings, paragraphs and a price table."""
    from docx import Document

    doc = Document()
    doc.add_heading("FreshCast suggested ordering: pilot proposal", level=1)
    doc.add_paragraph("FreshCast proposes an eight-week pilot in 20 stores, starting in February. Each morning the "
                      "produce lead gets a suggested order with the reason for every line, and can change it.")
    doc.add_heading("Setup", level=2)
    doc.add_paragraph("Setup takes three weeks: two weeks to connect to the ordering system and the sales history, "
                      "and one week to train produce leads in the pilot stores.")
    doc.add_heading("Pricing", level=2)
    table = doc.add_table(rows=4, cols=2)
    for row, (item, price) in zip(table.rows, (("Item", "Price"), ("Setup fee", "$40,000"),
                                                ("Per store per month", "$350"), ("Training", "Included"))):
        row.cells[0].text, row.cells[1].text = item, price
    doc.add_heading("Success measures", level=2)
    doc.add_paragraph("Produce waste down by a fifth in pilot stores against matched control stores, with no rise "
                      "in out-of-stocks.")
    buffer = io.BytesIO()
    doc.save(buffer)
    return buffer.getvalue()


def forge_script() -> str:
    """The `forge` console script beside this interpreter: the one this environment installed."""
    found = shutil.which("forge", path=str(Path(sys.executable).parent))
    if found is None:
        raise ForgeError(f"There is no forge command beside {sys.executable}; install Forge into this environment.")
    return found


def heaviest_imports(log: str, top: int = 5) -> dict:
    """From `-X importtime` output: every import's total, Forge's own modules' share (their own time, not what
    they import), and the packages that cost most (a package's time includes what it imports first)."""
    rows = [(int(m[1]), int(m[2]), m[3], m[4]) for m in
            re.finditer(r"^import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)$", log, re.MULTILINE)]
    total = sum(cumulative for _, cumulative, indent, _ in rows if len(indent) == 1)
    own = sum(self_us for self_us, _, _, name in rows if name.split(".")[0] == "pmforge")
    packages = sorted(((cumulative, name) for _, cumulative, _, name in rows
                       if "." not in name and name != "pmforge"), reverse=True)[:top]
    return {"total_s": round(total / 1e6, 3), "forge_own_s": round(own / 1e6, 3),
            "heaviest": [{"package": name, "s": round(us / 1e6, 3)} for us, name in packages]}


def bench_cli(turns: int = 8) -> dict:
    forge = forge_script()
    with scratch_folder("forge-bench-cli-") as scratch:
        env = offline_env(scratch / "projects")

        def run(*args: str, extra_env: dict[str, str] | None = None) -> tuple[float, subprocess.CompletedProcess]:
            started = time.perf_counter()
            # The folder is the working directory too: a developer's .env must not reach the commands.
            done = subprocess.run([forge, *args], cwd=scratch, env=env | (extra_env or {}), capture_output=True,
                                  text=True, stdin=subprocess.DEVNULL, timeout=600)
            return time.perf_counter() - started, done

        def setup(*args: str) -> float:
            seconds, done = run(*args)
            if done.returncode:
                raise ForgeError(f"forge {args[0]} failed while setting up the bench: {done.stderr.strip()[-300:]}")
            return seconds

        (scratch / "store-visits.md").write_text(REPORT, encoding="utf-8")
        (scratch / "pilot-proposal.docx").write_bytes(proposal_docx())
        new_s = setup("new", "Produce ordering")
        ingest_s = setup("ingest", PROJECT, "store-visits.md", "pilot-proposal.docx")

        each = []
        for n in range(turns):
            message = MESSAGES[n % len(MESSAGES)]
            seconds, done = run("chat", PROJECT, "-m", message)
            turn: dict[str, str | float | bool] = {"message": message, "s": round(seconds, 2),
                                                   "ok": done.returncode == 0}
            if done.returncode:
                turn["error"] = done.stderr.strip()[-300:]
            each.append(turn)
        help_s = statistics.median(run("--help")[0] for _ in range(3))
        # Untimed: the import timer slows the process it measures.
        _, timed = run("chat", PROJECT, "-m", MESSAGES[0], extra_env={"PYTHONPROFILEIMPORTTIME": "1"})
    times = [float(t["s"]) for t in each]
    return {
        "turns": turns,
        "turn_s": {"p50": round(statistics.median(times), 2), "max": round(max(times), 2)} if times else {},
        "each": each,
        "help_s": round(help_s, 2),
        "setup_s": {"new": round(new_s, 2), "ingest_two_files": round(ingest_s, 2)},
        "imports": heaviest_imports(timed.stderr) | {"message": MESSAGES[0]},
        "cpus": cpu_count(),
        "note": "whole-process wall time of `forge chat PROJECT -m MESSAGE`, one new process per turn, offline "
                "(local embedding model); the project holds a Markdown report and a DOCX",
    }
