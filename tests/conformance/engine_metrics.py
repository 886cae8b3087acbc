"""The Prometheus series vLLM and SGLang export at the releases the examples pin, as data.

Each fact names the repository, release and file it was read from. The files were read from the
releases as published (the github snapshots of both repositories are larger than the source
reader takes): vLLM from its source distribution on PyPI (``vllm-<version>.tar.gz``, the
repository's tree), SGLang from its wheel on PyPI (``sglang-<version>-py3-none-any.whl``, whose
``sglang/`` is the repository's ``python/sglang/``).

vLLM, ``vllm/v1/metrics/loggers.py`` (the V1 engine's ``PrometheusStatLogger``): its
``_gauge_cls`` and ``_histogram_cls`` are prometheus_client's ``Gauge`` and ``Histogram``.
At v0.11.0:

- ``vllm:num_requests_waiting``: ``gauge_scheduler_waiting = self._gauge_cls(name=...,
  documentation="Number of requests waiting to be processed.")``;
- ``vllm:kv_cache_usage_perc``: ``documentation="KV-cache usage. 1 means 100 percent usage."``
  (a fraction in [0, 1], set from ``scheduler_stats.kv_cache_usage``); the older
  ``vllm:gpu_cache_usage_perc`` is declared only ``if self.show_hidden_metrics`` ("Deprecated in
  0.9.2 - Renamed as vllm:kv_cache_usage_perc ... TODO: remove in 0.12.0"), and is gone at
  v0.12.0;
- ``vllm:time_to_first_token_seconds`` and ``vllm:inter_token_latency_seconds``:
  ``self._histogram_cls(...)``; ``vllm:time_per_output_token_seconds`` is still exported at
  v0.11.0 ("Deprecated in 0.11 - Renamed as vllm:inter_token_latency_seconds"), only with
  ``show_hidden_metrics`` at v0.12.0, and not declared at v0.23.0.

SGLang, ``python/sglang/srt/metrics/collector.py``: prometheus_client's ``Gauge`` and
``Histogram`` (``from prometheus_client import Counter, Gauge, Histogram``).
``SchedulerMetricsCollector`` declares ``sglang:token_usage`` (``Gauge``, "The token usage.",
the scheduler's ``num_used / max_total_num_tokens``, a fraction in [0, 1]:
``python/sglang/srt/managers/scheduler.py`` and ``scheduler_metrics_mixin.py``) and
``sglang:num_queue_reqs`` (``Gauge``, "The number of requests in the waiting queue.");
``TokenizerMetricsCollector`` declares the ``Histogram``s ``sglang:time_to_first_token_seconds``
and ``sglang:inter_token_latency_seconds``. The same at v0.5.2 and v0.5.5. These are exported
only with ``--enable-metrics`` (tests/conformance/test_sglang.py).

A prometheus_client ``Histogram`` named ``n`` is scraped as ``n_bucket``, ``n_sum`` and
``n_count``; a ``Gauge`` as ``n``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Kind(Enum):
    GAUGE = "gauge"
    HISTOGRAM = "histogram"


@dataclass(frozen=True)
class Exported:
    """One series an engine declares: its kind, and whether it is exported without flags."""

    kind: Kind
    by_default: bool = True
    fraction: bool = False
    """A gauge whose value lies in [0, 1] (1 is full)."""


@dataclass(frozen=True)
class Release:
    """What one release of an engine exports, and where that was read."""

    repository: str
    tag: str
    path: str
    series: dict[str, Exported]


GAUGE = Exported(Kind.GAUGE)
FRACTION = Exported(Kind.GAUGE, fraction=True)
HISTOGRAM = Exported(Kind.HISTOGRAM)
HIDDEN_GAUGE = Exported(Kind.GAUGE, by_default=False, fraction=True)
HIDDEN_HISTOGRAM = Exported(Kind.HISTOGRAM, by_default=False)

VLLM = "vllm-project/vllm"
VLLM_LOGGERS = "vllm/v1/metrics/loggers.py"
SGLANG = "sgl-project/sglang"
SGLANG_COLLECTOR = "python/sglang/srt/metrics/collector.py"

_SGLANG_SERIES = {
    "sglang:num_queue_reqs": GAUGE,
    "sglang:token_usage": FRACTION,
    "sglang:time_to_first_token_seconds": HISTOGRAM,
    "sglang:inter_token_latency_seconds": HISTOGRAM,
}

RELEASES: dict[str, dict[str, Release]] = {
    "vllm": {
        "v0.11.0": Release(
            VLLM,
            "v0.11.0",
            VLLM_LOGGERS,
            {
                "vllm:num_requests_waiting": GAUGE,
                "vllm:kv_cache_usage_perc": FRACTION,
                "vllm:gpu_cache_usage_perc": HIDDEN_GAUGE,
                "vllm:time_to_first_token_seconds": HISTOGRAM,
                "vllm:inter_token_latency_seconds": HISTOGRAM,
                "vllm:time_per_output_token_seconds": HISTOGRAM,
            },
        ),
        "v0.12.0": Release(
            VLLM,
            "v0.12.0",
            VLLM_LOGGERS,
            {
                "vllm:num_requests_waiting": GAUGE,
                "vllm:kv_cache_usage_perc": FRACTION,
                "vllm:time_to_first_token_seconds": HISTOGRAM,
                "vllm:inter_token_latency_seconds": HISTOGRAM,
                "vllm:time_per_output_token_seconds": HIDDEN_HISTOGRAM,
            },
        ),
        "v0.23.0": Release(
            VLLM,
            "v0.23.0",
            VLLM_LOGGERS,
            {
                "vllm:num_requests_waiting": GAUGE,
                "vllm:kv_cache_usage_perc": FRACTION,
                "vllm:time_to_first_token_seconds": HISTOGRAM,
                "vllm:inter_token_latency_seconds": HISTOGRAM,
            },
        ),
    },
    "sglang": {
        tag: Release(SGLANG, tag, SGLANG_COLLECTOR, dict(_SGLANG_SERIES))
        for tag in ("v0.5.2", "v0.5.5")
    },
}
"""Per engine family (the prefix of its series' names), per release tag."""

IMAGES = {"vllm/vllm-openai": "vllm", "lmsysorg/sglang": "sglang"}
"""The container images the examples run each engine family from; the image tag is the release."""


def family(series: str) -> str:
    """The engine family a series belongs to: ``vllm:x`` is vLLM's."""
    return series.split(":", 1)[0]
