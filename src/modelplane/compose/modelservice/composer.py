"""The ModelService composition: one address for a model on every gateway that serves it.

Required: every InferenceGateway, every InferenceCluster, and per entry the ModelEndpoints its
selector matches **in the service's own namespace** (two teams' same-labelled endpoints never
share traffic). ``compose_service`` reads them (holding everything while any is not read),
``plan.plan_service`` decides the lanes and weights, ``routes`` builds the routes, and this
module places them and reports (``status.py``):

- per serving gateway (``spec.serviceSelector`` unset or matching the service's labels, on a
  cluster that can be written to): ``front/<gateway>`` (the route) and ``unavailable/<gateway>``
  (the 503 it answers with while nothing is ready, through ``unavailable-route/<gateway>`` on
  that gateway's own fleet listener), on that gateway's cluster;
- per cluster holding ready replicas: ``fleet/<cluster>``;
- per gateway cluster and ready external endpoint: ``egress/<cluster>/<endpoint>``.
- per ModelReplica whose pool a route names: ``holds/<replica>``, a Usage refusing its deletion
  until the routes let go (``holds.py``).

With no ready endpoint the front routes stay and answer 503, and are marked not ready, so the
service is not Ready, unless what its entries select is asleep (``scaletozero.py``): then the
503 says the model is waking, the request that met it wakes it, and the service is Ready,
reason Asleep. Every reconcile publishes ``status.activation.clusters``, the Envoy clusters of
its front rules, which a deployment asleep wakes on.

Nothing observed is dropped on no evidence (``_kept``): while the requirements are being read,
while no gateway is listed, for a cluster not listed or not writable, and a route behind the
front routes until they stop sending it traffic. A cluster the routes are on that the list does
not hold is asked for by name: only nothing back (the cluster is deleted) takes its lanes and
fleet route out, and with them the holds on its replicas.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from modelplane.apis import API_VERSION
from modelplane.compose.modelservice import (
    callers,
    guard,
    models,
    routes,
    status,
    unavailable,
    usage,
)
from modelplane.compose.modelservice.gateways import Serving, Skipped, gateways_serving
from modelplane.compose.modelservice.holds import holds
from modelplane.compose.modelservice.plan import Plan, plan_service
from modelplane.compose.shared.evidence import listed_and_found, look_up_unlisted, recorded_names
from modelplane.compose.shared.frontdoor import (
    ENDPOINT_HEADER,
    ROUTE_READINESS,
    by_name,
    cluster_backend_name,
    cluster_gateway,
    parse_url,
)
from modelplane.compose.shared.remote import MANIFEST, remote_object
from modelplane.compose.shared.routed import backend_refs, header_values
from modelplane.compose.shared.scaletozero import ACTIVATION_PATH, asleep, rule_cluster, selects
from modelplane.composer import Desired, Inputs, Requirement, Result, namespace_of
from modelplane.kube import objects
from modelplane.kube.names import dns_label
from modelplane.kube.objects import Obj
from modelplane.labels import ROUTES_POOLS
from modelplane.observed import carry_forward, ready_as_observed

GATEWAYS = "inference-gateways"
CLUSTERS = "inference-clusters"
BY_NAME = "endpoint"
"""Requirements asking for a routed endpoint no list holds: ``endpoint/<namespace>/<name>``."""
GATEWAY_BY_NAME = "gateway"
"""Requirements asking for a gateway with routes on it that the list does not hold."""
CLUSTER_BY_NAME = "cluster"
"""Requirements asking for a cluster the routes are on (a fleet route, a routed replica's
endpoint) that the list does not hold."""
MODELS = "models"
"""Composition resource name prefix of a gateway's AIGatewayRoute: ``models/<gateway>``."""
MODEL_BACKEND = "model-backend"
"""Prefix of its AIServiceBackends: ``model-backend/<gateway>/<cluster>``."""
DEPLOYMENTS = "deployments"
"""Every ModelDeployment of the service's namespace: an entry matching none of its endpoints or
replicas may select a deployment asleep (``scaletozero.asleep``), which is no misspelled
selector. Like the replicas, read only to tell cases apart: nothing waits for it."""
ACTIVATION_MAX = 64
"""Clusters ``status.activation.clusters`` lists: two per gateway serving the service."""
ROUTED = "modelplane.ai/routed-endpoints"
"""Annotation on each front route's Object: the endpoints it sends traffic to (comma separated),
so a list that comes back without them is checked by name before they leave the route."""


def endpoints_requirement(index: int) -> str:
    return f"endpoints-{index}"


def replicas_requirement(index: int) -> str:
    """The ModelReplicas entry ``index``'s selector matches: a replica's endpoint carries its
    labels, so an entry matching neither selects nothing (a misspelled label), where one
    matching a replica only waits for it to serve."""
    return f"replicas-{index}"


def compose_service(inputs: Inputs) -> Result:
    ms = inputs.composite
    problem = _malformed(ms)
    if problem:
        return Result.failed(problem)
    read = _read(inputs)
    if isinstance(read, Result):
        return read
    plan = plan_service(ms, read.selected, read.fleet, frozenset(read.routed), read.gone)
    sleeping = _sleeping(inputs)
    # Nothing ready and something selected asleep: the 503 wakes it, so it says so.
    waking = not plan.lanes and bool(sleeping)
    serving, skipped = gateways_serving(ms, read.gateways, read.fleet)
    problem = _callers_problem(ms, read.gateways, serving)
    if problem:
        return Result.failed(problem)  # nothing composed changes: what serves keeps serving
    wanted = _wanted(ms, plan, serving, read.fleet, inputs.observed, waking)
    allowed = _wanted_callers(inputs, serving, read.gateways, wanted)
    # No unguarded window: what would newly open the service waits for its caller policy.
    guarded = {g.name: (f"front/{g.name}", f"{MODELS}/{g.name}") for g in serving}
    held = guard.held(ms["spec"], inputs.observed, guarded)
    result = Result(
        requirements=read.requirements | allowed.requirements,
        resources=_kept(inputs, read.fleet, skipped, read.gone) | allowed.kept,
    )
    _place(inputs, plan, wanted, result, held.routes, waking)
    _report(inputs, plan, serving, skipped, wanted, result, held.waiting, sleeping)
    usage.add(inputs, result)
    return result


@dataclass(frozen=True)
class _Read:
    """What the service reads, every by-name lookup answered: the endpoints each entry
    selects, the gateways, the clusters by name, the endpoints the observed routes send traffic
    to, and the clusters asked for by name and not found (deleted)."""

    requirements: dict[str, Requirement]
    selected: list[list[Obj]]
    gateways: list[Obj]
    fleet: dict[str, Obj]
    routed: set[str]
    gone: frozenset[str]


def _read(inputs: Inputs) -> _Read | Result:
    """What the service reads, or a held result while any of it is not read yet."""
    ms = inputs.composite
    entries = ms["spec"]["endpoints"]
    requirements = _requirements(namespace_of(ms), entries)
    # The replicas and deployments only tell a typo from a deployment not serving yet or
    # asleep: not read, nothing is called a typo or asleep, and nothing waits for them.
    missing = [
        r
        for r in requirements
        if r not in inputs.required and not r.startswith("replicas-") and r != DEPLOYMENTS
    ]
    if missing:
        return _hold(inputs, requirements, missing)
    selected = [list(inputs.required[endpoints_requirement(i)]) for i in range(len(entries))]
    return _read_unlisted(inputs, requirements, selected)


def _read_unlisted(
    inputs: Inputs, requirements: dict[str, Requirement], selected: list[list[Obj]]
) -> _Read | Result:
    """The lists read, with what the routes are on that no list holds asked for by name."""
    # An endpoint the routes send traffic to, or a gateway they are on, that no list holds is
    # asked for by name: only nothing back (or, for an endpoint, found no longer selected)
    # takes it out of the routes.
    routed = _routed(inputs.observed)
    listed = [e for found in selected for e in found]
    namespace = namespace_of(inputs.composite)
    lookup = look_up_unlisted(
        inputs, BY_NAME, API_VERSION, "ModelEndpoint", routed, listed, namespace
    )
    gateways = list(inputs.required[GATEWAYS])
    on = {k.partition("/")[2] for k in inputs.observed if k.startswith("front/")}
    # With no gateway listed at all every route is held anyway (_kept).
    gone_gateways = look_up_unlisted(
        inputs, GATEWAY_BY_NAME, API_VERSION, "InferenceGateway", on if gateways else (), gateways
    )
    # A cluster the routes are on that the list does not hold is asked for by name: found, it
    # is read as listed (the list lagged); nothing back is the evidence that takes its lanes,
    # its fleet route and so the holds on its replicas out.
    on_clusters = _routed_clusters(inputs.observed, [*listed, *lookup.found.values()], routed)
    clusters, gone_clusters = listed_and_found(
        inputs, CLUSTERS, CLUSTER_BY_NAME, "InferenceCluster", on_clusters
    )
    asked_by_name = lookup.requirements | gone_gateways.requirements | gone_clusters.requirements
    requirements = requirements | asked_by_name
    pending = [f"ModelEndpoint {n} by name (routed, not listed)" for n in sorted(lookup.pending)]
    pending += gone_gateways.asked() + gone_clusters.asked()
    if pending or clusters is None:
        return _hold(inputs, requirements, pending)
    for endpoint in lookup.found.values():
        entry = _selecting(inputs.composite["spec"]["endpoints"], endpoint)
        if entry is not None:
            selected[entry].append(endpoint)
    return _Read(
        requirements,
        selected,
        [*gateways, *gone_gateways.found.values()],
        by_name(clusters),
        routed,
        gone_clusters.gone,
    )


def _sleeping(inputs: Inputs) -> dict[int, list[str]]:
    """Per entry, the deployments asleep its selector matches, by name (none while the
    deployments are not read)."""
    deployments = [md for md in inputs.required.get(DEPLOYMENTS) or () if asleep(md)]
    out: dict[int, list[str]] = {}
    for i, entry in enumerate(inputs.composite["spec"]["endpoints"]):
        labels = dict(objects.mapping(entry, "selector", "matchLabels"))
        names = sorted(objects.name(md) for md in deployments if selects(labels, md))
        if names:
            out[i] = names
    return out


def _place(
    inputs: Inputs,
    plan: Plan,
    wanted: Wanted,
    result: Result,
    held: Mapping[str, Desired | None],
    waking: bool,
) -> None:
    """Each wanted route and filter as an Object on its cluster, and the holds on the replicas
    the routes name. A route ``held`` for its caller policy stands as observed, or not at all
    (``guard.py``). ``waking``: nothing is ready because the model is asleep, which the first
    request ends: the routes serve as they should."""
    ms = inputs.composite
    namespace, name = namespace_of(ms), str(ms["metadata"]["name"])
    for key, (provider_config, manifest, is_route) in wanted.items():
        if key in held:
            standing = held[key]
            if standing is not None:
                result.resources[key] = standing
            continue
        obj = remote_object(
            dns_label(name, key),
            namespace,
            provider_config,
            manifest,
            readiness=ROUTE_READINESS if is_route else None,
        )
        if is_route:
            # A replica leaving its deployment is deleted once no route names its pool.
            obj["metadata"]["labels"] = {ROUTES_POOLS: "true"}
        ready = ready_as_observed(inputs.observed.get(key))
        if key.startswith("front/"):
            obj["metadata"]["annotations"] = {ROUTED: ",".join(plan.routed())}
            if not plan.lanes and not waking:
                ready = "False"  # it answers 503: the service is not Ready
        result.resources[key] = Desired(obj, ready)
    # Deleting a replica the routes name waits until they let go.
    held = holds(ms, plan, inputs.observed, [d.resource for d in result.resources.values()])
    result.resources.update(held)


def _report(
    inputs: Inputs,
    plan: Plan,
    serving: list[Serving],
    skipped: list[Skipped],
    wanted: Wanted,
    result: Result,
    waiting: list[str],
    sleeping: Mapping[int, list[str]],
) -> None:
    """The service's status, conditions and events, and whether it is ready; ``waiting``: the
    gateways whose routes wait for their caller policy; ``sleeping``: per entry, the
    deployments asleep it selects."""
    ms = inputs.composite
    programmed = {
        key: ready_as_observed(inputs.observed.get(key)) == "True"
        for key, (_, _, is_route) in wanted.items()
        if is_route
    }
    unselected = [
        i
        for i in range(len(ms["spec"]["endpoints"]))
        if inputs.required.get(replicas_requirement(i)) == [] and i not in sleeping
    ]
    waits = guard.waiting_message(waiting)
    status.report(result, ms, plan, serving, skipped, programmed, unselected, waits, sleeping)
    result.status[ACTIVATION_PATH[1]] = {ACTIVATION_PATH[2]: _activation(result.resources)}
    # Serving by every entry on every gateway, or not ready: with no gateway (or one on a
    # missing cluster) nothing is composed that would say so.
    if any(c.status != "True" for c in result.conditions):
        result.ready = "False"


def _activation(resources: Mapping[str, Desired]) -> list[str]:
    """The Envoy clusters of the front rules the service has on its gateways, composed or kept
    as observed: its path rule's (``front/<gateway>``) and its model rule's (``models/<gateway>``:
    Envoy AI Gateway v1.1.0 gives the HTTPRoute it generates the AIGatewayRoute's name and
    namespace, the service's rule first). A deployment asleep wakes on their request rate."""
    clusters = set()
    for key, desired in resources.items():
        if key.partition("/")[0] not in ("front", MODELS):
            continue
        meta = objects.dig(desired.resource, *MANIFEST, "metadata")
        if isinstance(meta, Mapping) and meta.get("name") and meta.get("namespace"):
            clusters.add(rule_cluster(str(meta["namespace"]), str(meta["name"]), 0))
    return sorted(clusters)[:ACTIVATION_MAX]


Wanted = dict[str, tuple[str, Obj, bool]]
"""Composition resource name -> (ClusterProviderConfig, remote manifest, whether it is a route)."""


def _remote_name(obj: Mapping[str, Any] | None) -> str | None:
    """The name of what an observed Object manages on its cluster, if it says."""
    value = objects.dig(obj, *MANIFEST, "metadata", "name")
    return value if isinstance(value, str) else None


def _wanted(
    ms: Obj,
    plan: Plan,
    serving: list[Serving],
    fleet: Mapping[str, Obj],
    observed: Mapping[str, Obj],
    waking: bool = False,
) -> Wanted:
    namespace, name = namespace_of(ms), str(ms["metadata"]["name"])
    timeout = str(ms["spec"].get("timeout") or routes.NO_TIMEOUT)
    wanted: Wanted = {}
    for g in serving:
        _wanted_front(wanted, ms, plan, g, timeout, observed, waking)
        _wanted_models(wanted, ms, plan, g, timeout)
    if not serving:
        return wanted  # the routes behind a front door no gateway opens would carry nothing
    for cluster, lanes in plan.clusters().items():
        if cluster not in fleet or not cluster_gateway(fleet[cluster]).provider_config:
            continue  # routed on no evidence against it: its fleet route is kept as observed
        target = cluster_gateway(fleet[cluster])
        route = routes.fleet_route(target, namespace, name, lanes, timeout)
        wanted[f"fleet/{cluster}"] = (target.provider_config, route, True)
    hosts = {g.host.cluster: g.host for g in serving}
    members = {m.name: m for m in plan.members}
    for host in (hosts[c] for c in sorted(hosts)):
        for lane in plan.externals():
            espec = objects.spec(members[lane.endpoint].endpoint)
            url = parse_url(str(espec["url"]))
            rewrite = str(espec.get("rewritePath") or "/")
            route = routes.egress_route(
                host, namespace, name, lane.endpoint, url, rewrite, bool(espec.get("auth")), timeout
            )
            wanted[f"egress/{host.cluster}/{lane.endpoint}"] = (host.provider_config, route, True)
    return wanted


def _wanted_front(
    wanted: Wanted,
    ms: Obj,
    plan: Plan,
    g: Serving,
    timeout: str,
    observed: Mapping[str, Obj],
    waking: bool,
) -> None:
    """The service by path on one gateway: its route, its 503 filter, and while no lane is ready
    or every one is parked the sentinel route on the gateway's own fleet listener that answers
    the route's sentinel lane with that filter (``unavailable.py``)."""
    namespace, name = namespace_of(ms), str(ms["metadata"]["name"])
    kept = (
        _remote_name(observed.get(f"front/{g.name}")),
        _remote_name(observed.get(f"unavailable/{g.name}")),
    )
    at_zero = not plan.lanes or plan.parked
    sentinel = unavailable.path_sentinel_ref(g.name, g.host) if at_zero else None
    front = routes.front_route(
        g.name, g.hostname, g.host, namespace, name, plan, timeout, kept[0], sentinel
    )
    wanted[f"front/{g.name}"] = (g.host.provider_config, front, True)
    answer = routes.unavailable_filter(g.name, g.host, namespace, name, kept[1], waking)
    wanted[f"unavailable/{g.name}"] = (g.host.provider_config, answer, False)
    if at_zero:
        filter_name = str(answer["metadata"]["name"])
        route = unavailable.sentinel_route(g.name, g.host, namespace, name, filter_name)
        wanted[f"{unavailable.ROUTE}/{g.name}"] = (g.host.provider_config, route, False)


def _wanted_models(wanted: Wanted, ms: Obj, plan: Plan, g: Serving, timeout: str) -> None:
    """The service by model name on one gateway: its AIGatewayRoute and an AIServiceBackend per
    cluster its lanes reach (``models.py``), and while no lane is ready or every one is parked
    the sentinel lane to the path route's sentinel route (``unavailable.py``). None is a route
    whose readiness RoutingReady reads: the path route it mirrors is."""
    namespace, name = namespace_of(ms), str(ms["metadata"]["name"])
    served = ms["spec"].get("modelName")
    sentinel = None
    if not plan.lanes or plan.parked:
        sentinel = unavailable.sentinel_ref(g.name, namespace, name)
        backend = unavailable.sentinel_backend(g.name, g.host, namespace, name)
        wanted[f"{unavailable.BACKEND}/{g.name}"] = (g.host.provider_config, backend, False)
    route = models.model_route(
        g.name, g.hostname, g.host, namespace, name, plan, timeout, served and str(served), sentinel
    )
    wanted[f"{MODELS}/{g.name}"] = (g.host.provider_config, route, False)
    for cluster in models.targets(g.host, plan):
        backend = models.model_backend(g.name, g.host, namespace, name, cluster)
        wanted[f"{MODEL_BACKEND}/{g.name}/{cluster}"] = (g.host.provider_config, backend, False)


def _callers_problem(ms: Obj, gateways: list[Obj], serving: list[Serving]) -> str:
    """Why ``spec.callers`` cannot be enforced on a gateway serving the service, or ""."""
    if not callers.wanted_callers(ms["spec"]):
        return ""
    on = {g.name for g in serving}
    for ig in sorted(gateways, key=objects.name):
        if objects.name(ig) in on:
            problem = callers.auth_problem(namespace_of(ms), objects.name(ms), ig)
            if problem:
                return problem
    return ""


def _wanted_callers(
    inputs: Inputs, serving: list[Serving], gateways: list[Obj], wanted: Wanted
) -> callers.Callers:
    """``spec.callers`` on each serving gateway, over its path route and the HTTPRoute the AI
    Gateway generates for its model route (named after it), added to ``wanted``."""
    ms = inputs.composite
    spec, namespace, name = ms["spec"], namespace_of(ms), objects.name(ms)
    out = callers.Callers()
    if not callers.wanted_callers(spec):
        return out
    by = {objects.name(ig): ig for ig in gateways}
    for g in serving:
        routes = [
            str(wanted[f"{what}/{g.name}"][1]["metadata"]["name"]) for what in ("front", MODELS)
        ]
        one = callers.compose(
            spec, namespace, name, by[g.name], g.host, routes, inputs.required, inputs.observed
        )
        for key, manifest in one.manifests.items():
            wanted[key] = (g.host.provider_config, manifest, False)
        out.kept.update(one.kept)
        out.requirements.update(one.requirements)
    return out


def _kept(
    inputs: Inputs, fleet: Mapping[str, Obj], skipped: list[Skipped], gone: frozenset[str]
) -> dict[str, Desired]:
    """Observed objects these inputs no longer ask for that stay as they are, since their going
    could cut requests that still arrive, or rest on no evidence (a cluster in ``gone``, asked
    for by name and not found, is evidence: what is on it is not kept for being unlisted):

    - a gateway's route while that gateway's cluster is not listed or cannot be written to,
      and every gateway's while no gateway is listed at all (a list that failed looks like
      every gateway deleted);
    - a cluster's fleet route (an endpoint's egress route) while an observed front route still
      sends it traffic: the front routes change first and what is behind them goes on the next
      reconcile; or while its cluster is not listed (and not known gone) or cannot be written
      to.
    """
    routed_clusters, routed_endpoints = _still_routed(inputs.observed, fleet)
    keeping = _Keeping(
        observed=inputs.observed,
        fleet=fleet,
        gone=gone,
        gateways_listed=bool(inputs.required[GATEWAYS]),
        skipped_keys=frozenset(f"{what}/{s.name}" for s in skipped for what in _FRONTS),
        unwritable=frozenset(c for c in fleet if not cluster_gateway(fleet[c]).provider_config),
        routed_clusters=frozenset(routed_clusters),
        routed_endpoints=frozenset(routed_endpoints),
    )
    return carry_forward({k: obj for k, obj in inputs.observed.items() if keeping.keeps(k, obj)})


_FRONTS = ("front", "unavailable", MODELS, callers.POLICY, callers.DENIED)
"""What a gateway's front carries for the service; who may use it stays with the routes it
guards."""


@dataclass(frozen=True)
class _Keeping:
    """What ``_kept`` decides by, read once per reconcile."""

    observed: Mapping[str, Obj]
    fleet: Mapping[str, Obj]
    gone: frozenset[str]
    gateways_listed: bool
    skipped_keys: frozenset[str]
    unwritable: frozenset[str]
    routed_clusters: frozenset[str]
    routed_endpoints: frozenset[str]

    def keeps(self, key: str, obj: Obj) -> bool:
        what, _, rest = key.partition("/")
        where, _, endpoint = rest.partition("/")
        if what in _FRONTS:
            return key in self.skipped_keys or not self.gateways_listed
        if what in _BEHIND_MODELS:
            return self._keeps_behind_model_route(what, where, obj)
        stuck = (where not in self.fleet and where not in self.gone) or where in self.unwritable
        if what == "fleet":
            return stuck or where in self.routed_clusters
        if what == "egress":
            return stuck or endpoint in self.routed_endpoints or not self.gateways_listed
        return False

    def _keeps_behind_model_route(self, what: str, gateway: str, obj: Obj) -> bool:
        """An AIServiceBackend while the observed model route names it, and the sentinel route
        while it names the sentinel backend or the observed path route has its sentinel lane:
        the routes let go first, the rest goes on the next reconcile."""
        if f"{MODELS}/{gateway}" in self.skipped_keys or not self.gateways_listed:
            return True
        if what == unavailable.ROUTE and _path_sentinel_routed(self.observed, gateway):
            return True
        backend = (
            obj
            if what != unavailable.ROUTE
            else self.observed.get(f"{unavailable.BACKEND}/{gateway}")
        )
        return backend is not None and _model_backend_routed(self.observed, gateway, backend)


_BEHIND_MODELS = (MODEL_BACKEND, unavailable.BACKEND, unavailable.ROUTE)
"""What a gateway's model route sends traffic through, beside the path route's objects."""


def _path_sentinel_routed(observed: Mapping[str, Obj], gateway: str) -> bool:
    """Whether the gateway's observed path route still has its sentinel lane."""
    route = objects.dig(observed.get(f"front/{gateway}"), *MANIFEST)
    return isinstance(route, Mapping) and any(
        unavailable.sets_sentinel(ref) for ref in backend_refs(route)
    )


def _model_backend_routed(observed: Mapping[str, Obj], gateway: str, backend: Obj) -> bool:
    """Whether the gateway's observed AIGatewayRoute still names this AIServiceBackend: the route
    lets go first and the backend goes on the next reconcile."""
    route = objects.mapping(observed.get(f"{MODELS}/{gateway}"), *MANIFEST)
    name = _remote_name(backend)
    return name is not None and name in models.route_backends(route)


def _routed(observed: Mapping[str, Obj]) -> set[str]:
    """The endpoints the observed front routes send traffic to, as each front route's Object
    records them (and the external endpoints their lanes name)."""
    fronts = [obj for key, obj in observed.items() if key.startswith("front/")]
    return recorded_names(fronts, ROUTED) | _still_routed(observed, {})[1]


def _routed_clusters(
    observed: Mapping[str, Obj], endpoints: list[Obj], routed: set[str]
) -> set[str]:
    """The clusters the observed routes are on: each fleet route's, and each routed replica
    endpoint's (its lane may be all that is left of it)."""
    out = {key.partition("/")[2] for key in observed if key.startswith("fleet/")}
    for endpoint in endpoints:
        cluster = objects.spec(endpoint).get("clusterName")
        if cluster and objects.name(endpoint) in routed:
            out.add(str(cluster))
    return out


def _selecting(entries: list[Obj], endpoint: Mapping[str, Any]) -> int | None:
    """The first entry whose selector matches the endpoint's labels, if any."""
    labels = objects.labels(endpoint)
    for i, entry in enumerate(entries):
        wanted = objects.mapping(entry, "selector", "matchLabels")
        if all(labels.get(k) == v for k, v in wanted.items()):
            return i
    return None


def _still_routed(
    observed: Mapping[str, Obj], fleet: Mapping[str, Obj]
) -> tuple[set[str], set[str]]:
    """The clusters and external endpoints the observed front routes still send traffic to."""
    clusters: set[str] = set()
    endpoints: set[str] = set()
    for key, obj in observed.items():
        what, _, gateway = key.partition("/")
        if what != "front":
            continue
        manifest = objects.mapping(obj, *MANIFEST)
        # The sentinel lane reaches the gateway's own cluster for the 503 alone: it keeps no
        # fleet route there (nor, through it, a hold on a replica going to zero).
        names = {
            ref.get("name") for ref in backend_refs(manifest) if not unavailable.sets_sentinel(ref)
        }
        clusters |= {c for c in fleet if cluster_backend_name(gateway, c) in names}
        endpoints |= header_values(manifest, ENDPOINT_HEADER)
    model_clusters, model_endpoints = _still_routed_by_model(observed)
    return clusters | (model_clusters & set(fleet)), endpoints | model_endpoints


def _still_routed_by_model(observed: Mapping[str, Obj]) -> tuple[set[str], set[str]]:
    """The clusters and external endpoints the observed AIGatewayRoutes still send traffic to:
    applied apart from the path routes, one may lag behind them."""
    clusters: set[str] = set()
    endpoints: set[str] = set()
    for key, obj in observed.items():
        what, _, rest = key.partition("/")
        if what == MODELS:
            manifest = objects.mapping(obj, *MANIFEST)
            endpoints |= models.route_header_values(manifest, ENDPOINT_HEADER)
        elif what == MODEL_BACKEND:
            gateway, _, cluster = rest.partition("/")
            if _model_backend_routed(observed, gateway, obj):
                clusters.add(cluster)
    return clusters, endpoints


def _requirements(namespace: str, entries: list[Obj]) -> dict[str, Requirement]:
    out = {
        GATEWAYS: Requirement(API_VERSION, "InferenceGateway"),
        CLUSTERS: Requirement(API_VERSION, "InferenceCluster"),
        DEPLOYMENTS: Requirement(API_VERSION, "ModelDeployment", namespace=namespace),
    }
    for i, entry in enumerate(entries):
        labels = dict(objects.mapping(entry, "selector", "matchLabels"))
        # The namespace is what keeps selection inside the tenant: without one, a label
        # selector matches every namespace.
        out[endpoints_requirement(i)] = Requirement(
            API_VERSION, "ModelEndpoint", match_labels=labels, namespace=namespace
        )
        out[replicas_requirement(i)] = Requirement(
            API_VERSION, "ModelReplica", match_labels=labels, namespace=namespace
        )
    return out


def _malformed(ms: Obj) -> str | None:
    spec = ms.get("spec")
    if not isinstance(spec, dict):
        return "ModelService spec is required"
    entries = spec.get("endpoints")
    if not isinstance(entries, list) or not entries:
        return "ModelService spec.endpoints must list at least one entry"
    for i, entry in enumerate(entries):
        selector = entry.get("selector") if isinstance(entry, dict) else None
        if not isinstance(selector, dict) or not isinstance(selector.get("matchLabels"), dict):
            return f"ModelService spec.endpoints[{i}].selector.matchLabels is required"
        weight = entry.get("weight", 1)
        if not isinstance(weight, int) or not 0 <= weight <= 1_000_000:
            return f"ModelService spec.endpoints[{i}].weight must be an integer in 0..1000000"
    return callers.callers_problem(spec)


_PUBLISHED = ("address", "gateways", "endpoints", "entries", ACTIVATION_PATH[1], usage.STATUS)
"""What a held service keeps publishing as it stands."""


def _hold(inputs: Inputs, requirements: dict[str, Requirement], missing: list[str]) -> Result:
    published = objects.status(inputs.composite)
    return Result.held(
        inputs.observed,
        requirements=requirements,
        status={k: published[k] for k in _PUBLISHED if k in published},
        conditions=status.waiting(missing),
    )
