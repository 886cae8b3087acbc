"""How Crossplane answers a requirement, and what a ModelDeployment's requirements select.

crossplane/crossplane v2.3.4, internal/xfn/required_resources.go, ``Fetch``: a selector that
matches by name is a Get in ``selector.namespace``; any other is a List with
``client.InNamespace(selector.namespace)`` (every namespace when it is empty) and, when it
carries ``match_labels``, ``client.MatchingLabels`` (every label must equal), sorted by
namespace/name. ``render`` answers requirements the same way (``render._Environment.select``).
"""

from __future__ import annotations

from typing import Any

from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from modelplane.compose.modeldeployment.composer import CLUSTERS, REPLICAS
from modelplane.compose.registry import default_registry
from modelplane.function import FunctionRunner, read_requirement
from modelplane.render import _Environment
from tests.compose.through import request
from tests.fleet.builders import deployment, inference_cluster, placed_replica

Obj = dict[str, Any]


def selectors(md: Obj) -> dict[str, fnv1.ResourceSelector]:
    rsp = FunctionRunner(default_registry()).run(request(md))
    return dict(rsp.requirements.resources)


def test_a_deployment_asks_for_its_own_replicas_by_label_in_its_namespace() -> None:
    asked = selectors(deployment("qwen", namespace="ml"))[REPLICAS]
    assert (asked.kind, asked.namespace) == ("ModelReplica", "ml")
    assert dict(asked.match_labels.labels) == {"modelplane.ai/deployment": "qwen"}


def test_a_deployment_with_a_cluster_selector_asks_only_for_matching_clusters() -> None:
    asked = selectors(deployment("qwen", selector={"region": "eu", "tier": "gpu"}))[CLUSTERS]
    assert (asked.kind, asked.namespace) == ("InferenceCluster", "")
    assert dict(asked.match_labels.labels) == {"region": "eu", "tier": "gpu"}


def test_the_requirements_select_what_crossplanes_list_would() -> None:
    mine = placed_replica("qwen", "ml", "east", 0, [])
    same_name_elsewhere = placed_replica("qwen", "other", "east", 0, [])
    another = placed_replica("llama", "ml", "east", 0, [])
    eu = inference_cluster("eu-1", {}, labels={"region": "eu", "tier": "gpu"})
    us = inference_cluster("us-1", {}, labels={"region": "us", "tier": "gpu"})
    half = inference_cluster("eu-2", {}, labels={"region": "eu"})
    env = _Environment([mine, same_name_elsewhere, another, eu, us, half])
    asked = selectors(deployment("qwen", namespace="ml", selector={"region": "eu", "tier": "gpu"}))
    assert env.select(read_requirement(asked[REPLICAS])) == [mine]
    assert env.select(read_requirement(asked[CLUSTERS])) == [eu]
