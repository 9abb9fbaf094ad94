"""Small helpers shared by the benchmarks."""

from __future__ import annotations

import os
import shutil
import statistics
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Sequence


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def spread(values: Sequence[float]) -> dict:
    if not values:
        return {}
    return {"min": min(values), "median": statistics.median(values), "max": max(values)}


@contextmanager
def scratch_folder(prefix: str) -> Iterator[Path]:
    """A throwaway folder for one benchmark's projects, removed afterwards (a bench leaves nothing behind)."""
    root = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


@contextmanager
def scratch_projects(prefix: str) -> Iterator[Path]:
    """`scratch_folder` as the projects folder, set in the environment, not just in settings, because the
    app under AppTest reads its settings from there."""
    from pmforge.core import settings as config

    previous = os.environ.get("FORGE_PROJECTS_DIR")
    with scratch_folder(prefix) as root:
        os.environ["FORGE_PROJECTS_DIR"] = str(root)
        config.get_settings.cache_clear()
        try:
            yield root
        finally:
            if previous is None:
                os.environ.pop("FORGE_PROJECTS_DIR", None)
            else:
                os.environ["FORGE_PROJECTS_DIR"] = previous
            config.get_settings.cache_clear()
