"""Concurrent load on `modelplane serve`: throughput and p99 latency by worker count.

For each worker count (1, then the CPUs available, or ``--workers``), a real server process
is started on loopback and driven by 16 and 64 concurrent clients sending cold requests (each
under a tag never seen, so the response cache never answers; the content is the same, as a
status change's reconcile). Pairs are taken in turn for several rounds; each figure is
printed beside the one-worker figure of the same run, as a ratio.

Requests are serialized up front (a tag is prepended to the wire bytes) so the client spends
as little CPU as it can: on a two-core machine it shares the cores with the server, whose
gRPC process alone costs about half a millisecond of CPU a call (gRPC Python's own cost).

Cases: the seed replica (~1 ms to compose), the prefill/decode example (~1.5 ms) and an
8-engine gang replica (~5 ms): the more a call composes, the more workers add.

    uv run python bench/bench_serve_load.py [--requests 1000] [--rounds 3] [--workers 1 2]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import grpc
from bench_compose_replica import gang_case
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from harness import replica_and_cluster, replica_request

from modelplane.serve import available_cpus

ROOT = Path(__file__).resolve().parents[1]
METHOD = "/apiextensions.fn.proto.v1.FunctionRunnerService/RunFunction"


CASES = {
    "seed": lambda: replica_and_cluster(ROOT / "examples" / "replica-seed"),
    "prefill-decode": lambda: replica_and_cluster(ROOT / "examples" / "replica-prefill-decode"),
    "gang-8": gang_case,
}


@dataclass(frozen=True)
class Run:
    workers: int
    clients: int
    throughput: float
    """Requests answered per second."""
    p50: float
    p99: float


def tagged(base: bytes, tag: str) -> bytes:
    """``base`` (a serialized request without a tag) with ``meta.tag`` set: serialized
    messages concatenate into their merge."""
    return fnv1.RunFunctionRequest(meta=fnv1.RequestMeta(tag=tag)).SerializeToString() + base


def start(workers: int) -> tuple[subprocess.Popen[bytes], int]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "modelplane",
            "serve",
            "--insecure",
            f"--address=127.0.0.1:{port}",
            f"--workers={workers}",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "METRICS_PORT": "0"},  # metrics counted, not served
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return proc, port
        time.sleep(0.05)
    proc.kill()
    raise SystemExit("the server did not start")


async def drive(port: int, requests: list[bytes], clients: int) -> tuple[float, list[float]]:
    """Seconds for all ``requests`` over ``clients`` concurrent callers, and each latency."""
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        call = channel.unary_unary(METHOD)
        latencies: list[float] = []
        queue = iter(requests)

        async def client() -> None:
            for raw in queue:
                start = time.perf_counter()
                await call(raw, timeout=120)
                latencies.append(time.perf_counter() - start)

        start = time.perf_counter()
        await asyncio.gather(*(client() for _ in range(clients)))
        return time.perf_counter() - start, latencies


def measure(
    base: bytes, counts: list[int], clients: list[int], n: int, rounds: int
) -> dict[tuple[int, int], Run]:
    """Every (workers, clients) pair, one server per worker count alive throughout and the
    pairs taken in turn, ``rounds`` times: a drift in machine speed hits every pair alike.
    Each pair's median round is kept."""
    servers = {w: start(w) for w in counts}
    tags = iter(range(10**9))
    try:
        for w, (_, port) in servers.items():
            # Warm every worker (first calls fill per-process caches).
            warm = [tagged(base, f"warm-{next(tags)}") for _ in range(8 * w)]
            asyncio.run(drive(port, warm, 2 * w))
        samples: dict[tuple[int, int], list[Run]] = {}
        for _ in range(rounds):
            for c in clients:
                for w, (_, port) in servers.items():
                    batch = [tagged(base, f"cold-{next(tags)}") for _ in range(n)]
                    seconds, latencies = asyncio.run(drive(port, batch, c))
                    cuts = statistics.quantiles(latencies, n=100)
                    run = Run(w, c, n / seconds, cuts[49], cuts[98])
                    samples.setdefault((w, c), []).append(run)
        return {
            key: sorted(runs, key=lambda r: r.throughput)[len(runs) // 2]
            for key, runs in samples.items()
        }
    finally:
        for proc, _ in servers.values():
            proc.terminate()
            proc.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("cases", nargs="*", help=f"of {', '.join(CASES)} (default: all)")
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--clients", type=int, nargs="+", default=[16, 64])
    parser.add_argument("--workers", type=int, nargs="+", default=None)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    counts = args.workers or sorted({1, available_cpus()})
    print(f"CPUs available: {available_cpus()}; worker counts: {counts}")
    for case in args.cases or list(CASES):
        req = replica_request(*CASES[case]())
        requests = max(200, args.requests // (5 if case == "gang-8" else 1))
        runs = measure(req.SerializeToString(), counts, args.clients, requests, args.rounds)
        print(f"{case}: {requests} cold requests a round, median of {args.rounds}")
        for w in counts:
            for c in args.clients:
                r, one = runs[(w, c)], runs[(counts[0], c)]
                print(
                    f"  workers {w}, {c:>2} clients: {r.throughput:7.0f} req/s "
                    f"(x{r.throughput / one.throughput:.2f}), p50 {r.p50 * 1e3:6.1f} ms, "
                    f"p99 {r.p99 * 1e3:6.1f} ms (x{r.p99 / one.p99:.2f})"
                )


if __name__ == "__main__":
    main()
