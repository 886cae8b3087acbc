"""What the composer dereferences, checked up front so bad input fails naming the field.

The XRD already rejects all of this at the API server; this is the backstop for a replica
that reached the function some other way (``render`` without validation, a hand-made
request), so the result is a Fatal naming the field rather than a KeyError.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from modelplane.compose.modelreplica.labelsets import role_of
from modelplane.kube import objects
from modelplane.kube.objects import Obj


def problem(replica: Obj) -> str | None:
    """The first problem that would stop composition, as ``path: message``, or None."""
    metadata = replica.get("metadata")
    if not isinstance(metadata, Mapping) or not metadata.get("name"):
        return "metadata.name: Required value"
    spec = replica.get("spec")
    if not isinstance(spec, Mapping):
        return "spec: Required value"
    if not isinstance(spec.get("clusterName"), str) or not spec["clusterName"]:
        return "spec.clusterName: Required value: the InferenceCluster the replica is pinned to"
    ref = spec.get("modelCacheRef")
    if ref is not None and (not isinstance(ref, Mapping) or not ref.get("name")):
        return "spec.modelCacheRef.name: Required value"
    engines = spec.get("engines")
    if not isinstance(engines, list) or not engines:
        return "spec.engines: Required value: at least one engine"
    names: set[str] = set()
    for i, engine in enumerate(engines):
        path = f"spec.engines[{i}]"
        found = _engine_problem(engine, path)
        if found:
            return found
        if engine["name"] in names:
            return f"{path}.name: Duplicate value: {engine['name']!r}"
        names.add(engine["name"])
    return None


def _engine_problem(engine: Any, path: str) -> str | None:
    if not isinstance(engine, Mapping):
        return f"{path}: Invalid value: must be an object"
    if not isinstance(engine.get("name"), str) or not engine["name"]:
        return f"{path}.name: Required value"
    if "copies" in engine and not _count(engine["copies"], 64):
        return (
            f"{path}.copies: Invalid value: {engine['copies']!r}: must be an integer from 1 to 64"
        )
    members = engine.get("members")
    if not isinstance(members, list) or not members:
        return f"{path}.members: Required value"
    return _roles_problem(members, path) or _members_problem(members, path)


def _roles_problem(members: list[Any], path: str) -> str | None:
    """An engine is one Standalone member, or one Leader and its Workers."""
    roles = [role_of(m) if isinstance(m, Mapping) else "" for m in members]
    if roles == ["Standalone"]:
        return None
    if roles.count("Leader") == 1 and "Worker" in roles and "Standalone" not in roles:
        return None
    return (
        f'{path}: Invalid value: "object": an engine must be either a single Standalone '
        "member or one Leader and one Worker member"
    )


def _members_problem(members: list[Any], path: str) -> str | None:
    for j, member in enumerate(members):
        found = _member_problem(member, f"{path}.members[{j}]")
        if found:
            return found
    if all(_spec(m) is None for m in members):
        return f"{path}.members[0].template.spec: Required value: the member's containers"
    return None


def _member_problem(member: Obj, path: str) -> str | None:
    if not isinstance(member.get("nodePoolName"), str) or not member["nodePoolName"]:
        return f"{path}.nodePoolName: Required value"
    spec = _spec(member)
    if spec is None:
        if role_of(member) == "Standalone":
            return f"{path}.template.spec: Required value: the member's containers"
    else:
        found = _containers_problem(spec, path)
        if found:
            return found
    nodes = objects.dig(member, "worker", "nodes", default=1)
    if not _count(nodes, 63):
        return f"{path}.worker.nodes: Invalid value: {nodes!r}: must be an integer from 1 to 63"
    return _device_requests_problem(member, path)


def _containers_problem(spec: Mapping[str, Any], path: str) -> str | None:
    """The member template's containers: each named with an image, one of them the engine."""
    containers = spec.get("containers")
    if not isinstance(containers, list) or not containers:
        return f"{path}.template.spec.containers: Required value"
    for k, c in enumerate(containers):
        if not isinstance(c, Mapping) or not c.get("name") or not c.get("image"):
            return f"{path}.template.spec.containers[{k}]: Required value: name and image"
    if sum(1 for c in containers if c["name"] == "engine") != 1:
        return (
            f'{path}.template.spec.containers: Invalid value: "array": exactly one '
            "container must be named 'engine'"
        )
    return None


def _device_requests_problem(member: Obj, path: str) -> str | None:
    for k, request in enumerate(member.get("deviceRequests") or ()):
        if not isinstance(request, Mapping) or not request.get("name"):
            return f"{path}.deviceRequests[{k}].name: Required value"
        if not request.get("deviceClassName"):
            return f"{path}.deviceRequests[{k}].deviceClassName: Required value"
        if "count" in request and not _count(request["count"], 64):
            return (
                f"{path}.deviceRequests[{k}].count: Invalid value: {request['count']!r}: "
                "must be an integer from 1 to 64"
            )
    return None


def _count(value: Any, maximum: int) -> bool:
    return type(value) is int and 1 <= value <= maximum


def _spec(member: Any) -> Mapping[str, Any] | None:
    spec = objects.dig(member, "template", "spec")
    return spec if isinstance(spec, Mapping) else None
