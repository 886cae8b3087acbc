"""DRA ResourceClaimTemplates: one per member that claims devices."""

from __future__ import annotations

import json
from typing import Any

from modelplane.compose.modelreplica import labels
from modelplane.compose.modelreplica.context import ReplicaContext
from modelplane.compose.modelreplica.names import claim_template_name
from modelplane.kube.names import short_hash

Obj = dict[str, Any]

API_VERSION = "resource.k8s.io/v1"


def claim_template(ctx: ReplicaContext, engine: Obj, member: Obj) -> Obj:
    """The member's ResourceClaimTemplate, named for its requests (see ``revision``)."""
    role = str(member.get("role") or "Standalone")
    requests = device_requests(member)
    return {
        "apiVersion": API_VERSION,
        "kind": "ResourceClaimTemplate",
        "metadata": {
            "name": claim_template_name(
                ctx.name, engine["name"], role, member_revision(ctx, member)
            ),
            "namespace": ctx.namespace,
            "labels": labels.owned(ctx.name, engine["name"]),
        },
        "spec": {"spec": {"devices": {"requests": requests}}},
    }


def member_revision(ctx: ReplicaContext, member: Obj) -> str:
    """The revision of the template a claiming member's pods reference.

    Asked for by the template, its resource key and the pods: computed once per call.
    """
    revisions = ctx.claim_revisions
    found = revisions.get(id(member))
    if found is None:
        found = revisions[id(member)] = revision(device_requests(member))
    return found


def revision(requests: list[Obj]) -> str:
    """A digest of a template's requests: equal requests, equal digest, in any run."""
    return short_hash(_CANONICAL.encode(requests))


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
