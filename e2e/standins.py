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


def program_gateways(cluster: Cluster, address: str) -> int:
    """Writes the stand-in status on every Gateway of an Envoy Gateway class; how many."""
    classes = {
        c["metadata"]["name"]
        for c in cluster.get("gatewayclasses.gateway.networking.k8s.io")["items"]
        if c["spec"].get("controllerName") == GATEWAY_CONTROLLER
    }
    done = 0
    for gateway in cluster.get("gateways.gateway.networking.k8s.io", "-A")["items"]:
        if gateway["spec"].get("gatewayClassName") not in classes:
            continue
        status = gateway_status(gateway, address)
        patch = {"status": status}
        meta = gateway["metadata"]
        cluster.kubectl(
            "patch",
            "gateways.gateway.networking.k8s.io",
            meta["name"],
            "-n",
            meta["namespace"],
            "--subresource=status",
            "--type=merge",
            "-p",
            json.dumps(patch),
        )
        done += 1
    return done
