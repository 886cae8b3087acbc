"""A ModelCache over a list that lags, through the FunctionRunner: a cluster missing from a
list that holds others keeps its claim (the weights) and its hydration Job until it is read by
name and found gone; the status counts it."""

from __future__ import annotations

import copy
from typing import Any

from modelplane.compose.modelcache.composer import CLUSTERS
from modelplane.simulate import simulate_observed
from tests.compose.through import Response, run

from .test_modelcache import cache, cluster

Obj = dict[str, Any]


def hydrated() -> dict[str, Obj]:
    """Claims and Jobs on clusters a and b, observed bound and complete."""
    rsp = run(cache(), {}, {CLUSTERS: [cluster("a"), cluster("b")]})
    assert rsp.fatal is None, rsp.fatal
    return simulate_observed(copy.deepcopy(rsp.resources), 1)


def on(rsp: Response, name: str) -> list[str]:
    assert rsp.fatal is None, rsp.fatal
    return sorted(k for k in rsp.resources if k.endswith(f"-{name}"))


def test_a_cluster_missing_from_the_list_keeps_its_claim_and_job() -> None:
    observed = hydrated()
    rsp = run(cache(), observed, {CLUSTERS: [cluster("a")]})
    assert on(rsp, "b") == sorted(k for k in observed if k.endswith("-b"))
    status, _, message = rsp.condition("Hydrated")
    assert status == "False"
    assert message.startswith("1 of 2 clusters ready")


def test_a_cluster_read_by_name_after_a_lagging_list_is_composed_as_listed() -> None:
    observed = hydrated()
    rsp = run(cache(), observed, {CLUSTERS: [cluster("a")], "cluster/b": [cluster("b")]})
    assert on(rsp, "b") == sorted(k for k in observed if k.endswith("-b"))
    assert rsp.condition("Hydrated")[0] == "True"


def test_a_cluster_positively_gone_loses_its_objects() -> None:
    observed = hydrated()
    rsp = run(cache(), observed, {CLUSTERS: [cluster("a")], "cluster/b": []})
    assert on(rsp, "b") == []
    assert rsp.condition("Hydrated") == ("True", "AllClustersReady", "1 of 1 clusters ready")
