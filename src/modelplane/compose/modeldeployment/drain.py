"""Two-phase removal: a replica leaving its deployment (scale-in, a move whose replacement
serves, a drain) first loses its ModelEndpoint, and is deleted only once no route references its
InferencePool any more.

Deleting both in one response would delete the pool while the ModelService, not told of the
change until its next reconcile, still weights it: its share of traffic would get errors. So the
replica is kept (without an endpoint) while its endpoint is still observed, while any of the
namespace's route Objects (labelled ``modelplane.ai/routes-pools``) names its pool in what it
asks for or in what it observes on the cluster, while a ModelService's Usage still holds it
(``modelservice/holds.py``: deleting it would be refused), and while either list has not been
read. Its serving pods then get their termination grace period to finish in-flight streams.

A list of route Objects can lag like any other, and an empty one looks exactly like every route
letting go. So the route Objects found naming the pool are recorded on the draining replica
(``DRAIN_ROUTES``, from the first reconcile it leaves in, while its endpoint is still there), and
one the list no longer holds is asked for by name: the replica goes only once each is answered,
gone or no longer naming the pool. A replica whose endpoint was withdrawn before it began to
leave (it stopped serving, or its cluster's gateway went) has nothing recorded: no working
traffic rides on its pool, and it is judged by the list.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from modelplane.compose.modeldeployment.endpoints import endpoint_key
from modelplane.compose.modeldeployment.reroute import ROUTE_BY_NAME, ROUTES
from modelplane.compose.shared.evidence import look_up_unlisted, recorded_names
from modelplane.compose.shared.remote import OBJECT_API_VERSION
from modelplane.compose.shared.replicapool import replica_pool_name
from modelplane.compose.shared.routed import USAGE_API_VERSION, held_replicas, referenced_pools
from modelplane.composer import Desired, Inputs, Requirement, namespace_of
from modelplane.kube import objects
from modelplane.kube.objects import Obj
from modelplane.labels import HOLDS_ROUTED, ROUTES_POOLS
from modelplane.observed import carried

HOLDS = "service-holds"
"""The requirement listing the ModelServices' Usages of replicas while a replica drains."""
DRAIN_ROUTES = "modelplane.ai/drain-routes"
"""Annotation on a draining ModelReplica: the route Objects last seen naming its pool (comma
separated)."""


@dataclass(frozen=True)
class Drain:
    """The replicas kept while they drain, and what is asked for by name meanwhile."""

    replicas: dict[str, Obj] = field(default_factory=dict)
    """The draining replicas' desired form (as observed, their routes recorded), by key."""
    requirements: dict[str, Requirement] = field(default_factory=dict)


def routes_requirement(md: Mapping[str, Any]) -> Requirement:
    return _labelled(md, OBJECT_API_VERSION, "Object", ROUTES_POOLS)


def holds_requirement(md: Mapping[str, Any]) -> Requirement:
    return _labelled(md, USAGE_API_VERSION, "Usage", HOLDS_ROUTED)


def _labelled(md: Mapping[str, Any], api_version: str, kind: str, label: str) -> Requirement:
    """Every ``kind`` in the deployment's namespace labelled ``label: "true"``."""
    return Requirement(api_version, kind, match_labels={label: "true"}, namespace=namespace_of(md))


def draining(inputs: Inputs, mine: Mapping[str, Obj], desired: Mapping[str, Desired]) -> Drain:
    """The observed replicas ``desired`` leaves out that must stay until the routes let go."""
    leaving = [key for key in mine if key not in desired]
    listed = inputs.required.get(ROUTES)
    usages = inputs.required.get(HOLDS)
    if not leaving or listed is None or usages is None:
        return Drain({key: carried(mine[key]) for key in leaving})
    held_by = held_replicas(usages)
    recorded = {key: recorded_names([mine[key]], DRAIN_ROUTES) for key in leaving}
    asked = set().union(*recorded.values())
    namespace = namespace_of(inputs.composite)
    lookup = look_up_unlisted(
        inputs, ROUTE_BY_NAME, OBJECT_API_VERSION, "Object", asked, listed, namespace
    )
    naming = _naming([*listed, *lookup.found.values()])
    out: dict[str, Obj] = {}
    for key in leaving:
        name = str(mine[key]["metadata"]["name"])
        routes = naming.get(replica_pool_name(name), set()) | (recorded[key] & lookup.pending)
        if routes or endpoint_key(key) in inputs.observed or name in held_by:
            path = ("metadata", "annotations", DRAIN_ROUTES)
            out[key] = objects.assoc(carried(mine[key]), path, ",".join(sorted(routes)))
    return Drain(out, lookup.requirements)


def _naming(routes: Iterable[Mapping[str, Any]]) -> dict[str, set[str]]:
    """The route Objects naming each InferencePool, by pool."""
    out: dict[str, set[str]] = {}
    for obj in routes:
        for pool in referenced_pools([obj]):
            out.setdefault(pool, set()).add(objects.name(obj))
    return out
