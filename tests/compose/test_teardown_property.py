"""Property, over every composer the registry ships: whatever required resource is missing, empty
or lagging, the response through the real FunctionRunner (observed resources arriving as the
read-only views production hands composers) is Fatal or keeps every observed composed resource
that is still wanted. Crossplane deletes whatever a non-fatal response leaves out.

Each kind has a world: a composite, the required resources as they truly are, and what an
earlier reconcile composed (observed, with random health). "Still wanted" is what the composer
keeps of the observed resources given the true inputs. The degraded inputs then differ from the
truth, per requirement, in one of these ways:

- missing: not fetched yet (absent from the request);
- empty: fetched, nothing listed (every object deleted, or a list that failed);
- stale: some items listed without their status (not written yet);
- lagging: some items not listed, where a list can lag what the composite stands on
  (``World.partial``);
- relabelled: the deployment label edited away on some replicas the deployment composed.

A ModelCache's clusters never lag partially here: a cluster missing from a list that holds
others loses its cache objects by design (docs/design/fleet.md: the remote PersistentVolumeClaim
stays while a pod mounts it, and the Namespace is never deleted, so nothing running is lost).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from modelplane import labels
from modelplane.compose.inferencecluster.composer import compose_cluster
from modelplane.compose.modelcache.composer import compose_model_cache
from modelplane.compose.modeldeployment.composer import (
    CLASSES,
    CLUSTERS,
    REPLICAS,
    compose_deployment,
)
from modelplane.compose.modelreplica.composer import compose as compose_replica
from modelplane.compose.registry import default_registry
from modelplane.composer import Inputs, Result
from modelplane.simulate import simulate_observed
from tests.compose.modelreplica import support
from tests.compose.modelservice.test_faults import (
    external_endpoint_world,
    gateway_world,
    service_world,
)
from tests.compose.through import run
from tests.compose.worlds import World, degraded_required
from tests.fleet.builders import (
    declared_cluster,
    deployment,
    engine,
    inference_class,
    inference_cluster,
    member,
    with_condition,
)

Obj = dict[str, Any]
H100 = inference_class("h100")
A100 = inference_class("a100")
API = "modelplane.ai/v1alpha1"


def resources(result: Result) -> dict[str, Obj]:
    assert result.fatal is None, result.fatal
    return {k: copy.deepcopy(d.resource) for k, d in result.resources.items()}


# --- worlds, one per registered kind --------------------------------------------------------------


def serving(mr: Obj, status: bool, created: str) -> Obj:
    value = "True" if status else "False"
    out = with_condition(with_condition(mr, "ModelServing", value, "R"), "Ready", value)
    out["metadata"]["creationTimestamp"] = created
    return out


def settle(md: Obj, fleet: list[Obj], others: list[Obj], rounds: int) -> dict[str, Obj]:
    """What ``rounds`` reconciles of ``md`` on ``fleet`` compose, each observed serving."""
    observed: dict[str, Obj] = {}
    for r in range(rounds):
        required = {CLUSTERS: fleet, CLASSES: [H100, A100], REPLICAS: [*others, *observed.values()]}
        result = compose_deployment(Inputs(composite=md, required=required, observed=observed))
        observed = {
            k: observed.get(k) or serving(obj, True, f"2026-01-01T00:00:{r:02}Z")
            for k, obj in resources(result).items()
        }
    return observed


@st.composite
def deployment_world(draw: st.DrawFn) -> World:
    names = [f"c{i}" for i in range(draw(st.integers(1, 4)))]
    fleet = [
        inference_cluster(
            n,
            {"p": (draw(st.sampled_from(["h100", "a100"])), draw(st.integers(1, 2)))},
            classes=[H100, A100],
        )
        for n in names
    ]
    gpus = draw(st.sampled_from([4, 8]))
    md = deployment("qwen", engine("main", member(gpus=gpus)), replicas=draw(st.integers(0, 4)))
    others: list[Obj] = []
    if draw(st.booleans()):
        other = deployment(
            "other", engine("main", member(gpus=8)), replicas=draw(st.integers(1, 2))
        )
        others = list(settle(other, fleet, [], 1).values())
    # What an earlier spec composed on an earlier fleet: the true world may want less of it.
    past = copy.deepcopy(md)
    past["spec"]["replicas"] = draw(st.integers(0, 4))
    kept = draw(st.lists(st.booleans(), min_size=len(fleet), max_size=len(fleet)))
    past_fleet = [c for c, k in zip(fleet, kept, strict=True) if k] or fleet[:1]
    observed = settle(past, past_fleet, others, draw(st.integers(1, 2)))
    observed = {
        k: serving(mr, draw(st.booleans()), mr["metadata"]["creationTimestamp"])
        for k, mr in observed.items()
    }
    return World(
        md,
        {CLUSTERS: fleet, CLASSES: [H100, A100], REPLICAS: [*others, *observed.values()]},
        observed,
        partial=frozenset({CLUSTERS, CLASSES, REPLICAS}),
        own=REPLICAS,
    )


def cache_cluster(name: str, tier: str) -> Obj:
    return {
        "apiVersion": API,
        "kind": "InferenceCluster",
        "metadata": {"name": name, "labels": {"tier": tier}},
        "spec": {"stack": "Standard"},
        "status": {"providerConfigRef": {"name": f"pc-{name}"}},
    }


@st.composite
def cache_world(draw: st.DrawFn) -> World:
    clusters = [
        cache_cluster(f"c{i}", draw(st.sampled_from(["x", "y"])))
        for i in range(draw(st.integers(1, 3)))
    ]
    hf: Obj = {"repo": "Qwen/Qwen3-8B", "sizeGiB": 20}
    if draw(st.booleans()):
        hf["authSecret"] = {"name": "hf"}
    spec: Obj = {"source": "HuggingFace", "huggingFace": hf}
    if draw(st.booleans()):
        spec["clusterSelector"] = {"matchLabels": {"tier": "x"}}
    mc = {
        "apiVersion": API,
        "kind": "ModelCache",
        "metadata": {"name": "weights", "namespace": "ml"},
        "spec": spec,
    }
    composed = compose_model_cache(Inputs(composite=mc, required={"inference-clusters": clusters}))
    observed = simulate_observed(resources(composed), draw(st.integers(0, 1)))
    return World(mc, {"inference-clusters": clusters}, observed)


@st.composite
def replica_world(draw: st.DrawFn) -> World:
    cached = draw(st.booleans())
    mr = support.replica(cache="weights" if cached else None)
    required = {"cluster": [support.cluster()]}
    if cached:
        required["modelcache"] = [support.model_cache()]
    composed = compose_replica(Inputs(composite=mr, required=required))
    observed = simulate_observed(resources(composed), draw(st.integers(0, 1)))
    return World(mr, required, observed)


@st.composite
def cluster_world(draw: st.DrawFn) -> World:
    pools = [(f"p{i}", draw(st.sampled_from(["h100", "a100"])), 1) for i in range(2)]
    ic = declared_cluster("east", pools)
    required = {"inference-classes": [H100, A100]}
    composed = compose_cluster(Inputs(composite=ic, required=required))
    observed = simulate_observed(resources(composed), draw(st.integers(0, 1)))
    return World(ic, required, observed, partial=frozenset(required))


@st.composite
def class_world(draw: st.DrawFn) -> World:
    return World(inference_class(draw(st.sampled_from(["h100", "a100"]))), {}, {})


WORLDS: dict[str, Callable[[], st.SearchStrategy[World]]] = {
    "ModelDeployment.modelplane.ai": deployment_world,
    "ModelCache.modelplane.ai": cache_world,
    "ModelReplica.modelplane.ai": replica_world,
    "InferenceCluster.modelplane.ai": cluster_world,
    "InferenceClass.modelplane.ai": class_world,
    # The front door's worlds carry the same fields (composite, required, observed, partial, own).
    "InferenceGateway.modelplane.ai": gateway_world,
    "ModelService.modelplane.ai": service_world,
    "ModelEndpoint.modelplane.ai": external_endpoint_world,
}


# --- degrading the truth --------------------------------------------------------------------------


@st.composite
def degraded(
    draw: st.DrawFn, world: World
) -> tuple[Obj, dict[str, Obj], dict[str, list[Obj] | None]]:
    """The composite, observed and required resources as the function is handed them."""
    observed = copy.deepcopy(world.observed)
    required = draw(degraded_required(world))
    if world.own is not None and observed and draw(st.booleans()):
        edited = draw(st.sets(st.sampled_from(sorted(observed)), min_size=1))
        names = {observed[k]["metadata"]["name"] for k in edited}
        for key in edited:
            observed[key]["metadata"]["labels"].pop(labels.DEPLOYMENT, None)
        for item in required.get(world.own) or []:
            if item["metadata"]["name"] in names:
                item["metadata"]["labels"].pop(labels.DEPLOYMENT, None)
    return world.composite, observed, required


# --- the property ---------------------------------------------------------------------------------


def test_every_registered_composer_has_a_world() -> None:
    assert sorted(WORLDS) == default_registry().kinds()


@pytest.mark.parametrize("kind", sorted(WORLDS))
@settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_missing_empty_or_lagging_inputs_never_drop_what_is_still_wanted(
    kind: str, data: st.DataObject
) -> None:
    world = data.draw(WORLDS[kind](), label="world")
    truth = run(world.composite, world.observed, world.required)
    assert truth.fatal is None, truth.fatal
    wanted = set(truth.resources) & set(world.observed)

    composite, observed, required = data.draw(degraded(world), label="inputs")
    rsp = run(composite, observed, required)
    if rsp.fatal is not None:
        return
    dropped = sorted(wanted - set(rsp.resources))
    assert not dropped, f"{kind} dropped {dropped}; conditions: {rsp.conditions}"
