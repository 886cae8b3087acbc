"""A ModelDeployment and the ModelService routing to it, reconciled in turn through the
FunctionRunner as Crossplane would: a replica leaving (scale-in, a drain) loses its endpoint
first and is deleted only once the routes no longer reference its pool, so no route ever sends
traffic to a deleted pool."""

from __future__ import annotations

import copy
from typing import Any

from modelplane.compose.modeldeployment.composer import CLASSES, CLUSTERS, REPLICAS
from modelplane.compose.modeldeployment.drain import HOLDS, ROUTES, held_replicas, referenced_pools
from modelplane.compose.modeldeployment.endpoints import endpoint_key
from modelplane.compose.modelservice.composer import endpoints_requirement
from modelplane.compose.shared.replicapool import replica_pool_name
from modelplane.labels import ROUTES_POOLS
from modelplane.simulate import simulate_observed
from tests.compose.modelservice.kit import cluster, gateway, service
from tests.compose.through import run
from tests.fleet.builders import H100, deployment, fleet, reported

Obj = dict[str, Any]
MS = service("qwen", "ml", (1, {"app": "qwen"}))


def fronted(taints: dict[str, list[Obj]] | None = None) -> list[Obj]:
    """East, west and north, each with a gateway class and a fleet hostname: behind the door."""
    out = fleet("east", "west", "north", taints=taints)
    for ic in out:
        name = ic["metadata"]["name"]
        ic["status"]["gateway"] |= {
            "className": "envoy",
            "fleetHostname": f"{name}.fleet.modelplane.internal",
        }
    return out


class World:
    """What each composite has composed, as the API server holds it."""

    def __init__(self) -> None:
        self.deployment: dict[str, Obj] = {}
        self.service: dict[str, Obj] = {}

    def routes(self) -> list[Obj]:
        labelled = (o for o in self.service.values() if o["metadata"].get("labels"))
        return [o for o in labelled if o["metadata"]["labels"].get(ROUTES_POOLS) == "true"]

    def endpoints(self) -> list[Obj]:
        """The deployment's endpoints as their own composition publishes them."""
        out = []
        for obj in self.deployment.values():
            if obj["kind"] == "ModelEndpoint":
                obj = copy.deepcopy(obj)
                pool = obj["spec"]["inferencePool"]
                obj["status"] = {"routing": {"backendName": pool}}
                out.append(obj)
        return out

    def pools(self) -> set[str]:
        """The InferencePools that exist: one per ModelReplica the deployment still composes."""
        return {
            replica_pool_name(o["metadata"]["name"])
            for o in self.deployment.values()
            if o["kind"] == "ModelReplica"
        }

    def usages(self) -> list[Obj]:
        return [o for o in self.service.values() if o["kind"] == "Usage"]

    def reconcile_deployment(self, md: Obj, clusters: list[Obj]) -> None:
        mine = [o for o in self.deployment.values() if o["kind"] == "ModelReplica"]
        required = {
            CLUSTERS: clusters,
            CLASSES: [H100],
            REPLICAS: mine,
            ROUTES: self.routes(),
            HOLDS: self.usages(),
        }
        rsp = run(md, self.deployment, required)
        # A route Object asked for by name is answered as Crossplane fetches it: the truth;
        # and it calls again until nothing new is asked.
        while new := {k: v for k, v in rsp.by_name.items() if k not in required}:
            for key, (_, name, _) in new.items():
                required[key] = [o for o in self.routes() if o["metadata"]["name"] == name]
            rsp = run(md, self.deployment, required)
        assert rsp.fatal is None, rsp.fatal
        dropped = {o["metadata"]["name"] for o in mine} - {
            o["metadata"]["name"] for o in rsp.resources.values()
        }
        # Deleting a held replica would be refused, and fail the deployment's whole reconcile.
        assert not dropped & held_replicas(self.usages()), "a held replica was deleted"
        self.deployment = {
            k: reported(copy.deepcopy(o), up=True)
            if o["kind"] == "ModelReplica"
            else copy.deepcopy(o)
            for k, o in rsp.resources.items()
        }

    def reconcile_service(self, clusters: list[Obj]) -> None:
        required = {
            "inference-gateways": [gateway("main", "edge")],
            "inference-clusters": [cluster("edge", pools=False), *clusters],
            endpoints_requirement(0): self.endpoints(),
        }
        rsp = run(MS, self.service, required)
        # Asked for by name, as Crossplane fetches and calls again: the truth.
        truth = [*required["inference-gateways"], *required["inference-clusters"]]
        truth += required[endpoints_requirement(0)]
        for key, (kind, name, _) in rsp.by_name.items():
            required[key] = [
                o for o in truth if o["kind"] == kind and o["metadata"]["name"] == name
            ]
        rsp = run(MS, self.service, required)
        assert rsp.fatal is None, rsp.fatal
        self.service = simulate_observed(copy.deepcopy(rsp.resources), 1)

    def routed_pools(self) -> set[str]:
        return referenced_pools(self.routes())


def rolled(md: Obj, world: World, clusters: list[Obj], reconciles: int) -> list[set[str]]:
    """Reconcile both in turn; after each, every pool a route references must exist."""
    seen = []
    for _ in range(reconciles):
        world.reconcile_deployment(md, clusters)
        assert world.routed_pools() <= world.pools(), "a route references a deleted pool"
        world.reconcile_service(clusters)
        assert world.routed_pools() <= world.pools(), "a route references a deleted pool"
        seen.append(world.pools())
    return seen


def test_a_scale_in_never_leaves_a_route_referencing_a_deleted_pool() -> None:
    world = World()
    rolled(deployment("qwen", replicas=3), world, fronted(), 3)
    assert len(world.routed_pools()) == 3
    history = rolled(deployment("qwen", replicas=1), world, fronted(), 4)
    assert len(history[-1]) == 1
    assert world.routed_pools() == history[-1]


def test_a_leaving_replica_loses_its_endpoint_before_it_is_deleted() -> None:
    world = World()
    rolled(deployment("qwen", replicas=2), world, fronted(), 3)
    world.reconcile_deployment(deployment("qwen", replicas=1), fronted())
    replicas = [o for o in world.deployment.values() if o["kind"] == "ModelReplica"]
    endpoints = [o for o in world.deployment.values() if o["kind"] == "ModelEndpoint"]
    assert (len(replicas), len(endpoints)) == (2, 1)


def test_a_drained_cluster_s_replica_moves_without_a_route_to_a_deleted_pool() -> None:
    world = World()
    md = deployment("qwen", replicas=1)
    rolled(md, world, fronted(), 3)
    [where] = {
        o["spec"]["clusterName"]
        for o in world.deployment.values()
        if "clusterName" in o.get("spec", {})
    }
    drained = fronted({where: [{"key": "maintenance", "effect": "NoExecute"}]})
    history = rolled(md, world, drained, 6)
    [left] = [o for o in world.deployment.values() if o["kind"] == "ModelReplica"]
    assert left["spec"]["clusterName"] != where
    assert world.routed_pools() == history[-1]


def draining_one() -> tuple[World, Obj, str]:
    """Two replicas serving behind the routes; scaled in to one, whose leaving replica has lost
    its endpoint (and recorded the routes naming its pool) while the routes still name it."""
    world = World()
    rolled(deployment("qwen", replicas=2), world, fronted(), 3)
    md = deployment("qwen", replicas=1)
    world.reconcile_deployment(md, fronted())
    [leaving] = [
        k
        for k, o in world.deployment.items()
        if o["kind"] == "ModelReplica" and endpoint_key(k) not in world.deployment
    ]
    return world, md, leaving


def required_with(world: World, routes: list[Obj], **by_name: list[Obj]) -> dict:
    mine = [o for o in world.deployment.values() if o["kind"] == "ModelReplica"]
    required = {CLUSTERS: fronted(), CLASSES: [H100], REPLICAS: mine, ROUTES: routes, HOLDS: []}
    return {**required, **by_name}


def test_an_empty_route_list_asks_for_the_recorded_routes_by_name_and_keeps_the_replica() -> None:
    world, md, leaving = draining_one()
    pool = replica_pool_name(world.deployment[leaving]["metadata"]["name"])
    naming = sorted(o["metadata"]["name"] for o in world.routes() if pool in referenced_pools([o]))
    assert naming
    rsp = run(md, world.deployment, required_with(world, []))
    assert leaving in rsp.resources
    assert sorted(name for _, name, _ in rsp.by_name.values()) == naming
    assert rsp.status["replicas"]["draining"] == 1


def test_a_recorded_route_found_by_name_still_naming_the_pool_keeps_the_replica() -> None:
    world, md, leaving = draining_one()
    routes = {f"route/ml/{o['metadata']['name']}": [o] for o in world.routes()}
    rsp = run(md, world.deployment, required_with(world, [], **routes))
    assert leaving in rsp.resources


def test_the_replica_goes_once_every_recorded_route_is_gone_by_name() -> None:
    world, md, leaving = draining_one()
    asked = run(md, world.deployment, required_with(world, [])).by_name
    rsp = run(md, world.deployment, required_with(world, [], **{k: [] for k in asked}))
    assert leaving not in rsp.resources
