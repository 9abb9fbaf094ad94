"""A small PNG line chart drawn with Pillow (already installed with Streamlit; no plotting library)."""

from __future__ import annotations

from pathlib import Path
from typing import Mapping, Sequence

from PIL import Image, ImageDraw, ImageFont

COLOURS = [(220, 80, 40), (40, 110, 200), (120, 120, 120), (40, 160, 90)]
W, H, LEFT, RIGHT, TOP, BOTTOM = 1100, 560, 90, 30, 60, 70


def _nice_step(span: float) -> float:
    raw = span / 6
    magnitude = 10 ** (len(str(int(raw))) - 1) if raw >= 1 else 1
    for factor in (1, 2, 2.5, 5, 10):
        if raw <= factor * magnitude:
            return factor * magnitude
    return 10 * magnitude


def line_chart(path: Path, series: Mapping[str, Sequence[float]], title: str, budget: float | None = None) -> None:
    img = Image.new("RGB", (W, H), "white")
    draw = ImageDraw.Draw(img)
    font = ImageFont.load_default()
    n = max(len(v) for v in series.values())
    top = max(max(v) for v in series.values())
    if budget:
        top = max(top, budget)
    step = _nice_step(top)
    y_max = step * (int(top / step) + 1)
    plot_w, plot_h = W - LEFT - RIGHT, H - TOP - BOTTOM

    def xy(i: int, v: float) -> tuple[float, float]:
        return LEFT + plot_w * (i / max(n - 1, 1)), TOP + plot_h * (1 - v / y_max)

    draw.text((LEFT, 20), title, fill="black", font=font)
    draw.line([(LEFT, TOP), (LEFT, TOP + plot_h), (LEFT + plot_w, TOP + plot_h)], fill="black")
    y = 0.0
    while y <= y_max:
        _, py = xy(0, y)
        draw.line([(LEFT - 5, py), (LEFT + plot_w, py)], fill=(230, 230, 230))
        draw.text((10, py - 6), f"{int(y):,}", fill="black", font=font)
        y += step
    for t in sorted({1, *range(0, n + 1, max(n // 10, 1))} - {0}):
        px, _ = xy(t - 1, 0)
        draw.text((px - 8, TOP + plot_h + 8), str(t), fill="black", font=font)
    draw.text((LEFT + plot_w // 2 - 20, H - 30), "turn", fill="black", font=font)
    if budget:
        _, by = xy(0, budget)
        for x in range(LEFT, LEFT + plot_w, 12):
            draw.line([(x, by), (x + 6, by)], fill=(200, 0, 0))
        draw.text((LEFT + plot_w - 170, by - 16), f"Phase B budget {int(budget):,}", fill=(200, 0, 0), font=font)
    for k, (name, values) in enumerate(series.items()):
        colour = COLOURS[k % len(COLOURS)]
        points = [xy(i, v) for i, v in enumerate(values)]
        if len(points) > 1:
            draw.line(points, fill=colour, width=2)
        draw.rectangle([LEFT + 15, TOP + 10 + 18 * k, LEFT + 27, TOP + 22 + 18 * k], fill=colour)
        draw.text((LEFT + 33, TOP + 10 + 18 * k), name, fill="black", font=font)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    img.save(path)
