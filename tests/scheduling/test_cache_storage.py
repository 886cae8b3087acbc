"""A deployment that mounts a model cache lands only where the cache can be staged."""

from __future__ import annotations

from typing import Any

from modelplane.scheduling import placement as pl
from modelplane.scheduling.scheduler import schedule
from tests.fleet.builders import declared_cluster, gpu_class, llm_deployment, stamp, where

H100 = gpu_class("h100")

Obj = dict[str, Any]

NO_CLASS = (
    "names no ReadWriteMany storage class for the model cache "
    "(spec.cluster.existing.cache.storageClassName)"
)


def run(md: Obj, clusters: list[Obj], replicas: list[Obj] | None = None) -> pl.Schedule:
    return schedule(md, clusters, [H100], replicas or [])


def cached(replicas: int = 1) -> Obj:
    md = llm_deployment(replicas=replicas)
    md["spec"]["template"]["spec"]["modelCacheRef"] = {"name": "weights"}
    return md


def with_class(ic: Obj, name: str = "filestore-rwx", *, published: bool = False) -> Obj:
    if published:
        ic["status"] = {"cache": {"storageClassName": name}}
    else:
        ic["spec"]["cluster"]["existing"] = {
            "secretRef": {"name": "kc"},
            "cache": {"storageClassName": name},
        }
    return ic


def test_a_cache_mounting_replica_skips_a_cluster_without_an_rwx_class_and_says_why() -> None:
    fleet = [
        declared_cluster("a", [("p", "h100", 2)]),
        with_class(declared_cluster("b", [("p", "h100", 2)])),
    ]
    result = run(cached(), fleet)
    assert where(result) == [(0, "b")]
    a = next(t for t in result.trace if t.cluster == "a")
    assert (a.eligible, a.reason) == (False, NO_CLASS)


def test_a_class_the_cluster_publishes_counts_as_named() -> None:
    fleet = [with_class(declared_cluster("a", [("p", "h100", 2)]), published=True)]
    assert where(run(cached(), fleet)) == [(0, "a")]


def test_with_no_cluster_naming_a_class_the_shortfall_says_so() -> None:
    result = run(cached(), [declared_cluster("a", [("p", "h100", 2)])])
    assert where(result) == []
    assert result.shortfall == (f"a: {NO_CLASS}",)


def test_a_deployment_without_a_cache_needs_no_storage_class() -> None:
    assert where(run(llm_deployment(), [declared_cluster("a", [("p", "h100", 2)])])) == [(0, "a")]


def test_a_cached_replica_already_on_a_cluster_that_drops_its_class_stays() -> None:
    md = cached()
    placed = [
        stamp(md, p)
        for p in run(md, [with_class(declared_cluster("a", [("p", "h100", 2)]))]).placements
    ]
    result = run(md, [declared_cluster("a", [("p", "h100", 2)])], placed)
    assert where(result) == [(0, "a")]
    assert result.removed == ()
