"""A gateway of the last release, whose hops it composed itself, hands them to its shards over
several reconciles, through the FunctionRunner, without a moment when a cluster's Backend or
BackendTLSPolicy is missing from its host: each of its own hop Objects is made observe-only
first, the shard composes an Object applying the same remote object beside it, and the
gateway's own goes only once observed observe-only with that shard observed Ready.

The release's objects are read from tests/compat/release (what its `modelplane render` printed).
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from modelplane import manifests
from modelplane.compose.inferencegateway.handover import LEGACY_BACKEND, LEGACY_BACKEND_TLS
from modelplane.compose.inferencegateway.shards import SHARD
from modelplane.simulate import simulate_observed
from tests.compose.inferencegateway.kit import observed_shard
from tests.compose.through import Response, run

Obj = dict[str, Any]
RELEASE = Path(__file__).resolve().parents[2] / "compat" / "release" / "service-overflow.yaml"
RESOURCE_NAME = "crossplane.io/composition-resource-name"
HOPS = (LEGACY_BACKEND, LEGACY_BACKEND_TLS)


def release() -> tuple[Obj, dict[str, Obj], list[Obj]]:
    """The release's gateway ``public``, what it composed (as running), and the fleet."""
    docs = [m.obj for m in manifests.load([str(RELEASE)])]
    [ig] = [
        d for d in docs if d["kind"] == "InferenceGateway" and d["metadata"]["name"] == "public"
    ]
    composed = {
        d["metadata"]["annotations"][RESOURCE_NAME]: d
        for d in docs
        if any(
            o["kind"] == "InferenceGateway" and o["name"] == "public"
            for o in (d.get("metadata") or {}).get("ownerReferences") or ()
        )
    }
    clusters = [d for d in docs if d["kind"] == "InferenceCluster"]
    return ig, simulate_observed(composed, 1), clusters


def remote(obj: Obj) -> tuple[str, str, str, str]:
    """The remote object an Object applies, on which cluster."""
    manifest = obj["spec"]["forProvider"]["manifest"]
    meta = manifest["metadata"]
    return (
        obj["spec"]["providerConfigRef"]["name"],
        manifest["kind"],
        meta["namespace"],
        meta["name"],
    )


def applied(rsp: Response, observed: dict[str, Obj]) -> dict[tuple[str, str, str, str], list[str]]:
    """Every hop's remote object, and the management policies of each Object holding it in this
    reconcile: the gateway's own it keeps, and a shard's only once that shard was observed
    reporting the hop's cluster reached (its Object exists and is ready)."""
    objects = [o for k, o in rsp.resources.items() if k.startswith(HOPS)]
    for key, shard in rsp.resources.items():
        if key.startswith(SHARD):
            reached = set((observed.get(key) or {}).get("status", {}).get("reached") or ())
            objects += [
                o for k, o in run(shard).resources.items() if k.partition("/")[2] in reached
            ]
    out: dict[tuple[str, str, str, str], list[str]] = {}
    for obj in objects:
        out.setdefault(remote(obj), []).append(
            ",".join(obj["spec"].get("managementPolicies") or ["*"])
        )
    return out


def next_observed(rsp: Response, shards_ready: bool) -> dict[str, Obj]:
    """What the next reconcile observes: the gateway's Objects applied, its shards as reported."""
    objects = {k: o for k, o in rsp.resources.items() if not k.startswith(SHARD)}
    out = simulate_observed(copy.deepcopy(objects), 1)
    for key, shard in rsp.resources.items():
        if key.startswith(SHARD):
            out[key] = observed_shard(shard, shards_ready)
    return out


def test_the_first_reconcile_makes_the_gateways_own_hops_observe_only_beside_the_shards() -> None:
    ig, observed, clusters = release()
    legacy = sorted(k for k in observed if k.startswith(HOPS))
    assert legacy == ["backend-tls/us-east", "backend/us-east"]
    rsp = run(ig, observed, {"inference-clusters": clusters})
    assert rsp.fatal is None, rsp.fatal
    for key in legacy:
        kept = rsp.resources[key]
        assert kept["metadata"]["name"] == observed[key]["metadata"]["name"]
        assert kept["spec"]["managementPolicies"] == ["Observe"]
        assert kept["spec"]["forProvider"] == observed[key]["spec"]["forProvider"]
    assert rsp.condition("HandedOver")[:2] == ("True", "HandingOver")
    assert any(k.startswith(SHARD) for k in rsp.resources)


def test_a_shard_applies_the_very_remote_objects_the_gateway_applied() -> None:
    ig, observed, clusters = release()
    rsp = run(ig, observed, {"inference-clusters": clusters})
    shard_objects = [
        o
        for k, s in rsp.resources.items()
        if k.startswith(SHARD)
        for o in run(s).resources.values()
    ]
    legacy = {
        remote(o): o["spec"]["forProvider"] for k, o in observed.items() if k.startswith(HOPS)
    }
    assert {remote(o): o["spec"]["forProvider"] for o in shard_objects} == legacy


def test_the_gateways_own_hops_go_only_once_observe_only_and_their_shard_ready() -> None:
    ig, observed, clusters = release()
    required = {"inference-clusters": clusters}
    legacy = sorted(k for k in observed if k.startswith(HOPS))
    remotes = {remote(observed[k]) for k in legacy}

    upgraded = run(ig, observed, required)  # the release's Objects observed as it left them
    assert set(legacy) <= set(upgraded.resources)
    # Observe-only applied, the shard not Ready yet: kept.
    before_waiting = next_observed(upgraded, shards_ready=False)
    waiting = run(ig, before_waiting, required)
    assert set(legacy) <= set(waiting.resources)
    assert "waiting for the hops to" not in waiting.condition("GatewayReady")[2]
    # The shard Ready: released.
    before_handed = next_observed(waiting, shards_ready=True)
    handed = run(ig, before_handed, required)
    assert not set(legacy) & set(handed.resources)
    assert "HandedOver" not in handed.conditions
    for rsp, seen in ((upgraded, observed), (waiting, before_waiting), (handed, before_handed)):
        assert rsp.fatal is None, rsp.fatal
        assert remotes <= set(applied(rsp, seen)), "a hop's remote object is held by no Object"
    for policies in applied(handed, before_handed).values():
        assert policies == ["*"]  # once released, only the shard's Object holds it


def test_a_gateways_own_hop_is_released_only_once_its_own_cluster_is_reached() -> None:
    # A shard Ready as a whole says nothing of a cluster it does not report reached.
    ig, observed, clusters = release()
    required = {"inference-clusters": clusters}
    upgraded = run(ig, observed, required)
    seen = next_observed(upgraded, shards_ready=True)
    for key, shard in upgraded.resources.items():
        if key.startswith(SHARD):
            seen[key] = observed_shard(shard, True, reached=[])
    rsp = run(ig, seen, required)
    assert rsp.fatal is None, rsp.fatal
    for key in ("backend/us-east", "backend-tls/us-east"):
        assert rsp.resources[key]["spec"]["managementPolicies"] == ["Observe"]


def test_a_gateways_own_hop_to_a_cluster_the_list_misses_is_asked_for_by_name_first() -> None:
    # A list lagging the cluster is no evidence it is gone: its hop is neither dropped nor
    # handed over until the cluster is read by name.
    ig, observed, clusters = release()
    # As if the release had also dialled "far", which this list does not hold.
    observed |= {f"{p}far": observed[f"{p}us-east"] for p in HOPS}
    rsp = run(ig, observed, {"inference-clusters": clusters})
    assert rsp.fatal is None, rsp.fatal
    assert rsp.by_name["cluster/far"] == ("InferenceCluster", "far", None)
    for key in ("backend/far", "backend-tls/far"):
        assert rsp.resources[key]["spec"] == observed[key]["spec"]


def test_a_shard_ready_before_the_gateways_hop_is_observed_observe_only_keeps_it() -> None:
    ig, observed, clusters = release()
    required = {"inference-clusters": clusters}
    first = run(ig, observed, required)
    shards = {k: observed_shard(s, True) for k, s in first.resources.items() if k.startswith(SHARD)}
    rsp = run(ig, {**observed, **shards}, required)  # still observed as the release applied it
    for key in ("backend/us-east", "backend-tls/us-east"):
        assert rsp.resources[key]["spec"]["managementPolicies"] == ["Observe"]


def test_a_gateways_own_hop_to_a_cluster_gone_goes_as_it_always_did() -> None:
    ig, observed, clusters = release()
    # As if the release had also dialled a cluster "gone", since deleted.
    observed |= {f"{p}gone": observed[f"{p}us-east"] for p in HOPS}
    rsp = run(ig, observed, {"inference-clusters": clusters, "cluster/gone": []})
    assert rsp.fatal is None, rsp.fatal
    assert not any(k.endswith("/gone") for k in rsp.resources)
    assert "backend/us-east" in rsp.resources


def test_a_gateways_own_hop_to_a_cluster_listed_without_its_address_is_kept_as_it_was() -> None:
    ig, observed, clusters = release()
    # As if the release had also dialled "lagging", now listed before its status is written.
    observed |= {f"{p}lagging": observed[f"{p}us-east"] for p in HOPS}
    lagging = {**copy.deepcopy(clusters[0]), "metadata": {"name": "lagging"}}
    del lagging["status"]
    rsp = run(ig, observed, {"inference-clusters": [*clusters, lagging]})
    assert rsp.fatal is None, rsp.fatal
    for p in HOPS:
        assert rsp.resources[f"{p}lagging"]["spec"] == observed[f"{p}lagging"]["spec"]


def test_a_gateway_that_reported_a_hand_over_says_it_is_released_once_it_is() -> None:
    # Crossplane keeps a condition a function stops returning as last set (crossplane v2.3.4
    # internal/controller/apiextensions/composite/reconciler.go handleCommonCompositionResult),
    # so "HandingOver" would stand for good if nothing replaced it.
    ig, observed, clusters = release()
    required = {"inference-clusters": clusters}
    upgraded = run(ig, observed, required)
    waiting = run(ig, next_observed(upgraded, shards_ready=False), required)
    status, reason, message = waiting.condition("HandedOver")
    reported = copy.deepcopy(ig)
    reported.setdefault("status", {})["conditions"] = [
        {"type": "HandedOver", "status": status, "reason": reason, "message": message}
    ]
    handed = run(reported, next_observed(waiting, shards_ready=True), required)
    assert not any(k.startswith(HOPS) for k in handed.resources)
    assert handed.condition("HandedOver")[:2] == ("True", "Released")
