"""Labels Modelplane puts on remote objects, so `kubectl` on a workload cluster shows whose is what.

The InferencePool selects serving pods by ``SERVING``; prefill/decode routing reads ``LLMD_ROLE``.
Everything under ``modelplane.ai/`` is Modelplane's own: user labels with that prefix are
overwritten, never trusted.
"""

from __future__ import annotations

from typing import Any

MANAGED_BY = "app.kubernetes.io/managed-by"
REPLICA = "modelplane.ai/replica"
ENGINE = "modelplane.ai/engine"
ROLE = "modelplane.ai/role"
SERVING = "modelplane.ai/serving"
POOL = "modelplane.ai/pool"
COMPONENT = "modelplane.ai/component"
LLMD_ROLE = "llm-d.ai/role"

_PHASE_ROLES = {"Prefill": "prefill", "Decode": "decode"}


def owned(replica: str, engine: str | None = None) -> dict[str, str]:
    """The labels every remote object of a replica (and of one of its engines) carries."""
    labels = {MANAGED_BY: "modelplane", REPLICA: replica}
    if engine is not None:
        labels[ENGINE] = engine
    return labels


def serving_selector(replica: str) -> dict[str, str]:
    """Selects exactly the pods that serve the replica's port: Standalone pods and gang leaders."""
    return {REPLICA: replica, SERVING: "true"}


def component(replica: str, name: str) -> dict[str, str]:
    """Labels (and selector) of a replica's non-engine pods, e.g. its endpoint picker.

    They never carry ``SERVING``, so the InferencePool can never select them.
    """
    labels = owned(replica)
    labels[COMPONENT] = name
    return labels


def is_serving_role(role: str) -> bool:
    return role in ("Standalone", "Leader")


def pod_labels(replica: str, engine: dict[str, Any], role: str) -> dict[str, str]:
    """Modelplane's labels for one member's pods (merged over the member's own labels)."""
    labels = owned(replica, engine["name"])
    labels[ROLE] = role
    if is_serving_role(role):
        labels[SERVING] = "true"
        phase_role = _PHASE_ROLES.get(engine.get("phase", ""))
        if phase_role:
            labels[LLMD_ROLE] = phase_role
    return labels
