"""Every front gateway removes, as a request arrives, the headers only a gateway may set: the
caller's identity, its priority and the endpoint picker's objective and fairness headers under
both their names, whether or not the gateway has ``spec.auth`` or ``spec.priority`` (flow control
is on in Modelplane's default picker configs, so a fairness id a caller sent would be its flow)."""

from __future__ import annotations

from modelplane.compose.inferencegateway.callers import HEADER_GUARD
from modelplane.composer import Result
from tests.compose.inferencegateway.test_callers import SEARCH, authed, compose
from tests.compose.modelservice.kit import condition, gateway, invalid, manifests, observed

ONLY_THE_GATEWAY_SETS = [
    "x-modelplane-caller",
    "x-modelplane-priority",
    "x-llm-d-inference-objective",
    "x-gateway-inference-objective",
    "x-llm-d-inference-fairness-id",
    "x-gateway-inference-fairness-id",
]


def test_a_gateway_without_auth_removes_every_header_only_a_gateway_sets_on_arrival() -> None:
    guard = manifests(compose(gateway()))[HEADER_GUARD]
    assert guard["spec"]["headers"] == {"earlyRequestHeaders": {"remove": ONLY_THE_GATEWAY_SETS}}


def test_a_gateway_without_auth_guards_its_front_https_listener() -> None:
    guard = manifests(compose(gateway()))[HEADER_GUARD]
    assert guard["kind"] == "ClientTrafficPolicy"
    assert guard["metadata"]["namespace"] == "modelplane-system"
    assert guard["spec"]["targetRefs"] == [
        {
            "group": "gateway.networking.k8s.io",
            "kind": "Gateway",
            "name": "main-front",
            "sectionName": "https",
        }
    ]


def test_the_guard_is_the_same_object_with_auth_or_without() -> None:
    # Turning auth on or off changes neither its name nor what it removes: no churn on the host.
    without = compose(gateway()).resources[HEADER_GUARD].resource
    with_auth = compose(authed(), [SEARCH]).resources[HEADER_GUARD].resource
    assert without == with_auth


def test_a_gateway_without_auth_does_not_wait_for_its_guard() -> None:
    # Until it applies, headers pass as they did before the guard existed; nobody gets in
    # who should not (there is no authentication to bypass).
    first = compose(gateway())
    seen = observed(first)
    seen.pop(HEADER_GUARD)
    settled = compose(gateway(), None, seen)
    assert condition(settled, "GatewayReady").status == "True"


def test_the_guard_of_a_gateway_without_auth_is_admitted_by_the_pinned_crd() -> None:
    result = compose(gateway())
    assert invalid(Result(resources={HEADER_GUARD: result.resources[HEADER_GUARD]})) == {}
