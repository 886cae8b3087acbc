"""NetworkPolicy ingress as the API defines it (kubernetes/api networking/v1 types.go, and the
NetworkPolicy concept page), for tests to ask whether a composed set of policies lets one pod
open a connection to another.

A pod no Ingress policy of its namespace selects accepts everything; a selected pod accepts a
connection when one rule of one selecting policy admits it: a rule with no ``from`` admits
every source, and a rule with no ``ports`` every port. A peer with only ``podSelector`` matches
pods of the policy's own namespace; with ``namespaceSelector`` the namespaces it selects (``{}``:
all). A named port is resolved against the destination pod's container ports.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

Obj = dict[str, Any]
NAMESPACE_NAME = "kubernetes.io/metadata.name"


@dataclass(frozen=True)
class Pod:
    namespace: str
    labels: Mapping[str, str]
    ports: Mapping[str, int] = field(default_factory=dict)
    """Container port numbers by name (a named port in a policy resolves through them)."""


def pod_ports(pod_spec: Obj) -> dict[str, int]:
    return {
        str(p["name"]): int(p["containerPort"])
        for c in pod_spec.get("containers") or []
        for p in c.get("ports") or []
        if p.get("name")
    }


def matches(selector: Obj | None, labels: Mapping[str, str]) -> bool:
    """A LabelSelector against a set of labels (an empty selector matches everything)."""
    selector = selector or {}
    if any(labels.get(k) != v for k, v in (selector.get("matchLabels") or {}).items()):
        return False
    return all(_expression(e, labels) for e in selector.get("matchExpressions") or [])


def _expression(e: Obj, labels: Mapping[str, str]) -> bool:
    key, op, values = e["key"], e["operator"], e.get("values") or []
    if op == "Exists":
        return key in labels
    if op == "DoesNotExist":
        return key not in labels
    if op == "In":
        return key in labels and labels[key] in values
    if op == "NotIn":
        return key not in labels or labels[key] not in values
    raise AssertionError(f"unknown operator {op}")


def selects(policy: Obj, pod: Pod) -> bool:
    spec = policy["spec"]
    return (
        policy["metadata"]["namespace"] == pod.namespace
        and "Ingress" in (spec.get("policyTypes") or ["Ingress"])
        and matches(spec.get("podSelector"), pod.labels)
    )


def admits(
    policies: Iterable[Obj], source: Pod, dest: Pod, port: int, protocol: str = "TCP"
) -> bool:
    """Whether ``dest`` accepts a connection from ``source`` to ``port`` under ``policies``."""
    selecting = [p for p in policies if selects(p, dest)]
    if not selecting:
        return True
    return any(
        _rule_admits(rule, p["metadata"]["namespace"], source, dest, port, protocol)
        for p in selecting
        for rule in p["spec"].get("ingress") or []
    )


def _rule_admits(
    rule: Obj, namespace: str, source: Pod, dest: Pod, port: int, protocol: str
) -> bool:
    peers = rule.get("from")
    if peers and not any(_peer(peer, namespace, source) for peer in peers):
        return False
    ports = rule.get("ports")
    return not ports or any(_port(p, dest, port, protocol) for p in ports)


def _peer(peer: Obj, namespace: str, source: Pod) -> bool:
    assert "ipBlock" not in peer, "no composed policy names addresses"
    if "namespaceSelector" in peer:
        ns_labels = {NAMESPACE_NAME: source.namespace}
        if not matches(peer["namespaceSelector"], ns_labels):
            return False
    elif source.namespace != namespace:
        return False
    return "podSelector" not in peer or matches(peer["podSelector"], source.labels)


def _port(p: Obj, dest: Pod, port: int, protocol: str) -> bool:
    if p.get("protocol", "TCP") != protocol:
        return False
    want = p.get("port")
    if want is None:
        return True
    if isinstance(want, str):
        return dest.ports.get(want) == port
    return want <= port <= int(p.get("endPort", want))
