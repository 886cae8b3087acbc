"""DRA ResourceClaimTemplates: one per member that claims devices."""

from __future__ import annotations

from typing import Any

from modelplane.compose.modelreplica import labels
from modelplane.compose.modelreplica.context import ReplicaContext
from modelplane.compose.modelreplica.names import claim_template_name

Obj = dict[str, Any]

API_VERSION = "resource.k8s.io/v1"


def claim_template(ctx: ReplicaContext, engine: Obj, member: Obj) -> Obj:
    """Each device request becomes an ``exactly`` request; its selectors are ANDed CEL."""
    role = str(member.get("role") or "Standalone")
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
    return {
        "apiVersion": API_VERSION,
        "kind": "ResourceClaimTemplate",
        "metadata": {
            "name": claim_template_name(ctx.name, engine["name"], role),
            "namespace": ctx.namespace,
            "labels": labels.owned(ctx.name, engine["name"]),
        },
        "spec": {"spec": {"devices": {"requests": requests}}},
    }
