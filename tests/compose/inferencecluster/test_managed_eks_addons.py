"""EKS add-ons: the EFS CSI driver created with its own pod identity, the add-ons EKS
preinstalls taken over without a conflict, and everything the stack's uninstalls need on the
cluster kept until they are done."""

from __future__ import annotations

from typing import Any

import pytest

from modelplane.compose.inferencecluster.managed import eks
from tests.compose.inferencecluster.managed import (
    managed,
    observed_as_ready,
    provisioned,
    run,
    wave_of,
    waves,
)

Obj = dict[str, Any]
EFS_ADDON = "addon-aws-efs-csi-driver"


@pytest.fixture(scope="module")
def composed() -> dict[str, Obj]:
    return provisioned(managed("EKS")).resources


def test_the_efs_csi_addon_names_its_pod_identity_with_the_roles_reported_arn() -> None:
    response = provisioned(managed("EKS"))
    observed = observed_as_ready(response)
    arn = observed["role-efs-csi"]["status"]["atProvider"]["arn"]
    fp = response.resources[EFS_ADDON]["spec"]["forProvider"]
    assert fp["podIdentityAssociation"] == [
        {"roleArn": arn, "serviceAccount": eks.EFS_CSI_SERVICE_ACCOUNT}
    ]


def test_no_separate_pod_identity_is_composed_for_the_efs_csi_driver(
    composed: dict[str, Obj],
) -> None:
    accounts = [
        o["spec"]["forProvider"]["serviceAccount"]
        for o in composed.values()
        if o["kind"] == "PodIdentityAssociation"
    ]
    assert accounts == [eks.AUTOSCALER_SERVICE_ACCOUNT]


def test_the_efs_csi_addon_waits_for_its_roles_arn() -> None:
    assert EFS_ADDON not in run(managed("EKS")).resources


def test_a_created_efs_csi_addon_is_kept_while_its_role_reports_no_arn() -> None:
    ic = managed("EKS")
    observed = observed_as_ready(provisioned(ic))
    role = observed["role-efs-csi"]
    observed["role-efs-csi"] = {**role, "status": {**role["status"], "atProvider": {}}}
    response = run(ic, observed)
    assert response.resources[EFS_ADDON]["spec"] == observed[EFS_ADDON]["spec"]


@pytest.mark.parametrize("addon", eks.PREINSTALLED_ADDONS)
def test_a_preinstalled_addon_overwrites_the_self_managed_copy_on_create(
    composed: dict[str, Obj], addon: str
) -> None:
    fp = composed[f"addon-{addon}"]["spec"]["forProvider"]
    assert fp["resolveConflictsOnCreate"] == "OVERWRITE"


def _stack(composed: dict[str, Obj]) -> list[str]:
    return [k for k, o in composed.items() if o["kind"] in ("Release", "Object")]


@pytest.mark.parametrize(
    "needed",
    [
        *eks.STACK_NEEDS_ON_DELETE,
        "nat-gateway",
        "internet-gateway",
        "route-table-association-private-us-east-2b",
    ],
)
def test_what_the_stacks_uninstalls_need_outlives_every_release_and_object(
    composed: dict[str, Obj], needed: str
) -> None:
    wave = wave_of(waves(composed))
    assert wave[needed] > max(wave[k] for k in _stack(composed))


@pytest.mark.parametrize("identity", ["role-efs-csi", "role-efs-csi-efs"])
def test_the_efs_csi_role_and_policy_outlive_the_addon_that_names_it(
    composed: dict[str, Obj], identity: str
) -> None:
    wave = wave_of(waves(composed))
    assert wave[identity] > wave[EFS_ADDON]
