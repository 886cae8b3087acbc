"""Scale to zero behind the front door, on the real control plane (docs/design/autoscaling.md,
"Scale to zero behind the front door").

A ModelDeployment that may sleep (``minReplicas: 0``, ``scaleToZero.idleSeconds``) behind a
ModelService on an InferenceGateway. KEDA (v2.20.2, built from its Go module) reads the query
Modelplane composed from the clusters the ModelService published; Prometheus scrapes the front
gateway's request counters. With no request for the idle time, KEDA writes 0 to the
deployment's scale subresource and the function drains its replica; the ModelService's routes,
on the gateway's cluster, then send a request to the sentinel lane. A request there is answered
503 with Retry-After and a body saying the model is waking, and counted; KEDA wakes the
deployment, the function places a replica, and the route takes its lane again.

Envoy does not run here (C++, no Go module): e2e/envoy.py stands in for the front gateway's
Envoy, answering from the HTTPRoutes and HTTPRouteFilters composed on the gateway's cluster and
exporting Envoy's per-cluster request counter, each rule cited there.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from e2e import autoscaler, control
from e2e.environment import Environment
from e2e.envoy import Answer, FrontDoor, Stats
from e2e.kubernetes import condition_true
from modelplane.compose.inferencegateway.callers import CALLER_HEADER
from modelplane.compose.inferencegateway.priority import GUARDED_HEADERS
from modelplane.compose.modeldeployment.autoscaling import FORCE_ACTIVATION
from modelplane.compose.shared.frontdoor import service_prefix
from modelplane.compose.shared.scaletozero import activation_clusters
from modelplane.kube import objects
from modelplane.kube.names import dns_label
from modelplane.labels import DEPLOYMENT
from tests import promql
from tests.e2e.conftest import (
    ROOT,
    add_fleet,
    deployment_ready,
    documents,
    eventually,
    front_door_secret,
    guide_cluster,
    guide_front_door,
    guide_model,
    namespace,
    retire,
)

pytestmark = pytest.mark.e2e

CLUSTER = "sleep-a"
NAMESPACE = "sleepy"
NAME = "sleeper"
GATEWAY = "sleep-front"
TLS_SECRET = front_door_secret(GATEWAY)
IDLE = 30
"""Seconds without a request before the deployment sleeps (the XRD's least)."""
PATH = service_prefix(NAMESPACE, NAME) + "v1/completions"


def deployment() -> dict[str, Any]:
    model = guide_model(NAMESPACE, CLUSTER, NAME, replicas=1)
    model["spec"]["autoscaling"] = {
        "minReplicas": 0,
        "maxReplicas": 1,
        "targets": {"waitingRequestsPerReplica": 4},
        "scaleToZero": {"idleSeconds": IDLE},
    }
    model["spec"]["drain"] = {"preStopSeconds": 0}
    return model


def front_door() -> list[dict[str, Any]]:
    return guide_front_door(GATEWAY, CLUSTER, NAMESPACE, NAME, {DEPLOYMENT: NAME})


@dataclass
class Door:
    """The environment, the front door's stand-in and what it answered at each point."""

    env: Environment
    door: FrontDoor
    at_zero: Answer | None = None
    awake: Answer | None = None
    reasons: dict[str, str] = field(default_factory=dict)
    """Condition reasons while asleep: ``<kind>/<type>``."""
    held: bool = False
    """Whether the ScaledObject was seen forced active while the woken deployment had no
    replica serving."""


def replicas(env: Environment) -> tuple[int, int]:
    """The deployment's spec.replicas and how many of its ModelReplicas are Ready."""
    md = env.control.get("modeldeployment", NAME, "-n", NAMESPACE)
    listed = env.control.get("modelreplicas", "-n", NAMESPACE, "-l", f"{DEPLOYMENT}={NAME}")
    ready = sum(1 for r in listed["items"] if condition_true(r, "Ready"))
    return int(md["spec"]["replicas"]), ready


@pytest.fixture(scope="module")
def door(e2e: Environment) -> Iterator[Door]:
    classes = documents(ROOT / "docs/getting-started/classes.yaml")
    add_fleet(e2e, [*classes, guide_cluster(CLUSTER, nodes=1)])
    # A gateway composes on a cluster whose stack publishes its gateway (test_front_door).
    e2e.control.kubectl(
        "wait", f"inferencecluster/{CLUSTER}", "--for=condition=Ready", "--timeout=300s"
    )
    stats = Stats(FrontDoor(e2e.workloads[CLUSTER]))
    port = stats.serve()
    autoscaler.start_stack(e2e.control, [f"127.0.0.1:{port}"])
    try:
        # The gateway's client certificate is a cert-manager Certificate, which the tier does
        # not run: its CRD is enough for the gateway to compose whole (tests/e2e/test_front_door).
        e2e.control.apply_crds(
            documents(ROOT / "tests/upstream/crds/cert-manager.io_certificates.yaml")
        )
        namespace(e2e, NAMESPACE)
        e2e.control.apply([*front_door(), deployment()])
        deployment_ready(e2e, NAMESPACE, NAME)
        yield Door(e2e, stats.door)
    finally:
        stats.stop()
        e2e.control.kubectl("-n", NAMESPACE, "delete", "modelservice", NAME, check=False)
        e2e.control.kubectl("delete", "inferencegateway", GATEWAY, "--timeout=300s", check=False)
        e2e.control.kubectl("-n", control.NAMESPACE, "delete", "secret", TLS_SECRET, check=False)
        retire(e2e, {NAMESPACE}, {CLUSTER})
        autoscaler.stop_stack(e2e.control)


@pytest.fixture(scope="module")
def asleep(door: Door) -> Door:
    """The deployment once its idle time has put it to zero, and a request answered there."""

    def at_zero() -> None:
        assert replicas(door.env) == (0, 0)
        md = door.env.control.get("modeldeployment", NAME, "-n", NAMESPACE)
        ms = service(door.env)
        door.reasons = {
            "ModelDeployment/ReplicasServing": reason(md, "ReplicasServing"),
            "ModelDeployment/Ready": status(md, "Ready"),
            "ModelService/RoutingReady": reason(ms, "RoutingReady"),
        }
        assert door.reasons["ModelService/RoutingReady"] == "Asleep", door.reasons
        # Counted nothing yet: the one request below is what wakes the deployment.
        assert door.door.answer(PATH).status == 503

    eventually(at_zero, timeout=IDLE + 300, interval=3)
    door.at_zero = door.door.request(PATH)
    return door


def condition(obj: dict[str, Any], kind: str) -> dict[str, Any]:
    found = [c for c in obj.get("status", {}).get("conditions", []) if c["type"] == kind]
    return found[0] if found else {}


def reason(obj: dict[str, Any], kind: str) -> str:
    return str(condition(obj, kind).get("reason", ""))


def status(obj: dict[str, Any], kind: str) -> str:
    return str(condition(obj, kind).get("status", ""))


@pytest.fixture(scope="module")
def woken(asleep: Door) -> Door:
    """The deployment once the request at zero has woken it, and a request answered then."""
    started = time.monotonic()

    def serving() -> None:
        # One request, the one at zero: the deployment stays awake until its replica serves,
        # however long its cold start against its idle time.
        now = replicas(asleep.env)
        if now[1] == 0:
            scaled = asleep.env.control.get("scaledobject", NAME, "-n", NAMESPACE)
            asleep.held |= objects.annotations(scaled).get(FORCE_ACTIVATION) == "true"
        assert now == (1, 1)
        answer = asleep.door.request(PATH)
        assert answer.status == 200, answer
        asleep.awake = answer

    eventually(serving, timeout=420, interval=3)
    print(f"\nwoken and routed in {time.monotonic() - started:.0f} s")
    return asleep


def service(env: Environment) -> dict[str, Any]:
    return env.control.get("modelservice", NAME, "-n", NAMESPACE)


def test_the_service_publishes_the_clusters_of_its_front_door_rules(door: Door) -> None:
    def published() -> None:
        # The path route's rule is the first cluster a path-form request is counted in (the
        # model route's HTTPRoute is the AI Gateway controller's, which does not run here).
        counted = door.door.answer(PATH).counted
        assert counted and counted[0] in activation_clusters(service(door.env))

    eventually(published, timeout=120, interval=2)


def test_the_gateway_without_auth_still_guards_the_headers_only_a_gateway_sets(door: Door) -> None:
    # It authenticates nobody, yet its callers must not name an identity, a priority or the
    # picker's objective and flow themselves (compose/inferencegateway/callers.py
    # compose_guard): the guard is composed and admitted by Envoy Gateway's CRD all the same.
    guard_name = dns_label(GATEWAY, "caller-guard")
    kind = "clienttrafficpolicies.gateway.envoyproxy.io"

    def admitted() -> None:
        items = door.env.workloads[CLUSTER].get(kind, "--all-namespaces")["items"]
        [guard] = [i for i in items if i["metadata"]["name"] == guard_name]
        remove = guard["spec"]["headers"]["earlyRequestHeaders"]["remove"]
        assert remove == [CALLER_HEADER, *GUARDED_HEADERS]

    eventually(admitted, timeout=300, interval=2)


def test_the_scaled_object_may_sleep_and_wakes_on_those_clusters(door: Door) -> None:
    def composed() -> None:
        clusters = activation_clusters(service(door.env))
        scaled = door.env.control.get("scaledobject", NAME, "-n", NAMESPACE)["spec"]
        assert scaled["minReplicaCount"] == 0
        assert scaled["cooldownPeriod"] == IDLE
        [front] = [t for t in scaled["triggers"] if t["name"] == "front-door"]
        assert clusters and all(promql.selects(front["metadata"]["query"], c) for c in clusters)

    eventually(composed, timeout=120, interval=2)


def test_an_idle_deployment_sleeps_with_no_replica(asleep: Door) -> None:
    assert replicas(asleep.env) == (0, 0)


def test_a_deployment_asleep_says_so_and_stays_ready(asleep: Door) -> None:
    assert asleep.reasons["ModelDeployment/ReplicasServing"] == "Asleep"
    assert asleep.reasons["ModelDeployment/Ready"] == "True"


def test_a_service_whose_deployment_sleeps_says_its_first_request_wakes_it(
    asleep: Door,
) -> None:
    assert asleep.reasons["ModelService/RoutingReady"] == "Asleep"


def test_at_zero_a_request_is_answered_503_with_retry_after(asleep: Door) -> None:
    assert asleep.at_zero is not None
    assert asleep.at_zero.status == 503
    assert int(asleep.at_zero.headers["Retry-After"]) > 0


def test_at_zero_the_answer_says_the_model_is_waking(asleep: Door) -> None:
    assert asleep.at_zero is not None
    assert "waking" in asleep.at_zero.body


def test_at_zero_the_request_is_counted_where_the_scaled_object_reads(asleep: Door) -> None:
    assert asleep.at_zero is not None
    clusters = set(activation_clusters(service(asleep.env)))
    assert clusters & set(asleep.at_zero.counted)


def test_the_request_at_zero_wakes_the_deployment_and_its_lane_serves(woken: Door) -> None:
    assert replicas(woken.env) == (1, 1)
    assert woken.awake is not None and woken.awake.status == 200
    deployment_ready(woken.env, NAMESPACE, NAME)


def test_woken_it_is_held_awake_until_its_replica_serves(woken: Door) -> None:
    assert woken.held
