"""The InferenceGateway composition: a fleet's front door, run on one of its clusters.

Everything is composed on the host InferenceCluster (named by ``spec.clusterName``) through its
ClusterProviderConfig, in the namespace of that cluster's inference Gateway; on the control plane
only the provider-kubernetes Objects and the client certificate:

- the front ``Gateway`` (the host's GatewayClass), one HTTPS listener for ``spec.hostname``;
- its server certificate: the user's Secret copied over, or a cert-manager ``Certificate`` from
  the user's issuer;
- its fleet client certificate: a ``Certificate`` on the control plane from the host cluster's
  fleet Issuer there (the fleet CA's key stays on the control plane), copied to the host with
  the fleet's trust bundle;
- per cluster of the fleet that publishes a gateway address, a ``Backend`` and a
  ``BackendTLSPolicy``: the mutually authenticated hop to that cluster's fleet listener, which
  every ModelService's route on this gateway sends its traffic through. These are composed by
  InferenceGatewayShards (``shards``, ``shard``), at most 16, each holding the hops to the
  clusters hashed to it, so no response grows with the whole fleet; a gateway that composed its
  hops itself hands them over to its shards (``handover``) without removing any from its host.

The routes themselves belong to the ModelServices (each reports whether it is programmed here).
Keys come from cert-manager or the user's Secret, never from the function.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from modelplane.apis import API_VERSION
from modelplane.compose.inferencegateway import (
    callers,
    catalog,
    frontlua,
    limits,
    objects,
    priority,
    shards,
)
from modelplane.compose.inferencegateway.handover import (
    LEGACY_BACKEND,
    handover_conditions,
    legacy_hops,
)
from modelplane.compose.shared.evidence import look_up
from modelplane.compose.shared.fleetsecrets import fleet_ca_names, front_certificate_problem
from modelplane.compose.shared.frontdoor import (
    CONTROL_NAMESPACE,
    ClusterGateway,
    FleetPKI,
    by_name,
    cluster_gateway,
    fleet_pki,
    front_gateway_name,
    gateway_withdrawn,
)
from modelplane.compose.shared.remote import (
    MANIFEST,
    OBSERVED_MANIFEST,
    cel_readiness,
    remote_object,
)
from modelplane.composer import Condition, Desired, Inputs, Requirement, Result
from modelplane.kube.names import dns_label
from modelplane.kube.objects import Obj, dig, mapping
from modelplane.observed import observed_ready, ready_as_observed
from modelplane.reasons import InferenceGateway
from modelplane.shortlist import counted, shortlist

CLUSTERS = "inference-clusters"
GATEWAY = "gateway"
TLS = "tls"
CLIENT_CERTIFICATE = "client-certificate"
CLIENT_SECRET = "client-secret"
READY = InferenceGateway.GATEWAY_READY
NAMED_CLUSTERS = 10
"""How many clusters GatewayReady names of those reached, waited for and unreachable: the
condition is sent with the gateway to every reconcile that requires it (every cluster, service
and endpoint), so it must not grow with the fleet; the shards name every cluster reached."""
REQUIREMENTS = {CLUSTERS: Requirement(API_VERSION, "InferenceCluster")}
CLUSTER_BY_NAME = "cluster"
"""Requirements asking for a dialled cluster the list does not hold: ``cluster/<name>``."""

GATEWAY_READY_QUERY = (
    "has(object.status) && has(object.status.addresses) && size(object.status.addresses) > 0"
    " && has(object.status.conditions)"
    ' && object.status.conditions.exists(c, c.type == "Programmed" && c.status == "True")'
)
CERTIFICATE_READY_QUERY = (
    "has(object.status) && has(object.status.conditions)"
    ' && object.status.conditions.exists(c, c.type == "Ready" && c.status == "True")'
)

OLD_SHAPE = (
    "InferenceGateway spec.backend/spec.traefik is the v0.3.1 shape (Traefik installed on the "
    "control plane), which Modelplane no longer composes: an InferenceGateway now runs on an "
    "InferenceCluster. Remove backend and traefik and set spec.clusterName, spec.hostname and "
    "spec.tls (secretRef or issuerRef), optionally spec.serviceSelector; nothing was changed"
)


def compose_gateway(inputs: Inputs) -> Result:
    ig = inputs.composite
    problem = _malformed(ig)
    if problem:
        return Result.failed(problem)
    hosted = _read_host(inputs)
    if isinstance(hosted, Result):
        return hosted
    dialled = _read_dialled(inputs, hosted)
    if isinstance(dialled, Result):
        return dialled
    name = str(ig["metadata"]["name"])
    result = Result(requirements={**REQUIREMENTS, **dialled.requirements})
    shard_hops, legacy_kept, waiting = _hops(
        inputs.observed, name, hosted.host, dialled.targets, dialled.unwritten
    )
    result.resources.update(shard_hops)
    result.resources.update(legacy_kept)
    pki = fleet_pki(dialled.fleet[str(ig["spec"]["clusterName"])])
    result.resources.update(_front(inputs, hosted, pki))
    guarded = limits.guarded_headers(ig["spec"]) + priority.GUARDED_HEADERS
    auth = callers.compose_callers(inputs, name, hosted.host, dialled.fleet, guarded)
    if auth.problem:
        return Result.failed(auth.problem)
    if not isinstance(ig["spec"].get("auth"), Mapping):
        # With auth the guard is one of the caller policies GatewayReady waits for; without,
        # the gateway does not wait: until it applies, headers pass as they did before.
        result.resources.update(callers.compose_guard(inputs, name, hosted.host, guarded))
    result.resources.update(auth.resources)
    budgets, problem = limits.compose_limits(inputs, name, hosted.host, auth)
    if problem:
        return Result.failed(problem)
    result.resources.update(budgets)
    result.resources.update(frontlua.compose_front_lua(inputs, name, hosted.host, auth))
    result.requirements.update(auth.requirements)
    if isinstance(ig["spec"].get("auth"), Mapping):
        result.requirements[catalog.SERVICES] = catalog.requirement(ig["spec"])
    _report(inputs, hosted, dialled, waiting, result, auth)
    result.conditions.extend(handover_conditions(ig, legacy_kept))
    return result


@dataclass(frozen=True)
class _Host:
    """The cluster the gateway runs on, ready to take it, and the fleet as listed."""

    fleet: dict[str, Obj]
    host: ClusterGateway
    class_name: str


@dataclass(frozen=True)
class _Dialled:
    """The fleet as the gateway dials it, every cluster it dials read (by name when the list
    does not hold it): the clusters that publish a gateway address and those that do not, the
    hop entry to each cluster it keeps a hop to, and those listed with no address written yet."""

    requirements: dict[str, Requirement]
    fleet: dict[str, Obj]
    reachable: list[ClusterGateway]
    unreachable: list[str]
    targets: dict[str, Obj]
    unwritten: set[str]


def _read_host(inputs: Inputs) -> _Host | Result:
    """The host cluster, or a held or failed result while it cannot take the gateway."""
    spec = inputs.composite["spec"]
    clusters = inputs.required.get(CLUSTERS)
    if clusters is None:
        return _hold(
            inputs, "Unknown", InferenceGateway.WAITING_FOR_FLEET, "reading InferenceClusters"
        )
    fleet = by_name(clusters)
    # Every cluster's own CA name is known only now; the fixed names were refused before.
    secret = str(dig(spec, "tls", "secretRef", "name") or "")
    copied = front_certificate_problem(secret, fleet_ca_names(fleet.values())) if secret else ""
    if copied:
        return Result.failed(copied)
    host_name = str(spec["clusterName"])
    if host_name not in fleet:
        missing = (
            f"InferenceCluster {host_name} does not exist; the gateway runs nowhere until it does"
        )
        return _hold(inputs, "False", InferenceGateway.CLUSTER_NOT_FOUND, missing)
    host = cluster_gateway(fleet[host_name])
    if not host.provider_config:
        no_config = f"InferenceCluster {host_name} publishes no providerConfigRef yet"
        return _hold(inputs, "False", InferenceGateway.WAITING_FOR_CLUSTER, no_config)
    class_name = host.class_name or _observed_class(inputs.observed.get(GATEWAY))
    if not class_name:
        no_class = (
            f"InferenceCluster {host_name} publishes no status.gateway.className: its serving "
            "stack has not installed the gateway software yet"
        )
        return _hold(inputs, "False", InferenceGateway.WAITING_FOR_CLUSTER, no_class)
    return _Host(fleet, host, class_name)


def _read_dialled(inputs: Inputs, hosted: _Host) -> _Dialled | Result:
    """The clusters the gateway dials, or a held result while one is not read yet."""
    # A cluster this gateway dials that the list does not hold is asked for by name: only
    # nothing back takes its hop away (the routes of every service on it use it).
    dialled = shards.observed_targets(inputs.observed)
    legacy = {k.partition("/")[2] for k in inputs.observed if k.startswith(LEGACY_BACKEND)}
    unlisted = (set(dialled) | legacy) - set(hosted.fleet)
    lookup = look_up(inputs, CLUSTER_BY_NAME, API_VERSION, "InferenceCluster", unlisted)
    if lookup.pending:
        message = f"reading InferenceCluster {', '.join(sorted(lookup.pending))}"
        held = _hold(inputs, "Unknown", InferenceGateway.WAITING_FOR_FLEET, message)
        held.requirements.update(lookup.requirements)
        return held
    fleet = {**hosted.fleet, **lookup.found}
    reachable, unreachable = _fleet(fleet)
    targets = {t.cluster: shards.target_entry(t) for t in reachable}
    # A cluster listed before its gateway address was written (or with only Crossplane's
    # conditions) is no evidence its gateway went away: the hop to it stays as it is.
    unwritten = {c for c in unreachable if not gateway_withdrawn(fleet[c])}
    targets.update({c: dialled[c] for c in sorted(unwritten & set(dialled))})
    return _Dialled(lookup.requirements, fleet, reachable, unreachable, targets, unwritten)


def _front(inputs: Inputs, hosted: _Host, pki: FleetPKI) -> dict[str, Desired]:
    """The front Gateway, its server certificate, and the fleet client certificate with its
    copy on the host."""
    ig = inputs.composite
    name, spec, host = str(ig["metadata"]["name"]), ig["spec"], hosted.host
    hostname, tls = str(spec["hostname"]), spec["tls"]
    acme = "issuerRef" in tls
    wanted: dict[str, tuple[Obj, Obj | None]] = {
        GATEWAY: (
            objects.front_gateway(name, hostname, host, hosted.class_name, acme),
            cel_readiness(GATEWAY_READY_QUERY),
        ),
        CLIENT_SECRET: (objects.client_secret_copy(name, host), None),
    }
    if tls.get("secretRef"):
        wanted[TLS] = (objects.tls_secret_copy(name, host), None)
    else:
        wanted[TLS] = (
            objects.tls_certificate(name, hostname, host, tls["issuerRef"]),
            cel_readiness(CERTIFICATE_READY_QUERY),
        )
    out: dict[str, Desired] = {}
    for key, (manifest, readiness) in wanted.items():
        obj = remote_object(
            dns_label("gw", name, key),
            CONTROL_NAMESPACE,
            host.provider_config,
            manifest,
            readiness=readiness,
        )
        if key == TLS and tls.get("secretRef"):
            obj["spec"]["references"] = objects.tls_references(str(tls["secretRef"]["name"]))
        if key == CLIENT_SECRET:
            obj["spec"]["references"] = objects.client_references(name, pki)
        out[key] = Desired(obj, ready_as_observed(inputs.observed.get(key)))
    # Issued on the control plane, beside the fleet CA; only its Secret is copied to the host.
    out[CLIENT_CERTIFICATE] = Desired(
        objects.client_certificate(name, pki),
        ready_as_observed(inputs.observed.get(CLIENT_CERTIFICATE)),
    )
    return out


def _report(
    inputs: Inputs,
    hosted: _Host,
    dialled: _Dialled,
    waiting: list[str],
    result: Result,
    auth: callers.Callers,
) -> None:
    """What the gateway publishes (its URL, front Gateway and address), and GatewayReady."""
    ig = inputs.composite
    name, hostname, host = str(ig["metadata"]["name"]), str(ig["spec"]["hostname"]), hosted.host
    address = _address(ig, inputs.observed.get(GATEWAY))
    result.status = {
        "url": f"https://{hostname}",
        "gateway": {
            "name": front_gateway_name(name),
            "namespace": host.namespace,
            "clusterName": str(ig["spec"]["clusterName"]),
        },
        **({"address": address} if address else {}),
    }
    pending = set(waiting)
    reached = [t.cluster for t in dialled.reachable if t.cluster not in pending]
    ready = _ready(inputs.observed, hostname, host, address, reached, waiting, dialled.unreachable)
    result.conditions.append(_with_callers(ready, inputs.observed, auth, ig["spec"]))


def _with_callers(
    ready: Condition, observed: Mapping[str, Obj], auth: callers.Callers, ig_spec: Obj
) -> Condition:
    """GatewayReady of a gateway with ``spec.auth``: it serves only once the caller policies
    are applied (before, nobody would be authenticated), and says how many Secrets it reads."""
    if not auth.resources and not auth.reading:
        return ready
    if auth.reading:
        return _provisioning(f"{ready.message}; reading {', '.join(auth.reading)}")
    # A budget not yet applied would let a caller past it: the gateway waits for it too.
    wanted = [callers.POLICY, callers.HEADER_GUARD]
    wanted += [limits.LIMITS] if callers.entries(ig_spec, "limits") else []
    applied = all(ready_as_observed(observed.get(k)) == "True" for k in wanted)
    said = f"callers from {counted(len(auth.secrets), 'Secret')}"
    if auth.secrets:
        said += f": {shortlist(auth.secrets, NAMED_CLUSTERS)}"
    if not applied:
        return _provisioning(f"{ready.message}; waiting for the caller policies; {said}")
    return ready._replace(message=f"{ready.message}; {said}")


def _hops(
    observed: Mapping[str, Obj],
    gateway: str,
    host: ClusterGateway,
    targets: Mapping[str, Obj],
    unwritten: set[str],
) -> tuple[dict[str, Desired], dict[str, Desired], list[str]]:
    """The shards holding the hops to ``targets`` (only those with a member), the gateway's own
    hop Objects still being handed over to them, and the clusters whose hop is not observed to
    exist yet (neither its shard reports it reached nor its own Object is Ready)."""
    members: dict[int, list[Obj]] = {}
    for cluster in sorted(targets):
        members.setdefault(shards.shard_of(cluster), []).append(targets[cluster])
    out: dict[str, Desired] = {}
    reached: set[str] = set()
    for n, entries in sorted(members.items()):
        key = f"{shards.SHARD}{n}"
        seen = observed.get(key)
        reached |= shards.reached(seen)
        out[key] = Desired(shards.shard(gateway, n, host, entries), ready_as_observed(seen))
    # A cluster its shard reports reached has the shard's own Objects holding its hop.
    handed = reached & set(targets)
    legacy = legacy_hops(observed, set(targets), unwritten, handed)
    waiting = [
        c
        for c in sorted(targets)
        if c not in handed and not observed_ready(observed.get(LEGACY_BACKEND + c))
    ]
    return out, legacy, waiting


def _malformed(ig: Obj) -> str | None:
    spec = ig.get("spec")
    if not isinstance(spec, dict):
        return "InferenceGateway spec is required"
    secret = mapping(spec, "tls", "secretRef")
    copied = front_certificate_problem(str(secret["name"])) if secret.get("name") else ""
    return (
        _shape_problem(spec)
        or copied
        or callers.auth_problem(spec)
        or limits.limits_problem(spec)
        or callers.without_auth(spec, "priority")
        or _secret_namespace_problem(secret)
    )


def _shape_problem(spec: Obj) -> str | None:
    """The old shape, a required field missing, or TLS given neither or both ways."""
    if "backend" in spec or "traefik" in spec:
        return OLD_SHAPE
    for field in ("clusterName", "hostname"):
        if not isinstance(spec.get(field), str) or not spec[field]:
            return f"InferenceGateway spec.{field} is required"
    tls = spec.get("tls")
    if not isinstance(tls, dict) or bool(tls.get("secretRef")) == bool(tls.get("issuerRef")):
        return "InferenceGateway spec.tls takes exactly one of secretRef or issuerRef"
    return None


def _secret_namespace_problem(secret: Mapping[str, Any]) -> str | None:
    namespace = secret.get("namespace") or CONTROL_NAMESPACE
    if namespace == CONTROL_NAMESPACE:
        return None
    return (
        f"InferenceGateway spec.tls.secretRef.namespace {namespace!r}: a gateway copies its "
        f"certificate only from {CONTROL_NAMESPACE}, the namespace of its own Objects; "
        "nothing was changed"
    )


def _fleet(fleet: Mapping[str, Obj]) -> tuple[list[ClusterGateway], list[str]]:
    """Clusters this gateway can reach (they publish a gateway address), and those it cannot."""
    targets = {name: cluster_gateway(fleet[name]) for name in sorted(fleet)}
    reachable = [target for target in targets.values() if target.address]
    return reachable, [name for name, target in targets.items() if not target.address]


def _ready(
    observed: Mapping[str, Obj],
    hostname: str,
    host: ClusterGateway,
    address: str,
    reached: list[str],
    waiting: list[str],
    unreachable: list[str],
) -> Condition:
    fleet = f"reaches the fleet listener of {counted(len(reached), 'cluster')}"
    if reached:
        fleet += f": {shortlist(reached, NAMED_CLUSTERS)}"
    if waiting:
        fleet += (
            f"; waiting for the hops to {len(waiting)} more: {shortlist(waiting, NAMED_CLUSTERS)}"
        )
    if unreachable:
        fleet += f"; no gateway address published by {shortlist(unreachable, NAMED_CLUSTERS)}"
    pending = [
        what
        for key, what in (
            (GATEWAY, "the Gateway is not programmed with an address"),
            (TLS, "the server certificate"),
            (CLIENT_CERTIFICATE, "the fleet client certificate"),
            (CLIENT_SECRET, "the fleet client certificate's copy"),
        )
        if ready_as_observed(observed.get(key)) != "True"
    ]
    where = f"https://{hostname} on cluster {host.cluster}"
    if pending or not address:
        return _provisioning(f"{where}: waiting for {', '.join(pending)}; {fleet}")
    return Condition(READY, "True", InferenceGateway.PROGRAMMED, f"{where} at {address}; {fleet}")


def _provisioning(message: str) -> Condition:
    return Condition(READY, "False", InferenceGateway.PROVISIONING, message)


def _address(ig: Obj, observed: Obj | None) -> str:
    """The first address the observed Gateway reports; before it was ever observed, the one
    already published (a rendered fleet that states its status) rather than none."""
    if observed is None:
        return str(dig(ig, "status", "address") or "")
    for entry in dig(_manifest(observed), "status", "addresses") or []:
        if isinstance(entry, Mapping) and entry.get("value"):
            return str(entry["value"])
    return ""


def _observed_class(observed: Obj | None) -> str:
    """The class the Gateway was applied with: kept when the cluster stops publishing one."""
    return str(dig(_manifest(observed), "spec", "gatewayClassName") or "")


def _manifest(observed: Obj | None) -> Mapping[str, Any]:
    """The remote object as provider-kubernetes last saw it, else as it was applied."""
    return dig(observed, *OBSERVED_MANIFEST) or dig(observed, *MANIFEST) or {}


def _hold(inputs: Inputs, status: Literal["False", "Unknown"], reason: str, message: str) -> Result:
    """Nothing can be decided: keep everything observed and what was published."""
    published = inputs.composite.get("status") or {}
    return Result.held(
        inputs.observed,
        requirements=REQUIREMENTS,
        status={k: published[k] for k in ("address", "url", "gateway") if k in published},
        conditions=[
            Condition(READY, status, reason, f"{message}; what was composed is kept as it is")
        ],
        # A gateway whose host is missing or unprepared serves nothing (nothing composed would
        # read Available).
        ready="False" if status == "False" else "Unspecified",
    )
