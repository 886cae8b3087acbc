"""A picker reads the objectives' group only if its cluster served it when the picker started
(llm-d-router v0.10.0 ``pkg/epp/server/controller_config.go`` looks once). Its pod template is
marked ``modelplane.ai/objectives-served`` from its start when it is new (placed behind
StackReady, which waits for the CRD), or, started unmarked (a cluster upgraded in place), once
its objectives are observed applied: the mark restarts it once, after the cluster serves the
group (docs/design/shared-front-door.md, "Pickers started before the CRD")."""

from __future__ import annotations

import copy
from typing import Any

from modelplane.compose.modelreplica import objectives, picker
from modelplane.compose.pods_revision import pods_revision, reference_pods
from modelplane.kube import objects
from modelplane.labels import DEPLOYMENT, PODS_REVISION
from modelplane.simulate import simulate_observed
from tests.compose.modelreplica.routing_fixtures import objectiveless_picker

from .support import replica, run

Obj = dict[str, Any]


def template_annotations(result_or_observed: Any) -> dict[str, str]:
    resources = getattr(result_or_observed, "resources", result_or_observed)
    obj = resources[picker.DEPLOYMENT_KEY]
    obj = getattr(obj, "resource", obj)
    template = objects.dig(obj, "spec", "forProvider", "manifest", "spec", "template")
    return dict(objects.annotations(template))


def marked(result: Any) -> bool:
    return objectives.SERVED_ANNOTATION in template_annotations(result)


def started_unmarked(composite: Obj, *, applied: bool) -> dict[str, Obj]:
    """What a replica's picker runs as on a cluster upgraded in place: the picker observed
    without the mark, its objectives observed applied or only created (no status yet)."""
    desired = {k: d.resource for k, d in run(composite).resources.items()}
    observed = simulate_observed(desired, ready_copies=1) if applied else copy.deepcopy(desired)
    deployment = copy.deepcopy(simulate_observed(desired, ready_copies=1)[picker.DEPLOYMENT_KEY])
    template = deployment["spec"]["forProvider"]["manifest"]["spec"]["template"]
    template["metadata"]["annotations"].pop(objectives.SERVED_ANNOTATION)
    observed[picker.DEPLOYMENT_KEY] = deployment
    return observed


def test_a_new_picker_is_marked_from_its_first_composition() -> None:
    assert marked(run(replica()))


def test_a_picker_started_unmarked_stays_unmarked_while_its_objectives_are_not_applied() -> None:
    observed = started_unmarked(replica(), applied=False)
    assert not marked(run(replica(), observed=observed))


def test_a_picker_started_unmarked_is_marked_once_its_objectives_are_applied() -> None:
    observed = started_unmarked(replica(), applied=True)
    assert marked(run(replica(), observed=observed))


def test_one_objective_not_applied_keeps_the_mark_away() -> None:
    observed = started_unmarked(replica(), applied=True)
    refused = observed[objectives.KEYS[0]]
    refused["status"]["conditions"] = [
        {"type": "Synced", "status": "False", "reason": "ReconcileError"},
        {"type": "Ready", "status": "False", "reason": "Unavailable"},
    ]
    assert not marked(run(replica(), observed=observed))


def test_a_marked_picker_keeps_its_mark_when_its_objectives_are_not_applied() -> None:
    desired = {k: d.resource for k, d in run(replica()).resources.items()}
    observed = copy.deepcopy(desired)
    for key in objectives.KEYS:
        observed.pop(key)
    assert marked(run(replica(), observed=observed))


def test_a_picker_that_reads_no_objectives_is_never_marked() -> None:
    serving = objectiveless_picker()
    assert not marked(run(replica(serving=serving)))


def test_the_mark_waits_for_the_deployments_rollout_to_reach_the_replica() -> None:
    composite = replica()
    composite["metadata"]["labels"] = {DEPLOYMENT: "qwen"}
    composite["metadata"]["annotations"] = {PODS_REVISION: "p-an-older-release"}
    observed = started_unmarked(composite, applied=True)
    assert not marked(run(composite, observed=observed))
    composite["metadata"]["annotations"] = {PODS_REVISION: pods_revision()}
    assert marked(run(composite, observed=observed))


def test_the_mark_is_part_of_the_pods_revision() -> None:
    assert objectives.SERVED_ANNOTATION in reference_pods()
