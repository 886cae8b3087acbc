"""Time RunFunction three ways in one run, each reported as a ratio to the conversion floor.

    uv run python bench/harness.py examples/replica-seed [more inputs...]

For each composite in the inputs, render's required-resources loop builds the request a
steady-state reconcile sends. That request is then timed:

- floor: converting the request's Structs to dicts and the response's dicts back to Structs,
  nothing else. A function written naively on the SDK pays at least this.
- cold: in process, a running FunctionRunner whose response cache never hits.
- unchanged: in process, the same runner and request again (Crossplane's common case).
- new tag: in process, the same runner, the same content under a new tag: what a reconcile
  after an observed status change costs when the desired state comes out the same.
- grpc cold / grpc unchanged: the same over a loopback connection to `modelplane serve`.

Machines here are noisy, so absolute times are printed only for orientation; compare ratios.
"""

from __future__ import annotations

import argparse
import itertools
import os
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import yaml
from crossplane.function import logging
from crossplane.function import resource as sdk_resource
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1

from modelplane import manifests
from modelplane.composer import Registry
from modelplane.function import FunctionRunner
from modelplane.render import Renderer
from modelplane.structs import dict_to_struct, struct_to_dict


@dataclass(frozen=True)
class Timing:
    name: str
    seconds: float


def calls_per_batch(fn: Callable[[], object], seconds: float) -> int:
    """How many calls of ``fn`` (timed once) fill about ``seconds``; 1 to 2,000."""
    start = time.perf_counter()
    fn()
    once = max(time.perf_counter() - start, 1e-6)
    return max(1, min(2000, int(seconds / once)))


def best_of(fn: Callable[[], object], *, repeat: int = 5, number: int = 0) -> float:
    """Median of ``repeat`` batches, each timing ``number`` calls (auto-sized to ~0.2 s)."""
    return sampled(fn, repeat=repeat, number=number)[0]


def sampled(fn: Callable[[], object], *, repeat: int = 5, number: int = 0) -> tuple[float, float]:
    """(median, fastest) seconds per call over ``repeat`` batches of ``number`` calls.

    This machine's speed drifts by up to 2x over minutes; the fastest batch shows the code at
    the machine's quick phase, the median what a run typically sees.
    """
    if number <= 0:
        number = calls_per_batch(fn, 0.2)
    batches = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        batches.append((time.perf_counter() - start) / number)
    return statistics.median(batches), min(batches)


def conversion_floor(
    req: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse
) -> Callable[[], object]:
    """Only the Struct conversions a function cannot avoid: request in, response out."""
    structs = [req.observed.composite.resource]
    structs += [r.resource for r in req.observed.resources.values()]
    structs += [i.resource for rs in req.required_resources.values() for i in rs.items]
    desired = [struct_to_dict(r.resource) for r in rsp.desired.resources.values()]
    desired.append(struct_to_dict(rsp.desired.composite.resource))

    def convert() -> None:
        for s in structs:
            struct_to_dict(s)
        for d in desired:
            dict_to_struct(d)

    return convert


def sdk_conversion(
    req: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse
) -> Callable[[], object]:
    """The floor's conversions through the SDK's own helpers (``resource.struct_to_dict`` in,
    ``resource.update`` out): what a function written the SDK's way pays before it composes."""
    structs = [req.observed.composite.resource]
    structs += [r.resource for r in req.observed.resources.values()]
    structs += [i.resource for rs in req.required_resources.values() for i in rs.items]
    desired = {k: struct_to_dict(r.resource) for k, r in rsp.desired.resources.items()}

    def convert() -> fnv1.RunFunctionResponse:
        for s in structs:
            sdk_resource.struct_to_dict(s)
        out = fnv1.RunFunctionResponse()
        for k, d in desired.items():
            sdk_resource.update(out.desired.resources[k], d)
        return out

    return convert


def in_process(registry: Registry, req: fnv1.RunFunctionRequest) -> list[Timing]:
    warm = FunctionRunner(registry)
    rsp = warm.run(req)
    return [
        Timing("floor", best_of(conversion_floor(req, rsp))),
        Timing("cold", best_of(retagged(FunctionRunner(registry, cache_size=0), req))),
        Timing("unchanged", best_of(lambda: warm.run(req))),
        Timing("new tag", best_of(retagged(warm, req))),
    ]


# One count for the process: the response cache answers by tag, so no tag may come twice, even
# for another request to the same runner.
_TAGS = itertools.count()


def retagged(runner: FunctionRunner, req: fnv1.RunFunctionRequest) -> Callable[[], object]:
    """Calls ``runner`` with ``req``'s content under a tag it has never seen."""
    fresh = fnv1.RunFunctionRequest()
    fresh.CopyFrom(req)

    def call() -> object:
        fresh.meta.tag = f"status-changed-{next(_TAGS)}"
        return runner.run(fresh)

    return call


def over_grpc(req: fnv1.RunFunctionRequest) -> list[Timing]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, "-m", "modelplane", "serve", "--insecure", f"--address=127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "METRICS_PORT": "0"},  # metrics counted, not served
    )
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            grpc.channel_ready_future(channel).result(timeout=30)
            stub = grpcv1.FunctionRunnerServiceStub(channel)
            counter = iter(range(10**9))

            def cold() -> None:
                fresh = fnv1.RunFunctionRequest()
                fresh.CopyFrom(req)
                fresh.meta.tag = f"cold-{next(counter)}"  # a new tag misses the response cache
                stub.RunFunction(fresh)

            steady = fnv1.RunFunctionRequest()
            steady.CopyFrom(req)
            steady.meta.tag = "steady"
            return [
                Timing("grpc cold", best_of(cold)),
                Timing("grpc unchanged", best_of(lambda: stub.RunFunction(steady))),
            ]
    finally:
        server.terminate()
        server.wait(timeout=15)


@dataclass(frozen=True)
class Sample:
    name: str
    median: float
    fastest: float


def interleaved(named: list[tuple[str, Callable[[], object]]], repeat: int = 9) -> list[Sample]:
    """Each function's median and fastest batch, the batches taken in turn (one of each, then
    again): a drift in machine speed then hits every figure alike and the ratios hold."""
    numbers = [calls_per_batch(fn, 0.1) for _, fn in named]
    batches: list[list[float]] = [[] for _ in named]
    for _ in range(repeat):
        for (_, fn), number, out in zip(named, numbers, batches, strict=True):
            start = time.perf_counter()
            for _ in range(number):
                fn()
            out.append((time.perf_counter() - start) / number)
    return [
        Sample(name, statistics.median(b), min(b))
        for (name, _), b in zip(named, batches, strict=True)
    ]


def spread_report(title: str, samples: list[Sample], target_ms: float | None = None) -> str:
    """Median and fastest per call, as ratios to the floor; then the cold and unchanged targets
    against the existing implementation's ``target_ms`` (cold no slower, unchanged 5x faster)."""
    floor = next(s for s in samples if s.name == "floor")
    lines = [title, f"  {'':24}{'median':>10}{'fastest':>12}   median/floor"]
    for s in samples:
        lines.append(
            f"  {s.name:<24}{s.median * 1e3:7.3f} ms{s.fastest * 1e3:9.3f} ms"
            f"   {s.median / floor.median:6.2f}x"
        )
    if target_ms is not None:
        cold = next(s for s in samples if s.name == "cold")
        warm = next(s for s in samples if s.name == "unchanged")
        lines.append(
            f"  target cold <= {target_ms} ms: median {_verdict(cold.median, target_ms)}, "
            f"fastest {_verdict(cold.fastest, target_ms)}; "
            f"unchanged <= {target_ms / 5:.2f} ms: {_verdict(warm.median, target_ms / 5)}"
        )
    return "\n".join(lines)


def _verdict(seconds: float, target_ms: float) -> str:
    return f"{'met' if seconds * 1e3 <= target_ms else 'NOT met'} ({seconds * 1e3:.3f} ms)"


def report(title: str, timings: list[Timing]) -> str:
    floor = next(t.seconds for t in timings if t.name == "floor")
    lines = [title]
    for t in timings:
        lines.append(f"  {t.name:<16} {t.seconds * 1e3:9.3f} ms   {t.seconds / floor:7.2f}x floor")
    return "\n".join(lines)


def replica_and_cluster(directory: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """The one ModelReplica and the one InferenceCluster among an example's manifests."""
    docs = [d for p in sorted(directory.glob("*.yaml")) for d in yaml.safe_load_all(p.read_text())]
    (replica,) = [d for d in docs if d and d["kind"] == "ModelReplica"]
    (cluster,) = [d for d in docs if d and d["kind"] == "InferenceCluster"]
    return replica, cluster


def replica_request(
    replica: dict[str, Any], cluster: dict[str, Any], tag: str = ""
) -> fnv1.RunFunctionRequest:
    """What Crossplane sends for ``replica`` once its required cluster has been fetched."""
    req = fnv1.RunFunctionRequest(meta=fnv1.RequestMeta(tag=tag))
    req.observed.composite.resource.CopyFrom(dict_to_struct(replica))
    req.required_resources["cluster"].items.add().resource.CopyFrom(dict_to_struct(cluster))
    return req


def requests_for(paths: list[str], registry: Registry) -> list[tuple[str, fnv1.RunFunctionRequest]]:
    renderer = Renderer(registry, [m.obj for m in manifests.load(paths)])
    out = []
    for rendered in renderer.render_all():
        assert rendered.request is not None
        out.append((manifests.identity(rendered.composite), rendered.request))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--no-grpc", action="store_true", help="skip the loopback server")
    args = parser.parse_args()
    logging.configure(logging.Level.INFO)  # as `modelplane serve` runs: debug lines filtered
    from modelplane.compose.registry import default_registry

    registry = default_registry()
    for name, req in requests_for(args.paths, registry):
        req.meta.tag = "bench"
        timings = in_process(registry, req)
        if not args.no_grpc:
            timings += over_grpc(req)
        print(report(f"{name} ({req.ByteSize()} request bytes)", timings))


if __name__ == "__main__":
    main()
