"""What a replica runs of what its deployment stamped: pods held at another pods revision, and
the revision its status describes.

A ModelDeployment stamps each replica with the pods revision it was updated at
(``modelplane.ai/pods-revision``, a stamped annotation: a new revision rolls out through the
deployment's strategy like a template change). Until its rollout reaches a replica stamped at
another revision, the replica keeps its pod-bearing objects (workloads, the picker's Deployment
and ConfigMap) exactly as observed, so an upgrade of Modelplane restarts no engine or picker by
itself. A replica that no deployment placed is composed as it is, always.

Each workload object carries the stamp (``modelplane.ai/template-hash``) it was composed for,
and ``RevisionReady`` says whether the cluster runs it (``compose/shared/replica_revision.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from modelplane.compose.pods_revision import bears_pods, pods_revision
from modelplane.compose.shared.remote import MANIFEST, OBSERVED_MANIFEST
from modelplane.compose.shared.replica_revision import revision_message, stamp_of
from modelplane.composer import Condition
from modelplane.kube import objects
from modelplane.kube.objects import Obj
from modelplane.labels import DEPLOYMENT, PODS_REVISION, TEMPLATE_HASH
from modelplane.observed import carried, observed_ready
from modelplane.reasons import ModelReplica


def held(
    replica: Mapping[str, Any], resources: dict[str, Obj], observed: Mapping[str, Obj]
) -> dict[str, Obj]:
    """``resources``, with the observed pod-bearing objects kept as they run while the replica's
    deployment stamped it at another pods revision (its rollout has not reached it yet)."""
    if DEPLOYMENT not in objects.labels(replica):
        return resources
    if objects.annotations(replica).get(PODS_REVISION) == pods_revision():
        return resources
    out = dict(resources)
    for key, obj in resources.items():
        running = observed.get(key)
        if running is not None and bears_pods(obj):
            out[key] = carried(running)
    return out


WORKLOAD_KINDS = frozenset({"Deployment", "LeaderWorkerSet", "PodCliqueSet"})
"""Remote kinds that run the replica's pods and report, through their Object's readiness
policy, whether every copy runs their current spec."""


def marked(replica: Mapping[str, Any], resources: dict[str, Obj]) -> dict[str, Obj]:
    """``resources``, each workload object annotated with the stamp the replica composed it
    for, so that what its cluster runs can be told from what it ran before. On the object's
    metadata, not its pods: the mark restarts nothing."""
    stamp = stamp_of(replica)
    if stamp is None:
        return resources
    out = dict(resources)
    for key, obj in resources.items():
        if objects.dig(obj, *MANIFEST, "kind") in WORKLOAD_KINDS:
            out[key] = objects.assoc(obj, STAMP, stamp)
    return out


def revision_ready(
    replica: Mapping[str, Any], resources: Mapping[str, Obj], observed: Mapping[str, Obj]
) -> Condition | None:
    """Whether the replica's cluster runs the stamp it was given: every workload it composes
    observed carrying that stamp and Ready. None for a replica no deployment stamped."""
    stamp = stamp_of(replica)
    if stamp is None:
        return None
    cluster = str(objects.dig(replica, "spec", "clusterName") or "")
    waiting = [
        why
        for key, obj in sorted(resources.items())
        if objects.dig(obj, *MANIFEST, "kind") in WORKLOAD_KINDS
        for why in [_not_running(stamp, objects.mapping(obj, *MANIFEST), observed.get(key))]
        if why
    ]
    if waiting:
        message = revision_message(stamp, f"not ready on {cluster}: {'; '.join(waiting)}")
        return Condition(ModelReplica.REVISION_READY, "False", ModelReplica.UPDATING, message)
    message = revision_message(
        stamp, f"ready on {cluster}: every workload runs it, every copy ready"
    )
    return Condition(ModelReplica.REVISION_READY, "True", ModelReplica.RUNNING, message)


def _not_running(stamp: str, manifest: Mapping[str, Any], observed: Obj | None) -> str:
    """Why the workload does not run ``stamp`` ready on its cluster, or ""."""
    what = f"{manifest.get('kind')} {objects.dig(manifest, 'metadata', 'name')}"
    remote = objects.dig(observed, *OBSERVED_MANIFEST)
    if not remote:
        return f"{what} not observed yet"
    runs = stamp_of(remote)
    if runs != stamp:
        return f"{what} runs {f'revision {runs}' if runs else 'an earlier revision'}"
    if not observed_ready(observed):
        return f"{what} not ready (copies updating)"
    return ""


STAMP = (*MANIFEST, "metadata", "annotations", TEMPLATE_HASH)
"""Where a wrapped workload carries the stamp it was composed for."""
