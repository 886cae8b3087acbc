"""Times the pure scheduler on fleets of 10, 100 and 1,000 clusters.

Each cluster has one 8-node pool of 8-GPU nodes and hosts 4 replicas of other deployments (in
other namespaces). The deployment under test asks for 3 replicas of a one-engine, 8-GPU model.
Prints the first, median and best time per schedule() call, and growth ratios of the best times
measured in this run (the best is the least disturbed by a busy machine); the whole reconcile
(through RunFunction) is timed by the integrator's bench.

    uv run python bench/bench_scheduler.py
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path
from typing import Any

from modelplane.scheduling.scheduler import schedule

# The fleet objects are built as the fleet tests build them.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.fleet.builders import (
    GPU_SELECTOR,
    declared_cluster,
    deployment,
    engine,
    gpu_device,
    inference_class_of,
    node_selector,
    placed_member,
    placed_replica,
)

MEMORY = 'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) >= 0'
H100 = inference_class_of("h100", [gpu_device(8, "81559Mi", {"productName": {"string": "H100"}})])


def fleet(n: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``n`` clusters, each hosting one 4-GPU replica of each of 4 other deployments."""
    clusters, replicas = [], []
    for c in range(n):
        name = f"cluster-{c:04d}"
        clusters.append(declared_cluster(name, [("h100", "h100", 8)], {"tier": "gpu"}))
        for r in range(4):
            engines = [engine("main", placed_member("h100", 4))]
            replica = placed_replica(f"other-{r}", f"team-{r}", name, c, engines, f"other-{c}-{r}")
            replicas.append(replica)
    return clusters, replicas


STANDALONE = {
    "role": "Standalone",
    "nodeSelector": node_selector([("gpu", 8, [GPU_SELECTOR, MEMORY])]),
    "template": {},
}
DEPLOYMENT = deployment(
    "llm", engine("main", STANDALONE), replicas=3, namespace="ml", selector={"tier": "gpu"}
)


# A gang too big for any pool: nothing fits, so every cluster is explained (the worst case).
LEADER = {**STANDALONE, "role": "Leader"}
WORKER = {**STANDALONE, "role": "Worker", "worker": {"nodes": 8}}
TOO_BIG = deployment("llm", engine("gang", LEADER, WORKER), replicas=3, namespace="ml")


def measure(md: dict[str, Any], n: int, rounds: int, explain: bool) -> tuple[float, float, float]:
    clusters, replicas = fleet(n)
    times = []
    for _ in range(rounds + 1):
        start = time.perf_counter()
        result = schedule(md, clusters, [H100], replicas)
        if explain:
            assert len(result.trace) == n
        times.append(time.perf_counter() - start)
    return times[0], statistics.median(times[1:]), min(times[1:])


def main() -> None:
    for label, md, explain in (
        ("3 replicas placed", DEPLOYMENT, False),
        ("nothing fits, every cluster explained", TOO_BIG, True),
    ):
        print(label)
        results = {}
        for n in (10, 100, 1000):
            first, median, best = measure(md, n, rounds=20 if n < 1000 else 9, explain=explain)
            results[n] = best
            print(
                f"  {n:5d} clusters: first call {first * 1000:7.2f} ms, "
                f"median {median * 1000:7.2f} ms, best {best * 1000:7.2f} ms"
            )
        print(f"  growth 10 -> 100:   x{results[100] / results[10]:.1f} (linear: x10)")
        print(f"  growth 100 -> 1000: x{results[1000] / results[100]:.1f} (linear: x10)")
        print(f"  1,000 clusters vs the 100 ms budget: {results[1000] * 1000 / 100:.2f} of it")


if __name__ == "__main__":
    main()
