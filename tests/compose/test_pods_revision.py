"""A change Modelplane itself makes to pods (a new picker image, new defaults) reaches a
deployment's replicas through its rollout strategy, not all at once: through the FunctionRunner
over several reconciles, the ModelDeployment and each ModelReplica composed in turn.

The fleet starts as the previous release left it: each replica stamped at an older pods
revision, its picker running an older image. A replica whose pods change restarts: it does not
serve on the reconcile it changed."""

from __future__ import annotations

import copy
import itertools
from typing import Any

import pytest

from modelplane.compose import pods_revision as revision
from modelplane.compose.modeldeployment.rollout import TEMPLATE_HASH
from modelplane.compose.modelreplica import picker
from modelplane.compose.modelreplica.composer import CLUSTER_REQUIREMENT
from modelplane.compose.shared.endpointpicker import DEFAULT_IMAGE
from modelplane.labels import PODS_REVISION
from modelplane.simulate import simulate_observed
from tests.compose.through import Response, reconcile_deployment, run
from tests.fleet.builders import H100, deployment, inference_cluster, is_serving, with_condition

Obj = dict[str, Any]
FLEET = [inference_cluster(n, {"h100": ("h100", 2)}, classes=[H100]) for n in ("a", "b", "c")]
OLD_PICKER = "ghcr.io/llm-d/llm-d-router-endpoint-picker:v0.9.0"
MD = deployment("qwen", replicas=3)


def _images(objects: dict[str, Obj]) -> set[str]:
    """Every container image the replica's workloads and picker run."""
    out = set()
    for obj in objects.values():
        manifest = (obj.get("spec") or {}).get("forProvider", {}).get("manifest") or {}
        if manifest.get("kind") == "Deployment":
            for c in manifest["spec"]["template"]["spec"]["containers"]:
                out.add(c["image"])
    return out


def _pods(objects: dict[str, Obj]) -> dict[str, Any]:
    return {
        k: o["spec"]["forProvider"]["manifest"]["spec"]
        for k, o in objects.items()
        if (o.get("spec") or {}).get("forProvider", {}).get("manifest", {}).get("kind")
        in revision.POD_KINDS - {"ConfigMap"}
    }


class Fleet:
    def __init__(self) -> None:
        self.observed: dict[str, Obj] = {}
        """The deployment's observed composed resources (its replicas with their status)."""
        self.remote: dict[str, dict[str, Obj]] = {}
        """Each replica's observed composed resources, by replica key."""
        self.history: list[Response] = []

    def reconcile(self) -> None:
        rsp = reconcile_deployment(MD, FLEET, self.observed, unrouted=True)
        self.history.append(rsp)
        after: dict[str, Obj] = {}
        for key, obj in rsp.resources.items():
            if obj["kind"] != "ModelReplica":
                after[key] = obj
                continue
            was = self.remote.get(key, {})
            [cluster] = [c for c in FLEET if c["metadata"]["name"] == obj["spec"]["clusterName"]]
            composed = run(obj, was, {CLUSTER_REQUIREMENT: [cluster]})
            assert composed.fatal is None, composed.fatal
            restarted = _pods(was) != _pods(composed.resources)
            self.remote[key] = simulate_observed(composed.resources, ready_copies=1)
            serving = composed.condition("ModelServing")[0] == "True" and not restarted
            after[key] = with_condition(obj, "ModelServing", "True" if serving else "False")
            # The revision that status describes, as the replica wrote it beside.
            after[key] = with_condition(
                after[key], "RevisionReady", *composed.condition("RevisionReady")
            )
        self.observed = after

    def replicas(self) -> list[str]:
        return sorted(k for k, o in self.observed.items() if o["kind"] == "ModelReplica")

    def serving_count(self) -> int:
        return sum(1 for k in self.replicas() if is_serving(self.observed[k]))

    def on_new_picker(self) -> int:
        return sum(1 for k in self.replicas() if DEFAULT_IMAGE in _images(self.remote[k]))

    def as_previous_release(self) -> None:
        """Each replica stamped at an older pods revision, its picker on an older image."""
        for key in self.replicas():
            annotations = self.observed[key]["metadata"]["annotations"]
            annotations[PODS_REVISION] = "pprevious"
            annotations[TEMPLATE_HASH] = "previous"
            for obj in self.remote[key].values():
                for manifest in (
                    obj["spec"]["forProvider"].get("manifest"),
                    (obj.get("status") or {}).get("atProvider", {}).get("manifest"),
                ):
                    if not manifest or manifest.get("kind") != "Deployment":
                        continue
                    for c in manifest["spec"]["template"]["spec"]["containers"]:
                        if c["image"] == DEFAULT_IMAGE:
                            c["image"] = OLD_PICKER


def _upgraded() -> Fleet:
    fleet = Fleet()
    for _ in range(3):
        fleet.reconcile()
    assert fleet.serving_count() == 3
    fleet.remote = copy.deepcopy(fleet.remote)
    fleet.as_previous_release()
    return fleet


def test_a_new_picker_image_reaches_the_replicas_a_few_at_a_time() -> None:
    fleet = _upgraded()
    moved = [0]
    serving = []
    for _ in range(10):
        fleet.reconcile()
        moved.append(fleet.on_new_picker())
        serving.append(fleet.serving_count())
    assert all(b - a <= 1 for a, b in itertools.pairwise(moved))
    assert min(serving) == 2  # spec.rollout.maxUnavailable 1 of 3
    assert moved[-1] == 3
    assert fleet.history[-1].condition("RolledOut")[:2] == ("True", "Complete")


def test_a_replica_its_rollout_has_not_reached_keeps_the_pods_it_runs() -> None:
    fleet = _upgraded()
    fleet.reconcile()
    held = [k for k in fleet.replicas() if OLD_PICKER in _images(fleet.remote[k])]
    assert len(held) == 2
    for key in held:
        assert fleet.observed[key]["metadata"]["annotations"][PODS_REVISION] == "pprevious"


def test_a_replica_no_deployment_placed_takes_the_new_pods_at_once() -> None:
    fleet = _upgraded()
    [key, *_] = fleet.replicas()
    replica = copy.deepcopy(fleet.observed[key])
    del replica["metadata"]["labels"]["modelplane.ai/deployment"]
    [cluster] = [c for c in FLEET if c["metadata"]["name"] == replica["spec"]["clusterName"]]
    composed = run(replica, fleet.remote[key], {CLUSTER_REQUIREMENT: [cluster]})
    assert DEFAULT_IMAGE in _images(composed.resources)


def test_the_pods_revision_moves_with_what_modelplane_adds_to_pods(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    before = revision.reference_pods()
    monkeypatch.setattr(picker, "DEFAULT_IMAGE", OLD_PICKER)
    assert revision.reference_pods() != before


def test_the_pods_revision_is_stamped_on_every_replica() -> None:
    fleet = Fleet()
    fleet.reconcile()
    assert {
        fleet.observed[k]["metadata"]["annotations"][PODS_REVISION] for k in fleet.replicas()
    } == {revision.pods_revision()}
