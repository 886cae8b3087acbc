"""Every fleet's request path, scrape and gang traffic pass the NetworkPolicies its replicas
compose, between pods labelled as the upstream controllers label them; nothing else does.

The sources, at the versions the serving stack pins:

- Envoy Gateway v1.8.1 (``github.com/envoyproxy/gateway``):
  ``internal/infrastructure/kubernetes/proxy/resource.go`` ``EnvoyAppLabel``:
  ``app.kubernetes.io/name: envoy``, ``app.kubernetes.io/component: proxy``,
  ``app.kubernetes.io/managed-by: envoy-gateway`` on every proxy resource; ``resource_provider.go``
  ``getPodLabels`` puts them, with the infra IR's labels, on the proxy Deployment's pods;
  ``internal/gatewayapi/translator.go`` ``buildIR`` gives the infra IR
  ``GatewayOwnerLabels(namespace, name)`` (``internal/gatewayapi/helpers.go``:
  ``gateway.envoyproxy.io/owning-gateway-namespace`` and ``-name``) unless the class merges
  Gateways; ``internal/infrastructure/kubernetes/proxy_infra.go`` ``GetResourceNamespace`` puts
  the proxies in the controller's namespace unless ``provider.kubernetes.deploy.type`` is
  GatewayNamespace (``api/v1alpha1/envoygateway_helpers.go`` ``GatewayNamespaceMode``).
- prometheus-operator v0.93.0 (kube-prometheus-stack 88.5.3 ships v0.93.1):
  ``pkg/prometheus/server/operator.go`` ``makeSelectorLabels``, the labels of a Prometheus's
  pods: ``app.kubernetes.io/name: prometheus``, ``app.kubernetes.io/managed-by:
  prometheus-operator``, ``app.kubernetes.io/instance``, ``operator.prometheus.io/name`` and
  ``prometheus``, each the Prometheus's name (the chart's ``<fullname>-prometheus``,
  ``templates/_helpers.tpl`` ``kube-prometheus-stack.prometheus.crname``).
- Pods of gangs as LeaderWorkerSet v0.9.0 and Grove v0.1.0-alpha.11 make them
  (tests/conformance/lws.py, grove.py: Grove sets ``app.kubernetes.io/managed-by:
  grove-operator`` over the clique's labels).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from tests.conformance.fleets import NAMES, Fleet, rendered_fleet
from tests.conformance.grove import GangPod
from tests.conformance.lws import group_pods
from tests.networkpolicy import Pod, admits, matches, pod_ports

Obj = dict[str, Any]
GANG_PORT = 29500
"""A port no rule names: torch.distributed's default rendezvous port."""


def envoy_app_label() -> dict[str, str]:
    return {
        "app.kubernetes.io/name": "envoy",
        "app.kubernetes.io/component": "proxy",
        "app.kubernetes.io/managed-by": "envoy-gateway",
    }


def gateway_owner_labels(namespace: str, name: str) -> dict[str, str]:
    return {
        "gateway.envoyproxy.io/owning-gateway-namespace": namespace,
        "gateway.envoyproxy.io/owning-gateway-name": name,
    }


def prometheus_selector_labels(name: str) -> dict[str, str]:
    return {
        "app.kubernetes.io/managed-by": "prometheus-operator",
        "app.kubernetes.io/name": "prometheus",
        "app.kubernetes.io/instance": name,
        "operator.prometheus.io/name": name,
        "prometheus": name,
    }


@dataclass(frozen=True)
class Workload:
    """A pod Modelplane composes for a replica, on its cluster."""

    cluster: str
    pod: Pod
    gang: str | None
    """Its gang (one LeaderWorkerSet group, one Grove copy), None for a pod of no gang."""


def _release_namespace(f: Fleet, cluster: str, chart: str) -> str | None:
    for release in f.composed("Release"):
        spec = release["spec"]
        ours = spec["providerConfigRef"]["name"] == cluster
        if ours and spec["forProvider"]["chart"]["name"] == chart:
            return str(spec["forProvider"]["namespace"])
    return None


def proxies(f: Fleet) -> dict[tuple[str, str, str], Pod]:
    """A proxy pod of each composed Gateway by (cluster, namespace, name), in ControllerNamespace
    mode (the stack's Envoy Gateway values set no deploy type)."""
    out = {}
    for gw in f.remote("Gateway"):
        namespace = _release_namespace(f, gw.cluster, "gateway-helm")
        meta = gw.manifest["metadata"]
        labels = {**envoy_app_label(), **gateway_owner_labels(meta["namespace"], meta["name"])}
        out[(gw.cluster, meta["namespace"], meta["name"])] = Pod(namespace or "eg", labels)
    return out


def scraper(f: Fleet, cluster: str) -> Pod | None:
    namespace = _release_namespace(f, cluster, "kube-prometheus-stack")
    if namespace is None:
        return None
    return Pod(namespace, prometheus_selector_labels("prometheus-prometheus"))


def workloads(f: Fleet) -> Iterator[Workload]:
    for remote in f.remote("Deployment"):
        template = remote.manifest["spec"]["template"]
        pod = Pod(remote.manifest["metadata"]["namespace"], template["metadata"]["labels"])
        yield Workload(remote.cluster, _with_ports(pod, template["spec"]), None)
    for remote in f.remote("LeaderWorkerSet"):
        for member, template in group_pods(remote.manifest, 0):
            pod = Pod(member.namespace, template["metadata"]["labels"])
            yield Workload(remote.cluster, _with_ports(pod, template["spec"]), member.lws)
    for remote in f.remote("PodCliqueSet"):
        meta = remote.manifest["metadata"]
        for clique in remote.manifest["spec"]["template"]["cliques"]:
            member = GangPod(meta["name"], meta["namespace"], "gang", 0, clique["name"])
            pod = Pod(member.namespace, member.labels(clique["labels"]))
            yield Workload(remote.cluster, _with_ports(pod, clique["spec"]["podSpec"]), member.pcs)


def _with_ports(pod: Pod, spec: Obj) -> Pod:
    return Pod(pod.namespace, pod.labels, pod_ports(spec))


def policies(f: Fleet, cluster: str) -> list[Obj]:
    return [r.manifest for r in f.remote("NetworkPolicy") if r.cluster == cluster]


def _selected(pods: list[Workload], cluster: str, namespace: str, selector: Obj) -> list[Pod]:
    return [
        w.pod
        for w in pods
        if w.cluster == cluster and w.pod.namespace == namespace and matches(selector, w.pod.labels)
    ]


def _route_gateways(f: Fleet, cluster: str, namespace: str, pool: str) -> set[tuple[str, str]]:
    return {
        (parent["namespace"], parent["name"])
        for route in f.remote("HTTPRoute")
        if route.cluster == cluster and route.manifest["metadata"]["namespace"] == namespace
        for rule in route.manifest["spec"]["rules"]
        if any(ref.get("name") == pool for ref in rule.get("backendRefs") or [])
        for parent in route.manifest["spec"]["parentRefs"]
    }


def request_paths(f: Fleet) -> Iterator[tuple[str, Pod, Pod, int]]:
    """(cluster, proxy, pod, port) for every hop a request makes inside a cluster: the pool's
    Gateway's proxy to each serving pod on the pool's target port, and to each picker on the
    pool's ext_proc port."""
    pods = list(workloads(f))
    gateways = proxies(f)
    for pool in f.remote("InferencePool"):
        meta, spec = pool.manifest["metadata"], pool.manifest["spec"]
        ns = meta["namespace"]
        service = _named(f, pool.cluster, "Service", ns, spec["endpointPickerRef"]["name"])
        routed = _route_gateways(f, pool.cluster, ns, meta["name"])
        assert routed, meta["name"]
        for gw_ns, gw_name in routed:
            proxy = gateways[(pool.cluster, gw_ns, gw_name)]
            serving = _selected(pods, pool.cluster, ns, spec["selector"])
            pickers = _selected(
                pods, pool.cluster, ns, {"matchLabels": service["spec"]["selector"]}
            )
            assert serving and pickers, meta["name"]
            for pod in serving:
                yield pool.cluster, proxy, pod, int(spec["targetPorts"][0]["number"])
            for pod in pickers:
                yield pool.cluster, proxy, pod, int(spec["endpointPickerRef"]["port"]["number"])


def _named(f: Fleet, cluster: str, kind: str, namespace: str, name: str) -> Obj:
    (found,) = [
        r.manifest
        for r in f.remote(kind)
        if r.cluster == cluster
        and r.manifest["metadata"]["namespace"] == namespace
        and r.manifest["metadata"]["name"] == name
    ]
    return found


def _replica_pods(f: Fleet) -> list[Workload]:
    return [w for w in workloads(f) if "modelplane.ai/replica" in w.pod.labels]


@pytest.mark.parametrize("name", NAMES)
def test_every_replica_pod_is_selected_by_a_policy(name: str) -> None:
    f = rendered_fleet(name)
    for w in _replica_pods(f):
        selecting = [
            p
            for p in policies(f, w.cluster)
            if p["metadata"]["namespace"] == w.pod.namespace
            and matches(p["spec"]["podSelector"], w.pod.labels)
        ]
        assert selecting, w.pod.labels


@pytest.mark.parametrize("name", NAMES)
def test_the_gateway_reaches_every_serving_pod_and_picker_of_its_pools(name: str) -> None:
    f = rendered_fleet(name)
    hops = list(request_paths(f))
    assert hops
    for cluster, proxy, pod, port in hops:
        assert admits(policies(f, cluster), proxy, pod, port), (pod.labels, port)


@pytest.mark.parametrize("name", NAMES)
def test_no_other_gateways_proxies_reach_a_replica(name: str) -> None:
    f = rendered_fleet(name)
    gateways = proxies(f)
    for cluster, proxy, pod, port in request_paths(f):
        for (c, _, _), other in gateways.items():
            if c == cluster and other != proxy:
                assert not admits(policies(f, cluster), other, pod, port), other.labels


@pytest.mark.parametrize("name", NAMES)
def test_prometheus_scrapes_every_replica_pod_where_its_pod_monitor_points(name: str) -> None:
    f = rendered_fleet(name)
    monitors = [m.manifest for m in f.remote("PodMonitor")]
    for w in _replica_pods(f):
        prometheus = scraper(f, w.cluster)
        if prometheus is None:
            continue
        for monitor in monitors:
            if matches(monitor["spec"]["selector"], w.pod.labels):
                (endpoint,) = monitor["spec"]["podMetricsEndpoints"]
                port = w.pod.ports[endpoint["port"]]
                assert admits(policies(f, w.cluster), prometheus, w.pod, port), w.pod.labels


@pytest.mark.parametrize("name", NAMES)
def test_every_gang_member_reaches_every_other_on_any_port(name: str) -> None:
    f = rendered_fleet(name)
    pods = [w for w in _replica_pods(f) if w.gang]
    for a in pods:
        for b in pods:
            if a.gang == b.gang and a.cluster == b.cluster:
                assert admits(policies(f, a.cluster), a.pod, b.pod, GANG_PORT)


@pytest.mark.parametrize("name", NAMES)
def test_a_pod_of_another_namespace_reaches_no_replica_pod(name: str) -> None:
    f = rendered_fleet(name)
    for w in _replica_pods(f):
        # Its very labels, even those of Envoy Gateway's proxies, from a tenant's namespace.
        impostor = Pod(f"not-{w.pod.namespace}", w.pod.labels)
        for port in (GANG_PORT, *w.pod.ports.values()):
            assert not admits(policies(f, w.cluster), impostor, w.pod, port)
