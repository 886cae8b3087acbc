"""Stand-ins for what cannot run here, each writing only what the real component writes.

- The NVIDIA DRA driver (dra-driver-nvidia-gpu v0.4.1): its kubelet plugin publishes one
  ResourceSlice per node (pool = the node's name) whose devices are named ``gpu-<index>``
  (cmd/gpu-kubelet-plugin/deviceinfo.go ``CanonicalName``) with attributes ``type: gpu``,
  ``productName``, ``driverVersion``, ... and capacity ``memory`` (``GpuInfo.Attributes`` and
  ``fullGpuCapacity``); its chart installs the DeviceClass ``gpu.nvidia.com``
  (deployments/helm/dra-driver-nvidia-gpu/templates/deviceclass-gpu.yaml). Here the devices are
  the ones the pool's InferenceClass declares: what an operator writes after reading the slices.
- Envoy Gateway (v1.8.1): its gateway-api translator accepts a Gateway of its class and, once
  the proxy Service has an address, writes ``status.addresses`` and the ``Accepted`` and
  ``Programmed`` conditions (internal/gatewayapi/status/gateway.go). No proxy runs here, so the
  stand-in writes that status for every Gateway whose class it controls.
"""

from __future__ import annotations

import json
import time
from typing import Any

from e2e.kubernetes import Cluster

Obj = dict[str, Any]

DRIVER = "gpu.nvidia.com"
GATEWAY_CONTROLLER = "gateway.envoyproxy.io/gatewayclass-controller"


def device_class() -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": DRIVER},
        "spec": {
            "selectors": [
                {
                    "cel": {
                        "expression": (
                            f"device.driver == '{DRIVER}' && "
                            f"device.attributes['{DRIVER}'].type == 'gpu'"
                        )
                    }
                }
            ],
            "extendedResourceName": "nvidia.com/gpu",
        },
    }


def resource_slice(node: str, inference_class: Obj) -> Obj:
    """The slice the driver's kubelet plugin would publish for ``node`` of this class."""
    devices = []
    for kind in inference_class["spec"]["devices"]:
        if kind.get("driver") != DRIVER:
            continue
        attributes = {"type": {"string": "gpu"}, **(kind.get("attributes") or {})}
        for _ in range(int(kind.get("count", 1))):
            index = len(devices)
            devices.append(
                {
                    "name": f"gpu-{index}",
                    "attributes": {**attributes, "uuid": {"string": f"GPU-{node}-{index}"}},
                    "capacity": kind.get("capacity") or {},
                }
            )
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node}-{DRIVER}"},
        "spec": {
            "driver": DRIVER,
            "nodeName": node,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
            "devices": devices,
        },
    }


def gateway_status(gateway: Obj, address: str) -> Obj:
    """The status Envoy Gateway writes for an accepted, programmed Gateway."""
    generation = gateway["metadata"].get("generation", 1)
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())

    def condition(kind: str, reason: str) -> Obj:
        return {
            "type": kind,
            "status": "True",
            "reason": reason,
            "message": f"{reason} (e2e stand-in for Envoy Gateway)",
            "observedGeneration": generation,
            "lastTransitionTime": now,
        }

    listeners = [
        {
            "name": listener["name"],
            "supportedKinds": [{"group": "gateway.networking.k8s.io", "kind": "HTTPRoute"}],
            "attachedRoutes": 0,
            "conditions": [
                condition("Accepted", "Accepted"),
                condition("Programmed", "Programmed"),
                condition("ResolvedRefs", "ResolvedRefs"),
            ],
        }
        for listener in gateway["spec"].get("listeners") or []
    ]
    return {
        "addresses": [{"type": "IPAddress", "value": address}],
        "conditions": [condition("Accepted", "Accepted"), condition("Programmed", "Programmed")],
        "listeners": listeners,
    }


def _programmed(gateway: Obj) -> bool:
    generation = gateway["metadata"].get("generation", 1)
    return any(
        c.get("type") == "Programmed" and c.get("observedGeneration") == generation
        for c in (gateway.get("status") or {}).get("conditions") or []
    )


def _patch_status(cluster: Cluster, resource: str, obj: Obj, status: Obj) -> None:
    meta = obj["metadata"]
    cluster.kubectl(
        "patch",
        resource,
        meta["name"],
        "-n",
        meta["namespace"],
        "--subresource=status",
        "--type=merge",
        "-p",
        json.dumps({"status": status}),
    )


def program_gateways(cluster: Cluster, address: str) -> int:
    """Writes the stand-in status on every Gateway of an Envoy Gateway class not yet programmed
    at its generation, and on the HTTPRoutes attached to them; how many objects it wrote."""
    classes = {
        c["metadata"]["name"]
        for c in cluster.get("gatewayclasses.gateway.networking.k8s.io")["items"]
        if c["spec"].get("controllerName") == GATEWAY_CONTROLLER
    }
    gateways = [
        g
        for g in cluster.get("gateways.gateway.networking.k8s.io", "-A")["items"]
        if g["spec"].get("gatewayClassName") in classes
    ]
    done = 0
    for gateway in gateways:
        if not _programmed(gateway):
            _patch_status(
                cluster,
                "gateways.gateway.networking.k8s.io",
                gateway,
                gateway_status(gateway, address),
            )
            done += 1
    by_key = {(g["metadata"]["namespace"], g["metadata"]["name"]): g for g in gateways}
    for route in cluster.get("httproutes.gateway.networking.k8s.io", "-A")["items"]:
        parents = route_parents(route, by_key, _backends(cluster, route))
        if parents and _settled(parents) != _settled((route.get("status") or {}).get("parents")):
            _patch_status(
                cluster, "httproutes.gateway.networking.k8s.io", route, {"parents": parents}
            )
            done += 1
    return done


def _settled(parents: list[Obj] | None) -> list[Obj]:
    """Parents as compared for a change: without transition times."""
    return [
        {
            **p,
            "conditions": [
                {k: v for k, v in c.items() if k != "lastTransitionTime"}
                for c in p.get("conditions") or []
            ],
        }
        for p in parents or []
    ]


def _backends(cluster: Cluster, route: Obj) -> dict[str, bool]:
    """Whether each backend the route names exists, keyed ``Kind/name``."""
    namespace = route["metadata"]["namespace"]
    found = {}
    for rule in route["spec"].get("rules") or []:
        for ref in rule.get("backendRefs") or []:
            kind = ref.get("kind", "Service")
            resource = {
                "InferencePool": "inferencepools.inference.networking.k8s.io",
                "Backend": "backends.gateway.envoyproxy.io",
            }.get(kind, "services")
            key = f"{kind}/{ref['name']}"
            if key not in found:
                got = cluster.kubectl(
                    "get", resource, ref["name"], "-n", ref.get("namespace", namespace), check=False
                )
                found[key] = got.returncode == 0
    return found


def route_parents(
    route: Obj, gateways: dict[tuple[str, str], Obj], backends: dict[str, bool]
) -> list[Obj]:
    """What Envoy Gateway writes on an HTTPRoute for each parent Gateway of its class
    (internal/gatewayapi/route.go, status/route.go): Accepted when the Gateway has the listener
    the route names and that listener admits the route's namespace; ResolvedRefs when every
    backend it names exists."""
    namespace = route["metadata"]["namespace"]
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    generation = route["metadata"].get("generation", 1)
    missing = sorted(k for k, ok in backends.items() if not ok)
    parents = []
    for ref in route["spec"].get("parentRefs") or []:
        gateway = gateways.get((ref.get("namespace", namespace), ref["name"]))
        if gateway is None or ref.get("kind", "Gateway") != "Gateway":
            continue
        accepted, reason = _admits(gateway, ref.get("sectionName"), namespace)
        resolved = not missing
        parents.append(
            {
                "parentRef": ref,
                "controllerName": GATEWAY_CONTROLLER,
                "conditions": [
                    _condition("Accepted", accepted, reason, generation, now),
                    _condition(
                        "ResolvedRefs",
                        resolved,
                        "ResolvedRefs" if resolved else "BackendNotFound",
                        generation,
                        now,
                        f"backends not found: {', '.join(missing)}" if missing else "",
                    ),
                ],
            }
        )
    return parents


def _admits(gateway: Obj, section: str | None, namespace: str) -> tuple[bool, str]:
    listeners = [
        item
        for item in gateway["spec"].get("listeners") or []
        if section is None or item["name"] == section
    ]
    if not listeners:
        return False, "NoMatchingParent"
    for listener in listeners:
        allowed = ((listener.get("allowedRoutes") or {}).get("namespaces") or {}).get(
            "from", "Same"
        )
        if allowed == "All" or (
            allowed == "Same" and namespace == gateway["metadata"]["namespace"]
        ):
            return True, "Accepted"
    return False, "NotAllowedByListeners"


def _condition(
    kind: str, ok: bool, reason: str, generation: int, now: str, message: str = ""
) -> Obj:
    return {
        "type": kind,
        "status": "True" if ok else "False",
        "reason": reason,
        "message": message or f"{reason} (e2e stand-in for Envoy Gateway)",
        "observedGeneration": generation,
        "lastTransitionTime": now,
    }
