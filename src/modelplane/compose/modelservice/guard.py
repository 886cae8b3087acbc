"""No unguarded window: with ``spec.callers`` set, the routes that would newly let traffic reach
the service on a gateway wait until its caller policy (``callers/<gateway>``) is applied
(docs/design/shared-front-door.md, "Step 3 as built").

provider-kubernetes applies each Object on its own and Crossplane applies composed resources in
no guaranteed order: a route applied before the policy would let every authenticated caller
use the service until the policy lands. So while the policy's Object is not observed applied
(Ready and Synced), each of the gateway's routes (its path route and its model route) is:

- not composed, if it is not observed: nothing serves there yet, nothing is lost;
- kept exactly as observed, if it is: it already passes traffic (callers just turned on for a
  serving service), and the policy narrows that once applied; changing it now could open it
  to more (a new lane, a new name) before the guard is there.

Dropping ``spec.callers`` widens access on purpose: the routes need not wait for anything.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from modelplane.compose.modelservice import callers
from modelplane.composer import Desired
from modelplane.kube.objects import Obj
from modelplane.observed import applied, carried, ready_as_observed


@dataclass
class Held:
    """The gateways whose routes wait for their caller policy, and per route (composition
    resource name) what stands for it meanwhile: the observed route carried, or None (not
    composed)."""

    waiting: list[str] = field(default_factory=list)
    routes: dict[str, Desired | None] = field(default_factory=dict)


def held(
    spec: Mapping[str, Any], observed: Mapping[str, Obj], routes: Mapping[str, Iterable[str]]
) -> Held:
    """``routes``: per serving gateway, the composition resource names of the routes that let
    traffic reach the service there."""
    out = Held()
    if not callers.wanted_callers(spec):
        return out
    for gateway in sorted(routes):
        if applied(observed.get(f"{callers.POLICY}/{gateway}")):
            continue
        out.waiting.append(gateway)
        for key in routes[gateway]:
            seen = observed.get(key)
            out.routes[key] = (
                None if seen is None else Desired(carried(seen), ready_as_observed(seen))
            )
    return out


def waiting_message(gateways: Iterable[str]) -> list[str]:
    """What the RoutingReady condition says of each gateway whose routes wait."""
    return [
        f"the routes on gateway {g} wait for its caller policy ({callers.POLICY}/{g}, "
        "spec.callers) to be applied; routes already serving stay as they were"
        for g in gateways
    ]
