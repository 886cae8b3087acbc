"""The cluster's GPU node pools as the scheduler reads them: each with its class's devices."""

from __future__ import annotations

from modelplane.composer import Condition
from modelplane.kube import objects
from modelplane.kube.objects import Obj
from modelplane.reasons import InferenceCluster


def gpu_pools(node_pools: list[Obj], classes: list[Obj]) -> tuple[list[Obj], list[tuple[str, str]]]:
    """Each node pool with its class's devices, and the (pool, class) pairs whose class is missing.

    ``nodes`` is the pool's declared ``nodeCount``, never ``maxNodeCount``: capacity a cluster
    autoscaler might add is not capacity the scheduler may promise.
    """
    by_name = {objects.name(c): c for c in classes}
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
                "devices": [_device(d) for d in objects.spec(cls).get("devices") or []],
            }
        )
    return pools, missing


def pools_condition(pools: list[Obj], missing: list[tuple[str, str]]) -> Condition:
    resolved = InferenceCluster.POOLS_RESOLVED
    if missing:
        detail = "; ".join(
            f"pool {pool} names InferenceClass {cls}, which does not exist" for pool, cls in missing
        )
        message = f"{detail}; no replica is placed there"
        return Condition(resolved, "False", InferenceCluster.CLASS_NOT_FOUND, message)
    summary = ", ".join(f"{p['name']} ({p['nodes']} nodes)" for p in pools)
    return Condition(resolved, "True", InferenceCluster.CLASSES_FOUND, f"pools: {summary}")


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
