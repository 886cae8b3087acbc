"""DRA ResourceClaimTemplates: one per member that claims devices."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache

from modelplane.compose.modelreplica.context import ReplicaContext
from modelplane.compose.modelreplica.labelsets import owned, role_of
from modelplane.compose.modelreplica.names import claim_template_name
from modelplane.kube.names import short_hash
from modelplane.kube.objects import Obj
from modelplane.structs import frozen


def claim_template(ctx: ReplicaContext, engine: Obj, member: Obj) -> Obj:
    """The member's ResourceClaimTemplate, named for its requests (see ``member_claim``)."""
    role = role_of(member)
    claim = member_claim(ctx, member)
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {
            "name": claim_template_name(ctx.name, engine["name"], role, claim.revision),
            "namespace": ctx.namespace,
            "labels": owned(ctx.name, engine["name"]),
        },
        "spec": claim.spec,
    }


@dataclass(frozen=True)
class MemberClaim:
    revision: str
    """A digest of the requests: equal requests, equal digest, in any run."""
    spec: Obj
    """The template's spec (frozen: every member and replica with these requests shares it)."""


def member_claim(ctx: ReplicaContext, member: Obj) -> MemberClaim:
    """What a claiming member's template holds and its pods reference.

    Asked for by the template, its resource key and the pods: computed once per call.
    """
    claims = ctx.member_claims
    found = claims.get(id(member))
    if found is None:
        found = claims[id(member)] = _claim(_CANONICAL.encode(device_requests(member)))
    return found


@lru_cache(maxsize=1024)
def _claim(canonical: str) -> MemberClaim:
    requests = json.loads(canonical)
    return MemberClaim(short_hash(canonical), frozen({"spec": {"devices": {"requests": requests}}}))


# One encoder for every digest: json.dumps with options builds a new one per call.
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"))


def device_requests(member: Obj) -> list[Obj]:
    """Each device request becomes an ``exactly`` request; its selectors are ANDed CEL."""
    requests = []
    for request in member["deviceRequests"]:
        exactly: Obj = {
            "deviceClassName": request["deviceClassName"],
            "count": int(request.get("count", 1)),
        }
        selectors = [
            {"cel": {"expression": s["cel"]}} for s in request.get("selectors") or () if "cel" in s
        ]
        if selectors:
            exactly["selectors"] = selectors
        requests.append({"name": request["name"], "exactly": exactly})
    return requests
