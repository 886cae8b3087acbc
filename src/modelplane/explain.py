"""`modelplane explain`: why each replica of each ModelDeployment went where it did.

Reads manifests (files or directories of YAML), runs the scheduler for every ModelDeployment
in them and prints, per deployment, every cluster and pool considered and why it was taken or
rejected, from the scheduler's own trace. Deployments are explained in namespace/name order, and
each is charged the replicas placed for the ones before it, as successive reconciles would be.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import yaml

from modelplane.compose.admission import Admission
from modelplane.compose.modeldeployment.stamp import replica_name, stamp
from modelplane.composer import namespace_of
from modelplane.labels import DEPLOYMENT
from modelplane.scheduling.placement import POOL_ROOM, ROOM, Schedule
from modelplane.scheduling.scheduler import schedule

Obj = dict[str, Any]
STDIN = Path("-")
"""The path ``-``: manifests read from standard input (e.g. piped from ``modelplane render``)."""
_KINDS = ("InferenceCluster", "InferenceClass", "ModelReplica", "ModelDeployment")


class ManifestError(ValueError):
    pass


def load_manifests(paths: Iterable[str]) -> list[Obj]:
    """Every YAML document in the files given, recursively in the directories given, and on
    standard input for ``-``."""
    docs: list[Obj] = []
    for path in _files(paths):
        text = sys.stdin.read() if path == STDIN else path.read_text()
        try:
            loaded = list(yaml.safe_load_all(text))
        except yaml.YAMLError as e:
            raise ManifestError(f"{path}: not valid YAML: {e}") from None
        for doc in loaded:
            if doc is None:
                continue
            if not isinstance(doc, dict):
                raise ManifestError(f"{path}: a document is not a Kubernetes object")
            docs.append(doc)
    return docs


def explain(docs: list[Obj]) -> str:
    by_kind: dict[str, list[Obj]] = {k: [] for k in _KINDS}
    for doc in docs:
        if doc.get("kind") in by_kind:
            by_kind[str(doc["kind"])].append(doc)
    clusters = by_kind["InferenceCluster"]
    classes = by_kind["InferenceClass"]
    replicas = list(by_kind["ModelReplica"])
    deployments = sorted(by_kind["ModelDeployment"], key=_identity)
    if not deployments:
        return "no ModelDeployment in the input\n"
    out: list[str] = []
    for md in deployments:
        plan = schedule(md, clusters, classes, replicas)
        out.extend(explain_schedule(md, plan))
        if not plan.selector_errors:
            replicas = [r for r in replicas if not _owned_by(r, md)]
            replicas += [stamp(md, p, p.existing or replica_name(md, p)) for p in plan.placements]
    return "\n".join(out) + "\n"


def explain_schedule(md: Obj, plan: Schedule) -> list[str]:
    ns, name = _identity(md)
    lines = [f"ModelDeployment {ns}/{name}: {plan.scheduled} of {plan.desired} replicas placed"]
    for err in plan.selector_errors:
        lines.append(f"  invalid selector: {err}")
    for c in plan.trace:
        verdict = "taken" if c.indices else ("not taken" if c.eligible else "rejected")
        if not c.indices and c.reason == ROOM:
            verdict = "not needed"
        held = f" (replicas {', '.join(str(i) for i in c.indices)})" if c.indices else ""
        reason = f": {c.reason}" if c.reason else ""
        lines.append(f"  cluster {c.cluster}: {verdict}{held}{reason}")
        for p in c.pools:
            pool_reason = f": {p.reason}" if p.reason else ""
            pool_verdict = "taken" if p.taken else "rejected"
            if not p.taken and p.reason == POOL_ROOM:
                pool_verdict = "not needed"
            lines.append(f"    pool {p.pool}: {pool_verdict}{pool_reason}")
    for r in plan.removed:
        lines.append(f"  removing replica {r.index} ({r.name}) from {r.cluster}: {r.reason}")
    if plan.scheduled < plan.desired:
        lines.append(f"  short by {plan.desired - plan.scheduled}:")
        lines.extend(f"    {s}" for s in plan.shortfall)
    return lines


def explain_command(paths: tuple[str, ...]) -> int:
    try:
        docs = load_manifests(paths)
    except (ManifestError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    docs, refused = Admission.default().admit_inputs(docs)
    if refused:
        print("\n".join(refused), file=sys.stderr)
        return 1
    sys.stdout.write(explain(docs))
    return 0


def _files(paths: Iterable[str]) -> Iterator[Path]:
    for raw in paths:
        path = Path(raw)
        if raw == "-":
            yield STDIN
        elif path.is_dir():
            yield from sorted(p for p in path.rglob("*") if p.suffix in (".yaml", ".yml"))
        elif path.exists():
            yield path
        else:
            raise ManifestError(f"{raw}: no such file or directory")


def _identity(obj: Obj) -> tuple[str, str]:
    return namespace_of(obj), str((obj.get("metadata") or {}).get("name", ""))


def _owned_by(replica: Obj, md: Obj) -> bool:
    labels = (replica.get("metadata") or {}).get("labels") or {}
    ns, name = _identity(md)
    return labels.get(DEPLOYMENT) == name and _identity(replica)[0] == ns
