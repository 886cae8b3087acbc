"""Observed state as Crossplane and provider-kubernetes would report it, for ``modelplane render``.

Given the desired composed resources (provider-kubernetes Objects), return what the next
reconcile would observe if every workload had ``ready_copies`` ready copies: each Object with
``status.atProvider.manifest`` (the remote object, with the status its controller would write)
and ``Ready``/``Synced`` conditions. ``Ready`` is derived from the Object's own readiness policy,
CEL queries included, exactly as provider-kubernetes does, so a wrong query shows up here.

The simulated cluster has a gateway that accepts every route and a controller for every kind.
``ready_copies=0`` means nothing that runs pods is ready. provider-helm Releases are observed
installed (deployed, their workloads ready), as every serving-stack component is: the stack's
readiness never depends on ``ready_copies``. A cloud provider's managed resource (an EKS
cluster, a GKE node pool) is observed provisioned, as render simulates a cluster Modelplane
provisions, with the ids (a service account's email, an EKS cluster's security group, an AKS
cluster identity's principal) the cloud would assign. Anything else (a nested composite, a
Usage) is returned as given.

``modelplane render`` takes it as its simulator:
``functools.partial(simulate_observed, ready_copies=n)``; without ``--simulate-ready-copies`` it
takes ``simulate_stack``, which observes only the serving stack (installed) and leaves every
workload as created and not yet observed.
"""

from __future__ import annotations

import functools
import hashlib
import re
import uuid
from collections.abc import Mapping

from cel_expr_python import cel

from modelplane.compose.inferencecluster.releases import RELEASE_API_VERSION
from modelplane.compose.shared.frontdoor import CERT_MANAGER_API_VERSION
from modelplane.compose.shared.remote import OBJECT_API_VERSION, OBSERVE_ONLY
from modelplane.kube import objects
from modelplane.kube.objects import Obj
from modelplane.labels import STACK_COMPONENT
from modelplane.structs import plain

# The Object's own timestamps are irrelevant to every reader; a fixed one keeps output stable.
_TIME = "2026-01-01T00:00:00Z"
_ENVOY_GATEWAY = "gateway.envoyproxy.io/gatewayclass-controller"


def simulate_observed(desired: Mapping[str, Obj], ready_copies: int) -> dict[str, Obj]:
    """Observed composed resources (by composition resource name) for ``desired``."""
    if ready_copies < 0:
        raise ValueError(f"ready copies must be at least 0, got {ready_copies}")
    created = _created_by_controllers(desired)
    return {key: observe(obj, ready_copies, created) for key, obj in desired.items()}


def simulate_stack(desired: Mapping[str, Obj]) -> dict[str, Obj]:
    """Observed composed resources for ``desired`` where only the serving stack has been seen:
    every Release and every Object of a stack component installed and ready, everything else
    (workloads, routes) returned as given, as render shows them without a simulation."""
    return {key: observe(obj, 0) if _in_stack(obj) else dict(obj) for key, obj in desired.items()}


def _in_stack(obj: Obj) -> bool:
    stacked = STACK_COMPONENT in objects.labels(obj) and (_is_object(obj) or _is_issued(obj))
    return _is_release(obj) or _is_cloud(obj) or stacked


Created = Mapping[tuple[str, str, str], Obj]


def observe(obj: Obj, ready_copies: int, created: Created | None = None) -> Obj:
    """One Object as observed.

    ``created`` holds objects that controllers on the cluster create (by kind, namespace and
    name); an Observe-only Object on one of them sees that object, not its own stub manifest.
    Observed objects share what they do not change with ``obj`` (a fleet's render observes tens
    of thousands): readers treat them as read-only.
    """
    observed = dict(obj)
    if _is_release(observed):
        observed["status"] = _release_status(observed)
        return observed
    if _is_issued(observed):
        # As cert-manager reports an Issuer whose CA Secret it read, a Certificate it issued.
        observed["status"] = _cert_manager_ready(observed, ready_copies)
        return observed
    if _is_cloud(observed):
        observed["status"] = _provisioned(observed)
        return observed
    if not _is_object(observed):
        return observed  # not a provider-kubernetes Object, e.g. a nested composite
    manifest = objects.dig(observed, "spec", "forProvider", "manifest") or {}
    if objects.dig(observed, "spec", "managementPolicies") == OBSERVE_ONLY:
        key = (str(manifest.get("kind")), objects.namespace(manifest), objects.name(manifest))
        manifest = (created or {}).get(key, manifest)
    remote = _remote(manifest, ready_copies)
    if remote.get("kind") == "Gateway":
        cluster = str(objects.dig(observed, "spec", "providerConfigRef", "name") or "")
        remote["status"] = _gateway(remote, cluster)
    ready = readiness(objects.dig(observed, "spec", "readiness") or {}, remote)
    observed["status"] = _reconciled({"manifest": remote}, ready)
    return observed


def _reconciled(at_provider: Obj, ready: bool = True) -> Obj:
    """A managed resource's status once its provider reconciled it: what it observes, Synced,
    and Ready or not."""
    return {
        "atProvider": at_provider,
        "conditions": [
            _condition("Ready", ready, "Available" if ready else "Unavailable"),
            _condition("Synced", True, "ReconcileSuccess"),
        ],
    }


def _is_object(obj: Obj) -> bool:
    return obj.get("kind") == "Object" and obj.get("apiVersion") == OBJECT_API_VERSION


def _is_issued(obj: Obj) -> bool:
    """A cert-manager Issuer or Certificate composed on the control plane (the fleet's)."""
    kind = obj.get("kind")
    return obj.get("apiVersion") == CERT_MANAGER_API_VERSION and kind in ("Issuer", "Certificate")


def _is_release(obj: Obj) -> bool:
    return obj.get("kind") == "Release" and obj.get("apiVersion") == RELEASE_API_VERSION


def _is_cloud(obj: Obj) -> bool:
    return str(obj.get("apiVersion", "")).split("/", 1)[0].endswith(".upbound.io")


def _provisioned(obj: Obj) -> Obj:
    name = objects.name(obj)
    at_provider: Obj = {"id": name}
    if obj.get("kind") == "ServiceAccount":
        at_provider["email"] = f"{name}@simulated.iam.gserviceaccount.com"
    if str(obj.get("apiVersion", "")).startswith("iam.aws.") and obj.get("kind") == "Role":
        at_provider["arn"] = f"arn:aws:iam::000000000000:role/{name}"
    if str(obj.get("apiVersion", "")).startswith("eks.") and obj.get("kind") == "Cluster":
        at_provider["vpcConfig"] = {"clusterSecurityGroupId": f"sg-{name}"}
    if obj.get("kind") == "KubernetesCluster":
        principal = str(uuid.uuid5(uuid.NAMESPACE_URL, name))
        at_provider["identity"] = {"type": "SystemAssigned", "principalId": principal}
    return _reconciled(at_provider)


def _release_status(release: Obj) -> Obj:
    # As provider-helm reports a release Helm installed and, with wait, found ready, with the
    # chart version installed (v1.4.0 pkg/controller/namespaced/release/observe.go).
    chart = objects.mapping(release, "spec", "forProvider", "chart")
    at_provider: Obj = {
        "state": "deployed",
        "revision": 1,
        "releaseDescription": "Install complete",
    }
    if chart.get("version"):
        at_provider["version"] = chart["version"]
    return _reconciled(at_provider)


def readiness(policy: Obj, remote: Obj) -> bool:
    """provider-kubernetes' readiness policies over the observed remote object."""
    kind = policy.get("policy") or "SuccessfulCreate"
    conditions = objects.status(remote).get("conditions") or []
    if kind == "SuccessfulCreate":
        return True
    if kind == "DeriveFromObject":
        return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)
    if kind == "AllTrue":
        return bool(conditions) and all(c.get("status") == "True" for c in conditions)
    if kind == "DeriveFromCelQuery":
        return evaluate(str(policy.get("celQuery", "")), remote)
    raise ValueError(f"spec.readiness.policy: unsupported value {kind!r}")


def evaluate(query: str, remote: Obj) -> bool:
    """A readiness query's verdict; an evaluation error is not-ready, as in provider-kubernetes."""
    # CEL converts all it is given, and a CustomResourceDefinition's manifest runs to thousands
    # of values: it is given only the fields the query selects (all of them when it may read
    # the object otherwise), as plain dicts and lists (a composer's frozen constants too).
    fields = _fields_read(query)
    read = remote if fields is None else {k: remote[k] for k in fields if k in remote}
    return _compiled(query).eval(data={"object": plain(read)}).value() is True


# ``object`` and what follows it: a field selected (``object.status``), or anything else.
_OBJECT = re.compile(r"\bobject\b(?:\s*\.\s*([A-Za-z_][A-Za-z0-9_]*))?")
# Names after ``object.`` that are not fields, which read the object whole.
_NOT_FIELDS = frozenset(
    {"all", "exists", "exists_one", "map", "filter"}  # macros
    | {"size", "contains", "startsWith", "endsWith", "matches"}  # receiver-style functions
)


@functools.lru_cache(maxsize=64)
def _fields_read(query: str) -> frozenset[str] | None:
    """The top-level fields of ``object`` a query reads, or None when it may read more (the
    object whole, an index, a macro over it, or the word in a string)."""
    fields = set()
    for found in _OBJECT.finditer(query):
        name = found.group(1)
        if name is None or name in _NOT_FIELDS:
            return None
        fields.add(name)
    return frozenset(fields)


@functools.lru_cache(maxsize=64)
def _compiled(query: str) -> cel.Expression:
    return _ENV.compile(query)


_ENV = cel.NewEnv(variables={"object": cel.Type.DYN})


def _created_by_controllers(desired: Mapping[str, Obj]) -> dict[tuple[str, str, str], Obj]:
    """The PodCliqueScalingGroups Grove creates for each desired PodCliqueSet replica."""
    created: dict[tuple[str, str, str], Obj] = {}
    for obj in desired.values():
        pcs = objects.dig(obj, "spec", "forProvider", "manifest") or {}
        if pcs.get("kind") != "PodCliqueSet":
            continue
        meta = pcs.get("metadata") or {}
        spec = pcs.get("spec") or {}
        for index in range(int(spec.get("replicas", 1))):
            for group in objects.dig(spec, "template", "podCliqueScalingGroups") or []:
                name = f"{meta.get('name')}-{index}-{group['name']}"
                created[("PodCliqueScalingGroup", meta.get("namespace", ""), name)] = {
                    "apiVersion": "grove.io/v1alpha1",
                    "kind": "PodCliqueScalingGroup",
                    "metadata": {"name": name, "namespace": meta.get("namespace", "")},
                    "spec": {
                        "replicas": int(group.get("replicas", 1)),
                        "minAvailable": int(group.get("minAvailable", 1)),
                        "cliqueNames": list(group.get("cliqueNames") or []),
                    },
                }
    return created


def _remote(manifest: Obj, n: int) -> Obj:
    # Render's documents are plain data, read and never changed: the remote object shares all
    # but the parts it adds to.
    remote = dict(manifest)
    meta = remote["metadata"] = dict(remote.get("metadata") or {})
    meta.setdefault("generation", 1)
    status = _STATUS.get(str(remote.get("kind")), lambda _m, _n: None)(remote, n)
    if status is not None:
        remote["status"] = status
    return remote


def _deployment(d: Obj, n: int) -> Obj:
    spec = d.get("spec") or {}
    replicas = int(spec.get("replicas", 1))
    ready = min(n, replicas)
    # Deployment's Available: at least replicas - maxUnavailable pods available; Recreate
    # tolerates none missing, RollingUpdate its maxUnavailable (25% by default, rounded down).
    strategy = spec.get("strategy") or {}
    tolerated = 0
    if strategy.get("type", "RollingUpdate") == "RollingUpdate":
        tolerated = _scaled(
            objects.dig(strategy, "rollingUpdate", "maxUnavailable", default="25%"), replicas
        )
    available = ready >= replicas - tolerated and (ready > 0 or replicas == 0)
    minimum = "MinimumReplicasAvailable" if available else "MinimumReplicasUnavailable"
    return _omit_zero(
        {
            "observedGeneration": d["metadata"]["generation"],
            "replicas": replicas,
            "updatedReplicas": replicas,
            "readyReplicas": ready,
            "availableReplicas": ready,
            "unavailableReplicas": replicas - ready,
            "conditions": [
                _condition("Available", available, minimum),
                _condition("Progressing", True, "NewReplicaSetAvailable"),
            ],
        }
    )


def _leader_worker_set(lws: Obj, n: int) -> Obj:
    replicas = int(objects.dig(lws, "spec", "replicas", default=1))
    ready = min(n, replicas)
    # LWS reports Available once every group is ready, Progressing until then.
    available = ready >= replicas
    return _omit_zero(
        {
            "observedGeneration": lws["metadata"]["generation"],
            "replicas": replicas,
            "readyReplicas": ready,
            "updatedReplicas": replicas,
            "conditions": [
                _condition("Available", available, "AllGroupsReady" if available else "NotReady"),
                _condition("Progressing", not available, "GroupsProgressing"),
            ],
        }
    )


def _pod_clique_set(pcs: Obj, n: int) -> Obj:
    replicas = int(objects.dig(pcs, "spec", "replicas", default=1))
    ready = min(n, replicas)
    # Grove publishes counters and no Available condition.
    return _omit_zero(
        {
            "observedGeneration": pcs["metadata"]["generation"],
            "replicas": replicas,
            "availableReplicas": ready,
            "updatedReplicas": replicas,
        }
    )


def _scaling_group(group: Obj, n: int) -> Obj:
    replicas = int(objects.dig(group, "spec", "replicas", default=1))
    return _omit_zero(
        {
            "observedGeneration": group["metadata"]["generation"],
            "replicas": replicas,
            "availableReplicas": min(n, replicas),
            "scheduledReplicas": replicas,
            "updatedReplicas": replicas,
        }
    )


def _http_route(route: Obj, _n: int) -> Obj:
    # The simulated gateway accepts the route and resolves its backends.
    parents = [
        {
            "parentRef": dict(ref),
            "controllerName": _ENVOY_GATEWAY,
            "conditions": [
                _condition("Accepted", True, "Accepted"),
                _condition("ResolvedRefs", True, "ResolvedRefs"),
            ],
        }
        for ref in objects.spec(route).get("parentRefs") or []
    ]
    return {"parents": parents}


def _gateway(gateway: Obj, cluster: str) -> Obj:
    # The simulated gateway is programmed, at a load balancer hostname of its own per cluster
    # (under .test, reserved for testing: it resolves nowhere), so what dials it from another
    # cluster names where it goes; seen from no cluster, at its in-cluster Service name.
    meta = gateway.get("metadata") or {}
    name, namespace = meta.get("name", "gateway"), meta.get("namespace", "default")
    where = f"{cluster}.gateways.modelplane.test" if cluster else "svc.cluster.local"
    host = f"{name}.{namespace}.{where}"
    return {
        "addresses": [{"type": "Hostname", "value": host}],
        "conditions": [
            _condition("Accepted", True, "Accepted"),
            _condition("Programmed", True, "Programmed"),
        ],
    }


def _inference_pool(pool: Obj, _n: int) -> Obj:
    return {
        "parents": [
            {
                "parentRef": {"group": "gateway.networking.k8s.io", "kind": "Gateway"},
                "conditions": [
                    _condition("Accepted", True, "Accepted"),
                    _condition("ResolvedRefs", True, "ResolvedRefs"),
                ],
            }
        ]
    }


def _job(job: Obj, n: int) -> Obj:
    # A run-to-completion Job (the cache's hydration) finishes once a copy can run, else runs.
    if n < 1:
        return {"active": 1}
    return {
        "succeeded": 1,
        "conditions": [
            _condition("SuccessCriteriaMet", True, "CompletionsReached"),
            _condition("Complete", True, "CompletionsReached"),
        ],
    }


def _pod(pod: Obj, n: int) -> Obj:
    # A run-to-completion Pod (the cache's resolve step) succeeds once a copy can run; the
    # simulated Hub answers each question (its arguments) with a commit of its own.
    if n < 1:
        return {"phase": "Pending"}
    containers = objects.spec(pod).get("containers") or []
    asked = "\0".join(str(a) for c in containers for a in c.get("args") or ())
    commit = hashlib.sha1(asked.encode()).hexdigest()
    terminated = {"exitCode": 0, "reason": "Completed", "message": commit}
    return {
        "phase": "Succeeded",
        "containerStatuses": [
            {"name": c.get("name"), "state": {"terminated": terminated}} for c in containers
        ],
    }


def _persistent_volume_claim(pvc: Obj, _n: int) -> Obj:
    # The simulated cluster provisions every claim at once, whatever its storage class.
    spec = pvc.get("spec") or {}
    return {
        "phase": "Bound",
        "accessModes": list(spec.get("accessModes") or []),
        "capacity": dict(objects.dig(spec, "resources", "requests") or {}),
    }


def _accepted(_obj: Obj, _n: int) -> Obj:
    # The simulated Envoy Gateway accepts every GatewayClass.
    return {"conditions": [_condition("Accepted", True, "Accepted")]}


def _established(_crd: Obj, _n: int) -> Obj:
    return {
        "conditions": [
            _condition("NamesAccepted", True, "NoConflicts"),
            _condition("Established", True, "InitialNamesAccepted"),
        ]
    }


def _cert_manager_ready(_obj: Obj, _n: int) -> Obj:
    # The simulated cert-manager issues every certificate from a ready issuer at once.
    return {"conditions": [_condition("Ready", True, "Ready")]}


def _policy(policy: Obj, _n: int) -> Obj:
    # Envoy Gateway accepts the policy on each Gateway it targets.
    ancestors = []
    for ref in objects.spec(policy).get("targetRefs") or []:
        target = {
            "group": ref.get("group"),
            "kind": ref.get("kind"),
            "name": ref.get("name"),
            "namespace": objects.dig(policy, "metadata", "namespace", default=""),
            **({"sectionName": ref["sectionName"]} if ref.get("sectionName") else {}),
        }
        ancestors.append(_accepted_for(target))
    return {"ancestors": ancestors}


def _accepted_for(ancestor: Obj) -> Obj:
    """A policy's status for one ancestor: Envoy Gateway accepted it there."""
    return {
        "ancestorRef": ancestor,
        "controllerName": _ENVOY_GATEWAY,
        "conditions": [_condition("Accepted", True, "Accepted")],
    }


def _scaled(value: int | str, total: int) -> int:
    if isinstance(value, str) and value.endswith("%"):
        return total * int(value[:-1]) // 100
    return int(value)


def _omit_zero(status: Obj) -> Obj:
    # Kubernetes omits zero counters (omitempty), which is what readiness queries must survive.
    return {k: v for k, v in status.items() if v != 0}


def _condition(kind: str, ok: bool, reason: str) -> Obj:
    return {
        "type": kind,
        "status": "True" if ok else "False",
        "reason": reason,
        "lastTransitionTime": _TIME,
    }


# --- the front door's objects (InferenceGateway, ModelService, ModelEndpoint) -------------------


def _backend_tls_policy(policy: Obj, _n: int) -> Obj:
    # Accepted for the Gateway the route through each target attaches to.
    gateway = {"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "-"}
    return {"ancestors": [_accepted_for(gateway)]}


_STATUS = {
    "Deployment": _deployment,
    "Job": _job,
    "Pod": _pod,
    "PersistentVolumeClaim": _persistent_volume_claim,
    "LeaderWorkerSet": _leader_worker_set,
    "PodCliqueSet": _pod_clique_set,
    "PodCliqueScalingGroup": _scaling_group,
    "HTTPRoute": _http_route,
    "InferencePool": _inference_pool,
    "CustomResourceDefinition": _established,
    "GatewayClass": _accepted,
    "Issuer": _cert_manager_ready,
    "Certificate": _cert_manager_ready,
    "ClientTrafficPolicy": _policy,
    # Envoy Gateway accepts the Backend (its Backend API enabled, as the serving stack
    # installs it).
    "Backend": _accepted,
    "BackendTLSPolicy": _backend_tls_policy,
}
