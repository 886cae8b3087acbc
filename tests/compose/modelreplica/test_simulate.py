"""Simulated observed state: what provider-kubernetes would report with N ready copies."""

from __future__ import annotations

from typing import Any

import pytest

from modelplane import simulate
from modelplane.compose.modelreplica import routing
from modelplane.compose.modelreplica.remote import wrap
from tests.compose.modelreplica.routing_fixtures import context, gang, replica, standalone, workload

Obj = dict[str, Any]


def ready(obj: Obj) -> str:
    return next(c["status"] for c in obj["status"]["conditions"] if c["type"] == "Ready")


def remote_status(obj: Obj) -> Obj:
    return obj["status"]["atProvider"]["manifest"].get("status", {})


def deployment(replicas: int, readiness: Obj | None = None, strategy: Obj | None = None) -> Obj:
    manifest: Obj = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d", "namespace": "ml-team"},
        "spec": {"replicas": replicas},
    }
    if strategy:
        manifest["spec"]["strategy"] = strategy
    return wrap(context(), "workload", manifest, readiness=readiness)


ALL_READY = {
    "policy": "DeriveFromCelQuery",
    "celQuery": "has(object.status.readyReplicas)"
    " && object.status.readyReplicas >= object.spec.replicas",
}


def test_every_desired_resource_is_observed_under_its_own_key() -> None:
    desired = routing.compose_routing(context())
    assert set(simulate.simulate_observed(desired, 1)) == set(desired)


def test_observed_object_carries_the_remote_manifest_and_is_synced() -> None:
    obj = deployment(2)
    observed = simulate.observe(obj, 1)
    manifest = observed["status"]["atProvider"]["manifest"]
    assert manifest["metadata"]["name"] == "d"
    assert manifest["spec"] == {"replicas": 2}
    assert {"type": "Synced", "status": "True"}.items() <= observed["status"]["conditions"][
        1
    ].items()


def test_simulation_never_mutates_the_desired_resources() -> None:
    obj = deployment(2)
    before = repr(obj)
    simulate.observe(obj, 1)
    assert repr(obj) == before


@pytest.mark.parametrize(("n", "ready_replicas"), [(0, None), (1, 1), (3, 3), (9, 3)])
def test_deployment_reports_up_to_its_replicas_ready(n: int, ready_replicas: int | None) -> None:
    status = remote_status(simulate.observe(deployment(3), n))
    assert status.get("readyReplicas") == ready_replicas
    assert status.get("availableReplicas") == ready_replicas


def test_zero_counters_are_omitted_as_the_api_server_does() -> None:
    status = remote_status(simulate.observe(deployment(3), 0))
    assert "readyReplicas" not in status
    assert "availableReplicas" not in status


@pytest.mark.parametrize(
    ("replicas", "n", "strategy", "available"),
    [
        (3, 2, None, "False"),  # 25% of 3 rounds down to 0 tolerated
        (3, 3, None, "True"),
        (4, 3, None, "True"),  # 25% of 4 tolerates one missing
        (1, 0, {"type": "Recreate"}, "False"),
        (1, 1, {"type": "Recreate"}, "True"),
        (4, 2, {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 2}}, "True"),
    ],
)
def test_deployment_available_condition_follows_max_unavailable(
    replicas: int, n: int, strategy: Obj | None, available: str
) -> None:
    status = remote_status(simulate.observe(deployment(replicas, strategy=strategy), n))
    assert next(c["status"] for c in status["conditions"] if c["type"] == "Available") == available


def test_ready_follows_the_objects_cel_query() -> None:
    assert ready(simulate.observe(deployment(3, ALL_READY), 2)) == "False"
    assert ready(simulate.observe(deployment(3, ALL_READY), 3)) == "True"


def test_a_query_that_errors_is_not_ready() -> None:
    broken = {"policy": "DeriveFromCelQuery", "celQuery": "object.status.nope.deeper == 1"}
    assert ready(simulate.observe(deployment(1, broken), 1)) == "False"


@pytest.mark.parametrize(("n", "expected"), [(0, "True"), (1, "True")])
def test_successful_create_is_ready_once_applied(n: int, expected: str) -> None:
    assert ready(simulate.observe(routing.compose_routing(context())["epp-config"], n)) == expected


@pytest.mark.parametrize(
    ("policy", "conditions", "expected"),
    [
        ("DeriveFromObject", [{"type": "Ready", "status": "True"}], True),
        ("DeriveFromObject", [{"type": "Available", "status": "True"}], False),
        ("AllTrue", [{"type": "A", "status": "True"}, {"type": "B", "status": "True"}], True),
        ("AllTrue", [{"type": "A", "status": "True"}, {"type": "B", "status": "False"}], False),
        ("AllTrue", [], False),
    ],
)
def test_readiness_policies(policy: str, conditions: list[Obj], expected: bool) -> None:
    assert (
        simulate.readiness({"policy": policy}, {"status": {"conditions": conditions}}) is expected
    )


def test_an_unknown_readiness_policy_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match=r"spec\.readiness\.policy"):
        simulate.readiness({"policy": "Sometimes"}, {})


def test_negative_ready_copies_are_rejected() -> None:
    with pytest.raises(ValueError, match="at least 0"):
        simulate.simulate_observed({}, -1)


@pytest.mark.parametrize(
    ("n", "ready_groups", "available"), [(0, None, "False"), (1, 1, "False"), (2, 2, "True")]
)
def test_leader_worker_set_reports_ready_groups(
    n: int, ready_groups: int | None, available: str
) -> None:
    ctx = context(replica(engines=[gang("e", copies=2)]))
    status = remote_status(simulate.observe(workload(ctx, ctx.engines[0], "LeaderWorkerSet"), n))
    assert status.get("readyReplicas") == ready_groups
    assert next(c["status"] for c in status["conditions"] if c["type"] == "Available") == available


def test_pod_clique_set_reports_available_replicas_and_no_condition() -> None:
    ctx = context(replica(engines=[gang("e", copies=2)]))
    status = remote_status(simulate.observe(workload(ctx, ctx.engines[0], "PodCliqueSet"), 1))
    assert status["availableReplicas"] == 1
    assert "conditions" not in status


def test_the_simulated_gateway_accepts_the_route() -> None:
    route = simulate.observe(routing.compose_routing(context())["http-route"], 0)
    assert ready(route) == "True"
    [parent] = remote_status(route)["parents"]
    assert parent["parentRef"]["name"] == "inference-gateway"


def test_the_picker_is_available_from_one_ready_copy() -> None:
    desired = routing.compose_routing(context())
    assert ready(simulate.simulate_observed(desired, 0)["epp-deployment"]) == "False"
    assert ready(simulate.simulate_observed(desired, 1)["epp-deployment"]) == "True"


def test_simulation_is_deterministic() -> None:
    desired = {
        "workload-e": workload(context(), standalone("e")),
        **routing.compose_routing(context()),
    }
    assert simulate.simulate_observed(desired, 1) == simulate.simulate_observed(desired, 1)


def test_resources_that_are_not_provider_kubernetes_objects_pass_through() -> None:
    nested = {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelReplica",
        "metadata": {"name": "r"},
    }
    assert simulate.simulate_observed({"replica-0": nested}, 1) == {"replica-0": nested}


def test_render_can_take_it_as_its_simulator() -> None:
    import functools

    simulator = functools.partial(simulate.simulate_observed, ready_copies=1)
    desired = routing.compose_routing(context())
    assert simulator(desired) == simulate.simulate_observed(desired, 1)


def hydration_job() -> Obj:
    manifest: Obj = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j", "namespace": "ml-team"},
        "spec": {"template": {"spec": {"containers": [], "restartPolicy": "Never"}}},
    }
    return wrap(context(), "hydrate", manifest)


def test_a_job_completes_once_a_copy_can_run() -> None:
    status = remote_status(simulate.observe(hydration_job(), 1))
    assert status["succeeded"] == 1
    assert {"type": "Complete", "status": "True"}.items() <= status["conditions"][-1].items()


def test_a_job_without_a_ready_copy_stays_active() -> None:
    assert remote_status(simulate.observe(hydration_job(), 0)) == {"active": 1}


def test_a_claim_is_bound_with_its_requested_capacity() -> None:
    manifest: Obj = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "c", "namespace": "ml-team"},
        "spec": {"accessModes": ["ReadWriteMany"], "resources": {"requests": {"storage": "5Gi"}}},
    }
    status = remote_status(simulate.observe(wrap(context(), "claim", manifest), 0))
    assert status == {
        "phase": "Bound",
        "accessModes": ["ReadWriteMany"],
        "capacity": {"storage": "5Gi"},
    }
