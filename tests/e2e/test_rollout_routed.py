"""A rollout behind a ModelService, on real timing: Crossplane's own requeues (a composite polled
every minute, the ModelService reading its endpoints on its own schedule), provider-kubernetes'
poll, sampled every second on all three API servers.

A ModelDeployment of four replicas spread over two clusters sits behind a ModelService whose
front door is an InferenceGateway on the first cluster. Its image changes, and every second the
test counts the replicas that are both serving (an engine pod Ready and not terminating on its
workload cluster) and routed (the ModelService's routes as applied on the workload clusters name
its pool: the front route's lane and its cluster's fleet route). That count never falls below
``replicas - maxUnavailable``, and ``RolledOut`` says Complete only at a moment when every replica
is updated, serving and routed.

The InferenceGateway's own certificates would come from cert-manager, which the tier does not
run; the ModelService needs only the gateway's spec and its host cluster's status, and its
routes are applied by provider-kubernetes to the workload clusters like any other.

Shown to fail, with a broken copy of the function's source served instead of the checkout's
(``git archive HEAD src apis pyproject.toml`` into a directory, the change made there,
``PYTHONPATH=<dir>/src:.`` ahead of the editable install; nothing broken is committed):
``modeldeployment.composer.serves_its_stamp`` returning True (an updated replica counted as
soon as it is restamped) failed it, RolledOut saying Complete with 2 of 4 replicas updated,
serving and routed. Breaking only the routed-again check (``reroute.Routes.rerouted`` returning
True) did not: on this timing no sample saw fewer than 3 serving and routed, the ModelService
putting a lane back before the deployment's next step. That guard is held by the
multi-reconcile tests (tests/compose/modeldeployment/test_rollout_routed.py), which order
the steps adversarially.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from e2e import control
from e2e.environment import Environment
from modelplane.compose.modeldeployment.rollout import described_generation
from modelplane.compose.shared.frontdoor import POOL_HEADER
from modelplane.compose.shared.replicapool import replica_pool_name
from modelplane.labels import DEPLOYMENT
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
    sampled,
)

pytestmark = pytest.mark.e2e

FLEET = "routed"
CLUSTERS = ("routed-a", "routed-b")
NAMESPACE = "routed"
NAME = "rolling"
GATEWAY = "routed-front"
REPLICAS = 4
MAX_UNAVAILABLE = 1
OLD, NEW = "vllm/vllm-openai:v0.11.0", "vllm/vllm-openai:v0.11.1"
PREFIX = f"/{NAMESPACE}/{NAME}/"


def deployment(image: str) -> dict[str, Any]:
    model = guide_model(NAMESPACE, FLEET, NAME, REPLICAS)
    model["spec"]["rollout"] = {"maxUnavailable": MAX_UNAVAILABLE}
    template = model["spec"]["template"]["spec"]
    # Two replicas a cluster: each cluster's lanes change during the rollout.
    template["topologySpreadConstraints"] = [{"maxSkew": 1, "topologyKey": "modelplane.ai/cluster"}]
    template["engines"][0]["members"][0]["template"]["spec"]["containers"][0]["image"] = image
    return model


def front_door() -> list[dict[str, Any]]:
    """docs/getting-started/frontdoor.yaml on this fleet: its gateway on the first cluster, its
    server certificate a Secret on the control plane, the service selecting the deployment."""
    return guide_front_door(GATEWAY, CLUSTERS[0], NAMESPACE, NAME, {DEPLOYMENT: NAME})


@dataclass(frozen=True)
class Sample:
    """One second of the fleet, read deployment first: what RolledOut said, then what was so."""

    at: float
    generation: int
    rolled_out: tuple[str, str, int | None]
    """RolledOut's status and reason, and the generation they describe (named first in its
    message: ``status.rollout.observedGeneration`` is written apart from the condition, see
    tests/conformance/test_crossplane_composite_status.py)."""
    images: dict[str, set[str]]
    """Each replica's images among its engine pods Ready and not terminating."""
    routed: frozenset[str]
    """Pools named by both the front route's lanes (weight above 0) and a fleet route."""

    def available(self, image: str | None = None) -> set[str]:
        """Replicas serving (with ``image``, when given) and routed."""
        return {
            replica
            for replica, images in self.images.items()
            if images and (image is None or images == {image})
            if replica_pool_name(replica) in self.routed
        }


def _ready(pod: dict[str, Any]) -> bool:
    conditions = {c["type"]: c["status"] for c in pod["status"].get("conditions") or []}
    return conditions.get("Ready") == "True" and not pod["metadata"].get("deletionTimestamp")


def _serving(env: Environment) -> dict[str, set[str]]:
    images: dict[str, set[str]] = {}
    for cluster in CLUSTERS:
        for pod in env.workloads[cluster].get("pods", "-n", NAMESPACE)["items"]:
            if not pod["spec"].get("resourceClaims"):
                continue  # not an engine pod (an endpoint picker)
            replica = pod["metadata"]["labels"].get("modelplane.ai/replica", "")
            mine = images.setdefault(replica, set())
            if _ready(pod):
                mine.add(pod["spec"]["containers"][0]["image"])
    return images


def _service_routes(env: Environment) -> list[dict[str, Any]]:
    """The HTTPRoutes on the workload clusters that carry the service's prefix."""
    out = []
    for cluster in CLUSTERS:
        for route in env.workloads[cluster].get("httproutes.gateway.networking.k8s.io", "-A")[
            "items"
        ]:
            paths = {
                (match.get("path") or {}).get("value")
                for rule in route["spec"].get("rules") or []
                for match in rule.get("matches") or []
            }
            if PREFIX in paths:
                out.append(route)
    return out


def _routed_pools(routes: list[dict[str, Any]]) -> frozenset[str]:
    front: set[str] = set()
    fleet: set[str] = set()
    for route in routes:
        for rule in route["spec"].get("rules") or []:
            for ref in rule.get("backendRefs") or []:
                if ref.get("kind") == "InferencePool":
                    fleet.add(ref["name"])
                elif ref.get("kind") == "Backend" and ref.get("weight", 1) > 0:
                    for f in ref.get("filters") or []:
                        for header in (f.get("requestHeaderModifier") or {}).get("set") or []:
                            if header["name"] == POOL_HEADER:
                                front.add(header["value"])
    return frozenset(front & fleet)


def sample(env: Environment) -> Sample:
    md = env.control.get("modeldeployment", NAME, "-n", NAMESPACE)
    status = md.get("status") or {}
    rolled = {c["type"]: c for c in status.get("conditions") or []}.get("RolledOut", {})
    described = described_generation(rolled.get("message", ""))
    return Sample(
        time.monotonic(),
        md["metadata"]["generation"],
        (rolled.get("status", ""), rolled.get("reason", ""), described),
        _serving(env),
        _routed_pools(_service_routes(env)),
    )


def all_routed(env: Environment, image: str) -> None:
    now = sample(env)
    assert len(now.images) == REPLICAS, now
    assert len(now.available(image)) == REPLICAS, now


@pytest.fixture(scope="module")
def fleet(e2e: Environment) -> Iterator[Environment]:
    docs = documents(ROOT / "docs/getting-started/classes.yaml")
    # One spare GPU a cluster: a replica's new pod can start beside its old one.
    clusters = [guide_cluster(c, fleet=FLEET, nodes=REPLICAS // 2 + 1) for c in CLUSTERS]
    add_fleet(e2e, [*docs, *clusters])
    for c in CLUSTERS:
        e2e.control.kubectl(
            "wait", f"inferencecluster/{c}", "--for=condition=Ready", "--timeout=300s"
        )
    namespace(e2e, NAMESPACE)
    e2e.control.apply(front_door())
    e2e.control.apply([deployment(OLD)])
    try:
        deployment_ready(e2e, NAMESPACE, NAME)
        eventually(lambda: all_routed(e2e, OLD), timeout=600, interval=2)
        yield e2e
    finally:
        e2e.control.kubectl("-n", NAMESPACE, "delete", "modelservice", NAME, "--wait=false")
        e2e.control.kubectl("delete", "inferencegateway", GATEWAY, "--wait=false")
        secret = front_door_secret(GATEWAY)
        e2e.control.kubectl("-n", control.NAMESPACE, "delete", "secret", secret, check=False)
        retire(e2e, {NAMESPACE}, set(CLUSTERS))


def rolled_out(env: Environment, generation: int) -> None:
    all_routed(env, NEW)
    status, reason, described = sample(env).rolled_out
    assert (status, reason) == ("True", "Complete")
    assert (described or 0) >= generation


def judged(samples: list[Sample], generation: int) -> list[Sample]:
    """The samples whose RolledOut describes the change or a later generation (Crossplane bumps
    it again whenever the composed replicas change): a RolledOut written before the function
    read the change is still about the old template, and says nothing of this rollout. Judged
    by the generation the condition names, not ``status.rollout.observedGeneration``: Crossplane
    writes that a step before the condition, and one sample read it at the edit beside a
    Complete about the template before."""
    return [s for s in samples if (s.rolled_out[2] or 0) >= generation]


def test_an_image_change_behind_a_service_keeps_serving_and_routed_capacity(
    fleet: Environment,
) -> None:
    with sampled(lambda: sample(fleet)) as probes:
        time.sleep(2)
        fleet.control.apply([deployment(NEW)])
        # At least the edit's generation (Crossplane may have bumped it since).
        edited = fleet.control.get("modeldeployment", NAME, "-n", NAMESPACE)["metadata"][
            "generation"
        ]
        eventually(lambda: rolled_out(fleet, edited), timeout=1500, interval=2)
        time.sleep(2)
    samples = [s for s in probes if isinstance(s, Sample)]
    assert len(samples) >= 30
    counts = [len(s.available()) for s in samples]
    assert min(counts) >= REPLICAS - MAX_UNAVAILABLE, [
        (round(s.at - samples[0].at), len(s.available()), sorted(s.routed)) for s in samples
    ]
    complete = [s for s in judged(samples, edited) if s.rolled_out[:2] == ("True", "Complete")]
    assert complete, "RolledOut was never seen Complete"
    for s in complete:
        assert len(s.available(NEW)) == REPLICAS, s
