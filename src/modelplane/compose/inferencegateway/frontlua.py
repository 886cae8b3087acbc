"""The front listener's Lua: one Envoy Gateway EnvoyExtensionPolicy on a gateway's HTTPS
listener, carrying each script the gateway needs, in order.

- ``priority.script`` (``spec.priority``): each caller's priority and fairness id;
- ``catalog.script`` (``spec.auth``): ``/v1/models`` answered per caller.

One policy, not one each: Envoy Gateway v1.8.1 keeps one EnvoyExtensionPolicy per target and
marks the later ones Conflicted (``internal/gatewayapi/envoyextensionpolicy.go``); each entry of
its ``lua`` list becomes a Lua filter of its own, run in the list's order. The composition
resource and the Object keep the names of the release that composed priority alone, so an
upgrade updates the policy in place instead of dropping it for a moment.

Evidence, not absence: while the caller Secrets or the services are being read, the policy
composed before is kept as it was.
"""

from __future__ import annotations

from collections.abc import Mapping

from modelplane.compose.inferencegateway import catalog, priority
from modelplane.compose.inferencegateway.callers import Callers, entries, front_policy, on_host
from modelplane.compose.shared.frontdoor import ClusterGateway
from modelplane.composer import Desired, Inputs, carry_forward
from modelplane.kube.objects import Obj

FRONT_LUA = "caller-priority"
"""The composition resource name of the extension policy (priority's, from before the
catalog)."""


def extension_policy(gateway: str, host: ClusterGateway, scripts: list[str]) -> Obj:
    """The EnvoyExtensionPolicy running ``scripts`` on every route of the front listener."""
    lua = [{"type": "Inline", "inline": script} for script in scripts]
    return front_policy("EnvoyExtensionPolicy", gateway, "priority", host, {"lua": lua})


def compose_front_lua(
    inputs: Inputs, gateway: str, host: ClusterGateway, auth: Callers
) -> dict[str, Desired]:
    """The extension policy of a gateway with ``spec.priority`` or ``spec.auth`` (nothing
    with neither)."""
    spec = inputs.composite["spec"]
    authed = isinstance(spec.get("auth"), Mapping)
    if not entries(spec, "priority") and not authed:
        return {}
    services = inputs.required.get(catalog.SERVICES)
    if auth.reading or (authed and services is None):
        return carry_forward({k: v for k, v in inputs.observed.items() if k == FRONT_LUA})
    scripts = []
    if entries(spec, "priority"):
        scripts.append(priority.script(priority.caller_priorities(spec, auth.identities)))
    if authed:
        scripts.append(catalog.script(catalog.models_by_caller(services or [], auth.identities)))
    policy = extension_policy(gateway, host, scripts)
    return {FRONT_LUA: on_host(inputs, gateway, host, FRONT_LUA, policy)}
