"""The two-sided property of evidence, over every composer the registry ships, through the real
FunctionRunner (observed resources arriving as the read-only views production hands composers),
each reconcile run as Crossplane runs it: what a composer asks for by name is answered (a GET is
never stale, but may not be fetched yet) and the function called again until it settles.

No evidence, nothing changes. Whatever required resource is missing, empty, without status,
with only Crossplane's Synced condition, or lagging (one of two items missing, a list behind
what the composite stands on), the response is Fatal or keeps every observed composed resource
the true inputs still want, and every route's backends are those the true inputs give.
Crossplane deletes whatever a non-fatal response leaves out, and a route rewritten on a list
that lags sends traffic to the wrong place (or 503s).

Evidence, a change. An endpoint listed not ready, a replica no longer serving, a cluster or the
replicas on it positively gone (asked for by name, nothing back), a cluster whose gateway says
it has no address: each changes what is composed, so freezing everything fails too.

Each kind has a world: a composite, the required resources as they truly are, and what an
earlier reconcile composed (observed, with random health). The degraded inputs differ from the
truth, per requirement, as ``tests.compose.worlds`` says, and a deployment's own replicas may
also have had the deployment label edited away.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from modelplane import labels
from modelplane.compose.inferencecluster.composer import REPLICAS as CLUSTER_REPLICAS
from modelplane.compose.inferencecluster.composer import compose_cluster
from modelplane.compose.inferencecluster.usages import REPLICA_GUARD
from modelplane.compose.inferencegateway.composer import compose_gateway
from modelplane.compose.inferencegateway.shard import compose_shard
from modelplane.compose.inferencegateway.shards import SHARD as GATEWAY_SHARD
from modelplane.compose.modelcache.composer import CLASSES as CACHE_CLASSES
from modelplane.compose.modelcache.composer import DEPLOYMENTS as CACHE_DEPLOYMENTS
from modelplane.compose.modelcache.composer import REPLICAS as CACHE_REPLICAS
from modelplane.compose.modelcache.composer import compose_model_cache
from modelplane.compose.modeldeployment.composer import (
    CLASSES,
    CLUSTERS,
    REPLICAS,
    compose_deployment,
)
from modelplane.compose.modeldeployment.drain import DRAIN_ROUTES, HOLDS, ROUTES
from modelplane.compose.modeldeployment.endpoints import endpoint_key
from modelplane.compose.modelreplica.composer import compose_replica
from modelplane.compose.registry import default_registry
from modelplane.compose.shared.frontdoor import POOL_GROUP
from modelplane.compose.shared.remote import OBJECT_API_VERSION
from modelplane.compose.shared.replicapool import replica_pool_name
from modelplane.composer import Inputs, Result
from modelplane.simulate import simulate_observed
from tests.compose.modelcache.test_modelcache_placements import H100 as PLACED_H100
from tests.compose.modelcache.test_modelcache_placements import L4 as PLACED_L4
from tests.compose.modelcache.test_modelcache_placements import big_model, reachable
from tests.compose.modelreplica import support
from tests.compose.modelservice.kit import cluster as gateway_cluster
from tests.compose.modelservice.kit import gateway
from tests.compose.modelservice.test_faults import (
    external_endpoint_world,
    gateway_world,
    service_world,
)
from tests.compose.through import Response, run
from tests.compose.worlds import World, degraded_required, truly
from tests.fleet.builders import (
    H100,
    declared_cluster,
    deployment,
    engine,
    inference_class,
    inference_cluster,
    member,
    placed_replica,
    serving,
    with_condition,
)
from tests.properties import checks_something, examples, vacuous

Obj = dict[str, Any]
CACHE_CLUSTERS = "inference-clusters"
A100 = inference_class("a100")
API = "modelplane.ai/v1alpha1"


def resources(result: Result) -> dict[str, Obj]:
    assert result.fatal is None, result.fatal
    return {k: copy.deepcopy(d.resource) for k, d in result.resources.items()}


# --- worlds, one per registered kind --------------------------------------------------------------


def serving_since(mr: Obj, status: bool, created: str) -> Obj:
    out = serving(mr, "True" if status else "False", "R")
    out["metadata"]["creationTimestamp"] = created
    return out


def replicas_of(observed: dict[str, Obj]) -> list[Obj]:
    """The ModelReplicas among a deployment's composed resources (its endpoints are not: the
    requirement asks for ModelReplicas, and an item of another kind is refused)."""
    return [o for o in observed.values() if o["kind"] == "ModelReplica"]


def settle(md: Obj, fleet: list[Obj], others: list[Obj], rounds: int) -> dict[str, Obj]:
    """What ``rounds`` reconciles of ``md`` on ``fleet`` compose, each observed serving."""
    observed: dict[str, Obj] = {}
    for r in range(rounds):
        required = {
            CLUSTERS: fleet,
            CLASSES: [H100, A100],
            REPLICAS: [*others, *replicas_of(observed)],
        }
        result = compose_deployment(Inputs(composite=md, required=required, observed=observed))
        observed = {
            k: observed.get(k) or serving_since(obj, True, f"2026-01-01T00:00:{r:02}Z")
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
        k: serving_since(mr, draw(st.booleans()), mr["metadata"]["creationTimestamp"])
        for k, mr in observed.items()
    }
    replicas = sorted(k for k, o in observed.items() if o["kind"] == "ModelReplica")
    named = draw(st.lists(st.sampled_from(replicas), unique=True)) if replicas else []
    routes = [route_naming(observed[k]) for k in named]
    for key, route in zip(named, routes, strict=True):
        # Routes name a pool while its endpoint is there, or, once an earlier reconcile began to
        # drain the replica and withdrew it, as that reconcile recorded. (A pool whose endpoint
        # went on evidence that it stopped serving carries no working traffic.)
        if draw(st.booleans()) or endpoint_key(key) not in observed:
            observed.pop(endpoint_key(key), None)
            annotations = observed[key]["metadata"].setdefault("annotations", {})
            annotations[DRAIN_ROUTES] = route["metadata"]["name"]
    return World(
        md,
        {
            CLUSTERS: fleet,
            CLASSES: [H100, A100],
            REPLICAS: [*others, *replicas_of(observed)],
            ROUTES: routes,
            HOLDS: [],
        },
        observed,
        partial=frozenset({CLUSTERS, CLASSES, REPLICAS, ROUTES}),
        own=REPLICAS,
    )


def route_naming(replica: Obj) -> Obj:
    """A ModelService's fleet route Object with a rule for the replica's InferencePool."""
    pool = replica_pool_name(replica["metadata"]["name"])
    rule = {"backendRefs": [{"group": POOL_GROUP, "kind": "InferencePool", "name": pool}]}
    return {
        "apiVersion": OBJECT_API_VERSION,
        "kind": "Object",
        "metadata": {
            "name": f"route-{pool}",
            "namespace": replica["metadata"]["namespace"],
            "labels": {labels.ROUTES_POOLS: "true"},
        },
        "spec": {"forProvider": {"manifest": {"kind": "HTTPRoute", "spec": {"rules": [rule]}}}},
    }


def cache_cluster(name: str, tier: str) -> Obj:
    return {
        "apiVersion": API,
        "kind": "InferenceCluster",
        "metadata": {"name": name, "labels": {"tier": tier}},
        "spec": {"stack": "Standard"},
        "status": {
            "providerConfigRef": {"name": f"pc-{name}"},
            "cache": {"storageClassName": "rwx"},
        },
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
    required: dict[str, list[Obj]] = {CACHE_CLUSTERS: clusters}
    if "clusterSelector" not in spec and draw(st.booleans()):
        # Staged where a deployment referencing it could run, as the classes decide.
        h100, l4 = PLACED_H100, PLACED_L4
        mix = draw(st.sampled_from([[h100], [h100, l4], [l4, h100]]))
        required = placed_cache_users(clusters, mix)
    composed = compose_model_cache(Inputs(composite=mc, required=required))
    observed = simulate_observed(resources(composed), draw(st.integers(0, 1)))
    return World(mc, required, observed, partial=frozenset({CACHE_CLUSTERS, CACHE_CLASSES}))


def placed_cache_users(clusters: list[Obj], classes: list[Obj]) -> dict[str, list[Obj]]:
    """``clusters`` each with a GPU pool of one of ``classes``, and a deployment of the cache's
    namespace referencing it that fits an H100 only."""
    pooled = []
    for i, c in enumerate(clusters):
        placed = reachable(c["metadata"]["name"], classes[i % len(classes)]["metadata"]["name"])
        placed["metadata"]["labels"] = dict(c["metadata"]["labels"])
        pooled.append({**placed, "status": copy.deepcopy(c["status"])})
    return {
        CACHE_CLUSTERS: pooled,
        CACHE_DEPLOYMENTS: [big_model()],
        CACHE_REPLICAS: [],
        CACHE_CLASSES: [PLACED_H100, PLACED_L4],
    }


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
    engines = [engine("main", member(gpus=1))]
    running = [
        placed_replica("qwen", f"team-{i % 2}", "east", i, engines)
        for i in range(draw(st.integers(0, 2)))
    ]
    required = {"inference-classes": [H100, A100], CLUSTER_REPLICAS: running}
    observed: dict[str, Obj] = {}
    for _ in range(2):
        composed = compose_cluster(Inputs(composite=ic, required=required, observed=observed))
        observed = simulate_observed(resources(composed), draw(st.integers(0, 1)))
    return World(ic, required, observed, partial=frozenset(required))


@st.composite
def shard_world(draw: st.DrawFn) -> World:
    """A gateway's shard, its hops observed (some not created yet); it requires nothing."""
    ig = gateway("g", "edge")
    fleet = [gateway_cluster(n) for n in ("edge", "c0", "c1", "c2", "c3", "c4")]
    composed = compose_gateway(Inputs(composite=ig, required={"inference-clusters": fleet}))
    shards = [
        d.resource for k, d in sorted(composed.resources.items()) if k.startswith(GATEWAY_SHARD)
    ]
    shard = draw(st.sampled_from(shards))
    hops = compose_shard(Inputs(composite=shard))
    observed = simulate_observed(resources(hops), 1)
    kept = draw(st.sets(st.sampled_from(sorted(observed))))
    return World(shard, {}, {k: o for k, o in observed.items() if k in kept})


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
    "InferenceGatewayShard.modelplane.ai": shard_world,
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


# --- reconciling as Crossplane does --------------------------------------------------------------

CALLS = 5
"""How often Crossplane calls a function in one reconcile while its requirements change."""


def reconcile_answered(
    world: World,
    composite: Obj,
    observed: dict[str, Obj],
    required: dict[str, list[Obj] | None],
    answered: bool = True,
) -> Response:
    """One reconcile: what the composer asks for by name is answered from ``world`` (unless
    ``answered`` is False: not fetched yet) and it is called again, until nothing new is asked."""
    required = dict(required)
    rsp = run(composite, observed, required)
    for _ in range(CALLS - 1):
        new = {n: ask for n, ask in rsp.by_name.items() if n not in required}
        if rsp.fatal is not None or not answered or not new:
            break
        for name, (kind, match, namespace) in new.items():
            required[name] = truly(world, kind, match, namespace)
        rsp = run(composite, observed, required)
    return rsp


def backends(resources: dict[str, Obj]) -> dict[str, list[str]]:
    """Each route's backendRef names, by composition resource name."""
    out = {}
    for key, obj in resources.items():
        manifest = ((obj.get("spec") or {}).get("forProvider") or {}).get("manifest") or {}
        if manifest.get("kind") == "HTTPRoute":
            rules = (manifest.get("spec") or {}).get("rules") or []
            out[key] = sorted(
                str(r.get("name")) for rule in rules for r in rule.get("backendRefs") or []
            )
    return out


# --- no evidence: nothing changes ---------------------------------------------------------------


def test_every_registered_composer_has_a_world() -> None:
    assert sorted(WORLDS) == default_registry().kinds()
    assert sorted(EVIDENCE) == default_registry().kinds()


@pytest.mark.parametrize("kind", sorted(WORLDS))
@checks_something
@settings(
    max_examples=examples(120),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_inputs_carrying_no_evidence_change_nothing_composed_or_routed(
    kind: str, data: st.DataObject
) -> None:
    world = data.draw(WORLDS[kind](), label="world")
    truth = reconcile_answered(world, world.composite, world.observed, dict(world.required))
    assert truth.fatal is None, truth.fatal
    wanted = set(truth.resources) & set(world.observed)

    composite, observed, required = data.draw(degraded(world), label="inputs")
    answered = data.draw(st.booleans(), label="asked-for-by-name answered")
    rsp = reconcile_answered(world, composite, observed, required, answered)
    if rsp.fatal is not None:
        vacuous("the degraded inputs' response is Fatal")
        return
    dropped = sorted(wanted - set(rsp.resources))
    assert not dropped, f"{kind} dropped {dropped}; conditions: {rsp.conditions}"
    routes, before = backends(rsp.resources), backends(truth.resources)
    for key in sorted(set(before) & set(world.observed)):
        assert routes[key] == before[key], f"{kind} rewrote {key}: {before[key]} -> {routes[key]}"


# --- evidence: a change ---------------------------------------------------------------------------

Evidence = tuple[World, Callable[[Response, Response], str]]
"""The world with evidence in it, and what must differ between the truth's response and the
response to that world ("" when it does, else what did not change)."""


def _listed(world: World, name: str, item: Obj) -> World:
    """``world`` with ``item`` in place of its namesake in requirement ``name``."""
    items = [
        item if i["metadata"]["name"] == item["metadata"]["name"] else i
        for i in world.required[name]
    ]
    return dataclasses.replace(world, required={**world.required, name: items})


def _without(world: World, name: str, gone: str) -> World:
    items = [i for i in world.required[name] if i["metadata"]["name"] != gone]
    return dataclasses.replace(world, required={**world.required, name: items})


@st.composite
def service_evidence(draw: st.DrawFn, world: World, truth: Response) -> Evidence:
    """A routed endpoint is listed not ready: its backend leaves some route."""
    routed = [
        (n, e)
        for n, items in world.required.items()
        if n.startswith("endpoints-")
        for e in items
        if e["metadata"]["name"] in _routed_names(truth)
    ]
    assume(routed)
    requirement, endpoint = draw(st.sampled_from(routed))
    unready = with_condition({**endpoint, "status": {}}, "RoutingReady", "False", "Withdrawn")
    changed = _listed(world, requirement, unready)

    def check(before: Response, after: Response) -> str:
        ok = backends(after.resources) != backends(before.resources)
        return "" if ok else f"{endpoint['metadata']['name']} listed not ready kept every backend"

    return changed, check


def _routed_names(rsp: Response) -> set[str]:
    out: set[str] = set()
    for key, obj in rsp.resources.items():
        if key.startswith("front/"):
            note = (obj["metadata"].get("annotations") or {}).get("modelplane.ai/routed-endpoints")
            out |= set(filter(None, str(note or "").split(",")))
    return out


@st.composite
def deployment_evidence(draw: st.DrawFn, world: World, truth: Response) -> Evidence:
    """A replica with an endpoint stops serving: the endpoint leaves."""
    ends = sorted(k for k in truth.resources if k.startswith("endpoint-") and k in world.observed)
    assume(ends)
    endpoint = draw(st.sampled_from(ends))
    replica = "replica-" + endpoint.removeprefix("endpoint-")
    observed = {
        **world.observed,
        replica: with_condition(world.observed[replica], "ModelServing", "False"),
    }
    changed = dataclasses.replace(world, observed=observed)
    return changed, lambda _, after: "" if endpoint not in after.resources else f"{endpoint} kept"


@st.composite
def cache_evidence(draw: st.DrawFn, world: World, truth: Response) -> Evidence:
    """A cluster holding the cache is positively gone: its objects leave."""
    names = sorted({k.rsplit("-", 1)[1] for k in world.observed if k.startswith("claim-")})
    assume(names)
    gone = draw(st.sampled_from(names))
    changed = _without(world, CACHE_CLUSTERS, gone)
    left = lambda after: sorted(k for k in after.resources if k.endswith(f"-{gone}"))  # noqa: E731
    return changed, lambda _, after: "" if not left(after) else f"{left(after)} kept"


@st.composite
def cluster_evidence(draw: st.DrawFn, world: World, truth: Response) -> Evidence:
    """Every replica on the cluster is positively gone: the guard leaves. Or a pool's class is
    (asked for by name, nothing back): the pool leaves status.gpuPools."""
    if draw(st.booleans()):
        pools = {p["name"]: p["className"] for p in world.composite["spec"]["nodePools"]}
        gone = draw(st.sampled_from(sorted(set(pools.values()))))
        changed = _without(world, "inference-classes", gone)

        def check(_: Response, after: Response) -> str:
            left = {p["name"] for p in after.status.get("gpuPools") or []}
            kept = sorted(n for n in left if pools[n] == gone)
            return f"pools {kept} of deleted class {gone} kept" if kept else ""

        return changed, check
    assume(REPLICA_GUARD in world.observed)
    changed = dataclasses.replace(world, required={**world.required, CLUSTER_REPLICAS: []})
    return changed, lambda _, after: "" if REPLICA_GUARD not in after.resources else "guard kept"


def _targets(resources: dict[str, Obj]) -> set[str]:
    """The clusters a gateway's shards dial."""
    return {
        t["cluster"]
        for k, shard in resources.items()
        if k.startswith(GATEWAY_SHARD)
        for t in shard["spec"]["targets"]
    }


@st.composite
def gateway_evidence(draw: st.DrawFn, world: World, truth: Response) -> Evidence:
    """A dialled cluster says its gateway has no address: its hop leaves its shard."""
    host = world.composite["spec"]["clusterName"]
    dialled = sorted(c for c in _targets(world.observed) if c != host)
    assume(dialled)
    name = draw(st.sampled_from(dialled))
    [cluster] = [c for c in world.required["inference-clusters"] if c["metadata"]["name"] == name]
    withdrawn = copy.deepcopy(cluster)
    withdrawn["status"]["gateway"].pop("address", None)
    withdrawn = with_condition(withdrawn, "GatewayReady", "False", "GatewayNotProgrammed")
    changed = _listed(world, "inference-clusters", withdrawn)
    kept = lambda after: name in _targets(after.resources)  # noqa: E731
    return changed, lambda _, after: f"the hop to {name} kept" if kept(after) else ""


@st.composite
def shard_evidence(draw: st.DrawFn, world: World, truth: Response) -> Evidence:
    """A target leaves the shard's spec (its gateway had evidence): its hop's Objects leave."""
    targets = world.composite["spec"]["targets"]
    gone = draw(st.sampled_from(sorted(t["cluster"] for t in targets)))
    spec = {**world.composite["spec"], "targets": [t for t in targets if t["cluster"] != gone]}
    changed = dataclasses.replace(world, composite={**world.composite, "spec": spec})
    left = lambda after: sorted(k for k in after.resources if k.endswith(f"/{gone}"))  # noqa: E731
    return changed, lambda _, after: "" if not left(after) else f"{left(after)} kept"


@st.composite
def endpoint_evidence(draw: st.DrawFn, world: World, truth: Response) -> Evidence:
    """Every gateway on one host cluster is deleted while another runs: its objects leave."""
    gateways = world.required["inference-gateways"]
    hosts = sorted({g["spec"]["clusterName"] for g in gateways})
    assume(len(hosts) > 1)
    host = draw(st.sampled_from(hosts))
    kept = [g for g in gateways if g["spec"]["clusterName"] != host]
    changed = dataclasses.replace(world, required={**world.required, "inference-gateways": kept})
    left = lambda after: sorted(k for k in after.resources if k.endswith(f"/{host}"))  # noqa: E731
    return changed, lambda _, after: "" if not left(after) else f"{left(after)} kept"


def replica_evidence(world: World, truth: Response) -> st.SearchStrategy[Evidence]:
    """Every copy of the workload is observed not ready: the replica stops serving."""
    observed = simulate_observed({k: carried_form(o) for k, o in world.observed.items()}, 0)
    changed = dataclasses.replace(world, observed=observed)

    def check(_: Response, after: Response) -> str:
        serving = after.conditions.get("ModelServing", ("",))[0]
        return "" if serving == "False" else f"ModelServing {serving} with no ready copy"

    return st.just((changed, check))


def carried_form(obj: Obj) -> Obj:
    return {k: copy.deepcopy(v) for k, v in obj.items() if k != "status"}


def class_evidence(world: World, truth: Response) -> st.SearchStrategy[Evidence]:
    """A class composes nothing, so nothing can be held on no evidence either."""
    return st.just((world, lambda _, after: "" if not after.resources else "it composed"))


EVIDENCE: dict[str, Callable[[World, Response], st.SearchStrategy[Evidence]]] = {
    "ModelDeployment.modelplane.ai": deployment_evidence,
    "ModelCache.modelplane.ai": cache_evidence,
    "ModelReplica.modelplane.ai": replica_evidence,
    "InferenceCluster.modelplane.ai": cluster_evidence,
    "InferenceClass.modelplane.ai": class_evidence,
    "InferenceGateway.modelplane.ai": gateway_evidence,
    "InferenceGatewayShard.modelplane.ai": shard_evidence,
    "ModelService.modelplane.ai": service_evidence,
    "ModelEndpoint.modelplane.ai": endpoint_evidence,
}


@pytest.mark.parametrize("kind", sorted(WORLDS))
@settings(
    max_examples=examples(60),
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.filter_too_much,
    ],
)
@given(data=st.data())
def test_inputs_carrying_evidence_change_what_is_composed(kind: str, data: st.DataObject) -> None:
    world = data.draw(WORLDS[kind](), label="world")
    truth = reconcile_answered(world, world.composite, world.observed, dict(world.required))
    assert truth.fatal is None, truth.fatal
    changed, check = data.draw(EVIDENCE[kind](world, truth), label="evidence")
    rsp = reconcile_answered(changed, changed.composite, changed.observed, dict(changed.required))
    assert rsp.fatal is None, rsp.fatal
    problem = check(truth, rsp)
    assert not problem, f"{kind}: {problem}"
