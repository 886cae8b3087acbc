"""Where the endpoint picker's pods run: on a node without a GPU when there is one, on a GPU
node when the cluster has nothing else (a picker left Pending fails every request to its
pool)."""

from __future__ import annotations

from modelplane.compose.inferencecluster.managed.common import GPU_LABEL
from modelplane.compose.shared.endpointpicker import GPU_NODE_LABELS
from modelplane.compose.shared.gpu_taint import GPU_TAINT_KEY
from tests.compose.modelreplica.test_picker import pod, with_router

Obj = dict


def _default_spec() -> Obj:
    return dict(pod()["spec"])


def test_the_default_picker_tolerates_the_gpu_taint() -> None:
    tolerations = _default_spec()["tolerations"]
    assert {"key": GPU_TAINT_KEY, "operator": "Exists", "effect": "NoSchedule"} in tolerations


def test_a_user_picker_without_placement_tolerates_the_gpu_taint() -> None:
    keys = [t["key"] for t in pod(with_router())["spec"]["tolerations"]]
    assert keys == [GPU_TAINT_KEY]


def test_the_picker_only_prefers_nodes_without_a_gpu() -> None:
    node_affinity = _default_spec()["affinity"]["nodeAffinity"]
    assert "requiredDuringSchedulingIgnoredDuringExecution" not in node_affinity
    [term] = node_affinity["preferredDuringSchedulingIgnoredDuringExecution"]
    avoided = {e["key"] for e in term["preference"]["matchExpressions"]}
    assert {e["operator"] for e in term["preference"]["matchExpressions"]} == {"DoesNotExist"}
    assert avoided == set(GPU_NODE_LABELS)


def test_the_label_of_managed_gpu_pools_is_one_the_picker_avoids() -> None:
    assert GPU_LABEL in GPU_NODE_LABELS
