"""A ModelDeployment that may sleep (``minReplicas: 0`` with ``scaleToZero``), reconciled through
the FunctionRunner: it wakes on the front door of the ModelServices that select it, sleeps only
when one can wake it, drains its replicas at zero and reads as asleep, not broken
(docs/design/autoscaling.md, "Scale to zero behind the front door")."""

from __future__ import annotations

import copy
from typing import Any

from modelplane.compose.modeldeployment.autoscaler import HPA, METRICS, SERVICES
from modelplane.compose.modeldeployment.autoscaling import (
    FORCE_ACTIVATION,
    FRONT_DOOR,
    SCALED_OBJECT,
)
from modelplane.compose.shared.scaletozero import rule_cluster
from modelplane.explain import explain
from modelplane.kube import objects
from tests.compose.modeldeployment.test_autoscaler import CONFIG, autoscaled, hpa, keda, placed
from tests.compose.modeldeployment.test_deployment_churn import as_observed
from tests.compose.through import Response, reconcile_deployment
from tests.fleet.builders import fleet, with_condition
from tests.test_explain_autoscaling import autoscaled as explain_autoscaled
from tests.test_explain_autoscaling import onprem_and_eks

Obj = dict[str, Any]
SLEEPS: Obj = {"minReplicas": 0, "scaleToZero": {"idleSeconds": 900}}
MODELS = rule_cluster("gateways", "models-main")
FRONT = rule_cluster("gateways", "front-main")
ELSEWHERE = rule_cluster("gateways", "models-other")
UNREAD = object()
"""The ModelServices not read yet (the requirement not answered)."""


def sleepy(replicas: int = 1) -> Obj:
    return autoscaled(replicas=replicas, **SLEEPS)


def service(
    name: str = "chat",
    selector: dict[str, str] | None = None,
    clusters: list[str] | None = None,
) -> Obj:
    """A ModelService of namespace ml whose one entry selects ``selector`` (the deployment qwen
    by default) and that published ``clusters`` (None: no status written yet)."""
    ms: Obj = {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelService",
        "metadata": {"name": name, "namespace": "ml"},
        "spec": {
            "endpoints": [
                {"selector": {"matchLabels": selector or {"modelplane.ai/deployment": "qwen"}}}
            ]
        },
    }
    if clusters is not None:
        ms["status"] = {"activation": {"clusters": clusters}}
    return ms


CHAT = service(clusters=[MODELS, FRONT])


def reconciled(
    md: Obj,
    observed: dict[str, Obj] | None = None,
    *,
    services: Any = (CHAT,),
    hpas: list[Obj] | None = None,
) -> Response:
    answers: dict[str, Any] = {METRICS: [CONFIG], HPA: hpas}
    if services is not UNREAD:
        answers[SERVICES] = list(services)
    return reconcile_deployment(
        md, fleet("east", "west", "north"), observed, unrouted=True, **answers
    )


def front_door(rsp: Response) -> Obj | None:
    triggers = rsp.resources[SCALED_OBJECT]["spec"]["triggers"]
    return next((t for t in triggers if t["name"] == FRONT_DOOR), None)


def clusters_read(rsp: Response) -> str:
    trigger = front_door(rsp)
    assert trigger is not None
    return str(trigger["metadata"]["query"])


def ready_scaled_object(rsp: Response) -> Obj:
    observed = copy.deepcopy(rsp.resources[SCALED_OBJECT])
    return with_condition(observed, "Ready", "True", "ScaledObjectReady", "ScaledObject is ready")


# What it asks for, and whom it wakes on.


def test_a_deployment_that_may_sleep_asks_for_every_model_service_of_its_namespace() -> None:
    assert reconciled(sleepy()).by_labels[SERVICES] == ("ModelService", {})


def test_a_deployment_that_may_not_sleep_asks_for_no_model_service() -> None:
    assert SERVICES not in reconciled(autoscaled(minReplicas=1)).by_labels


def test_it_wakes_on_the_front_door_of_every_service_that_selects_it() -> None:
    by_template = service("by-app", {"app": "qwen"}, [ELSEWHERE])
    query = clusters_read(reconciled(sleepy(), services=[CHAT, by_template]))
    for cluster in (MODELS, FRONT, ELSEWHERE):
        assert cluster.replace("-", "\\\\-") in query


def test_a_service_that_selects_another_deployment_does_not_wake_it() -> None:
    other = service("other", {"modelplane.ai/deployment": "llama"}, [ELSEWHERE])
    assert "models\\\\-other" not in clusters_read(reconciled(sleepy(), services=[CHAT, other]))


def test_a_service_selecting_labels_the_replicas_lack_does_not_wake_it() -> None:
    stricter = service("canary", {"app": "qwen", "track": "canary"}, [ELSEWHERE])
    assert "models\\\\-other" not in clusters_read(reconciled(sleepy(), services=[CHAT, stricter]))


def test_a_deployment_that_something_wakes_may_go_to_zero() -> None:
    so = reconciled(sleepy()).resources[SCALED_OBJECT]
    assert so["spec"]["minReplicaCount"] == 0
    assert [str(e) for e in keda().admit(so).errors] == []


# Evidence: a list not read, a list read.


def test_until_the_services_are_read_the_autoscaler_waits_and_says_for_what() -> None:
    rsp = reconciled(sleepy(), services=UNREAD)
    status, reason, message = rsp.condition("Autoscaling")
    assert (status, reason) == ("Unknown", "WaitingForAutoscaler")
    assert "the ModelServices of namespace ml" in message
    assert SCALED_OBJECT not in rsp.resources


def test_until_the_services_are_read_the_scaled_object_composed_before_is_kept() -> None:
    before = ready_scaled_object(reconciled(sleepy()))
    rsp = reconciled(sleepy(), {SCALED_OBJECT: before}, services=UNREAD)
    assert rsp.resources[SCALED_OBJECT]["spec"] == before["spec"]


def test_until_the_services_are_read_a_deployment_at_zero_places_nothing() -> None:
    assert placed(reconciled(sleepy(replicas=0), services=UNREAD)) == 0


def test_a_service_that_selects_it_but_publishes_nothing_keeps_the_front_door_it_had() -> None:
    before = ready_scaled_object(reconciled(sleepy()))
    rsp = reconciled(sleepy(), {SCALED_OBJECT: before}, services=[service()], hpas=[hpa(1)])
    assert front_door(rsp) == front_door(reconciled(sleepy()))
    assert rsp.resources[SCALED_OBJECT]["spec"]["minReplicaCount"] == 0
    assert (
        "ModelService ml/chat published no front-door clusters" in rsp.condition("Autoscaling")[2]
    )


def test_once_no_service_selects_it_it_keeps_one_replica() -> None:
    before = ready_scaled_object(reconciled(sleepy()))
    rsp = reconciled(sleepy(replicas=0), {SCALED_OBJECT: before}, services=[])
    so = rsp.resources[SCALED_OBJECT]
    assert so["spec"]["minReplicaCount"] == 1
    assert front_door(rsp) is None
    assert placed(rsp) == 1


def test_once_no_service_selects_it_the_autoscaler_says_nothing_wakes_it() -> None:
    status, reason, message = reconciled(sleepy(), services=[]).condition("Autoscaling")
    assert (status, reason) == ("False", "NothingWakes")
    assert "spec.autoscaling.minReplicas is 0" in message
    assert "no ModelService in namespace ml selects it" in message


def test_a_service_that_never_published_its_front_door_is_named() -> None:
    _, reason, message = reconciled(sleepy(), services=[service()]).condition("Autoscaling")
    assert reason == "NothingWakes"
    assert "ModelService ml/chat selects it but has published no front-door clusters" in message


def test_a_deployment_at_zero_nothing_wakes_says_it_placed_one() -> None:
    _, _, message = reconciled(sleepy(replicas=0), services=[]).condition("Autoscaling")
    assert "spec.replicas 0 is outside [1, 3]: 1 placed" in message


# At zero.


def test_at_zero_it_places_nothing() -> None:
    rsp = reconciled(sleepy(replicas=0))
    assert placed(rsp) == 0
    assert rsp.fatal is None


def test_at_zero_its_replicas_leave_through_the_two_phase_drain() -> None:
    awake = as_observed(reconciled(sleepy(replicas=2)))
    awake = as_observed(reconciled(sleepy(replicas=2), awake))
    assert sum(1 for o in awake.values() if o["kind"] == "ModelEndpoint") == 2
    draining = reconciled(sleepy(replicas=0), awake)
    assert not [o for o in draining.resources.values() if o["kind"] == "ModelEndpoint"]
    assert placed(draining) == 2
    assert draining.status["replicas"] == {"total": 0, "ready": 0, "draining": 2}
    gone = reconciled(sleepy(replicas=0), as_observed(draining))
    assert placed(gone) == 0


def test_asleep_it_serves_all_it_is_asked_and_says_what_wakes_it() -> None:
    status, reason, message = reconciled(sleepy(replicas=0)).condition("ReplicasServing")
    assert (status, reason) == ("True", "Asleep")
    assert "the first request through ModelService ml/chat wakes it" in message


def test_asleep_the_autoscaler_says_it_scaled_to_zero_after_its_idle_seconds() -> None:
    status, reason, message = reconciled(sleepy(replicas=0)).condition("Autoscaling")
    assert (status, reason) == ("True", "ScaledToZero")
    assert "900 s (spec.autoscaling.scaleToZero.idleSeconds)" in message


def test_asleep_it_is_not_held_unready() -> None:
    rsp = reconciled(sleepy(replicas=0))
    assert rsp.composite_ready != "READY_FALSE"
    assert rsp.condition("ReplicasScheduled")[0] == "True"


def test_asleep_its_autoscaling_status_says_so_and_what_wakes_it() -> None:
    status = reconciled(sleepy(replicas=0)).status["autoscaling"]
    assert status["asleep"] is True
    assert status["activationClusters"] == sorted([MODELS, FRONT])


def test_awake_its_autoscaling_status_says_it_is_not_asleep() -> None:
    assert reconciled(sleepy(replicas=1)).status["autoscaling"]["asleep"] is False


# Woken: held awake until a replica serves.


def forced(rsp: Response) -> bool:
    return objects.annotations(rsp.resources[SCALED_OBJECT]).get(FORCE_ACTIVATION) == "true"


SERVED_AT = "2026-12-07T03:07:20Z"
"""When the woken deployment's replica began serving (its ModelServing turned True)."""


def woken_and_serving(polled: str | None = "2026-12-07T03:07:34Z") -> Response:
    """Woken and held, then observed with its replica serving since ``SERVED_AT`` and KEDA's
    last poll (``status.lastActiveTime``) at ``polled`` (None: none recorded)."""
    woken = reconciled(sleepy(replicas=1))
    observed = as_observed(woken)
    for obj in observed.values():
        if obj["kind"] == "ModelReplica":
            serving = objects.condition(obj, "ModelServing")
            assert serving is not None
            serving["lastTransitionTime"] = SERVED_AT
    if polled is not None:
        observed[SCALED_OBJECT].setdefault("status", {})["lastActiveTime"] = polled
    return reconciled(sleepy(replicas=1), observed)


def test_woken_with_no_replica_serving_it_is_held_awake() -> None:
    assert forced(reconciled(sleepy(replicas=1)))


def test_woken_with_no_replica_serving_its_status_says_it_is_waking() -> None:
    rsp = reconciled(sleepy(replicas=1))
    assert rsp.status["autoscaling"]["waking"] is True
    assert "holds it awake until one does" in rsp.condition("Autoscaling")[2]


def test_once_keda_polled_after_a_replica_served_it_is_no_longer_held_awake() -> None:
    rsp = woken_and_serving()
    assert rsp.status["replicas"]["ready"] == 1
    assert not forced(rsp)
    assert "waking" not in rsp.status["autoscaling"]


def test_a_replica_serving_is_held_until_keda_polls_after_it_began() -> None:
    # Let go at once, the idle time would count from KEDA's last poll, which can be a whole
    # polling interval before the replica served: back to zero before the client retried.
    rsp = woken_and_serving(polled="2026-12-07T03:07:04Z")
    assert forced(rsp)
    assert "holds it awake until its next poll" in rsp.condition("Autoscaling")[2]


def test_a_replica_serving_held_awake_is_not_said_to_be_waking() -> None:
    rsp = woken_and_serving(polled="2026-12-07T03:07:04Z")
    assert "waking" not in rsp.status["autoscaling"]


def test_a_poll_in_the_second_the_replica_began_serving_may_have_come_before_it() -> None:
    assert forced(woken_and_serving(polled=SERVED_AT))


def test_a_replica_serving_with_no_poll_recorded_stays_held() -> None:
    assert forced(woken_and_serving(polled=None))


def test_a_deployment_serving_that_was_not_held_is_not_held() -> None:
    observed = as_observed(woken_and_serving())
    assert not forced(reconciled(sleepy(replicas=1), observed))


def test_once_a_replica_serves_it_still_wakes_on_its_front_door() -> None:
    assert front_door(woken_and_serving()) is not None


def test_every_replica_down_holds_it_awake_again() -> None:
    down = as_observed(woken_and_serving(), serving="False", ready="False")
    assert forced(reconciled(sleepy(replicas=1), down))


def test_asleep_it_is_not_held_awake() -> None:
    assert not forced(reconciled(sleepy(replicas=0)))


def test_a_deployment_nothing_wakes_is_not_held_awake() -> None:
    assert not forced(reconciled(sleepy(replicas=1), services=()))


def test_a_deployment_that_may_not_sleep_is_not_held_awake() -> None:
    assert not forced(reconciled(autoscaled(replicas=1)))


def test_kedas_refusal_is_said_over_asleep() -> None:
    before = with_condition(
        reconciled(sleepy()).resources[SCALED_OBJECT], "Ready", "False", "Failed", "query failed"
    )
    rsp = reconciled(sleepy(replicas=0), {SCALED_OBJECT: before})
    assert rsp.condition("Autoscaling")[1] == "AutoscalerNotReady"


# What `modelplane explain` says of it.


def explained_at_zero(status: Obj | None = None) -> str:
    md = explain_autoscaled(0, low=0)
    md["spec"]["autoscaling"]["scaleToZero"] = {"idleSeconds": 900}
    if status is not None:
        md["status"] = status
    return explain(onprem_and_eks(md))


def test_explain_says_a_deployment_observed_asleep_wakes_on_its_first_request() -> None:
    asleep = {
        "autoscaling": {"minReplicas": 0, "maxReplicas": 4, "asleep": True},
        "conditions": [{"type": "Autoscaling", "status": "True", "reason": "ScaledToZero"}],
    }
    text = explained_at_zero(asleep)
    assert "asleep: the first request through a ModelService that selects it wakes it" in text


def test_explain_places_one_replica_of_a_deployment_nothing_wakes() -> None:
    # No ModelService among the documents: nothing would wake it at zero.
    text = explained_at_zero()
    assert "autoscaling: 1 to 4 replicas, 1 placed" in text
    assert "asleep:" not in text


def test_without_a_named_prometheus_a_deployment_at_zero_nothing_wakes_says_it_placed_one() -> None:
    rsp = reconcile_deployment(
        sleepy(replicas=0),
        fleet("east"),
        unrouted=True,
        **{METRICS: [], HPA: None, SERVICES: []},
    )
    _, reason, message = rsp.condition("Autoscaling")
    assert reason == "NoMetricsEndpoint"
    assert message.endswith("; spec.replicas 0 is outside [1, 3]: 1 placed")
    assert placed(rsp) == 1
