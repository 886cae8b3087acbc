"""`modelplane render` gives each composed resource to the composite that owns it, as Crossplane
does: by the owner reference's uid when both carry one, else by namespace and name, never by
name alone (deployment ``qwen`` in namespace ``a`` and in namespace ``b`` are two owners)."""

from __future__ import annotations

import copy
from typing import Any

from modelplane.compose.modeldeployment.stamp import replica_key, replica_name, stamp
from modelplane.compose.registry import default_registry
from modelplane.owners import Owners
from modelplane.render import RESOURCE_NAME, Renderer, render_documents
from modelplane.scheduling.scheduler import schedule
from modelplane.simulate import simulate_stack
from tests.fleet.builders import H100, declared_cluster, deployment, engine, member

Obj = dict[str, Any]
# Two whole nodes: one 8-GPU replica of each deployment fits, a third does not.
FLEET = [H100, declared_cluster("east", [("h100", "h100", 2)])]
COMPOSITE = "crossplane.io/composite"


def qwen(namespace: str, uid: str | None = None) -> Obj:
    md = deployment("qwen", engine("main", member(gpus=8)), namespace=namespace)
    if uid:
        md["metadata"]["uid"] = uid
    return md


def existing_replica(md: Obj, name: str, owner_uid: str | None = None) -> Obj:
    """The replica ``md`` placed on east in an earlier reconcile, as Crossplane labels it."""
    [p] = schedule(md, FLEET[1:], FLEET[:1], []).placements
    mr = stamp(md, p, name)
    meta = mr["metadata"]
    meta["labels"][COMPOSITE] = md["metadata"]["name"]
    meta["annotations"] = {RESOURCE_NAME: replica_key(p.index, p.cluster)}
    if owner_uid:
        ref = {"apiVersion": md["apiVersion"], "kind": md["kind"], "name": "qwen"}
        meta["ownerReferences"] = [{**ref, "uid": owner_uid, "controller": True}]
    return mr


def replicas(docs: list[Obj]) -> dict[tuple[str, str], Obj]:
    return {
        (d["metadata"]["namespace"], d["metadata"]["name"]): d
        for d in docs
        if d["kind"] == "ModelReplica"
    }


def test_a_replica_whose_owner_is_absent_is_rendered_not_taken_by_a_same_named_owner() -> None:
    theirs = existing_replica(qwen("a"), "qwen-of-a")
    docs = render_documents(
        default_registry(), [*FLEET, qwen("b"), theirs], simulate=simulate_stack
    )
    mrs = replicas(docs)
    assert ("a", "qwen-of-a") in mrs
    [ours] = [key for key in mrs if key[0] == "b"]
    assert ours[1] != "qwen-of-a"
    assert mrs[ours]["metadata"]["labels"][COMPOSITE] == "qwen"


def ready(mr: Obj, status: str) -> Obj:
    return {**mr, "status": {"conditions": [{"type": "Ready", "status": status, "reason": "R"}]}}


def test_with_both_owners_present_each_observes_only_its_own_replica() -> None:
    # Same name, same composition resource name, two namespaces: a's replica is ready, b's not.
    a = ready(existing_replica(qwen("a"), "qwen-of-a"), "True")
    b = ready(existing_replica(qwen("b"), "qwen-of-b"), "False")
    rendered = Renderer(default_registry(), [*FLEET, qwen("a"), qwen("b"), a, b]).render_all()
    observed = {
        r.composite["metadata"]["namespace"]: (list(r.resources.values()), list(r.ready.values()))
        for r in rendered
        if r.composite["kind"] == "ModelDeployment"
    }
    assert [mr["metadata"]["name"] for mr in observed["a"][0]] == ["qwen-of-a"]
    assert [mr["metadata"]["name"] for mr in observed["b"][0]] == ["qwen-of-b"]
    assert (observed["a"][1], observed["b"][1]) == ([True], [False])


def test_an_owner_reference_uid_decides_over_the_name() -> None:
    replaced = existing_replica(qwen("a"), "qwen-of-old-a", owner_uid="old-uid")
    renderer = Renderer(default_registry(), [*FLEET, qwen("a", uid="new-uid"), replaced])
    # The deployment was deleted and created again: the old one's replica is not the new one's.
    roots = [(c["kind"], c["metadata"]["name"]) for c in renderer.composites()]
    assert ("ModelReplica", "qwen-of-old-a") in roots
    owned = existing_replica(qwen("a"), "qwen-of-a", owner_uid="new-uid")
    renderer = Renderer(default_registry(), [*FLEET, qwen("a", uid="new-uid"), owned])
    assert ("ModelReplica", "qwen-of-a") not in [
        (c["kind"], c["metadata"]["name"]) for c in renderer.composites()
    ]


def test_composed_resources_of_a_composite_with_a_uid_carry_its_controller_reference() -> None:
    docs = render_documents(
        default_registry(), [*FLEET, qwen("a", uid="u-1")], simulate=simulate_stack
    )
    [mr] = [d for d in docs if d["kind"] == "ModelReplica"]
    [ref] = mr["metadata"]["ownerReferences"]
    assert (ref["kind"], ref["name"], ref["uid"], ref["controller"]) == (
        "ModelDeployment",
        "qwen",
        "u-1",
        True,
    )


def test_a_cluster_scoped_owner_owns_what_it_composed_in_any_namespace() -> None:
    cluster = {"apiVersion": "v", "kind": "InferenceCluster", "metadata": {"name": "east"}}
    composed = {"metadata": {"namespace": "crossplane-system", "labels": {COMPOSITE: "east"}}}
    assert Owners([cluster]).owner_of(composed, [cluster]) == cluster


def test_a_label_alone_cannot_choose_between_two_kinds_of_one_namespace_and_name() -> None:
    md = {"apiVersion": "v", "kind": "ModelDeployment", "metadata": {"name": "q", "namespace": "a"}}
    cache = {**md, "kind": "ModelCache"}
    composed = {"metadata": {"namespace": "a", "labels": {COMPOSITE: "q"}}}
    owners = Owners([md, cache])
    assert owners.owner_of(composed, [md]) is None
    assert owners.owner_of(composed, [cache]) is None
    referenced = copy.deepcopy(composed)
    referenced["metadata"]["ownerReferences"] = [
        {"kind": "ModelCache", "name": "q", "controller": True}
    ]
    assert owners.owner_of(referenced, [md, cache]) == cache


def test_replica_names_of_same_named_deployments_differ_by_namespace() -> None:
    [p] = schedule(qwen("a"), FLEET[1:], FLEET[:1], []).placements
    assert replica_name(qwen("a"), p) != replica_name(qwen("b"), p)
