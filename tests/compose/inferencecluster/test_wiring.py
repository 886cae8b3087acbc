"""What a replica relies on is what its cluster's stack installs: a cluster and a replica are
rendered together (through the real function, as `modelplane render` runs them) and every
wiring point between them is checked: the Gateway and its class, the InferencePool API, the
extension server, the ProviderConfig, the device class, the gang scheduler and queue, the labels
and ports the metrics stack scrapes.

The cluster moves its Gateway off the defaults, so the replica can only find it through the
status the cluster publishes.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from modelplane.compose.registry import default_registry
from modelplane.render import RESOURCE_NAME, api_server_admission, render_documents
from modelplane.simulate import simulate_observed

from .support import ROOT

Obj = dict[str, Any]
EXAMPLES = ROOT / "examples"
VALUES = ROOT / "tests" / "upstream" / "values"
GATEWAY = {"name": "edge", "namespace": "ingress", "className": "inference"}


@functools.cache
def rendered(example: str) -> tuple[Obj, ...]:
    docs = [d for p in sorted((EXAMPLES / example).glob("*.yaml")) for d in _load(p)]
    for doc in docs:
        if doc["kind"] == "InferenceCluster":
            doc["spec"]["gateway"] = dict(GATEWAY)
            doc.pop("status", None)  # what it publishes comes from its own composition
    simulate = functools.partial(simulate_observed, ready_copies=1)
    out = render_documents(default_registry(), docs, [], api_server_admission(), simulate)
    return tuple(out)


def _load(path: Path) -> list[Obj]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


class Rendered:
    def __init__(self, example: str) -> None:
        self.docs = rendered(example)

    def composite(self, kind: str) -> Obj:
        return next(d for d in self.docs if d["kind"] == kind)

    def owned_by(self, kind: str) -> dict[str, Obj]:
        owner = self.composite(kind)["metadata"]["name"]
        return {
            d["metadata"]["annotations"][RESOURCE_NAME]: d
            for d in self.docs
            if (d.get("metadata", {}).get("labels") or {}).get("crossplane.io/composite") == owner
        }

    def stack(self) -> dict[str, Obj]:
        return self.owned_by("InferenceCluster")

    def replica(self) -> dict[str, Obj]:
        return self.owned_by("ModelReplica")

    def remote(self, kind: str) -> list[Obj]:
        """Every manifest of ``kind`` the replica applies to the cluster."""
        return [
            o["spec"]["forProvider"]["manifest"]
            for o in self.replica().values()
            if o["kind"] == "Object" and o["spec"]["forProvider"]["manifest"]["kind"] == kind
        ]

    def values(self, release: str) -> Obj:
        return dict(self.stack()[release]["spec"]["forProvider"]["values"])

    def stack_manifest(self, key: str) -> Obj:
        return dict(self.stack()[key]["spec"]["forProvider"]["manifest"])


def pods(manifest: Obj) -> Iterator[Obj]:
    """Every pod template of a workload manifest: Deployment, LeaderWorkerSet, PodCliqueSet."""
    spec = manifest.get("spec") or {}
    if manifest["kind"] == "Deployment":
        yield spec["template"]
    elif manifest["kind"] == "LeaderWorkerSet":
        template = spec["leaderWorkerTemplate"]
        yield template.get("leaderTemplate") or template["workerTemplate"]
        yield template["workerTemplate"]
    elif manifest["kind"] == "PodCliqueSet":
        for clique in spec["template"]["cliques"]:
            yield {"metadata": {"labels": clique["labels"]}, "spec": clique["spec"]["podSpec"]}


EXAMPLES_BY_STACK = {"Standard": "replica-gang-standard", "Dynamo": "replica-gang-dynamo"}


@pytest.fixture(params=["Standard", "Dynamo"])
def both(request: Any) -> Rendered:
    return Rendered(EXAMPLES_BY_STACK[request.param])


def test_the_cluster_and_the_replica_render_and_the_replica_serves(both: Rendered) -> None:
    cluster = both.composite("InferenceCluster")
    replica = both.composite("ModelReplica")
    conditions = {c["type"]: c["status"] for c in cluster["status"]["conditions"]}
    assert conditions["StackReady"] == "True"
    assert {c["type"]: c["status"] for c in replica["status"]["conditions"]}[
        "ModelServing"
    ] == "True"


def test_the_route_attaches_to_the_mutual_tls_listener_of_the_gateway_the_stack_composes(
    both: Rendered,
) -> None:
    [route] = both.remote("HTTPRoute")
    gateway = both.stack_manifest("gateway")
    [parent] = route["spec"]["parentRefs"]
    assert (parent["name"], parent["namespace"]) == (GATEWAY["name"], GATEWAY["namespace"])
    assert gateway["metadata"] == {"name": GATEWAY["name"], "namespace": GATEWAY["namespace"]}
    [listener] = [
        lst for lst in gateway["spec"]["listeners"] if lst["name"] == parent["sectionName"]
    ]
    assert (listener["protocol"], listener["allowedRoutes"]["namespaces"]["from"]) == (
        "HTTPS",
        "All",
    )
    policy = both.stack_manifest("fleet-client-validation")
    assert policy["spec"]["targetRefs"][0]["sectionName"] == listener["name"]


def test_the_gateway_class_is_the_one_envoy_gateway_runs_and_the_cluster_publishes(
    both: Rendered,
) -> None:
    gateway = both.stack_manifest("gateway")
    gateway_class = both.stack_manifest("gateway-class")
    controller = both.values("envoy-gateway")["config"]["envoyGateway"]["gateway"]["controllerName"]
    assert gateway["spec"]["gatewayClassName"] == gateway_class["metadata"]["name"] == "inference"
    assert gateway_class["spec"]["controllerName"] == controller
    published = both.composite("InferenceCluster")["status"]["gateway"]
    assert published["className"] == "inference"


def test_the_pool_api_the_replica_uses_is_the_crd_applied_and_the_backend_envoy_gateway_resolves(
    both: Rendered,
) -> None:
    [pool] = both.remote("InferencePool")
    group, version = pool["apiVersion"].split("/")
    crd = both.stack_manifest("inference-pool-crd")
    assert crd["spec"]["group"] == group
    assert version in [v["name"] for v in crd["spec"]["versions"] if v["served"]]
    extension = both.values("envoy-gateway")["config"]["envoyGateway"]["extensionManager"]
    assert {"group": group, "kind": "InferencePool", "version": version} in extension[
        "backendResources"
    ]
    [route] = both.remote("HTTPRoute")
    backends = [b for rule in route["spec"]["rules"] for b in rule["backendRefs"]]
    assert {(b["group"], b["kind"]) for b in backends} == {(group, "InferencePool")}


def test_envoy_gateway_dials_the_ai_gateway_controller_the_stack_installs(both: Rendered) -> None:
    extension = both.values("envoy-gateway")["config"]["envoyGateway"]["extensionManager"]
    ai = both.values("envoy-ai-gateway")
    ai_namespace = both.stack()["envoy-ai-gateway"]["spec"]["forProvider"]["namespace"]
    eg_namespace = both.stack()["envoy-gateway"]["spec"]["forProvider"]["namespace"]
    service = f"{ai['controller']['fullnameOverride']}.{ai_namespace}.svc.cluster.local"
    assert extension["service"]["fqdn"] == {"hostname": service, "port": 1063}
    # The AI Gateway chart grants Envoy Gateway's ServiceAccount, in this namespace, its
    # InferencePool reads.
    assert ai["envoyGateway"]["namespace"] == eg_namespace


def test_the_replica_writes_through_the_provider_config_the_cluster_composes(
    both: Rendered,
) -> None:
    config = both.stack()["provider-config"]
    refs = {
        (o["spec"]["providerConfigRef"]["kind"], o["spec"]["providerConfigRef"]["name"])
        for o in both.replica().values()
        if o["kind"] == "Object"
    }
    assert refs == {("ClusterProviderConfig", config["metadata"]["name"])}
    assert config["apiVersion"] == "kubernetes.m.crossplane.io/v1alpha1"


def test_the_device_class_the_replica_claims_is_the_one_the_dra_driver_creates(
    both: Rendered,
) -> None:
    classes = {
        r["deviceClassName"]
        for t in both.remote("ResourceClaimTemplate")
        for r in t["spec"]["spec"]["devices"]["requests"]
        for r in [r.get("exactly") or r]
    }
    # The chart's templates/deviceclass-gpu.yaml names it gpu.nvidia.com when GPUs are enabled.
    # Other classes (the Standard gang's RDMA NICs) come from drivers the stack does not install.
    assert "gpu.nvidia.com" in classes
    assert both.values("nvidia-dra-driver")["resources"]["gpus"]["enabled"] is True


def test_node_feature_discovery_reaches_the_gpu_nodes_the_dra_kubelet_plugin_runs_on(
    both: Rendered,
) -> None:
    published = yaml.safe_load((VALUES / "dra-driver-nvidia-gpu-0.4.1.yaml").read_text())
    plugin_taints = {t["key"] for t in published["kubeletPlugin"]["tolerations"]}
    worker = both.values("node-feature-discovery")["worker"]["tolerations"]
    assert plugin_taints <= {t["key"] for t in worker if t["operator"] == "Exists"}


def test_the_metrics_stack_selects_the_pickers_and_engines_by_their_labels_and_ports(
    both: Rendered,
) -> None:
    monitors = {
        key: both.stack_manifest(key)
        for key in ("podmonitor-endpoint-pickers", "podmonitor-engines")
    }
    [picker] = [d for d in both.remote("Deployment") if "epp" in d["metadata"]["name"]]
    workloads = [
        m
        for kind in ("Deployment", "LeaderWorkerSet", "PodCliqueSet")
        for m in both.remote(kind)
        if m not in [picker]
    ]
    serving = [
        p
        for w in workloads
        for p in pods(w)
        if p["metadata"]["labels"].get("modelplane.ai/serving")
    ]
    assert serving
    for key, targets in (
        ("podmonitor-endpoint-pickers", [picker["spec"]["template"]]),
        ("podmonitor-engines", serving),
    ):
        monitor = monitors[key]["spec"]
        assert monitor["namespaceSelector"] == {"any": True}
        [endpoint] = monitor["podMetricsEndpoints"]
        for pod in targets:
            labels = pod["metadata"]["labels"]
            assert monitor["selector"]["matchLabels"].items() <= labels.items(), key
            ports = {p.get("name") for c in pod["spec"]["containers"] for p in c.get("ports") or ()}
            assert endpoint["port"] in ports, key


def test_a_standard_cluster_installs_the_leaderworkerset_its_gangs_run_as() -> None:
    standard = Rendered("replica-gang-standard")
    assert standard.remote("LeaderWorkerSet")
    assert "leaderworkerset" in standard.stack()
    assert "grove" not in standard.stack()


def test_a_standard_gang_is_scheduled_whole_by_the_kai_the_stack_installs() -> None:
    standard = Rendered("replica-gang-standard")
    [lws] = standard.remote("LeaderWorkerSet")
    kai = standard.values("kai-scheduler")
    queues = {standard.stack_manifest(k)["metadata"]["name"] for k in ("kai-queue",)}
    # KAI's LWS grouper reads the queue from the LeaderWorkerSet, the pods' top owner.
    assert lws["metadata"]["labels"][kai["podgrouper"]["queueLabelKey"]] in queues
    for pod in pods(lws):
        assert pod["spec"]["schedulerName"] == "kai-scheduler"


def test_a_dynamo_gang_is_scheduled_by_the_scheduler_and_queue_the_stack_installs() -> None:
    dynamo = Rendered("replica-gang-dynamo")
    [pcs] = dynamo.remote("PodCliqueSet")
    grove = dynamo.values("grove")["config"]["scheduler"]["profiles"]
    kai = dynamo.values("kai-scheduler")
    queues = {
        m["metadata"]["name"]: m["spec"]
        for k in ("kai-queue", "kai-queue-root")
        for m in [dynamo.stack_manifest(k)]
    }
    parents = {spec.get("parentQueue") for spec in queues.values()}
    for pod in pods(pcs):
        scheduler = pod["spec"]["schedulerName"]
        assert scheduler in {p["name"] for p in grove}
        # KAI's scheduler takes the name kai-scheduler unless configured otherwise.
        assert scheduler == "kai-scheduler"
        queue = pod["metadata"]["labels"][kai["podgrouper"]["queueLabelKey"]]
        assert queue in queues and queue not in parents  # a leaf: only leaves take workloads
    assert "leaderworkerset" not in dynamo.stack()
