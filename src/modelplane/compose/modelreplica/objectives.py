"""The replica's InferenceObjectives: one per priority value, what the endpoint picker reads a
caller's priority from (issue #43 point 4; docs/design/shared-front-door.md, "Priority as
designed").

The picker takes a request's priority only from the InferenceObjective its objective header
names, found by name alone, and keeps only the objectives whose ``poolRef`` is its own pool
(llm-d-router v0.10.0 ``pkg/epp/datastore/datastore.go``,
``pkg/epp/controller/inferenceobjective_reconciler.go``). Each cluster's fleet hop names
``<pool>-priority-<value>`` from the front gateway's priority (``compose/inferencecluster/
fleetpriority.py``), so each replica composes that objective for every value a gateway may set:
eleven small objects, and no replica needs to know which gateways' values are in use. A header
naming no objective is priority 0, never a refusal (``pkg/epp/requestcontrol/director.go``),
so a missing objective costs a request its priority, not its answer.

In ``llm-d.ai/v1alpha2``, the group the picker prefers when the cluster serves it
(``pkg/epp/server/controller_config.go``, which looks once, at the picker's start). None for an
llm-d picker of a release that does not watch that group (``pickerversions.reads_objectives``).

Composed by the ModelReplica composer beside the replica's network objects, ready once they
exist (``objective_ready``); the serving stack applies the llm-d.ai InferenceObjective CRD before
StackReady (``compose/inferencecluster/components.py``).

A picker started before its cluster served that group (on a cluster upgraded in place, the
picker's roll can race the CRD's creation) reads no objectives until it restarts: its pod
template is marked (``served``) once its objectives are observed applied, which restarts it
once, and a new picker is marked from the start (its replica is placed behind StackReady).
"""

from __future__ import annotations

from modelplane.compose.modelreplica import picker
from modelplane.compose.modelreplica.context import ReplicaContext
from modelplane.compose.modelreplica.labelsets import owned
from modelplane.compose.modelreplica.remote import wrap
from modelplane.compose.shared import pickerversions
from modelplane.compose.shared.frontdoor import POOL_GROUP, PRIORITY_VALUES, priority_objective_name
from modelplane.compose.shared.remote import MANIFEST
from modelplane.composer import Ready
from modelplane.kube import objects
from modelplane.kube.objects import Obj
from modelplane.observed import applied

OBJECTIVE_API_VERSION = "llm-d.ai/v1alpha2"


def objective_key(value: int) -> str:
    """The composition resource name: ``objective-<value>``, ``m`` for a negative sign."""
    return f"objective-{'m' if value < 0 else ''}{abs(value)}"


KEYS = tuple(objective_key(value) for value in PRIORITY_VALUES)

SERVED_ANNOTATION = "modelplane.ai/objectives-served"
"""On the picker's pod template: the picker started when its cluster served the objectives."""
TEMPLATE = (*MANIFEST, "spec", "template")
"""Where a wrapped picker Deployment holds its pod template."""


def objective(ctx: ReplicaContext, pool: str, value: int) -> Obj:
    return {
        "apiVersion": OBJECTIVE_API_VERSION,
        "kind": "InferenceObjective",
        "metadata": {
            "name": priority_objective_name(pool, value),
            "namespace": ctx.namespace,
            "labels": owned(ctx.name),
        },
        "spec": {
            "priority": value,
            "poolRef": {"group": POOL_GROUP, "kind": "InferencePool", "name": pool},
        },
    }


def compose_objectives(ctx: ReplicaContext, pool: str) -> dict[str, Obj]:
    """The objectives of ``pool`` (composition resource name -> wrapped Object), or none for a
    picker that cannot read them."""
    if not pickerversions.reads_objectives(picker.image(ctx)):
        return {}
    return {
        objective_key(value): wrap(ctx, objective_key(value), objective(ctx, pool, value))
        for value in PRIORITY_VALUES
    }


def objective_ready(observed: Obj | None) -> Ready:
    """An objective's readiness for the replica: its Object exists. It only lends requests a
    priority; unapplied (a cluster not serving the CRD) they are served at priority 0, so the
    replica never waits for the cluster to apply one."""
    return "True" if observed is not None else "False"


def served(ctx: ReplicaContext, resources: dict[str, Obj]) -> dict[str, Obj]:
    """``resources``, the picker's pod template marked once the picker can read its objectives.

    The picker looks for the objectives' group once, at its start (llm-d-router v0.10.0
    ``pkg/epp/server/controller_config.go``), so the mark arriving on a picker that started
    without it restarts that picker after its cluster serves the group. The mark is never taken
    back: a picker restarts for it at most once."""
    deployment = resources.get(picker.DEPLOYMENT_KEY)
    reads = deployment is not None and pickerversions.reads_objectives(picker.image(ctx))
    if not reads or not _started_served(ctx):
        return resources
    path = (*TEMPLATE, "metadata", "annotations", SERVED_ANNOTATION)
    return {**resources, picker.DEPLOYMENT_KEY: objects.assoc(deployment, path, "true")}


def _started_served(ctx: ReplicaContext) -> bool:
    running = ctx.observed.get(picker.DEPLOYMENT_KEY)
    if running is None:
        # A new picker: its replica was placed behind StackReady, which waits for the CRD.
        return True
    template = objects.dig(running, *TEMPLATE)
    if SERVED_ANNOTATION in objects.annotations(template):
        return True
    # Applied, the objectives prove their cluster serves the group now.
    return all(applied(ctx.observed.get(key)) for key in KEYS)
