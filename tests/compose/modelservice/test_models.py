"""A ModelService by model name: on each gateway serving it, an AIGatewayRoute matching
``x-ai-eg-model: <namespace>/<service>`` whose lanes are the path route's (same Backends through
AIServiceBackends, weights and steering headers), rewriting the model to ``spec.modelName``, and
reaching the clusters on the path the path form takes (docs/design/shared-front-door.md,
"Step 2 as built")."""

from __future__ import annotations

import posixpath
from typing import Any

from modelplane.compose.inferencegateway.limits import TOKEN_KEYS
from modelplane.compose.modelservice.composer import (
    compose_service,
    endpoints_requirement,
)
from modelplane.compose.modelservice.models import (
    MODEL_HEADER,
    TOKEN_COSTS,
    model_backend_name,
)
from modelplane.compose.shared.frontdoor import ENDPOINT_HEADER, POOL_HEADER, cluster_backend_name
from modelplane.composer import Inputs, Result
from tests.compose.modelservice.kit import (
    again,
    external_endpoint,
    invalid,
    manifests,
    observed,
    replica_endpoint,
    service,
    service_inputs,
)

Obj = dict[str, Any]
STABLE = {"modelplane.ai/deployment": "stable"}
PROVIDER = {"modelplane.ai/external-provider": "together"}


def overflow(ready: bool = True, **service_fields: Any) -> Inputs:
    """9/1: a replica on east and one on west, and an external provider."""
    ms = service("qwen", "ml", (9, STABLE), (1, PROVIDER), **service_fields)
    replicas = [
        replica_endpoint(f"stable-{c}", c, labels=STABLE, ready=ready) for c in ("east", "west")
    ]
    return service_inputs(
        ms, [replicas, [external_endpoint("together", labels=PROVIDER, ready=ready)]]
    )


def model_rule(result: Result, gateway_name: str = "main") -> Obj:
    [rule] = manifests(result)[f"models/{gateway_name}"]["spec"]["rules"]
    return rule


def backends(result: Result) -> dict[str, Obj]:
    """Each AIServiceBackend manifest by name."""
    return {
        m["metadata"]["name"]: m
        for m in manifests(result).values()
        if m["kind"] == "AIServiceBackend"
    }


def test_each_serving_gateway_routes_the_service_by_its_namespaced_model_name() -> None:
    result = compose_service(overflow())
    route = manifests(result)["models/main"]
    assert route["kind"] == "AIGatewayRoute"
    assert route["spec"]["parentRefs"] == [
        {
            "group": "gateway.networking.k8s.io",
            "kind": "Gateway",
            "name": "main-front",
            "namespace": "modelplane-system",
            "sectionName": "https",
        }
    ]
    assert route["spec"]["hostnames"] == ["main.example.com"]
    assert model_rule(result)["matches"] == [
        {"headers": [{"type": "Exact", "name": MODEL_HEADER, "value": "ml/qwen"}]}
    ]


def test_the_model_rule_sends_each_lane_where_the_path_route_does() -> None:
    result = compose_service(overflow())
    by_backend = {name: m["spec"]["backendRef"]["name"] for name, m in backends(result).items()}
    lanes = [
        (by_backend[r["name"]], r["weight"], r["headerMutation"])
        for r in model_rule(result)["backendRefs"]
    ]
    path = [
        (r["name"], r["weight"], r["filters"][0]["requestHeaderModifier"])
        for r in manifests(result)["front/main"]["spec"]["rules"][0]["backendRefs"]
    ]
    assert lanes == path


def test_a_lane_sets_its_steering_header_and_removes_the_other() -> None:
    refs = model_rule(compose_service(overflow()))["backendRefs"]
    headers = sorted(
        (r["headerMutation"]["set"][0]["name"], r["headerMutation"]["remove"]) for r in refs
    )
    assert headers == [
        (ENDPOINT_HEADER, [POOL_HEADER]),
        (POOL_HEADER, [ENDPOINT_HEADER]),
        (POOL_HEADER, [ENDPOINT_HEADER]),
    ]


def test_one_ai_service_backend_per_cluster_the_lanes_reach_over_its_fleet_backend() -> None:
    found = {
        name: m["spec"]["backendRef"] for name, m in backends(compose_service(overflow())).items()
    }
    # The provider is reached through the gateway's own cluster, edge.
    assert found == {
        model_backend_name("main", "ml", "qwen", c): {
            "group": "gateway.envoyproxy.io",
            "kind": "Backend",
            "name": cluster_backend_name("main", c),
        }
        for c in ("east", "edge", "west")
    }


def test_the_engine_path_is_the_path_forms_so_the_fleet_route_takes_it() -> None:
    """The AI Gateway writes ``path.Join("/", prefix, "chat/completions")`` as the path."""
    for m in backends(compose_service(overflow())).values():
        schema = m["spec"]["schema"]
        assert schema["name"] == "OpenAI"
        path = posixpath.join("/", schema["prefix"], "chat/completions")
        assert path == "/ml/qwen/v1/chat/completions"


def test_the_model_name_is_rewritten_to_what_the_engines_serve() -> None:
    refs = model_rule(compose_service(overflow(model_name="Qwen/Qwen3-8B")))["backendRefs"]
    assert [r["modelNameOverride"] for r in refs] == ["Qwen/Qwen3-8B"] * 3


def test_without_a_model_name_the_body_is_forwarded_as_sent() -> None:
    refs = model_rule(compose_service(overflow()))["backendRefs"]
    assert refs and not [r for r in refs if "modelNameOverride" in r]


def test_the_model_rule_never_times_a_stream_out_unless_the_service_says() -> None:
    assert model_rule(compose_service(overflow()))["timeouts"] == {"request": "0s"}
    assert model_rule(compose_service(overflow(timeout="5m")))["timeouts"] == {"request": "5m"}


def test_with_nothing_ready_the_model_is_still_routed_to_the_503_lane_alone() -> None:
    result = compose_service(overflow(ready=False))
    rule = model_rule(result)
    assert rule["matches"]
    assert [r["name"] for r in rule["backendRefs"]] == list(backends(result))  # the sentinel's
    assert len(rule["backendRefs"]) == 1  # test_model_unavailable.py says what it answers


def test_the_models_owner_is_the_services_namespace() -> None:
    assert model_rule(compose_service(overflow()))["modelsOwnedBy"] == "ml"


def test_the_model_route_declares_the_token_costs_a_gateways_budgets_spend() -> None:
    route = manifests(compose_service(overflow()))["models/main"]
    assert route["spec"]["llmRequestCosts"] == [
        {"metadataKey": "llm_input_token", "type": "InputToken"},
        {"metadataKey": "llm_output_token", "type": "OutputToken"},
        {"metadataKey": "llm_total_token", "type": "TotalToken"},
    ]


def test_the_token_costs_are_the_keys_the_gateways_budgets_read() -> None:
    assert list(TOKEN_COSTS) == list(TOKEN_KEYS.values())


def test_every_composed_object_validates_against_the_pinned_crds() -> None:
    result = compose_service(overflow(model_name="Qwen/Qwen3-8B", timeout="10m"))
    assert invalid(result) == {}
    assert invalid(compose_service(overflow(ready=False))) == {}


def west_deleted(seen: dict[str, Obj]) -> Inputs:
    """West's replica endpoint deleted: not listed, and asked for by name with nothing back."""
    ms = service("qwen", "ml", (9, STABLE), (1, PROVIDER))
    east = [replica_endpoint("stable-east", "east", labels=STABLE)]
    required = overflow().required | {endpoints_requirement(0): east, "endpoint/ml/stable-west": []}
    return Inputs(composite=ms, required=required, observed=seen)


def test_a_backend_stays_while_the_observed_model_route_still_names_it() -> None:
    after = west_deleted(observed(compose_service(overflow())))
    first = compose_service(after)
    assert "model-backend/main/west" in first.resources
    assert "model-backend/main/west" not in again(compose_service, after, first).resources


def test_a_replica_stays_held_while_the_observed_model_route_names_its_pool() -> None:
    seen = observed(compose_service(overflow()))
    # The path routes let go of west first; the model route, applied apart, has not yet.
    for key in ("front/main", "fleet/west"):
        del seen[key]
    assert "holds/stable-west" in compose_service(west_deleted(seen)).resources


def test_a_clusters_fleet_route_stays_while_the_observed_model_route_sends_it_traffic() -> None:
    seen = observed(compose_service(overflow()))
    del seen["front/main"]  # the path route let go of west first
    assert "fleet/west" in compose_service(west_deleted(seen)).resources
