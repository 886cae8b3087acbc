"""Each caller's priority at an InferenceGateway (``spec.priority``; docs/design/
shared-front-door.md, "Priority as designed"), the front hop's half.

The endpoint picker that acts on a priority runs on the fleet hop, behind the front Gateway, and
reads it from headers (tests/conformance/test_picker_flow_control.py). The front hop is the one
place that knows the caller, so it writes, on every request of its HTTPS listener:

- ``x-modelplane-priority``: the value of the first ``spec.priority`` entry selecting the caller,
  removed for a caller none selects (the fleet hop turns it into the picker's objective);
- the picker's fairness id, under both its names (``x-llm-d-inference-fairness-id`` and the
  ``x-gateway-inference-fairness-id`` older pickers read): the caller's identity, so each caller
  is a flow of its own in the picker's flow control.

Both are written by an inline Lua script in an Envoy Gateway EnvoyExtensionPolicy on the
listener: Envoy Gateway v1.8.1 runs Lua after api_key_auth (the identity is set) and before the
router, and a route's header filter could not read the identity per caller. The script replaces
or removes each header on every request, and the listener's ClientTrafficPolicy removes them, and
the picker's objective headers, as the request arrives (``GUARDED_HEADERS``, on every front
gateway, ``priority`` or not): no client sets its own priority, objective or flow.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from modelplane.compose.inferencegateway.callers import CALLER_HEADER, entries
from modelplane.compose.inferencegateway.limits import selected_callers
from modelplane.compose.shared.frontdoor import OBJECTIVE_HEADERS, PRIORITY_HEADER

FAIRNESS_HEADERS = ("x-llm-d-inference-fairness-id", "x-gateway-inference-fairness-id")
"""The picker's fairness-id header and its deprecated alias (llm-d-router v0.10.0)."""


GUARDED_HEADERS = (PRIORITY_HEADER, *OBJECTIVE_HEADERS, *FAIRNESS_HEADERS)
"""Removed from every request as it arrives at every front gateway, with ``priority`` or not:
the priority header and the picker's objective and fairness headers, under every name. Without
it a caller of a gateway that sets no priority could name its own flow (flow control is on in
the default picker configs) and, through the fleet hop, its own objective."""


def caller_priorities(
    spec: Mapping[str, Any], identities: Mapping[str, Mapping[str, str]]
) -> dict[str, int]:
    """Each caller's priority: the value of the first entry that selects it."""
    out: dict[str, int] = {}
    for entry in entries(spec, "priority"):
        selected = selected_callers(entry, identities)
        for caller in sorted(identities) if selected is None else selected:
            out.setdefault(caller, int(entry["value"]))
    return out


def script(priorities: Mapping[str, int]) -> str:
    """The Lua script run on every request of the listener, after api_key_auth. Identities are
    alphanumerics, -, _ and . (the XRD and Envoy Gateway's Secret keys): nothing to escape."""
    table = "".join(f'  ["{caller}"] = "{priorities[caller]}",\n' for caller in sorted(priorities))
    priority_header = f'"{PRIORITY_HEADER}"'
    fairness = ", ".join(f'"{name}"' for name in FAIRNESS_HEADERS)
    return (
        "-- Written by Modelplane from InferenceGateway spec.priority: each caller's priority,\n"
        "-- and its identity as the endpoint picker's fairness id.\n"
        f"local PRIORITY = {{\n{table}}}\n"
        f"local FAIRNESS = {{{fairness}}}\n"
        "function envoy_on_request(handle)\n"
        "  local headers = handle:headers()\n"
        f'  local caller = headers:get("{CALLER_HEADER}")\n'
        "  local priority = nil\n"
        "  if caller ~= nil then\n"
        "    priority = PRIORITY[caller]\n"
        "  end\n"
        f"{_set_or_remove(priority_header, 'priority')}"
        "  for _, name in ipairs(FAIRNESS) do\n"
        f"{_set_or_remove('name', 'caller', indent='    ')}"
        "  end\n"
        "end\n"
    )


def _set_or_remove(header: str, value: str, indent: str = "  ") -> str:
    return (
        f"{indent}if {value} ~= nil then\n"
        f"{indent}  headers:replace({header}, {value})\n"
        f"{indent}else\n"
        f"{indent}  headers:remove({header})\n"
        f"{indent}end\n"
    )
