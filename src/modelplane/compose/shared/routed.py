"""What a ModelService's routes name and what its Usages hold, read by the services and by the
deployments whose replicas they route to."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from modelplane.compose.shared.frontdoor import POOL_HEADER
from modelplane.compose.shared.remote import MANIFEST, OBSERVED_MANIFEST
from modelplane.kube import objects

USAGE_API_VERSION = "protection.crossplane.io/v1beta1"


def held_replicas(usages: Iterable[Mapping[str, Any]]) -> set[str]:
    """The ModelReplicas the Usages hold: deleting one of them would be refused, and a refused
    delete of a composed resource fails the deployment's whole reconcile (Crossplane v2.3.4,
    internal/controller/apiextensions/composite/composition_functions.go garbage-collects
    before it applies anything)."""
    out: set[str] = set()
    for usage in usages:
        of = objects.mapping(usage, "spec", "of")
        if of.get("kind") == "ModelReplica":
            out.add(str(objects.dig(of, "resourceRef", "name")))
    return out


def referenced_pools(routes: Iterable[Mapping[str, Any]]) -> set[str]:
    """Every InferencePool the route Objects name, in the manifest they apply or the one they
    observe: a fleet route's backendRef, or a front route's pool header."""
    out: set[str] = set()
    for obj in routes:
        for manifest in (objects.dig(obj, *MANIFEST), objects.dig(obj, *OBSERVED_MANIFEST)):
            if isinstance(manifest, Mapping):
                out |= _pools(manifest)
    return out


def header_values(route: Mapping[str, Any], name: str) -> set[str]:
    """The values an HTTPRoute manifest's backendRefs set request header ``name`` to."""
    return {
        str(header.get("value"))
        for ref in backend_refs(route)
        for f in ref.get("filters") or ()
        for header in objects.dig(f, "requestHeaderModifier", "set") or ()
        if header.get("name") == name
    }


def backend_refs(route: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """Every backendRef of an HTTPRoute manifest's rules, in order."""
    return [
        ref
        for rule in objects.dig(route, "spec", "rules") or ()
        for ref in rule.get("backendRefs") or ()
    ]


def _pools(manifest: Mapping[str, Any]) -> set[str]:
    named = {
        str(ref.get("name")) for ref in backend_refs(manifest) if ref.get("kind") == "InferencePool"
    }
    return named | header_values(manifest, POOL_HEADER)
