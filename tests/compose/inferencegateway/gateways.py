"""The InferenceGateways the admission tests start from: one admitted as it is, and the same
gateway authenticating callers (what ``limits`` and ``priority`` need)."""

from __future__ import annotations

from typing import Any

CALLERS = {"callerSecretSelector": {"matchLabels": {"modelplane.ai/callers": "true"}}}
GATEWAY: dict[str, Any] = {
    "apiVersion": "modelplane.ai/v1alpha1",
    "kind": "InferenceGateway",
    "metadata": {"name": "eu"},
    "spec": {
        "clusterName": "gw-eu",
        "hostname": "eu.example.com",
        "tls": {"issuerRef": {"name": "letsencrypt"}},
    },
}
AUTHENTICATED: dict[str, Any] = {**GATEWAY, "spec": {**GATEWAY["spec"], "auth": CALLERS}}
