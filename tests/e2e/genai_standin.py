"""The stand-in for Envoy AI Gateway v1.1.0's gen_ai exposition that the usage modules let the
tier's Prometheus scrape, and what they ask Prometheus of it.

The same series and labels as the external processor's ``/metrics`` (port ``aigw-admin``), not
its code: tests/conformance/test_envoy_ai_gateway_metrics.py cites where v1.1.0 defines them
(internal/metrics/genai.go) and how go.opentelemetry.io/otel/exporters/prometheus names them.
"""

from __future__ import annotations

import json
import urllib.parse
import urllib.request
from collections.abc import Callable
from typing import Any

from e2e import processes

TOKENS = "gen_ai_client_token_usage"
REQUESTS = "gen_ai_server_request_duration_seconds"
SCRAPES_BEFORE = 3
SCRAPES_IN_ALL = 15
# increase() extrapolates the last scrape to the query's time by at most 1.1 average scrape
# intervals (promql/functions.go extrapolatedRate), over samples spanning at least
# SCRAPES_IN_ALL - 1 intervals; from a first sample of 0 it does not extrapolate backwards.
EXTRAPOLATED = 1 + 1.1 / (SCRAPES_IN_ALL - 1)


def labels(caller: str | None, model: str, **more: str) -> dict[str, str]:
    """A series' labels; the caller None is a request through a gateway without auth (the
    series has no caller label)."""
    out = {
        "gen_ai_operation_name": "chat",
        "gen_ai_original_model": model,
        "gen_ai_provider_name": "openai",
        "gen_ai_request_model": model,
        "gen_ai_response_model": model.split("/")[1],
        **more,
    }
    return {**out, "caller": caller} if caller else out


def histogram(name: str, labelled: dict[str, str], count: int, total: float) -> list[str]:
    """One histogram series in the text format: its one bucket, sum and count."""

    def series(suffix: str, extra: dict[str, str] | None = None) -> str:
        pairs = ",".join(f'{k}="{v}"' for k, v in sorted({**labelled, **(extra or {})}.items()))
        return f"{name}{suffix}{{{pairs}}}"

    return [
        f"{series('_bucket', {'le': '+Inf'})} {count}",
        f"{series('_sum')} {total}",
        f"{series('_count')} {count}",
    ]


def instant(url: str, query: str) -> list[dict[str, Any]]:
    """The instant vector ``query`` answers now on the Prometheus at ``url``."""
    arguments = urllib.parse.urlencode({"query": query})
    with urllib.request.urlopen(f"{url}/api/v1/query?{arguments}", timeout=5) as answer:
        result: list[dict[str, Any]] = json.load(answer)["data"]["result"]
        return result


def scrapes(url: str, caller: str) -> int:
    """How many times Prometheus has scraped ``caller``'s token series."""
    found = instant(url, f'count_over_time({TOKENS}_sum{{caller="{caller}"}}[1h])')
    return int(max((float(r["value"][1]) for r in found), default=0))


def highest(url: str, caller: str) -> float | None:
    """The highest of ``caller``'s token counters as last scraped (None: none scraped)."""
    found = instant(url, f'max({TOKENS}_sum{{caller="{caller}"}})')
    return float(found[0]["value"][1]) if found else None


def scrape_a_rise(url: str, caller: str, raise_counters: Callable[[], None], to: float) -> None:
    """Prometheus scrapes the counters at 0, then raised (``caller``'s highest reads ``to``), for
    ``SCRAPES_IN_ALL`` scrapes in all: ``increase`` over the window then reads what was raised."""
    processes.wait_until(
        lambda: scrapes(url, caller) >= SCRAPES_BEFORE, 60, "the stand-in's zero counters scraped"
    )
    raise_counters()
    processes.wait_until(lambda: highest(url, caller) == to, 60, "the raised counters scraped")
    processes.wait_until(
        lambda: scrapes(url, caller) >= SCRAPES_IN_ALL, 60, f"{SCRAPES_IN_ALL} scrapes in all"
    )
