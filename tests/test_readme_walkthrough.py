"""The README's command-line walkthrough runs as written: each command of its block goes through the real
./scripts/forge, offline, in a throwaway projects folder, and what Forge prints matches what the README shows.

In the README's output block a line that is only "…" stands for lines left out, a "…" inside a line for text
left out of it; every other line must be printed, in order, with no unshown line between (blank lines aside).
"""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

from forge_bench.bench.browser import offline_env

ROOT = Path(__file__).resolve().parents[1]
BLOCK = re.compile(r"<!-- begin: forge cli walkthrough -->\n(?P<body>.*?)\n<!-- end: forge cli walkthrough -->", re.S)
FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.S | re.M)
GAP = "…"


def walkthrough() -> tuple[list[str], list[str], str]:
    """(the commands, the output lines the README shows, the README after the block)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    found = BLOCK.search(readme)
    assert found, "README.md has no <!-- begin: forge cli walkthrough --> block"
    fences = FENCE.findall(found["body"])
    assert [lang for lang, _ in fences] == ["bash", ""], "the block holds a bash block of commands, then the output"
    commands = [line for line in fences[0][1].splitlines() if line.strip()]
    return commands, fences[1][1].splitlines(), readme[found.end():]


def mismatch(shown: list[str], printed: list[str]) -> str | None:
    """Why `printed` is not what `shown` shows (None when it is)."""
    printed = [line.rstrip() for line in printed if line.strip()]
    at, gap = 0, False
    for line in (line.rstrip() for line in shown if line.strip()):
        if line == GAP:
            gap = True
            continue
        pattern = re.compile(".*".join(map(re.escape, line.split(GAP))))
        candidates = range(at, len(printed)) if gap else range(at, min(at + 1, len(printed)))
        hit = next((i for i in candidates if pattern.fullmatch(printed[i])), None)
        if hit is None:
            where = printed[at] if at < len(printed) else "(nothing more)"
            return f"the README shows\n  {line}\nbut Forge printed {'none such after' if gap else 'instead'}\n  {where}"
        at, gap = hit + 1, False
    if not gap and at < len(printed):
        return "Forge printed lines the README leaves out without a '…':\n  " + "\n  ".join(printed[at:at + 3])
    return None


def test_the_readme_walkthrough_prints_what_the_readme_shows(isolated_env):
    commands, shown, after = walkthrough()
    projects = isolated_env / "projects"
    env = offline_env(projects)
    printed: list[str] = []
    for command in commands:
        words = shlex.split(command)
        assert words[0] == "./scripts/forge", f"not a forge command: {command}"
        # A newcomer runs them in the clone; here the folder is a temp one (no .env, no logs in the repo), so
        # the script and the repo's files are named from the clone.
        args = [str(ROOT / w) if "/" in w and (ROOT / w).exists() else w for w in words[1:]]
        done = subprocess.run([str(ROOT / "scripts" / "forge"), *args], cwd=isolated_env, env=env,
                              capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=600)
        assert done.returncode == 0, f"{command}\nexited {done.returncode}: {done.stderr}"
        printed += done.stdout.replace(str(projects), "projects").splitlines()  # as the default folder prints
    problem = mismatch(shown, printed)
    assert problem is None, f"{problem}\n\nWhat Forge printed:\n" + "\n".join(printed)

    # The prose after the block quotes the brief the last command wrote.
    assert commands[-1].startswith("./scripts/forge brief "), "the walkthrough ends by writing the brief"
    brief = (isolated_env / printed[-1]).read_text(encoding="utf-8")
    quoted = re.search(r'its problem statement reads\s+"([^"]+)"', after)
    assert quoted, "the README no longer quotes the brief's problem statement"
    assert f"## Problem statement\n\n{' '.join(quoted[1].split())}\n" in brief, brief


def test_gaps_and_elisions_are_the_only_leeway():
    printed = ["a", "b", "c 123 d"]
    assert mismatch(["a", "b", "c … d"], printed) is None
    assert mismatch(["a", "…", "c … d"], printed) is None
    assert mismatch(["a", "c … d"], printed)  # b is left out without a "…"
    assert mismatch(["a", "b"], printed)  # so is the last line
    assert mismatch(["b", "a", "…"], printed)  # out of order
