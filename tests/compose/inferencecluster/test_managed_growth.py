"""A managed GPU pool grows to the nodes its admitted replicas need.

Replicas claim GPUs through DRA, and the node the cluster autoscaler (v1.35.0) models for an
empty pool publishes no devices, so it never grows one for them. The InferenceCluster knows
what it admitted per pool (``status.allocation``), so it raises the pool's size to the nodes
those replicas need, within its bounds, and never below what the pool reports: the
autoscaler's own size stands, and it keeps removing idle nodes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from modelplane import cli
from modelplane.compose.inferencecluster.composer import REPLICAS
from tests.compose.inferencecluster.managed import managed, observed_as_ready, provisioned, run
from tests.compose.inferencecluster.support import upstream
from tests.fleet.builders import engine, placed_member, placed_replica

Obj = dict[str, Any]
PUBLIC = Path(__file__).parent / "public"
POOL = {"EKS": "nodegroup-gpua", "GKE": "nodepool-gpua", "AKS": "nodepool-gpua"}
GPUS_PER_NODE = {"EKS": 4, "GKE": 4, "AKS": 1}
ZONES = 2
"""The test pool's zones (``managed``): GKE sizes a pool per zone, one instance group each."""
SOURCES = sorted(POOL)


def _replicas(source: str, nodes: int) -> list[Obj]:
    """Replicas on the test pool that fill ``nodes`` whole nodes, one node each."""
    gpus = GPUS_PER_NODE[source]
    return [
        placed_replica("qwen", "ml", "west", i, [engine("main", placed_member("gpua", gpus))])
        for i in range(nodes)
    ]


def _empty(source: str, **counts: int) -> Obj:
    ic = managed(source)
    ic["spec"]["nodePools"][0].update({"nodeCount": 0, "minNodeCount": 0, **counts})
    return ic


def _reporting(ic: Obj, source: str, nodes: int | None) -> dict[str, Obj]:
    """The cluster provisioned, its GPU pool reporting ``nodes`` (None: no size reported)."""
    observed = observed_as_ready(provisioned(ic))
    at = observed[POOL[source]]["status"]["atProvider"]
    if nodes is None:
        return observed
    if source == "EKS":
        pool = ic["spec"]["nodePools"][0]
        at["scalingConfig"] = {
            "minSize": pool["minNodeCount"],
            "maxSize": pool["maxNodeCount"],
            "desiredSize": nodes,
        }
    elif source == "GKE":
        at["nodeCount"] = nodes
        at["instanceGroupUrls"] = [f"https://compute/zones/z{i}/igm" for i in range(ZONES)]
    else:
        at["nodeCount"] = nodes
    return observed


def _reconcile(ic: Obj, observed: dict[str, Obj] | None, replicas: list[Obj] | None) -> Obj:
    """The GPU pool the cluster composes, with the allocation its last reconcile published."""
    first = run(ic, observed, **{REPLICAS: replicas})
    settled = {**ic, "status": {"allocation": first.status.get("allocation")}}
    source = ic["spec"]["cluster"]["source"]
    return run(settled, observed, **{REPLICAS: replicas}).resources[POOL[source]]


def _set_size(source: str, pool: Obj) -> int | None:
    """The size the pool is set to through forProvider (None: left to the autoscaler)."""
    fp = pool["spec"]["forProvider"]
    if source == "EKS":
        return (fp.get("scalingConfig") or {}).get("desiredSize")
    return fp.get("nodeCount")


def _created_at(source: str, pool: Obj) -> int:
    init = pool["spec"]["initProvider"]
    return init["scalingConfig"]["desiredSize"] if source == "EKS" else init["nodeCount"]


@pytest.mark.parametrize("source", SOURCES)
def test_a_replica_admitted_on_an_empty_pool_raises_its_size(source: str) -> None:
    ic = _empty(source)
    pool = _reconcile(ic, _reporting(ic, source, 0), _replicas(source, 3))
    # GKE's size is per zone: 3 nodes over 2 zones is 2 in each.
    assert _set_size(source, pool) == (2 if source == "GKE" else 3)


def test_replicas_that_share_a_node_raise_the_pool_by_that_node_only() -> None:
    # Two 2-GPU replicas pack on one 4-GPU node, as the scheduler charged them.
    ic = _empty("EKS")
    halves = [
        placed_replica("qwen", "ml", "west", i, [engine("main", placed_member("gpua", 2))])
        for i in range(2)
    ]
    pool = _reconcile(ic, _reporting(ic, "EKS", 0), halves)
    assert _set_size("EKS", pool) == 1


@pytest.mark.parametrize("source", SOURCES)
def test_the_raised_pool_is_admitted_by_its_crd(source: str) -> None:
    ic = _empty(source)
    pool = _reconcile(ic, _reporting(ic, source, 0), _replicas(source, 3))
    assert _set_size(source, pool)
    assert [str(e) for e in upstream().admit(pool).errors] == []


@pytest.mark.parametrize("source", SOURCES)
def test_the_autoscalers_larger_size_is_kept(source: str) -> None:
    ic = _empty(source)
    pool = _reconcile(ic, _reporting(ic, source, 5), _replicas(source, 3))
    assert _set_size(source, pool) is None


@pytest.mark.parametrize("source", SOURCES)
def test_a_pool_reporting_the_nodes_its_replicas_need_is_left_to_the_autoscaler(
    source: str,
) -> None:
    ic = _empty(source)
    needed = 2 if source == "GKE" else 3
    pool = _reconcile(ic, _reporting(ic, source, needed), _replicas(source, 3))
    assert _set_size(source, pool) is None


@pytest.mark.parametrize("source", SOURCES)
def test_a_raise_stops_at_the_pools_max_node_count(source: str) -> None:
    ic = _empty(source, maxNodeCount=2)
    # The scheduler admits only what 2 nodes hold; more replicas could not raise it further.
    pool = _reconcile(ic, _reporting(ic, source, 0), _replicas(source, 3))
    assert _set_size(source, pool) == (1 if source == "GKE" else 2)


@pytest.mark.parametrize("source", SOURCES)
def test_nothing_is_set_while_the_pool_reports_no_size(source: str) -> None:
    ic = _empty(source)
    pool = _reconcile(ic, _reporting(ic, source, None), _replicas(source, 3))
    assert _set_size(source, pool) is None


@pytest.mark.parametrize("source", SOURCES)
def test_nothing_is_set_while_the_replicas_are_not_read(source: str) -> None:
    ic = _empty(source)
    pool = _reconcile(ic, _reporting(ic, source, 0), None)
    assert _set_size(source, pool) is None


@pytest.mark.parametrize("source", SOURCES)
def test_a_lagging_allocation_never_lowers_a_raised_pool(source: str) -> None:
    ic = _empty(source)
    observed = _reporting(ic, source, 3)
    # The last allocation admitted one replica; the pool already has 3 nodes.
    pool = _reconcile(ic, observed, _replicas(source, 1))
    assert _set_size(source, pool) is None


@pytest.mark.parametrize("source", ["EKS", "AKS"])
def test_a_pool_created_after_its_replicas_were_admitted_is_created_at_their_size(
    source: str,
) -> None:
    ic = _empty(source)
    observed = _reporting(ic, source, 0)
    del observed[POOL[source]]  # not created yet (or its observation is missing)
    pool = _reconcile(ic, observed, _replicas(source, 3))
    assert (_created_at(source, pool), _set_size(source, pool)) == (3, None)


def test_a_gke_pool_is_never_recreated_to_grow() -> None:
    # initial_node_count is ForceNew (terraform-provider-google v6.47.0
    # resource_container_node_pool.go): a raise goes through node_count (SetSize) only.
    ic = _empty("GKE")
    pool = _reconcile(ic, _reporting(ic, "GKE", 0), _replicas("GKE", 3))
    assert pool["spec"]["forProvider"]["initialNodeCount"] == 0


def test_new_bounds_and_a_raise_reach_an_eks_node_group_together() -> None:
    ic = _empty("EKS")
    observed = _reporting(ic, "EKS", 0)
    ic["spec"]["nodePools"][0]["maxNodeCount"] = 8
    pool = _reconcile(ic, observed, _replicas("EKS", 3))
    assert pool["spec"]["forProvider"]["scalingConfig"] == {
        "minSize": 0,
        "maxSize": 8,
        "desiredSize": 3,
    }


def _emptied(tmp_path: Path, example: str, cluster: str) -> Path:
    """The public example's cluster with its GPU pool at zero nodes (nothing else changed)."""
    doc = yaml.safe_load((PUBLIC / example / cluster).read_text())
    for pool in doc["spec"]["nodePools"]:
        pool.update(nodeCount=0, minNodeCount=0)
    out = tmp_path / cluster
    out.write_text(yaml.safe_dump(doc))
    return out


EMPTIED_EXAMPLES = {"EKS": ("llama-3.1-8b", "eks"), "AKS": ("qwen2.5-72b", "aks")}
"""A public example per cloud with a GPU pool that may grow (its classes and cluster named
for the cloud), rendered with its deployment and, where it has one, its cache."""


@pytest.mark.parametrize("source", sorted(EMPTIED_EXAMPLES))
def test_render_of_a_public_example_on_an_empty_pool_shows_the_pool_raised(
    tmp_path: Path, source: str
) -> None:
    example, cloud = EMPTIED_EXAMPLES[source]
    cluster = f"inference-cluster-{cloud}.yaml"
    others = [f"inference-class-{cloud}.yaml", "model-deployment.yaml", "model-cache.yaml"]
    paths = [str(_emptied(tmp_path, example, cluster))]
    paths += [str(PUBLIC / example / f) for f in others if (PUBLIC / example / f).exists()]
    kind = "NodeGroup" if source == "EKS" else "KubernetesClusterNodePool"
    out = CliRunner().invoke(cli.main, ["render", *paths])
    docs = [d for d in yaml.safe_load_all(out.stdout) if d]
    replicas = [d for d in docs if d["kind"] == "ModelReplica"]
    gpu_pools = [d for d in docs if d["kind"] == kind and "system" not in d["metadata"]["name"]]
    assert replicas and gpu_pools
    assert [_created_at(source, p) for p in gpu_pools] == [1]
    assert [str(e) for p in gpu_pools for e in upstream().admit(p).errors] == []
