"""What an InferenceCluster's spec says about the cluster its stack goes to, read once.

Every builder of the stack takes a ``Target``: the cluster's name, the control-plane namespace
its namespaced resources live in, the two ClusterProviderConfigs that reach it, the stack
(Standard or Dynamo), the inference Gateway, each component's mode and version, and whether a
gateway hosted here needs global rate limits (the one fact that comes from outside the spec).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from modelplane.compose.shared.frontdoor import (
    DEFAULT_GATEWAY_NAME,
    DEFAULT_GATEWAY_NAMESPACE,
    FleetPKI,
    fleet_hostname,
    fleet_pki,
)
from modelplane.kube import objects
from modelplane.kube.names import dns_label
from modelplane.kube.objects import Obj

DEFAULT_SECRET_NAMESPACE = "crossplane-system"

MANAGED = "Managed"
EXTERNAL = "External"

DRA_DRIVER_FIELD = "nvidiaDRADriver"
GKE_DRIVER_ROOT = "/home/kubernetes/bin/nvidia"
DRIVER_ROOTS = {"GKE": GKE_DRIVER_ROOT}
"""Where a managed cluster's GPU nodes hold the NVIDIA driver when the spec names no driverRoot.
The DRA driver's kubelet plugin looks for the driver under its root only; on GKE Modelplane runs
GKE's driver installer, which installs it under /home/kubernetes/bin/nvidia (managed/gke.py)."""


@dataclass(frozen=True)
class Gateway:
    name: str
    namespace: str
    class_name: str
    mode: str
    pki: FleetPKI
    fleet_hostname: str


@dataclass(frozen=True)
class Setting:
    """One component as the spec sets it: Managed (installed) or External (observed)."""

    mode: str
    version: str
    spec: Obj
    """The component's whole block, for its own options (the DRA driver's driverRoot)."""

    @property
    def managed(self) -> bool:
        return self.mode == MANAGED


@dataclass(frozen=True)
class Target:
    cluster: str
    namespace: str
    """The control-plane namespace of every namespaced composed resource: the kubeconfig's."""
    kubernetes_config: str
    helm_config: str
    stack: str
    gateway: Gateway
    settings: dict[str, Setting]
    orphan: bool = False
    """deletionPolicy Orphan: deleting the cluster leaves everything installed on it."""
    source: str = ""
    """spec.cluster.source: Existing, or the cloud Modelplane provisions the cluster on."""
    rate_limits: bool = False
    """Whether an InferenceGateway hosted here sets ``spec.limits``: Envoy Gateway then needs a
    rate-limit backend (its Redis). Read from the gateways, not the cluster's spec (composer)."""

    def setting(self, field: str, default_version: str) -> Setting:
        found = self.settings.get(field)
        if found is None:
            return Setting(MANAGED, default_version, {})
        if found.managed and not found.version:
            return Setting(MANAGED, default_version, found.spec)
        return found

    def name(self, key: str) -> str:
        """The control-plane name of the composed resource ``key``: unique per cluster."""
        return dns_label(self.cluster, key)


def target_of(cluster: Obj, provider_config: str) -> Target:
    spec = objects.spec(cluster)
    secret = objects.mapping(spec, "cluster", "existing", "secretRef")
    settings = _settings_of(spec)
    source = str(objects.dig(spec, "cluster", "source") or "")
    _default_driver_root(settings, DRIVER_ROOTS.get(source, ""))
    return Target(
        cluster=str(cluster["metadata"]["name"]),
        namespace=str(secret.get("namespace") or DEFAULT_SECRET_NAMESPACE),
        kubernetes_config=provider_config,
        helm_config=provider_config,
        stack=str(spec.get("stack") or "Standard"),
        gateway=_gateway_of(cluster),
        settings=settings,
        orphan=objects.dig(spec, "servingStack", "deletionPolicy") == "Orphan",
        source=source,
    )


def _settings_of(spec: Mapping[str, Any]) -> dict[str, Setting]:
    """Each component the spec's servingStack sets, by its field."""
    return {
        field: Setting(
            str(block.get("mode") or MANAGED), str(block.get("version") or ""), dict(block)
        )
        for field, block in sorted(objects.mapping(spec, "servingStack").items())
        if isinstance(block, Mapping)
    }


def _gateway_of(cluster: Obj) -> Gateway:
    """The cluster's inference Gateway as its spec sets it, defaults filled in."""
    name = str(cluster["metadata"]["name"])
    gateway = objects.mapping(cluster, "spec", "gateway")
    return Gateway(
        name=str(gateway.get("name") or DEFAULT_GATEWAY_NAME),
        namespace=str(gateway.get("namespace") or DEFAULT_GATEWAY_NAMESPACE),
        class_name=str(gateway.get("className") or "modelplane"),
        mode=str(gateway.get("mode") or MANAGED),
        pki=fleet_pki(cluster),
        fleet_hostname=fleet_hostname(name),
    )


def _default_driver_root(settings: dict[str, Setting], root: str) -> None:
    """The DRA driver installed with the cluster's own driver root, unless the spec names one
    or observes a DRA driver Modelplane does not install."""
    found = settings.get(DRA_DRIVER_FIELD) or Setting(MANAGED, "", {})
    if root and found.managed and not found.spec.get("driverRoot"):
        settings[DRA_DRIVER_FIELD] = replace(found, spec={**found.spec, "driverRoot": root})
