"""Deleting a ModelDeployment while a ModelService routes to it, reconciled through the
FunctionRunner with the API server's part played as Crossplane v2.3.4 and Kubernetes do it: no
function runs on the deletion; the garbage collector deletes the deployment's endpoints and
replicas; the Usage webhook refuses deleting a replica a Usage holds and records the attempt
(internal/webhook/protection/usage/handler.go); a Usage left out of the service's desired state
is released at once when it names no ``by`` (held while its ``by`` exists when it does) and, with
``replayDeletion``, the refused deletion is replayed (internal/controller/protection/usage/
reconciler.go)."""

from __future__ import annotations

from typing import Any

from modelplane.compose.modeldeployment.drain import held_replicas
from modelplane.compose.shared.replicapool import replica_pool_name
from tests.compose.test_drain_before_delete import World, fronted, rolled
from tests.fleet.builders import deployment

Obj = dict[str, Any]


class Api(World):
    """The world, with deletions as the API server, the garbage collector and Crossplane's
    Usage controller carry them out."""

    def __init__(self) -> None:
        super().__init__()
        self.attempted: set[str] = set()
        """Replicas whose deletion was refused: the webhook's deletion-attempt annotation."""
        self.released: list[tuple[str, set[str]]] = []
        """(replica, pools the routes named when its Usage was released)."""

    def replicas(self) -> set[str]:
        return {
            o["metadata"]["name"] for o in self.deployment.values() if o["kind"] == "ModelReplica"
        }

    def delete_replicas(self, names: set[str]) -> None:
        held = held_replicas(self.usages())
        self.attempted |= names & held
        self.deployment = {
            k: o
            for k, o in self.deployment.items()
            if o["kind"] != "ModelReplica" or o["metadata"]["name"] not in names - held
        }

    def delete_deployment(self) -> None:
        """The composite is gone: the collector deletes its endpoints, then its replicas."""
        self.deployment = {k: o for k, o in self.deployment.items() if o["kind"] != "ModelEndpoint"}
        self.delete_replicas(self.replicas())

    def reconcile_service_deleted_or_not(self, clusters: list[Obj], deleted: bool) -> None:
        before = self.usages()
        named = self.routed_pools()
        if deleted:
            self.service = {}  # the collector deletes what it composed, Usages with it
        else:
            self.reconcile_service(clusters)
        after = held_replicas(self.usages())
        for usage in before:
            if usage["spec"]["of"]["resourceRef"]["name"] in after:
                continue
            if "by" in usage["spec"] and not deleted:
                raise AssertionError("a composed Usage with a by is held while its by exists")
            replica = usage["spec"]["of"]["resourceRef"]["name"]
            self.released.append((replica, named | self.routed_pools()))
        # replayDeletion: a refused delete is replayed once nothing holds the replica.
        self.delete_replicas({r for r in self.attempted if r not in after})

    def settle(self, clusters: list[Obj], reconciles: int, service_deleted: bool = False) -> None:
        for _ in range(reconciles):
            self.reconcile_service_deleted_or_not(clusters, service_deleted)
            assert self.routed_pools() <= self.pools(), "a route references a deleted pool"


def routed_api(replicas: int = 2) -> Api:
    api = Api()
    rolled(deployment("qwen", replicas=replicas), api, fronted(), 3)
    assert len(api.routed_pools()) == replicas
    return api


def test_every_pool_the_routes_name_holds_its_replica() -> None:
    api = routed_api()
    held = held_replicas(api.usages())
    assert {replica_pool_name(r) for r in held} == api.routed_pools()


def test_a_deleted_deployment_s_replicas_wait_for_the_routes_to_let_go() -> None:
    api = routed_api()
    api.delete_deployment()
    assert api.replicas() == api.attempted and len(api.attempted) == 2
    assert api.routed_pools() <= api.pools()


def test_a_deployment_deleted_while_routed_never_leaves_a_route_to_a_deleted_pool() -> None:
    api = routed_api()
    api.delete_deployment()
    api.settle(fronted(), 4)
    assert api.replicas() == set()
    assert api.routed_pools() == set()


def test_a_usage_goes_only_once_no_route_names_its_pool() -> None:
    api = routed_api()
    api.delete_deployment()
    api.settle(fronted(), 4)
    assert len(api.released) == 2
    for replica, named in api.released:
        assert replica_pool_name(replica) not in named


def test_terminating_endpoints_leave_the_routes_before_their_replicas_go() -> None:
    """A deleted ModelEndpoint is listed until Crossplane removes its finalizer: its
    deletionTimestamp is the evidence it is going."""
    api = routed_api()
    for obj in api.deployment.values():
        if obj["kind"] == "ModelEndpoint":
            obj["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    api.delete_replicas(api.replicas())
    api.settle(fronted(), 4)  # the endpoints stay listed, terminating, throughout
    assert api.routed_pools() == set()
    assert api.replicas() == set()


def test_deleting_the_service_too_blocks_nothing() -> None:
    api = routed_api()
    api.delete_deployment()
    api.settle(fronted(), 1, service_deleted=True)
    assert api.replicas() == set()


def test_a_scale_in_still_drains_with_the_usages_in_place() -> None:
    api = routed_api(3)
    history = rolled(deployment("qwen", replicas=1), api, fronted(), 4)
    assert len(history[-1]) == 1
    assert held_replicas(api.usages()) == api.replicas()
    assert api.attempted == set()  # no deletion was ever refused


def test_the_deployment_keeps_a_leaving_replica_while_a_usage_holds_it() -> None:
    api = routed_api()
    md = deployment("qwen", replicas=1)
    api.reconcile_deployment(md, fronted())  # withdrawn
    [leaving] = api.replicas() - {o["metadata"]["name"] for o in api.endpoints()}
    for _ in range(2):
        api.reconcile_service(fronted())  # the front routes first, then the fleet route
    assert replica_pool_name(leaving) not in api.routed_pools()
    # The routes let go; the Usage stays while the routes it last observed named the pool.
    assert leaving in held_replicas(api.usages())
    api.reconcile_deployment(md, fronted())
    assert leaving in api.replicas()
    api.reconcile_service(fronted())
    assert leaving not in held_replicas(api.usages())
    api.reconcile_deployment(md, fronted())
    assert leaving not in api.replicas()
