"""Routed again: an updated replica that a ModelService routes counts as available only once
that service routes it again, on evidence written after its update.

A replica restarting for a new stamp stops serving; every ModelService routing it drops its
lane on its own schedule, and adds it back on its own schedule once the endpoint returns.
Counting the replica as soon as it serves would update the next one while the services still
route around the first: serving-and-routed capacity would dip below ``replicas - maxUnavailable``.
And a route read after the update may still be the one written before it.

So when a replica is updated, the route Objects naming its pool (the ModelServices' HTTPRoutes,
labelled ``modelplane.ai/routes-pools``) are recorded on it (annotation ``REROUTE``:
``name@routed,...``), and its endpoint is withdrawn (``endpoints.py``) until each of them has
been seen naming its pool no more, in what it applies and in what it observes on the cluster
(``name@dropped``): the service has taken the withdrawal in. Only then does the endpoint come
back, and the replica counts once each of those routes names its pool again in both: a route
written after the update, never one from before it. A recorded route the list does not hold is
asked for by name, as a draining replica's are (a list that lags is no evidence); asked and
absent, its ModelService is gone and it holds nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from modelplane.compose.shared.evidence import look_up_unlisted
from modelplane.compose.shared.remote import OBJECT_API_VERSION
from modelplane.compose.shared.replicapool import replica_pool_name
from modelplane.compose.shared.routed import referenced_pools
from modelplane.composer import Inputs, Requirement, namespace_of
from modelplane.kube import objects
from modelplane.kube.objects import Obj

ROUTES = "service-routes"
"""The requirement listing the namespace's route Objects (while a replica drains, or until a
withdrawn one is routed again)."""
ROUTE_BY_NAME = "route"
"""Requirements asking for a recorded route Object the list does not hold:
``route/<namespace>/<name>``."""


REROUTE = "modelplane.ai/reroute"
"""Annotation on an updated ModelReplica: the route Objects that named its pool when it was
updated, each with whether it was seen dropping it since (``name@routed`` or
``name@dropped``, comma separated)."""
ROUTED = "routed"
DROPPED = "dropped"


@dataclass(frozen=True)
class Routes:
    """The namespace's route Objects as this reconcile reads them."""

    read: bool
    """Whether the list is fetched (and every recorded route asked for by name answered)."""
    by_name: dict[str, Obj] = field(default_factory=dict)
    pending: frozenset[str] = frozenset()
    requirements: dict[str, Requirement] = field(default_factory=dict)

    def naming(self, replica_name: str) -> str:
        """The routes naming the replica's pool now, recorded as routed."""
        return ",".join(f"{name}@{ROUTED}" for name, _ in self._naming(replica_name))

    def adopted(self, replaced: str, elsewhere: str = "") -> str:
        """What a replacement for the replica named ``replaced`` (a surge, a move) records:
        the routes naming that one's pool, as if seen dropping the new one already (its pool
        was never named), so it counts once each names its pool too. ``elsewhere``: the
        provider config of the replaced one's cluster when the replacement stands on another;
        a route applied there (that cluster's own route) never names a pool elsewhere."""
        if not replaced:
            return ""
        return ",".join(
            f"{name}@{DROPPED}"
            for name, obj in self._naming(replaced)
            if not (elsewhere and _applied_by(obj) == elsewhere)
        )

    def _naming(self, replica_name: str) -> list[tuple[str, Obj]]:
        """The route Objects naming the replica's pool, by name."""
        pool = replica_pool_name(replica_name)
        return [(n, o) for n, o in sorted(self.by_name.items()) if pool in referenced_pools([o])]

    def moved_on(self, replica: Mapping[str, Any]) -> str:
        """The replica's record, with each route seen naming its pool no more marked dropped."""
        pool = replica_pool_name(str(replica["metadata"]["name"]))
        out = []
        for route, dropped in recorded(replica):
            obj = self.by_name.get(route)
            seen = self.read and route not in self.pending
            if not dropped and seen and (obj is None or pool not in referenced_pools([obj])):
                dropped = True
            out.append(f"{route}@{DROPPED if dropped else ROUTED}")
        return ",".join(out)

    def rerouted(self, replica: Mapping[str, Any]) -> bool:
        """Whether every route recorded on the replica dropped it and routes it again (or is
        gone)."""
        pool = replica_pool_name(str(replica["metadata"]["name"]))
        for route, dropped in recorded(replica):
            if route in self.pending or not self.read:
                return False
            obj = self.by_name.get(route)
            if obj is None:
                continue  # asked for by name and absent: its ModelService is gone
            if not dropped or not _names_both(obj, pool):
                return False
        return True


def routes(inputs: Inputs, mine: Iterable[Mapping[str, Any]]) -> Routes:
    """The route Objects listed, and those recorded on ``mine`` the list does not hold asked
    for by name."""
    listed = inputs.required.get(ROUTES)
    if listed is None:
        return Routes(read=False)
    asked = {route for replica in mine for route, _ in recorded(replica)}
    namespace = namespace_of(inputs.composite)
    lookup = look_up_unlisted(
        inputs, ROUTE_BY_NAME, OBJECT_API_VERSION, "Object", asked, listed, namespace
    )
    by_name = {objects.name(o): dict(o) for o in (*listed, *lookup.found.values())}
    return Routes(True, by_name, lookup.pending, lookup.requirements)


def recorded(replica: Mapping[str, Any]) -> list[tuple[str, bool]]:
    """The routes recorded on the replica, each with whether it was seen dropping its pool."""
    items = str(objects.annotations(replica).get(REROUTE) or "").split(",")
    return [
        (name, state == DROPPED) for name, _, state in (i.partition("@") for i in items) if name
    ]


def withdrawn(replica: Mapping[str, Any]) -> bool:
    """Whether the replica's endpoint stays withdrawn: a route recorded on it has not been
    seen dropping its pool yet."""
    return any(not dropped for _, dropped in recorded(replica))


def _applied_by(obj: Mapping[str, Any]) -> str:
    """The provider config (so the cluster) the route Object is applied through."""
    return str(objects.dig(obj, "spec", "providerConfigRef", "name") or "")


def _names_both(obj: Mapping[str, Any], pool: str) -> bool:
    """Whether the route names ``pool`` in what it applies and in what it observes applied:
    written back in, and programmed on the cluster."""
    spec = {"spec": {"forProvider": objects.mapping(obj, "spec", "forProvider")}}
    status = {"status": {"atProvider": objects.mapping(obj, "status", "atProvider")}}
    return pool in referenced_pools([spec]) and pool in referenced_pools([status])
