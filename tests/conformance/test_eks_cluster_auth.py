"""How long the EKS kubeconfig's token lives, against provider-upjet-aws v2.6.0 (857b535dd0eb),
behind the known limit docs/design/managed-clusters.md states (EKS tokens and long Helm waits).

- internal/controller/namespaced/eks/clusterauth/controller.go: ``Create`` mints a token valid
  for ``refreshPeriod`` plus ``additionalDurationForExpiration`` (5 minutes), at most 15;
  ``Observe`` mints a new one once ``lastRefreshTime + refreshPeriod`` has passed, polled every
  minute (``managed.WithPollInterval(time.Minute*1)``).
- apis/namespaced/eks/v1beta1/clusterauth_types.go: ``refreshPeriod`` defaults to (and is at
  most) 10m0s; its CRD is tests/upstream/crds/eks.aws.m.upbound.io_clusterauths.yaml.

So the least a token has left when a reconcile reads it is lifetime - refresh - poll, about 4
minutes whatever the refresh period, shorter than the Releases' ``waitTimeout``.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from modelplane.compose.inferencecluster.releases import WAIT_TIMEOUT
from tests.compose.inferencecluster.managed import managed, of_kind, provisioned

ROOT = Path(__file__).resolve().parents[2]
EXTRA_MINUTES = 5
MAX_LIFETIME_MINUTES = 15
POLL_MINUTES = 1


def _default_refresh_minutes() -> int:
    crd = yaml.safe_load(
        (ROOT / "tests/upstream/crds/eks.aws.m.upbound.io_clusterauths.yaml").read_text()
    )
    [version] = crd["spec"]["versions"]
    spec = version["schema"]["openAPIV3Schema"]["properties"]["spec"]
    default = spec["properties"]["forProvider"]["properties"]["refreshPeriod"]["default"]
    assert default == "10m0s"
    return 10


def _least_left(refresh: int) -> int:
    lifetime = min(refresh + EXTRA_MINUTES, MAX_LIFETIME_MINUTES)
    return lifetime - refresh - POLL_MINUTES


def test_the_cluster_auth_refreshes_at_the_providers_default() -> None:
    auth = provisioned(managed("EKS")).resources["cluster-auth"]
    assert "refreshPeriod" not in auth["spec"]["forProvider"]
    assert _least_left(_default_refresh_minutes()) == 4


def test_no_refresh_period_leaves_a_token_a_whole_helm_wait() -> None:
    wait = int(WAIT_TIMEOUT.removesuffix("m"))
    assert all(_least_left(refresh) < wait for refresh in range(1, 11))


def test_an_eks_releases_helm_wait_ends_before_its_token_can() -> None:
    # provider-helm v1.4.0 takes forProvider.waitTimeout as the wait (pkg/controller/namespaced/
    # release/release.go, waitTimeout) and hands it to Helm's install, upgrade and rollback
    # (pkg/clients/helm/client.go, args.Timeout), on a client built once per reconcile.
    releases = of_kind(provisioned(managed("EKS")), "Release")
    least = _least_left(_default_refresh_minutes())
    for release in releases.values():
        wait = release["spec"]["forProvider"]["waitTimeout"]
        assert int(wait.removesuffix("m")) < least, release["metadata"]["name"]
