"""Two device kinds behind one DeviceClass: a replica read back is charged the devices it was
placed on, never the first kind each request would match on its own."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from modelplane.compose.modeldeployment.stamp import replica_name
from modelplane.compose.modeldeployment.stamp import stamp as stamp_replica
from modelplane.scheduling import placement as pl
from modelplane.scheduling.capacity import observed_vector
from modelplane.scheduling.devices import device_kinds
from modelplane.scheduling.fleet import parse_clusters
from modelplane.scheduling.scheduler import schedule
from tests.fleet import builders
from tests.fleet.builders import (
    GPU_SELECTOR,
    declared_cluster,
    device_member,
    engine_of,
    llm_deployment,
    memory_at_least,
)
from tests.properties import examples

Obj = dict[str, Any]


def gpu(name: str, product: str, memory: str) -> Obj:
    device = builders.gpu_device(4, memory, {"productName": {"string": product}})
    return {**device, "name": name}


# Four H100s and four L4s on every node, both claimed through gpu.nvidia.com.
MIX = builders.inference_class_of("mix", [gpu("h100", "H100", "80Gi"), gpu("l4", "L4", "24Gi")])
ANY_AND_BIG = engine_of(
    "main",
    [device_member(devices=[("gpu", 4, [GPU_SELECTOR]), ("big", 4, [memory_at_least("79Gi")])])],
)
FOUR_ANY = engine_of("main", [device_member(devices=[("gpu", 4, [GPU_SELECTOR])])])


def run(md: Obj, clusters: list[Obj], replicas: list[Obj]) -> pl.Schedule:
    return schedule(md, clusters, [MIX], replicas)


def placed(md: Obj, clusters: list[Obj], replicas: list[Obj] | None = None) -> list[Obj]:
    """The ModelReplicas one reconcile of ``md`` stamps, as the deployment composer stamps them."""
    plan = run(md, clusters, replicas or [])
    return [stamp_replica(md, p, replica_name(md, p)) for p in plan.placements]


def unrecorded(replicas: list[Obj]) -> list[Obj]:
    """Replicas as stamped before placements were recorded: the requests alone."""
    for r in replicas:
        r["metadata"].pop("annotations", None)
    return replicas


def test_without_a_record_requests_read_back_are_assigned_to_kinds_jointly() -> None:
    fleet = [declared_cluster("a", [("mix", "mix", 1)])]
    [pool] = parse_clusters(fleet, {"mix": device_kinds(MIX)})[0].pools
    [replica] = placed(llm_deployment("first", engines=[ANY_AND_BIG]), fleet)
    requests = replica["spec"]["engines"][0]["members"][0]["deviceRequests"]
    # h100 then l4: "gpu" (any) on the L4s, "big" (>= 79Gi) on the H100s, as the search put them.
    assert observed_vector(pool, requests) == (4, 4)


def test_a_second_deployment_that_fits_beside_a_read_back_replica_is_placed() -> None:
    fleet = [declared_cluster("a", [("mix", "mix", 2)])]
    first = unrecorded(placed(llm_deployment("first", engines=[ANY_AND_BIG]), fleet))
    second = run(llm_deployment("second", engines=[ANY_AND_BIG]), fleet, first)
    assert [p.cluster for p in second.placements] == ["a"]
    assert second.shortfall == ()


def test_a_read_back_replica_is_not_removed_as_overcommitted() -> None:
    fleet = [declared_cluster("a", [("mix", "mix", 1)])]
    md = llm_deployment("first", engines=[ANY_AND_BIG])
    replicas = unrecorded(placed(md, fleet))
    again = run(md, fleet, replicas)
    assert again.removed == ()
    assert [p.existing for p in again.placements] == [replicas[0]["metadata"]["name"]]


def test_the_device_recorded_at_placement_is_the_one_charged() -> None:
    # "Any four GPUs" fits either kind: the first replica takes the less capable L4s, the
    # second the H100s.
    # Read back without the record, both would look like the same kind on one node.
    fleet = [declared_cluster("a", [("mix", "mix", 1)])]
    first = placed(llm_deployment("first", engines=[FOUR_ANY]), fleet)
    second = placed(llm_deployment("second", engines=[FOUR_ANY]), fleet, first)
    assert [r["metadata"]["annotations"][pl.DEVICE_ASSIGNMENT] for r in first + second] == [
        '{"main":[{"gpu":"l4"}]}',
        '{"main":[{"gpu":"h100"}]}',
    ]
    for md in (
        llm_deployment("first", engines=[FOUR_ANY]),
        llm_deployment("second", engines=[FOUR_ANY]),
    ):
        again = run(md, fleet, first + second)
        assert again.removed == ()
        assert len(again.placements) == 1


def test_a_replica_on_a_class_with_one_kind_per_device_class_records_nothing() -> None:
    h100 = builders.inference_class("h100")
    [p] = schedule(
        llm_deployment(), [declared_cluster("a", [("p", "h100", 1)])], [h100], []
    ).placements
    annotations = stamp_replica(llm_deployment(), p, "n")["metadata"].get("annotations") or {}
    assert pl.DEVICE_ASSIGNMENT not in annotations


def test_an_overcommitted_pool_is_called_overcommitted_not_counted_in_free_nodes() -> None:
    # Another deployment's replica stamped for eight H100s per pod, on a class that now has
    # four: one node reads as overcommitted, the other as free. "Pool mix has 1 free node,
    # engine main needs 1" would contradict itself.
    fleet = [declared_cluster("a", [("mix", "mix", 2)])]
    eight = {"name": "gpu", "deviceClassName": "gpu.nvidia.com", "count": 8}
    stale_member = {"role": "Standalone", "nodePoolName": "mix", "deviceRequests": [eight]}
    stale = builders.placed_replica(
        "old", "team-b", "a", 0, [{"name": "main", "copies": 1, "members": [stale_member]}]
    )
    result = run(llm_deployment("second", engines=[ANY_AND_BIG]), fleet, [stale])
    assert result.placements == ()
    assert result.shortfall == (
        "a: pool mix is overcommitted: the replicas already charged to it do not fit its 2 nodes",
    )


SHARED_REQUESTS = {
    "any": [GPU_SELECTOR],
    "big": [memory_at_least("79Gi")],
    "small": ['device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("30Gi")) <= 0'],
}


@st.composite
def shared_engine(draw: st.DrawFn) -> Obj:
    wanted = draw(st.lists(st.sampled_from(sorted(SHARED_REQUESTS)), min_size=1, max_size=2))
    devices = [
        (f"r{i}", draw(st.sampled_from([1, 2, 4])), SHARED_REQUESTS[w])
        for i, w in enumerate(wanted)
    ]
    return engine_of("main", [device_member(devices=devices)], copies=draw(st.integers(1, 2)))


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    nodes=st.integers(1, 3),
    first=shared_engine(),
    second=shared_engine(),
    replicas=st.tuples(st.integers(1, 3), st.integers(1, 3)),
)
def test_a_settled_fleet_on_a_shared_device_class_reconciles_to_itself(
    nodes: int, first: Obj, second: Obj, replicas: tuple[int, int]
) -> None:
    # Two deployments placed one after the other on nodes of four H100s and four L4s sharing
    # gpu.nvidia.com; each reconciled again keeps every replica where it is.
    fleet = [
        declared_cluster("a", [("mix", "mix", nodes)]),
        declared_cluster("b", [("mix", "mix", nodes)]),
    ]
    a = llm_deployment("first", replicas=replicas[0], engines=[first])
    b = llm_deployment("second", namespace="team-b", replicas=replicas[1], engines=[second])
    placed_a = placed(a, fleet)
    placed_b = placed(b, fleet, placed_a)
    for md, mine in ((a, placed_a), (b, placed_b)):
        again = run(md, fleet, placed_a + placed_b)
        assert again.removed == ()
        assert sorted(p.existing or "" for p in again.placements) == sorted(
            r["metadata"]["name"] for r in mine
        )
