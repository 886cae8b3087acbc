"""Names of the workload half's remote objects and composition resource keys.

Every remote name is a hashed DNS label: readable replica/engine/role text, then a hash of
the parts *and* of the object kind. The kind in the hash keeps names of different kinds apart
even when the visible text matches (an engine named ``epp`` never yields the name of the
picker's Deployment or Service), which matters because a LeaderWorkerSet skips creating its
headless Service when a Service of its own name already exists.
"""

from __future__ import annotations

from modelplane.kube.names import DNS_LABEL_MAX, child_name

# Grove validates PodCliqueSet + scaling group + clique names together at <= 45 characters.
GROVE_COMBINED_MAX = 45
GANG_GROUP = "gang"
LEADER_CLIQUE = "leader"
WORKER_CLIQUE = "worker"
# One clique per worker rank (worker1 .. worker63): Grove numbers pods per clique, so a clique of
# one pod is the only way a rank can be written into the template.
MAX_WORKER_CLIQUE = f"{WORKER_CLIQUE}63"
# Grove sums the three names without separators (validatePodNameConstraints).
PODCLIQUESET_MAX = GROVE_COMBINED_MAX - len(GANG_GROUP) - len(MAX_WORKER_CLIQUE)
# A StatefulSet's pods carry the label controller-revision-hash: <statefulset>-<hash of up to 10>,
# so a StatefulSet named over 52 characters never gets pods (kubernetes#64023). A LeaderWorkerSet
# names its leader StatefulSet like itself and each worker one <lws>-<group index> (up to 63).
LEADERWORKERSET_MAX = DNS_LABEL_MAX - 1 - 10 - len("-63")
NAMESPACE_KEY = "namespace"


def workload_name(replica: str, engine: str) -> str:
    """The engine's Deployment."""
    return child_name("workload", replica, engine)


def leaderworkerset_name(replica: str, engine: str) -> str:
    """The engine's LeaderWorkerSet: short enough for its StatefulSets' pods, and a valid name
    for the headless Service it creates. Same as the Deployment name whenever that fits."""
    return child_name("workload", replica, engine, max_len=LEADERWORKERSET_MAX, letter_first=True)


def podcliqueset_name(replica: str, engine: str) -> str:
    """The engine's Grove PodCliqueSet, short enough for Grove's combined-name budget."""
    return child_name("podcliqueset", replica, engine, max_len=PODCLIQUESET_MAX, letter_first=True)


def worker_clique(rank: int) -> str:
    """The clique of the gang's worker of ``rank`` (1 .. worker.nodes)."""
    return f"{WORKER_CLIQUE}{rank}"


def scaling_group_name(podcliqueset: str) -> str:
    """The PodCliqueScalingGroup Grove creates for the gang (PodCliqueSet replica 0)."""
    return f"{podcliqueset}-0-{GANG_GROUP}"


def claim_template_name(replica: str, engine: str, role: str, revision: str) -> str:
    """The member's ResourceClaimTemplate (one per claiming member) for one set of requests.

    A template's spec is immutable, so ``revision`` (a digest of its requests) is in the hash:
    changed requests get a new template instead of an update the API server rejects.
    """
    return child_name(f"resourceclaimtemplate/{revision}", replica, engine, role.lower())


def workload_key(engine: str) -> str:
    """Composition resource name of the engine's workload Object."""
    return f"workload-{engine}"


def gang_status_key(engine: str) -> str:
    """Composition resource name of the Observe-only Object on a Grove gang's scaling group."""
    return f"gang-{engine}"


def claim_key(engine: str, role: str, revision: str) -> str:
    """Keyed by revision too, so Crossplane deletes a template its member no longer uses."""
    return f"claims-{engine}-{role.lower()}-{revision}"
