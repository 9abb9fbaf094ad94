"""Small helpers shared by the benchmarks."""

from __future__ import annotations

import statistics


def spread(values: list[float]) -> dict:
    if not values:
        return {}
    return {"min": min(values), "median": statistics.median(values), "max": max(values)}
