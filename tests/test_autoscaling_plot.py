"""tools/autoscaling_plot.py: an autoscaling run's record drawn as three panels."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from tools.autoscaling_plot import draw

SVG = "{http://www.w3.org/2000/svg}"
ROWS = [
    {"t": "0", "rate": "0.5", "desired": "1", "serving": "1", "waiting_per_replica": "0"},
    {"t": "10", "rate": "2.5", "desired": "3", "serving": "1", "waiting_per_replica": "6"},
    {"t": "20", "rate": "0", "desired": "1", "serving": "3", "waiting_per_replica": "0"},
]


def lines() -> list[list[tuple[float, float]]]:
    root = ET.fromstring(draw(ROWS, target=4, capacity=1))
    return [
        [tuple(map(float, p.split(","))) for p in line.attrib["points"].split()]
        for line in root.iter(f"{SVG}polyline")
    ]


def test_each_panel_draws_two_lines_of_one_point_per_row() -> None:
    assert [len(points) for points in lines()] == [3] * 6


def test_the_lines_share_the_time_axis() -> None:
    xs = {tuple(x for x, _ in points) for points in lines()}
    assert len(xs) == 1


def test_more_replicas_are_drawn_higher() -> None:
    asked = lines()[2]
    assert asked[1][1] < asked[0][1]
