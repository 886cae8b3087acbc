"""How requests reach a replica: gateway -> HTTPRoute -> InferencePool -> endpoint picker -> pod.

Both serving modes compose the same path. The pool selects the replica's serving pods only
(Standalone pods and gang leaders, never workers); under PrefillDecode those pods also carry
``llm-d.ai/role`` (set where the workloads build their pod labels), which the picker's
prefill/decode filters read.
"""

from __future__ import annotations

from functools import lru_cache

from modelplane.compose.modelreplica import picker
from modelplane.compose.modelreplica.context import ReplicaContext
from modelplane.compose.modelreplica.labelsets import owned, serving_selector
from modelplane.compose.modelreplica.remote import wrap
from modelplane.compose.shared.frontdoor import FLEET_LISTENER, POOL_GROUP, cluster_gateway
from modelplane.compose.shared.remote import cel_readiness
from modelplane.compose.shared.replicapool import replica_pool_name
from modelplane.kube.names import suffixed
from modelplane.kube.objects import Obj
from modelplane.structs import frozen

POOL_KEY = "inference-pool"
ROUTE_KEY = "http-route"
KEYS = (POOL_KEY, ROUTE_KEY, *picker.KEYS)

# Accepted: the gateway took the route. ResolvedRefs: its InferencePool backend exists. Either
# missing means no request reaches the replica, however healthy its pods are.
ROUTE_ACCEPTED_QUERY = (
    "has(object.status) && has(object.status.parents)"
    " && object.status.parents.exists(p, has(p.conditions)"
    ' && p.conditions.exists(c, c.type == "Accepted" && c.status == "True")'
    ' && p.conditions.exists(c, c.type == "ResolvedRefs" && c.status == "True"))'
)


def pool_name(replica: str) -> str:
    return replica_pool_name(replica)


def picker_name(replica: str) -> str:
    return suffixed(replica, "epp")


def route_name(replica: str) -> str:
    return suffixed(replica, "route")


def path_prefix(ctx: ReplicaContext) -> str:
    return f"/{ctx.namespace}/{ctx.name}/"


def compose_routing(ctx: ReplicaContext) -> dict[str, Obj]:
    """The routing path (composition resource name -> wrapped Object), the picker included."""
    pool = pool_name(ctx.name)
    epp = picker_name(ctx.name)
    resources = {
        POOL_KEY: wrap(ctx, POOL_KEY, inference_pool(ctx, pool, epp)),
        ROUTE_KEY: wrap(
            ctx, ROUTE_KEY, http_route(ctx, pool), readiness=cel_readiness(ROUTE_ACCEPTED_QUERY)
        ),
    }
    resources.update(picker.compose_picker(ctx, name=epp, pool=pool))
    return resources


def inference_pool(ctx: ReplicaContext, name: str, epp: str) -> Obj:
    return {
        "apiVersion": f"{POOL_GROUP}/v1",
        "kind": "InferencePool",
        "metadata": {"name": name, "namespace": ctx.namespace, "labels": owned(ctx.name)},
        "spec": {
            "selector": {"matchLabels": serving_selector(ctx.name)},
            # One port: the field set valid on every InferencePool CRD from v1.0 on.
            "targetPorts": [{"number": ctx.serving_port}],
            "endpointPickerRef": {
                "name": epp,
                "port": {"number": picker.EXT_PROC_PORT},
                # For gateways that honour it; Envoy AI Gateway v1.1.0 fails closed whatever
                # this says, which is why the picker runs more than one replica.
                "failureMode": "FailOpen",
            },
        },
    }


def http_route(ctx: ReplicaContext, pool: str) -> Obj:
    gateway = cluster_gateway(ctx.cluster)
    return {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "HTTPRoute",
        "metadata": {
            "name": route_name(ctx.name),
            "namespace": ctx.namespace,
            "labels": owned(ctx.name),
        },
        "spec": {
            "parentRefs": _parent_refs(gateway.name, gateway.namespace),
            "rules": [
                {
                    "matches": [{"path": {"type": "PathPrefix", "value": path_prefix(ctx)}}],
                    "filters": _STRIP_PREFIX,
                    "backendRefs": [{"group": POOL_GROUP, "kind": "InferencePool", "name": pool}],
                    "timeouts": _NO_TIMEOUT,
                }
            ],
        },
    }


_STRIP_PREFIX = frozen(
    [
        {
            "type": "URLRewrite",
            "urlRewrite": {"path": {"type": "ReplacePrefixMatch", "replacePrefixMatch": "/"}},
        }
    ]
)
# Gateways default to a 15 s request timeout, which cuts token streams.
_NO_TIMEOUT = frozen({"request": "0s"})


@lru_cache(maxsize=256)
def _parent_refs(name: str, namespace: str) -> list[Obj]:
    return frozen(
        [
            {
                "group": "gateway.networking.k8s.io",
                "kind": "Gateway",
                "name": name,
                "namespace": namespace,
                # Only the fleet listener, whose clients present a certificate from the fleet
                # CA: no replica is reachable without one.
                "sectionName": FLEET_LISTENER,
            }
        ]
    )
