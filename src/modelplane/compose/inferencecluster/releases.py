"""Helm charts installed through provider-helm Releases, and remote objects through
provider-kubernetes Objects, both reaching the cluster through its ClusterProviderConfigs.

A release is named ``mp-<chart>`` on the cluster (the ``crossplane.io/external-name``
annotation): short, the same on every reconcile, and never the name a user gives their own
install, so a release the user already has is never adopted, upgraded or uninstalled.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from modelplane.compose.inferencecluster.target import Target
from modelplane.compose.shared.remote import (
    NEVER_DELETE,
    OBSERVE_ONLY,
    cel_readiness,
    remote_object,
)
from modelplane.kube import objects
from modelplane.kube.objects import Obj
from modelplane.labels import STACK_COMPONENT

RELEASE_API_VERSION = "helm.m.crossplane.io/v1beta1"
HELM_CONFIG_API_VERSION = "helm.m.crossplane.io/v1beta1"
EXTERNAL_NAME = "crossplane.io/external-name"
# Helm waits for the release's workloads to be ready before reporting it deployed, so a Ready
# Release means running controllers, not merely applied manifests.
WAIT_TIMEOUT = "10m"
# An EKS kubeconfig's token can have as little as 4 minutes left when provider-helm reads it
# (lifetime 15, refreshed every 10, checked each minute: tests/conformance/
# test_eks_cluster_auth.py), and provider-helm keeps the client it built for the whole wait. A
# wait that ends inside that reports the chart not ready rather than Unauthorized halfway.
WAIT_TIMEOUTS = {"EKS": "3m"}
# A release that failed (timed out waiting, a webhook refused it) is rolled back or, on a first
# install, uninstalled and retried; after this many attempts it stays failed and says why.
ROLLBACK_LIMIT = 3

BUNDLE_VERSION = "inference.networking.k8s.io/bundle-version"
"""The annotation naming the Inference Extension bundle a CRD comes from."""

CRD_ESTABLISHED = (
    "has(object.status) && has(object.status.conditions)"
    ' && object.status.conditions.exists(c, c.type == "Established" && c.status == "True")'
)


@dataclass(frozen=True)
class Chart:
    key: str
    """The Release's composition resource name."""
    repository: str
    name: str
    namespace: str
    """The namespace on the cluster the chart is installed into (created when missing)."""


def release(t: Target, component: str, chart: Chart, version: str, values: Obj) -> Obj:
    out: Obj = {
        "apiVersion": RELEASE_API_VERSION,
        "kind": "Release",
        "metadata": {
            "name": t.name(chart.key),
            "namespace": t.namespace,
            "annotations": {EXTERNAL_NAME: f"mp-{chart.name}"},
            "labels": {STACK_COMPONENT: component},
        },
        "spec": {
            "forProvider": {
                "chart": {"name": chart.name, "repository": chart.repository, "version": version},
                "namespace": chart.namespace,
                "values": values,
                "wait": True,
                "waitTimeout": WAIT_TIMEOUTS.get(t.source, WAIT_TIMEOUT),
            },
            "rollbackLimit": ROLLBACK_LIMIT,
            "providerConfigRef": {"kind": "ClusterProviderConfig", "name": t.helm_config},
        },
    }
    if t.orphan:
        out["spec"]["managementPolicies"] = list(NEVER_DELETE)
    return out


def stack_object(
    t: Target,
    component: str,
    key: str,
    manifest: Obj,
    *,
    readiness: Obj | None = None,
    management_policies: list[str] | None = None,
) -> Obj:
    """A provider-kubernetes Object applying ``manifest`` to the cluster for ``component``."""
    if management_policies is None and t.orphan:
        management_policies = list(NEVER_DELETE)
    obj = remote_object(
        t.name(key),
        t.namespace,
        t.kubernetes_config,
        manifest,
        readiness=readiness,
        management_policies=management_policies,
    )
    obj["metadata"]["labels"] = {STACK_COMPONENT: component}
    return obj


def observed_crd(t: Target, component: str, key: str, crd: str) -> Obj:
    """An observe-only Object on a CustomResourceDefinition an External component provides:
    ready once the API server serves it."""
    return stack_object(
        t,
        component,
        key,
        {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": crd},
        },
        readiness=cel_readiness(CRD_ESTABLISHED),
        management_policies=OBSERVE_ONLY,
    )


def composed_version(obj: Mapping[str, Any]) -> str:
    """The version a Release or an inference-extension CRD Object was composed at ("" for
    anything else)."""
    provider = objects.mapping(obj, "spec", "forProvider")
    if obj.get("kind") == "Release":
        return str(objects.dig(provider, "chart", "version") or "")
    return _bundle(provider.get("manifest"))


def installed_version(obj: Mapping[str, Any]) -> str:
    """The version the provider reports installed ("" when it states none)."""
    at_provider = objects.mapping(obj, "status", "atProvider")
    if obj.get("kind") == "Release":
        return str(at_provider.get("version") or "")
    return _bundle(at_provider.get("manifest"))


def _bundle(manifest: Any) -> str:
    if not isinstance(manifest, Mapping) or manifest.get("kind") != "CustomResourceDefinition":
        return ""
    return str(objects.annotations(manifest).get(BUNDLE_VERSION) or "")
