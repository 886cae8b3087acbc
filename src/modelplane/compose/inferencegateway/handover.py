"""Handing a gateway's hops over to its shards without a moment when a cluster has none.

Before it had shards, an InferenceGateway composed each hop's Backend and BackendTLSPolicy
itself (keys ``backend/<cluster>``, ``backend-tls/<cluster>``). Dropping such an Object would
make provider-kubernetes delete the remote object the routes send traffic through. So each is
kept, observe-only (``managementPolicies: [Observe]``: crossplane-runtime then skips the external
delete), while the cluster's shard composes its own Object applying the same remote object
(provider-kubernetes finds it by name and takes it over). It is dropped once it is observed
observe-only and that shard reports the cluster reached (its Object holds the remote object):
deleting it then leaves the remote object in place.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Set
from typing import Any

from modelplane.compose.shared.remote import OBSERVE_ONLY
from modelplane.composer import Condition, Desired
from modelplane.kube import objects
from modelplane.observed import carried, closed, ready_as_observed
from modelplane.reasons import InferenceGateway
from modelplane.shortlist import counted, shortlist

LEGACY_BACKEND = "backend/"
LEGACY_BACKEND_TLS = "backend-tls/"
HANDED_OVER = InferenceGateway.HANDED_OVER


def legacy_hops(
    observed: Mapping[str, Mapping[str, Any]],
    targets: Set[str],
    unwritten: Set[str],
    handed: Set[str],
) -> dict[str, Desired]:
    """The gateway's own hop Objects still to keep. To a cluster of ``targets`` (its shard
    takes the hop over): observe-only, until observed so with the cluster in ``handed`` (its
    shard reports it reached). To a cluster in ``unwritten`` (listed before its address
    was written, in no shard yet): as it was, the hop it always was. To any other cluster (gone
    by evidence): none, as before shards (deleting it deletes the remote object, unless it was
    made observe-only already and its shard's own Object deletes it)."""
    kept: dict[str, Desired] = {}
    for key, obj in sorted(observed.items()):
        if not key.startswith((LEGACY_BACKEND, LEGACY_BACKEND_TLS)):
            continue
        cluster = key.partition("/")[2]
        out = carried(dict(obj))
        if cluster in targets:
            if cluster in handed and observe_only(obj):
                continue
            out["spec"] = {**objects.spec(out), "managementPolicies": OBSERVE_ONLY}
        elif cluster not in unwritten:
            continue
        kept[key] = Desired(out, ready_as_observed(obj))
    return kept


def observe_only(obj: Mapping[str, Any]) -> bool:
    return list(objects.spec(obj).get("managementPolicies") or ()) == OBSERVE_ONLY


def handover_conditions(gateway: Mapping[str, Any], kept: Mapping[str, Desired]) -> list[Condition]:
    """While the gateway keeps hop Objects of its own: how many move to the shards (kept
    observe-only), and how many stay as they were (their cluster publishes no address yet, so
    no shard holds them)."""
    if not kept:
        return closed(gateway, RELEASED)
    moving = _clusters(k for k, d in kept.items() if observe_only(d.resource))
    waiting = _clusters(k for k, d in kept.items() if not observe_only(d.resource))
    parts = []
    if moving:
        parts.append(
            f"the hops to {_count(moving)} move to this gateway's InferenceGatewayShards: the "
            "gateway's own Objects for them are kept observe-only until the shard holding each "
            "cluster reports its hop reached, then released"
        )
    if waiting:
        parts.append(
            f"the hops to {_count(waiting)} stay as they were, the gateway's own, until their "
            f"cluster publishes its gateway address again ({shortlist(waiting, 10)})"
        )
    message = "; ".join(parts) + "; no hop is removed from the host"
    return [Condition(HANDED_OVER, "True", InferenceGateway.HANDING_OVER, message)]


def _clusters(keys: Iterable[str]) -> list[str]:
    return sorted({k.partition("/")[2] for k in keys})


def _count(clusters: list[str]) -> str:
    return counted(len(clusters), "cluster")


RELEASED = Condition(
    HANDED_OVER,
    "True",
    InferenceGateway.RELEASED,
    "every hop is held by this gateway's InferenceGatewayShards; the gateway's own hop Objects "
    "are released",
)
