"""Messages that quote the cause: what a cluster carries for a clusterSelector's keys, and what
a device holds for a capacity a selector compares (issue #40, point 4)."""

from __future__ import annotations

from modelplane.scheduling.devices import device_kinds
from modelplane.scheduling.hints import capacity_hint
from modelplane.scheduling.scheduler import schedule
from modelplane.scheduling.selection import none_matches
from tests.fleet.builders import declared_cluster, gpu_class, llm_deployment, memory_at_least

H100 = device_kinds(gpu_class("h100", memory="81559Mi"))


def test_a_cluster_the_selector_rejects_says_what_it_carries_for_the_key() -> None:
    west = declared_cluster("west", [("p", "h100", 1)])
    west["metadata"]["labels"] = {"region": "us-west"}
    plan = schedule(llm_deployment(selector={"region": "us-wset"}), [west], [gpu_class("h100")], [])
    assert plan.shortfall == (
        "west: labels do not match clusterSelector region=us-wset (it carries region=us-west)",
    )


def test_no_cluster_matching_names_the_clusters_grouped_by_what_they_carry() -> None:
    clusters = {"c1": {"region": "us-west"}, "c2": {"region": "us-west"}, "c3": {}}
    assert none_matches({"region": "us-wset"}, clusters) == (
        "no InferenceCluster matches clusterSelector region=us-wset; "
        "c1, c2: region=us-west; c3: no region label"
    )


def test_a_near_miss_suggests_the_nearest_value_the_devices_satisfy() -> None:
    assert capacity_hint(memory_at_least("80Gi"), H100) == (
        'the devices\' memory is 81559Mi (79.6Gi); quantity("79Gi") would match'
    )


def test_an_upper_bound_suggests_the_nearest_value_above_the_devices() -> None:
    selector = 'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("79Gi")) < 0'
    assert capacity_hint(selector, H100).endswith('quantity("80Gi") would match')


def test_devices_far_from_the_selector_are_quoted_without_a_suggestion() -> None:
    hint = capacity_hint(memory_at_least("141Gi"), H100)
    assert hint == "the devices' memory is 81559Mi (79.6Gi)"


def test_a_selector_comparing_no_capacity_gets_no_hint() -> None:
    assert capacity_hint('device.attributes["gpu.nvidia.com"].productName == "H200"', H100) == ""
