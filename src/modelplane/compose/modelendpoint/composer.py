"""The ModelEndpoint composition: one backend a ModelService can route to.

Two kinds of endpoint, told apart by ``spec.clusterName``:

- A replica on a Modelplane cluster (composed by its ModelDeployment). It composes nothing: its
  InferencePool is the replica's own, and the hop to its cluster is the InferenceGateways'. It
  is routable once its cluster publishes a gateway address; ``status.routing.backendName`` is
  then the pool's name.
- An external endpoint (written by hand). Requests reach it from the cluster of every
  InferenceGateway, through that cluster's inference Gateway, so on each such cluster it composes
  its ``Backend`` (the URL's host and port), a ``BackendTLSPolicy`` for https (the host verified
  with the system CAs), and with ``spec.auth`` a copy of the credential Secret and the
  ``HTTPRouteFilter`` that injects it. ``backendName`` is published once all of them exist.

Until then ``backendName`` is withheld, and ModelServices leave the endpoint out of their routes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from modelplane.apis import API_VERSION
from modelplane.compose.modelendpoint import external
from modelplane.compose.shared.egress import allowance_of, refusal
from modelplane.compose.shared.evidence import listed_and_found, recorded_names
from modelplane.compose.shared.frontdoor import (
    ClusterGateway,
    EndpointURL,
    InvalidURLError,
    by_name,
    cluster_gateway,
    external_backend_name,
    gateway_withdrawn,
    parse_url,
)
from modelplane.compose.shared.remote import NEVER_DELETE, remote_namespace, remote_object
from modelplane.composer import (
    Condition,
    ConditionStatus,
    Desired,
    Event,
    Inputs,
    Requirement,
    Result,
    namespace_of,
)
from modelplane.kube import objects
from modelplane.kube.names import dns_label
from modelplane.kube.objects import Obj
from modelplane.observed import carry_forward, observed_ready, ready_as_observed
from modelplane.reasons import ModelEndpoint
from modelplane.shortlist import plural

CLUSTER = "cluster"
CLUSTERS = "inference-clusters"
GATEWAYS = "inference-gateways"
GATEWAY_BY_NAME = "gateway"
"""Requirements asking for a gateway the endpoint has objects for that the list does not hold:
``gateway/<name>``."""
HOSTED_FOR = "modelplane.ai/gateways"
"""Annotation on each Object an external endpoint composes on a cluster: the InferenceGateways
running there it was composed for (comma separated), so a list that comes back without them is
checked by name before that cluster's objects go."""
ROUTING = ModelEndpoint.ROUTING_READY


def compose_endpoint(inputs: Inputs) -> Result:
    spec = inputs.composite.get("spec")
    if not isinstance(spec, dict) or not isinstance(spec.get("url"), str):
        return Result.failed("ModelEndpoint spec.url is required")
    if spec.get("clusterName"):
        result = _replica(inputs, str(spec["clusterName"]))
    else:
        result = _external(inputs)
    # Routable or not ready: an endpoint on a missing cluster composes nothing that would say so.
    if any(c.type == ROUTING and c.status == "False" for c in result.conditions):
        result.ready = "False"
    return result


def _replica(inputs: Inputs, cluster_name: str) -> Result:
    requirements = {CLUSTER: Requirement(API_VERSION, "InferenceCluster", match_name=cluster_name)}
    found = inputs.required.get(CLUSTER)
    if found is None:
        return _hold(inputs, requirements, f"reading InferenceCluster {cluster_name}")
    result = Result(requirements=requirements)
    if not found:
        missing = f"InferenceCluster {cluster_name} does not exist"
        return _routing(result, "False", ModelEndpoint.CLUSTER_NOT_FOUND, missing)
    gateway = cluster_gateway(found[0])
    published = objects.mapping(inputs.composite, "status", "routing")
    if not gateway.address and published.get("backendName") and not gateway_withdrawn(found[0]):
        # The cluster's status is not written yet (or lists only Crossplane's conditions): no
        # evidence its gateway went away, so the endpoint stays routable as published.
        result.status = {"routing": dict(published)}
        as_published = (
            f"InferencePool {published['backendName']} on cluster {cluster_name} (as last "
            "published: the cluster's gateway status is not written yet)"
        )
        return _routing(result, "True", ModelEndpoint.CLUSTER_REACHABLE, as_published)
    if not gateway.address:
        no_address = f"InferenceCluster {cluster_name} publishes no gateway address yet"
        return _routing(result, "False", ModelEndpoint.WAITING_FOR_GATEWAY, no_address)
    pool = str(inputs.composite["spec"].get("inferencePool") or "")
    result.status = {"routing": {"backendName": pool, "clusterName": cluster_name}}
    reached = (
        f"InferencePool {pool} on cluster {cluster_name}, reached through its gateway's "
        f"fleet listener ({gateway.fleet_hostname})"
    )
    return _routing(result, "True", ModelEndpoint.CLUSTER_REACHABLE, reached)


def _external(inputs: Inputs) -> Result:
    endpoint = inputs.composite
    requirements = {
        GATEWAYS: Requirement(API_VERSION, "InferenceGateway"),
        CLUSTERS: Requirement(API_VERSION, "InferenceCluster"),
    }
    url = _url(str(endpoint["spec"]["url"]))
    if isinstance(url, str):
        return _refused(requirements, ModelEndpoint.INVALID_URL, f"spec.url {url}")
    # What no gateway may reach is refused before anything is read; what only the platform
    # team may open, once the gateways (and what they allow) are read.
    never = refusal(url.host)
    if never:
        return _refused(requirements, ModelEndpoint.EGRESS_REFUSED, f"spec.url: {never}")
    hosted = _read_hosts(inputs, requirements, url)
    if isinstance(hosted, Result):
        return hosted
    # A gateway's cluster that is not listed or cannot be written to now keeps what was
    # composed there.
    kept = {k: o for k, o in inputs.observed.items() if k.partition("/")[2] in hosted.unwritable}
    result = Result(requirements=hosted.requirements, resources=carry_forward(kept))
    if not hosted.hosts:
        unhosted = (
            "no InferenceGateway runs on a cluster that publishes a providerConfigRef yet: "
            "nothing can route to this endpoint"
        )
        return _routing(result, "False", ModelEndpoint.NO_GATEWAY, unhosted)
    waiting = _compose_on_hosts(inputs, url, hosted, result)
    _report_routing(endpoint, url, hosted, waiting, result)
    return result


@dataclass(frozen=True)
class _Hosted:
    """Where the external endpoint is reached from: the gateways (every by-name lookup
    answered), the clusters they run on that can be written to, in name order, and those that
    are not listed or cannot be written to now."""

    requirements: dict[str, Requirement]
    gateways: list[Obj]
    hosts: list[ClusterGateway]
    unwritable: set[str]


def _url(url: str) -> EndpointURL | str:
    """The endpoint's URL, or why it cannot be reached by one."""
    try:
        parsed = parse_url(url)
    except InvalidURLError as e:
        return str(e)
    if parsed.tls and parsed.is_ip:
        return (
            f"{url!r}: an https endpoint must be named by a DNS name, which its certificate is "
            "verified against"
        )
    return parsed


def _read_hosts(
    inputs: Inputs, requirements: dict[str, Requirement], url: EndpointURL
) -> _Hosted | Result:
    """The gateways and their clusters, or a held or refused result while they are not read,
    none is listed on no evidence, or the gateways do not allow the URL."""
    missing = [n for n in requirements if n not in inputs.required]
    if missing:
        return _hold(inputs, requirements, f"reading {', '.join(missing)}")
    # A gateway the composed objects were made for that the list does not hold is asked for by
    # name: only nothing back is evidence that its cluster's objects may go.
    composed_for = recorded_names(inputs.observed.values(), HOSTED_FOR)
    gateways, lookup = listed_and_found(
        inputs, GATEWAYS, GATEWAY_BY_NAME, "InferenceGateway", composed_for
    )
    requirements = {**requirements, **lookup.requirements}
    if gateways is None:
        return _hold(inputs, requirements, f"reading {', '.join(lookup.asked())}")
    private = refusal(url.host, [allowance_of(g) for g in gateways]) if gateways else ""
    if private:
        return _refused(requirements, ModelEndpoint.EGRESS_REFUSED, f"spec.url: {private}")
    if not gateways and inputs.observed and not lookup.gone:
        # A list that failed looks like every gateway deleted: keep what is composed.
        return _hold(inputs, requirements, "no InferenceGateway is listed")
    hosts, unwritable = _hosts(gateways, inputs.required[CLUSTERS])
    return _Hosted(requirements, gateways, hosts, unwritable)


def _compose_on_hosts(
    inputs: Inputs, url: EndpointURL, hosted: _Hosted, result: Result
) -> list[str]:
    """The endpoint's objects on each gateway's cluster; the clusters where they are not all
    ready yet."""
    waiting: list[str] = []
    hosting = _hosting(hosted.gateways)
    for host in hosted.hosts:
        composed = _on_host(inputs.composite, url, host, hosting[host.cluster])
        for key, obj in composed.items():
            result.resources[key] = Desired(obj, ready_as_observed(inputs.observed.get(key)))
        if not all(observed_ready(inputs.observed.get(key)) for key in composed):
            waiting.append(host.cluster)
    return waiting


def _report_routing(
    endpoint: Obj, url: EndpointURL, hosted: _Hosted, waiting: list[str], result: Result
) -> None:
    """The backend name once every cluster's objects are ready, and RoutingReady."""
    names = ", ".join(h.cluster for h in hosted.hosts)
    if waiting:
        published = objects.mapping(endpoint, "status", "routing")
        if published.get("backendName"):
            # A backend not ready yet on one cluster (a new gateway's, or one re-created) is
            # no evidence against the others: the endpoint stays routable as published.
            result.status = {"routing": dict(published)}
        clusters = f"{plural('cluster', len(waiting))} {', '.join(waiting)}"
        message = f"waiting for the backend on {clusters} (gateways run on {names})"
        _routing(result, "False", ModelEndpoint.WAITING_FOR_BACKEND, message)
        return
    backend = external_backend_name(str(endpoint["metadata"]["name"]))
    result.status = {"routing": {"backendName": backend}}
    reachable = f"{url.scheme}://{url.host}:{url.port} reachable from the gateways on {names}"
    _routing(result, "True", ModelEndpoint.BACKEND_CONFIGURED, reachable)


def _hosts(gateways: list[Obj], clusters: list[Obj]) -> tuple[list[ClusterGateway], set[str]]:
    """The distinct clusters InferenceGateways run on that can be written to, in name order,
    and those that are not listed or cannot be written to now (no providerConfigRef)."""
    fleet = by_name(clusters)
    names = {str(objects.spec(g).get("clusterName") or "") for g in gateways}
    hosts = [cluster_gateway(fleet[n]) for n in sorted(names) if n in fleet]
    writable = [h for h in hosts if h.provider_config]
    return writable, names - {h.cluster for h in writable}


def _hosting(gateways: list[Obj]) -> dict[str, list[str]]:
    """The InferenceGateways on each cluster, by cluster name."""
    out: dict[str, list[str]] = {}
    for g in sorted(gateways, key=lambda g: str(g["metadata"]["name"])):
        cluster = str(objects.spec(g).get("clusterName") or "")
        out.setdefault(cluster, []).append(str(g["metadata"]["name"]))
    return out


def _on_host(
    endpoint: Obj, url: EndpointURL, host: ClusterGateway, gateways: list[str]
) -> dict[str, Obj]:
    """The endpoint's objects on one gateway's cluster (for ``gateways``, those running there),
    keyed ``<what>/<cluster>`` (a name holds no ``/``, so no two keys meet)."""
    name = str(endpoint["metadata"]["name"])
    namespace = namespace_of(endpoint)
    manifests: dict[str, tuple[Obj, list[str] | None]] = {
        "namespace": (remote_namespace(namespace), list(NEVER_DELETE)),
        "backend": (external.backend(name, namespace, url), None),
    }
    if url.tls:
        manifests["backend-tls"] = (external.backend_tls(name, namespace, url), None)
    auth = endpoint["spec"].get("auth")
    if auth:
        manifests["credential"] = (external.credential_secret(name, namespace), None)
        manifests["credential-filter"] = (external.credential_filter(name, namespace, auth), None)
    out: dict[str, Obj] = {}
    for what, (manifest, policies) in manifests.items():
        key = f"{what}/{host.cluster}"
        obj = remote_object(
            dns_label(name, key),
            namespace,
            host.provider_config,
            manifest,
            management_policies=policies,
        )
        obj["metadata"]["annotations"] = {HOSTED_FOR: ",".join(gateways)}
        if what == "credential":
            obj["spec"]["references"] = external.credential_references(namespace, auth)
        out[key] = obj
    return out


def _routing(result: Result, status: ConditionStatus, reason: str, message: str) -> Result:
    result.conditions.append(Condition(ROUTING, status, reason, message))
    return result


def _refused(requirements: Mapping[str, Requirement], reason: str, why: str) -> Result:
    """Not routable, and nothing composed: whatever was composed for it goes."""
    message = f"{why}; nothing is composed"
    return Result(
        requirements=dict(requirements),
        conditions=[Condition(ROUTING, "False", reason, message)],
        events=[Event("Warning", message, reason)],
    )


def _hold(inputs: Inputs, requirements: Mapping[str, Requirement], message: str) -> Result:
    """Nothing can be decided yet: keep what is composed and what was published."""
    published = objects.status(inputs.composite)
    return Result.held(
        inputs.observed,
        requirements=requirements,
        status={"routing": published["routing"]} if published.get("routing") else {},
        conditions=[
            Condition(ROUTING, "Unknown", ModelEndpoint.WAITING, f"{message}; kept as it is")
        ],
    )
