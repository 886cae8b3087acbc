"""Whether a cluster's labels satisfy a deployment's clusterSelector, and, when they do not,
the values the clusters carry for its keys: a typo (``region=us-wset``) shows beside them."""

from __future__ import annotations

from collections.abc import Mapping


def wanted(selector: Mapping[str, str]) -> str:
    """``k=v, ...`` in key order, as the selector is quoted everywhere."""
    return ", ".join(f"{k}={v}" for k, v in sorted(selector.items()))


def carries(labels: Mapping[str, str], selector: Mapping[str, str]) -> str:
    """What the labels hold for the selector's keys: ``region=us-west, no tier label``."""
    return ", ".join(
        f"{k}={labels[k]}" if k in labels else f"no {k} label" for k in sorted(selector)
    )


def unselected(labels: Mapping[str, str], selector: Mapping[str, str]) -> str:
    """Why a cluster with ``labels`` is not selected ("" when it is), quoting what it carries."""
    if all(labels.get(k) == v for k, v in selector.items()):
        return ""
    return (
        f"labels do not match clusterSelector {wanted(selector)} "
        f"(it carries {carries(labels, selector)})"
    )


def none_matches(selector: Mapping[str, str], clusters: Mapping[str, Mapping[str, str]]) -> str:
    """Why no cluster is selected: the selector, and the clusters grouped by what they carry for
    its keys, in name order: ``c1, c2: region=us-west; c3: no region label``."""
    line = f"no InferenceCluster matches clusterSelector {wanted(selector)}"
    if not clusters:
        return line
    groups: dict[str, list[str]] = {}
    for name in sorted(clusters):
        groups.setdefault(carries(clusters[name], selector), []).append(name)
    return f"{line}; " + "; ".join(f"{', '.join(names)}: {held}" for held, names in groups.items())
