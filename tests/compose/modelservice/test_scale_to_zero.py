"""A ModelService over a ModelDeployment asleep (docs/design/autoscaling.md, "Scale to zero
behind the front door"): it reads the deployments of its namespace to tell an entry selecting
one asleep from a misspelled selector, says the service works and its first request wakes the
model, sends that request upstream through the sentinel lane (counted in the rule's cluster,
which wakes the deployment), answers it "waking", and publishes the clusters a deployment
asleep wakes on (``status.activation.clusters``)."""

from __future__ import annotations

import copy
import json
from typing import Any

from modelplane.compose.modelservice.composer import (
    DEPLOYMENTS,
    GATEWAYS,
    compose_service,
    replicas_requirement,
)
from modelplane.compose.modelservice.routes import UNAVAILABLE_RETRY_AFTER
from modelplane.compose.modelservice.unavailable import SENTINEL_HEADER, SENTINEL_VALUE
from modelplane.compose.shared.frontdoor import (
    ENDPOINT_HEADER,
    ENVOY_GROUP,
    POOL_HEADER,
    cluster_backend_name,
)
from modelplane.compose.shared.scaletozero import activation_clusters, rule_cluster
from modelplane.composer import Inputs, Result
from tests.compose.modelservice.kit import (
    again,
    condition,
    gateway,
    invalid,
    manifests,
    observed,
    replica_endpoint,
    service,
    service_inputs,
)
from tests.fleet.xrd import errors

Obj = dict[str, Any]
STABLE = {"track": "stable"}
CANARY = {"track": "canary"}
FRONT = "front/main"
SENTINEL_ROUTE = "unavailable-route/main"


def deployment(name: str = "qwen", *, labels: Obj | None = None, asleep: bool = True) -> Obj:
    """A ModelDeployment allowed to sleep, at zero (``asleep``) or at one replica."""
    return {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelDeployment",
        "metadata": {"name": name, "namespace": "ml"},
        "spec": {
            "replicas": 0 if asleep else 1,
            "autoscaling": {
                "minReplicas": 0,
                "maxReplicas": 2,
                "scaleToZero": {"idleSeconds": 900},
            },
            "template": {"metadata": {"labels": dict(labels or {})}},
        },
    }


def with_deployments(inputs: Inputs, *deployments: Obj) -> Inputs:
    """``inputs`` with the namespace's deployments read, and every entry's replicas: none."""
    required = required_of(inputs)
    required[DEPLOYMENTS] = list(deployments)
    for i in range(len(inputs.composite["spec"]["endpoints"])):
        required[replicas_requirement(i)] = []
    return Inputs(composite=inputs.composite, required=required, observed=inputs.observed)


def required_of(inputs: Inputs) -> dict[str, list[Obj]]:
    """A copy of the inputs' answered requirements, to change."""
    return dict(inputs.required)


def answered(inputs: Inputs, name: str, found: list[Obj] | None) -> Inputs:
    """``inputs`` with requirement ``name`` answered ``found`` (None: not answered yet)."""
    required = required_of(inputs)
    if found is None:
        del required[name]
    else:
        required[name] = found
    return Inputs(composite=inputs.composite, required=required, observed=inputs.observed)


def at_zero(*deployments: Obj) -> Inputs:
    """The service ml/qwen selecting deployment qwen's replicas: none serves."""
    return with_deployments(service_inputs(service("qwen", "ml"), [[]]), *deployments)


def asleep() -> Inputs:
    return at_zero(deployment())


def programmed(inputs: Inputs) -> Result:
    """The reconcile after the composed routes were observed accepted."""
    return again(compose_service, inputs, compose_service(inputs))


def front_rule(result: Result) -> Obj:
    [rule] = manifests(result)[FRONT]["spec"]["rules"]
    return rule


def answer(result: Result) -> Obj:
    return manifests(result)["unavailable/main"]["spec"]["directResponse"]


def message(result: Result) -> str:
    return str(json.loads(answer(result)["body"]["inline"])["error"]["message"])


def parked() -> Inputs:
    """Every entry at weight 0, a replica ready behind each."""
    ms = service("qwen", "ml", (0, STABLE), (0, CANARY))
    return service_inputs(
        ms,
        [
            [replica_endpoint("s0", "east", labels=STABLE)],
            [replica_endpoint("c0", "west", labels=CANARY)],
        ],
    )


# --- reading the deployments ---------------------------------------------------------------------


def test_the_service_reads_every_deployment_of_its_namespace() -> None:
    requirement = compose_service(asleep()).requirements[DEPLOYMENTS]
    assert (requirement.kind, requirement.namespace) == ("ModelDeployment", "ml")
    assert requirement.match_labels is None and requirement.match_name is None


def test_an_entry_selecting_a_deployment_asleep_is_no_misspelled_selector() -> None:
    result = compose_service(asleep())
    resolved = condition(result, "EndpointsResolved")
    assert (resolved.status, resolved.reason) == ("True", "Asleep")
    assert "deployment qwen asleep" in resolved.message
    assert "the first request wakes it" in resolved.message
    assert not [e for e in result.events if e.reason == "EntryMatchesNothing"]


def test_a_service_whose_model_is_asleep_is_ready_once_its_routes_are_accepted() -> None:
    result = programmed(asleep())
    routing = condition(result, "RoutingReady")
    assert (routing.status, routing.reason) == ("True", "Asleep")
    assert "the first request wakes qwen" in routing.message
    assert result.ready != "False"
    assert result.resources[FRONT].ready == "True"
    [entry] = result.status["gateways"]
    assert entry["routingReady"] is True
    assert result.status["address"] == "https://main.example.com/ml/qwen"


def test_a_service_whose_model_is_asleep_is_configuring_until_its_routes_are_accepted() -> None:
    routing = condition(compose_service(asleep()), "RoutingReady")
    assert (routing.status, routing.reason) == ("False", "Configuring")


def test_an_entry_asleep_beside_a_serving_one_is_named_and_takes_no_share() -> None:
    ms = service("qwen", "ml", (1, STABLE), (1, CANARY))
    inputs = with_deployments(
        service_inputs(ms, [[replica_endpoint("s0", "east", labels=STABLE)], []]),
        deployment("canary", labels=CANARY),
    )
    result = compose_service(inputs)
    resolved = condition(result, "EndpointsResolved")
    assert (resolved.status, resolved.reason) == ("True", "Resolved")
    assert "entry 1 (weight 1): 0 matched, 0 ready (asleep: canary" in resolved.message
    assert message(result).endswith("has no ready endpoint; retry later")


# --- evidence ------------------------------------------------------------------------------------


def test_until_the_deployments_are_read_nothing_waits_for_them() -> None:
    inputs = service_inputs(service("qwen", "ml"), [[]])
    result = compose_service(inputs)
    assert DEPLOYMENTS in result.requirements
    assert FRONT in result.resources  # not held for them
    assert condition(result, "EndpointsResolved").reason == "NoEndpoints"
    assert message(result).endswith("has no ready endpoint; retry later")


def test_deployments_read_with_none_asleep_change_nothing() -> None:
    unread = answered(service_inputs(service("qwen", "ml"), [[]]), replicas_requirement(0), [])
    awake = at_zero(deployment(asleep=False))
    results = [compose_service(unread), compose_service(awake)]
    assert manifests(results[0]) == manifests(results[1])
    assert results[0].conditions == results[1].conditions
    assert condition(results[1], "EndpointsResolved").reason == "EntryMatchesNothing"


def test_a_deployment_at_zero_that_may_not_sleep_is_not_asleep() -> None:
    pinned = deployment()
    del pinned["spec"]["autoscaling"]
    result = compose_service(at_zero(pinned))
    assert condition(result, "EndpointsResolved").reason == "EntryMatchesNothing"
    assert message(result).endswith("has no ready endpoint; retry later")


def test_a_deployment_asleep_that_no_entry_selects_changes_nothing() -> None:
    result = compose_service(at_zero(deployment("llama")))
    assert condition(result, "EndpointsResolved").reason == "EntryMatchesNothing"


# --- the path route at zero ----------------------------------------------------------------------


def test_with_nothing_ready_the_path_route_takes_the_sentinel_lane() -> None:
    rule = front_rule(compose_service(asleep()))
    assert "filters" not in rule  # nothing answers on the front gateway itself
    assert rule["backendRefs"] == [
        {
            "group": ENVOY_GROUP,
            "kind": "Backend",
            "name": cluster_backend_name("main", "edge"),  # the gateway's own cluster
            "weight": 1,
            "filters": [
                {
                    "type": "RequestHeaderModifier",
                    "requestHeaderModifier": {
                        "set": [{"name": SENTINEL_HEADER, "value": SENTINEL_VALUE}],
                        "remove": [POOL_HEADER, ENDPOINT_HEADER],
                    },
                }
            ],
        }
    ]


def test_the_path_forms_request_at_zero_matches_the_sentinel_route() -> None:
    composed = manifests(compose_service(asleep()))
    [front] = composed[FRONT]["spec"]["rules"]
    [sentinel] = composed[SENTINEL_ROUTE]["spec"]["rules"]
    [front_match], [sentinel_match] = front["matches"], sentinel["matches"]
    assert front_match["path"] == sentinel_match["path"]  # the path is kept on the way
    [ref] = front["backendRefs"]
    assert ref["filters"][0]["requestHeaderModifier"]["set"] == [
        {"name": h["name"], "value": h["value"]} for h in sentinel_match["headers"]
    ]
    [ext] = [f["extensionRef"] for f in sentinel["filters"]]
    assert ext["name"] == composed["unavailable/main"]["metadata"]["name"]


def test_a_service_with_no_model_name_composes_the_sentinel_route() -> None:
    inputs = asleep()
    assert "modelName" not in inputs.composite["spec"]
    assert SENTINEL_ROUTE in compose_service(inputs).resources


def test_with_every_lane_parked_the_path_route_keeps_them_resolved_beside_the_sentinel() -> None:
    rule = front_rule(compose_service(parked()))
    *lanes, sentinel = rule["backendRefs"]
    assert [ref["weight"] for ref in lanes] == [0, 0]
    assert {ref["name"] for ref in lanes} == {
        cluster_backend_name("main", "east"),
        cluster_backend_name("main", "west"),
    }
    assert (sentinel["name"], sentinel["weight"]) == (cluster_backend_name("main", "edge"), 1)
    assert "filters" not in rule


def test_a_serving_path_route_has_no_sentinel_lane() -> None:
    inputs = with_deployments(
        service_inputs(service("qwen", "ml"), [[replica_endpoint("r0", "east")]]),
        deployment(asleep=False),
    )
    result = compose_service(inputs)
    names = [ref["name"] for ref in front_rule(result)["backendRefs"]]
    assert names == [cluster_backend_name("main", "east")]
    assert SENTINEL_ROUTE not in result.resources


def test_the_sentinel_route_stays_until_the_observed_path_route_lets_go() -> None:
    sleeping = asleep()
    first = compose_service(sleeping)
    seen = observed(first)
    del seen["unavailable-backend/main"]  # the model route alone would keep it: not here
    seen["models/main"] = copy.deepcopy(seen["models/main"])
    seen["models/main"]["spec"]["forProvider"]["manifest"]["spec"]["rules"] = []
    woken = with_deployments(
        service_inputs(service("qwen", "ml"), [[replica_endpoint("r0", "east")]]),
        deployment(asleep=False),
    )
    result = compose_service(
        Inputs(composite=woken.composite, required=woken.required, observed=seen)
    )
    assert SENTINEL_ROUTE in result.resources
    settled = compose_service(
        Inputs(composite=woken.composite, required=woken.required, observed=observed(result))
    )
    assert SENTINEL_ROUTE not in settled.resources


def test_the_sentinel_lane_keeps_no_fleet_route_on_the_gateways_own_cluster() -> None:
    # A gateway hosted on the cluster its replica ran on: once the path route sends only the
    # sentinel lane there, the fleet route (and with it the hold on the replica) goes.
    gateways = [gateway("main", "east", address="203.0.113.1")]
    ms = service("qwen", "ml")
    awake = service_inputs(ms, [[replica_endpoint("r0", "east")]], gateways)
    serving = programmed(awake)
    assert "fleet/east" in serving.resources
    sleeping = with_deployments(service_inputs(ms, [[]], gateways), deployment())
    sleeping = answered(sleeping, "endpoint/ml/r0", [])  # asked for by name: gone
    letting_go = compose_service(
        Inputs(composite=ms, required=sleeping.required, observed=observed(serving))
    )
    assert "fleet/east" in letting_go.resources  # the observed path route still sends r0 there
    settled = compose_service(
        Inputs(composite=ms, required=sleeping.required, observed=observed(letting_go))
    )
    assert "fleet/east" not in settled.resources
    released = compose_service(
        Inputs(composite=ms, required=sleeping.required, observed=observed(settled))
    )
    assert not [k for k in released.resources if k.startswith("holds/")]


# --- the answer at zero --------------------------------------------------------------------------


def test_the_answer_at_zero_says_the_model_is_waking() -> None:
    assert message(compose_service(asleep())) == (
        "ModelService ml/qwen is waking its model; retry after 30 s"
    )


def test_the_waking_answer_keeps_the_503_its_shape_and_retry_after() -> None:
    response = answer(compose_service(asleep()))
    assert (response["statusCode"], response["contentType"]) == (503, "application/json")
    body = json.loads(response["body"]["inline"])
    assert (body["error"]["code"], body["error"]["type"]) == (503, "service_unavailable")
    assert response["header"] == {
        "set": [{"name": "Retry-After", "value": UNAVAILABLE_RETRY_AFTER}]
    }


def test_a_parked_service_does_not_say_it_is_waking() -> None:
    assert message(compose_service(with_deployments(parked(), deployment()))).endswith(
        "has no ready endpoint; retry later"
    )


# --- what wakes it -------------------------------------------------------------------------------


def expected_clusters(result: Result, gateways: list[str]) -> list[str]:
    composed = manifests(result)
    return sorted(
        rule_cluster(m["metadata"]["namespace"], m["metadata"]["name"], 0)
        for g in gateways
        for m in (composed[f"front/{g}"], composed[f"models/{g}"])
    )


def test_activation_lists_the_path_and_model_rules_clusters_on_every_gateway() -> None:
    gateways = [gateway("a", "edge", address="203.0.113.1"), gateway("b", "east")]
    inputs = with_deployments(service_inputs(service("qwen", "ml"), [[]], gateways), deployment())
    result = compose_service(inputs)
    clusters = result.status["activation"]["clusters"]
    assert clusters == expected_clusters(result, ["a", "b"])
    assert len(clusters) == 4
    assert all(c.startswith("httproute/modelplane-system/") for c in clusters)


def test_activation_is_published_awake_too() -> None:
    awake = service_inputs(service("qwen", "ml"), [[replica_endpoint("r0", "east")]])
    result = compose_service(awake)
    assert result.status["activation"]["clusters"] == expected_clusters(result, ["main"])


def test_activation_is_what_a_deployment_reads_back() -> None:
    result = compose_service(asleep())
    ms = {**asleep().composite, "status": result.status}
    assert activation_clusters(ms) == result.status["activation"]["clusters"]
    assert errors("modelservices", ms) == []


def test_activation_is_kept_while_the_service_reads_its_inputs() -> None:
    published = compose_service(asleep()).status
    inputs = answered(asleep(), GATEWAYS, None)
    composite = {**inputs.composite, "status": published}
    held = compose_service(Inputs(composite=composite, required=inputs.required))
    assert GATEWAYS in held.requirements
    assert held.status["activation"] == published["activation"]


def test_activation_is_kept_while_no_gateway_is_listed() -> None:
    first = compose_service(asleep())
    inputs = answered(asleep(), GATEWAYS, [])
    result = compose_service(
        Inputs(composite=inputs.composite, required=inputs.required, observed=observed(first))
    )
    assert result.status["activation"] == first.status["activation"]


# --- admitted ------------------------------------------------------------------------------------


def test_the_objects_composed_asleep_validate_against_the_pinned_crds() -> None:
    assert invalid(compose_service(asleep())) == {}


def test_the_objects_composed_parked_validate_against_the_pinned_crds() -> None:
    assert invalid(compose_service(parked())) == {}
