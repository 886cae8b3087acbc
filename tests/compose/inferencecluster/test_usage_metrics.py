"""Usage by caller: the AI Gateway's gen_ai metrics carry the caller the gateway authenticated,
and the stack's gateway PodMonitor scrapes them beside Envoy's own statistics
(docs/design/shared-front-door.md, "Step 5 as built")."""

from __future__ import annotations

import copy
from typing import Any

from modelplane.compose.inferencecluster import components
from modelplane.compose.inferencegateway.callers import CALLER_HEADER

from .support import cluster, installing, manifest, releases, resources, upstream

Obj = dict[str, Any]


def ai_gateway_controller_values(ic: Obj | None = None) -> Obj:
    release = releases(installing(ic or cluster()))[components.AI_GATEWAY]
    controller: Obj = release["spec"]["forProvider"]["values"]["controller"]
    return controller


def gateway_monitor(ic: Obj | None = None) -> Obj:
    return manifest(resources(installing(ic or cluster()))[components.GATEWAY_MONITOR])


def test_the_caller_header_becomes_the_caller_attribute_of_every_gen_ai_metric() -> None:
    mapping = ai_gateway_controller_values()["metricsRequestHeaderAttributes"]
    assert mapping == f"{CALLER_HEADER}:caller"


def test_the_gateway_monitor_scrapes_envoys_statistics_and_the_ai_gateways_metrics() -> None:
    assert gateway_monitor()["spec"]["podMetricsEndpoints"] == [
        {"port": "metrics", "path": "/stats/prometheus"},
        {"port": "aigw-admin", "path": "/metrics"},
    ]


def test_the_gateway_monitor_scrapes_the_ai_gateways_metrics_with_an_external_prometheus() -> None:
    external = cluster(servingStack={"prometheus": {"mode": "External"}})
    ports = [e["port"] for e in gateway_monitor(external)["spec"]["podMetricsEndpoints"]]
    assert ports == ["metrics", "aigw-admin"]


def test_the_gateway_monitor_with_both_endpoints_is_a_valid_prometheus_operator_pod_monitor() -> (
    None
):
    monitor = gateway_monitor()
    assert len(monitor["spec"]["podMetricsEndpoints"]) == 2
    assert [str(e) for e in upstream().admit(copy.deepcopy(monitor)).errors] == []


def test_the_header_mapped_is_the_one_the_gateway_stamps_the_caller_in() -> None:
    assert components.CALLER_HEADER == CALLER_HEADER
