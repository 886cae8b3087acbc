"""Times the pure scheduler on fleets of 10, 100 and 1,000 clusters.

Each cluster has one 8-node pool of 8-GPU nodes and hosts 4 replicas of other deployments (in
other namespaces). The deployment under test asks for 3 replicas of a one-engine, 8-GPU model.
Prints the median time per schedule() call and the growth ratios measured in this run; the
whole reconcile (through RunFunction) is timed by the integrator's bench.

    uv run python bench/bench_scheduler.py
"""

from __future__ import annotations

import statistics
import time
from typing import Any

from modelplane.fleet import placement as pl
from modelplane.fleet.scheduler import schedule

GPU = 'device.driver == "gpu.nvidia.com"'
MEMORY = 'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) >= 0'

H100 = {
    "metadata": {"name": "h100"},
    "spec": {
        "devices": [
            {
                "name": "gpu",
                "driver": "gpu.nvidia.com",
                "deviceClassName": "gpu.nvidia.com",
                "count": 8,
                "attributes": {"productName": {"string": "H100"}},
                "capacity": {"memory": {"value": "81559Mi"}},
            }
        ]
    },
}


def fleet(n: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    clusters, replicas = [], []
    for c in range(n):
        name = f"cluster-{c:04d}"
        clusters.append(
            {
                "metadata": {"name": name, "labels": {"tier": "gpu"}},
                "spec": {"nodePools": [{"name": "h100", "className": "h100", "nodeCount": 8}]},
            }
        )
        for r in range(4):
            replicas.append(
                {
                    "metadata": {
                        "name": f"other-{c}-{r}",
                        "namespace": f"team-{r}",
                        "labels": {
                            pl.DEPLOYMENT: f"other-{r}",
                            pl.REPLICA_INDEX: str(c),
                            pl.CLUSTER: name,
                        },
                    },
                    "spec": {
                        "clusterName": name,
                        "engines": [
                            {
                                "name": "main",
                                "copies": 1,
                                "members": [
                                    {
                                        "role": "Standalone",
                                        "nodePoolName": "h100",
                                        "deviceRequests": [
                                            {
                                                "name": "gpu",
                                                "deviceClassName": "gpu.nvidia.com",
                                                "count": 4,
                                                "selectors": [{"cel": GPU}],
                                            }
                                        ],
                                        "template": {},
                                    }
                                ],
                            }
                        ],
                    },
                }
            )
    return clusters, replicas


DEPLOYMENT = {
    "metadata": {"name": "llm", "namespace": "ml"},
    "spec": {
        "replicas": 3,
        "template": {
            "spec": {
                "clusterSelector": {"matchLabels": {"tier": "gpu"}},
                "engines": [
                    {
                        "name": "main",
                        "copies": 1,
                        "members": [
                            {
                                "role": "Standalone",
                                "nodeSelector": {
                                    "devices": [
                                        {
                                            "name": "gpu",
                                            "count": 8,
                                            "selectors": [{"cel": GPU}, {"cel": MEMORY}],
                                        }
                                    ]
                                },
                                "template": {},
                            }
                        ],
                    }
                ],
            }
        },
    },
}


def measure(n: int, rounds: int) -> tuple[float, float]:
    clusters, replicas = fleet(n)
    start = time.perf_counter()
    result = schedule(DEPLOYMENT, clusters, [H100], replicas)
    first = time.perf_counter() - start
    assert result.scheduled == 3, result.shortfall
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        schedule(DEPLOYMENT, clusters, [H100], replicas)
        times.append(time.perf_counter() - start)
    return first, statistics.median(times)


def main() -> None:
    results = {}
    for n in (10, 100, 1000):
        first, median = measure(n, rounds=20 if n < 1000 else 7)
        results[n] = median
        print(f"{n:5d} clusters: first call {first * 1000:7.2f} ms, median {median * 1000:7.2f} ms")
    print(f"growth 10 -> 100:   x{results[100] / results[10]:.1f} (linear: x10)")
    print(f"growth 100 -> 1000: x{results[1000] / results[100]:.1f} (linear: x10)")
    print(f"1,000 clusters vs the 100 ms budget: {results[1000] * 1000 / 100:.2f} of it")


if __name__ == "__main__":
    main()
