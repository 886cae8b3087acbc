"""Every label Modelplane stamps, in one place.

On remote objects, so `kubectl` on a workload cluster shows whose is what: the InferencePool
selects serving pods by ``SERVING``; prefill/decode routing reads ``LLMD_ROLE``; the picker
reads each pod's metrics by the names of its ``ENGINE_TYPE``. On ModelReplicas, the fleet
labels a ModelDeployment stamps and the scheduler reads back (``DEPLOYMENT``, ``REPLICA_INDEX``,
...).
Everything under ``modelplane.ai/`` is Modelplane's own: user labels with that prefix are
overwritten, never trusted. The label sets a replica's objects carry are built in
``compose/modelreplica/labelsets.py``.
"""

MANAGED_BY = "app.kubernetes.io/managed-by"
REPLICA = "modelplane.ai/replica"
ENGINE = "modelplane.ai/engine"
ROLE = "modelplane.ai/role"
SERVING = "modelplane.ai/serving"
POOL = "modelplane.ai/pool"
COMPONENT = "modelplane.ai/component"
LLMD_ROLE = "llm-d.ai/role"
ENGINE_TYPE = "llm-d.ai/engine-type"


# The fleet: what a ModelDeployment stamps on each ModelReplica, and the scheduler reads back.
DEPLOYMENT = "modelplane.ai/deployment"
"""Label: the owning ModelDeployment's name."""

DEPLOYMENT_NAMESPACE = "modelplane.ai/deployment-namespace"
"""Label: the owning ModelDeployment's namespace (identity falls back to it when a replica has no
``metadata.namespace``, e.g. in a hand-written render input)."""

REPLICA_INDEX = "modelplane.ai/replica-index"
"""Label: the replica's stable index within its deployment (a decimal integer)."""

CLUSTER = "modelplane.ai/cluster"
"""Label: the InferenceCluster the replica is pinned to (mirrors ``spec.clusterName``)."""


TERMINATION_GRACE = "modelplane.ai/termination-grace-period-seconds"
"""Annotation a ModelDeployment stamps on each ModelReplica: its pods' termination grace period
(``spec.drain.terminationGracePeriodSeconds``); absent, the pods keep Kubernetes' default."""

PRE_STOP_SECONDS = "modelplane.ai/pre-stop-seconds"
"""Annotation beside ``TERMINATION_GRACE``: how long the engine keeps serving in-flight requests
after its pod starts terminating, before it is signalled (a preStop sleep)."""

MODEL_REVISION = "modelplane.ai/model-revision"
"""Annotation a ModelDeployment stamps on each ModelReplica with ``spec.modelCacheRef``: the
revision of the ModelCache's weights its engines read; absent, what ``cache.replica_weights``
resolves for an unpinned replica."""

TEMPLATE_HASH = "modelplane.ai/template-hash"
"""Annotation a ModelDeployment stamps on each ModelReplica: a hash of what it is stamped with
(spec, labels, the annotations its pods read). The replica carries it onto its workload objects
and its ``RevisionReady`` condition names it once its cluster runs it
(``compose/shared/replica_revision.py``)."""

SURGE_FOR = "modelplane.ai/surge-for"
"""Annotation on a ModelReplica placed by a rollout's surge: the name of the outdated replica it
replaces, which leaves (two-phase) once this one serves."""

ROUTES_POOLS = "modelplane.ai/routes-pools"
"""Label ("true") on a ModelService's route Objects: a replica leaving its deployment is deleted
only once none of them references its InferencePool."""

HOLDS_ROUTED = "modelplane.ai/holds-routed-replica"
"""Label ("true") on a ModelService's Usages of the replicas its routes name: a deployment lists
them, and deletes a leaving replica only once none holds it."""


# The serving stack: what an InferenceCluster composes on its cluster.
STACK_COMPONENT = "modelplane.ai/stack-component"
"""Label: the serving-stack component (cert-manager, grove, ...) a composed Release, Object or
Usage belongs to, so each component's resources and readiness can be read together."""

STACK_WAVE = "modelplane.ai/stack-wave"
"""Label on an InferenceCluster: the wave (a decimal from 0) in which it takes a new release's
default serving-stack versions, once every cluster of the wave before runs them. Unlabelled: in
no wave, at once."""

PODS_REVISION = "modelplane.ai/pods-revision"
"""Annotation a ModelDeployment stamps on each ModelReplica: the pods revision (what this
Modelplane composes into pods of its own accord) the replica was last updated at. A replica
stamped at another revision keeps the pods it runs until its deployment's rollout reaches it."""


DELETION_ATTEMPT = "usage.crossplane.io/deletion-attempt-with-policy"
"""Crossplane's annotation (v2.3.4 ``internal/protection/usage.go``,
``AnnotationKeyDeletionAttempt``) on an object whose delete a Usage refused: the delete is
replayed when a Usage of it with ``replayDeletion`` goes. Not Modelplane's, but read by it: on
a replica it dooms the replica, on an InferenceCluster it asks for the cluster to be emptied
(docs/operations.md)."""
