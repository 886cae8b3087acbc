"""Label values that always fit, and the serving selector that finds exactly the serving pods."""

from __future__ import annotations

import pytest

from modelplane.compose.modelreplica.labelsets import (
    engine_type,
    label_value,
    owned,
    serving_selector,
)

from .support import (
    cluster,
    engine,
    engine_container,
    leader,
    pod_labels,
    replica,
    run,
    standalone,
    worker,
    workload,
)


@pytest.mark.parametrize("value", ["r", "qwen3-8b", "Model_1.v2", "x" * 63])
def test_valid_label_values_are_kept(value):
    assert label_value(value) == value


@pytest.mark.parametrize("value", ["a" * 64, "has space", "-leading", "trailing.", "a/b"])
def test_other_names_become_hashed_dns_labels(value):
    out = label_value(value)
    assert out != value and len(out) <= 63


def test_distinct_names_keep_distinct_label_values():
    assert label_value("a b") != label_value("a-b")
    assert label_value("a" * 64) != label_value("a" * 65)


def test_owned_labels_carry_label_safe_values():
    assert owned("a" * 253, "my engine")["modelplane.ai/replica"] == label_value("a" * 253)


@pytest.mark.parametrize("name", ["r", "a" * 253, "qwen3.8b.eks-l4"])
@pytest.mark.parametrize("stack", ["Standard", "Dynamo"])
def test_the_serving_selector_picks_serving_pods_and_never_workers(name, stack):
    result = run(replica(engine("main", leader(), worker()), name=name), on=cluster(stack=stack))
    selector = serving_selector(name).items()
    found = pod_labels(workload(result))
    assert selector <= found["leader"].items()
    assert not selector <= found["worker"].items()


@pytest.mark.parametrize(
    ("image", "kind"),
    [
        ("vllm/vllm-openai:v0.23.0", "vllm"),
        ("lmsysorg/sglang:v0.5.4-cu129", "sglang"),
        ("registry.local:5000/mirror/sglang@sha256:abc", "sglang"),
        ("ghcr.io/org/custom-vllm", "vllm"),
        ("nvcr.io/nvidia/tritonserver:25.01", None),
        ("vllm.example.com/team/engine:1", None),
        ("vllm/engine:1", "vllm"),
    ],
)
def test_the_engine_type_is_read_from_the_images_repository_path(image, kind):
    assert engine_type(image) == kind


@pytest.mark.parametrize("stack", ["Standard", "Dynamo"])
def test_every_pod_of_an_sglang_engine_says_so_to_the_picker(stack):
    sglang = [engine_container(image="lmsysorg/sglang:v0.5.4")]
    composite = replica(engine("main", leader(containers=sglang), worker(containers=sglang)))
    found = pod_labels(workload(run(composite, on=cluster(stack=stack))))
    assert {role: labels["llm-d.ai/engine-type"] for role, labels in found.items()} == {
        "leader": "sglang",
        "worker": "sglang",
    }


def test_an_engine_type_the_member_names_is_kept():
    member = standalone(
        containers=[engine_container(image="example.com/my/server:1")],
        metadata={"labels": {"llm-d.ai/engine-type": "trtllm-serve"}},
    )
    found = pod_labels(workload(run(replica(engine("main", member)))))
    assert found["standalone"]["llm-d.ai/engine-type"] == "trtllm-serve"


def test_an_unknown_engine_image_gets_no_engine_type():
    member = standalone(containers=[engine_container(image="example.com/my/server:1")])
    found = pod_labels(workload(run(replica(engine("main", member)))))
    assert "llm-d.ai/engine-type" not in found["standalone"]
