"""Time one ModelDeployment reconcile through FunctionRunner.run(RunFunctionRequest).

Fleets of 10, 100 and 1,000 clusters, one 8-node pool of 8-GPU nodes each, four replicas of
other deployments per cluster, which each cluster publishes in its allocation (a deployment
reads what clusters publish, not the fleet's replicas); the deployment places 3 replicas (as a
scale-up from nothing). Every run carries a fresh tag so the response cache never answers.
Prints milliseconds per reconcile, the growth ratio between fleet sizes, and what converting
every required cluster to a dict alone costs in the same run (the cost the composer is designed
never to pay).

    uv run python bench/bench_fleet.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from pathlib import Path
from typing import Any

from crossplane.function import logging
from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from modelplane.compose.modeldeployment.composer import (
    CLASSES,
    CLUSTERS,
    REPLICAS,
    compose_deployment,
)
from modelplane.compose.registry import default_registry
from modelplane.composer import Registry
from modelplane.function import FunctionRunner
from modelplane.structs import dict_to_struct, struct_to_dict

# The fleet objects are built as the fleet tests build them.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from harness import best_of, retagged

from tests.fleet.builders import (
    API,
    GPU_SELECTOR,
    deployment,
    engine,
    inference_class,
    inference_cluster,
    node_selector,
    placed_member,
    placed_replica,
)
from tests.fleet.published import publish_all

Obj = dict[str, Any]
EXISTING_LIMIT = 1_000  # an existing implementation took ~5,900 ms at 1,000 clusters
H100 = inference_class("h100")


def cluster(i: int) -> Obj:
    """One reachable cluster with one 8-node pool of 8-GPU H100 nodes, in one of four regions."""
    name, labels = f"cluster-{i:04d}", {"region": f"r{i % 4}"}
    return inference_cluster(name, {"h100": ("h100", 8)}, labels=labels, classes=[H100])


def member(gpus: int, pool: str | None = None) -> Obj:
    """A Standalone vLLM member on ``gpus`` GPUs: selecting them, or stamped onto ``pool``."""
    template = {
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
    }
    if pool is not None:
        return placed_member(pool, gpus, template)
    selector = node_selector([("gpu", gpus, [GPU_SELECTOR])])
    return {"role": "Standalone", "nodeSelector": selector, "template": template}


def other_replica(cluster_name: str, k: int) -> Obj:
    engines = [engine("main", member(4, "h100"))]
    replica = placed_replica(f"other-{k}", "team-b", cluster_name, 0, engines)
    replica["status"] = {
        "conditions": [{"type": "ModelServing", "status": "True", "reason": "Ready"}]
    }
    return replica


def scaling_up() -> Obj:
    """The deployment under test: 3 replicas of two 2-GPU copies, none placed yet."""
    return deployment("qwen", engine("main", member(2), copies=2), replicas=3, namespace="team-a")


def request(n: int) -> fnv1.RunFunctionRequest:
    """The composer reads the whole fleet's clusters lazily (classes are few); the replicas it
    requires are its own, none yet."""
    clusters = [cluster(i) for i in range(n)]
    replicas = [other_replica(c["metadata"]["name"], k) for c in clusters for k in range(4)]
    clusters = publish_all(clusters, [H100], replicas)
    req = fnv1.RunFunctionRequest()
    req.observed.composite.resource.CopyFrom(dict_to_struct(scaling_up()))
    for name, items in ((CLUSTERS, clusters), (CLASSES, [H100]), (REPLICAS, [])):
        listed = req.required_resources[name]  # listed, even when nothing matched
        for obj in items:
            listed.items.add().resource.CopyFrom(dict_to_struct(obj))
    return req


def time_reconcile(runner: FunctionRunner, req: fnv1.RunFunctionRequest, repeat: int) -> float:
    """Median milliseconds of single reconciles, each under a fresh tag (no cache answers)."""
    return best_of(retagged(runner, req), repeat=repeat, number=1) * 1000


def time_full_conversion(req: fnv1.RunFunctionRequest, repeat: int) -> float:
    def convert() -> None:
        for r in req.required_resources[CLUSTERS].items:
            struct_to_dict(r.resource)

    return best_of(convert, repeat=repeat, number=1) * 1000


def placed(runner: FunctionRunner, req: fnv1.RunFunctionRequest) -> int:
    """How many replicas one reconcile places; a failed reconcile ends the bench."""
    req.meta.tag = f"count-{time.perf_counter_ns()}"  # a tag the runner's cache has not seen
    rsp = runner.run(req)
    fatal = [r.message for r in rsp.results if r.severity == fnv1.SEVERITY_FATAL]
    if fatal:
        raise SystemExit(f"reconcile failed: {fatal[0]}")
    return sum(1 for k in rsp.desired.resources if k.startswith("replica-"))


def runners() -> dict[str, FunctionRunner]:
    """An edge that converts every required resource, and the shipped one, which hands the
    composer the fleet as lazy Struct views."""
    eager = Registry()
    eager.register(API, "ModelDeployment", compose_deployment)
    return {
        "every cluster converted": FunctionRunner(eager),
        "fleet as lazy views": FunctionRunner(default_registry()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 100, 1000])
    args = parser.parse_args()
    logging.configure(logging.Level.INFO)  # as `modelplane serve` runs: debug lines filtered
    results: dict[str, dict[int, float]] = {}
    edges = runners()
    for n in args.sizes:
        req = request(n)
        for label, runner in edges.items():
            count = placed(runner, req)
            results.setdefault(label, {})[n] = time_reconcile(runner, req, args.repeat)
            print(
                f"{n:>5} clusters, {4 * n:>5} other replicas published, {label}: "
                f"{results[label][n]:8.1f} ms per reconcile ({count} placed)"
            )
        converting = time_full_conversion(req, args.repeat)
        print(f"      converting every cluster to dicts alone: {converting:7.1f} ms")
    for label, times in results.items():
        sizes = sorted(times)
        for a, b in itertools.pairwise(sizes):
            ratio = times[b] / times[a]
            print(f"{label}: {a} -> {b} clusters costs x{ratio:.1f} (fleet x{b // a})")
        if EXISTING_LIMIT in times:
            print(f"{label}: x{5900 / times[EXISTING_LIMIT]:.0f} faster than ~5,900 ms at 1,000")


if __name__ == "__main__":
    main()
