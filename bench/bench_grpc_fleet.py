"""Time fleet-scale RunFunction calls over real gRPC, against a baseline commit in the same run.

The fleet is cloned from what `modelplane render examples/fleet-two-classes
--simulate-ready-copies 1` leaves: its two InferenceClusters (taken in turn) renamed
``c00000``, ``c00001``..., and on each cluster 4 serving clones of the qwen3-8b ModelReplica
render placed there, owned by 4 other deployments. Each code (the baseline and this checkout)
renders the example itself, so what either writes into status is what it is sent back.

The ModelDeployment under test is the example's qwen3-8b:

- scale-up: asking for 3 replicas, none placed yet;
- steady state: the same once the scale-up's replicas are composed, observed serving and
  listed in the fleet, its status what the scale-up wrote (a new tag: a status change).

Requirements are resolved as Crossplane resolves them: the first call carries none, each answer
names requirements, and the next call carries the fleet's objects that match them, until the
requirements stop changing. The last call (the one with the fleet) is timed, each under a tag
never seen (the response cache never answers), over loopback to a `modelplane serve` of each
code, the two codes' calls taken in turn so a drift in the machine's speed hits both alike.
The baseline's server accepts requests of up to 1 GiB (its 10,000-cluster request exceeds the
default 64 MiB); this checkout's runs with the defaults, and a request over its limit is
reported refused (and timed on a second server with the limit raised, for the figure).

Prints, per size and state: request bytes, milliseconds per call as the caller waits and as
CPU time of the server and its worker (median and fastest; on a shared machine the wall clock
doubles with others' load, the CPU time far less), the baseline/new ratios of bytes and CPU,
and growth from the first size to the last. Other kinds, measured the same way on the
examples' objects: an InferenceGateway (at every size) and a ModelService (examples/service-
regional, over 1,000 clusters) with an endpoint and a replica of the service on each cluster,
and an InferenceCluster with its whole stack observed (about 40 composed resources).

    uv run python bench/bench_grpc_fleet.py [--sizes 1000 10000] [--repeat 3] [--baseline REV]

``--instructions`` counts instead, under valgrind's callgrind, the instructions of the
ModelDeployment's request path in process (the worker's: the serialized request decoded, run
through the FunctionRunner with admission, the response serialized) for the same requests the
gRPC cases send, at each size and state: a worker's run with one such call less one without it,
both after the same warm-up call. Instructions repeat exactly whatever the machine's load, so
their growth from the first size to the last, printed next to the bytes', says whether the
work grows linearly; time that grows faster than they do is the memory hierarchy.
``--callgrind-out DIR`` keeps each run's profile there, the run without the call beside it
(``callgrind.STATE-SIZE`` and ``.without``): ``callgrind_annotate`` of both, subtracted, is
the call's instructions per function. ``--cache-sim`` also simulates the machine's caches
(slower) and reports the last-level misses and their growth.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
from bench_render import extract
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from google.protobuf import struct_pb2

from modelplane.function import read_requirement
from modelplane.structs import dict_to_struct, struct_to_dict

ROOT = Path(__file__).resolve().parents[1]
BASELINE = "4995454"
API_VERSION = "modelplane.ai/v1alpha1"
RENDER_FLAGS = ("--simulate-ready-copies", "1", "-o", "json")
DEFAULT_RECV_MIB = 64
RAISED_MIB = 1024
"""The limit of the baseline's server, and of the server that resolves requirements."""
METHOD = "/apiextensions.fn.proto.v1.FunctionRunnerService/RunFunction"
PER_CLUSTER = 4
DEPLOYMENT = ("ml-team", "qwen3-8b")
SCALE_UP_REPLICAS = 3
STAMP = "2026-12-01T00:00:00Z"
MAX_ITERATIONS = 5
"""Crossplane's ``MaxRequirementsIterations`` (internal/xfn/required_resources.go, v2.3.4): it
calls a function up to one more time than this, then gives up."""

Obj = dict[str, Any]


@dataclass
class Code:
    """One code under test: its source tree and its servers."""

    label: str
    src: Path
    recv_mib: int
    """The request limit of the server timed (the default, or raised for the baseline)."""
    servers: dict[int, tuple[subprocess.Popen[bytes], int]] = field(default_factory=dict)
    """By request limit in MiB: a server process and its port."""
    rendered: dict[str, list[Obj]] = field(default_factory=dict)
    """What its render printed, by example."""

    def accepts(self, case: Case) -> bool:
        return len(case.request) <= self.recv_mib * 2**20

    def port(self, case: Case | None = None) -> int:
        """The timed server's port, or the raised one's for a request over its limit (and
        for resolving requirements, whatever their size)."""
        return self.servers[self._limit(case)][1]

    def pid(self, case: Case) -> int:
        return self.servers[self._limit(case)][0].pid

    def _limit(self, case: Case | None) -> int:
        return self.recv_mib if case is not None and self.accepts(case) else RAISED_MIB

    def env(self) -> dict[str, str]:
        return {
            **os.environ,
            "PYTHONPATH": str(self.src),
            "MODELPLANE_APIS": str(self.src.parent / "apis"),
        }


def render(code: Code, example: Path) -> list[Obj]:
    """What ``code``'s `modelplane render EXAMPLE --simulate-ready-copies 1` prints."""
    done = subprocess.run(
        [sys.executable, "-m", "modelplane", "render", str(example), *RENDER_FLAGS],
        capture_output=True,
        text=True,
        env=code.env(),
        check=False,
    )
    if done.returncode not in (0, 3):
        raise SystemExit(f"{code.label}: render failed: {done.stderr[-2000:]}")
    items: list[Obj] = json.loads(done.stdout)["items"]
    return [as_stored(o) for o in items]


def as_stored(obj: Obj) -> Obj:
    """``obj`` as the API server holds it once Crossplane has written its conditions, each
    with a ``lastTransitionTime`` (render prints none)."""
    for c in (obj.get("status") or {}).get("conditions") or []:
        c.setdefault("lastTransitionTime", STAMP)
    return obj


def start(code: Code) -> None:
    """A server at ``code``'s limit, and one at ``RAISED_MIB`` unless that is the same."""
    for limit in sorted({code.recv_mib, RAISED_MIB}):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = int(s.getsockname()[1])
        command = [sys.executable, "-m", "modelplane", "serve", "--insecure"]
        command += [f"--address=127.0.0.1:{port}", "--workers=1"]
        command.append(f"--max-recv-message-size={limit}")
        if limit == RAISED_MIB:  # answers over 4 MiB timed too (the report flags them)
            command.append(f"--max-send-message-size={limit}")
        if serves_metrics(code):
            command.append("--metrics-address=")  # none: every server would want one port
        process = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=code.env()
        )
        code.servers[limit] = (process, port)
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            grpc.channel_ready_future(channel).result(timeout=120)


def serves_metrics(code: Code) -> bool:
    """Whether ``code``'s server takes ``--metrics-address`` (the baseline's does not)."""
    done = subprocess.run(
        [sys.executable, "-m", "modelplane", "serve", "--help"],
        capture_output=True,
        text=True,
        env=code.env(),
        check=True,
    )
    return "--metrics-address" in done.stdout


def stop(code: Code) -> None:
    for process, _ in code.servers.values():
        process.terminate()
        process.wait(timeout=30)


def renamed(obj: Obj, pairs: list[tuple[str, str]]) -> Obj:
    """``obj`` with every string occurrence of each old name replaced, in order."""
    text = json.dumps(obj)
    for old, new in pairs:
        text = text.replace(old, new)
    out: Obj = json.loads(text)
    return out


@dataclass
class Fleet:
    """Every object of the fleet, each with its Struct built once."""

    objects: list[tuple[Obj, struct_pb2.Struct]]

    @classmethod
    def of(cls, objects: Iterable[Obj]) -> Fleet:
        return cls([(o, dict_to_struct(o)) for o in objects])

    def matching(self, selector: fnv1.ResourceSelector) -> list[struct_pb2.Struct]:
        """What Crossplane lists for ``selector``: by name, or every object matching its
        labels (in every namespace when it names none), ordered by namespace/name
        (``ExistingRequiredResourcesFetcher.Fetch``, internal/xfn/required_resources.go)."""
        want = read_requirement(selector)
        out = []
        for obj, struct in self.objects:
            meta = obj["metadata"]
            if obj["apiVersion"] != want.api_version or obj["kind"] != want.kind:
                continue
            if want.namespace and meta.get("namespace") != want.namespace:
                continue
            key = f"{meta.get('namespace') or ''}/{meta['name']}"
            if want.match_name is not None:
                if meta["name"] == want.match_name:
                    out.append((key, struct))
                continue
            labels = meta.get("labels") or {}
            if all(labels.get(k) == v for k, v in (want.match_labels or {}).items()):
                out.append((key, struct))
        return [struct for _, struct in sorted(out, key=lambda pair: pair[0])]


def composites(rendered: list[Obj]) -> list[Obj]:
    """The Modelplane composites among what render printed (not what they compose)."""
    return [
        o
        for o in rendered
        if o["apiVersion"] == API_VERSION
        and "crossplane.io/composite" not in (o["metadata"].get("labels") or {})
    ]


def the(rendered: list[Obj], kind: str, name: str, namespace: str | None = None) -> Obj:
    (found,) = [
        o
        for o in rendered
        if o["kind"] == kind
        and o["metadata"]["name"] == name
        and o["metadata"].get("namespace") == namespace
    ]
    return found


def on_cluster(obj: Obj, cluster: str) -> bool:
    return (obj.get("spec") or {}).get("clusterName") == cluster


Clone = Callable[[list[Obj], str, str, int], list[Obj]]
"""The objects to list on clone ``i`` named ``name`` of template cluster ``template``."""


def cloned_fleet(rendered: list[Obj], size: int, per_cluster: Clone) -> list[Obj]:
    """Every composite render printed but the clusters and what runs on them, then ``size``
    clusters cloned from the rendered ones in turn, each with what ``per_cluster`` puts on
    it. The first clones keep their template's name, so what names them (a gateway's
    cluster) still finds them; the others are ``c00002``, ``c00003``..."""
    listed = composites(rendered)
    clusters = sorted(
        (o for o in listed if o["kind"] == "InferenceCluster"), key=lambda c: c["metadata"]["name"]
    )
    names = {c["metadata"]["name"] for c in clusters}
    out = [
        o
        for o in listed
        if o["kind"] != "InferenceCluster"
        and not (o["kind"] in PER_CLUSTER_KINDS and o["spec"].get("clusterName") in names)
    ]
    for i in range(size):
        cluster = clusters[i % len(clusters)]
        template = cluster["metadata"]["name"]
        name = template if i < len(clusters) else f"c{i:05d}"
        out.append(renamed(cluster, [(template, name)]))
        out += per_cluster(rendered, template, name, i)
    return out


PER_CLUSTER_KINDS = ("ModelReplica", "ModelEndpoint")


def other_replicas(rendered: list[Obj], template: str, name: str, i: int) -> list[Obj]:
    """``PER_CLUSTER`` serving clones of the qwen3-8b replica render placed on ``template``,
    each owned by another deployment."""
    ns, deployment = DEPLOYMENT
    (replica,) = [
        r
        for r in rendered
        if r["kind"] == "ModelReplica"
        and on_cluster(r, template)
        and r["metadata"]["labels"]["modelplane.ai/deployment"] == deployment
    ]
    out = []
    for k in range(PER_CLUSTER):
        clone = renamed(
            replica,
            [
                (replica["metadata"]["name"], f"other-{k}-{name}"),
                (f"{ns}/{deployment}", f"team-{k}/other-{k}"),
                (deployment, f"other-{k}"),
                (ns, f"team-{k}"),
                (template, name),
            ],
        )
        clone["metadata"]["labels"]["modelplane.ai/replica-index"] = str(i)
        out.append(clone)
    return out


def service_endpoints(rendered: list[Obj], template: str, name: str, i: int) -> list[Obj]:
    """On every cluster, a clone of the served deployment's replica and endpoint (render
    placed one on eu-west; the clones take it everywhere)."""
    ns, service = SERVICE
    out = []
    for kind in PER_CLUSTER_KINDS:
        (obj,) = [
            o
            for o in rendered
            if o["kind"] == kind
            and on_cluster(o, SERVICE_CLUSTER)
            and o["metadata"].get("namespace") == ns
            and o["metadata"]["labels"]["modelplane.ai/deployment"] == service
        ]
        clone = renamed(obj, [(SERVICE_CLUSTER, name)])
        clone["metadata"]["labels"]["modelplane.ai/replica-index"] = str(i)
        out.append(clone)
    return out


def no_clones(rendered: list[Obj], template: str, name: str, i: int) -> list[Obj]:
    return [
        o
        for o in composites(rendered)
        if o["kind"] in PER_CLUSTER_KINDS and on_cluster(o, template)
    ]


def composed_by(rendered: list[Obj], owner: Obj) -> dict[str, Obj]:
    """What render composed for ``owner``, by composition resource name, as Crossplane
    observes it once applied (a cluster's report simulated, as render simulates it)."""
    from modelplane.simulate import simulate_observed

    kind, name = owner["kind"], owner["metadata"]["name"]
    desired = {
        o["metadata"]["annotations"]["crossplane.io/composition-resource-name"]: o
        for o in rendered
        if "metadata" in o
        and any(
            r.get("kind") == kind and r.get("name") == name
            for r in o["metadata"].get("ownerReferences") or []
        )
    }
    return simulate_observed(desired, 1)


@dataclass(frozen=True)
class Scenario:
    """A composite of an example and the fleet it is reconciled against."""

    example: str
    kind: str
    name: str
    namespace: str | None
    per_cluster: Clone
    first: str = "fleet grown"
    """What the first timed call is."""
    scales: bool = True
    """Whether its fleet grows with the size (an InferenceCluster's own stack does not)."""
    largest: int | None = None
    """The largest fleet it is measured on (None: every size asked for)."""

    def sizes(self, asked: list[int]) -> list[int]:
        if not self.scales:
            return asked[:1]
        return [n for n in asked if self.largest is None or n <= self.largest] or asked[:1]

    def start(self, rendered: list[Obj]) -> tuple[Obj, dict[str, Obj]]:
        """The composite as its first timed call observes it, and its composed resources."""
        xr = copy.deepcopy(the(rendered, self.kind, self.name, self.namespace))
        if self.kind == "ModelDeployment":
            # A scale-up: asking for more than it has, nothing placed yet.
            xr.pop("status", None)
            xr["spec"]["replicas"] = SCALE_UP_REPLICAS
            return xr, {}
        return xr, composed_by(rendered, xr)


SERVICE = ("ml-team", "qwen-eu")
SERVICE_CLUSTER = "eu-west"
SCENARIOS = {
    "deployment": Scenario(
        "fleet-two-classes", "ModelDeployment", "qwen3-8b", "ml-team", other_replicas, "scale-up"
    ),
    # A gateway's answer holds a shard entry per cluster (its shards the two objects), so it
    # is measured on every size; a service's grows with its endpoints: measured at 1,000.
    "gateway": Scenario("service-regional", "InferenceGateway", "eu", None, service_endpoints),
    "service": Scenario(
        "service-regional", "ModelService", "qwen-eu", "ml-team", service_endpoints, largest=1000
    ),
    "cluster": Scenario(
        "fleet-two-classes", "InferenceCluster", "eu-west", None, no_clones, "observed", False
    ),
}


def request_for(xr: Obj, observed: dict[str, Obj]) -> fnv1.RunFunctionRequest:
    """The first call of a reconcile: the composite and its composed resources."""
    req = fnv1.RunFunctionRequest()
    req.observed.composite.resource.CopyFrom(dict_to_struct(xr))
    for key, obj in observed.items():
        req.observed.resources[key].resource.CopyFrom(dict_to_struct(obj))
    return req


def resolve(
    call: Callable[[fnv1.RunFunctionRequest], fnv1.RunFunctionResponse],
    req: fnv1.RunFunctionRequest,
    fleet: Fleet,
) -> tuple[fnv1.RunFunctionRequest, fnv1.RunFunctionResponse, int]:
    """Crossplane's loop (``FetchingFunctionRunner.RunFunction``, internal/xfn/
    required_resources.go, v2.3.4): call, fetch what the answer requires, call again with it
    and the answer's context while the requirements change. Returns the last request, its
    answer and how many calls it took."""
    requirements: dict[str, bytes] = {}
    for calls in range(1, MAX_ITERATIONS + 2):
        req.meta.tag = f"resolve-{time.perf_counter_ns()}"
        rsp = call(req)
        fatal = [r.message for r in rsp.results if r.severity == fnv1.SEVERITY_FATAL]
        if fatal:
            raise SystemExit(f"reconcile failed: {fatal[0]}")
        asked = {
            k: s.SerializeToString(deterministic=True)
            for k, s in rsp.requirements.resources.items()
        }
        if asked == requirements:
            return req, rsp, calls
        requirements = asked
        req.ClearField("required_resources")
        req.context.CopyFrom(rsp.context)
        for name, selector in rsp.requirements.resources.items():
            items = req.required_resources[name].items
            for struct in fleet.matching(selector):
                items.add().resource.CopyFrom(struct)
    raise SystemExit(f"requirements still changing after {MAX_ITERATIONS} iterations")


def settled(
    xr: Obj, rsp: fnv1.RunFunctionResponse, serving: Obj | None
) -> tuple[Obj, dict[str, Obj], list[Obj]]:
    """What Crossplane observes once ``rsp`` is applied: the composite with the answer's
    status and conditions, the composed resources as a cluster reports them, and the
    composed composites to list with the fleet (a ModelReplica with ``serving``'s status, a
    rendered replica's)."""
    from modelplane.simulate import simulate_observed

    xr = copy.deepcopy(xr)
    status = struct_to_dict(rsp.desired.composite.resource).get("status") or {}
    status["conditions"] = [
        {
            "type": c.type,
            "status": fnv1.Status.Name(c.status).removeprefix("STATUS_CONDITION_").title(),
            "reason": c.reason,
            **({"message": c.message} if c.message else {}),
            "lastTransitionTime": STAMP,
        }
        for c in rsp.conditions
    ]
    xr["status"] = status
    desired = {}
    for key, r in rsp.desired.resources.items():
        obj = struct_to_dict(r.resource)
        meta = obj.setdefault("metadata", {})
        meta.setdefault("annotations", {})["crossplane.io/composition-resource-name"] = key
        if obj["apiVersion"] == API_VERSION and "namespace" in xr["metadata"]:
            meta.setdefault("namespace", xr["metadata"]["namespace"])
        desired[key] = obj
    observed = simulate_observed(desired, 1)
    listed = []
    for obj in observed.values():
        if obj["kind"] == "ModelReplica" and serving is not None:
            obj["status"] = copy.deepcopy(serving["status"])
            listed.append(obj)
    return xr, observed, listed


@dataclass
class Case:
    """One state of a scenario under one code: the request to time, and what it did."""

    request: bytes
    calls: int
    desired: int
    response: int = 0
    """Bytes of its answer: Crossplane receives at most 4 MiB."""


def tagged(base: bytes, tag: str) -> bytes:
    """``base`` with ``meta.tag`` set: serialized messages concatenate into their merge."""
    return fnv1.RunFunctionRequest(meta=fnv1.RequestMeta(tag=tag)).SerializeToString() + base


Call = Callable[[fnv1.RunFunctionRequest], fnv1.RunFunctionResponse]


def cases(call: Call, rendered: list[Obj], scenario: Scenario, size: int) -> dict[str, Case]:
    """The requests ``call`` ends its requirements loops on: the first reconcile against the
    fleet, then the steady state once its answer is applied."""
    fleet = Fleet.of(cloned_fleet(rendered, size if scenario.scales else 2, scenario.per_cluster))
    xr, observed = scenario.start(rendered)
    req, rsp, calls = resolve(call, request_for(xr, observed), fleet)
    out = {scenario.first: Case(_untagged(req), calls, len(rsp.desired.resources), rsp.ByteSize())}
    serving = next((o for o, _ in fleet.objects if o["kind"] == "ModelReplica"), None)
    xr, observed, listed = settled(xr, rsp, serving)
    fleet.objects += [(o, dict_to_struct(o)) for o in listed]
    req, rsp, calls = resolve(call, request_for(xr, observed), fleet)
    out["steady"] = Case(_untagged(req), calls, len(rsp.desired.resources), rsp.ByteSize())
    return out


def served_cases(code: Code, scenario: Scenario, size: int) -> dict[str, Case]:
    """``cases`` through ``code``'s server."""
    with grpc.insecure_channel(f"127.0.0.1:{code.port()}", options=_CHANNEL) as channel:
        stub = channel.unary_unary(
            METHOD,
            request_serializer=fnv1.RunFunctionRequest.SerializeToString,
            response_deserializer=fnv1.RunFunctionResponse.FromString,
        )

        def call(req: fnv1.RunFunctionRequest) -> fnv1.RunFunctionResponse:
            rsp: fnv1.RunFunctionResponse = stub(req, timeout=600)
            return rsp

        return cases(call, code.rendered[scenario.example], scenario, size)


_CHANNEL = [("grpc.max_send_message_length", -1), ("grpc.max_receive_message_length", -1)]


def _untagged(req: fnv1.RunFunctionRequest) -> bytes:
    req.meta.tag = ""
    return req.SerializeToString()


@dataclass(frozen=True)
class Sample:
    wall: float
    """Seconds the caller waited."""
    cpu: float
    """CPU seconds the server and its worker spent: what the machine's other load moves least
    (a shared machine's wall clock can double)."""


async def timed_calls(port: int, server: int, base: bytes, number: int) -> Sample:
    """Per call, over ``number`` calls in a row, each under a tag never seen (CPU time is
    counted in ticks of 10 ms: a batch makes it count)."""
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}", options=_CHANNEL) as channel:
        call = channel.unary_unary(METHOD)
        raws = [tagged(base, f"t{next(_TAGS)}") for _ in range(number)]
        answers = []
        cpu = cpu_seconds(server)
        start = time.perf_counter()
        for raw in raws:
            answers.append(await call(raw, timeout=600))
        wall = time.perf_counter() - start
        sample = Sample(wall / number, (cpu_seconds(server) - cpu) / number)
        for answer in answers:
            rsp = fnv1.RunFunctionResponse.FromString(answer)
            fatal = [r.message for r in rsp.results if r.severity == fnv1.SEVERITY_FATAL]
            if fatal:
                raise SystemExit(f"timed call failed: {fatal[0]}")
        return sample


TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(root: int) -> float:
    """User and system CPU seconds process ``root`` and its children (the workers) have used."""
    total = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat.rpartition(")")[2].split()  # after the command, which may hold spaces
        if int(entry) == root or int(fields[1]) == root:
            total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / TICKS


_TAGS = iter(range(10**9))
BATCH_SECONDS = 0.5
"""Calls quicker than this are timed in batches of about this long."""


def measure(
    codes: list[Code], by_code: dict[str, dict[str, Case]], repeat: int
) -> dict[tuple[str, str], list[Sample]]:
    """Each (code, state)'s calls: one warm-up, then ``repeat`` batches each (a call, or as many
    as fill ``BATCH_SECONDS``), the codes taken in turn."""
    samples: dict[tuple[str, str], list[Sample]] = {}
    number: dict[tuple[str, str], int] = {}
    for warm in (True, False):
        for _ in range(1 if warm else repeat):
            for state in next(iter(by_code.values())):
                for code in codes:
                    key = (code.label, state)
                    case = by_code[code.label][state]
                    port, server = code.port(case), code.pid(case)
                    sample = asyncio.run(
                        timed_calls(port, server, case.request, number.get(key, 1))
                    )
                    if warm:
                        number[key] = max(1, min(50, int(BATCH_SECONDS / sample.wall)))
                    else:
                        samples.setdefault(key, []).append(sample)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("scenarios", nargs="*", help=f"of {', '.join(SCENARIOS)} (default: all)")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--baseline", default=BASELINE)
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="count the ModelDeployment's in-process instructions under callgrind instead",
    )
    parser.add_argument("--callgrind-out", type=Path, help="keep the counted runs' profiles here")
    parser.add_argument(
        "--cache-sim",
        action="store_true",
        help="with --instructions: also simulate the caches and count last-level misses",
    )
    parser.add_argument("--count-worker", help=argparse.SUPPRESS)
    parser.add_argument("--skip", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.count_worker:
        count_worker(Path(args.count_worker), skip=args.skip)
        return
    if args.instructions:
        count_instructions(SCENARIOS["deployment"], args.sizes, args.callgrind_out, args.cache_sim)
        return
    chosen = {k: SCENARIOS[k] for k in args.scenarios or SCENARIOS}
    with tempfile.TemporaryDirectory() as tmp:
        codes = [
            Code("baseline", extract(args.baseline, Path(tmp) / "baseline"), RAISED_MIB),
            Code("new", ROOT / "src", DEFAULT_RECV_MIB),
        ]
        for code in codes:
            for example in {s.example for s in chosen.values()}:
                code.rendered[example] = render(code, ROOT / "examples" / example)
            start(code)
        try:
            for name, scenario in chosen.items():
                report(codes, name, scenario, scenario.sizes(args.sizes), args.repeat)
        finally:
            for code in codes:
                stop(code)


def report(codes: list[Code], name: str, scenario: Scenario, sizes: list[int], repeat: int) -> None:
    cpu: dict[tuple[str, str, int], float] = {}
    sizes_of: dict[tuple[str, str, int], int] = {}
    states: list[str] = []
    for n in sizes:
        by_code = {code.label: served_cases(code, scenario, n) for code in codes}
        states = list(by_code[codes[0].label])
        samples = measure(codes, by_code, repeat)
        what = f"{n} clusters" if scenario.scales else "its own stack"
        print(f"{name} ({scenario.kind} {scenario.name}), {what}; medians (fastest):")
        for state in states:
            for code in codes:
                case = by_code[code.label][state]
                taken = samples[(code.label, state)]
                walls, cpus = [t.wall for t in taken], [t.cpu for t in taken]
                cpu[(code.label, state, n)] = statistics.median(cpus)
                sizes_of[(code.label, state, n)] = len(case.request)
                print(
                    f"  {state:<11} {code.label:<9} {len(case.request) / 2**20:7.2f} MiB, "
                    f"{statistics.median(walls) * 1e3:7.0f} ms ({min(walls) * 1e3:5.0f}), "
                    f"CPU {statistics.median(cpus) * 1e3:7.0f} ms ({min(cpus) * 1e3:5.0f}); "
                    f"{case.calls} calls, {case.desired} resources desired, "
                    f"answer {case.response / 2**20:.2f} MiB"
                )
                if case.response > 4 * 2**20:
                    print(f"  {'':<11} {code.label:<9} answer over the 4 MiB Crossplane receives")
                if not code.accepts(case):
                    print(
                        f"  {'':<11} {code.label:<9} over its {code.recv_mib} MiB limit: refused "
                        "as served; timed with the limit raised"
                    )
            old, new = (c.label for c in codes)
            bytes_ratio = sizes_of[(old, state, n)] / sizes_of[(new, state, n)]
            cpu_ratio = cpu[(old, state, n)] / cpu[(new, state, n)]
            print(f"  {state:<11} baseline/new: bytes x{bytes_ratio:.2f}, CPU x{cpu_ratio:.2f}")
    if len(sizes) > 1:
        a, b = sizes[0], sizes[-1]
        for state in states:
            for code in codes:
                s = sizes_of[(code.label, state, b)] / sizes_of[(code.label, state, a)]
                t = cpu[(code.label, state, b)] / cpu[(code.label, state, a)]
                print(
                    f"growth {a} -> {b} clusters (x{b / a:g}), {state}, {code.label}: "
                    f"bytes x{s:.2f}, CPU x{t:.2f}"
                )


COUNTED_MAX_RESPONSE = 2**30


def count_worker(path: Path, skip: bool) -> bytes | None:
    """A server's worker (``serve.work``) answering the request in ``path`` once to warm up,
    then once more unless ``skip``: what an instruction count subtracts. Returns the answer
    counted."""
    from modelplane.compose.admission import Admission
    from modelplane.function import FunctionRunner
    from modelplane.serve import REGISTRY, configure_logging, load_registry

    configure_logging(False)
    admission = Admission.default()
    for definition in admission.definitions():
        definition.compile()
    runner = FunctionRunner(load_registry(REGISTRY)(), cache_size=0, admission=admission)
    base = path.read_bytes()
    warm, counted = tagged(base, "warm-up"), tagged(base, "counted")
    runner.handle_bytes(warm, COUNTED_MAX_RESPONSE)
    return None if skip else runner.handle_bytes(counted, COUNTED_MAX_RESPONSE)[0]


LL_MISSES = ("ILmr", "DLmr", "DLmw")
"""Callgrind's events for reads and writes missing the last-level cache it simulates."""
LL_SYSFS = Path("/sys/devices/system/cpu/cpu0/cache/index3")


def last_level_cache() -> list[str]:
    """Callgrind's option for the last-level cache the kernel reports (a VM's CPUID may claim
    another), none when it reports none."""
    try:
        size, ways, line = (
            (LL_SYSFS / f).read_text().strip()
            for f in ("size", "ways_of_associativity", "coherency_line_size")
        )
    except OSError:
        return []
    scale = {"K": 2**10, "M": 2**20}.get(size[-1:], 1)
    return [f"--LL={int(size.rstrip('KM')) * scale},{ways},{line}"]


def counted_instructions(path: Path, profile: Path | None, cache_sim: bool) -> dict[str, int]:
    """Callgrind's events for one call of the request in ``path`` (``Ir``, instructions; with
    ``cache_sim`` also the simulated caches' misses): a worker's run with it less one without
    it (start-up and the warm-up call cancel out). Hash seeds fixed: the counts repeat."""
    counts = []
    for skip in (False, True):
        out = Path(os.devnull)
        if profile is not None:
            out = profile.with_name(profile.name + ".without" * skip)
        command = [sys.executable, __file__, "--count-worker", str(path)]
        done = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"]
            + (["--cache-sim=yes", *last_level_cache()] if cache_sim else [])
            + command
            + (["--skip"] if skip else []),
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONHASHSEED": "0"},
            check=False,
        )
        events = re.search(r"Events *: ([\w ]+)", done.stderr)
        found = re.search(r"Collected : ([\d ]+)", done.stderr)
        if done.returncode != 0 or events is None or found is None:
            raise SystemExit(f"callgrind counted nothing for {path.name}:\n{done.stderr[-2000:]}")
        names, values = events.group(1).split(), map(int, found.group(1).split())
        counts.append(dict(zip(names, values, strict=True)))
    return {event: n - counts[1][event] for event, n in counts[0].items()}


def count_instructions(
    scenario: Scenario, sizes: list[int], profiles: Path | None, cache_sim: bool
) -> None:
    """The scenario's requests, resolved in process as the gRPC cases resolve them, counted
    under callgrind (two at a time: two cores), with their growth next to their bytes'."""
    from modelplane.compose.admission import Admission
    from modelplane.compose.registry import default_registry
    from modelplane.function import FunctionRunner

    runner = FunctionRunner(default_registry(), cache_size=0, admission=Admission.default())
    new = Code("new", ROOT / "src", DEFAULT_RECV_MIB)
    rendered = render(new, ROOT / "examples" / scenario.example)
    if profiles is not None:
        profiles.mkdir(parents=True, exist_ok=True)
    counts: dict[tuple[str, int], dict[str, int]] = {}
    sizes_of: dict[tuple[str, int], int] = {}
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(2) as pool:
        jobs = {}
        for n in sizes:
            for state, case in cases(runner.run, rendered, scenario, n).items():
                path = Path(tmp) / f"{state}-{n}.bin"
                path.write_bytes(case.request)
                sizes_of[(state, n)] = len(case.request)
                out = profiles / f"callgrind.{state}-{n}" if profiles is not None else None
                jobs[(state, n)] = pool.submit(counted_instructions, path, out, cache_sim)
        for key, job in jobs.items():
            counts[key] = job.result()
    print(f"{scenario.kind} {scenario.name}, in process, instructions of one call:")
    print_counts(sizes, counts, sizes_of, cache_sim)


def print_counts(
    sizes: list[int],
    counts: dict[tuple[str, int], dict[str, int]],
    sizes_of: dict[tuple[str, int], int],
    cache_sim: bool,
) -> None:
    """Per size and state the request's bytes and callgrind's counts, then their growth from
    the first size to the last."""
    states = list(dict.fromkeys(state for state, _ in counts))
    for n in sizes:
        for state in states:
            ir, size = counts[(state, n)]["Ir"], sizes_of[(state, n)]
            misses = ""
            if cache_sim:
                misses = f", {_ll(counts[(state, n)]) / 1e6:.2f} M last-level misses"
            print(
                f"  {n:>6} clusters, {state:<11} {size / 2**20:7.2f} MiB, {ir / 1e9:6.2f} G "
                f"instructions ({ir / size:.0f} a request byte){misses}"
            )
    if len(sizes) > 1:
        a, b = sizes[0], sizes[-1]
        for state in states:
            old, new = counts[(state, a)], counts[(state, b)]
            misses = f", last-level misses x{_ll(new) / _ll(old):.2f}" if cache_sim else ""
            print(
                f"growth {a} -> {b} clusters (x{b / a:g}), {state}: "
                f"bytes x{sizes_of[(state, b)] / sizes_of[(state, a)]:.2f}, "
                f"instructions x{new['Ir'] / old['Ir']:.2f}{misses}"
            )


def _ll(counts: dict[str, int]) -> int:
    return sum(counts[e] for e in LL_MISSES)


if __name__ == "__main__":
    main()
