"""Reading and carrying forward observed composed resources."""

from __future__ import annotations

from modelplane.kube.objects import condition
from modelplane.observed import carried, observed_ready


def test_observed_ready_reads_the_objects_ready_condition() -> None:
    assert observed_ready({"status": {"conditions": [{"type": "Ready", "status": "True"}]}})
    assert not observed_ready({"status": {"conditions": [{"type": "Ready", "status": "False"}]}})
    assert not observed_ready({"status": {"conditions": [{"type": "Synced", "status": "True"}]}})
    assert not observed_ready({})
    assert not observed_ready(None)


def test_carried_drops_status_and_server_set_metadata() -> None:
    observed = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": "a",
            "namespace": "ns",
            "labels": {"x": "y"},
            "uid": "123",
            "resourceVersion": "7",
            "managedFields": [],
        },
        "data": {"k": "v"},
        "status": {"conditions": []},
    }
    assert carried(observed) == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "a", "namespace": "ns", "labels": {"x": "y"}},
        "data": {"k": "v"},
    }


def test_condition_is_the_status_condition_of_that_type() -> None:
    synced = {"type": "Synced", "status": "False", "message": "apply failed"}
    obj = {"status": {"conditions": [{"type": "Ready", "status": "True"}, synced]}}
    assert condition(obj, "Synced") == synced
    assert condition(obj, "ModelServing") is None
    assert condition({"status": {}}, "Ready") is None
    assert condition(None, "Ready") is None
