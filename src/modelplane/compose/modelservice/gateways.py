"""Which InferenceGateways serve a ModelService."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from modelplane.compose.shared.frontdoor import ClusterGateway, cluster_gateway
from modelplane.kube import objects
from modelplane.kube.objects import Obj


@dataclass(frozen=True)
class Serving:
    """An InferenceGateway that serves the service, on the cluster it runs on."""

    name: str
    hostname: str
    host: ClusterGateway
    address: str
    """The gateway's own address, once it reports one."""

    def url(self, namespace: str, service: str) -> str:
        return f"https://{self.hostname}/{namespace}/{service}"


@dataclass(frozen=True)
class Skipped:
    """A gateway that selects the service but cannot serve it now, and why."""

    name: str
    cluster: str
    why: str

    def __str__(self) -> str:
        return f"{self.name}: {self.why}"


def selects(gateway: Mapping[str, Any], service: Mapping[str, Any]) -> bool:
    """A gateway serves every service unless its serviceSelector leaves the service out."""
    labels = objects.labels(service)
    selector = objects.mapping(gateway, "spec", "serviceSelector", "matchLabels")
    return all(labels.get(k) == v for k, v in selector.items())


def gateways_serving(
    service: Mapping[str, Any], gateways: list[Obj], fleet: Mapping[str, Obj]
) -> tuple[list[Serving], list[Skipped]]:
    """The gateways that serve ``service`` (by name), and why others that select it cannot."""
    serving: list[Serving] = []
    skipped: list[Skipped] = []
    for ig in sorted(gateways, key=lambda g: str(g["metadata"]["name"])):
        if not selects(ig, service):
            continue
        name = str(ig["metadata"]["name"])
        spec = objects.spec(ig)
        cluster_name = str(spec.get("clusterName") or "")
        cluster = fleet.get(cluster_name)
        if "backend" in spec or "traefik" in spec or not spec.get("hostname") or cluster is None:
            why = "not running (see the InferenceGateway's GatewayReady)"
            skipped.append(Skipped(name, cluster_name, why))
            continue
        host = cluster_gateway(cluster)
        if not host.provider_config:
            why = f"its cluster {host.cluster} publishes no providerConfigRef"
            skipped.append(Skipped(name, cluster_name, why))
            continue
        address = str(objects.dig(ig, "status", "address") or "")
        serving.append(Serving(name, str(spec["hostname"]), host, address))
    return serving, skipped
