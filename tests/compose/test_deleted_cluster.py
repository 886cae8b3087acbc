"""A cluster deleted under a ModelService routing to replicas on it, reconciled through the
FunctionRunner with the deployment and the service in turn (issue 38, point 6). The service
drops the cluster's lanes and fleet route only on evidence (the cluster asked for by name and
not found), never because a list no longer holds it; once its routes let go, its Usages release
the replicas and the deployment deletes them."""

from __future__ import annotations

import copy
from typing import Any

from modelplane.compose.modeldeployment.drain import held_replicas
from modelplane.compose.modelservice.composer import endpoints_requirement
from modelplane.compose.shared.replicapool import replica_pool_name
from modelplane.simulate import simulate_observed
from tests.compose.modelservice.kit import cluster, gateway
from tests.compose.test_delete_while_routed import Api
from tests.compose.test_drain_before_delete import MS, fronted, rolled
from tests.compose.through import run
from tests.fleet.builders import deployment

Obj = dict[str, Any]
MD = deployment("qwen", replicas=3)


def reconcile_service(api: Api, listed: list[Obj], truth: list[Obj]) -> None:
    """One service reconcile whose cluster list holds ``listed``, each object asked for by name
    answered from ``truth`` (as Crossplane fetches it and calls again), until nothing new is
    asked; then what Crossplane does: Usages left out released, refused deletes replayed."""
    required: dict[str, list[Obj] | None] = {
        "inference-gateways": [gateway("main", "edge")],
        "inference-clusters": [cluster("edge", pools=False), *listed],
        endpoints_requirement(0): api.endpoints(),
    }
    everything = [gateway("main", "edge"), cluster("edge", pools=False), *truth, *api.endpoints()]
    rsp = run(MS, api.service, required)
    while unanswered := {k: v for k, v in rsp.by_name.items() if k not in required}:
        for key, (kind, name, _) in unanswered.items():
            required[key] = [
                o for o in everything if o["kind"] == kind and o["metadata"]["name"] == name
            ]
        rsp = run(MS, api.service, required)
    assert rsp.fatal is None, rsp.fatal
    api.service = simulate_observed(copy.deepcopy(rsp.resources), 1)
    held = held_replicas(api.usages())
    api.delete_replicas({r for r in api.attempted if r not in held})


def placed(api: Api) -> dict[str, str]:
    """Each ModelReplica's cluster."""
    return {
        o["metadata"]["name"]: o["spec"]["clusterName"]
        for o in api.deployment.values()
        if o["kind"] == "ModelReplica"
    }


def serving_on_three() -> tuple[Api, str]:
    """Three replicas serving behind the routes, one per cluster; and the cluster of one."""
    api = Api()
    rolled(MD, api, fronted(), 3)
    assert len(set(placed(api).values())) == 3
    assert api.routed_pools() == {replica_pool_name(r) for r in placed(api)}
    return api, sorted(placed(api).values())[0]


def test_a_deleted_cluster_s_replicas_are_deleted_once_the_routes_let_go() -> None:
    api, deleted = serving_on_three()
    stranded = {r for r, c in placed(api).items() if c == deleted}
    left = [c for c in fronted() if c["metadata"]["name"] != deleted]
    for _ in range(5):
        api.reconcile_deployment(MD, left)
        assert api.routed_pools() <= api.pools(), "a route references a deleted pool"
        reconcile_service(api, left, left)  # asked for by name: nothing back
        assert api.routed_pools() <= api.pools(), "a route references a deleted pool"
    assert f"fleet/{deleted}" not in api.service
    assert not {replica_pool_name(r) for r in stranded} & api.routed_pools()
    assert not stranded & held_replicas(api.usages())
    assert not stranded & placed(api).keys()


def test_a_cluster_missing_from_a_lagging_list_but_found_by_name_keeps_its_route() -> None:
    api, lagging = serving_on_three()
    routed, held = api.routed_pools(), held_replicas(api.usages())
    listed = [c for c in fronted() if c["metadata"]["name"] != lagging]
    for _ in range(3):
        reconcile_service(api, listed, fronted())
    assert f"fleet/{lagging}" in api.service
    assert api.routed_pools() == routed
    assert held_replicas(api.usages()) == held
