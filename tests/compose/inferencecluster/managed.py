"""Managed clusters as the tests declare them, composed through the FunctionRunner."""

from __future__ import annotations

import copy
from typing import Any

from modelplane.compose.inferencecluster.composer import CLASSES, REPLICAS
from modelplane.simulate import simulate_observed
from tests.compose import through
from tests.compose.inferencecluster.support import cluster

Obj = dict[str, Any]

BLOCKS = {
    "EKS": {"region": "us-east-2"},
    "GKE": {"region": "us-west1"},
    "AKS": {"location": "swedencentral"},
}
RECIPES = {
    "EKS": {
        "instanceType": "g6e.12xlarge",
        "diskSizeGb": 500,
        "accelerator": {"type": "nvidia-l40s", "count": 4},
    },
    "GKE": {
        "machineType": "g2-standard-48",
        "diskSizeGb": 500,
        "accelerator": {"type": "nvidia-l4", "count": 4},
    },
    "AKS": {
        "vmSize": "Standard_NC24ads_A100_v4",
        "diskSizeGb": 500,
        "accelerator": {"type": "nvidia-a100", "count": 1},
    },
}
ZONES = {
    "EKS": ["us-east-2b", "us-east-2c"],
    "GKE": ["us-west1-a", "us-west1-b"],
    "AKS": ["1", "2"],
}


def gpu_class(source: str, name: str = "gpu") -> Obj:
    return {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "InferenceClass",
        "metadata": {"name": name},
        "spec": {
            "provisioning": {"provider": source, source.lower(): RECIPES[source]},
            "devices": [
                {
                    "name": "gpu",
                    "driver": "gpu.nvidia.com",
                    "deviceClassName": "gpu.nvidia.com",
                    "count": RECIPES[source]["accelerator"]["count"],
                }
            ],
        },
    }


def managed(source: str, name: str = "west", **spec: Any) -> Obj:
    """A managed cluster with one GPU pool of 2 nodes growing to 6 in two zones, defaulted."""
    pool = {
        "name": "gpua",
        "className": "gpu",
        "nodeCount": 2,
        "minNodeCount": 1,
        "maxNodeCount": 6,
        "zones": ZONES[source],
    }
    block = {"source": source, source.lower(): dict(BLOCKS[source])}
    return cluster(name, **{"cluster": block, "nodePools": [pool], **spec})


def run(ic: Obj, observed: dict[str, Obj] | None = None, **required: Any) -> through.Response:
    source = ic["spec"]["cluster"]["source"]
    reqs = {CLASSES: [gpu_class(source)], REPLICAS: [], **required}
    response = through.run(ic, observed, reqs)
    assert response.fatal is None, response.fatal
    return response


def observed_as_created(response: through.Response) -> dict[str, Obj]:
    return copy.deepcopy(response.resources)


def observed_as_ready(response: through.Response) -> dict[str, Obj]:
    return simulate_observed(copy.deepcopy(response.resources), ready_copies=1)


def provisioned(ic: Obj) -> through.Response:
    """The reconcile once the cloud resources, then the stack, are observed Ready (an AKS
    cluster's subnet role is composed only once the cluster is observed, one reconcile later)."""
    response = run(ic)
    for _ in range(4):
        response = run(ic, observed_as_ready(response))
    return response


def of_kind(response: through.Response, kind: str) -> dict[str, Obj]:
    return {k: r for k, r in response.resources.items() if r["kind"] == kind}


def identity(obj: dict) -> tuple[str, str, str, str]:
    meta = obj["metadata"]
    return (obj["apiVersion"], obj["kind"], meta.get("namespace", ""), meta["name"])


def resolved(usage: dict, ref: dict) -> tuple[str, str, str, str]:
    # A namespaced Usage's of and by are looked up in the Usage's own namespace
    # (crossplane v2.3.4 internal/protection/usage/finder.go indexes ``of`` there).
    return (
        ref["apiVersion"],
        ref["kind"],
        usage["metadata"]["namespace"],
        ref["resourceRef"]["name"],
    )


def waves(composed: dict) -> list[set[str]]:
    """The order Crossplane deletes ``composed`` in: each wave is what no remaining Usage holds."""
    keys = {identity(o): k for k, o in composed.items() if o["kind"] != "Usage"}
    held = [
        (resolved(u, u["spec"]["of"]), resolved(u, u["spec"]["by"]))
        for u in composed.values()
        if u["kind"] == "Usage" and "by" in u["spec"]
    ]
    remaining = set(keys)
    waves = []
    while remaining:
        blocked = {of for of, by in held if by in remaining}
        wave = remaining - blocked
        assert wave, f"a cycle holds {sorted(keys[r] for r in remaining)}"
        waves.append({keys[r] for r in wave})
        remaining -= wave
    return waves


def wave_of(waves: list[set[str]]) -> dict[str, int]:
    return {key: i for i, wave in enumerate(waves) for key in wave}
