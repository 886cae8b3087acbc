"""Handing a gateway's hops over to its shards without a moment when a cluster has none.

Before it had shards, an InferenceGateway composed each hop's Backend and BackendTLSPolicy
itself (keys ``backend/<cluster>``, ``backend-tls/<cluster>``). Dropping such an Object would
make provider-kubernetes delete the remote object the routes send traffic through. So each is
kept, observe-only (``managementPolicies: [Observe]``: crossplane-runtime then skips the external
delete), while the cluster's shard composes its own Object applying the same remote object
(provider-kubernetes finds it by name and takes it over). It is dropped once it is observed
observe-only and that shard is observed Ready (its Object holds the remote object): deleting it
then leaves the remote object in place.
"""

from __future__ import annotations

from collections.abc import Mapping, Set
from typing import Any

from modelplane.composer import Condition, Desired
from modelplane.observed import carried, ready_as_observed

Obj = dict[str, Any]

LEGACY_BACKEND = "backend/"
LEGACY_BACKEND_TLS = "backend-tls/"
OBSERVE_ONLY = ("Observe",)
HANDED_OVER = "HandedOver"


def legacy_hops(
    observed: Mapping[str, Mapping[str, Any]], alive: Set[str], handed: Set[str]
) -> dict[str, Desired]:
    """The gateway's own hop Objects still to keep, each observe-only. ``alive``: clusters whose
    hop stays (the rest went by evidence: their Object goes as it always did, deleting the
    remote object if it was not made observe-only yet); ``handed``: clusters whose shard is
    observed Ready with them in it."""
    kept: dict[str, Desired] = {}
    for key, obj in sorted(observed.items()):
        if not key.startswith((LEGACY_BACKEND, LEGACY_BACKEND_TLS)):
            continue
        cluster = key.partition("/")[2]
        if cluster not in alive or (cluster in handed and observe_only(obj)):
            continue
        out = carried(dict(obj))
        out["spec"] = {**(out.get("spec") or {}), "managementPolicies": list(OBSERVE_ONLY)}
        kept[key] = Desired(out, ready_as_observed(obj))
    return kept


def observe_only(obj: Mapping[str, Any]) -> bool:
    return tuple((obj.get("spec") or {}).get("managementPolicies") or ()) == OBSERVE_ONLY


def handover_condition(kept: Mapping[str, Desired]) -> Condition | None:
    if not kept:
        return None
    clusters = sorted({k.partition("/")[2] for k in kept})
    plural = "s" if len(clusters) != 1 else ""
    return Condition(
        HANDED_OVER,
        "True",
        "HandingOver",
        f"the hops to {len(clusters)} cluster{plural} move to this gateway's "
        "InferenceGatewayShards: the gateway's own Objects for them are kept observe-only until "
        "each shard holding them is Ready, then released; no hop is removed from the host",
    )
