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
                "spec": {
                    "cluster": {"source": "Existing", "existing": {"secretRef": {"name": name}}},
                    "nodePools": [{"name": "h100", "className": "h100", "nodeCount": 8}],
                },
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


# A gang too big for any pool: nothing fits, so every cluster is explained (the worst case).
TOO_BIG = {
    **DEPLOYMENT,
    "spec": {
        **DEPLOYMENT["spec"],
        "template": {
            "spec": {
                "engines": [
                    {
                        "name": "gang",
                        "members": [
                            {**member, "role": role, **extra}
                            for member in DEPLOYMENT["spec"]["template"]["spec"]["engines"][0][
                                "members"
                            ]
                            for role, extra in (
                                ("Leader", {}),
                                ("Worker", {"worker": {"nodes": 8}}),
                            )
                        ],
                    }
                ]
            }
        },
    },
}


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
