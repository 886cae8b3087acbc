"""Memory of `modelplane serve` under large concurrent requests, bounded and unbounded, in one run.

The scenario of issue 39: ``--clients`` concurrent ModelDeployment requests of about ``--mib``
MiB each (a fleet of clusters with every replica on them required, each under its own tag so
none joins another or hits the cache), and an ordinary call (the seed replica) sent just behind
them. Each configuration runs a real server process on loopback with two workers:

- unbounded: ``--max-inflight-size`` and ``--max-concurrent-rpcs`` too large to matter, as the
  server was before they existed;
- bounded: the defaults.

The configurations are taken in turn (``--rounds``); every figure of one round comes from that
round. The resident memory of the server and its workers is sampled every 20 ms and summed; the
peak is printed as MiB and as a ratio to the same server idle (after one warm-up call), and the
bounded peak as a ratio to the unbounded one. So is what the large calls got (composed, refused
RESOURCE_EXHAUSTED, or anything else), how long the ordinary call waited and what it got, and a
worker's largest growth as a multiple of the request's size.

    uv run python bench/bench_serve_memory.py [--mib 48] [--clients 12] [--rounds 1]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import grpc
from crossplane.function.proto.v1 import run_function_pb2 as fnv1

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tests.test_serve import fleet_request, seed_request  # noqa: E402

METHOD = "/apiextensions.fn.proto.v1.FunctionRunnerService/RunFunction"
MIB = 1024 * 1024
CONFIGS = {
    "unbounded": ["--max-inflight-size=1000000", "--max-concurrent-rpcs=1000000"],
    "bounded": [],
}


@dataclass
class Outcome:
    config: str
    idle: float = 0.0
    """MiB resident, the server and its workers, after a warm-up call."""
    peak: float = 0.0
    worker_growth: float = 0.0
    """The largest growth of one worker over its idle size, MiB."""
    large: dict[str, int] = field(default_factory=dict)
    ordinary: str = ""
    ordinary_seconds: float = 0.0
    seconds: float = 0.0


def tagged(base: bytes, tag: str) -> bytes:
    """``base`` (serialized, untagged) with ``meta.tag`` set: serialized messages concatenate."""
    return fnv1.RunFunctionRequest(meta=fnv1.RequestMeta(tag=tag)).SerializeToString() + base


def large_request(mib: float) -> bytes:
    """A ModelDeployment request on 250 clusters, with enough replicas on them to weigh ``mib``."""
    per_cluster = 4
    probe = fleet_request(clusters=250, per_cluster=per_cluster).ByteSize()
    per_cluster = max(1, round(per_cluster * mib * MIB / probe))
    req = fleet_request(clusters=250, per_cluster=per_cluster)
    req.meta.tag = ""
    return req.SerializeToString()


def tree(root: int) -> list[int]:
    """``root`` and its children (the workers)."""
    pids = [root]
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                if int(stat[1]) == root:
                    pids.append(int(entry.name))
    return pids


def rss(pid: int) -> float:
    """MiB resident."""
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


class Sampler(threading.Thread):
    def __init__(self, root: int) -> None:
        super().__init__(daemon=True)
        self.root = root
        self.peak = 0.0
        self.per_pid: dict[int, float] = {}
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            total = 0.0
            for pid in tree(self.root):
                size = rss(pid)
                total += size
                self.per_pid[pid] = max(self.per_pid.get(pid, 0.0), size)
            self.peak = max(self.peak, total)
            time.sleep(0.02)


def start(args: list[str]) -> tuple[subprocess.Popen[bytes], int]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    proc = subprocess.Popen(
        [
            *(sys.executable, "-m", "modelplane", "serve", "--insecure", "--workers=2"),
            *(f"--address=127.0.0.1:{port}", "--metrics-address="),
            *args,
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return proc, port
        time.sleep(0.1)
    proc.kill()
    raise SystemExit("the server did not start")


def run(config: str, large: bytes, clients: int) -> Outcome:
    out = Outcome(config)
    proc, port = start(CONFIGS[config])
    options = [("grpc.max_send_message_length", 1 << 30)]
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}", options=options) as channel:
            call = channel.unary_unary(METHOD, request_serializer=None, response_deserializer=None)
            ordinary = seed_request().SerializeToString()
            call(tagged(ordinary, "warm-up"), timeout=120)
            idle = {pid: rss(pid) for pid in tree(proc.pid)}
            out.idle = sum(idle.values())
            sampler = Sampler(proc.pid)
            sampler.start()
            t0 = time.monotonic()
            futures = [
                call.future(tagged(large, f"large-{i}"), timeout=600) for i in range(clients)
            ]
            time.sleep(0.5)
            t1 = time.monotonic()
            try:
                call(tagged(ordinary, "ordinary"), timeout=60)
                out.ordinary = "OK"
            except grpc.RpcError as e:
                out.ordinary = e.code().name
            out.ordinary_seconds = time.monotonic() - t1
            for f in futures:
                try:
                    f.result()
                    code = "OK"
                except grpc.RpcError as e:
                    code = e.code().name
                out.large[code] = out.large.get(code, 0) + 1
            out.seconds = time.monotonic() - t0
            sampler.done.set()
            sampler.join()
            out.peak = sampler.peak
            workers = [p for p in idle if p != proc.pid and p in sampler.per_pid]
            out.worker_growth = max((sampler.per_pid[p] - idle[p] for p in workers), default=0.0)
    finally:
        proc.kill()
        proc.wait(timeout=30)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mib", type=float, default=48)
    parser.add_argument("--clients", type=int, default=12)
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    large = large_request(args.mib)
    size = len(large) / MIB
    print(f"{args.clients} requests of {size:.1f} MiB, 2 workers, {os.cpu_count()} CPUs")
    for r in range(args.rounds):
        results = {c: run(c, large, args.clients) for c in CONFIGS}
        print(f"round {r + 1}")
        for o in results.values():
            large_calls = ", ".join(f"{n} {code}" for code, n in sorted(o.large.items()))
            print(
                f"  {o.config:9}  idle {o.idle:6.0f} MiB  peak {o.peak:6.0f} MiB "
                f"({o.peak / o.idle:4.1f}x idle)  worker growth {o.worker_growth / size:4.1f}x "
                f"the request  large: {large_calls}  ordinary: {o.ordinary} after "
                f"{o.ordinary_seconds:.1f} s  all answered in {o.seconds:.0f} s"
            )
        bounded, unbounded = results["bounded"], results["unbounded"]
        print(f"  bounded peak / unbounded peak: {bounded.peak / unbounded.peak:.2f}")


if __name__ == "__main__":
    main()
