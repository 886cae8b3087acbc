"""What the serving stack adds so that one fleet-wide Prometheus query tells deployments and
clusters apart: the engine and picker PodMonitors copy the pods' deployment and replica labels
onto every series, and each cluster's Prometheus labels its series with the cluster's name."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from modelplane.labels import DEPLOYMENT, DEPLOYMENT_NAMESPACE, LLMD_ROLE, REPLICA
from tests.compose.modelreplica.support import manifests, pod_labels, replica, run

from .support import cluster, installing, manifest, releases, resources, upstream

Obj = dict[str, Any]
COPIED = [DEPLOYMENT, DEPLOYMENT_NAMESPACE, REPLICA]
ENGINES_COPIED = [*COPIED, LLMD_ROLE]
"""Engines also name their phase: a PrefillDecode deployment scales on each phase's own load."""


def monitor(key: str, ic: Obj | None = None) -> Obj:
    return manifest(resources(installing(ic or cluster()))[key])


def prometheus_spec(ic: Obj) -> Obj:
    values = releases(installing(ic))["prometheus"]["spec"]["forProvider"]["values"]
    return values["prometheus"]["prometheusSpec"]


def test_the_engine_pod_monitor_copies_the_deployment_replica_and_phase_labels_onto_series() -> (
    None
):
    assert monitor("podmonitor-engines")["spec"]["podTargetLabels"] == ENGINES_COPIED


def test_the_picker_pod_monitor_copies_the_deployment_and_replica_labels_onto_series() -> None:
    assert monitor("podmonitor-endpoint-pickers")["spec"]["podTargetLabels"] == COPIED


def test_the_gateway_pod_monitor_copies_no_pod_label() -> None:
    # Envoy's proxies serve every deployment: no deployment of theirs to copy.
    assert "podTargetLabels" not in monitor("podmonitor-gateway")["spec"]


@pytest.mark.parametrize("key", ["podmonitor-engines", "podmonitor-endpoint-pickers"])
def test_the_copying_pod_monitors_are_valid_prometheus_operator_pod_monitors(key: str) -> None:
    assert [str(e) for e in upstream().admit(copy.deepcopy(monitor(key))).errors] == []


@pytest.mark.parametrize("key", ["podmonitor-engines", "podmonitor-endpoint-pickers"])
def test_the_pod_monitors_copy_labels_with_an_external_prometheus_too(key: str) -> None:
    external = cluster(servingStack={"prometheus": {"mode": "External"}})
    expected = ENGINES_COPIED if key == "podmonitor-engines" else COPIED
    assert monitor(key, external)["spec"]["podTargetLabels"] == expected


def test_each_clusters_prometheus_labels_its_series_with_the_clusters_name() -> None:
    assert prometheus_spec(cluster("east"))["externalLabels"] == {"cluster": "east"}
    assert prometheus_spec(cluster("west"))["externalLabels"] == {"cluster": "west"}


def test_every_label_the_monitors_copy_is_on_a_stamped_replicas_serving_and_picker_pods() -> None:
    stamped = replica()
    stamped["metadata"]["labels"] = {DEPLOYMENT: "qwen", DEPLOYMENT_NAMESPACE: "team"}
    found = manifests(run(stamped))
    serving = pod_labels(found["workload-main"])["standalone"]
    picker = found["epp-deployment"]["spec"]["template"]["metadata"]["labels"]
    assert set(COPIED) <= serving.keys()
    assert set(COPIED) <= picker.keys()
