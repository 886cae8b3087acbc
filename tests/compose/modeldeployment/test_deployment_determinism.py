"""Property: a ModelDeployment's response is byte-identical however the request's unordered
collections are ordered: the required clusters, classes and replicas, the observed composed
resources, and the list-maps of the fleet (node pools, taints, published pools, class devices),
which Kubernetes keys by name rather than position. Over every fleet example, rendered to a
settled state, and over the fleets the scheduler's own properties generate."""

from __future__ import annotations

import copy
import functools
import random
from pathlib import Path
from typing import Any

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from modelplane.compose.modeldeployment.composer import (
    CLASSES,
    CLUSTERS,
    REPLICAS,
    compose_deployment,
)
from modelplane.compose.registry import default_registry
from modelplane.composer import Inputs
from modelplane.function import write_response
from modelplane.manifests import load
from modelplane.render import RESOURCE_NAME, api_server_admission, render_documents
from modelplane.scheduling.scheduler import schedule
from modelplane.simulate import simulate_observed
from tests.fleet.builders import serving, stamp
from tests.properties import examples
from tests.scheduling.test_scheduler_properties import deployment_st, fleet_st

Obj = dict[str, Any]
EXAMPLES = sorted((Path(__file__).resolve().parents[3] / "examples").glob("fleet-*"))
BROKEN = "device.driver =="
COMPOSITE = "crossplane.io/composite"


def break_selectors(md: Obj) -> Obj:
    """The deployment with a device selector that does not compile: replicas are kept and the
    waiting ones listed (the list that once followed the observed map's order)."""
    broken = copy.deepcopy(md)
    for engine in broken["spec"]["template"]["spec"]["engines"]:
        for member in engine["members"]:
            for device in (member.get("nodeSelector") or {}).get("devices") or []:
                device["selectors"] = [{"cel": BROKEN}]
    return broken


def scaled(md: Obj, by: int) -> Obj:
    out = copy.deepcopy(md)
    out["spec"]["replicas"] = max(1, min(10, out["spec"]["replicas"] + by))
    return out


@functools.cache
def example_states() -> list[tuple[Obj, dict[str, Obj], dict[str, list[Obj]]]]:
    """Per deployment of every fleet example: (deployment, observed, required) once rendered
    to a settled state, with every replica's workloads half ready (some serve, some wait)."""
    states = []
    for ready in (0, 1):
        for example in EXAMPLES:
            inputs = [m.obj for m in load([str(example)])]
            simulate = functools.partial(simulate_observed, ready_copies=ready)
            docs = render_documents(
                default_registry(), inputs, admit=api_server_admission(), simulate=simulate
            )
            by_kind: dict[str, list[Obj]] = {}
            for d in docs:
                by_kind.setdefault(d["kind"], []).append(d)
            replicas = by_kind.get("ModelReplica", [])
            required = {
                CLUSTERS: by_kind["InferenceCluster"],
                CLASSES: by_kind["InferenceClass"],
                REPLICAS: replicas,
            }
            for md in by_kind["ModelDeployment"]:
                meta = md["metadata"]
                observed = {
                    r["metadata"]["annotations"][RESOURCE_NAME]: r
                    for r in replicas
                    if r["metadata"]["labels"].get(COMPOSITE) == meta["name"]
                    and r["metadata"]["namespace"] == meta["namespace"]
                }
                plain = {k: v for k, v in md.items() if k != "status"}
                states.append((plain, observed, required))
    return states


def shuffled_fleet_object(obj: Obj, rng: random.Random) -> Obj:
    """The object with every list-map of the fleet API in another order."""
    out = copy.deepcopy(obj)
    spec, status = out.get("spec") or {}, out.get("status") or {}
    lists = [spec.get("nodePools"), spec.get("taints"), spec.get("devices")]
    lists.append(status.get("gpuPools"))
    lists += [p.get("devices") for p in status.get("gpuPools") or []]
    for items in lists:
        if isinstance(items, list):
            rng.shuffle(items)
    return out


def inputs(md: Obj, observed: dict[str, Obj], required: dict[str, list[Obj]], seed: int | None):
    """The composer's inputs, every collection in the order ``seed`` shuffles it to (None: as
    given). Plain dicts keep their order, where a request's protobuf maps keep their own."""
    rng = random.Random(seed)
    keys = list(observed)
    names = list(required)
    if seed is not None:
        rng.shuffle(keys)
        rng.shuffle(names)
    lists = {}
    for name in names:
        items = list(required[name])
        if seed is not None:
            rng.shuffle(items)
            items = [shuffled_fleet_object(o, rng) for o in items]
        lists[name] = items
    return Inputs(
        composite=copy.deepcopy(md),
        observed={k: copy.deepcopy(observed[k]) for k in keys},
        required=lists,
    )


def response_bytes(given: Inputs) -> bytes:
    """The composer's answer as the function writes it, serialized deterministically."""
    result = compose_deployment(given)
    assert result.fatal is None
    return write_response(fnv1.RunFunctionRequest(), result).SerializeToString(deterministic=True)


VARIANTS = {
    "as rendered": lambda md: md,
    "broken selector": break_selectors,
    "scaled up": lambda md: scaled(md, 3),
    "scaled down": lambda md: scaled(md, -1),
}


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), variant=st.sampled_from(sorted(VARIANTS)), seed=st.integers(0, 2**32))
def test_every_fleet_example_responds_the_same_in_any_order(
    data: st.DataObject, variant: str, seed: int
) -> None:
    md, observed, required = data.draw(st.sampled_from(example_states()))
    md = VARIANTS[variant](md)
    assert response_bytes(inputs(md, observed, required, seed)) == response_bytes(
        inputs(md, observed, required, None)
    )


@settings(max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fleet=fleet_st(), data=st.data(), seed=st.integers(0, 2**32))
def test_every_generated_fleet_responds_the_same_in_any_order(
    fleet: Any, data: st.DataObject, seed: int
) -> None:
    clusters, classes = fleet
    classes = [
        {"apiVersion": "modelplane.ai/v1alpha1", "kind": "InferenceClass", **c} for c in classes
    ]
    other = data.draw(deployment_st("other", "team-b"))
    md = data.draw(deployment_st("llm", "team-a"))
    others = [stamp(other, p) for p in schedule(other, clusters, classes, []).placements]
    # This deployment's replicas, placed, some serving: observed and required both.
    ours = {
        f"replica-{p.index}-{p.cluster}": serving(
            stamp(md, p), "True" if p.index % 2 == 0 else "False", "R"
        )
        for p in schedule(md, clusters, classes, others).placements
    }
    md = data.draw(st.sampled_from([md, break_selectors(md), scaled(md, 1)]))
    required = {CLUSTERS: clusters, CLASSES: classes, REPLICAS: [*others, *ours.values()]}
    assert response_bytes(inputs(md, ours, required, seed)) == response_bytes(
        inputs(md, ours, required, None)
    )
