"""No unguarded window: with ``spec.callers`` set, a route that would newly let traffic reach the
service on a gateway waits until the caller policy there is applied; routes already serving
stay as they were meanwhile (docs/design/shared-front-door.md, "Step 3 as built")."""

from __future__ import annotations

import copy
from typing import Any

from modelplane.compose.modelservice.composer import compose_service
from modelplane.composer import Inputs, Result
from modelplane.observed import carried
from tests.compose.modelservice.kit import condition, observed
from tests.compose.modelservice.test_callers import authenticating, inputs

Obj = dict[str, Any]
ROUTES = ("front/main", "models/main")
POLICY = "callers/main"
NAMED = {"names": ["ads"]}


def seen(base: Inputs, result: Result, callers: Obj | None = NAMED) -> Inputs:
    """The next reconcile of the service (with ``callers``), ``result``'s Objects observed."""
    ms = copy.deepcopy(base.composite)
    ms["spec"].pop("callers", None)
    if callers is not None:
        ms["spec"]["callers"] = callers
    return Inputs(composite=ms, required=base.required, observed=observed(result))


def serving_without_callers() -> tuple[Inputs, Result]:
    """A service serving on gateway main, its routes observed, no callers named."""
    first = inputs(None, gateways=[authenticating()])
    result = compose_service(first)
    return first, compose_service(seen(first, result, None))


def test_a_new_service_with_callers_composes_its_policy_before_its_routes() -> None:
    result = compose_service(inputs(NAMED))
    assert POLICY in result.resources
    assert not [k for k in ROUTES if k in result.resources]


def test_the_routes_are_composed_once_the_policy_is_observed_applied() -> None:
    first = inputs(NAMED)
    result = compose_service(seen(first, compose_service(first)))
    assert all(k in result.resources for k in ROUTES)


def test_a_policy_not_synced_still_holds_the_routes_back() -> None:
    first = inputs(NAMED)
    after = seen(first, compose_service(first))
    policy = after.observed[POLICY]
    policy["status"]["conditions"] = [
        {**c, "status": "False"} if c["type"] == "Synced" else c
        for c in policy["status"]["conditions"]
    ]
    result = compose_service(after)
    assert not [k for k in ROUTES if k in result.resources]


def test_routing_says_the_routes_wait_for_the_caller_policy() -> None:
    routing = condition(compose_service(inputs(NAMED)), "RoutingReady")
    assert routing.status == "False"
    assert "wait for its caller policy (callers/main, spec.callers) to be applied" in (
        routing.message
    )


def test_turning_callers_on_keeps_the_serving_routes_exactly_as_observed() -> None:
    base, serving = serving_without_callers()
    after = seen(base, serving)
    for key in ROUTES:  # what the cluster holds, not what this reconcile would compose
        after.observed[key]["spec"]["forProvider"]["manifest"]["metadata"]["labels"] = {
            "applied": "before"
        }
    result = compose_service(after)
    assert POLICY in result.resources
    for key in ROUTES:
        assert result.resources[key].resource == carried(after.observed[key])


def test_turning_callers_on_changes_the_routes_once_the_policy_is_applied() -> None:
    base, serving = serving_without_callers()
    after = seen(base, serving)
    waited = compose_service(after)
    for key in ROUTES:
        waited.resources[key].resource["spec"]["forProvider"]["manifest"]["metadata"]["labels"] = {
            "applied": "before"
        }
    guarded = compose_service(seen(after, waited))
    assert "caller policy" not in condition(guarded, "RoutingReady").message
    for key in ROUTES:
        manifest = guarded.resources[key].resource["spec"]["forProvider"]["manifest"]
        assert "applied" not in manifest["metadata"].get("labels", {})


def test_without_callers_the_routes_wait_for_nothing() -> None:
    result = compose_service(inputs(None))
    assert all(k in result.resources for k in ROUTES)


def test_dropping_callers_composes_the_routes_without_waiting() -> None:
    first = inputs(NAMED)
    guarded = compose_service(seen(first, compose_service(first)))
    after = seen(first, guarded, None)
    after.observed.pop(POLICY)  # already gone: nothing to wait for, and nothing is asked
    result = compose_service(after)
    assert POLICY not in result.resources
    assert all(k in result.resources for k in ROUTES)
