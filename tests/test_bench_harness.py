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


def test_interleaved_samples_report_medians_as_ratios_to_the_floor_and_judge_the_targets():
    samples = harness.interleaved(
        [
            ("floor", lambda: sum(range(200))),
            ("cold", lambda: sum(range(400))),
            ("unchanged", lambda: None),
        ],
        repeat=3,
    )
    assert [s.name for s in samples] == ["floor", "cold", "unchanged"]
    assert all(0 < s.fastest <= s.median for s in samples)
    text = harness.spread_report("case", samples, target_ms=1000.0)
    assert "1.00x" in text.splitlines()[2]
    assert text.splitlines()[-1].startswith("  target cold <= 1000.0 ms: median met")
    tight = harness.spread_report("case", samples, target_ms=1e-9)
    assert "median NOT met" in tight.splitlines()[-1]


def test_the_sdk_helper_conversion_writes_the_same_desired_resources():
    req = steady_request()
    rsp = harness.FunctionRunner(standin.registry()).run(req)
    out = harness.sdk_conversion(req, rsp)()
    assert {k: r.resource for k, r in out.desired.resources.items()} == {
        k: r.resource for k, r in rsp.desired.resources.items()
    }


def test_the_instruction_bench_workers_make_the_calls_they_count():
    import bench_instructions

    seed = Path(__file__).resolve().parents[1] / "examples" / "replica-seed"
    cold = bench_instructions.calls_for("cold", seed)()
    assert len(cold.desired.resources) == 25  # 14, and the 11 priority objectives
    for mode in bench_instructions.MODES:
        bench_instructions.calls_for(mode, seed)()
