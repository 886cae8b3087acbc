"""Which replicas are the deployment's own: what it composed, whatever a list or a label says."""

from __future__ import annotations

import copy
from typing import Any

from modelplane import labels
from modelplane.scheduling.scheduler import schedule
from tests.fleet.builders import declared_cluster, gpu_class, llm_deployment, stamp, where

H100 = gpu_class("h100")
# One whole-node replica per cluster; a new replica goes to a (it hosts none, ties go by name).
FLEET = [declared_cluster(n, [("p", "h100", 1)]) for n in ("a", "b", "c")]


def on_b_and_c() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    md = llm_deployment(replicas=2)
    placed = schedule(md, FLEET[1:], [H100], []).placements
    assert [(p.index, p.cluster) for p in placed] == [(0, "b"), (1, "c")]
    return md, [stamp(md, p) for p in placed]


def test_a_composed_replica_missing_from_the_list_is_kept_where_it_is() -> None:
    md, [b, c] = on_b_and_c()
    assert where(schedule(md, FLEET, [H100], [b], composed=[b, c])) == [(0, "b"), (1, "c")]


def test_a_composed_replica_without_the_deployment_label_is_kept_and_not_charged_twice() -> None:
    md, [b, c] = on_b_and_c()
    unlabelled = copy.deepcopy(c)
    del unlabelled["metadata"]["labels"][labels.DEPLOYMENT]
    result = schedule(md, FLEET, [H100], [b, unlabelled], composed=[b, unlabelled])
    assert where(result) == [(0, "b"), (1, "c")]
    assert [p.existing for p in result.placements] == [
        b["metadata"]["name"],
        c["metadata"]["name"],
    ]
    assert result.removed == ()


def test_without_composed_replicas_the_label_decides() -> None:
    md, [b, c] = on_b_and_c()
    unlabelled = copy.deepcopy(c)
    del unlabelled["metadata"]["labels"][labels.DEPLOYMENT]
    # Another deployment's replica as far as labels go: charged, and index 1 placed anew.
    assert where(schedule(md, FLEET, [H100], [b, unlabelled])) == [(0, "b"), (1, "a")]


def test_a_composed_replica_of_another_namespace_is_not_ours() -> None:
    md, [b, c] = on_b_and_c()
    elsewhere = copy.deepcopy(c)
    elsewhere["metadata"]["namespace"] = "team-b"
    elsewhere["metadata"]["labels"][labels.DEPLOYMENT_NAMESPACE] = "team-b"
    result = schedule(md, FLEET, [H100], [b, elsewhere], composed=[b, elsewhere])
    # Charged as another deployment's replica on c; index 1 goes to a.
    assert where(result) == [(0, "b"), (1, "a")]
