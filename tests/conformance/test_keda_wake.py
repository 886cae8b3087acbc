"""A woken deployment's idle time counts from a moment its replica served, on KEDA's timing.

KEDA v2.20.2 polls a ScaledObject every ``pollingInterval`` (30 s as composed) and, while it is
forced active, records each poll as ``status.lastActiveTime`` in whole seconds; once it is not,
it puts the deployment to zero at the first poll past ``lastActiveTime + cooldownPeriod``
(``keda.poll``, each fact cited in tests/conformance/keda.py). Here the real function reconciles
after each poll, as the ScaledObject's status change requeues the deployment, and KEDA polls
what it composed. A replica that began serving just before a poll is the worst case: dropped
then, the hold would leave the idle time counting from the poll before, 30 s earlier, and the
deployment would sleep a fraction of a second after its replica served (as the e2e tier once
saw, ``idleSeconds: 30``).
"""

from __future__ import annotations

import copy
from typing import Any

from modelplane.compose.modeldeployment.autoscaling import SCALED_OBJECT
from modelplane.kube import objects
from tests.compose.modeldeployment.test_autoscaler import autoscaled
from tests.compose.modeldeployment.test_deployment_churn import as_observed
from tests.compose.modeldeployment.test_scale_to_zero import reconciled
from tests.compose.through import Response
from tests.conformance import keda

Obj = dict[str, Any]
IDLE = 30
INTERVAL = 30
WOKEN = 1_796_612_764.7
"""The poll that woke the deployment (a Unix time, a fraction past a whole second)."""


def woken() -> Obj:
    return autoscaled(replicas=1, minReplicas=0, scaleToZero={"idleSeconds": IDLE})


def observed_at(rsp: Response, last_active: int, served: float) -> dict[str, Obj]:
    """What ``rsp`` composed as observed next: the replica serving since ``served``, the
    ScaledObject with KEDA's ``lastActiveTime``."""
    out = as_observed(rsp)
    for obj in out.values():
        if obj["kind"] == "ModelReplica":
            serving = objects.condition(obj, "ModelServing")
            assert serving is not None
            serving["lastTransitionTime"] = objects.timestamp(served)
    scaled = copy.deepcopy(out[SCALED_OBJECT])
    scaled.setdefault("status", {})["lastActiveTime"] = objects.timestamp(last_active)
    out[SCALED_OBJECT] = scaled
    return out


def asleep_at(served: float) -> float:
    """When KEDA puts the deployment to zero, its replica serving from ``served``: the function
    reconciles once then, and after every poll."""
    # Every poll before it served was forced (no replica served): the last one recorded.
    polls_before = (served - WOKEN) // INTERVAL
    last_active = int(WOKEN + INTERVAL * polls_before)
    rsp = reconciled(woken())
    rsp = reconciled(woken(), observed_at(rsp, last_active, served))
    now = WOKEN + INTERVAL * (polls_before + 1)
    for _ in range(10):
        polled, written = keda.poll(rsp.resources[SCALED_OBJECT], 1, False, now, last_active)
        if written == 0:
            return now
        last_active = polled if polled is not None else last_active
        rsp = reconciled(woken(), observed_at(rsp, last_active, served))
        now += INTERVAL
    raise AssertionError("never put to zero")


def test_served_just_before_a_poll_it_sleeps_no_sooner_than_its_idle_time_after() -> None:
    served = WOKEN + INTERVAL - 0.1
    assert asleep_at(served) >= served + IDLE


def test_served_just_after_a_poll_it_sleeps_no_sooner_than_its_idle_time_after() -> None:
    served = WOKEN + 0.1
    assert asleep_at(served) >= served + IDLE
