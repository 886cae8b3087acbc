"""Envoy AI Gateway v1.1.0 (envoyproxy/ai-gateway, tag v1.1.0): the gen_ai metrics the serving
stack has it label with the caller, and where the stack's gateway PodMonitor scrapes them.

The caller attribute:

- manifests/charts/ai-gateway-helm/values.yaml: ``controller.metricsRequestHeaderAttributes``,
  default ``""``, "Comma-separated key-value pairs for mapping HTTP request headers to Otel
  metric attributes. Format: \"header1:label1,header2:label2\"";
  templates/deployment.yaml passes it as ``--metricsRequestHeaderAttributes=<value>`` only when
  it is not empty.
- cmd/controller/main.go refuses a value ``internalapi.ParseRequestHeaderAttributeMapping``
  cannot parse (internal/internalapi/internalapi.go: split on ``,``, each pair split on the
  first ``:``, both sides trimmed and non-empty); internal/controller/extproc_builder.go hands
  it to the external processor it injects into Envoy's pods as ``-metricsRequestHeaderAttributes``,
  and hashes it (``extProcConfigDigest``) into the annotation it stamps on Envoy's pod templates
  so that they roll when it changes: setting it rolls each gateway's Envoy pods once.
- cmd/extproc/mainlib/main.go: ``requestheaderattrs.ResolveAll`` (internal/requestheaderattrs/
  resolve.go) merges it over ``requestHeaderAttributes`` (unset here) into the mapping every
  ``metrics.NewMetricsFactory`` receives; internal/metrics/metrics_impl.go
  ``buildBaseAttributes`` adds, for each mapped header present on the request, the attribute
  named by the mapping with the header's value, and nothing for a header that is absent (a
  request nobody authenticated has no ``caller``).
- internal/metrics/genai.go: ``gen_ai.client.token.usage`` (a histogram of tokens, one
  observation per ``gen_ai.token.type``: ``input``, ``cached_input``, ``cache_creation_input``,
  ``output``, ``reasoning``) and ``gen_ai.server.request.duration`` (seconds, one per request),
  with ``gen_ai.operation.name``, ``gen_ai.provider.name``, ``gen_ai.original.model`` (the
  body's ``model`` before any override: internal/extproc/processor_impl.go
  ``SetOriginalModel``), ``gen_ai.request.model`` and ``gen_ai.response.model``.
- The Prometheus names: cmd/extproc/mainlib/main.go exports through
  ``go.opentelemetry.io/otel/exporters/prometheus`` (v0.66.0 in go.mod) with its defaults;
  examples/monitoring/grafana-dashboard.json queries ``gen_ai_client_token_usage_sum``
  ``{gen_ai_token_type=~"input|output"}`` and ``gen_ai_server_request_duration_seconds_count``
  by ``gen_ai_original_model``, ``gen_ai_response_model``, ``gen_ai_provider_name``: dots
  become underscores and seconds add ``_seconds``; a token count gets no unit suffix.

Where they are served:

- internal/controller/extproc_builder.go: the injected container names port ``aigw-admin``
  (``extProcAdminPort`` 1064), a native sidecar (``restartPolicy: Always``) when the controller
  runs it as one; cmd/extproc/mainlib/admin.go serves the Prometheus registry at ``/metrics``.
- examples/monitoring/monitoring.yaml scrapes Envoy Gateway's proxy pods
  (``app.kubernetes.io/component: proxy``, ``managed-by: envoy-gateway``) on the ports named
  ``metrics`` (``/stats/prometheus``) and ``aigw-admin`` (``/metrics``): the stack's gateway
  PodMonitor does the same.
- Not read at the pinned Prometheus version: Prometheus's pod discovery lists an init
  container's ports too (``__meta_kubernetes_pod_container_init``), so a sidecar's named port is
  matched like any container's.
- Only requests through an AIGatewayRoute (model-name routing) pass the external processor;
  path-form requests are not in these metrics (docs/design/shared-front-door.md, step 4).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from modelplane.compose.inferencecluster import components
from modelplane.compose.inferencegateway.callers import CALLER_HEADER
from tests.compose.inferencecluster.support import cluster, installing, manifest, releases
from tests.compose.inferencecluster.support import resources as composed

Obj = dict[str, Any]
ROOT = Path(__file__).resolve().parents[2]
CHART_VALUES = ROOT / "tests" / "upstream" / "values" / "ai-gateway-helm-v1.1.0.yaml"
OPERATIONS = ROOT / "docs" / "operations.md"
EXTPROC_ADMIN_PORT_NAME = "aigw-admin"
EXTPROC_METRICS_PATH = "/metrics"
GEN_AI_SERIES = {
    "gen_ai_client_token_usage_sum",
    "gen_ai_client_token_usage_count",
    "gen_ai_client_token_usage_bucket",
    "gen_ai_server_request_duration_seconds_count",
    "gen_ai_server_request_duration_seconds_sum",
    "gen_ai_server_request_duration_seconds_bucket",
}
GEN_AI_LABELS = {
    "gen_ai_operation_name",
    "gen_ai_provider_name",
    "gen_ai_original_model",
    "gen_ai_request_model",
    "gen_ai_response_model",
    "gen_ai_token_type",
}
TOKEN_TYPES = {"input", "cached_input", "cache_creation_input", "output", "reasoning"}
PROMETHEUS_LABEL = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")


def controller_values() -> Obj:
    release = releases(installing(cluster()))[components.AI_GATEWAY]
    controller: Obj = release["spec"]["forProvider"]["values"]["controller"]
    return controller


def parse_mapping(value: str) -> dict[str, str]:
    """internalapi.ParseRequestHeaderAttributeMapping at v1.1.0, refusals included."""
    result = {}
    for i, pair in enumerate(value.split(",")):
        header, sep, attribute = pair.strip().partition(":")
        assert sep, f"pair {i + 1} {pair!r} is not header:attribute"
        assert header.strip() and attribute.strip(), f"pair {i + 1} {pair!r} has an empty side"
        result[header.strip()] = attribute.strip()
    return result


def test_the_chart_reads_the_metrics_header_mapping_under_controller() -> None:
    defaults = yaml.safe_load(CHART_VALUES.read_text())
    assert defaults["controller"]["metricsRequestHeaderAttributes"] == ""
    assert "metricsRequestHeaderAttributes" in controller_values()


def test_the_mapping_parses_to_the_caller_header_and_one_attribute() -> None:
    mapping = parse_mapping(controller_values()["metricsRequestHeaderAttributes"])
    assert mapping == {CALLER_HEADER: components.CALLER_METRIC_LABEL}


def test_the_caller_attribute_is_a_prometheus_label_name_the_exporter_keeps_as_it_is() -> None:
    # A dot or dash would be rewritten to "_": the queries in the docs name the label as set.
    assert PROMETHEUS_LABEL.match(components.CALLER_METRIC_LABEL)


def test_the_gateway_monitor_scrapes_the_port_the_injected_processor_names() -> None:
    monitor = manifest(composed(installing(cluster()))[components.GATEWAY_MONITOR])
    endpoints = monitor["spec"]["podMetricsEndpoints"]
    assert {"port": EXTPROC_ADMIN_PORT_NAME, "path": EXTPROC_METRICS_PATH} in endpoints


def usage_section() -> str:
    text = OPERATIONS.read_text()
    start = text.index("### Usage and cost by caller")
    end = text.find("\n## ", start)
    return text[start : end if end != -1 else len(text)]


def test_the_usage_queries_name_only_series_the_ai_gateway_exports() -> None:
    named = set(re.findall(r"\bgen_ai_[a-z_]+", usage_section()))
    assert named & GEN_AI_SERIES
    assert named <= GEN_AI_SERIES | GEN_AI_LABELS


def test_the_usage_queries_group_by_the_caller_label() -> None:
    assert f"by ({components.CALLER_METRIC_LABEL}," in usage_section()


def test_the_usage_queries_count_token_types_the_ai_gateway_records() -> None:
    types = re.findall(r'gen_ai_token_type=~?"([a-z_|]+)"', usage_section())
    assert types
    assert {t for alternatives in types for t in alternatives.split("|")} <= TOKEN_TYPES
