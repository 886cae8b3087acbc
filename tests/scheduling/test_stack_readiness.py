"""A cluster takes new replicas only once its serving stack is ready; those there stay."""

from __future__ import annotations

from typing import Any

from modelplane.scheduling import placement as pl
from modelplane.scheduling.scheduler import schedule
from tests.fleet.builders import declared_cluster, gpu_class, llm_deployment, stamp, where

H100 = gpu_class("h100")

Obj = dict[str, Any]


def run(md: Obj, clusters: list[Obj], replicas: list[Obj] | None = None) -> pl.Schedule:
    return schedule(md, clusters, [H100], replicas or [])


def installing(name: str, message: str = "installing 2 of 10: nvidia-dra-driver, grove") -> Obj:
    ic = declared_cluster(name, [("p", "h100", 2)])
    ic["status"] = {}
    ic["status"]["conditions"] = [
        {"type": "StackReady", "status": "False", "reason": "Installing", "message": message}
    ]
    return ic


def test_a_cluster_whose_stack_is_installing_takes_no_new_replica_and_says_why() -> None:
    result = run(llm_deployment(), [installing("a"), declared_cluster("b", [("p", "h100", 2)])])
    assert where(result) == [(0, "b")]
    a = next(t for t in result.trace if t.cluster == "a")
    assert not a.eligible
    assert a.reason == "serving stack not ready: installing 2 of 10: nvidia-dra-driver, grove"


def test_a_cluster_that_reports_no_stack_readiness_is_judged_on_its_spec() -> None:
    # A hand-written fleet (explain, render's first pass) states no status; a live cluster
    # reports StackReady from its first reconcile, before which nothing placed on it composes.
    declared = declared_cluster("a", [("p", "h100", 2)])
    assert "status" not in declared
    assert where(run(llm_deployment(), [declared])) == [(0, "a")]


def test_a_replica_already_on_a_cluster_whose_stack_is_not_ready_stays() -> None:
    md = llm_deployment()
    ready = declared_cluster("a", [("p", "h100", 2)])
    placed = [stamp(md, p) for p in run(md, [ready]).placements]
    result = run(md, [installing("a")], placed)
    assert where(result) == [(0, "a")]
    assert result.removed == ()


def test_a_cluster_becomes_eligible_once_its_stack_is_ready() -> None:
    ready = installing("a")
    ready["status"]["conditions"][0].update(status="True", reason="Installed", message="")
    assert where(run(llm_deployment(), [ready])) == [(0, "a")]


def test_a_fleet_whose_stacks_are_all_installing_has_no_eligible_cluster() -> None:
    result = run(llm_deployment(replicas=2), [installing("a"), installing("b")])
    assert not result.eligible
    assert result.shortfall == (
        "a: serving stack not ready: installing 2 of 10: nvidia-dra-driver, grove",
        "b: serving stack not ready: installing 2 of 10: nvidia-dra-driver, grove",
    )
    assert run(
        llm_deployment(replicas=9), [installing("a"), declared_cluster("b", [("p", "h100", 2)])]
    ).eligible


def test_the_shortfall_names_every_cluster_that_cannot_take_one_more_replica_and_why() -> None:
    fleet = [
        installing("a"),
        declared_cluster("b", [("p", "h100", 1)]),
        declared_cluster("c", [("p", "a100", 4)]),
    ]
    result = run(llm_deployment(replicas=4), fleet)
    assert where(result) == [(0, "b")]
    assert result.eligible
    assert result.shortfall == (
        "a: serving stack not ready: installing 2 of 10: nvidia-dra-driver, grove",
        "b: pool p has 0 free nodes, engine main needs 1",
        "c: pool p: engine main member 0: class a100 not found or has no devices",
    )
    rejected = {t.cluster: t.reason for t in result.trace if not t.indices}
    assert rejected == {
        "a": "serving stack not ready: installing 2 of 10: nvidia-dra-driver, grove",
        "c": "pool p: engine main member 0: class a100 not found or has no devices",
    }
