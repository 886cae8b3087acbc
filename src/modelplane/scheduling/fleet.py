"""The fleet as the scheduler reads it: clusters, their labels, taints and pools."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from modelplane.scheduling.capacity import Pool
from modelplane.scheduling.devices import DeviceKind


@dataclass(frozen=True, eq=False)
class Cluster:
    name: str
    labels: dict[str, str]
    taints: tuple[tuple[str, str, str], ...]
    pools: tuple[Pool, ...]
    source: str = "Existing"

    def pool(self, name: str) -> Pool | None:
        return next((p for p in self.pools if p.name == name), None)


def parse_clusters(
    clusters: list[dict[str, Any]], kinds: dict[str, tuple[DeviceKind, ...]]
) -> list[Cluster]:
    parsed = []
    for cluster in clusters:
        name = str(cluster.get("metadata", {}).get("name", ""))
        spec = cluster.get("spec") or {}
        # nodePools is a list-map keyed by name: its order means nothing, so pools are taken
        # (and preferred, among equal fits) in name order, whatever order they are listed in.
        pools = tuple(
            sorted(
                (
                    Pool(
                        name,
                        str(p.get("name", "")),
                        str(p.get("className", "")),
                        kinds.get(str(p.get("className", "")), ()),
                        max(0, int(p.get("nodeCount", 1))),
                    )
                    for p in spec.get("nodePools") or ()
                ),
                key=lambda p: p.name,
            )
        )
        taints = (
            tuple(
                sorted(
                    (str(t.get("key", "")), str(t.get("value", "")), str(t.get("effect", "")))
                    for t in spec["taints"]
                )
            )
            if spec.get("taints")
            else ()
        )
        labels = dict(cluster.get("metadata", {}).get("labels") or {})
        source = str((spec.get("cluster") or {}).get("source") or "")
        parsed.append(Cluster(name, labels, taints, pools, source))
    # Names are unique in the API; a duplicated input keeps its first entry.
    unique = {c.name: c for c in reversed(parsed)}
    return sorted(unique.values(), key=lambda c: c.name)


def tolerated(taint: tuple[str, str, str], tolerations: list[dict[str, Any]]) -> bool:
    key, value, effect = taint
    for t in tolerations:
        if t.get("effect") and t["effect"] != effect:
            continue
        if t.get("operator", "Equal") == "Exists":
            if not t.get("key") or t["key"] == key:
                return True
        elif t.get("key", "") == key and str(t.get("value", "")) == value:
            return True
    return False


def untolerated(cluster: Cluster, tolerations: list[dict[str, Any]], effects: set[str]) -> str:
    for taint in cluster.taints:
        if taint[2] in effects and not tolerated(taint, tolerations):
            key, value, effect = taint
            return f"{effect} taint {key}={value}" if value else f"{effect} taint {key}"
    return ""
