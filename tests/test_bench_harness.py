"""The bench harness measures what it says: conversion floor, cold, unchanged, over gRPC."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import harness

from tests import standin


def steady_request():
    renderer = harness.Renderer(
        standin.registry(),
        [standin.replica(engines=3), standin.cluster(), standin.inference_class()],
    )
    [rendered] = renderer.render_all()
    return rendered.request


def test_the_harness_reports_every_way_as_a_ratio_to_the_floor():
    req = steady_request()
    timings = harness.in_process(standin.registry(), req)
    text = harness.report("replica", timings)
    assert [t.name for t in timings] == ["floor", "cold", "unchanged", "new tag"]
    assert all(t.seconds > 0 for t in timings)
    assert "1.00x floor" in text.splitlines()[1]


def test_the_steady_request_carries_the_answered_requirements():
    req = steady_request()
    assert sorted(req.required_resources) == ["class", "cluster"]
    assert req.required_resources["cluster"].items[0].resource["metadata"]["name"] == "c1"
