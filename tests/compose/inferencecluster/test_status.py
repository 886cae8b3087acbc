"""Status that tells the truth: StackReady names what is still installing or failed, each
component reports its state, and the cluster is Ready only once its stack is."""

from __future__ import annotations

from typing import Any

from .support import (
    cluster,
    condition,
    created,
    installed,
    installing,
    observed_as_installed,
    run,
)

Obj = dict[str, Any]


def partly(ic: Obj, pending: dict[str, Obj | None]) -> Any:
    """A reconcile where everything is installed except ``pending``: key -> its observed status
    (None: not observed at all)."""
    observed = observed_as_installed(installing(ic))
    for key, status in pending.items():
        if status is None:
            del observed[key]
        else:
            observed[key] = {**created(installing(ic))[key], "status": status}
    return run(ic, observed)


def not_ready() -> Obj:
    return {"conditions": [{"type": "Ready", "status": "False", "reason": "Unavailable"}]}


def test_a_stack_whose_every_component_is_ready_is_stack_ready() -> None:
    cond = condition(installed(cluster()), "StackReady")
    assert (cond.status, cond.reason, cond.message) == (
        "True",
        "Installed",
        "all 11 components ready",
    )


def test_a_partial_install_names_the_components_still_installing() -> None:
    ic = cluster(stack="Dynamo")
    cond = condition(partly(ic, {"nvidia-dra-driver": not_ready(), "grove": None}), "StackReady")
    assert (cond.status, cond.reason) == ("False", "Installing")
    assert cond.message == "installing 2 of 11: nvidia-dra-driver, grove"


def test_a_failed_release_is_named_with_helms_reason() -> None:
    failed = {
        "atProvider": {"state": "failed"},
        "conditions": [
            {"type": "Ready", "status": "False", "reason": "Unavailable"},
            {
                "type": "Synced",
                "status": "False",
                "reason": "ReconcileError",
                "message": "failed to install release: context deadline exceeded",
            },
        ],
    }
    ic = cluster(stack="Dynamo")
    cond = condition(partly(ic, {"grove": failed, "kai-queue": None}), "StackReady")
    assert (cond.status, cond.reason) == ("False", "Failed")
    assert cond.message == (
        "failed 1 of 11: grove (failed to install release: context deadline exceeded); "
        "installing 1 of 11: kai-scheduler"
    )


MISSING_CA = 'cannot get referenced resource: secrets "modelplane-fleet-ca" not found'


def test_an_object_the_provider_cannot_apply_yet_is_installing_with_the_providers_message() -> None:
    error = {
        "conditions": [
            {
                "type": "Synced",
                "status": "False",
                "reason": "ReconcileError",
                "message": MISSING_CA,
            }
        ]
    }
    cond = condition(partly(cluster(), {"fleet-ca": error}), "StackReady")
    assert cond.message == f"installing 1 of 11: fleet-tls ({MISSING_CA})"


def test_an_external_component_not_found_yet_is_named_external() -> None:
    ic = cluster(servingStack={"certManager": {"mode": "External"}})
    cond = condition(partly(ic, {"cert-manager-observed": not_ready()}), "StackReady")
    assert cond.message == "installing 1 of 11: cert-manager (External)"


def test_status_lists_each_component_with_its_mode_version_and_state() -> None:
    ic = cluster(servingStack={"prometheus": {"mode": "External"}})
    components = partly(ic, {"node-feature-discovery": None}).status["servingStack"]["components"]
    assert components == [
        {"name": "cert-manager", "mode": "Managed", "version": "v1.21.1", "state": "Ready"},
        {"name": "envoy-gateway", "mode": "Managed", "version": "v1.8.1", "state": "Ready"},
        {"name": "envoy-ai-gateway", "mode": "Managed", "version": "v1.1.0", "state": "Ready"},
        {"name": "inference-extension", "mode": "Managed", "version": "v1.0.2", "state": "Ready"},
        {
            "name": "node-feature-discovery",
            "mode": "Managed",
            "version": "0.19.0",
            "state": "Installing",
        },
        {"name": "nvidia-dra-driver", "mode": "Managed", "version": "0.4.1", "state": "Ready"},
        {"name": "leaderworkerset", "mode": "Managed", "version": "v0.10.0", "state": "Ready"},
        {"name": "kai-scheduler", "mode": "Managed", "version": "v0.15.2", "state": "Ready"},
        {"name": "prometheus", "mode": "External", "state": "Ready"},
        {"name": "inference-gateway", "mode": "Managed", "state": "Ready"},
        {"name": "fleet-tls", "mode": "Managed", "state": "Ready"},
    ]


def test_each_components_resources_are_unready_while_it_installs_and_others_ready() -> None:
    result = partly(cluster(), {"nvidia-dra-driver": not_ready()})
    assert result.resources["nvidia-dra-driver"].ready == "False"
    assert result.resources["cert-manager"].ready == "True"


def test_the_gateway_address_comes_from_the_gateway_observed_on_the_cluster() -> None:
    result = installed(cluster())
    assert (
        result.status["gateway"]["address"]
        == "inference-gateway.modelplane-system.east.gateways.modelplane.test"
    )


def _bundle(version: str | None) -> Obj:
    """The observed Gateway API CRD, stating ``version`` as its bundle (None: no annotation)."""
    meta: Obj = {"name": "gateways.gateway.networking.k8s.io"}
    if version is not None:
        meta["annotations"] = {"gateway.networking.k8s.io/bundle-version": version}
    return {
        "atProvider": {
            "manifest": {
                "apiVersion": "apiextensions.k8s.io/v1",
                "kind": "CustomResourceDefinition",
                "metadata": meta,
                "status": {"conditions": [{"type": "Established", "status": "True"}]},
            }
        },
        "conditions": [{"type": "Ready", "status": "True"}, {"type": "Synced", "status": "True"}],
    }


def test_gateway_api_crds_older_than_the_tested_bundle_fail_the_stack_saying_what_to_upgrade() -> (
    None
):
    cond = condition(partly(cluster(), {"gateway-api-bundle": _bundle("v1.2.1")}), "StackReady")
    assert (cond.status, cond.reason) == ("False", "Failed")
    assert cond.message == (
        "failed 1 of 11: envoy-gateway (the cluster's Gateway API CRDs are bundle v1.2.1, older "
        "than v1.5.1 (Helm keeps CRDs that exist): apply the Gateway API v1.5.1 CRDs or later)"
    )


def test_gateway_api_crds_of_the_tested_bundle_or_newer_or_unstated_are_accepted() -> None:
    for version in ("v1.5.1", "v1.6.1", None):
        cond = condition(partly(cluster(), {"gateway-api-bundle": _bundle(version)}), "StackReady")
        assert cond.status == "True", version


def test_the_gateway_api_bundle_is_observed_for_an_external_envoy_gateway_too() -> None:
    ic = cluster(servingStack={"envoyGateway": {"mode": "External"}})
    bundle = created(installing(ic))["gateway-api-bundle"]
    assert bundle["spec"]["managementPolicies"] == ["Observe"]
    cond = condition(partly(ic, {"gateway-api-bundle": _bundle("v1.0.0")}), "StackReady")
    assert (cond.status, cond.reason) == ("False", "Failed")
