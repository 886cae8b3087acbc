"""What admission costs the function: each case with and without it, taken in turn, as ratios.

`modelplane serve` admits every composite with the project's admission (the XRDs' schemas and
CEL rules, then the composers' own checks) and reads every required and observed resource
through views checked against its schema. For each case, one runner with admission and one
without (`render` and the other benches use the latter) answer the same requests:

- new spec: each call's composite differs (a label), so admission itself runs, uncached: what
  the first reconcile after an edit costs;
- status change: the same composite under a new tag (Crossplane's reconcile after a status
  write): admission is answered from memory, and the inputs are read through checked views;
- fleet: one ModelDeployment reconcile over 1,000 clusters and their 4,000 replicas, every
  one of them read through checked views.

Figures are CPU time of this process (``time.process_time``), batches taken in turn: on a
machine shared with other work, wall time drifts far more than the ratios measured here.

    uv run python bench/bench_admission.py [--repeat 9]
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

from bench_compose_replica import gang_case, seed_case
from crossplane.function import logging
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from harness import calls_per_batch, replica_and_cluster, replica_request

from modelplane.compose.admission import Admission
from modelplane.compose.registry import default_registry
from modelplane.function import FunctionRunner

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench_fleet import request as fleet_request

ROOT = Path(__file__).resolve().parents[1]
_CALLS = itertools.count()


def interleaved(
    named: list[tuple[str, Callable[[], object]]], repeat: int
) -> dict[str, tuple[float, float]]:
    """(median, fastest) CPU seconds per call of each, batches taken in turn."""
    numbers = [calls_per_batch(fn, 0.1) for _, fn in named]
    batches: list[list[float]] = [[] for _ in named]
    for _ in range(repeat):
        for (_, fn), number, out in zip(named, numbers, batches, strict=True):
            start = time.process_time()
            for _ in range(number):
                fn()
            out.append((time.process_time() - start) / number)
    return {
        name: (statistics.median(b), min(b)) for (name, _), b in zip(named, batches, strict=True)
    }


def runners() -> tuple[FunctionRunner, FunctionRunner]:
    admission = Admission.default()
    return (
        FunctionRunner(default_registry(), cache_size=0, admission=admission),
        FunctionRunner(default_registry(), cache_size=0),
    )


def new_spec(runner: FunctionRunner, req: fnv1.RunFunctionRequest) -> Callable[[], object]:
    """Each call a composite admission has not seen: a label differs."""
    fresh = fnv1.RunFunctionRequest()
    fresh.CopyFrom(req)
    meta = fresh.observed.composite.resource.fields["metadata"].struct_value
    labels = meta.fields["labels"].struct_value

    def call() -> object:
        n = next(_CALLS)
        labels.fields["bench"].string_value = str(n)
        fresh.meta.tag = f"spec-{n}"
        return runner.run(fresh)

    return call


def new_tag(runner: FunctionRunner, req: fnv1.RunFunctionRequest) -> Callable[[], object]:
    fresh = fnv1.RunFunctionRequest()
    fresh.CopyFrom(req)

    def call() -> object:
        fresh.meta.tag = f"tag-{next(_CALLS)}"
        return runner.run(fresh)

    return call


def compare(title: str, req: fnv1.RunFunctionRequest, repeat: int, cases: list[str]) -> None:
    admitted, plain = runners()
    for runner in (admitted, plain):
        rsp = runner.run(req)
        fatal = [r.message for r in rsp.results if r.severity == fnv1.SEVERITY_FATAL]
        if fatal:
            raise SystemExit(f"{title}: {fatal[0]}")
    make = {"new spec": new_spec, "status change": new_tag}
    named = []
    for case in cases:
        named += [
            (f"{case}, admitted", make[case](admitted, req)),
            (f"{case}, not admitted", make[case](plain, req)),
        ]
    samples = interleaved(named, repeat=repeat)
    print(title)
    for case in cases:
        on, off = samples[f"{case}, admitted"], samples[f"{case}, not admitted"]
        print(
            f"  {case:<14} admitted {on[0] * 1e3:8.3f} ms   not {off[0] * 1e3:8.3f} ms"
            f"   ratio {on[0] / off[0]:5.2f}x  (fastest {on[1] / off[1]:4.2f}x)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args()
    logging.configure(logging.Level.INFO)
    both = ["new spec", "status change"]
    compare("seed replica (1 engine)", replica_request(*seed_case()), args.repeat, both)
    pd = replica_and_cluster(ROOT / "examples" / "replica-prefill-decode")
    compare("prefill/decode replica", replica_request(*pd), args.repeat, both)
    compare("8-engine gang replica", replica_request(*gang_case()), args.repeat, both)
    fleet = fleet_request(1000)
    fleet.observed.composite.resource.fields["metadata"].struct_value.fields[
        "labels"
    ].struct_value.SetInParent()
    compare("fleet: 1,000 clusters, 4,000 replicas", fleet, max(3, args.repeat // 3), both)


if __name__ == "__main__":
    main()
