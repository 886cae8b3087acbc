"""Every condition type and reason Modelplane sets, as named constants per kind.

A class per kind holds its condition types and its reasons, each reason declared with the
condition and status it goes with. tools/reasons_table.py writes docs/troubleshooting.md's tables
from here: a row per reason, in this order, with what it means and what to do kept from the page
(the prose is the page's), and refuses a reason the page does not explain yet, so a reason cannot
be set without being documented.
"""

from __future__ import annotations

from typing import ClassVar, NamedTuple


class Row(NamedTuple):
    """A reason as its kind's table in docs/troubleshooting.md lists it."""

    reason: str
    condition: str
    status: str


_declared: list[Row] = []
"""Rows declared by the class body being executed, collected into its ROWS once it is done."""


def row(reason: str, condition: str, status: str) -> str:
    """Declare a reason of the kind whose class body calls it, and return the reason itself.

    Returning the plain string keeps the constant a ``str`` in the composers (and the rendered
    output byte for byte what a literal gave), while the row stays next to its name.
    """
    _declared.append(Row(reason, condition, status))
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


class InferenceClass(Kind):
    ACCEPTED = "Accepted"
    DEVICES_DESCRIBED = row("DevicesDescribed", ACCEPTED, "True")


class InferenceCluster(Kind):
    SOURCE_SUPPORTED = "SourceSupported"
    STACK_READY = "StackReady"
    NODE_POOLS_READY = "NodePoolsReady"
    GATEWAY_READY = "GatewayReady"
    POOLS_RESOLVED = "PoolsResolved"
    IN_USE = "InUse"
    STACK_UP_TO_DATE = "StackUpToDate"
    HANDED_OVER = "HandedOver"
    EXISTING = row("Existing", SOURCE_SUPPORTED, "True")
    MANAGED = row("Managed", SOURCE_SUPPORTED, "True")
    UNSUPPORTED_SOURCE = row("UnsupportedSource", SOURCE_SUPPORTED, "False")
    CLUSTER_PROVISIONING = row("ClusterProvisioning", STACK_READY, "False")
    POOLS_NOT_READY = row("PoolsNotReady", NODE_POOLS_READY, "False")
    PROVISIONED = row("Provisioned", NODE_POOLS_READY, "True")
    WAITING_FOR_PROVIDER_CONFIGS = row("WaitingForProviderConfigs", STACK_READY, "False")
    INSTALLING = row("Installing", STACK_READY, "False")
    FAILED = row("Failed", STACK_READY, "False")
    INSTALLED = row("Installed", STACK_READY, "True")
    WAITING_FOR_GATEWAY = row("WaitingForGateway", GATEWAY_READY, "False")
    GATEWAY_NOT_PROGRAMMED = row("GatewayNotProgrammed", GATEWAY_READY, "False")
    ADDRESS_ASSIGNED = row("AddressAssigned", GATEWAY_READY, "True")
    WAITING_FOR_CLASSES = row("WaitingForClasses", POOLS_RESOLVED, "Unknown")
    CLASS_NOT_FOUND = row("ClassNotFound", POOLS_RESOLVED, "False")
    CLASSES_FOUND = row("ClassesFound", POOLS_RESOLVED, "True")
    NO_REPLICAS = row("NoReplicas", IN_USE, "False")
    GATEWAYS_HOSTED = row("GatewaysHosted", IN_USE, "True")
    REPLICAS_RUNNING = row("ReplicasRunning", IN_USE, "True")
    UP_TO_DATE = row("UpToDate", STACK_UP_TO_DATE, "True")
    UPGRADING = row("Upgrading", STACK_UP_TO_DATE, "False")
    WAITING_FOR_WAVE = row("WaitingForWave", STACK_UP_TO_DATE, "False")
    PAUSED = row("Paused", STACK_UP_TO_DATE, "False")
    INVALID_WAVE = row("InvalidWave", STACK_UP_TO_DATE, "False")
    HANDING_OVER = row("HandingOver", HANDED_OVER, "True")
    RELEASED = row("Released", HANDED_OVER, "True")


class InferenceGateway(Kind):
    GATEWAY_READY = "GatewayReady"
    HANDED_OVER = "HandedOver"
    WAITING_FOR_FLEET = row("WaitingForFleet", GATEWAY_READY, "Unknown")
    CLUSTER_NOT_FOUND = row("ClusterNotFound", GATEWAY_READY, "False")
    WAITING_FOR_CLUSTER = row("WaitingForCluster", GATEWAY_READY, "False")
    PROVISIONING = row("Provisioning", GATEWAY_READY, "False")
    PROGRAMMED = row("Programmed", GATEWAY_READY, "True")
    HANDING_OVER = row("HandingOver", HANDED_OVER, "True")
    RELEASED = row("Released", HANDED_OVER, "True")


class InferenceGatewayShard(Kind):
    HOPS_READY = "HopsReady"
    HOPS_CREATED = row("HopsCreated", HOPS_READY, "True")
    WAITING_FOR_HOPS = row("WaitingForHops", HOPS_READY, "False")


class ModelDeployment(Kind):
    REPLICAS_SCHEDULED = "ReplicasScheduled"
    MODEL_CACHE_RESOLVED = "ModelCacheResolved"  # the type, and its True reason below
    REPLICAS_SERVING = "ReplicasServing"
    ROLLED_OUT = "RolledOut"
    WAITING_FOR_FLEET = row("WaitingForFleet", REPLICAS_SCHEDULED, "Unknown")
    CLUSTER_NOT_READY = row("ClusterNotReady", REPLICAS_SCHEDULED, "False")
    FLEET_NOT_LISTED = row("FleetNotListed", REPLICAS_SCHEDULED, "False")
    INVALID_SELECTOR = row("InvalidSelector", REPLICAS_SCHEDULED, "False")
    NO_ELIGIBLE_CLUSTER = row("NoEligibleCluster", REPLICAS_SCHEDULED, "False")
    INSUFFICIENT_CAPACITY = row("InsufficientCapacity", REPLICAS_SCHEDULED, "False")
    ALL_REPLICAS_SCHEDULED = row("AllReplicasScheduled", REPLICAS_SCHEDULED, "True")
    WAITING_FOR_MODEL_CACHE = row("WaitingForModelCache", REPLICAS_SCHEDULED, "False")
    MODEL_CACHE_RESOLVED = row("ModelCacheResolved", MODEL_CACHE_RESOLVED, "True")
    MODEL_CACHE_UNRESOLVED = row("ModelCacheUnresolved", MODEL_CACHE_RESOLVED, "Unknown")
    MODEL_CACHE_NOT_FOUND = row("ModelCacheNotFound", MODEL_CACHE_RESOLVED, "False")
    REPLICAS_NOT_SERVING = row("ReplicasNotServing", REPLICAS_SERVING, "False")
    ALL_REPLICAS_SERVING = row("AllReplicasServing", REPLICAS_SERVING, "True")
    PROGRESSING = row("Progressing", ROLLED_OUT, "False")
    STALLED = row("Stalled", ROLLED_OUT, "False")
    PAUSED = row("Paused", ROLLED_OUT, "False")
    PARTITION_REACHED = row("PartitionReached", ROLLED_OUT, "False")
    COMPLETE = row("Complete", ROLLED_OUT, "True")
    WAITING_FOR_REVISION = row("WaitingForRevision", ROLLED_OUT, "False")

    AUTOSCALING = "Autoscaling"
    WAITING_FOR_AUTOSCALER = row("WaitingForAutoscaler", AUTOSCALING, "Unknown")
    NO_METRICS_ENDPOINT = row("NoMetricsEndpoint", AUTOSCALING, "False")
    AUTOSCALER_NOT_READY = row("AutoscalerNotReady", AUTOSCALING, "False")
    SCALING = row("Scaling", AUTOSCALING, "True")
    AT_MAX_REPLICAS = row("AtMaxReplicas", AUTOSCALING, "True")
    SCALED_TO_ZERO = row("ScaledToZero", AUTOSCALING, "True")
    NOTHING_WAKES = row("NothingWakes", AUTOSCALING, "False")
    ASLEEP = row("Asleep", REPLICAS_SERVING, "True")


class ModelReplica(Kind):
    MODEL_SERVING = "ModelServing"
    REVISION_READY = "RevisionReady"
    WAITING_FOR_CLUSTER = row("WaitingForCluster", MODEL_SERVING, "False")
    INVALID_NODE_POOL = row("InvalidNodePool", MODEL_SERVING, "False")
    WAITING_FOR_MODEL_CACHE = row("WaitingForModelCache", MODEL_SERVING, "False")
    DEPLOYING = row("Deploying", MODEL_SERVING, "False")
    NO_READY_COPY = row("NoReadyCopy", MODEL_SERVING, "False")
    ROUTING_NOT_READY = row("RoutingNotReady", MODEL_SERVING, "False")
    SERVING = row("Serving", MODEL_SERVING, "True")
    UPDATING = row("Updating", REVISION_READY, "False")
    RUNNING = row("Running", REVISION_READY, "True")


class ModelCache(Kind):
    HYDRATED = "Hydrated"
    WAITING_FOR_FLEET = row("WaitingForFleet", HYDRATED, "Unknown")
    CLUSTERS_NOT_LISTED = row("ClustersNotListed", HYDRATED, "Unknown")
    NO_MATCHING_CLUSTER = row("NoMatchingCluster", HYDRATED, "False")
    HYDRATING = row("Hydrating", HYDRATED, "False")
    RESOLVING = row("Resolving", HYDRATED, "False")
    HYDRATION_FAILED = row("HydrationFailed", HYDRATED, "False")
    NO_STORAGE_CLASS = row("NoStorageClass", HYDRATED, "False")
    ALL_CLUSTERS_READY = row("AllClustersReady", HYDRATED, "True")


class ModelEndpoint(Kind):
    ROUTING_READY = "RoutingReady"
    WAITING = row("Waiting", ROUTING_READY, "Unknown")
    CLUSTER_NOT_FOUND = row("ClusterNotFound", ROUTING_READY, "False")
    WAITING_FOR_GATEWAY = row("WaitingForGateway", ROUTING_READY, "False")
    CLUSTER_REACHABLE = row("ClusterReachable", ROUTING_READY, "True")
    INVALID_URL = row("InvalidURL", ROUTING_READY, "False")
    EGRESS_REFUSED = row("EgressRefused", ROUTING_READY, "False")
    NO_GATEWAY = row("NoGateway", ROUTING_READY, "False")
    WAITING_FOR_BACKEND = row("WaitingForBackend", ROUTING_READY, "False")
    BACKEND_CONFIGURED = row("BackendConfigured", ROUTING_READY, "True")


class ModelService(Kind):
    ENDPOINTS_RESOLVED = "EndpointsResolved"
    ROUTING_READY = "RoutingReady"
    WAITING_FOR_ENDPOINTS = row(
        "WaitingForEndpoints", f"{ENDPOINTS_RESOLVED} / {ROUTING_READY}", "Unknown"
    )
    NO_ENDPOINTS = row("NoEndpoints", ENDPOINTS_RESOLVED, "False")
    ENTRY_MATCHES_NOTHING = row("EntryMatchesNothing", ENDPOINTS_RESOLVED, "False")
    NO_READY_ENDPOINTS = row("NoReadyEndpoints", f"{ENDPOINTS_RESOLVED} / {ROUTING_READY}", "False")
    RESOLVED = row("Resolved", ENDPOINTS_RESOLVED, "True")
    ASLEEP = row("Asleep", f"{ENDPOINTS_RESOLVED} / {ROUTING_READY}", "True")
    CARRIED_FORWARD = row("CarriedForward", ENDPOINTS_RESOLVED, "True")
    NO_GATEWAY = row("NoGateway", ROUTING_READY, "False")
    CONFIGURING = row("Configuring", ROUTING_READY, "False")
    PARKED = row("Parked", ROUTING_READY, "False")
    TOO_MANY_BACKENDS = row("TooManyBackends", ROUTING_READY, "False")
    ACCEPTED = row("Accepted", ROUTING_READY, "True")
