"""Instructions per call, counted by valgrind's callgrind: figures the machine's drift cannot move.

    uv run python bench/bench_instructions.py [examples/replica-seed ...] [--calls 100]

Wall-clock figures on these machines drift by up to 2x within minutes; instruction counts
repeat exactly. For the ModelReplica of each example this counts, per call:

- floor: converting the request's Structs to dicts and the response's dicts back to Structs;
- SDK-helper conversion: the same through the SDK's own helpers (the existing implementation's);
- cold: RunFunction on a running runner whose response cache never hits.

Each figure is the difference between a run making ``--calls`` calls and a run making none,
so start-up cancels out. Instructions are not time (cache misses and allocation cost more
than their count), so read these beside the wall-clock benches, not instead of them.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODES = ("floor", "SDK-helper conversion", "cold")
WARM_UP = 10


def calls_for(mode: str, example: Path) -> Callable[[], object]:
    """The call a worker repeats (imports here: the parent process needs none of them)."""
    from crossplane.function import logging
    from harness import (
        conversion_floor,
        replica_and_cluster,
        replica_request,
        retagged,
        sdk_conversion,
    )

    from modelplane.compose.registry import default_registry
    from modelplane.function import FunctionRunner

    logging.configure(logging.Level.INFO)  # as `modelplane serve` runs
    request = replica_request(*replica_and_cluster(example), tag="probe")
    runner = FunctionRunner(default_registry(), cache_size=0)
    response = runner.run(request)
    return {
        "floor": conversion_floor(request, response),
        "SDK-helper conversion": sdk_conversion(request, response),
        "cold": retagged(runner, request),
    }[mode]


def worker(mode: str, example: Path, calls: int) -> None:
    call = calls_for(mode, example)
    for _ in range(WARM_UP + calls):
        call()


def counted(mode: str, example: Path, calls: int) -> int:
    """Instructions valgrind counts for a worker making ``WARM_UP + calls`` calls."""
    valgrind = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"]
    command = [sys.executable, __file__, "--worker", mode, str(example), "--calls", str(calls)]
    out = subprocess.run(
        [*valgrind, *command],
        capture_output=True,
        text=True,
        check=True,
    )
    found = re.search(r"Collected : (\d+)", out.stderr)
    if found is None:
        raise SystemExit(f"valgrind reported no count for {mode}:\n{out.stderr[-2000:]}")
    return int(found.group(1))


def per_call(example: Path, calls: int) -> dict[str, float]:
    jobs = [(mode, n) for mode in MODES for n in (0, calls)]
    with ThreadPoolExecutor(max_workers=2) as pool:  # two cores: two valgrinds at a time
        totals = dict(
            zip(jobs, pool.map(lambda j: counted(j[0], example, j[1]), jobs), strict=True)
        )
    return {mode: (totals[(mode, calls)] - totals[(mode, 0)]) / calls for mode in MODES}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("examples", nargs="*", default=[str(ROOT / "examples" / "replica-seed")])
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, Path(args.examples[0]), args.calls)
        return
    for example in args.examples:
        counts = per_call(Path(example), args.calls)
        floor = counts["floor"]
        print(f"{Path(example).name}: instructions per call")
        for mode, n in counts.items():
            print(f"  {mode:<24}{n / 1e6:8.3f} M   {n / floor:5.2f}x floor")
        print(f"  cold / SDK-helper conversion: {counts['cold'] / counts[MODES[1]]:.2f}")


if __name__ == "__main__":
    main()
