"""A Usage of each ModelReplica whose InferencePool the service's routes name, so deleting the
replica (or the ModelDeployment that composed it) waits until the routes let go.

Deleting a ModelDeployment is Crossplane's and the garbage collector's work: no function runs,
so nothing would otherwise stop its replicas and their pools going in the same instant as its
endpoints, while the routes still weight them. The Usage refuses the replica's deletion
(Crossplane v2.3.4, internal/webhook/protection/usage/handler.go, which records the attempt on
the replica); the endpoint going (or its deletionTimestamp) is the evidence the service takes
the lane out on; once neither the routes it asks for nor those it observes name the pool, the
Usage is left out and Crossplane replays the recorded deletion (``replayDeletion``,
internal/controller/protection/usage/reconciler.go).

The Usage gives a ``reason``, never a ``by``: that reconciler releases a composed Usage that
names a ``by`` only once the ``by`` is gone, so one ``by`` a route Object (which lives as long as
the cluster's other lanes) or ``by`` the service would hold the replica for as long as they
exist. The replica, not its pool's Object, is what is held: a replica being deleted deletes its
workload too, and an engine gone behind a kept pool fails its requests just the same.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from modelplane.apis import API_VERSION
from modelplane.compose.modelservice.models import model_route_pools
from modelplane.compose.modelservice.plan import Plan
from modelplane.compose.shared.replicapool import replica_pool_name
from modelplane.compose.shared.routed import USAGE_API_VERSION, referenced_pools
from modelplane.composer import Desired, namespace_of
from modelplane.kube import objects
from modelplane.kube.names import dns_label
from modelplane.kube.objects import Obj
from modelplane.labels import HOLDS_ROUTED

HOLDS = "holds/"
"""Composition resource name prefix: ``holds/<replica>``."""
HELD_POOL = "modelplane.ai/held-pool"
"""Annotation on each Usage: the pool it is held for, read back once no endpoint names it."""


def holds(
    ms: Mapping[str, Any], plan: Plan, observed: Mapping[str, Obj], desired: Iterable[Obj]
) -> dict[str, Desired]:
    """A Usage per replica whose pool the desired or observed routes name."""
    routes = [*observed.values(), *desired]
    # The AIGatewayRoutes name the same pools as the path routes, but are applied apart from
    # them and may lag: their pools are held too.
    named = referenced_pools(routes) | model_route_pools(routes)
    replicas: dict[str, str] = {}
    for key, obj in observed.items():
        if key.startswith(HOLDS):
            pool = objects.annotations(obj).get(HELD_POOL)
            replicas[str(pool)] = str(obj["spec"]["of"]["resourceRef"]["name"])
    for m in plan.members:
        # An endpoint written by hand may name a pool no replica of its name owns: nothing
        # is known to hold then.
        if not m.external and m.pool == replica_pool_name(m.name):
            replicas[m.pool] = m.name
    out: dict[str, Desired] = {}
    for pool in sorted(named & replicas.keys()):
        # Whether it exists yet says nothing of whether the service serves.
        out[HOLDS + replicas[pool]] = Desired(_usage(ms, replicas[pool], pool), "True")
    return out


def _usage(ms: Mapping[str, Any], replica: str, pool: str) -> Obj:
    namespace, name = namespace_of(ms), str(ms["metadata"]["name"])
    return {
        "apiVersion": USAGE_API_VERSION,
        "kind": "Usage",
        "metadata": {
            "name": dns_label(name, "holds", replica),
            "namespace": namespace,
            "labels": {HOLDS_ROUTED: "true"},
            "annotations": {HELD_POOL: pool},
        },
        "spec": {
            "of": {
                "apiVersion": API_VERSION,
                "kind": "ModelReplica",
                "resourceRef": {"name": replica},
            },
            "reason": (
                f"ModelService {namespace}/{name} routes to its InferencePool {pool}: it is "
                "deleted once the service's routes no longer name the pool"
            ),
            "replayDeletion": True,
        },
    }
