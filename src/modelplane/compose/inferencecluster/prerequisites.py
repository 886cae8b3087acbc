"""Creation order inside the serving stack: a component that reads another's API once, when it
starts, is composed only after that API is served.

cert-manager with Gateway API support (which the front door's HTTP-01 solver needs) checks for
the Gateway API CRDs once at start and exits when they are absent (v1.21.1,
pkg/controller/context.go, buildClients: "the Gateway API CRDs do not seem to be present");
Envoy Gateway's chart installs them. Started together, cert-manager crash-loops until its
back-off outlasts Helm's wait and the Release fails. So its Release waits for the Gateway API
CRD to be observed established. Once composed (observed), a Release is always composed: a CRD
list that lags is no reason to uninstall anything.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from modelplane.compose.inferencecluster.components import (
    CERT_MANAGER,
    GATEWAY_API_BUNDLE,
    GATEWAY_API_CRD,
)

AFTER: dict[str, tuple[str, str]] = {
    CERT_MANAGER: (GATEWAY_API_BUNDLE, f"CRD {GATEWAY_API_CRD} established"),
}
"""A resource key -> (the key it waits for, what that key being Ready means)."""


def held(
    resources: Mapping[str, Any], observed: Mapping[str, Any], ready: Mapping[str, bool]
) -> dict[str, str]:
    """The keys of ``resources`` not composed yet, each with what it waits for."""
    out = {}
    for key, (first, meaning) in AFTER.items():
        if key in resources and key not in observed and first in resources and not ready.get(first):
            out[key] = meaning
    return out
