"""A node pool whose create the cloud refuses (GPU quota 0, a stockout), as the Upbound
providers report it, and what NodePoolsReady reads of it.

The providers at v2.6.0 pin upjet at 59c45527ebe4 (github.com/crossplane/upjet/v2
v2.2.1-0.20260610110527-59c45527ebe4) and crossplane-runtime v2.2.0 (provider-upjet-aws) or
v2.2.1 (provider-upjet-gcp; pkg/reconciler/managed/reconciler.go is the same in both).

- upjet pkg/config/common.go ``DefaultResource``: ``UseAsync: true`` for every resource, so a
  node pool's create runs in a goroutine (pkg/controller/external_async_tfpluginsdk.go
  ``Create``) and its error is wrapped ``async create failed: <cloud error>``
  (pkg/terraform/errors/errors.go ``NewAsyncCreateFailed``).
- pkg/controller/api.go ``callbackFn``: on that error the callback sets
  ``LastAsyncOperation`` False, reason ``AsyncCreateFailure``, with the error as its message
  (pkg/resource/conditions.go ``LastAsyncOperationCondition``), and ``Synced`` False with
  ``xpv1.ReconcileError(errors.Wrap(err, "create failed"))``.
- crossplane-runtime pkg/reconciler/managed/reconciler.go: the next reconcile observes no
  resource and calls Create again; the retry starts in the background and the reconciler marks
  ``xpv1.Creating(), xpv1.ReconcileSuccess()``: Synced True, Ready False ``Creating`` (no
  message), while LastAsyncOperation keeps the error (only an up-to-date observation clears
  it, external_async_tfpluginsdk.go ``Observe``). A create refused synchronously marks
  ``xpv1.Creating(), xpv1.ReconcileError(errors.Wrap(err, "create failed"))``.

So the cloud's message is on Synced after each failed attempt, and on LastAsyncOperation
throughout the retries.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.compose.inferencecluster.managed import managed, observed_as_ready, run

Obj = dict[str, Any]
POOL_KEY = {"EKS": "nodegroup-gpua", "GKE": "nodepool-gpua", "AKS": "nodepool-gpua"}
CLOUD_ERROR = "GPUS_ALL_REGIONS quota exceeded: limit 0.0 in region us-west1"
ASYNC_ERROR = f"async create failed: {CLOUD_ERROR}"


def _condition(kind: str, status: str, reason: str, message: str = "") -> Obj:
    out = {"type": kind, "status": status, "reason": reason}
    if message:
        out["message"] = message
    return out


AFTER_THE_FAILED_ATTEMPT = [
    _condition("Ready", "False", "Creating"),
    _condition("Synced", "False", "ReconcileError", f"create failed: {ASYNC_ERROR}"),
    _condition("LastAsyncOperation", "False", "AsyncCreateFailure", ASYNC_ERROR),
]
WHILE_THE_RETRY_RUNS = [
    _condition("Ready", "False", "Creating"),
    _condition("Synced", "True", "ReconcileSuccess"),
    _condition("LastAsyncOperation", "False", "AsyncCreateFailure", ASYNC_ERROR),
]
REFUSED_SYNCHRONOUSLY = [
    _condition("Ready", "False", "Creating"),
    _condition("Synced", "False", "ReconcileError", f"create failed: {CLOUD_ERROR}"),
]


def _pools_ready(source: str, conditions: list[Obj]) -> tuple[str, str, str]:
    ic = managed(source)
    response = run(ic)
    for _ in range(4):
        observed = observed_as_ready(response)
        pool = dict(observed[POOL_KEY[source]])
        pool["status"] = {"conditions": conditions}
        response = run(ic, {**observed, POOL_KEY[source]: pool})
    status, reason, message = response.condition("NodePoolsReady")
    return status, reason, message


@pytest.mark.parametrize("source", sorted(POOL_KEY))
@pytest.mark.parametrize(
    "conditions",
    [AFTER_THE_FAILED_ATTEMPT, WHILE_THE_RETRY_RUNS, REFUSED_SYNCHRONOUSLY],
    ids=["after-the-failed-attempt", "while-the-retry-runs", "refused-synchronously"],
)
def test_node_pools_ready_carries_the_clouds_refusal(source: str, conditions: list[Obj]) -> None:
    status, reason, message = _pools_ready(source, conditions)
    assert (status, reason) == ("False", "PoolsNotReady")
    assert "gpua (" in message
    assert CLOUD_ERROR in message
