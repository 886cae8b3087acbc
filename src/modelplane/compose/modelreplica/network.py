"""Who may open a connection to a replica's pods: two ingress NetworkPolicies per replica.

Tenants share a workload cluster, and a pod accepts connections from any pod unless a
NetworkPolicy selects it; without these, one tenant's pod could call another's engines or
endpoint picker directly, past the gateway's fleet listener and its client certificates.

- ``<replica>-engines`` selects every engine pod of the replica (every engine, member and
  copy) and admits: the replica's own pods on any port (a gang's leader and workers, prefill
  and decode engines and their sidecars exchanging KV caches, the picker reading metrics), the
  cluster's gateway proxies on the serving port (the InferencePool's target port), and
  Prometheus on the port the engines' PodMonitor scrapes.
- ``<replica>-epp`` selects the replica's endpoint pickers and admits the gateway proxies on
  the ext_proc port, Prometheus on the metrics port, and the replica's own engines on any port
  (a picker configured for KV-cache events has the engines publish them to it).

Ingress only: egress is left as it is (the gateway proxies' egress is the platform's to
restrict, docs/design/security.md). The kubelet's probes are not subject to NetworkPolicy.
The policies are objects of their own: they change no pod template, so composing them for a
running replica restarts nothing. docs/design/security.md, "Tenants' pods on a shared cluster".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from modelplane.compose.modelreplica import picker
from modelplane.compose.modelreplica.context import ReplicaContext
from modelplane.compose.modelreplica.labelsets import component, label_value, owned
from modelplane.compose.modelreplica.remote import wrap
from modelplane.compose.shared.frontdoor import cluster_gateway
from modelplane.kube import objects
from modelplane.kube.names import suffixed
from modelplane.kube.objects import Obj
from modelplane.labels import ENGINE, REPLICA
from modelplane.structs import frozen

ENGINES_KEY = "engines-network-policy"
PICKER_KEY = "epp-network-policy"
KEYS = (ENGINES_KEY, PICKER_KEY)

# The API server labels every namespace with its own name (GA in Kubernetes 1.22).
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"

# What the serving stack installs (compose/inferencecluster/components.py; a replica may not
# import it: tests/compose/modelreplica/test_network.py holds the two to each other).
ENVOY_GATEWAY_NAMESPACE = "envoy-gateway-system"
PROMETHEUS_NAMESPACE = "monitoring"
ENGINE_METRICS_PORT = "http"
"""The named port the stack's engine PodMonitor scrapes."""

# Envoy Gateway v1.8.1 labels every proxy pod with these (internal/infrastructure/kubernetes/
# proxy/resource.go, EnvoyAppLabel) and with the Gateway it serves (internal/gatewayapi/
# helpers.go, GatewayOwnerLabels), and runs it in its own namespace unless deployed in
# GatewayNamespace mode (internal/infrastructure/kubernetes/proxy_infra.go).
ENVOY_PROXY_LABELS = frozen(
    {
        "app.kubernetes.io/name": "envoy",
        "app.kubernetes.io/component": "proxy",
        "app.kubernetes.io/managed-by": "envoy-gateway",
    }
)
OWNING_GATEWAY_NAME = "gateway.envoyproxy.io/owning-gateway-name"
OWNING_GATEWAY_NAMESPACE = "gateway.envoyproxy.io/owning-gateway-namespace"
# prometheus-operator v0.93 (kube-prometheus-stack 88.5.3's) labels a Prometheus's pods with
# these (pkg/prometheus/server/operator.go, makeSelectorLabels).
PROMETHEUS_LABELS = frozen(
    {"app.kubernetes.io/name": "prometheus", "app.kubernetes.io/managed-by": "prometheus-operator"}
)
# A tenant sets its engine pods' labels (a member's template), so could spell a proxy's; never
# the replica label, which Modelplane's wins on every pod it composes for a tenant. Every peer
# outside the replica excludes pods carrying it: where a component's namespace is not known (the
# platform's own, External), its pods are admitted by their labels from any namespace.
_NOT_A_TENANTS_POD = frozen([{"key": REPLICA, "operator": "DoesNotExist"}])
_ENGINE_POD = frozen([{"key": ENGINE, "operator": "Exists"}])


def compose_network(ctx: ReplicaContext) -> dict[str, Obj]:
    """The replica's ingress policies (composition resource name -> wrapped Object)."""
    gateway = gateway_peer(ctx.cluster)
    scraper = scraper_peer(ctx.cluster)
    return {
        ENGINES_KEY: wrap(ctx, ENGINES_KEY, engines_policy(ctx, gateway, scraper)),
        PICKER_KEY: wrap(ctx, PICKER_KEY, picker_policy(ctx, gateway, scraper)),
    }


def engines_policy(ctx: ReplicaContext, gateway: Obj, scraper: Obj) -> Obj:
    replica = {REPLICA: label_value(ctx.name)}
    return _policy(
        ctx,
        suffixed(ctx.name, "engines"),
        # Not managed-by: Grove overwrites it on the pods it creates (grove-operator).
        {"matchLabels": replica, "matchExpressions": _ENGINE_POD},
        [
            # Leader and workers, prefill and decode, and the picker: every port, since a
            # gang's collectives, KV transfer and an engine's own side channels pick theirs.
            {"from": [{"podSelector": {"matchLabels": replica}}]},
            {"from": [gateway], "ports": [_tcp(ctx.serving_port)]},
            {"from": [scraper], "ports": [_tcp(ENGINE_METRICS_PORT)]},
        ],
    )


def picker_policy(ctx: ReplicaContext, gateway: Obj, scraper: Obj) -> Obj:
    engines = {"matchLabels": {REPLICA: label_value(ctx.name)}, "matchExpressions": _ENGINE_POD}
    return _policy(
        ctx,
        suffixed(ctx.name, "epp"),
        {"matchLabels": component(ctx.name, picker.COMPONENT)},
        [
            {"from": [gateway], "ports": [_tcp(picker.EXT_PROC_PORT)]},
            {"from": [scraper], "ports": [_tcp(picker.METRICS_PORT)]},
            # KV-cache events, on whatever port the picker's config listens on.
            {"from": [{"podSelector": engines}]},
        ],
    )


def gateway_peer(cluster: Mapping[str, Any]) -> Obj:
    """The proxies of the Gateway the replica's route attaches to."""
    gateway = cluster_gateway(cluster)
    labels = {
        **ENVOY_PROXY_LABELS,
        OWNING_GATEWAY_NAME: gateway.name,
        OWNING_GATEWAY_NAMESPACE: gateway.namespace,
    }
    # The stack's Envoy Gateway runs in ControllerNamespace mode (its values set no deploy
    # type): every proxy in its own namespace, which no tenant's replica is composed into.
    return _peer(ENVOY_GATEWAY_NAMESPACE if _managed(cluster, "envoyGateway") else None, labels)


def scraper_peer(cluster: Mapping[str, Any]) -> Obj:
    """The Prometheus the stack's PodMonitors configure."""
    return _peer(
        PROMETHEUS_NAMESPACE if _managed(cluster, "prometheus") else None, PROMETHEUS_LABELS
    )


def _managed(cluster: Mapping[str, Any], field: str) -> bool:
    return (objects.dig(cluster, "spec", "servingStack", field, "mode") or "Managed") == "Managed"


def _peer(namespace: str | None, labels: Mapping[str, str]) -> Obj:
    """Pods of ``labels`` in ``namespace``, or in every namespace when it is None."""
    return {
        "namespaceSelector": {"matchLabels": {NAMESPACE_NAME_LABEL: namespace}}
        if namespace
        else {},
        "podSelector": {"matchLabels": dict(labels), "matchExpressions": _NOT_A_TENANTS_POD},
    }


def _tcp(port: int | str) -> Obj:
    return {"protocol": "TCP", "port": port}


def _policy(ctx: ReplicaContext, name: str, selector: Obj, ingress: list[Obj]) -> Obj:
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": name, "namespace": ctx.namespace, "labels": owned(ctx.name)},
        "spec": {"podSelector": selector, "policyTypes": ["Ingress"], "ingress": ingress},
    }
