"""Time composing ModelReplicas in process, as ratios to the protobuf-conversion floor.

For each case, in one run:
- floor: converting the request's Structs to dicts and the response's dicts back to Structs
  (the work any Python function does at the gRPC edge, whatever it composes);
- SDK-helper conversion: the same through the SDK's own helpers, which the existing
  implementation is built on (what it pays before composing anything);
- cold: FunctionRunner.RunFunction with a response cache that never hits;
- unchanged: the same runner answering the same request again (Crossplane's common case).

Figures are taken in turn, so their ratios hold while the machine's speed drifts (up to 2x);
each is printed as median and fastest batch, and checked against the existing
implementation's figures (cold no slower, unchanged at least 5x faster).

Usage: uv run python bench/bench_compose_replica.py [--repeat 15]
"""

from __future__ import annotations

import argparse
import copy
from pathlib import Path
from typing import Any

from crossplane.function import logging
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from harness import (
    conversion_floor,
    interleaved,
    replica_and_cluster,
    replica_request,
    sdk_conversion,
    spread_report,
)

from modelplane.compose.registry import default_registry
from modelplane.function import FunctionRunner

Obj = dict[str, Any]
# The existing implementation, in process on this machine class (issue 4): one Standalone
# engine, and prefill/decode with gangs.
SINGLE_ENGINE_MS = 0.7
GANGS_PD_MS = 1.2
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


def bench(name: str, replica: Obj, cluster: Obj, repeat: int, target_ms: float) -> None:
    runner = FunctionRunner(default_registry())
    response = runner.run(replica_request(replica, cluster, tag="probe"))
    if any(r.severity == fnv1.SEVERITY_FATAL for r in response.results):
        raise SystemExit(f"{name}: composing failed: {response.results[0].message}")
    request = replica_request(replica, cluster)
    counter = iter(range(1 << 62))
    uncached = FunctionRunner(default_registry(), cache_size=0)
    cold_requests = replica_request(replica, cluster)

    def cold() -> None:
        cold_requests.meta.tag = f"cold-{next(counter)}"
        uncached.run(cold_requests)

    warm_runner = FunctionRunner(default_registry())
    warm_request = replica_request(replica, cluster, tag="unchanged")
    warm_runner.run(warm_request)

    samples = interleaved(
        [
            ("floor", conversion_floor(request, response)),
            ("SDK-helper conversion", sdk_conversion(request, response)),
            ("cold", cold),
            ("unchanged", lambda: warm_runner.run(warm_request)),
        ],
        repeat,
    )
    title = f"{name}: {len(response.desired.resources)} composed resources"
    print(spread_report(title, samples, target_ms))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15, help="batches (~0.1 s each) per figure")
    args = parser.parse_args()
    # As `modelplane serve` runs by default: debug events are filtered, not formatted.
    logging.configure(logging.Level.INFO)
    bench("seed example (1 Standalone engine)", *seed_case(), args.repeat, SINGLE_ENGINE_MS)
    # Four times the engines of the reference's largest case: the target scales with them.
    bench("8-engine gang replica (LeaderWorkerSets)", *gang_case(), args.repeat, 4 * GANGS_PD_MS)


if __name__ == "__main__":
    main()
