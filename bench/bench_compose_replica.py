"""Time composing ModelReplicas in process, as ratios to the protobuf-conversion floor.

For each case, in one run:
- floor: converting the request's Structs to dicts and the response's dicts back to Structs
  (the work any Python function does at the gRPC edge, whatever it composes);
- cold: FunctionRunner.RunFunction with a response cache that never hits;
- unchanged: the same runner answering the same request again (Crossplane's common case).

Usage: uv run python bench/bench_compose_replica.py [--seconds 1.0]
"""

from __future__ import annotations

import argparse
import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

from crossplane.function import logging
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from harness import best_of, conversion_floor, replica_and_cluster, replica_request

from modelplane.compose import default_registry
from modelplane.function import FunctionRunner

Obj = dict[str, Any]
ROOT = Path(__file__).resolve().parents[1]


def seed_case() -> tuple[Obj, Obj]:
    return replica_and_cluster(ROOT / "examples" / "replica-seed")


def gang_case(engines: int = 8) -> tuple[Obj, Obj]:
    """Eight Leader+Worker engines, each two copies of a leader and three workers."""
    replica, cluster = replica_and_cluster(ROOT / "examples" / "replica-gang-standard")
    template = replica["spec"]["engines"][0]
    replica["spec"]["engines"] = [
        {**copy.deepcopy(template), "name": f"shard-{i}"} for i in range(engines)
    ]
    return replica, cluster


def per_call(fn: Callable[[], object], seconds: float) -> float:
    """Median seconds per call over batches of about 0.2 s filling ``seconds`` (5 at least)."""
    return best_of(fn, repeat=max(5, round(seconds / 0.2)))


def bench(name: str, replica: Obj, cluster: Obj, seconds: float) -> None:
    runner = FunctionRunner(default_registry())
    response = runner.run(replica_request(replica, cluster, tag="probe"))
    if any(r.severity == fnv1.SEVERITY_FATAL for r in response.results):
        raise SystemExit(f"{name}: composing failed: {response.results[0].message}")
    floor = conversion_floor(replica_request(replica, cluster), response)
    counter = iter(range(1 << 62))
    uncached = FunctionRunner(default_registry(), cache_size=0)
    cold_requests = replica_request(replica, cluster)

    def cold() -> None:
        cold_requests.meta.tag = f"cold-{next(counter)}"
        uncached.run(cold_requests)

    warm_runner = FunctionRunner(default_registry())
    warm_request = replica_request(replica, cluster, tag="unchanged")
    warm_runner.run(warm_request)

    def unchanged() -> None:
        warm_runner.run(warm_request)

    t_floor = per_call(floor, seconds)
    t_cold = per_call(cold, seconds)
    t_warm = per_call(unchanged, seconds)
    print(f"{name}: {len(response.desired.resources)} composed resources")
    print(f"  floor (Struct conversion) {t_floor * 1e6:9.1f} us   1.00x")
    print(f"  cold RunFunction          {t_cold * 1e6:9.1f} us   {t_cold / t_floor:5.2f}x floor")
    print(f"  unchanged RunFunction     {t_warm * 1e6:9.1f} us   {t_warm / t_floor:5.2f}x floor")
    print(f"  cold / unchanged          {t_cold / t_warm:9.1f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1.0, help="sampling time per measurement")
    args = parser.parse_args()
    # As `modelplane serve` runs by default: debug events are filtered, not formatted.
    logging.configure(logging.Level.INFO)
    bench("seed example (1 Standalone engine)", *seed_case(), args.seconds)
    bench("8-engine gang replica (LeaderWorkerSets)", *gang_case(), args.seconds)


if __name__ == "__main__":
    main()
