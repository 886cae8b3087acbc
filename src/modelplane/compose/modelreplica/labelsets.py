"""The label sets a replica's remote objects and pods carry, built from ``modelplane.labels``.

Label values are hashed when a name cannot be one; each set is frozen (encoded once) and shared.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from modelplane.kube import objects
from modelplane.kube.names import dns_label
from modelplane.labels import (
    COMPONENT,
    DEPLOYMENT,
    DEPLOYMENT_NAMESPACE,
    ENGINE,
    ENGINE_TYPE,
    LLMD_ROLE,
    MANAGED_BY,
    REPLICA,
    ROLE,
    SERVING,
)
from modelplane.structs import frozen

_PHASE_ROLES = {"Prefill": "prefill", "Decode": "decode"}


_LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")


# Pure and called for every object of every reconcile: remember recent answers.
@lru_cache(maxsize=4096)
def label_value(name: str) -> str:
    """``name`` as a label value: unchanged when valid, else a hashed DNS label.

    Replica names may be 253-character subdomains and engine names any string, neither of
    which a label value can hold; the hash keeps distinct names distinct.
    """
    if len(name) <= 63 and _LABEL_VALUE.fullmatch(name):
        return name
    return dns_label(name, "")


# A replica's dozen objects all carry the same labels: one frozen (encoded once) dict each.
@lru_cache(maxsize=4096)
def owned(replica: str, engine: str | None = None) -> dict[str, str]:
    """The labels every remote object of a replica (and of one of its engines) carries.

    Frozen and shared: copy before adding to them.
    """
    labels = {MANAGED_BY: "modelplane", REPLICA: label_value(replica)}
    if engine is not None:
        labels[ENGINE] = label_value(engine)
    return frozen(labels)


@lru_cache(maxsize=4096)
def serving_selector(replica: str) -> dict[str, str]:
    """Selects exactly the pods that serve the replica's port: Standalone pods and gang leaders."""
    return frozen({REPLICA: label_value(replica), SERVING: "true"})


@lru_cache(maxsize=4096)
def component(replica: str, name: str) -> dict[str, str]:
    """Labels (and selector) of a replica's non-engine pods, e.g. its endpoint picker.

    They never carry ``SERVING``, so the InferencePool can never select them.
    """
    return frozen({**owned(replica), COMPONENT: name})


def deployment_of(replica: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """The name and namespace of the ModelDeployment that stamped ``replica`` (its labels).

    None for what it does not carry: a standalone replica carries neither.
    """
    found = objects.labels(replica)
    name, namespace = found.get(DEPLOYMENT), found.get(DEPLOYMENT_NAMESPACE)
    return (None if name is None else str(name), None if namespace is None else str(namespace))


# Not in any selector: a selector of a running workload cannot change, its pods' labels can.
@lru_cache(maxsize=4096)
def stamped(deployment: str | None, namespace: str | None) -> dict[str, str]:
    """The deployment labels a stamped replica's metric-exporting pods carry, copied verbatim
    (they are label values already), so one fleet-wide query can select a deployment's series.
    """
    labels = {}
    if deployment is not None:
        labels[DEPLOYMENT] = deployment
    if namespace is not None:
        labels[DEPLOYMENT_NAMESPACE] = namespace
    return frozen(labels)


@lru_cache(maxsize=4096)
def component_pod(
    replica: str, name: str, deployment: str | None, namespace: str | None
) -> dict[str, str]:
    """Labels of a non-engine pod's template: its ``component`` selector's, and the deployment's.

    Frozen and shared: copy before adding to them.
    """
    return frozen({**component(replica, name), **stamped(deployment, namespace)})


_STANDALONE = stamped(None, None)


def role_of(member: Mapping[str, Any]) -> str:
    """A member's role, Standalone when it names none (as the XRD defaults it)."""
    return str(member.get("role") or "Standalone")


def is_serving_role(role: str) -> bool:
    return role in ("Standalone", "Leader")


def pod_labels(
    replica: str, engine: dict[str, Any], role: str, deployment: Mapping[str, str] = _STANDALONE
) -> dict[str, str]:
    """Modelplane's labels for one member's pods (merged over the member's own labels).

    Serving pods also carry ``deployment`` (``stamped``): theirs are the engine series a
    deployment's autoscaling reads.
    """
    labels = {**owned(replica, engine["name"]), ROLE: role}
    if is_serving_role(role):
        labels[SERVING] = "true"
        labels.update(deployment)
        phase_role = _PHASE_ROLES.get(engine.get("phase", ""))
        if phase_role:
            labels[LLMD_ROLE] = phase_role
    return labels


# The engines whose metric names llm-d-router knows by these names (its default engineConfigs);
# every other engine is read with vLLM's names unless its pods say otherwise.
_ENGINE_TYPES = ("sglang", "vllm")


def engine_type(image: str) -> str | None:
    """The picker's engine type for an engine image, from its repository path; None if unknown.

    ``lmsysorg/sglang:v0.5.4`` is ``sglang``, ``vllm/vllm-openai:v0.23.0`` is ``vllm``.
    """
    repository = image.split("@", 1)[0].lower()
    if ":" in repository.rsplit("/", 1)[-1]:
        repository = repository.rsplit(":", 1)[0]
    host, _, rest = repository.partition("/")
    # The first part names a registry only when it looks like a host (docker's own rule).
    path = rest if rest and ("." in host or ":" in host or host == "localhost") else repository
    return next((kind for kind in _ENGINE_TYPES if kind in path), None)


def with_engine_type(pod: dict[str, str], image: str) -> dict[str, str]:
    """``pod`` labels with the engine type of ``image``, unless the member already names one."""
    if ENGINE_TYPE in pod:
        return pod
    kind = engine_type(image)
    return {**pod, ENGINE_TYPE: kind} if kind else pod
