"""Every condition type and reason Modelplane sets, as named constants per kind.

A class per kind holds its condition types and its reasons, each reason with the row
docs/troubleshooting.md shows for it: the condition and status it goes with, what it means and
what to do. tools/reasons_table.py writes the page's tables from here, so a reason cannot be set
without being documented.
"""

from __future__ import annotations

from typing import ClassVar, NamedTuple


class Row(NamedTuple):
    """A reason as its kind's table in docs/troubleshooting.md shows it."""

    reason: str
    condition: str
    status: str
    means: str
    do: str


_declared: list[Row] = []
"""Rows declared by the class body being executed, collected into its ROWS once it is done."""


def row(reason: str, condition: str, status: str, means: str, do: str) -> str:
    """Declare a reason of the kind whose class body calls it, and return the reason itself.

    Returning the plain string keeps the constant a ``str`` in the composers (and the rendered
    output byte for byte what a literal gave), while the row stays next to its name.
    """
    _declared.append(Row(reason, condition, status, means, do))
    return reason


class Kind:
    """A composite kind's conditions and reasons; ROWS in the order its table lists them.

    A subclass body declares its reasons with row(); once it is executed, the rows it declared
    become its ROWS (class bodies run one at a time, so none leaks into another kind).
    """

    ROWS: ClassVar[tuple[Row, ...]] = ()

    def __init_subclass__(cls) -> None:
        super().__init_subclass__()
        cls.ROWS = tuple(_declared)
        _declared.clear()


# The kinds below are data, wrapped by hand a reason to a few lines: the formatter would give
# every argument of row() its own line and double the module for no reader's gain.
# fmt: off


class InferenceClass(Kind):
    ACCEPTED = "Accepted"
    DEVICES_DESCRIBED = row("DevicesDescribed", ACCEPTED, "True",
        "the devices are read; the class composes nothing",
        "nothing")


class InferenceCluster(Kind):
    SOURCE_SUPPORTED = "SourceSupported"
    STACK_READY = "StackReady"
    NODE_POOLS_READY = "NodePoolsReady"
    GATEWAY_READY = "GatewayReady"
    POOLS_RESOLVED = "PoolsResolved"
    IN_USE = "InUse"
    STACK_UP_TO_DATE = "StackUpToDate"
    HANDED_OVER = "HandedOver"
    EXISTING = row("Existing", SOURCE_SUPPORTED, "True",
        "a brought-your-own cluster reached by its kubeconfig Secret",
        "nothing")
    MANAGED = row("Managed", SOURCE_SUPPORTED, "True",
        "an EKS, GKE or AKS cluster Modelplane provisions with the credentials of "
        "`spec.cluster.<cloud>.credentials`",
        "nothing")
    UNSUPPORTED_SOURCE = row("UnsupportedSource", SOURCE_SUPPORTED, "False",
        "`spec.cluster.source` is Nebius or Vultr, whose providers' CRDs are not published where "
        "Modelplane can validate against them; nothing is composed",
        "use `EKS`, `GKE` or `AKS`, or create the cluster yourself and use `source: Existing` with "
        "a kubeconfig `secretRef`")
    CLUSTER_PROVISIONING = row("ClusterProvisioning", STACK_READY, "False",
        "the cloud is still building the cluster; the message names what is not Ready yet (the "
        "control plane, the kubeconfig, the system pool); the stack installs once all are (GPU "
        "pools are not waited for: NodePoolsReady)",
        "wait (a cluster takes 10 to 20 minutes); if one stays, `kubectl -n crossplane-system "
        "describe` the resource the message names (its `Synced` condition carries the cloud's "
        "error, often missing credentials, quota or a machine type the region lacks)")
    POOLS_NOT_READY = row("PoolsNotReady", NODE_POOLS_READY, "False",
        "a GPU pool of a cluster Modelplane provisions is not Ready; the message names each one "
        "and what its provider says (its `Synced` condition: GPU quota, a stockout, a machine type "
        "the region lacks). The serving stack and the other pools' replicas do not wait for it",
        "raise the GPU quota or pick another zone or machine; `kubectl -n crossplane-system "
        "describe` the pool's node group / node pool for the cloud's whole error")
    PROVISIONED = row("Provisioned", NODE_POOLS_READY, "True",
        "every node pool of the provisioned cluster is Ready",
        "nothing")
    WAITING_FOR_PROVIDER_CONFIGS = row("WaitingForProviderConfigs", STACK_READY, "False",
        "the ClusterProviderConfigs built from the kubeconfig Secret do not exist yet",
        "check the Secret exists in `crossplane-system` (`kubectl -n crossplane-system get secret "
        "<name>`) and that provider-kubernetes and provider-helm are healthy (`kubectl get "
        "providers`)")
    INSTALLING = row("Installing", STACK_READY, "False",
        "serving-stack components are still installing; the message names them",
        "wait; if one stays, `kubectl describe release.helm.m.crossplane.io` for it, or the Object "
        "named in the message")
    FAILED = row("Failed", STACK_READY, "False",
        "Helm gave up on a release (chart missing at that version, values refused)",
        "read the message; fix `spec.servingStack.<component>.version` or set the component "
        "`External`")
    INSTALLED = row("Installed", STACK_READY, "True",
        "every serving-stack component is ready",
        "nothing")
    WAITING_FOR_GATEWAY = row("WaitingForGateway", GATEWAY_READY, "False",
        "the cluster's inference Gateway has no address yet; replicas there are unreachable",
        "check the Gateway on the workload cluster (`kubectl -n modelplane-system get gateway "
        "inference-gateway`) and its load balancer")
    GATEWAY_NOT_PROGRAMMED = row("GatewayNotProgrammed", GATEWAY_READY, "False",
        "the cluster's inference Gateway reports itself not programmed; its address is withdrawn, "
        "and the endpoints and fleet hops to it go",
        "check the Gateway on the workload cluster (`kubectl -n modelplane-system describe gateway "
        "inference-gateway`)")
    ADDRESS_ASSIGNED = row("AddressAssigned", GATEWAY_READY, "True",
        'the gateway has an address (in `status.gateway.address`); "as last published" while the '
        "Gateway reports none yet",
        "nothing")
    WAITING_FOR_CLASSES = row("WaitingForClasses", POOLS_RESOLVED, "Unknown",
        "the InferenceClasses are being read",
        "wait a reconcile")
    CLASS_NOT_FOUND = row("ClassNotFound", POOLS_RESOLVED, "False",
        "a node pool names an InferenceClass that does not exist; no replica is placed on it",
        "create the class, or fix `spec.nodePools[].className`")
    CLASSES_FOUND = row("ClassesFound", POOLS_RESOLVED, "True",
        "every pool's class exists",
        "nothing")
    NO_REPLICAS = row("NoReplicas", IN_USE, "False",
        "no ModelReplica runs here (a fact, not a fault)",
        "nothing")
    GATEWAYS_HOSTED = row("GatewaysHosted", IN_USE, "True",
        "no replica runs here, but InferenceGateways are hosted here; a ClusterUsage per gateway "
        "refuses the cluster's deletion until they go",
        "delete or move those gateways (the message names them) before deleting the cluster")
    REPLICAS_RUNNING = row("ReplicasRunning", IN_USE, "True",
        "replicas run here; a ClusterUsage refuses the cluster's deletion until they go",
        "nothing: a delete refused by it is recorded on the cluster and empties it, its replicas "
        "moved elsewhere make before break, and Crossplane replays the delete once the guard lifts "
        "(the cluster's first reconcile after the last replica is gone). To keep the cluster after "
        "all, remove its `usage.crossplane.io/deletion-attempt-with-policy` annotation")
    UP_TO_DATE = row("UpToDate", STACK_UP_TO_DATE, "True",
        "every component without a pinned version runs this Modelplane's default, and the cluster "
        "publishes its stack revision (`status.servingStack.revision`), which lets the next wave "
        "proceed",
        "nothing")
    UPGRADING = row("Upgrading", STACK_UP_TO_DATE, "False",
        "the cluster's wave may take the new default versions and composes them; the message names "
        "each component `from -> to` until its provider reports it installed and `StackReady` is "
        "True",
        "wait; if a component stays, see `StackReady` (a `Failed` release names the cause)")
    WAITING_FOR_WAVE = row("WaitingForWave", STACK_UP_TO_DATE, "False",
        "the clusters of the wave before (label `modelplane.ai/stack-wave` one lower) are not all "
        "on the new revision with `StackReady` True, or none is listed; the cluster keeps the "
        "versions it runs (the message names them and the clusters behind)",
        "wait for them; a cluster that cannot upgrade holds every later wave: fix it, or relabel "
        "it out of its wave. Waves number from 0 without gaps")
    PAUSED = row("Paused", STACK_UP_TO_DATE, "False",
        "`spec.servingStack.rollout.paused` is set: the cluster keeps the versions it runs and "
        "publishes no new revision, so every later wave waits too",
        "unset it to proceed")
    INVALID_WAVE = row("InvalidWave", STACK_UP_TO_DATE, "False",
        "the `modelplane.ai/stack-wave` label is not a decimal wave number; the cluster keeps the "
        "versions it runs",
        "fix the label (`kubectl label inferencecluster <name> modelplane.ai/stack-wave=1 "
        "--overwrite`)")
    HANDING_OVER = row("HandingOver", HANDED_OVER, "True",
        "a component was made `External`: what Modelplane installed is kept observe-only until "
        "orphaned, then released, never uninstalled",
        "nothing; it turns `Released` once everything is released")
    RELEASED = row("Released", HANDED_OVER, "True",
        "what was handed over is released: Modelplane no longer manages it, and it stays installed "
        "(Crossplane keeps a condition as last set, so this replaces `HandingOver` rather than "
        "leaving it standing)",
        "nothing")


class InferenceGateway(Kind):
    GATEWAY_READY = "GatewayReady"
    HANDED_OVER = "HandedOver"
    WAITING_FOR_FLEET = row("WaitingForFleet", GATEWAY_READY, "Unknown",
        "the InferenceClusters are being read",
        "wait a reconcile")
    CLUSTER_NOT_FOUND = row("ClusterNotFound", GATEWAY_READY, "False",
        "`spec.clusterName` names no InferenceCluster; the gateway runs nowhere",
        "fix `spec.clusterName` (`kubectl get inferenceclusters`)")
    WAITING_FOR_CLUSTER = row("WaitingForCluster", GATEWAY_READY, "False",
        "the host cluster publishes no providerConfigRef or gateway class yet",
        "wait for the host's `StackReady`; see InferenceCluster above")
    PROVISIONING = row("Provisioning", GATEWAY_READY, "False",
        "the front Gateway or its certificates are not ready yet; the message says which",
        "check the issuer or the TLS Secret named in `spec.tls`")
    PROGRAMMED = row("Programmed", GATEWAY_READY, "True",
        "the front door answers at `status.address`; the message names the first 10 clusters it "
        'reaches and counts the rest, and those whose hop is not created yet ("waiting for the '
        "hops to N more\": their InferenceGatewayShard is not Ready; the gateway's `Ready` waits "
        "for them too)",
        "point the DNS name of `spec.hostname` at it; for hops waiting, see InferenceGatewayShard "
        "below")
    HANDING_OVER = row("HandingOver", HANDED_OVER, "True",
        "the gateway was composed by a release whose gateway composed its hops itself: those "
        "Objects are kept observe-only until the InferenceGatewayShard holding each cluster "
        "reports it reached in `status.reached` (its own Object then manages the same Backend), "
        "then released; a hop to a cluster that publishes no gateway address stays the gateway's "
        "own, as it was, until it does; nothing is removed from the host cluster",
        "nothing; it turns `Released` once every hop is handed over")
    RELEASED = row("Released", HANDED_OVER, "True",
        "every hop is held by the gateway's InferenceGatewayShards and the gateway's own hop "
        "Objects are released",
        "nothing")


class InferenceGatewayShard(Kind):
    HOPS_READY = "HopsReady"
    HOPS_CREATED = row("HopsCreated", HOPS_READY, "True",
        "every hop of the shard (Backend and BackendTLSPolicy on the gateway's cluster) exists",
        "nothing")
    WAITING_FOR_HOPS = row("WaitingForHops", HOPS_READY, "False",
        "some hops' Objects are not Ready yet; the message names the first 10 clusters",
        "wait a reconcile; if one stays, `kubectl -n crossplane-system describe object` the "
        "shard's Object for that cluster (its `Synced` condition carries the host cluster's error)")


class ModelDeployment(Kind):
    REPLICAS_SCHEDULED = "ReplicasScheduled"
    MODEL_CACHE_RESOLVED = "ModelCacheResolved"  # the type, and its True reason below
    REPLICAS_SERVING = "ReplicasServing"
    ROLLED_OUT = "RolledOut"
    WAITING_FOR_FLEET = row("WaitingForFleet", REPLICAS_SCHEDULED, "Unknown",
        "the fleet is being read; existing replicas are kept",
        "wait a reconcile")
    CLUSTER_NOT_READY = row("ClusterNotReady", REPLICAS_SCHEDULED, "False",
        "every replica is placed, but some stand on a cluster whose `StackReady` is False; they "
        "are held there, not moved (the message names the clusters and replica indices)",
        "fix the cluster's stack (`kubectl get inferencecluster <name>`), or taint it `NoExecute` "
        "to move them ([operations.md](operations.md#a-cluster-whose-serving-stack-goes-down))")
    FLEET_NOT_LISTED = row("FleetNotListed", REPLICAS_SCHEDULED, "False",
        "no InferenceCluster or no InferenceClass is listed; running replicas are kept and nothing "
        "is placed (a Warning, `No InferenceClusters found` when it is the clusters)",
        "create the clusters and classes (`kubectl get inferenceclusters,inferenceclasses`)")
    INVALID_SELECTOR = row("InvalidSelector", REPLICAS_SCHEDULED, "False",
        "a device selector does not compile; the message quotes it",
        "fix the CEL in `nodeSelector.devices[].selectors` (`modelplane validate` checks it "
        "offline)")
    NO_ELIGIBLE_CLUSTER = row("NoEligibleCluster", REPLICAS_SCHEDULED, "False",
        "no cluster may take a replica at all: labels, taints, or no cluster (`no InferenceCluster "
        "matches clusterSelector ...`: only matching clusters are listed)",
        "check `clusterSelector` against the clusters' labels and taints (`kubectl get "
        "inferenceclusters -l <labels>`); `modelplane explain` lists every cluster's reason")
    INSUFFICIENT_CAPACITY = row("InsufficientCapacity", REPLICAS_SCHEDULED, "False",
        "fewer replicas placed than asked: the fleet is full for this shape",
        "add nodes or clusters, or lower `spec.replicas`; `modelplane explain` names what each "
        "pool lacks")
    ALL_REPLICAS_SCHEDULED = row("AllReplicasScheduled", REPLICAS_SCHEDULED, "True",
        "every replica is placed; the message names the first 10 clusters with the replicas on "
        "each and counts the rest (`kubectl get modelreplicas -l modelplane.ai/deployment=NAME` "
        "lists every one); `awaiting admission by their cluster: east (0)` names placements the "
        "cluster's `status.allocation` does not include yet, and `removing X from east: cluster "
        "east refused it: ...` one that lost a race for the cluster's last devices and is placed "
        "again",
        "nothing: the cluster admits a placement on its next reconcile; a refused one moves "
        "(serving, it serves until its replacement does). Persistently awaiting: check the "
        "InferenceCluster reconciles (`kubectl get inferencecluster east -o "
        "jsonpath='{.status.allocation}'`)")
    WAITING_FOR_MODEL_CACHE = row("WaitingForModelCache", REPLICAS_SCHEDULED, "False",
        "the ModelCache it mounts is not read yet or does not exist, so nothing new is placed; "
        "running replicas are kept",
        "see `ModelCacheResolved`")
    MODEL_CACHE_RESOLVED = row("ModelCacheResolved", MODEL_CACHE_RESOLVED, "True",
        "the ModelCache it mounts was read; replicas go only where it stages the weights (the "
        "message says where)",
        "nothing")
    MODEL_CACHE_UNRESOLVED = row("ModelCacheUnresolved", MODEL_CACHE_RESOLVED, "Unknown",
        "the ModelCache is being read",
        "wait a reconcile")
    MODEL_CACHE_NOT_FOUND = row("ModelCacheNotFound", MODEL_CACHE_RESOLVED, "False",
        "no ModelCache of the name in `modelCacheRef` exists in the deployment's namespace (a "
        "Warning says so)",
        "create it, or fix `spec.template.spec.modelCacheRef.name`")
    REPLICAS_NOT_SERVING = row("ReplicasNotServing", REPLICAS_SERVING, "False",
        "fewer replicas serve than asked; the message names each waiting replica and why",
        "`kubectl describe modelreplica <name>` for the one named")
    ALL_REPLICAS_SERVING = row("AllReplicasServing", REPLICAS_SERVING, "True",
        "every replica serves",
        "nothing")
    PROGRESSING = row("Progressing", ROLLED_OUT, "False",
        "outdated replicas are being replaced, by surge replicas beside them "
        "(`spec.rollout.maxSurge`, where there is room) or in place, at most "
        "`spec.rollout.maxUnavailable` not serving at a time",
        "wait; `status.rollout` counts updated, serving, remaining and surge")
    STALLED = row("Stalled", ROLLED_OUT, "False",
        "updated (or surge) replicas report, for the stamp they are given now, that they do not "
        "serve, so no more are updated; the message names them (a replica that served nothing "
        "before it was updated, too). Or the fleet has no room for a surge replica and "
        "`maxUnavailable` allows no serving replica to stop",
        "if it lasts longer than an engine takes to start, `kubectl describe modelreplica <name>`; "
        "revert the template to roll back. With no room: add capacity or raise "
        "`spec.rollout.maxUnavailable`")
    PAUSED = row("Paused", ROLLED_OUT, "False",
        "`spec.rollout.paused` is set: no outdated replica is updated",
        "unset it to continue")
    PARTITION_REACHED = row("PartitionReached", ROLLED_OUT, "False",
        "complete up to `spec.rollout.partition`: every replica from it serves the current "
        "template (as `Complete` counts), every one below it keeps what it runs, pinned to its "
        "model revision",
        "lower the partition to update them; a revision change is safe now")
    COMPLETE = row("Complete", ROLLED_OUT, "True",
        "every placed replica runs the current template and serves it: its `RevisionReady` is True "
        "for its current stamp and its `ModelServing` True (until each does, `Progressing` says "
        "how many it waits for)",
        "nothing")
    WAITING_FOR_REVISION = row("WaitingForRevision", ROLLED_OUT, "False",
        "the ModelCache's revision is not resolved to a commit yet, or not hydrated yet on every "
        "cluster the replicas are placed on (named in the message): every replica keeps the "
        "revision it reads",
        "wait for the cache's `Hydrated` True; if a cluster's hydration fails, `kubectl get "
        "modelcache <name> -o jsonpath='{.status.clusters}'` says why")

    AUTOSCALING = "Autoscaling"
    WAITING_FOR_AUTOSCALER = row("WaitingForAutoscaler", AUTOSCALING, "Unknown",
        "`spec.autoscaling` is set and the autoscaler is being read: the EnvironmentConfig "
        "`modelplane-autoscaling`, the ScaledObject or the HPA KEDA makes from it (the message "
        "says which); `spec.replicas` stands as written",
        "wait a reconcile; if it lasts, check KEDA runs on the control plane (`kubectl get "
        "scaledobject <name>`)")
    NO_METRICS_ENDPOINT = row("NoMetricsEndpoint", AUTOSCALING, "False",
        "no fleet-wide Prometheus is named: the EnvironmentConfig `modelplane-autoscaling` is "
        "missing or has no `data.prometheus.serverAddress`; replicas stay at `spec.replicas` (a "
        "ScaledObject composed before is kept)",
        "create it ([operations.md](operations.md#autoscaling))")
    AUTOSCALER_NOT_READY = row("AutoscalerNotReady", AUTOSCALING, "False",
        "KEDA reports the ScaledObject not Ready (a query Prometheus refuses, an unreachable "
        "server, a missing TriggerAuthentication); the message quotes KEDA",
        "`kubectl describe scaledobject <name>`; check the Prometheus address and that the "
        "engines' series carry the deployment labels")
    SCALING = row("Scaling", AUTOSCALING, "True",
        "the autoscaler drives `spec.replicas` within `[minReplicas, maxReplicas]`; the message "
        "gives what it last asked for and when, and says when `spec.replicas` was outside the "
        "bounds and clamped",
        "nothing")
    AT_MAX_REPLICAS = row("AtMaxReplicas", AUTOSCALING, "True",
        "the load asks for more replicas than `maxReplicas` (the HPA's `ScalingLimited`, quoted)",
        "raise `spec.autoscaling.maxReplicas` if the fleet has room, or accept the queueing")
    SCALED_TO_ZERO = row("ScaledToZero", AUTOSCALING, "True",
        "the autoscaler took the deployment to zero replicas: no request came through the front "
        "door of a ModelService that selects it for `spec.autoscaling.scaleToZero.idleSeconds`; "
        "the message names the ModelServices whose first request wakes it",
        "nothing; send a request through the ModelService to wake it, or set `minReplicas: 1` "
        "to keep one warm replica")
    NOTHING_WAKES = row("NothingWakes", AUTOSCALING, "False",
        "`spec.autoscaling.minReplicas` is 0, but no ModelService in the namespace that selects "
        "the deployment has published the front-door clusters whose requests would wake it, so "
        "it keeps one replica and never sleeps (the message says which)",
        "create a ModelService whose `spec.endpoints[].selector.matchLabels` select the "
        "deployment's replicas, or set `minReplicas: 1`")
    ASLEEP = row("Asleep", REPLICAS_SERVING, "True",
        "the deployment is asleep at zero replicas by its autoscaler (`scaleToZero`), not "
        "broken: the first request through a ModelService that selects it wakes it, and waits "
        "a cold start",
        "nothing; set `spec.autoscaling.minReplicas: 1` where a first request must not wait")


class ModelReplica(Kind):
    MODEL_SERVING = "ModelServing"
    REVISION_READY = "RevisionReady"
    WAITING_FOR_CLUSTER = row("WaitingForCluster", MODEL_SERVING, "False",
        "its InferenceCluster is not listed or publishes no providerConfigRef yet",
        "see the cluster's `StackReady`")
    INVALID_NODE_POOL = row("InvalidNodePool", MODEL_SERVING, "False",
        "a member's `nodePoolName` is not a pool of its cluster",
        "fix the pool name (a ModelDeployment never stamps one wrong)")
    WAITING_FOR_MODEL_CACHE = row("WaitingForModelCache", MODEL_SERVING, "False",
        "the ModelCache it mounts has not staged the weights on this cluster yet",
        "see the ModelCache's `Hydrated`")
    DEPLOYING = row("Deploying", MODEL_SERVING, "False",
        "its workloads exist but no copy of every engine is ready yet",
        "`kubectl describe` the workload on the cluster (image pulls, device claims)")
    NO_READY_COPY = row("NoReadyCopy", MODEL_SERVING, "False",
        "an engine has no ready copy",
        "read the pods' events on the workload cluster")
    ROUTING_NOT_READY = row("RoutingNotReady", MODEL_SERVING, "False",
        "the engines are up but its InferencePool, picker or route are not",
        "check the endpoint picker and HTTPRoute on the cluster")
    SERVING = row("Serving", MODEL_SERVING, "True",
        "it serves at the address in the message",
        "nothing")
    UPDATING = row("Updating", REVISION_READY, "False",
        "the replica's cluster does not run the stamp its deployment gave it "
        "(`modelplane.ai/template-hash`, named in the message) yet, or runs it with copies not "
        "ready: its deployment does not count it as serving the new template",
        "wait; if it lasts, the message names the workload, and `kubectl describe` it on the "
        "cluster")
    RUNNING = row("Running", REVISION_READY, "True",
        "every workload on its cluster runs the replica's stamp, every copy ready",
        "nothing")


class ModelCache(Kind):
    HYDRATED = "Hydrated"
    WAITING_FOR_FLEET = row("WaitingForFleet", HYDRATED, "Unknown",
        "the InferenceClusters are being read",
        "wait a reconcile")
    CLUSTERS_NOT_LISTED = row("ClustersNotListed", HYDRATED, "Unknown",
        "no InferenceCluster is listed; staged objects are kept",
        "check `kubectl get inferenceclusters`")
    NO_MATCHING_CLUSTER = row("NoMatchingCluster", HYDRATED, "False",
        "no InferenceCluster is selected",
        "fix the cache's cluster selector")
    HYDRATING = row("Hydrating", HYDRATED, "False",
        "the weights are still being downloaded on some clusters",
        "wait; the message names them")
    RESOLVING = row("Resolving", HYDRATED, "False",
        "the branch or tag in `spec.huggingFace.revision` (`main` when unset) is being resolved to "
        "one commit by a Pod on the first cluster by name; no cluster downloads until it is",
        "wait (seconds); if it lasts, the first cluster's message carries the Pod's last error "
        "(`the resolve Pod failed, retrying: ...`): a gated or private repo needs "
        "`huggingFace.authSecret`, a misspelled revision does not exist; `kubectl logs` the Pod "
        "`modelcache-<cache>-resolve-...` on that cluster")
    HYDRATION_FAILED = row("HydrationFailed", HYDRATED, "False",
        "a hydration Job failed on a cluster",
        "read the Job's logs on that cluster (repository name, token Secret)")
    NO_STORAGE_CLASS = row("NoStorageClass", HYDRATED, "False",
        "a selected cluster names no ReadWriteMany storage class, so the weights cannot be staged "
        "there (its phase is `CannotStage`)",
        "set `spec.cluster.existing.cache.storageClassName` on that InferenceCluster to an RWX "
        "class (EFS, Filestore, Azure Files, NFS)")
    ALL_CLUSTERS_READY = row("AllClustersReady", HYDRATED, "True",
        "the weights are staged on every selected cluster",
        "nothing")


class ModelEndpoint(Kind):
    ROUTING_READY = "RoutingReady"
    WAITING = row("Waiting", ROUTING_READY, "Unknown",
        "its inputs are being read",
        "wait a reconcile")
    CLUSTER_NOT_FOUND = row("ClusterNotFound", ROUTING_READY, "False",
        "`spec.clusterName` names no InferenceCluster",
        "fix the name")
    WAITING_FOR_GATEWAY = row("WaitingForGateway", ROUTING_READY, "False",
        "its cluster publishes no gateway address yet",
        "see the cluster's `GatewayReady`")
    CLUSTER_REACHABLE = row("ClusterReachable", ROUTING_READY, "True",
        "its InferencePool is reached through its cluster's gateway",
        "nothing")
    INVALID_URL = row("InvalidURL", ROUTING_READY, "False",
        "`spec.url` of an external endpoint is not a usable URL",
        "fix `spec.url`")
    EGRESS_REFUSED = row("EgressRefused", ROUTING_READY, "False",
        "`spec.url` names an address or name inside the fleet (loopback, link-local, cloud "
        "metadata, private or site-local, a pod name spelling such an address) or a name under no "
        "public suffix (`kubernetes.default`, `prometheus.monitoring`, `x.svc.cluster.local`, "
        "`x.corp`: it does not end in a suffix of the Public Suffix List's ICANN section); nothing "
        "is composed for it (a Warning too)",
        "use the provider's public URL; for an in-cluster or private provider the platform team "
        "lists the host (its full name, `vllm.models.svc.cluster.local`: the gateways resolve "
        "names as written) or network in `spec.egress` of every InferenceGateway")
    NO_GATEWAY = row("NoGateway", ROUTING_READY, "False",
        "no InferenceGateway runs on a cluster that can be written to yet",
        "create an InferenceGateway (see ModelService below)")
    WAITING_FOR_BACKEND = row("WaitingForBackend", ROUTING_READY, "False",
        "the external backend is not configured on every gateway's cluster yet",
        "wait; the message names the clusters")
    BACKEND_CONFIGURED = row("BackendConfigured", ROUTING_READY, "True",
        "the external provider is reachable from the gateways",
        "nothing")


class ModelService(Kind):
    ENDPOINTS_RESOLVED = "EndpointsResolved"
    ROUTING_READY = "RoutingReady"
    WAITING_FOR_ENDPOINTS = row(
        "WaitingForEndpoints", f"{ENDPOINTS_RESOLVED} / {ROUTING_READY}", "Unknown",
        "its inputs are being read, or a routed endpoint, gateway or cluster that a list does not "
        'hold is asked for by name ("... by name (not listed)"); routes are kept',
        "wait a reconcile")
    NO_ENDPOINTS = row("NoEndpoints", ENDPOINTS_RESOLVED, "False",
        "no ModelEndpoint matches any entry (a Warning too)",
        "check each entry's `selector.matchLabels` against the endpoints (`kubectl get "
        "modelendpoints --show-labels`)")
    ENTRY_MATCHES_NOTHING = row("EntryMatchesNothing", ENDPOINTS_RESOLVED, "False",
        "an entry selects no ModelEndpoint and no ModelReplica: a misspelled label; its share goes "
        "to the other entries, or nothing serves the service when it is the only entry (a Warning; "
        "`routes` and `render` exit 1, or 3 when its deployment placed no replica for want of "
        "capacity)",
        "fix that entry's selector")
    NO_READY_ENDPOINTS = row(
        "NoReadyEndpoints", f"{ENDPOINTS_RESOLVED} / {ROUTING_READY}", "False",
        "endpoints match but none is ready; the routes answer 503",
        "see the replicas' `ModelServing`")
    RESOLVED = row("Resolved", ENDPOINTS_RESOLVED, "True",
        "every entry has endpoints, some ready",
        "nothing")
    ASLEEP = row("Asleep", f"{ENDPOINTS_RESOLVED} / {ROUTING_READY}", "True",
        "nothing is ready because a ModelDeployment it selects is scaled to zero while idle "
        "(`scaleToZero`); the service works: the first request wakes it, and until a replica is "
        "ready every request is answered 503 \"is waking its model\" with `Retry-After: 30`",
        "nothing; keep `minReplicas: 1` on the deployment where a first request must not wait")
    CARRIED_FORWARD = row("CarriedForward", ENDPOINTS_RESOLVED, "True",
        "it serves, but some lanes are kept as last routed on no evidence either way: the message "
        "names each endpoint and why (its status not written yet, its cluster listed without "
        "status; a cluster not listed is asked for by name, and one not found takes its lanes out: "
        '"its cluster ... is deleted"). Traffic keeps flowing to them; a status saying one is not '
        "ready takes it out",
        "usually nothing (a reconcile or two); if it stays, look at the named endpoint's or "
        "cluster's status (`kubectl get modelendpoint <name> -o yaml`)")
    NO_GATEWAY = row("NoGateway", ROUTING_READY, "False",
        "no InferenceGateway serves it, or the only one sits on a missing or unprepared cluster",
        "create a gateway, or fix its `clusterName` or `serviceSelector`")
    CONFIGURING = row("Configuring", ROUTING_READY, "False",
        "routes are not programmed yet; the message names them",
        "wait; if one stays, `kubectl describe` that HTTPRoute on its cluster")
    PARKED = row("Parked", ROUTING_READY, "False",
        "every entry with a ready endpoint has weight 0: its lanes stay resolved at weight 0, no "
        "request is sent to any, and the address answers 503",
        "give an entry a weight above 0")
    TOO_MANY_BACKENDS = row("TooManyBackends", ROUTING_READY, "False",
        "a route holds 16 backends; the smallest shares were left out",
        "select fewer clusters or endpoints")
    ACCEPTED = row("Accepted", ROUTING_READY, "True",
        "every gateway that serves it accepted its routes and resolved their backends (Envoy "
        "Gateway reports nothing about what reached its proxies, so this is as far as status can "
        "tell)",
        "nothing; `modelplane routes` shows where traffic goes")
