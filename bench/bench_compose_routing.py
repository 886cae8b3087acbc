"""The full ModelReplica composition (workloads plus routing) of a prefill/decode replica.

    uv run python bench/bench_compose_routing.py [examples/replica-prefill-decode]

Times RunFunction in process on two requests: the first reconcile (the replica and its
InferenceCluster, nothing composed yet) and the steady state (every composed resource observed
ready, as simulated), each as a ratio to the conversion floor measured in the same run:

- floor: converting the request's Structs to dicts and the response's dicts back to Structs.
- SDK-helper conversion: the same conversions through the SDK's own helpers, which the
  existing implementation is built on: what it pays before composing anything.
- cold: a running FunctionRunner whose response cache never hits (each call a new tag).
- unchanged: the same runner and request again, Crossplane's common case.
- composer: the pure composer alone on the same inputs as plain data (no protobuf at all).

Two replicas: the example as written (two Deployments), and the same engines as gangs (a
Leader and one Worker each) on the Dynamo stack. Figures are taken in turn (interleaved), so
the ratios hold while the machine's speed drifts; absolute times swing up to 2x between runs.
Targets (issue 4): cold no slower than ~1.2 ms per call here, unchanged at least 5x faster.
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import Any

from crossplane.function import logging
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from harness import (
    conversion_floor,
    interleaved,
    replica_and_cluster,
    replica_request,
    retagged,
    sdk_conversion,
    spread_report,
)

from modelplane.compose.modelreplica.composer import compose_replica
from modelplane.compose.registry import default_registry
from modelplane.composer import Inputs
from modelplane.function import FunctionRunner
from modelplane.simulate import simulate_observed
from modelplane.structs import dict_to_struct, struct_to_dict

Obj = dict[str, Any]
GANGS_PD_MS = 1.2  # the existing implementation, prefill/decode with gangs, in process
ROOT = Path(__file__).resolve().parents[1]


def as_gangs(replica: Obj, cluster: Obj) -> tuple[Obj, Obj]:
    """The same engines, each a Leader plus one Worker, on a Dynamo cluster."""
    replica, cluster = copy.deepcopy(replica), copy.deepcopy(cluster)
    for engine in replica["spec"]["engines"]:
        (member,) = engine["members"]
        worker = copy.deepcopy(member)
        worker["template"]["spec"]["containers"] = [
            c for c in worker["template"]["spec"]["containers"] if c["name"] == "engine"
        ]
        for c in worker["template"]["spec"]["containers"]:
            c.pop("ports", None)
        engine["members"] = [
            {**member, "role": "Leader"},
            {**worker, "role": "Worker", "worker": {"nodes": 1}},
        ]
    cluster["spec"]["stack"] = "Dynamo"
    return replica, cluster


def request(replica: Obj, cluster: Obj, *, steady: bool) -> fnv1.RunFunctionRequest:
    """What Crossplane sends first, or once everything is composed and ready."""
    observed: dict[str, Obj] = {}
    if steady:
        inputs = Inputs(composite=replica, required={"cluster": [cluster]})
        desired = {k: d.resource for k, d in compose_replica(inputs).resources.items()}
        copies = max(int(e.get("copies", 1)) for e in replica["spec"]["engines"])
        observed = simulate_observed(desired, copies)
    req = replica_request(replica, cluster, tag="steady")
    for key, obj in observed.items():
        req.observed.resources[key].resource.CopyFrom(dict_to_struct(obj))
    return req


def bench(title: str, replica: Obj, cluster: Obj, *, steady: bool, target_ms: float) -> None:
    registry = default_registry()
    req = request(replica, cluster, steady=steady)
    warm = FunctionRunner(registry)
    rsp = warm.run(req)
    assert not any(r.severity == fnv1.SEVERITY_FATAL for r in rsp.results), rsp.results
    serving = [c for c in rsp.conditions if c.type == "ModelServing"]
    # The same inputs the runner hands the composer, converted once here.
    inputs = Inputs(
        composite=struct_to_dict(req.observed.composite.resource),
        observed={k: struct_to_dict(r.resource) for k, r in req.observed.resources.items()},
        required={
            n: [struct_to_dict(i.resource) for i in rs.items]
            for n, rs in req.required_resources.items()
        },
    )
    samples = interleaved(
        [
            ("floor", conversion_floor(req, rsp)),
            ("SDK-helper conversion", sdk_conversion(req, rsp)),
            ("composer", lambda: compose_replica(inputs)),
            ("cold", retagged(FunctionRunner(registry, cache_size=0), req)),
            ("unchanged", lambda: warm.run(req)),
        ]
    )
    status = fnv1.Status.Name(serving[0].status) if serving else "?"
    title = f"{title}: {len(rsp.desired.resources)} composed resources, ModelServing {status}"
    print(spread_report(title, samples, target_ms))


def main() -> None:
    logging.configure(logging.Level.INFO)  # as `modelplane serve` runs: debug lines filtered
    directory = (
        Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "examples" / "replica-prefill-decode"
    )
    replica, cluster = replica_and_cluster(directory)
    for steady in (False, True):
        when = "steady state" if steady else "first reconcile"
        # The existing implementation's prefill/decode figure (issue 4) is for gangs; the
        # example's Deployments compose less and are held to the same bound.
        for label, case in (
            ("Deployments", (replica, cluster)),
            ("Grove gangs", as_gangs(replica, cluster)),
        ):
            bench(
                f"prefill/decode over {label}, {when}", *case, steady=steady, target_ms=GANGS_PD_MS
            )


if __name__ == "__main__":
    main()
