"""The replica's InferenceObjectives: one per priority value a gateway may set, named for the
pool and the value, in the group the pinned picker watches, each validated against its pinned
CRD (llm-d-router v0.10.0, tests/upstream)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from modelplane.compose.modelreplica import objectives, routing
from modelplane.compose.shared.frontdoor import PRIORITY_VALUES
from tests.compose.modelreplica.routing_fixtures import (
    context,
    manifest,
    replica,
    user_picker,
)
from tests.upstream_crds import upstream

Obj = dict[str, Any]
POOL = routing.pool_name("qwen3-8b-eks-l4-0")
NOT_SYNCED = {"type": "Synced", "status": "False", "reason": "ReconcileError"}


def composed(replica_obj: Obj | None = None) -> dict[str, Obj]:
    return {
        key: manifest(obj)
        for key, obj in objectives.compose_objectives(context(replica_obj), POOL).items()
    }


def with_picker(image: str) -> Obj:
    return replica(serving={"router": "EndpointPicker", "endpointPicker": user_picker(image=image)})


def test_one_objective_per_priority_value() -> None:
    assert sorted(o["spec"]["priority"] for o in composed().values()) == list(PRIORITY_VALUES)


def test_each_objective_is_named_for_its_pool_and_value() -> None:
    names = {o["spec"]["priority"]: o["metadata"]["name"] for o in composed().values()}
    assert names[2] == f"{POOL}-priority-2"
    assert names[0] == f"{POOL}-priority-0"


def test_a_negative_value_is_named_with_m_for_its_sign() -> None:
    names = {o["spec"]["priority"]: o["metadata"]["name"] for o in composed().values()}
    assert names[-5] == f"{POOL}-priority-m5"


def test_each_objective_refers_to_the_replicas_pool() -> None:
    for obj in composed().values():
        assert obj["spec"]["poolRef"] == {
            "group": "inference.networking.k8s.io",
            "kind": "InferencePool",
            "name": POOL,
        }


def test_objectives_live_in_the_replicas_namespace() -> None:
    assert {o["metadata"]["namespace"] for o in composed().values()} == {"ml-team"}


def test_objectives_are_in_the_group_the_pinned_picker_watches() -> None:
    assert {o["apiVersion"] for o in composed().values()} == {"llm-d.ai/v1alpha2"}


def test_every_objective_is_admitted_by_the_pinned_crd() -> None:
    for key, obj in composed().items():
        assert [str(e) for e in upstream().admit(copy.deepcopy(obj)).errors] == [], key


def test_a_users_picker_of_a_release_that_watches_llm_d_ai_gets_them() -> None:
    image = "ghcr.io/llm-d/llm-d-router-endpoint-picker:v0.9.0"
    assert len(composed(with_picker(image))) == len(PRIORITY_VALUES)


def test_an_llm_d_picker_before_v0_9_gets_none() -> None:
    # v0.8.x runs gateway-api-inference-extension's picker: it watches only the legacy group.
    assert composed(with_picker("ghcr.io/llm-d/llm-d-inference-scheduler:v0.8.0")) == {}


@pytest.mark.parametrize(
    "image",
    ["ghcr.io/llm-d/llm-d-router-endpoint-picker:latest", "registry.example.com/epp:v1"],
)
def test_a_picker_of_no_readable_release_gets_them(image: str) -> None:
    # Objectives a picker does not read cost nothing; one that reads them and lacks them
    # would serve every caller at priority 0.
    assert len(composed(with_picker(image))) == len(PRIORITY_VALUES)


def test_an_objective_not_yet_observed_is_not_ready() -> None:
    assert objectives.objective_ready(None) == "False"


def test_an_objective_is_ready_once_its_object_exists_even_if_the_cluster_refused_it() -> None:
    # A cluster not serving the CRD cannot apply it; its requests are served at priority 0,
    # and the replica does not wait on it.
    [first, *_] = objectives.compose_objectives(context(), POOL).values()
    refused = {**first, "status": {"conditions": [NOT_SYNCED]}}
    assert objectives.objective_ready(refused) == "True"
