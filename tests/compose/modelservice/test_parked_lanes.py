"""Weight 0 parks an entry: its lanes stay in the routes, resolved, at weight 0, so traffic can
be shifted onto it in steps; the status says what share each entry carries."""

from __future__ import annotations

import copy
from typing import Any

from modelplane.compose.modelservice.composer import endpoints_requirement
from modelplane.simulate import simulate_observed
from tests.compose.through import Response, run

from .kit import cluster, gateway, replica_endpoint, service

Obj = dict[str, Any]
STABLE = {"track": "stable"}
CANARY = {"track": "canary"}


def truth() -> dict[str, list[Obj] | None]:
    return {
        "inference-gateways": [gateway("main", "edge")],
        "inference-clusters": [cluster("edge", pools=False), cluster("east"), cluster("west")],
        endpoints_requirement(0): [
            replica_endpoint("s0", "east", labels=STABLE),
            replica_endpoint("s1", "west", labels=STABLE),
        ],
        endpoints_requirement(1): [replica_endpoint("c0", "east", labels=CANARY)],
    }


def reconcile_and_observe(ms: Obj, observed: dict[str, Obj]) -> tuple[Response, dict[str, Obj]]:
    rsp = run(ms, observed, truth())
    assert rsp.fatal is None, rsp.fatal
    return rsp, simulate_observed(copy.deepcopy(rsp.resources), 1)


def front_weights(rsp: Response) -> dict[str, int]:
    """The front route's backendRef weights, by the pool header each lane sets."""
    out = {}
    for key, obj in rsp.resources.items():
        if key.startswith("front/"):
            manifest = obj["spec"]["forProvider"]["manifest"]
            for rule in manifest["spec"]["rules"]:
                for ref in rule.get("backendRefs", []):
                    for f in ref.get("filters", []):
                        for header in f["requestHeaderModifier"].get("set", []):
                            out[header["value"]] = ref["weight"]
    return out


def fleet_pools(rsp: Response) -> set[str]:
    return {
        ref["name"]
        for obj in rsp.resources.values()
        if obj["kind"] == "Object"
        for rule in obj["spec"]["forProvider"]["manifest"].get("spec", {}).get("rules", [])
        for ref in rule.get("backendRefs", [])
        if ref.get("kind") == "InferencePool"
    }


def settle(ms: Obj, observed: dict[str, Obj] | None = None) -> tuple[Response, dict[str, Obj]]:
    rsp, seen = reconcile_and_observe(ms, observed or {})
    for _ in range(2):
        rsp, seen = reconcile_and_observe(ms, seen)
    return rsp, seen


def test_a_parked_entry_keeps_its_lanes_at_weight_zero_and_its_pools_routed() -> None:
    rsp, _ = settle(service("qwen", "ml", (1, STABLE), (0, CANARY)))
    weights = front_weights(rsp)
    assert {pool: w for pool, w in weights.items() if w == 0} == {"c0-pool": 0}
    assert all(w > 0 for pool, w in weights.items() if pool != "c0-pool")
    assert "c0-pool" in fleet_pools(rsp)
    assert rsp.condition("RoutingReady")[0] == "True"


def test_traffic_shifts_onto_a_parked_entry_in_steps_without_a_lane_appearing() -> None:
    rsp, seen = settle(service("qwen", "ml", (100, STABLE), (0, CANARY)))
    lanes = set(front_weights(rsp))
    percents = []
    for canary in (0, 10, 50, 100):
        rsp, seen = settle(service("qwen", "ml", (100, STABLE), (canary, CANARY)), seen)
        assert set(front_weights(rsp)) == lanes
        percents.append([e["percent"] for e in rsp.status["entries"]])
    assert percents == [[100.0, 0.0], [90.91, 9.09], [66.67, 33.33], [50.0, 50.0]]


def test_the_status_reports_each_entrys_weight_endpoints_and_percent() -> None:
    rsp, _ = settle(service("qwen", "ml", (9, STABLE), (1, CANARY)))
    assert rsp.status["entries"] == [
        {"index": 0, "weight": 9, "matched": 2, "ready": 2, "percent": 90.0},
        {"index": 1, "weight": 1, "matched": 1, "ready": 1, "percent": 10.0},
    ]


def test_a_service_whose_every_entry_is_parked_says_it_routes_nothing() -> None:
    rsp, _ = settle(service("qwen", "ml", (0, STABLE), (0, CANARY)))
    weights = front_weights(rsp)
    # Only the sentinel lane, which answers 503 (x-modelplane-unavailable: true), is weighted.
    assert weights.pop("true") == 1
    assert set(weights.values()) == {0}
    status, reason, message = rsp.condition("RoutingReady")
    assert (status, reason) == ("False", "Parked")
    assert "weight 0" in message


def test_every_lane_parked_leaves_room_for_the_sentinel_in_sixteen_refs() -> None:
    many = [replica_endpoint(f"s{i:02}", "east", labels=STABLE) for i in range(16)]
    rsp = run(service("qwen", "ml", (0, STABLE)), {}, {**truth(), endpoints_requirement(0): many})
    for key in ("front/main", "models/main"):
        if key in rsp.resources:
            manifest = rsp.resources[key]["spec"]["forProvider"]["manifest"]
            [rule] = manifest["spec"]["rules"]
            assert len(rule["backendRefs"]) == 16, key
