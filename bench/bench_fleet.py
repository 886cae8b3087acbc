"""Time one ModelDeployment reconcile through FunctionRunner.run(RunFunctionRequest).

Fleets of 10, 100 and 1,000 clusters, one 8-node pool of 8-GPU nodes each, four replicas of
other deployments per cluster; the deployment places 3 replicas (as a scale-up from nothing).
Every run carries a fresh tag so the response cache never answers. Prints milliseconds per
reconcile, the growth ratio between fleet sizes, and what converting every required replica to
a dict alone costs in the same run (the cost the composer is designed never to pay).

    uv run python bench/bench_fleet.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import time
from typing import Any

from crossplane.function import logging
from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from modelplane.compose import default_registry
from modelplane.composer import Registry
from modelplane.fleet.deployment import CLASSES, CLUSTERS, REPLICAS, compose_deployment
from modelplane.function import FunctionRunner
from modelplane.structs import dict_to_struct, struct_to_dict

Obj = dict[str, Any]
API = "modelplane.ai/v1alpha1"
SELECTOR = 'device.driver == "gpu.nvidia.com"'
EXISTING_LIMIT = 1_000  # an existing implementation took ~5,900 ms at 1,000 clusters


def h100() -> Obj:
    return {
        "apiVersion": API,
        "kind": "InferenceClass",
        "metadata": {"name": "h100"},
        "spec": {
            "devices": [
                {
                    "name": "gpu",
                    "claim": "DRA",
                    "driver": "gpu.nvidia.com",
                    "deviceClassName": "gpu.nvidia.com",
                    "count": 8,
                    "capacity": {"memory": {"value": "81559Mi"}},
                }
            ]
        },
    }


def cluster(i: int) -> Obj:
    name = f"cluster-{i:04d}"
    devices = h100()["spec"]["devices"]
    return {
        "apiVersion": API,
        "kind": "InferenceCluster",
        "metadata": {"name": name, "labels": {"region": f"r{i % 4}"}},
        "spec": {
            "cluster": {"source": "Existing", "existing": {"secretRef": {"name": name}}},
            "stack": "Standard",
            "nodePools": [{"name": "h100", "className": "h100", "nodeCount": 8}],
        },
        "status": {
            "providerConfigRef": {"name": name},
            "gateway": {"address": "10.0.0.1", "name": "inference-gateway", "namespace": "gw"},
            "gpuPools": [{"name": "h100", "nodes": 8, "devices": devices}],
            "conditions": [{"type": "Ready", "status": "True", "reason": "Available"}],
        },
    }


def member(gpus: int, pool: str | None = None) -> Obj:
    m: Obj = {
        "role": "Standalone",
        "template": {
            "spec": {
                "containers": [
                    {
                        "name": "engine",
                        "image": "vllm/vllm-openai:v0.11.0",
                        "args": ["--model", "Qwen/Qwen3-8B", "--tensor-parallel-size", str(gpus)],
                        "env": [{"name": "HF_HOME", "value": "/models"}],
                        "ports": [{"name": "http", "containerPort": 8000}],
                    }
                ]
            }
        },
    }
    request = {"name": "gpu", "count": gpus, "selectors": [{"cel": SELECTOR}]}
    if pool is None:
        m["nodeSelector"] = {"devices": [request]}
    else:
        m["nodePoolName"] = pool
        m["deviceRequests"] = [{**request, "deviceClassName": "gpu.nvidia.com"}]
    return m


def other_replica(cluster_name: str, k: int) -> Obj:
    dep = f"other-{k}"
    return {
        "apiVersion": API,
        "kind": "ModelReplica",
        "metadata": {
            "name": f"{dep}-{cluster_name}-0",
            "namespace": "team-b",
            "labels": {
                "modelplane.ai/deployment": dep,
                "modelplane.ai/deployment-namespace": "team-b",
                "modelplane.ai/cluster": cluster_name,
                "modelplane.ai/replica-index": "0",
            },
        },
        "spec": {
            "clusterName": cluster_name,
            "engines": [{"name": "main", "copies": 1, "members": [member(4, "h100")]}],
        },
        "status": {"conditions": [{"type": "ModelServing", "status": "True", "reason": "Ready"}]},
    }


def deployment() -> Obj:
    return {
        "apiVersion": API,
        "kind": "ModelDeployment",
        "metadata": {"name": "qwen", "namespace": "team-a"},
        "spec": {
            "replicas": 3,
            "template": {
                "metadata": {"labels": {"app": "qwen"}},
                "spec": {"engines": [{"name": "main", "copies": 2, "members": [member(2)]}]},
            },
        },
    }


def request(n: int) -> fnv1.RunFunctionRequest:
    clusters = [cluster(i) for i in range(n)]
    replicas = [other_replica(c["metadata"]["name"], k) for c in clusters for k in range(4)]
    req = fnv1.RunFunctionRequest()
    req.observed.composite.resource.CopyFrom(dict_to_struct(deployment()))
    for name, items in ((CLUSTERS, clusters), (CLASSES, [h100()]), (REPLICAS, replicas)):
        for obj in items:
            req.required_resources[name].items.add().resource.CopyFrom(dict_to_struct(obj))
    return req


"""What the composer reads lazily: the whole fleet's clusters and replicas (classes are few)."""


def time_reconcile(runner: FunctionRunner, req: fnv1.RunFunctionRequest, repeat: int) -> float:
    samples = []
    for i in range(repeat):
        req.meta.tag = f"bench-{i}-{time.perf_counter_ns()}"
        start = time.perf_counter()
        rsp = runner.run(req)
        samples.append(time.perf_counter() - start)
        fatal = [r.message for r in rsp.results if r.severity == fnv1.SEVERITY_FATAL]
        if fatal:
            raise SystemExit(f"reconcile failed: {fatal[0]}")
    return statistics.median(samples) * 1000


def time_full_conversion(req: fnv1.RunFunctionRequest) -> float:
    start = time.perf_counter()
    for r in req.required_resources[REPLICAS].items:
        struct_to_dict(r.resource)
    return (time.perf_counter() - start) * 1000


def placed(runner: FunctionRunner, req: fnv1.RunFunctionRequest) -> int:
    req.meta.tag = f"count-{time.perf_counter_ns()}"
    return sum(1 for k in runner.run(req).desired.resources if k.startswith("replica-"))


def runners() -> dict[str, FunctionRunner]:
    """An edge that converts every required resource, and the shipped one, which hands the
    composer the fleet as lazy Struct views."""
    eager = Registry()
    eager.register(API, "ModelDeployment", compose_deployment)
    return {
        "every replica converted": FunctionRunner(eager),
        "fleet as lazy views": FunctionRunner(default_registry()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 100, 1000])
    args = parser.parse_args()
    logging.configure(logging.Level.DISABLED)
    results: dict[str, dict[int, float]] = {}
    edges = runners()
    for n in args.sizes:
        req = request(n)
        for label, runner in edges.items():
            results.setdefault(label, {})[n] = time_reconcile(runner, req, args.repeat)
            count = placed(runner, req)
            print(
                f"{n:>5} clusters, {4 * n:>5} other replicas, {label}: "
                f"{results[label][n]:8.1f} ms per reconcile ({count} placed)"
            )
        print(f"      converting every replica to dicts alone: {time_full_conversion(req):7.1f} ms")
    for label, times in results.items():
        sizes = sorted(times)
        for a, b in itertools.pairwise(sizes):
            ratio = times[b] / times[a]
            print(f"{label}: {a} -> {b} clusters costs x{ratio:.1f} (fleet x{b // a})")
        if EXISTING_LIMIT in times:
            print(f"{label}: x{5900 / times[EXISTING_LIMIT]:.0f} faster than ~5,900 ms at 1,000")


if __name__ == "__main__":
    main()
