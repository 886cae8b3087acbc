"""GKE: the serving stack authenticates with a service account key Modelplane creates. An
organization that refuses keys (iam.disableServiceAccountKeyCreation) holds the stack, and
StackReady says so with Google's error."""

from __future__ import annotations

from typing import Any

from modelplane.compose.inferencecluster.components import ENVOY_GATEWAY

from .managed import managed, observed_as_ready, run

REFUSED = (
    "create failed: async create failed: googleapi: Error 400: Key creation is not allowed on"
    " this service account. constraints/iam.disableServiceAccountKeyCreation"
)


def _with(observed: dict[str, Any], key: str, conditions: list[dict[str, str]]) -> dict:
    obj = dict(observed[key])
    obj["status"] = {"conditions": conditions}
    return {**observed, key: obj}


def _reconciled(conditions: list[dict[str, str]]) -> Any:
    ic = managed("GKE")
    response = run(ic)
    for _ in range(4):
        response = run(ic, _with(observed_as_ready(response), "service-account-key", conditions))
    return response


REFUSED_KEY = [
    {"type": "Synced", "status": "False", "reason": "ReconcileError", "message": REFUSED},
    {"type": "Ready", "status": "False", "reason": "Creating"},
]
CREATING_KEY = [
    {"type": "Synced", "status": "True", "reason": "ReconcileSuccess"},
    {"type": "Ready", "status": "False", "reason": "Creating"},
]


def test_the_stack_waits_for_the_service_account_key() -> None:
    response = _reconciled(CREATING_KEY)
    assert ENVOY_GATEWAY not in response.resources
    assert response.condition("StackReady")[:2] == ("False", "ClusterProvisioning")


def test_a_refused_key_is_named_with_googles_error() -> None:
    message = _reconciled(REFUSED_KEY).condition("StackReady")[2]
    assert f"service-account-key (Synced False: {REFUSED})" in message


def test_a_key_still_being_created_is_named_alone() -> None:
    message = _reconciled(CREATING_KEY).condition("StackReady")[2]
    assert "(waiting for service-account-key)" in message
