"""The series the autoscaling queries read exist, as the kind the queries assume, in every engine
release the examples pin (vLLM v0.11.0, v0.12.0, v0.23.0; SGLang v0.5.2, v0.5.5).

The facts, and the file and release each was read from, are in ``tests/conformance/
engine_metrics.py`` (vLLM ``vllm/v1/metrics/loggers.py``, SGLang
``python/sglang/srt/metrics/collector.py``). The queries are those
``modelplane.compose.modeldeployment.autoscaling`` composes (docs/design/autoscaling.md).
"""

from __future__ import annotations

import re
from dataclasses import fields
from pathlib import Path

import pytest

from modelplane.compose.modeldeployment.autoscaling import ENGINES, EngineMetrics, triggers
from tests.conformance.engine_metrics import IMAGES, RELEASES, Kind, Release, family

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
ROLES = {
    "waiting": Kind.GAUGE,
    "kv_cache": Kind.GAUGE,
    "ttft": Kind.HISTOGRAM,
    "itl": Kind.HISTOGRAM,
}
"""What each EngineMetrics field's query takes it for: a gauge summed or averaged, or a
histogram whose ``_bucket`` series ``histogram_quantile`` reads."""
TARGETS = {
    "waitingRequestsPerReplica": 4,
    "kvCacheUtilization": 80,
    "timeToFirstToken": {"p90": "800ms"},
    "interTokenLatency": {"p90": "60ms"},
}


def _pinned() -> set[tuple[str, str]]:
    """(family, tag) of every engine image an example runs."""
    images = "|".join(re.escape(i) for i in IMAGES)
    pattern = re.compile(rf"image:\s*[\"']?({images}):([\w.\-]+)")
    found = set()
    for path in EXAMPLES.rglob("*.yaml"):
        for image, tag in pattern.findall(path.read_text()):
            found.add((IMAGES[image], tag))
    return found


def _releases() -> list[Release]:
    return [r for by_tag in RELEASES.values() for r in by_tag.values()]


def _engine(release: Release) -> EngineMetrics:
    """The ENGINES entry whose series ``release`` exports."""
    fam = next(f for f, by_tag in RELEASES.items() if release in by_tag.values())
    [engine] = [e for e in ENGINES if family(e.waiting) == fam]
    return engine


def test_the_examples_pin_engine_releases() -> None:
    # Guards the next test against a pattern that silently matches nothing.
    assert {fam for fam, _ in _pinned()} == set(IMAGES.values())


def test_every_engine_release_an_example_pins_is_recorded() -> None:
    recorded = {(fam, tag) for fam, by_tag in RELEASES.items() for tag in by_tag}
    assert _pinned() - recorded == set()


def test_each_engine_family_reads_only_its_own_series() -> None:
    for engine in ENGINES:
        names = [getattr(engine, f.name) for f in fields(engine)]
        assert {family(n) for n in names} == {family(engine.waiting)}, engine


def test_every_recorded_engine_family_is_queried() -> None:
    assert {family(e.waiting) for e in ENGINES} == set(RELEASES)


@pytest.mark.parametrize("release", _releases(), ids=lambda r: f"{r.repository}@{r.tag}")
@pytest.mark.parametrize("role", ROLES)
def test_the_queried_series_is_exported_by_default_as_the_kind_the_query_assumes(
    release: Release, role: str
) -> None:
    name = getattr(_engine(release), role)
    exported = release.series.get(name)
    assert exported is not None, f"{name} is not declared in {release.path} at {release.tag}"
    assert exported.by_default, f"{name} needs a flag at {release.tag}"
    assert exported.kind is ROLES[role]


@pytest.mark.parametrize("release", _releases(), ids=lambda r: f"{r.repository}@{r.tag}")
def test_the_kv_cache_gauge_is_a_fraction(release: Release) -> None:
    assert release.series[_engine(release).kv_cache].fraction


def test_the_kv_cache_threshold_is_the_percentage_as_a_fraction() -> None:
    # Both gauges read 1 when the cache is full, so 80 percent is 0.8 of the averaged gauge.
    [kv] = [t for t in triggers(TARGETS, "ml-team", "qwen") if t.name == "kv-cache"]
    assert kv.threshold == pytest.approx(0.8)


@pytest.mark.parametrize("trigger", ["ttft-p90", "itl-p90"])
def test_a_latency_query_reads_every_familys_histogram_buckets(trigger: str) -> None:
    role = {"ttft-p90": "ttft", "itl-p90": "itl"}[trigger]
    [query] = [t.query for t in triggers(TARGETS, "ml-team", "qwen") if t.name == trigger]
    series = set(re.findall(r"([a-z_]+:[a-z_]+)\{", query))
    # The waiting gauges count the replicas the p90 is multiplied by.
    counted = {e.waiting for e in ENGINES}
    assert series - counted == {f"{getattr(e, role)}_bucket" for e in ENGINES}


@pytest.mark.parametrize("trigger", ["waiting", "kv-cache"])
def test_a_gauge_query_reads_every_familys_gauge_itself(trigger: str) -> None:
    role = {"waiting": "waiting", "kv-cache": "kv_cache"}[trigger]
    [query] = [t.query for t in triggers(TARGETS, "ml-team", "qwen") if t.name == trigger]
    series = set(re.findall(r"([a-z_]+:[a-z_]+)\{", query))
    assert series == {getattr(e, role) for e in ENGINES}
