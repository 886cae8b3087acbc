"""Crossplane v2.3.4 Usages and ClusterUsages, and the providers' own tracking of provider-config
usage: what actually orders deletion."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conformance.fleets import NAMES, fleet

ROOT = Path(__file__).resolve().parents[2]
Obj = dict[str, Any]


@functools.cache
def scopes() -> dict[tuple[str, str], str]:
    """(group, kind) -> Namespaced or Cluster, from the vendored CRDs and Modelplane's XRDs."""
    out = {}
    for path in (ROOT / "tests" / "upstream" / "crds").glob("*.yaml"):
        crd = yaml.safe_load(path.read_text())
        out[(crd["spec"]["group"], crd["spec"]["names"]["kind"])] = crd["spec"]["scope"]
    for path in (ROOT / "apis").glob("*/definition.yaml"):
        xrd = yaml.safe_load(path.read_text())
        out[(xrd["spec"]["group"], xrd["spec"]["names"]["kind"])] = xrd["spec"]["scope"]
    return out


def scope(ref: Obj) -> str:
    return scopes()[(ref["apiVersion"].rpartition("/")[0], ref["kind"])]


def _usages(name: str) -> list[Obj]:
    return fleet(name).composed("Usage") + fleet(name).composed("ClusterUsage")


@pytest.mark.parametrize("name", NAMES)
def test_a_namespaced_usage_protects_only_a_namespaced_object(name: str) -> None:
    """crossplane/crossplane v2.3.4, internal/protection/usage/finder.go: a Usage is indexed under
    ``of``'s namespace, its own when ``of`` names none, and a delete is looked up under the
    deleted object's namespace ("" for a cluster-scoped one): a Usage of a cluster-scoped object
    never matches its deletion, so protects nothing."""
    unresolvable = [
        (u["metadata"]["name"], u["spec"]["of"]["kind"])
        for u in fleet(name).composed("Usage")
        if scope(u["spec"]["of"]) != "Namespaced"
    ]
    assert unresolvable == []


@pytest.mark.parametrize("name", NAMES)
def test_a_cluster_usage_names_no_namespaced_user(name: str) -> None:
    """The same finder, and internal/controller/protection/usage/reconciler.go: a ClusterUsage's
    references are resolved without a namespace, so a namespaced ``by`` is never found."""
    unresolvable = [
        (u["metadata"]["name"], u["spec"]["by"]["kind"])
        for u in fleet(name).composed("ClusterUsage")
        if "by" in u["spec"] and scope(u["spec"]["by"]) != "Cluster"
    ]
    assert unresolvable == []


@pytest.mark.parametrize("name", NAMES)
def test_every_usage_names_objects_the_fleet_composes_beside_it(name: str) -> None:
    """A reference to nothing blocks nothing: the reconciler resolves ``of`` and ``by`` by name in
    the Usage's namespace (reconciler.go), so both are composed there."""
    composed = {
        (d["kind"], d["metadata"].get("namespace", ""), d["metadata"]["name"])
        for d in fleet(name).docs
    }
    missing = []
    for u in _usages(name):
        namespace = u["metadata"].get("namespace", "")
        for side in ("of", "by"):
            ref = u["spec"].get(side)
            if ref is None:
                continue
            where = namespace if scope(ref) == "Namespaced" else ""
            if (ref["kind"], where, ref["resourceRef"]["name"]) not in composed:
                missing.append((u["metadata"]["name"], side, ref["resourceRef"]["name"]))
    assert missing == []


@pytest.mark.parametrize("name", NAMES)
def test_every_release_and_object_uses_a_provider_config_its_cluster_composes(name: str) -> None:
    """What orders a ClusterProviderConfig's deletion after its users': the providers record a
    ProviderConfigUsage for every managed resource they reconcile (provider-helm v1.4.0,
    pkg/controller/namespaced/release/release.go, NewProviderConfigUsageTracker;
    provider-kubernetes v1.2.1, internal/controller/namespaced/object/object.go, usage.Track),
    and the ClusterProviderConfig controller (provider-helm's pkg/controller/namespaced/config/
    config.go, crossplane-runtime's providerconfig reconciler) keeps its in-use finalizer while
    any remains. That holds only for configs that exist, named by every user."""
    f = fleet(name)
    configs = {
        (c["apiVersion"].partition("/")[0], c["metadata"]["name"])
        for c in f.composed("ClusterProviderConfig")
    }
    users = [*f.composed("Release"), *f.composed("Object")]
    assert users
    unknown = [
        (u["metadata"]["name"], ref.get("name"))
        for u in users
        for ref in [u["spec"].get("providerConfigRef") or {}]
        if ref.get("kind") != "ClusterProviderConfig"
        or (u["apiVersion"].partition("/")[0], ref.get("name")) not in configs
    ]
    assert unknown == []
