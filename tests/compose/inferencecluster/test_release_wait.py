"""How long Helm waits on a release: within what the cluster's credentials last."""

from __future__ import annotations

from modelplane.compose.inferencecluster.releases import WAIT_TIMEOUT
from tests.compose.inferencecluster.managed import managed, of_kind, provisioned
from tests.compose.inferencecluster.support import cluster as existing
from tests.compose.inferencecluster.support import installed, releases


def _waits(resources: dict) -> set[str]:
    return {r["spec"]["forProvider"]["waitTimeout"] for r in resources.values()}


def test_releases_on_an_eks_cluster_wait_three_minutes() -> None:
    assert _waits(of_kind(provisioned(managed("EKS")), "Release")) == {"3m"}


def test_releases_on_a_gke_cluster_wait_the_shared_timeout() -> None:
    assert _waits(of_kind(provisioned(managed("GKE")), "Release")) == {WAIT_TIMEOUT}


def test_releases_on_an_existing_cluster_wait_the_shared_timeout() -> None:
    assert _waits(releases(installed(existing()))) == {WAIT_TIMEOUT}
