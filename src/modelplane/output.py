"""How rendered documents are printed beside the crossplane-render YAML stream
(``manifests.dump``): a kubectl ``List``, kubectl's ``-o name``, and a tree of what was composed.

Every printer reads the same document stream ``modelplane render`` prints as YAML, so each
output mode is a view of it: the tree is rebuilt from the stream's order (each composite, its
composed resources, then each nested composite the same way) and from the labels and
annotations Crossplane puts on composed resources.
"""

from __future__ import annotations

import json
import re
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TextIO

from modelplane import owners
from modelplane.kube import objects
from modelplane.kube.objects import Obj
from modelplane.shortlist import counted

# Crossplane's own annotation and label on composed resources, and render's Result kind.
RESOURCE_NAME = owners.RESOURCE_NAME
COMPOSITE_LABEL = owners.COMPOSITE_LABEL
RESULT_API_VERSION = "render.crossplane.io/v1beta1"
# provider-kubernetes: an Object carries a manifest to the cluster its provider config reaches.
REMOTE_KINDS = {("kubernetes.m.crossplane.io", "Object"), ("kubernetes.crossplane.io", "Object")}
# Crossplane's deletion protection: one per dependency between composed resources, so a fleet's
# tree is nearly half Usages, and what they guard is already in the tree.
USAGE_KINDS = {("protection.crossplane.io", "Usage"), ("protection.crossplane.io", "ClusterUsage")}
_UNREADY = re.compile(r"^Unready resources: (?P<keys>.*)$")


def without_results(docs: Iterable[Obj]) -> list[Obj]:
    """The stream without the function's Result documents: ``crossplane render`` prints them
    only when asked (``--include-function-results``)."""
    return [d for d in docs if not _is_result(d)]


def json_list(docs: Iterable[Obj]) -> str:
    """A ``v1`` ``List``, as ``kubectl get -o json`` prints several objects."""
    listed = {
        "apiVersion": "v1",
        "items": list(docs),
        "kind": "List",
        "metadata": {"resourceVersion": ""},
    }
    return json.dumps(listed, indent=4, sort_keys=True) + "\n"


def names(docs: Iterable[Obj]) -> str:
    """``kind.group/name`` per object, as ``kubectl -o name`` prints them (results omitted:
    they are not objects)."""
    return "".join(f"{resource_name(d)}\n" for d in docs if not _is_result(d))


def resource_name(doc: Obj) -> str:
    group = _group(doc)
    kind = str(doc.get("kind", "")).lower()
    meta = doc.get("metadata") or {}
    name = meta.get("name") or meta.get("generateName", "")
    return f"{kind}{'.' + group if group else ''}/{name}"


# --- tree ---------------------------------------------------------------------------------


@dataclass
class Node:
    """One composite or composed resource of the tree."""

    doc: Obj
    composite: bool
    children: list[Node] = field(default_factory=list)
    results: list[Obj] = field(default_factory=list)
    ready: str = "-"
    cluster: str = ""


def tree(docs: Sequence[Obj], is_composite: Callable[[Obj], bool]) -> list[Node]:
    """The composition trees of a rendered stream: each top-level composite with its composed
    resources, nested composites holding theirs."""
    roots: list[Node] = []
    open_: list[Node] = []  # the composite being printed and its ancestors, outermost first
    for doc in docs:
        if _is_result(doc):
            if open_:
                open_[-1].results.append(doc)
            continue
        node = Node(doc, is_composite(doc))
        owner = objects.labels(doc).get(COMPOSITE_LABEL)
        if owner is None:
            open_ = []
        while open_ and not _owned_by(doc, owner, open_[-1].doc):
            open_.pop()
        (open_[-1].children if open_ else roots).append(node)
        if node.composite:
            open_.append(node)
    clusters = _provider_configs(docs)
    for root in roots:
        _annotate(root, None, clusters)
    return roots


def _owned_by(doc: Obj, owner: str | None, composite: Obj) -> bool:
    """Whether ``doc``, labelled for composite ``owner``, is ``composite``'s: by its controller
    reference's uid or kind when it has one, as a name is shared across kinds (a ModelService
    named after its ModelDeployment)."""
    meta = objects.metadata(composite)
    if meta.get("name") != owner:
        return False
    ref = owners.controller_reference(doc)
    if ref is None:
        return True
    if ref.get("uid") and meta.get("uid"):
        return bool(ref["uid"] == meta["uid"])
    return ref.get("kind") in (None, composite.get("kind"))


def _annotate(node: Node, parent: Node | None, clusters: dict[str, str]) -> None:
    doc = node.doc
    if node.composite:
        node.ready = _condition(doc, "Ready").get("status", "-")
        node.cluster = str(objects.dig(doc, "spec", "clusterName") or "")
    elif parent is not None:
        key = objects.annotations(doc).get(RESOURCE_NAME)
        node.ready = "False" if key in _unready(parent.doc) else "True"
    if _is_remote(doc):
        ref = str(objects.dig(doc, "spec", "providerConfigRef", "name", default=""))
        node.cluster = clusters.get(ref, ref)
    for child in node.children:
        _annotate(child, node, clusters)


def print_tree(
    roots: Sequence[Node], out: TextIO | None = None, *, show_usages: bool = False
) -> None:
    """One line per composite and composed resource, indented as the composition tree (Usages
    left out unless ``show_usages``); then a line with the counts."""
    out = out or sys.stdout
    shown = roots if show_usages else [_without_usages(r) for r in roots]
    labels = _labels_of(shown)
    rows: list[tuple[str, str, str, str]] = [("NAME", "CLUSTER", "READY", "STATUS")]

    def walk(node: Node, prefix: str, branch: str, depth: int) -> None:
        name = prefix + branch + labels[id(node)]
        rows.append((name, node.cluster, node.ready, _status(node)))
        below = prefix + ("" if depth == 0 else ("│  " if branch == "├─ " else "   "))
        for i, child in enumerate(node.children):
            walk(child, below, "└─ " if i == len(node.children) - 1 else "├─ ", depth + 1)

    for root in shown:
        walk(root, "", "", 0)
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    for name, cluster, ready, status in rows:
        line = f"{name:<{widths[0]}}   {cluster:<{widths[1]}}   {ready:<{widths[2]}}   {status}"
        out.write(line.rstrip() + "\n")
    hidden = _count_usages(roots) if not show_usages else 0
    out.write(summary(roots) + (f", {hidden} Usages hidden (--show-usages)" if hidden else ""))
    out.write("\n")


def _without_usages(node: Node) -> Node:
    children = [_without_usages(c) for c in node.children if not _is_usage(c.doc)]
    return replace(node, children=children)


def _count_usages(roots: Sequence[Node]) -> int:
    return sum(1 for r in roots for n, _ in _with_depth(r, 0) if _is_usage(n.doc))


def _is_usage(doc: Obj) -> bool:
    return (_group(doc), doc.get("kind")) in USAGE_KINDS


def _labels_of(roots: Sequence[Node]) -> dict[int, str]:
    """Each node's label, with its API group where two rows of different groups would otherwise
    read the same (helm's and provider-kubernetes' ClusterProviderConfig of one cluster)."""
    nodes = [(n, depth) for r in roots for n, depth in _with_depth(r, 0)]
    plain = {id(n): _label(n, depth) for n, depth in nodes}
    groups: dict[str, set[str]] = {}
    for n, _ in nodes:
        groups.setdefault(plain[id(n)], set()).add(_group(_shown(n.doc)))
    return {
        id(n): _label(n, depth, grouped=True) if len(groups[plain[id(n)]]) > 1 else plain[id(n)]
        for n, depth in nodes
    }


def _with_depth(node: Node, depth: int) -> Iterable[tuple[Node, int]]:
    yield node, depth
    for child in node.children:
        yield from _with_depth(child, depth + 1)


def summary(roots: Sequence[Node]) -> str:
    """The closing line: how many composites and composed resources, and how many are ready."""
    nodes = [n for r in roots for n, _ in _with_depth(r, 0)]
    composites = [n for n in nodes if n.composite]
    composed = [n for n in nodes if not n.composite]
    clusters = _clusters(nodes)
    warnings = sum(_warnings(n) for n in composites)
    line = (
        f"{counted(len(composites), 'composite')} ({_ready(composites)}), "
        f"{counted(len(composed), 'composed resource')} ({_ready(composed)})"
    )
    if clusters:
        line += f", on {counted(len(clusters), 'cluster')}"
    if warnings:
        line += f", {counted(warnings, 'warning')}"
    return line


def _clusters(nodes: Sequence[Node]) -> list[str]:
    """The clusters the nodes run on, by name."""
    # Only clusters that exist: a gateway naming a cluster that is not there runs on none.
    known = {objects.name(n.doc) for n in nodes if n.doc.get("kind") == "InferenceCluster"}
    return sorted({n.cluster for n in nodes if n.cluster and n.cluster in known})


def _warnings(node: Node) -> int:
    return sum(1 for r in node.results if r.get("severity") == "SEVERITY_WARNING")


def _ready(nodes: Sequence[Node]) -> str:
    return f"{sum(1 for n in nodes if n.ready == 'True')} ready"


def _label(node: Node, depth: int, *, grouped: bool = False) -> str:
    doc = _shown(node.doc)
    meta = objects.metadata(doc)
    name = meta.get("name") or meta.get("generateName") or "?"
    namespace = meta.get("namespace") if depth == 0 else None
    group = _group(doc) if grouped else ""
    kind = f"{doc.get('kind')}.{group}" if group else str(doc.get("kind"))
    return f"{kind}/{namespace + '/' if namespace else ''}{name}"


def _shown(doc: Obj) -> Obj:
    """What a row shows: a provider-kubernetes Object's manifest, else the document."""
    if _is_remote(doc):
        manifest = objects.dig(doc, "spec", "forProvider", "manifest") or {}
        if isinstance(manifest, dict) and manifest.get("kind"):
            return manifest
    return doc


def _group(doc: Obj) -> str:
    return str(doc.get("apiVersion", "")).rpartition("/")[0]


def _status(node: Node) -> str:
    """A composite's Ready reason when it is ready, else its first condition that is not True
    (what keeps it from being ready: Crossplane's own ``Creating`` names nothing); warnings."""
    if not node.composite:
        return ""
    conditions = objects.status(node.doc).get("conditions") or []
    ready = _condition(node.doc, "Ready")
    failing = [c for c in conditions if c.get("type") != "Ready" and c.get("status") != "True"]
    shown = failing[0] if failing and ready.get("status") != "True" else ready
    status = str(shown.get("reason", ""))
    warnings = _warnings(node)
    if warnings:
        status += f" ({counted(warnings, 'warning')})"
    return status


def _provider_configs(docs: Iterable[Obj]) -> dict[str, str]:
    """Provider config name -> the InferenceCluster publishing it, when the stream holds it."""
    out = {}
    for doc in docs:
        ref = objects.mapping(doc, "status", "providerConfigRef")
        if doc.get("kind") == "InferenceCluster" and ref.get("name"):
            out[str(ref["name"])] = objects.name(doc)
    return out


def _unready(composite: Obj) -> set[str]:
    m = _UNREADY.match(str(_condition(composite, "Ready").get("message", "")))
    return set(m["keys"].split(", ")) if m else set()


def _condition(doc: Obj, kind: str) -> Mapping[str, Any]:
    return objects.condition(doc, kind) or {}


def _is_remote(doc: Obj) -> bool:
    return (_group(doc), doc.get("kind")) in REMOTE_KINDS


def _is_result(doc: Obj) -> bool:
    return doc.get("apiVersion") == RESULT_API_VERSION and doc.get("kind") == "Result"


# --- progress -----------------------------------------------------------------------------


class Progress:
    """A single updating line on a terminal's stderr for a render that takes a while: silent
    for the first ``after`` seconds, and never written anywhere but a terminal."""

    def __init__(self, stream: TextIO | None = None, after: float = 1.0) -> None:
        self.stream = stream or sys.stderr
        self.enabled = _is_terminal(self.stream)
        self.start = time.monotonic()
        self.after = after
        self.shown = False
        self._last = 0.0

    def __call__(self, passes: int, composites: int) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self.start < self.after or now - self._last < 0.1:
            return
        self._last = now
        self.shown = True
        self.stream.write(
            f"\rmodelplane render: {counted(composites, 'composite')} rendered, "
            f"pass {passes}, {now - self.start:.1f} s\x1b[K"
        )
        self.stream.flush()

    def close(self) -> None:
        if self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
