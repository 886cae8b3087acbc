"""The InferenceCluster composition: reach a brought-your-own cluster and publish what it offers.

An ``Existing`` cluster gets a provider-kubernetes ClusterProviderConfig built from its kubeconfig
Secret, and an observe-only Object that reads the cluster's Gateway so its address can be
published. Status carries what ModelReplicas and the scheduler read: ``providerConfigRef``,
``gateway`` and ``gpuPools`` (each pool with its InferenceClass's devices). Cloud sources are
accepted by the schema but composed by nothing: they get a condition saying so.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from modelplane.compose.remote import remote_object
from modelplane.composer import Condition, Desired, Event, Inputs, Requirement, Result
from modelplane.kube.names import dns_label
from modelplane.observed import carried

Obj = dict[str, Any]

API_VERSION = "modelplane.ai/v1alpha1"
PROVIDER_CONFIG_API_VERSION = "kubernetes.m.crossplane.io/v1alpha1"
CLASSES = "inference-classes"
PROVIDER_CONFIG = "provider-config"
GATEWAY = "gateway"
LABEL_VALUE_MAX = 63

DEFAULT_SECRET_NAMESPACE = "crossplane-system"
DEFAULT_SECRET_KEY = "kubeconfig"
DEFAULT_IDENTITY_KEY = "private_key"
DEFAULT_IDENTITY_TYPE = "GoogleApplicationCredentials"
DEFAULT_GATEWAY_NAME = "inference-gateway"
DEFAULT_GATEWAY_NAMESPACE = "modelplane-system"
# A Gateway is reachable once it reports an address; that is what the Object's readiness waits for.
GATEWAY_READY_QUERY = "has(object.status.addresses) && size(object.status.addresses) > 0"


def compose_cluster(inputs: Inputs) -> Result:
    cluster = inputs.composite
    spec = cluster.get("spec") or {}
    source = str((spec.get("cluster") or {}).get("source", ""))
    if source != "Existing":
        return _unsupported(inputs, source)

    name = str(cluster["metadata"]["name"])
    if len(name) > LABEL_VALUE_MAX:
        # Crossplane drops root-level XRD rules, so this cannot be refused at admission.
        return Result.failed(
            f"InferenceCluster name {name!r} is longer than {LABEL_VALUE_MAX} characters: "
            "replicas placed here carry it as a label value, so none could be; use a shorter name"
        )
    existing = spec["cluster"].get("existing") or {}
    if not isinstance(existing.get("secretRef"), Mapping) or not existing["secretRef"].get("name"):
        return Result.failed(
            "InferenceCluster spec.cluster.existing.secretRef.name is required for source Existing"
        )
    result = Result(
        requirements={CLASSES: Requirement(API_VERSION, "InferenceClass")},
        conditions=[Condition("SourceSupported", "True", "Existing", "a brought-your-own cluster")],
    )
    provider_config = dns_label(name)
    gateway = _gateway_ref(spec)
    namespace = str(existing["secretRef"].get("namespace") or DEFAULT_SECRET_NAMESPACE)

    result.resources[PROVIDER_CONFIG] = Desired(
        provider_config_for(provider_config, existing),
        ready="True" if PROVIDER_CONFIG in inputs.observed else "Unspecified",
    )
    observed_gateway = inputs.observed.get(GATEWAY)
    if observed_gateway is None:
        # Not observed yet (first reconcile, or a rendered fleet that states its status): keep
        # the address last published rather than withdraw it on no evidence.
        published = (cluster.get("status") or {}).get("gateway") or {}
        address = str(published.get("address") or "")
    else:
        address = observed_gateway_address(observed_gateway)
    result.resources[GATEWAY] = Desired(
        gateway_observer(name, namespace, provider_config, gateway),
        ready="True" if address and observed_gateway is not None else "False",
    )

    status: Obj = {
        "providerConfigRef": {"name": provider_config},
        "gateway": {**gateway, **({"address": address} if address else {})},
    }
    storage_class = (existing.get("cache") or {}).get("storageClassName")
    if storage_class:
        status["cache"] = {"storageClassName": storage_class}
    if address:
        result.conditions.append(
            Condition(
                "GatewayReady",
                "True",
                "AddressAssigned",
                f"gateway address {address}"
                + ("" if observed_gateway is not None else " (as published; not observed yet)"),
            )
        )
    else:
        result.conditions.append(
            Condition(
                "GatewayReady",
                "False",
                "WaitingForGateway",
                f"Gateway {gateway['namespace']}/{gateway['name']} on the cluster has no address "
                "yet; replicas placed here are not reachable until it has one",
            )
        )

    classes = inputs.required.get(CLASSES)
    if classes is None:
        result.conditions.append(
            Condition("PoolsResolved", "Unknown", "WaitingForClasses", "reading InferenceClasses")
        )
    else:
        pools, missing = gpu_pools(spec.get("nodePools") or [], classes)
        status["gpuPools"] = pools
        result.conditions.append(_pools_condition(pools, missing))
    result.status = status
    return result


def provider_config_for(name: str, existing: Obj) -> Obj:
    """The ClusterProviderConfig that reaches the cluster through its kubeconfig Secret."""
    secret = existing["secretRef"]
    namespace = str(secret.get("namespace") or DEFAULT_SECRET_NAMESPACE)
    spec: Obj = {
        "credentials": {
            "source": "Secret",
            "secretRef": {
                "name": secret["name"],
                "namespace": namespace,
                "key": secret.get("key") or DEFAULT_SECRET_KEY,
            },
        }
    }
    identity = existing.get("identitySecretRef")
    if identity:
        spec["identity"] = {
            "source": "Secret",
            "type": identity.get("type") or DEFAULT_IDENTITY_TYPE,
            "secretRef": {
                "name": identity["name"],
                "namespace": namespace,
                "key": identity.get("key") or DEFAULT_IDENTITY_KEY,
            },
        }
    return {
        "apiVersion": PROVIDER_CONFIG_API_VERSION,
        "kind": "ClusterProviderConfig",
        "metadata": {"name": name},
        "spec": spec,
    }


def gateway_observer(cluster: str, namespace: str, provider_config: str, gateway: Obj) -> Obj:
    """An observe-only Object that reads the cluster's Gateway: never creates nor deletes it."""
    return remote_object(
        dns_label(cluster, "gateway"),
        namespace,
        provider_config,
        {
            "apiVersion": "gateway.networking.k8s.io/v1",
            "kind": "Gateway",
            "metadata": {"name": gateway["name"], "namespace": gateway["namespace"]},
        },
        readiness={"policy": "DeriveFromCelQuery", "celQuery": GATEWAY_READY_QUERY},
        management_policies=["Observe"],
    )


def observed_gateway_address(observed: Obj | None) -> str:
    """The first address the observed Gateway reports, or "" before it reports one."""
    if not observed:
        return ""
    manifest = ((observed.get("status") or {}).get("atProvider") or {}).get("manifest") or {}
    for entry in (manifest.get("status") or {}).get("addresses") or []:
        value = entry.get("value") if isinstance(entry, Mapping) else None
        if value:
            return str(value)
    return ""


def gpu_pools(node_pools: list[Obj], classes: list[Obj]) -> tuple[list[Obj], list[tuple[str, str]]]:
    """Each node pool with its class's devices, and the (pool, class) pairs whose class is missing.

    ``nodes`` is the pool's declared ``nodeCount``, never ``maxNodeCount``: capacity a cluster
    autoscaler might add is not capacity the scheduler may promise.
    """
    by_name = {str(c.get("metadata", {}).get("name")): c for c in classes}
    pools: list[Obj] = []
    missing: list[tuple[str, str]] = []
    for pool in node_pools:
        cls = by_name.get(str(pool["className"]))
        if cls is None:
            missing.append((str(pool["name"]), str(pool["className"])))
            continue
        pools.append(
            {
                "name": pool["name"],
                "nodes": int(pool.get("nodeCount", 1)),
                "devices": [_device(d) for d in (cls.get("spec") or {}).get("devices") or []],
            }
        )
    return pools, missing


def _device(device: Obj) -> Obj:
    out: Obj = {"name": device["name"], "claim": device.get("claim") or "DRA"}
    out["driver"] = device["driver"]
    if device.get("deviceClassName"):
        out["deviceClassName"] = device["deviceClassName"]
    out["count"] = int(device.get("count", 1))
    for key in ("attributes", "capacity"):
        if device.get(key):
            out[key] = device[key]
    return out


def _gateway_ref(spec: Obj) -> Obj:
    gateway = spec.get("gateway") or {}
    return {
        "name": gateway.get("name") or DEFAULT_GATEWAY_NAME,
        "namespace": gateway.get("namespace") or DEFAULT_GATEWAY_NAMESPACE,
    }


def _pools_condition(pools: list[Obj], missing: list[tuple[str, str]]) -> Condition:
    if missing:
        detail = "; ".join(
            f"pool {pool} names InferenceClass {cls}, which does not exist" for pool, cls in missing
        )
        return Condition(
            "PoolsResolved", "False", "ClassNotFound", f"{detail}; no replica is placed there"
        )
    summary = ", ".join(f"{p['name']} ({p['nodes']} nodes)" for p in pools)
    return Condition("PoolsResolved", "True", "ClassesFound", f"pools: {summary}")


def _unsupported(inputs: Inputs, source: str) -> Result:
    # Nothing is composed for a cloud source, but anything already composed (the source was
    # edited away from Existing) is carried forward: replicas may still reach the cluster by it.
    message = (
        f"cluster.source {source or '(unset)'} is not supported: Modelplane provisions no "
        "clusters. "
        "Bring the cluster and use source Existing with a kubeconfig secretRef; nothing is composed"
    )
    # Readiness stays unspecified: an unsupported source never makes the cluster Ready.
    return Result(
        resources={k: Desired(carried(o)) for k, o in sorted(inputs.observed.items())},
        conditions=[Condition("SourceSupported", "False", "UnsupportedSource", message)],
        events=[Event("Warning", message, "UnsupportedSource")],
    )
