"""Day-two churn on an InferenceCluster, through the FunctionRunner: a component handed over to
its owner, a Gateway read before its status is written, a replica list that comes back empty.
Nothing installed is uninstalled, no address is withdrawn and no protection lifted on no
evidence."""

from __future__ import annotations

import copy
from typing import Any

from modelplane.compose.inferencecluster.composer import CLASSES, GATEWAY, GATEWAYS, REPLICAS
from modelplane.compose.inferencecluster.usages import REPLICA_GUARD
from tests.compose.through import Response, run

from .support import H100, cluster, observed_as_installed
from .support import installing as installing_directly

Obj = dict[str, Any]


def reconcile_cluster(
    ic: Obj, observed: dict[str, Obj], replicas: list[Obj] | None = None, **more: Any
):
    required: dict[str, list[Obj] | None] = {CLASSES: [H100], REPLICAS: replicas, **more}
    return run(ic, observed, required)


def installed(ic: Obj) -> dict[str, Obj]:
    """Every resource the cluster composes, observed as a working cluster reports it."""
    return observed_as_installed(installing_directly(ic))


def as_observed(rsp: Response) -> dict[str, Obj]:
    assert rsp.fatal is None, rsp.fatal
    return copy.deepcopy(rsp.resources)


def component(rsp: Response, name: str, kind: str) -> dict[str, Obj]:
    return {
        k: r
        for k, r in rsp.resources.items()
        if r["kind"] == kind and (r["metadata"].get("labels") or {}).get(STACK) == name
    }


STACK = "modelplane.ai/stack-component"


# --- Managed -> External hands a component over ----------------------------------------------


def external(ic: Obj, field: str) -> Obj:
    out = copy.deepcopy(ic)
    out["spec"].setdefault("servingStack", {})[field] = {"mode": "External"}
    return out


def test_a_component_made_external_keeps_its_release_observe_only() -> None:
    # provider-helm v1.4.0 pkg/controller/namespaced/release/release.go: Setup enables
    # managed.WithManagementPolicies() (on by default: cmd/provider/main.go
    # --enable-management-policies), and helmExternal.Delete calls helm.Uninstall. The
    # managed reconciler of crossplane-runtime v2.3.3 (pkg/reconciler/managed/reconciler.go,
    # policies.go ShouldDelete) skips Delete for a resource whose managementPolicies hold
    # neither Delete nor "*": a Release kept observe-only until it is observed so is released
    # by Crossplane without uninstalling the chart.
    ic = cluster()
    observed = installed(ic)
    [(key, before)] = component_of(observed, "cert-manager", "Release").items()
    rsp = reconcile_cluster(external(ic, "certManager"), observed)
    kept = rsp.resources[key]
    assert kept["spec"]["managementPolicies"] == ["Observe"]
    assert kept["spec"]["forProvider"] == before["spec"]["forProvider"]
    assert rsp.condition("HandedOver")[:2] == ("True", "HandingOver")
    assert "cert-manager" in rsp.condition("HandedOver")[2]


def test_a_release_observed_observe_only_is_released() -> None:
    ic = cluster()
    handing = reconcile_cluster(external(ic, "certManager"), installed(ic))
    observed = as_observed(handing)
    rsp = reconcile_cluster(external(ic, "certManager"), observed)
    assert component(rsp, "cert-manager", "Release") == {}
    assert "HandedOver" not in rsp.conditions


def test_a_cluster_that_reported_a_hand_over_says_it_is_released_once_it_is() -> None:
    # Crossplane keeps a condition a function stops returning as last set (crossplane v2.3.4
    # internal/controller/apiextensions/composite/reconciler.go handleCommonCompositionResult),
    # so "HandingOver" would stand for good if nothing replaced it.
    ic = external(cluster(), "certManager")
    handing = reconcile_cluster(ic, installed(cluster()))
    status, reason, message = handing.condition("HandedOver")
    ic["status"] = {
        "conditions": [
            {"type": "HandedOver", "status": status, "reason": reason, "message": message}
        ]
    }
    rsp = reconcile_cluster(ic, as_observed(handing))
    assert component(rsp, "cert-manager", "Release") == {}
    assert rsp.condition("HandedOver")[:2] == ("True", "Released")


def test_an_external_gateway_keeps_its_class_proxy_and_client_policy_observe_only() -> None:
    ic = cluster()
    observed = installed(ic)
    was = {
        k
        for k, o in observed.items()
        if o["kind"] == "Object"
        and o["spec"].get("managementPolicies") is None
        and o["metadata"]["labels"][STACK] in ("inference-gateway", "fleet-tls")
    }
    gone_external = copy.deepcopy(ic)
    gone_external["spec"]["gateway"] = {"mode": "External"}
    rsp = reconcile_cluster(gone_external, observed)
    assert was <= set(rsp.resources)  # nothing the gateway had is deleted
    kinds = {
        rsp.resources[k]["spec"]["forProvider"]["manifest"]["kind"]
        for k in was
        if rsp.resources[k]["spec"].get("managementPolicies") == ["Observe"]
    }
    assert {"GatewayClass", "EnvoyProxy", "ClientTrafficPolicy"} <= kinds


def component_of(observed: dict[str, Obj], name: str, kind: str) -> dict[str, Obj]:
    return {
        k: r
        for k, r in observed.items()
        if r["kind"] == kind and (r["metadata"].get("labels") or {}).get(STACK) == name
    }


# --- a Gateway read before its status is written -------------------------------------------


def test_a_gateway_observed_without_status_keeps_the_last_address() -> None:
    ic = cluster()
    ic["status"] = {"gateway": {"address": "203.0.113.10"}}
    observed = installed(ic)
    observed[GATEWAY].pop("status", None)
    rsp = reconcile_cluster(ic, observed)
    assert rsp.fatal is None, rsp.fatal
    # The address is carried forward, and GatewayReady says it is the last one published.
    status, _, message = rsp.condition("GatewayReady")
    assert status == "True"
    assert "203.0.113.10" in message and "last published" in message


# --- an empty replica list -----------------------------------------------------------------------


def replica(name: str, namespace: str, cluster_name: str = "east") -> Obj:
    return {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelReplica",
        "metadata": {"name": name, "namespace": namespace, "labels": {}},
        "spec": {
            "clusterName": cluster_name,
            "engines": [
                {
                    "name": "main",
                    "members": [{"role": "Standalone", "template": {"spec": {"containers": []}}}],
                }
            ],
        },
    }


def guarded(ic: Obj) -> dict[str, Obj]:
    return as_observed(reconcile_cluster(ic, installed(ic), [replica("r0", "team-a")]))


def test_an_empty_replica_list_keeps_the_guard_and_asks_for_the_replicas_by_name() -> None:
    ic = cluster()
    observed = guarded(ic)
    rsp = reconcile_cluster(ic, observed, [])
    assert REPLICA_GUARD in rsp.resources
    assert rsp.condition("InUse")[0] == "True"


def test_a_guarded_replica_found_by_name_keeps_the_guard() -> None:
    ic = cluster()
    observed = guarded(ic)
    more = {"guarded-replica/team-a/r0": [replica("r0", "team-a")]}
    rsp = reconcile_cluster(ic, observed, [], **more)
    assert REPLICA_GUARD in rsp.resources
    assert "team-a/r0" in rsp.resources[REPLICA_GUARD]["spec"]["reason"]


def test_the_guard_goes_once_every_guarded_replica_is_positively_gone() -> None:
    ic = cluster()
    observed = guarded(ic)
    rsp = reconcile_cluster(ic, observed, [], **{"guarded-replica/team-a/r0": []})
    assert REPLICA_GUARD not in rsp.resources
    assert rsp.condition("InUse")[:2] == ("False", "NoReplicas")


# --- an empty gateway list -----------------------------------------------------------------------


def hosting(ic: Obj) -> dict[str, Obj]:
    front = {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "InferenceGateway",
        "metadata": {"name": "front"},
        "spec": {"clusterName": "east", "hostname": "a.example.com", "tls": {"issuerRef": {}}},
    }
    rsp = reconcile_cluster(ic, installed(ic), [], **{GATEWAYS: [front]})
    assert "gateway-guard/front" in rsp.resources
    return as_observed(rsp)


def test_an_empty_gateway_list_keeps_the_gateway_guard_until_read_by_name() -> None:
    ic = cluster()
    rsp = reconcile_cluster(ic, hosting(ic), [], **{GATEWAYS: []})
    assert "gateway-guard/front" in rsp.resources


def test_the_gateway_guard_goes_once_its_gateway_is_positively_gone() -> None:
    ic = cluster()
    rsp = reconcile_cluster(ic, hosting(ic), [], **{GATEWAYS: [], "guarded-gateway/front": []})
    assert "gateway-guard/front" not in rsp.resources


# --- a pool's class missing from the list ----------------------------------------------------


def with_pools(ic: Obj) -> tuple[Obj, dict[str, Obj]]:
    """The cluster installed, its h100 pool published in status.gpuPools."""
    observed = installed(ic)
    rsp = reconcile_cluster(ic, observed, [])
    published = copy.deepcopy(ic)
    published["status"] = {"gpuPools": rsp.status["gpuPools"]}
    assert [p["name"] for p in rsp.status["gpuPools"]] == ["h100"]
    return published, observed


def test_a_pool_s_class_missing_from_the_list_is_asked_for_by_name_and_its_pool_kept() -> None:
    ic, observed = with_pools(cluster())
    rsp = reconcile_cluster(ic, observed, [], **{CLASSES: []})
    assert rsp.by_name["class/h100"] == ("InferenceClass", "h100", None)
    assert rsp.status["gpuPools"] == ic["status"]["gpuPools"]
    assert rsp.condition("PoolsResolved")[:2] == ("Unknown", "WaitingForClasses")


def test_a_pool_s_class_found_by_name_is_read_as_listed() -> None:
    ic, observed = with_pools(cluster())
    rsp = reconcile_cluster(ic, observed, [], **{CLASSES: [], "class/h100": [H100]})
    assert rsp.status["gpuPools"] == ic["status"]["gpuPools"]
    assert rsp.condition("PoolsResolved")[:2] == ("True", "ClassesFound")


def test_a_pool_s_class_gone_by_name_takes_the_pool_out_of_the_status() -> None:
    ic, observed = with_pools(cluster())
    rsp = reconcile_cluster(ic, observed, [], **{CLASSES: [], "class/h100": []})
    assert rsp.status["gpuPools"] == []
    assert rsp.condition("PoolsResolved")[:2] == ("False", "ClassNotFound")
