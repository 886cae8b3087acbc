"""What every managed cluster shares: the cloud's credentials, the node pools the spec and the
InferenceClasses describe together, the cloud resources as one builder makes them, and the
evidence that the cluster is provisioned.

Every cloud resource is named (``<cluster>-<key>``) and refers to the others by name, never by
selector: the references are what the deletion order is derived from (``teardown.py``), and a
name is unambiguous where a ``matchControllerRef`` selector would match every sibling of a kind.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from modelplane.compose.inferencecluster.releases import stack_object
from modelplane.compose.inferencecluster.target import DEFAULT_SECRET_NAMESPACE, Target
from modelplane.kube import objects
from modelplane.kube.names import DNS_LABEL_MAX, LETTER_PREFIX, dns_label
from modelplane.kube.objects import Obj
from modelplane.labels import POOL

NAMESPACE = DEFAULT_SECRET_NAMESPACE
"""Where every cloud resource and the connection secret it writes live: the namespace the
cluster's ClusterProviderConfigs read the kubeconfig from."""
GPU_LABEL = "modelplane.ai/gpu"
GPU_TAINT_VALUE = "true"
SYSTEM_POOL = "system"


@dataclass(frozen=True)
class PoolPlan:
    """A spec node pool with its class's machine recipe for this cloud."""

    name: str
    machine: str
    disk_gb: int
    accelerator_type: str
    accelerator_count: int
    nodes: int
    min_nodes: int
    max_nodes: int
    zones: tuple[str, ...]
    fabric: str = "None"
    """The pool's interconnect: None, EFA (EKS) or InfiniBand (AKS)."""
    capacity_reservation: str = ""
    """An EC2 Capacity Block the pool's nodes come from (EKS)."""
    needed: int = 0
    """The nodes the replicas the cluster admitted on the pool need (``status.allocation``)."""

    def within(self, size: int) -> int:
        """``size`` within the pool's bounds (EKS and AKS refuse a size outside them)."""
        return min(max(size, self.min_nodes), self.max_nodes)

    @property
    def seed(self) -> int:
        """The size the pool is created at: ``nodeCount``, or the nodes its admitted replicas
        need when more, within its bounds."""
        return self.within(max(self.nodes, self.needed))

    def raised(self, size: int) -> int | None:
        """The size a created pool reporting ``size`` is set to because its admitted replicas
        need more nodes (within its bounds), or None while it has enough: the autoscaler's own
        size always stands, so the two never undo each other. The cluster autoscaler (v1.35.0)
        models no DRA devices on a node of an empty pool and would never add one for them."""
        target = self.within(max(size, self.needed))
        return target if target > size else None

    @property
    def labels(self) -> dict[str, str]:
        """What the pool's nodes carry: the pool our workloads select by, and the GPU."""
        return {POOL: self.name, GPU_LABEL: self.accelerator_type}


@dataclass(frozen=True)
class NameBudget:
    """The names a cloud takes for what is composed: ``<cluster>-<key>-<hash>``, a Kubernetes
    name, and shorter where the cloud names the resource after it and allows fewer characters.
    A longer name keeps a readable head and the hash of its parts (``dns_label``), so a name
    that fits is the same under every budget and two never collide."""

    limits: tuple[tuple[str, int], ...] = ()
    """(a key, or a key prefix ending in "-"; the most characters the cloud takes)."""
    letter_first: bool = False
    """The cloud takes only names that start with a letter: a cluster name that starts with a
    digit is prefixed."""

    def limit(self, key: str) -> int:
        matches = (n for k, n in self.limits if k == key or (k.endswith("-") and key.startswith(k)))
        return min(matches, default=DNS_LABEL_MAX)

    def name(self, cluster: str, key: str) -> str:
        if self.letter_first and not cluster[:1].isalpha():
            cluster = LETTER_PREFIX + cluster
        return dns_label(cluster, key, max_len=self.limit(key))


@dataclass(frozen=True)
class Cloud:
    """One managed cluster as its spec block reads: where, which version, whose credentials."""

    source: str
    cluster: str
    location: str
    version: str
    credentials: Obj
    pools: tuple[PoolPlan, ...] | None
    """None until the InferenceClasses are read: no pool is composed (or withdrawn) on no
    evidence."""
    names: NameBudget = NameBudget()
    """What the cloud takes as the names of what is composed."""

    def name(self, key: str) -> str:
        return self.names.name(self.cluster, key)

    def resource(
        self, api_version: str, kind: str, key: str, for_provider: Obj, **spec: Any
    ) -> Obj:
        """A namespaced managed resource of the cloud provider, reached with the platform
        team's credentials."""
        return {
            "apiVersion": api_version,
            "kind": kind,
            "metadata": {"name": self.name(key), "namespace": NAMESPACE},
            "spec": {
                "providerConfigRef": dict(self.credentials),
                "forProvider": for_provider,
                **spec,
            },
        }

    def ref(self, key: str) -> Obj:
        return {"name": self.name(key)}


@dataclass
class Provisioned:
    """What a cloud builder hands the InferenceCluster composer."""

    resources: dict[str, Obj]
    """Cloud resources by composition resource name."""
    on_cluster: dict[str, Obj] = field(default_factory=dict)
    """Releases and Objects installed on the new cluster (autoscaler, StorageClass): composed
    with the stack, once the cluster is provisioned."""
    kubeconfig_from: str = ""
    """The resource whose connection secret holds the kubeconfig."""
    nodes_from: tuple[str, ...] = ()
    """The system pool the stack's controllers run on: Ready before anything is installed."""
    gpu_pools_from: tuple[str, ...] = ()
    """The GPU pools. The stack does not wait for them: a pool that cannot come up (GPU quota is
    0 by default on every cloud, stockouts are routine) must not hold the gateway and every
    other pool's replicas; each one not Ready is named in NodePoolsReady."""
    stack_needs: tuple[str, ...] = ()
    """What else must be Ready before anything is installed: what the stack needs of the cloud
    (AKS: the cluster identity's role on its subnet, without which the gateway gets no load
    balancer)."""
    outlives: tuple[tuple[str, str], ...] = ()
    """(of, by) pairs no name reference says: ``of`` outlives ``by``."""
    holds_stack: tuple[str, ...] = ()
    """What the stack on the cluster deletes through (the kubeconfig, its credentials, the
    system pool its controllers run on): outlives every Release and Object. Never a GPU pool:
    Crossplane deletes a composed Usage only once its ``by`` is gone, so a pool held by the
    stack could not be removed from the spec while the stack runs."""
    identity: Obj | None = None
    """An identitySecretRef the provider configs add to the kubeconfig (GKE's service account
    key)."""
    storage_class: str = ""

    def existing(self) -> Obj:
        """The Existing block this cluster amounts to once provisioned."""
        out: Obj = {
            "secretRef": {
                "name": secret_name(self.resources[self.kubeconfig_from]),
                "namespace": NAMESPACE,
                "key": "kubeconfig",
            }
        }
        if self.identity:
            out["identitySecretRef"] = self.identity
        if self.storage_class:
            out["cache"] = {"storageClassName": self.storage_class}
        return out


def storage_class(t: Target, name: str, provisioner: str, parameters: Obj, **extra: Any) -> Obj:
    """The RWX StorageClass ModelCache claims on the cluster, as an Object of the stack."""
    manifest = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": name},
        "provisioner": provisioner,
        "parameters": parameters,
        "volumeBindingMode": "Immediate",
        **extra,
    }
    return stack_object(t, "cluster-storage", "storage-class", manifest)


def secret_name(obj: Obj) -> str:
    return str(obj["spec"]["writeConnectionSecretToRef"]["name"])


def connection_secret(cloud: Cloud, key: str) -> Obj:
    return {"writeConnectionSecretToRef": {"name": cloud.name(f"{key}-conn")}}


def cloud_of(
    composite: Obj, source: str, classes: list[Obj] | None, needed: Mapping[str, int]
) -> tuple[Cloud, list[str]]:
    spec = objects.spec(composite)
    block_name = source.lower()
    block = objects.mapping(spec, "cluster", block_name)
    creds = block.get("credentials") or {}
    field_name = "location" if source == "AKS" else "region"
    location = str(block.get(field_name) or "")
    problems = []
    if not location:
        problems.append(f"spec.cluster.{block_name}.{field_name} is required for source {source}")
    pools, pool_problems = _pools(spec.get("nodePools") or [], classes, source, needed)
    cloud = Cloud(
        source=source,
        cluster=str(composite["metadata"]["name"]),
        location=location,
        version=str(block.get("kubernetesVersion") or ""),
        credentials={
            "kind": str(creds.get("type") or "ClusterProviderConfig"),
            "name": str(creds.get("name") or "default"),
        },
        pools=pools,
    )
    return cloud, problems + pool_problems


def _pools(
    node_pools: list[Obj], classes: list[Obj] | None, source: str, needed: Mapping[str, int]
) -> tuple[tuple[PoolPlan, ...] | None, list[str]]:
    """Each node pool's plan, from its class's recipe for ``source``, and what cannot be built
    (None while the classes are not read)."""
    if classes is None:
        return None, []
    by_name = {objects.name(c): c for c in classes}
    plans, problems = [], []
    for i, pool in enumerate(node_pools):
        cls = by_name.get(str(pool.get("className")))
        if cls is None:
            continue  # PoolsResolved reports the missing class
        recipe = _recipe(cls, source)
        if recipe is None:
            problems.append(_no_recipe(i, pool, source))
            continue
        plans.append(_plan(pool, recipe, source, needed.get(str(pool["name"]), 0)))
    return tuple(plans), problems


def _recipe(cls: Obj, source: str) -> Mapping[str, Any] | None:
    """The class's provisioning recipe for ``source``, None when it has none."""
    provisioning = objects.mapping(cls, "spec", "provisioning")
    recipe = provisioning.get(source.lower())
    if provisioning.get("provider") != source or not isinstance(recipe, Mapping):
        return None
    return recipe


def _no_recipe(i: int, pool: Obj, source: str) -> str:
    return (
        f"spec.nodePools[{i}] ({pool.get('name')}): InferenceClass {pool.get('className')} "
        f"has no spec.provisioning.{source.lower()} recipe (provider {source}), so no {source} "
        "node pool can be built for it"
    )


def _plan(pool: Obj, recipe: Mapping[str, Any], source: str, needed: int) -> PoolPlan:
    """One node pool's plan: its machines from the recipe, its sizes from the pool."""
    accelerator = recipe.get("accelerator") or {}
    nodes = int(pool.get("nodeCount", 1))
    return PoolPlan(
        name=str(pool["name"]),
        machine=str(recipe.get(_MACHINE_FIELD[source]) or ""),
        disk_gb=int(recipe.get("diskSizeGb", 100)),
        accelerator_type=str(accelerator.get("type") or ""),
        accelerator_count=int(accelerator.get("count", 1)),
        nodes=nodes,
        min_nodes=int(pool.get("minNodeCount", nodes)),
        max_nodes=int(pool.get("maxNodeCount", max(nodes, 1))),
        zones=tuple(str(z) for z in pool.get("zones") or ()),
        fabric=str(objects.dig(pool, "fabric", "type") or "None"),
        capacity_reservation=str(objects.dig(pool, "capacityBlock", "capacityReservationId") or ""),
        needed=needed,
    )


_MACHINE_FIELD = {"EKS": "instanceType", "GKE": "machineType", "AKS": "vmSize"}


def observation(obj: Mapping[str, Any] | None) -> Mapping[str, Any]:
    """What the provider reports of an observed managed resource, ``status.atProvider``
    ({} while it is not observed or reports nothing)."""
    return objects.mapping(obj, "status", "atProvider")


def at_provider(obj: Mapping[str, Any] | None, key: str) -> str:
    return str(observation(obj).get(key) or "")


def reported_count(obj: Mapping[str, Any] | None, key: str) -> int | None:
    """A count the cloud reports in ``status.atProvider`` (0 included), None while none is.
    Observed resources arrive as protobuf Structs, whose numbers are floats."""
    value = observation(obj).get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return int(value)
