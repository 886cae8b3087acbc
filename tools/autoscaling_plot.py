"""Draws an autoscaling run's record (the CSV e2e/loadsim.py writes) as an SVG of three panels
sharing the time axis: the load against what the serving replicas can take, the replicas asked
for and serving, and the queue per replica against its target.

    uv run python tools/autoscaling_plot.py RUN.csv OUT.svg [--target 4] [--capacity 1]
"""

from __future__ import annotations

import argparse
import csv
from collections.abc import Sequence
from pathlib import Path

WIDTH, PANEL, MARGIN = 720, 150, 48
COLOURS = ("#1f77b4", "#d62728", "#2ca02c")


def _polyline(points: Sequence[tuple[float, float]], colour: str, dashed: bool = False) -> str:
    path = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
    dash = ' stroke-dasharray="5,4"' if dashed else ""
    return f'<polyline fill="none" stroke="{colour}" stroke-width="1.5"{dash} points="{path}"/>'


def _panel(
    index: int,
    title: str,
    t: Sequence[float],
    series: Sequence[tuple[str, Sequence[float], bool]],
) -> list[str]:
    top = MARGIN + index * (PANEL + MARGIN)
    span = max(t[-1], 1.0)
    high = max(max(values, default=0.0) for _, values, _ in series) * 1.1 or 1.0
    plot_width = WIDTH - 2 * MARGIN

    def xy(x: float, y: float) -> tuple[float, float]:
        return MARGIN + x / span * plot_width, top + PANEL - y / high * PANEL

    out = [
        f'<rect x="{MARGIN}" y="{top}" width="{plot_width}" height="{PANEL}" fill="none" '
        'stroke="#999"/>',
        f'<text x="{MARGIN}" y="{top - 6}" font-size="12">{title} (top: {high:.3g})</text>',
    ]
    for i, (name, values, dashed) in enumerate(series):
        colour = COLOURS[i % len(COLOURS)]
        out.append(_polyline([xy(x, y) for x, y in zip(t, values, strict=True)], colour, dashed))
        out.append(
            f'<text x="{WIDTH - MARGIN - 150}" y="{top + 14 + 14 * i}" font-size="11" '
            f'fill="{colour}">{name}</text>'
        )
    return out


def draw(rows: Sequence[dict[str, str]], target: float, capacity: float) -> str:
    t = [float(r["t"]) for r in rows]
    number = {key: [float(r[key]) for r in rows] for key in rows[0] if key != "t"}
    panels = [
        (
            "load, requests/s",
            [
                ("arriving", number["rate"], False),
                ("servable", [s * capacity for s in number["serving"]], True),
            ],
        ),
        (
            "replicas",
            [
                ("asked (spec.replicas)", number["desired"], False),
                ("serving", number["serving"], True),
            ],
        ),
        (
            "waiting requests per replica",
            [
                ("waiting", number["waiting_per_replica"], False),
                ("target", [target] * len(t), True),
            ],
        ),
    ]
    height = MARGIN + len(panels) * (PANEL + MARGIN)
    body = [
        line for i, (title, series) in enumerate(panels) for line in _panel(i, title, t, series)
    ]
    axis = f'<text x="{WIDTH / 2 - 40}" y="{height - 14}" font-size="12">time, {t[-1]:.0f} s</text>'
    return "\n".join(
        [
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
            'font-family="sans-serif">',
            '<rect width="100%" height="100%" fill="white"/>',
            *body,
            axis,
            "</svg>",
        ]
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("record", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--target", type=float, default=4.0)
    parser.add_argument("--capacity", type=float, default=1.0)
    args = parser.parse_args(argv)
    with args.record.open() as f:
        rows = list(csv.DictReader(f))
    args.out.write_text(draw(rows, args.target, args.capacity) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
