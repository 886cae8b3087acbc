"""A deployment's answer as the clusters run it, for tests that reconcile over several rounds:
a ModelReplica new or restamped (its pod templates changed) restarts and does not serve this
round; any other serves when the test's ``serves`` says so. Each writes its status at once, for
the stamp it was given (``reported``). ``Running`` plays a deployment's reconciles that way."""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any

from modelplane.compose.modeldeployment.endpoints import endpoint_key
from tests.compose.through import Response, reconcile_deployment
from tests.fleet.builders import is_serving, reported, stamp_of

Obj = dict[str, Any]


def as_run(
    answer: Mapping[str, Obj], before: Mapping[str, Obj], serves: Callable[[Obj], bool]
) -> dict[str, Obj]:
    """Every resource of ``answer`` as observed next, its replicas' ModelServing set."""
    after = {}
    for key, obj in answer.items():
        obj = copy.deepcopy(obj)
        if obj["kind"] == "ModelReplica":
            was = before.get(key)
            restarted = was is None or stamp_of(was) != stamp_of(obj)
            obj = reported(obj, up=not restarted and serves(obj))
        after[key] = obj
    return after


class Running:
    """A deployment's replicas as ``clusters`` run them, reconcile after reconcile (``as_run``):
    a new or restamped replica serves from the reconcile after next, one whose stamp is in
    ``broken`` never does. ``lagging``: the deployment's list of its replicas answers as it
    stood a reconcile ago."""

    def __init__(self, clusters: list[Obj], classes: list[Obj] | None = None) -> None:
        self.clusters = clusters
        self.classes = classes
        self.observed: dict[str, Obj] = {}
        self.broken: frozenset[str] = frozenset()
        self.lagging = False
        self.history: list[Response] = []
        self._listed: list[Obj] = []

    def reconcile(self, composite: Obj) -> Response:
        before = self.observed
        mine = list(self.replicas().values())
        listed, self._listed = (self._listed if self.lagging else mine), mine
        rsp = reconcile_deployment(
            composite, self.clusters, before, replicas=listed, classes=self.classes, unrouted=True
        )
        self.observed = as_run(rsp.resources, before, lambda r: stamp_of(r) not in self.broken)
        self.history.append(rsp)
        return rsp

    def replicas(self) -> dict[str, Obj]:
        return {k: o for k, o in self.observed.items() if o["kind"] == "ModelReplica"}

    def serving(self) -> int:
        return sum(1 for o in self.replicas().values() if is_serving(o))

    def routed(self) -> int:
        """Replicas serving with their endpoint composed: what takes traffic."""
        return sum(
            1
            for key, o in self.replicas().items()
            if endpoint_key(key) in self.observed and is_serving(o)
        )

    def stamps(self) -> set[str]:
        return {stamp_of(o) for o in self.replicas().values()}

    def stamps_by_index(self) -> dict[int, str]:
        return {
            int(o["metadata"]["labels"]["modelplane.ai/replica-index"]): stamp_of(o)
            for o in self.replicas().values()
        }
