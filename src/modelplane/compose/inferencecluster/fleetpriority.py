"""The fleet hop's half of per-caller priority (issue #43 point 4; docs/design/
shared-front-door.md, "Priority as designed"): the endpoint picker's objective, named on every
request of the cluster's fleet listener.

The front hop knows the caller and writes its priority (``x-modelplane-priority``); which
replica's pool serves the request is known only once the front hop's AI Gateway ext_proc has
chosen a lane and written ``x-modelplane-pool``, after any filter of the front hop could run. So
the objective is named here, where both headers have arrived: an inline Lua script in an Envoy
Gateway EnvoyExtensionPolicy on the fleet listener sets the picker's objective header, under both
its names, to ``<pool>-priority-<value>`` (the InferenceObjective each replica composes per value,
``compose/modelreplica/objectives.py``), or removes both when the request carries no priority.

Envoy Gateway v1.8.1 runs Lua (filter 12 and on, ``internal/xds/translator/httpfilters.go``)
before ext_proc (100 and on), and Envoy AI Gateway v1.1.0 puts the picker's ext_proc just
before the router (``internal/extensionserver/post_translate_modify.go``), so the picker reads
what the script wrote. The script trusts no header blindly: only a value of
``PRIORITY_VALUES`` written exactly as the front hop writes it, and a pool header that is a DNS
label, make an objective name; anything else removes the objective headers (priority 0, never
a refusal: ``pkg/epp/requestcontrol/director.go`` in llm-d-router v0.10.0).
"""

from __future__ import annotations

from modelplane.compose.inferencecluster.components import ENVOY_GATEWAY
from modelplane.compose.inferencecluster.gateway import GATEWAY_COMPONENT
from modelplane.compose.inferencecluster.releases import stack_object
from modelplane.compose.inferencecluster.target import Target
from modelplane.compose.shared.frontdoor import (
    ENVOY_API_VERSION,
    FLEET_LISTENER,
    OBJECTIVE_HEADERS,
    POOL_HEADER,
    PRIORITY_HEADER,
    PRIORITY_VALUES,
    listener_ref,
    priority_objective_name,
)
from modelplane.kube.objects import Obj

FLEET_PRIORITY = "fleet-priority"
"""The composition resource name of the fleet listener's extension policy."""
POOL_NAME_MAX = 63
"""A pool is named as a DNS label (``compose/shared/replicapool.py``)."""
OUTLIVES = ((ENVOY_GATEWAY, FLEET_PRIORITY),)
"""Envoy Gateway's controller goes after the policy it applies, as after the fleet listener's
other policy (``gateway.OUTLIVES``)."""


def script() -> str:
    """The Lua script run on every request of the fleet listener. The suffix table holds each
    priority exactly as the front hop writes it (``"-1"``, ``"0"``, ``"5"``): a header of any
    other spelling finds no entry."""
    suffixes = "".join(
        f'  ["{value}"] = "{priority_objective_name("", value)}",\n' for value in PRIORITY_VALUES
    )
    objectives = ", ".join(f'"{name}"' for name in OBJECTIVE_HEADERS)
    return (
        "-- Written by Modelplane: the endpoint picker's objective, from the caller's priority\n"
        "-- (set by the front gateway) and the pool the request goes to.\n"
        f"local SUFFIX = {{\n{suffixes}}}\n"
        f"local OBJECTIVE = {{{objectives}}}\n"
        "local function valid_pool(pool)\n"
        f"  return #pool <= {POOL_NAME_MAX}\n"
        '    and string.match(pool, "^[a-z0-9][a-z0-9%-]*$") ~= nil\n'
        '    and string.match(pool, "[a-z0-9]$") ~= nil\n'
        "end\n"
        "function envoy_on_request(handle)\n"
        "  local headers = handle:headers()\n"
        f'  local suffix = SUFFIX[headers:get("{PRIORITY_HEADER}") or ""]\n'
        f'  local pool = headers:get("{POOL_HEADER}") or ""\n'
        "  local objective = nil\n"
        "  if suffix ~= nil and valid_pool(pool) then\n"
        "    objective = pool .. suffix\n"
        "  end\n"
        "  for _, name in ipairs(OBJECTIVE) do\n"
        "    if objective ~= nil then\n"
        "      headers:replace(name, objective)\n"
        "    else\n"
        "      headers:remove(name)\n"
        "    end\n"
        "  end\n"
        "end\n"
    )


def fleet_priority(t: Target) -> dict[str, Obj]:
    """The extension policy on a Managed gateway's fleet listener. Nothing on an External
    gateway: Modelplane composes no policy on a Gateway it does not own (its fleet listener's
    client validation included), so there the objective headers pass as the front hop sent
    them."""
    gw = t.gateway
    if gw.mode != "Managed":
        return {}
    policy = {
        "apiVersion": ENVOY_API_VERSION,
        "kind": "EnvoyExtensionPolicy",
        "metadata": {"name": "inference-gateway-fleet-priority", "namespace": gw.namespace},
        "spec": {
            "targetRefs": [listener_ref(gw.name, FLEET_LISTENER)],
            "lua": [{"type": "Inline", "inline": script()}],
        },
    }
    # Ready once created, not once accepted: until Envoy Gateway applies it every request has
    # priority 0, which is how the fleet served before it, so nothing waits on it.
    return {FLEET_PRIORITY: stack_object(t, GATEWAY_COMPONENT, FLEET_PRIORITY, policy)}
