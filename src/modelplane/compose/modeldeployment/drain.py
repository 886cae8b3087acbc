"""Two-phase removal: a replica leaving its deployment (scale-in, a move whose replacement
serves, a drain) first loses its ModelEndpoint, and is deleted only once no route references its
InferencePool any more.

Deleting both in one response would delete the pool while the ModelService, not told of the
change until its next reconcile, still weights it: its share of traffic would get errors. So the
replica is kept (without an endpoint) while its endpoint is still observed, while any of the
namespace's route Objects (labelled ``modelplane.ai/routes-pools``) names its pool in what it
asks for or in what it observes on the cluster, and while that list has not been read. Its
serving pods then get their termination grace period to finish in-flight streams.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from modelplane.compose.frontdoor import POOL_HEADER
from modelplane.compose.modeldeployment.endpoints import endpoint_key
from modelplane.compose.remote import OBJECT_API_VERSION
from modelplane.compose.replicapool import replica_pool_name
from modelplane.composer import Desired, Inputs, Requirement, namespace_of
from modelplane.labels import ROUTES_POOLS

Obj = dict[str, Any]

ROUTES = "service-routes"
"""The requirement listing the namespace's route Objects while a replica drains."""


def routes_requirement(md: Mapping[str, Any]) -> Requirement:
    return Requirement(
        OBJECT_API_VERSION,
        "Object",
        match_labels={ROUTES_POOLS: "true"},
        namespace=namespace_of(md),
    )


def draining(inputs: Inputs, mine: Mapping[str, Obj], desired: Mapping[str, Desired]) -> list[str]:
    """The observed replicas ``desired`` leaves out that must stay until the routes let go."""
    leaving = [key for key in mine if key not in desired]
    if not leaving:
        return []
    listed = inputs.required.get(ROUTES)
    referenced = None if listed is None else referenced_pools(listed)
    return [
        key
        for key in leaving
        if endpoint_key(key) in inputs.observed
        or referenced is None
        or replica_pool_name(str(mine[key]["metadata"]["name"])) in referenced
    ]


def referenced_pools(objects: Iterable[Mapping[str, Any]]) -> set[str]:
    """Every InferencePool the route Objects name, in the manifest they apply or the one they
    observe: a fleet route's backendRef, or a front route's pool header."""
    out: set[str] = set()
    for obj in objects:
        manifests = [
            ((obj.get("spec") or {}).get("forProvider") or {}).get("manifest"),
            ((obj.get("status") or {}).get("atProvider") or {}).get("manifest"),
        ]
        for manifest in manifests:
            if isinstance(manifest, Mapping):
                out |= _pools(manifest)
    return out


def _pools(manifest: Mapping[str, Any]) -> set[str]:
    out: set[str] = set()
    for rule in (manifest.get("spec") or {}).get("rules") or ():
        for ref in rule.get("backendRefs") or ():
            if ref.get("kind") == "InferencePool":
                out.add(str(ref.get("name")))
            for f in ref.get("filters") or ():
                for header in (f.get("requestHeaderModifier") or {}).get("set") or ():
                    if header.get("name") == POOL_HEADER:
                        out.add(str(header.get("value")))
    return out
