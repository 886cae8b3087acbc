"""EKS add-ons as provider-upjet-aws v2.6.0 (857b535dd0eb) and EKS's CreateAddon treat them.

- apis/namespaced/eks/v1beta1/zz_addon_types.go: ``podIdentityAssociation`` is a list of
  ``{roleArn, serviceAccount}``, both plain strings; config/namespaced/eks/config.go resolves
  references only for ``cluster_name`` and ``service_account_role_arn``, so the role's ARN must
  be written as AWS reported it (apis/namespaced/iam/v1beta1/zz_role_types.go: RoleObservation
  ``arn``). With it EKS creates the association as part of the add-on, before the add-on's
  pods run; the EKS Pod Identity agent injects credentials only into pods started after an
  association exists for their service account.
- The same file: ``resolveConflictsOnCreate`` "How to resolve field value conflicts when
  migrating a self-managed add-on to an Amazon EKS add-on. Valid values are NONE and
  OVERWRITE". EKS installs vpc-cni, kube-proxy and coredns self-managed with every cluster, so
  their managed add-ons are such a migration.
- The same file: ``preserve`` "Indicates if you want to preserve the created resources when
  deleting the EKS add-on"; unset, deleting the Addon deletes what it installed (the aws-node
  and kube-proxy DaemonSets, CoreDNS, the Pod Identity agent, the EFS CSI controller). So an
  add-on deleted with the cluster's other resources takes pod networking, DNS and credentials
  from Helm's uninstalls still running: the stack holds every add-on (Usages, Crossplane v2.3.4).
- The CRD is tests/upstream/crds/eks.aws.m.upbound.io_addons.yaml.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from modelplane.compose.inferencecluster.managed import eks
from tests.compose.inferencecluster.managed import managed, provisioned, wave_of, waves

ROOT = Path(__file__).resolve().parents[2]
Obj = dict[str, Any]


@pytest.fixture(scope="module")
def for_provider_schema() -> Obj:
    crd = yaml.safe_load(
        (ROOT / "tests/upstream/crds/eks.aws.m.upbound.io_addons.yaml").read_text()
    )
    [version] = [v for v in crd["spec"]["versions"] if v["name"] == "v1beta1"]
    spec = version["schema"]["openAPIV3Schema"]["properties"]["spec"]
    return dict(spec["properties"]["forProvider"]["properties"])


def test_the_addons_pod_identity_takes_a_role_arn_and_no_reference(
    for_provider_schema: Obj,
) -> None:
    item = for_provider_schema["podIdentityAssociation"]["items"]["properties"]
    assert set(item) == {"roleArn", "serviceAccount"}
    assert item["roleArn"]["type"] == "string"


def test_conflict_resolution_on_create_is_a_field_of_the_addon(for_provider_schema: Obj) -> None:
    assert for_provider_schema["resolveConflictsOnCreate"]["type"] == "string"


def test_every_composed_addon_field_is_one_the_provider_serves(for_provider_schema: Obj) -> None:
    composed = provisioned(managed("EKS")).resources
    addons = [o for o in composed.values() if o["kind"] == "Addon"]
    assert len(addons) == len(eks.ADDONS) + 1
    for addon in addons:
        assert set(addon["spec"]["forProvider"]) <= set(for_provider_schema)


def test_an_addon_is_deleted_with_what_it_installed(for_provider_schema: Obj) -> None:
    assert for_provider_schema["preserve"]["type"] == "boolean"
    composed = provisioned(managed("EKS")).resources
    addons = [o for o in composed.values() if o["kind"] == "Addon"]
    assert all("preserve" not in o["spec"]["forProvider"] for o in addons)


def test_every_addon_outlives_the_stacks_releases_and_objects() -> None:
    composed = provisioned(managed("EKS")).resources
    wave = wave_of(waves(composed))
    last_of_stack = max(wave[k] for k, o in composed.items() if o["kind"] in ("Release", "Object"))
    addons = [k for k, o in composed.items() if o["kind"] == "Addon"]
    assert min(wave[k] for k in addons) > last_of_stack
