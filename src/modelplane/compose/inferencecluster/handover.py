"""Handing a component over: Managed -> External never uninstalls it.

A component made External is "never installed, changed or deleted", and that holds for the one
Modelplane installed before too: dropping its Release would make provider-helm uninstall it
(``helmExternal.Delete`` calls ``helm.Uninstall``), and dropping an Object deletes its remote
object. So each Release or Object the component composed that could still delete something on
the cluster is kept, observe-only (``managementPolicies: [Observe]``: crossplane-runtime then
skips the external delete), until it is observed with that policy; then it is dropped, and
deleting it leaves everything on the cluster as it was.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from modelplane.compose.inferencecluster.gateway import FLEET_COMPONENT, GATEWAY_COMPONENT
from modelplane.compose.inferencecluster.stack import Part
from modelplane.compose.inferencecluster.target import MANAGED
from modelplane.compose.shared.remote import OBSERVE_ONLY
from modelplane.composer import Condition
from modelplane.kube import objects
from modelplane.kube.objects import Obj
from modelplane.labels import STACK_COMPONENT
from modelplane.observed import carried, closed
from modelplane.reasons import InferenceCluster

HANDED_OVER = InferenceCluster.HANDED_OVER


@dataclass(frozen=True)
class Handover:
    resources: dict[str, Obj]
    """Resources kept, observe-only, until observed so (by composition resource name)."""
    components: tuple[str, ...]

    def conditions(self, cluster: Mapping[str, Any]) -> list[Condition]:
        if not self.resources:
            return closed(cluster, RELEASED)
        message = (
            f"{', '.join(self.components)} made External: what Modelplane installed stays "
            f"installed and is no longer managed ({', '.join(sorted(self.resources))} kept "
            "observe-only until orphaned, then released; nothing is uninstalled)"
        )
        return [Condition(HANDED_OVER, "True", InferenceCluster.HANDING_OVER, message)]


RELEASED = Condition(
    HANDED_OVER,
    "True",
    InferenceCluster.RELEASED,
    "every component made External is released: what Modelplane installed stays installed, "
    "no longer managed",
)


def handover(
    parts: Sequence[Part], wanted: Mapping[str, Any], observed: Mapping[str, Mapping[str, Any]]
) -> Handover:
    """What of ``observed`` an External component composed while it was Managed, and still
    could delete on the cluster: each as it was applied, made observe-only."""
    external = {p.name for p in parts if p.mode != MANAGED}
    if GATEWAY_COMPONENT in external:
        external.add(FLEET_COMPONENT)  # an External gateway brings its own fleet TLS
    kept: dict[str, Obj] = {}
    components: set[str] = set()
    for key, obj in sorted(observed.items()):
        if key in wanted or obj.get("kind") not in ("Release", "Object"):
            continue
        component = str(objects.labels(obj).get(STACK_COMPONENT))
        if component not in external or not _may_delete(obj):
            continue
        out = carried(dict(obj))
        out["spec"] = {**objects.spec(out), "managementPolicies": OBSERVE_ONLY}
        kept[key] = out
        components.add(component)
    return Handover(kept, tuple(sorted(components)))


def _may_delete(obj: Mapping[str, Any]) -> bool:
    policies = objects.spec(obj).get("managementPolicies")
    return policies is None or "*" in policies or "Delete" in policies
