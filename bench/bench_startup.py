"""Start-up of the `modelplane` command line against `python -c pass`, measured in one run.

Each round runs every command once, in turn, as a fresh process (so the machine's drift hits
them all alike); the report gives each command's median and fastest wall time, the median as a
ratio to `python -c pass`'s, and what the command adds on top of starting Python.

Byte-code caches are what an installed package has: the runs write theirs to a temporary
``PYTHONPYCACHEPREFIX`` (this environment sets ``PYTHONDONTWRITEBYTECODE``), and one warm-up
round fills it before anything is timed.

    uv run python bench/bench_startup.py [--rounds 15]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "replica-seed" / "replica.yaml"
TARGET_S = 0.5


def commands() -> dict[str, list[str]]:
    script = Path(sys.executable).parent / "modelplane"
    cli = [str(script)] if script.exists() else [sys.executable, "-m", "modelplane"]
    return {
        "python -c pass": [sys.executable, "-c", "pass"],
        "modelplane --help": [*cli, "--help"],
        "modelplane validate --help": [*cli, "validate", "--help"],
        "modelplane validate <example>": [*cli, "validate", str(EXAMPLE)],
        "modelplane explain examples/fleet-gang": [
            *cli,
            "explain",
            str(ROOT / "examples" / "fleet-gang"),
        ],
        "modelplane render examples/replica-seed": [
            *cli,
            "render",
            str(ROOT / "examples" / "replica-seed"),
        ],
    }


def run_once(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="modelplane-pycache-") as cache:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = cache
        todo = commands()
        for argv in todo.values():
            run_once(argv, env)
        times: dict[str, list[float]] = {name: [] for name in todo}
        for _ in range(args.rounds):
            for name, argv in todo.items():
                times[name].append(run_once(argv, env))
    base = statistics.median(times["python -c pass"])
    width = max(map(len, todo))
    print(f"{args.rounds} rounds, each command once per round, in turn; byte-code cached")
    print(f"{'command':<{width}}  median    fastest   x python   over python")
    for name, samples in times.items():
        median = statistics.median(samples)
        print(
            f"{name:<{width}}  {median * 1000:6.0f} ms {min(samples) * 1000:6.0f} ms "
            f"{median / base:7.1f}x   {(median - base) * 1000:6.0f} ms"
        )
    targets = ("modelplane --help", "modelplane validate --help", "modelplane validate <example>")
    for name in targets:
        median = statistics.median(times[name])
        verdict = "met" if median < TARGET_S else "NOT met"
        print(f"target {name} < {TARGET_S * 1000:.0f} ms: {verdict} ({median * 1000:.0f} ms)")


if __name__ == "__main__":
    main()
