"""Label values that always fit, and the serving selector that finds exactly the serving pods."""

from __future__ import annotations

import pytest

from modelplane.compose.modelreplica.labelsets import label_value, owned, serving_selector

from .support import cluster, engine, leader, pod_labels, replica, run, worker, workload


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
