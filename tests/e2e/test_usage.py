"""``modelplane usage`` asking a real Prometheus (v3.4.2, built from its Go module by
``e2e.build``) that scraped the gateway's usage counters between two states.

No control plane: the command reads Prometheus only, so this module starts Prometheus alone
(``e2e.autoscaler.start_prometheus_in``) and never the ``e2e`` fixture.

The scraped exposition is a stand-in for the one Envoy AI Gateway v1.1.0's external processor
serves at ``/metrics`` (port ``aigw-admin``): the same series and labels, not its code. The
names are the ones tests/conformance/test_envoy_ai_gateway_metrics.py cites:
``gen_ai.client.token.usage`` and ``gen_ai.server.request.duration`` are defined in
internal/metrics/genai.go at the v1.1.0 tag, with ``gen_ai.token.type``,
``gen_ai.original.model``, ``gen_ai.request.model``, ``gen_ai.response.model``,
``gen_ai.operation.name`` and ``gen_ai.provider.name``, exported by
go.opentelemetry.io/otel/exporters/prometheus as ``gen_ai_client_token_usage`` and
``gen_ai_server_request_duration_seconds`` histograms; ``caller`` is the attribute the stack's
``metricsRequestHeaderAttributes`` maps the caller header to.
"""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import pytest

from e2e import autoscaler, build, processes
from e2e.exposition import serve as serve_text
from tests.e2e import genai_standin as standin
from tests.e2e.conftest import ROOT, modelplane

pytestmark = pytest.mark.e2e

SERVICE = "ml-team/qwen3-8b"
OTHER = "ml-team/llama-8b"
# The counters after the raise: (caller, model, input tokens, output tokens, requests). The
# caller None is a request through a gateway without auth (the series has no caller label).
RAISED: tuple[tuple[str | None, str, int, int, int], ...] = (
    ("search", SERVICE, 12_000, 3_000, 40),
    ("ads", SERVICE, 4_000, 1_000, 10),
    ("search", OTHER, 2_000, 500, 5),
    (None, OTHER, 600, 150, 3),
)


class Exposition:
    """The AI Gateway's gen_ai histograms (stand-in): every counter 0 until ``raised``, then
    as ``RAISED`` says."""

    def __init__(self) -> None:
        self.raised = False
        self._server: http.server.ThreadingHTTPServer | None = None

    def text(self) -> str:
        # A metric family's lines stay together, after its TYPE line, as the text format asks.
        tokens, requests = ["# TYPE gen_ai_client_token_usage histogram"], []
        for caller, model, given, answered, requested in RAISED:
            count = requested if self.raised else 0
            for kind, total in (("input", given), ("output", answered)):
                labels = standin.labels(caller, model, gen_ai_token_type=kind)
                total = total if self.raised else 0
                tokens += standin.histogram(standin.TOKENS, labels, count, total)
            labels = standin.labels(caller, model)
            requests += standin.histogram(standin.REQUESTS, labels, count, 0.5 * count)
        family = "# TYPE gen_ai_server_request_duration_seconds histogram"
        return "\n".join([*tokens, family, *requests]) + "\n"

    def rise(self) -> None:
        self.raised = True

    def serve(self) -> int:
        self._server = serve_text(self.text)
        return int(self._server.server_address[1])

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()


@pytest.fixture(scope="module")
def prometheus() -> Iterator[str]:
    binary = build.build_all(["prometheus"])["prometheus"] / "prometheus"
    run = build.cache_root() / "runs" / time.strftime("usage-%Y%m%d-%H%M%S")
    run.mkdir(parents=True)
    print(f"\nusage run directory (prometheus.log): {run}")
    exposition = Exposition()
    port = exposition.serve()
    try:
        url = autoscaler.start_prometheus_in(run, binary, [f"127.0.0.1:{port}"]).url
        standin.scrape_a_rise(url, "search", exposition.rise, max(r[2] for r in RAISED))
        yield url
    finally:
        processes.stop(run, "prometheus")
        exposition.stop()


def usage_json(prometheus: str, *args: str) -> dict[str, Any]:
    done = modelplane("usage", *args, "--prometheus", prometheus, "-o", "json")
    assert done.returncode == 0, done.stderr
    doc: dict[str, Any] = json.loads(done.stdout)
    return doc


def row(doc: dict[str, Any], caller: str | None, model: str) -> dict[str, Any]:
    (found,) = [r for r in doc["rows"] if r["caller"] == caller and r["model"] == model]
    return found


def test_the_callers_tokens_are_what_the_gateway_counted(prometheus: str) -> None:
    search = row(usage_json(prometheus, SERVICE), "search", SERVICE)
    assert 12_000 <= search["inputTokens"] <= 12_000 * standin.EXTRAPOLATED
    assert 3_000 <= search["outputTokens"] <= 3_000 * standin.EXTRAPOLATED
    assert 40 <= search["requests"] <= 40 * standin.EXTRAPOLATED


def test_callers_scraped_together_keep_their_exact_proportion(prometheus: str) -> None:
    doc = usage_json(prometheus, SERVICE)
    search, ads = row(doc, "search", SERVICE), row(doc, "ads", SERVICE)
    assert search["inputTokens"] / ads["inputTokens"] == pytest.approx(3.0)
    assert search["outputTokens"] / ads["outputTokens"] == pytest.approx(3.0)


def test_one_service_shows_only_its_own_model(prometheus: str) -> None:
    doc = usage_json(prometheus, SERVICE)
    assert {(r["caller"], r["model"]) for r in doc["rows"]} == {
        ("search", SERVICE),
        ("ads", SERVICE),
    }


def test_all_shows_every_service_and_the_traffic_without_a_caller(prometheus: str) -> None:
    doc = usage_json(prometheus, "--all")
    assert {(r["caller"], r["model"]) for r in doc["rows"]} == {
        (caller, model) for caller, model, *_ in RAISED
    }


def test_the_table_reads_the_callers_tokens(prometheus: str) -> None:
    done = modelplane("usage", SERVICE, "--prometheus", prometheus)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith(f"ModelService/{SERVICE}: usage over the last 1h ({prometheus}")
    assert [line.split()[:2] for line in lines[2:4]] == [["search", SERVICE], ["ads", SERVICE]]


def test_a_compound_window_is_one_prometheus_parses(prometheus: str) -> None:
    search = row(usage_json(prometheus, SERVICE, "--window", "1d12h"), "search", SERVICE)
    assert 12_000 <= search["inputTokens"] <= 12_000 * standin.EXTRAPOLATED


def test_the_environment_variable_names_the_prometheus(prometheus: str) -> None:
    done = _run_with_environment(prometheus, SERVICE)
    assert done.returncode == 0, done.stderr
    assert "search" in done.stdout


def test_a_service_nobody_called_is_no_usage_recorded(prometheus: str) -> None:
    done = modelplane("usage", "ml-team/unused", "--prometheus", prometheus)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("no usage recorded for ModelService/ml-team/unused")


def _run_with_environment(prometheus: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["uv", "run", "modelplane", "usage", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "MODELPLANE_PROMETHEUS": prometheus},
    )
