"""Time `modelplane render` on a fleet, against the code before issue 13, in the same run.

The fleet: N clusters (one 4-node pool of 8-GPU H100 nodes each, in four regions), N/10
ModelDeployments of 5 replicas each (2 GPUs per replica, in three namespaces), rendered to a
fixed point with admission, as `modelplane render DIR` does. Sizes 20, 50 and 100 clusters
(the last is 100 clusters x 10 deployments x 5 replicas, 160 composites).

The baseline is the code of a git revision (default: 4839986, main before this work),
extracted with `git archive` into a temporary directory, not a worktree. Each render runs in a
fresh process (one small warm-up render of a fleet sharing no names first, so imports and
process-wide caches are paid alike), old and new taken in turn, so a drift in the machine's
speed hits both alike. Prints seconds, passes to settle, the ratio old/new (the median of
paired runs, and medians and fastest compared), the ratio per document rendered, where each
code's time goes (composers, admission, render's own engine), and growth per size step against
the growth in composites.

    uv run python bench/bench_render.py [--repeat 5] [--baseline REV] [--sizes 20 50 100]
"""

from __future__ import annotations

import argparse
import gc
import importlib
import io
import itertools
import json
import re
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BASELINE = "4839986"
REPLICAS = 5

Obj = dict[str, Any]


def fleet(clusters: int, prefix: str = "") -> list[Obj]:
    """The fleet of ``clusters`` clusters and clusters/10 deployments, as the fleet tests build
    its objects; ``prefix`` starts every name (the warm-up's fleet shares none with the
    measured one, so no process-wide memo of either code is warm for it)."""
    sys.path.insert(0, str(ROOT))
    from tests.fleet.builders import declared_cluster, deployment, engine, inference_class, member

    docs = [inference_class("h100")]
    docs += [
        declared_cluster(f"{prefix}c{i:03d}", [("h100", "h100", 4)], {"region": f"r{i % 4}"})
        for i in range(clusters)
    ]
    docs += [
        deployment(
            f"{prefix}m{j:02d}",
            engine("main", member(gpus=2)),
            replicas=REPLICAS,
            namespace=f"ns{j % 3}",
        )
        for j in range(max(1, clusters // 10))
    ]
    return docs


def composites(clusters: int) -> int:
    deployments = max(1, clusters // 10)
    return 1 + clusters + deployments * (1 + REPLICAS)


def extract(rev: str, into: Path) -> Path:
    """The baseline's ``src`` and ``apis`` trees, from ``git archive`` (no worktree)."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", rev, "src", "apis"],
        check=True,
        capture_output=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into / "src"


def worker(src: str, fleet_path: str, skip: bool = False) -> None:
    """One render in this process of the ``modelplane`` under ``src``; prints JSON. ``skip``:
    everything but the measured render (what an instruction count subtracts)."""
    sys.path.insert(0, src)
    import yaml
    from crossplane.function import logging

    import modelplane
    from modelplane import render
    from modelplane.compose.registry import default_registry

    assert str(Path(modelplane.__file__).resolve()).startswith(str(Path(src).resolve()))
    logging.configure(logging.Level.DISABLED)
    passes = [0]
    original = render.Renderer.render_all

    def counted(self: Any) -> Any:
        passes[0] += 1
        return original(self)

    render.Renderer.render_all = counted
    admit = render.api_server_admission()
    registry = default_registry()
    # Where the time goes, alike in both codes: composers, admission, and the rest (render's
    # own engine: requirements, observation, conversion, passes).
    spent = {"composers": 0.0, "admission": 0.0}
    registry._composers = {
        key: timed(composer, spent, "composers") for key, composer in registry._composers.items()
    }
    admit = timed(admit, spent, "admission")
    # As `modelplane render DIR` runs: since clusters compose serving stacks, it observes them
    # installed (else nothing is placed); the baseline has no stacks and places on spec.
    simulate = getattr(importlib.import_module("modelplane.simulate"), "simulate_stack", None)
    render.render_documents(registry, fleet(10, "warm-"), admit=admit, simulate=simulate)
    docs = list(yaml.safe_load_all(Path(fleet_path).read_text()))
    passes[0] = 0
    spent.update(composers=0.0, admission=0.0)
    if skip:
        return
    # CPU time of this process: on a shared machine, other load moves it far less than the
    # wall clock (the render is single-threaded, so the two agree on an idle machine).
    start = time.process_time()
    out = render.render_documents(registry, docs, admit=admit, simulate=simulate)
    # What the cyclic collector still owes for the render's objects (the new code defers it
    # past the render; the old one paid as it went) is counted too.
    gc.collect(0)
    seconds = time.process_time() - start
    print(
        json.dumps(
            {"seconds": seconds, "passes": passes[0], "documents": len(out), **spent},
        )
    )


def timed(f: Any, spent: dict[str, float], key: str) -> Any:
    """``f``, adding the CPU time of each call to ``spent[key]`` (a composer is never called
    within another, nor admission within either)."""

    def call(*args: Any) -> Any:
        start = time.process_time()
        try:
            return f(*args)
        finally:
            spent[key] += time.process_time() - start

    return call


def run(src: Path, fleet_path: Path) -> Obj:
    done = subprocess.run(
        [sys.executable, __file__, "--worker", str(src), str(fleet_path)],
        check=True,
        capture_output=True,
        text=True,
    )
    result: Obj = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def instructions(src: Path, fleet_path: Path) -> int:
    """Instructions the render of ``fleet_path`` executes, counted by valgrind's callgrind: a
    worker's run with the render less one without it (start-up and warm-up cancel out)."""
    counts = []
    for skip in (False, True):
        command = [sys.executable, __file__, "--worker", str(src), str(fleet_path)]
        done = subprocess.run(
            ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *command]
            + (["--skip"] if skip else []),
            check=True,
            capture_output=True,
            text=True,
        )
        found = re.search(r"Collected : (\d+)", done.stderr)
        assert found, done.stderr[-2000:]
        counts.append(int(found.group(1)))
    return counts[0] - counts[1]


def parts(samples: list[Obj]) -> dict[str, float]:
    """Median seconds in composers, in admission, and in the rest: render's own engine."""
    return {
        "composers": statistics.median(s["composers"] for s in samples),
        "admission": statistics.median(s["admission"] for s in samples),
        "engine": statistics.median(
            s["seconds"] - s["composers"] - s["admission"] for s in samples
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--baseline", default=BASELINE)
    parser.add_argument("--sizes", type=int, nargs="+", default=[20, 50, 100])
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="count instructions under valgrind's callgrind instead (drift-proof; minutes)",
    )
    parser.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--skip", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        src, fleet_path = args.worker
        worker(src, fleet_path, skip=args.skip)
        return
    import yaml

    if args.instructions:
        count_instructions(args.baseline, args.sizes)
        return

    with tempfile.TemporaryDirectory() as tmp:
        old_src = extract(args.baseline, Path(tmp) / "baseline")
        new_src = ROOT / "src"
        medians: dict[str, dict[int, float]] = {"old": {}, "new": {}}
        fastest: dict[str, dict[int, float]] = {"old": {}, "new": {}}
        for n in args.sizes:
            path = Path(tmp) / f"fleet-{n}.yaml"
            path.write_text(yaml.safe_dump_all(fleet(n)))
            samples: dict[str, list[Obj]] = {"old": [], "new": []}
            for _ in range(args.repeat):
                for label, src in (("old", old_src), ("new", new_src)):
                    samples[label].append(run(src, path))
            for label in ("old", "new"):
                seconds = [s["seconds"] for s in samples[label]]
                medians[label][n] = statistics.median(seconds)
                fastest[label][n] = min(seconds)
            print(
                f"{n:>4} clusters, {max(1, n // 10):>2} deployments x {REPLICAS} replicas "
                f"({composites(n)} composites), CPU seconds median (fastest):"
            )
            for label in ("old", "new"):
                print(
                    f"     {label}: {medians[label][n]:5.2f} ({fastest[label][n]:5.2f}) in "
                    f"{samples[label][0]['passes']} passes, {samples[label][0]['documents']} docs"
                )
            # Each new render runs right after an old one: their ratio is the least moved by
            # the machine's drift, and its median the figure to judge.
            paired = statistics.median(
                o["seconds"] / w["seconds"]
                for o, w in zip(samples["old"], samples["new"], strict=True)
            )
            print(
                f"     new is {paired:.1f}x faster (median of paired runs; "
                f"{medians['old'][n] / medians['new'][n]:.1f}x median to median, "
                f"{fastest['old'][n] / fastest['new'][n]:.1f}x fastest to fastest)"
            )
            # Since each InferenceCluster composes its serving stack, the same fleet renders
            # several times the documents it did: the time per document rendered compares the
            # work the two codes do for each object they produce.
            docs = {label: samples[label][0]["documents"] for label in ("old", "new")}
            per_doc = (medians["old"][n] / docs["old"]) / (medians["new"][n] / docs["new"])
            print(
                f"     new renders {docs['new'] / docs['old']:.1f}x the documents; "
                f"per document rendered it is {per_doc:.1f}x faster"
            )
            split = {label: parts(samples[label]) for label in ("old", "new")}
            for label in ("old", "new"):
                print(
                    f"     {label} spends (medians): composers {split[label]['composers']:.2f} s, "
                    f"admission {split[label]['admission']:.2f} s, "
                    f"render's own engine {split[label]['engine']:.2f} s"
                )
            engine = split["old"]["engine"] / split["new"]["engine"]
            print(f"     render's own engine is {engine:.1f}x faster")
        for label in ("old", "new"):
            steps = []
            for a, b in itertools.pairwise(args.sizes):
                growth = fastest[label][b] / fastest[label][a]
                steps.append(
                    f"{a}->{b}: x{growth:.2f} (composites x{composites(b) / composites(a):.2f})"
                )
            print(f"{label} growth, fastest: " + "; ".join(steps))


def count_instructions(baseline: str, sizes: list[int]) -> None:
    """Old and new renders of each size counted under callgrind, both codes at once (one
    per core), and their ratio."""
    import yaml

    with tempfile.TemporaryDirectory() as tmp:
        old_src = extract(baseline, Path(tmp) / "baseline")
        for n in sizes:
            path = Path(tmp) / f"fleet-{n}.yaml"
            path.write_text(yaml.safe_dump_all(fleet(n)))
            with ThreadPoolExecutor(2) as pool:
                old, new = pool.map(instructions, [old_src, ROOT / "src"], [path, path])
            print(
                f"{n:>4} clusters: old {old / 1e9:.2f} G instructions, new {new / 1e9:.2f} G: "
                f"new is {old / new:.1f}x fewer"
            )


if __name__ == "__main__":
    main()
