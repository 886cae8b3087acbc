"""Crossplane v2.3.4 Usages and ClusterUsages, and the providers' own tracking of provider-config
usage: what actually orders deletion."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pytest
import yaml

from modelplane.compose.modeldeployment.composer import CLASSES, CLUSTERS, REPLICAS
from modelplane.compose.modeldeployment.drain import HOLDS, ROUTES, referenced_pools
from modelplane.compose.modeldeployment.endpoints import endpoint_key
from modelplane.compose.shared.replicapool import replica_pool_name
from tests.compose.test_drain_before_delete import H100, World, fronted, rolled
from tests.compose.through import Response, run
from tests.conformance.fleets import NAMES, SERVED, rendered_fleet
from tests.fleet.builders import deployment

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
    return rendered_fleet(name).composed("Usage") + rendered_fleet(name).composed("ClusterUsage")


@pytest.mark.parametrize("name", NAMES)
def test_a_namespaced_usage_protects_only_a_namespaced_object(name: str) -> None:
    """crossplane/crossplane v2.3.4, internal/protection/usage/finder.go: a Usage is indexed under
    ``of``'s namespace, its own when ``of`` names none, and a delete is looked up under the
    deleted object's namespace ("" for a cluster-scoped one): a Usage of a cluster-scoped object
    never matches its deletion, so protects nothing."""
    unresolvable = [
        (u["metadata"]["name"], u["spec"]["of"]["kind"])
        for u in rendered_fleet(name).composed("Usage")
        if scope(u["spec"]["of"]) != "Namespaced"
    ]
    assert unresolvable == []


@pytest.mark.parametrize("name", NAMES)
def test_a_cluster_usage_names_no_namespaced_user(name: str) -> None:
    """The same finder, and internal/controller/protection/usage/reconciler.go: a ClusterUsage's
    references are resolved without a namespace, so a namespaced ``by`` is never found."""
    unresolvable = [
        (u["metadata"]["name"], u["spec"]["by"]["kind"])
        for u in rendered_fleet(name).composed("ClusterUsage")
        if "by" in u["spec"] and scope(u["spec"]["by"]) != "Cluster"
    ]
    assert unresolvable == []


@pytest.mark.parametrize("name", NAMES)
def test_every_usage_names_objects_the_fleet_composes_beside_it(name: str) -> None:
    """A reference to nothing blocks nothing: the reconciler resolves ``of`` and ``by`` by name in
    the Usage's namespace (reconciler.go), so both are composed there."""
    composed = {
        (d["kind"], d["metadata"].get("namespace", ""), d["metadata"]["name"])
        for d in rendered_fleet(name).docs
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
    f = rendered_fleet(name)
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


def _holds(name: str) -> list[Obj]:
    return [
        u
        for u in rendered_fleet(name).composed("Usage")
        if u["spec"]["of"]["kind"] == "ModelReplica"
    ]


@pytest.mark.parametrize("name", SERVED)
def test_every_routed_replica_is_held_by_a_usage_of_the_service(name: str) -> None:
    """crossplane/crossplane v2.3.4, internal/webhook/protection/usage/handler.go: a DELETE is
    refused while any Usage of the object exists (``FindUsageOf``), garbage collector's included;
    so deleting a deployment leaves every replica a route names until its Usage goes."""
    routed = {
        m["spec"]["forProvider"]["manifest"]["metadata"]["name"]
        for m in rendered_fleet(name).composed("Object")
        if m["spec"]["forProvider"]["manifest"]["kind"] == "InferencePool"
    } & referenced_pools(rendered_fleet(name).composed("Object"))
    held = {replica_pool_name(u["spec"]["of"]["resourceRef"]["name"]) for u in _holds(name)}
    assert routed and held == routed


@pytest.mark.parametrize("name", SERVED)
def test_a_service_s_usages_name_no_by(name: str) -> None:
    """crossplane/crossplane v2.3.4, internal/controller/protection/usage/reconciler.go: a Usage
    being deleted that carries ``crossplane.io/composite`` and names a ``by`` keeps its finalizer
    while the ``by`` exists; one with a ``reason`` only is released at once. A service's Usage is
    left out while its routes live on, so it must be the second kind."""
    assert [u["metadata"]["name"] for u in _holds(name) if "by" in u["spec"]] == []
    assert all(u["spec"]["reason"] for u in _holds(name))


@pytest.mark.parametrize("name", SERVED)
def test_a_service_s_usages_replay_the_deletion_they_refused(name: str) -> None:
    """The same reconciler deletes ``of`` again, with the propagation policy the webhook
    recorded in ``usage.crossplane.io/deletion-attempt-with-policy``, only when
    ``replayDeletion`` is true; otherwise the garbage collector retries on its own backoff."""
    assert all(u["spec"].get("replayDeletion") is True for u in _holds(name))
    assert all("namespace" not in u["spec"]["of"]["resourceRef"] for u in _holds(name))


def test_a_refused_delete_of_a_composed_replica_is_never_asked_for() -> None:
    """crossplane/crossplane v2.3.4, internal/controller/apiextensions/composite/
    composition_functions.go: composed resources left out of the desired state are deleted
    before anything is applied, and an error doing so fails the whole reconcile. So a
    deployment keeps a leaving replica while a Usage holds it, even once no route names it."""
    world = World()
    rolled(deployment("qwen", replicas=2), world, fronted(), 3)
    md = deployment("qwen", replicas=1)
    world.reconcile_deployment(md, fronted())  # one replica withdrawn, routes not read
    [replica] = [
        o["metadata"]["name"]
        for k, o in world.deployment.items()
        if o["kind"] == "ModelReplica" and endpoint_key(k) not in world.deployment
    ]
    [usage] = [u for u in world.usages() if u["spec"]["of"]["resourceRef"]["name"] == replica]
    mine = [o for o in world.deployment.values() if o["kind"] == "ModelReplica"]
    required = {CLUSTERS: fronted(), CLASSES: [H100], REPLICAS: mine, ROUTES: []}
    # The routes let go: gone when asked for by name.
    asked = run(md, world.deployment, {**required, HOLDS: []}).by_name
    required |= {key: [] for key in asked}
    kept = run(md, world.deployment, {**required, HOLDS: [usage]})
    released = run(md, world.deployment, {**required, HOLDS: []})

    def names(rsp: Response) -> set[str]:
        return {o["metadata"]["name"] for o in rsp.resources.values()}

    assert replica in names(kept)
    assert replica not in names(released)
