"""The ModelDeployment composition: place every replica, stamp each into a ModelReplica.

Inputs are the deployment and, as required resources, the InferenceClusters its
clusterSelector's matchLabels select (each publishing in ``status.allocation`` what the replicas
placed on it hold: the cluster admits them, so no pool is overcommitted fleet-wide), every
InferenceClass, and its own ModelReplicas. The scheduler (``modelplane.scheduling.scheduler``) is
a pure function of those; this module turns its answer into desired ModelReplicas and conditions.
A placement its cluster has not admitted yet is said in ``ReplicasScheduled``; one it refused
the scheduler places again.

Required resources are read only by the scheduler and only through Mapping access, so the edge
may hand them over as lazy views of the request's Structs; this module never walks them. Its own
replicas it reads from the observed composed resources (at most ``spec.replicas`` + a few).

Nothing running is lost to a fault:

- until every required resource has been fetched, observed resources are carried forward;
- with no InferenceCluster or no InferenceClass listed (all deleted, or a list that failed or
  lags), every observed resource is carried forward unchanged; a clusterSelector may match no
  cluster, so then the replicas' clusters are asked for by name instead;
- the replicas it composed are its own, whatever the required list or their labels say;
- a device selector that does not compile carries every observed replica forward unchanged;
- a replica the schedule moves (drain, selector or pool change) stays while it is serving and
  fewer than ``spec.replicas`` of the scheduled replicas are serving: make before break;
- a replica's cluster missing from the list is asked for by name, every observed resource
  carried forward until the answer comes; found, it is read as listed (the list lagged);
- a pool's InferenceClass missing from the list is asked for by name too;
- a replica whose cluster is gone (asked for by name, absent), or whose pool's InferenceClass is
  (likewise), stays, serving or not, while fewer than ``spec.replicas`` of the scheduled
  replicas are serving: it is counted as moving (``status.replicas.moving``);
- a replica leaving (scale-in, a move completed, a drain) goes in two phases (``drain.py``):
  its endpoint first, the replica once no route references its pool;
- a replica whose delete a Usage refused (Crossplane replays it later) is replaced under a new
  name, make before break, and never updated in place (``doomed.py``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from modelplane.apis import API_VERSION
from modelplane.compose.modeldeployment import autoscaler
from modelplane.compose.modeldeployment.doomed import is_doomed
from modelplane.compose.modeldeployment.drain import (
    HOLDS,
    ROUTES,
    draining,
    holds_requirement,
    routes_requirement,
)
from modelplane.compose.modeldeployment.endpoints import serving_status, with_endpoints
from modelplane.compose.modeldeployment.footprint import Footprint, footprint
from modelplane.compose.modeldeployment.reroute import (
    DROPPED,
    REROUTE,
    ROUTED,
    Routes,
    recorded,
    routes,
)
from modelplane.compose.modeldeployment.rollout import (
    Candidate,
    Progress,
    Strategy,
    at_generation,
    outdated,
    template_hash,
    to_update,
)
from modelplane.compose.modeldeployment.stamp import replica_key, replica_name, stamp
from modelplane.compose.modeldeployment.surge import Started, Surges, start, surges_of
from modelplane.compose.modeldeployment.weights import Pinning, pin, pinning, unpinned
from modelplane.compose.shared.evidence import listed_and_found, look_up
from modelplane.compose.shared.frontdoor import cluster_gateway, gateway_withdrawn
from modelplane.compose.shared.replica_revision import described, stamp_of
from modelplane.composer import (
    CLASSES,
    Condition,
    Desired,
    Event,
    Inputs,
    Requirement,
    Result,
    namespace_of,
)
from modelplane.kube import objects
from modelplane.kube.names import LABEL_VALUE_MAX
from modelplane.kube.objects import Obj
from modelplane.labels import DEPLOYMENT, SURGE_FOR, TEMPLATE_HASH
from modelplane.observed import carried, carry_forward, ready_as_observed
from modelplane.reasons import InferenceCluster, ModelDeployment, ModelReplica
from modelplane.scheduling.fleet import index_clusters, pool_class_names
from modelplane.scheduling.placement import RemovedReplica, ReplicaPlacement, Schedule
from modelplane.scheduling.scheduler import schedule

CLUSTERS = "inference-clusters"
REPLICAS = "model-replicas"
CLUSTER_BY_NAME = "cluster"
"""Requirements asking for a replica's cluster the list does not hold: ``cluster/<name>``."""
CLASS_BY_NAME = "class"
"""Requirements asking for a pool's class the list does not hold: ``class/<name>``."""
SCHEDULED = ModelDeployment.REPLICAS_SCHEDULED
SERVING = ModelDeployment.REPLICAS_SERVING

Clusters = Mapping[str, Mapping[str, Any]]
"""The InferenceClusters a replica may stand on, by name."""


def requirements(md: Obj) -> dict[str, Requirement]:
    """The clusters the clusterSelector's matchLabels select (every one without), every class,
    and the deployment's own replicas: what other deployments hold, each cluster publishes."""
    return {
        CLUSTERS: Requirement(API_VERSION, "InferenceCluster", match_labels=_selector(md)),
        CLASSES: Requirement(API_VERSION, "InferenceClass"),
        REPLICAS: Requirement(
            API_VERSION,
            "ModelReplica",
            match_labels={DEPLOYMENT: objects.name(md)},
            namespace=namespace_of(md) or None,
        ),
    }


def _selector(md: Obj) -> dict[str, str]:
    labels = objects.mapping(md, "spec", "template", "spec", "clusterSelector", "matchLabels")
    return {str(k): str(v) for k, v in labels.items()}


def compose_deployment(inputs: Inputs) -> Result:
    problem = _malformed(inputs.composite)
    if problem:
        return Result.failed(problem)
    # Everything below reads spec.replicas as the autoscaling bounds allow it.
    scaling = autoscaler.stage(inputs)
    inputs = dataclasses.replace(inputs, composite=scaling.composite)
    return scaling.into(_compose(inputs))


def _compose(inputs: Inputs) -> Result:
    cache = footprint(inputs.composite, inputs.required)
    # Every listed cluster's name is read once, here: what follows reads this index.
    listed = index_clusters(inputs.required.get(CLUSTERS) or ())
    result, leaving = _place(inputs, cache, listed)
    # Every path asks for the cache and says what it knows of it, so it is read with the fleet.
    result.requirements.update(cache.requirements)
    if cache.condition is not None:
        result.conditions.insert(0, cache.condition)
    result.events.extend(cache.events)
    # Every path placement takes gets the endpoints of the replicas it composes (endpoints.py),
    # but for those draining.
    return with_endpoints(inputs, result, listed, leaving)


def _place(inputs: Inputs, cache: Footprint, index: Clusters) -> tuple[Result, frozenset[str]]:
    """The result, and the replicas in it that are draining (kept without an endpoint).
    ``index``: the clusters listed, by name.

    In four stages: gather what placement reads (or hold what runs until it is in); plan the
    rollout (place, stamp, pick the outdated replicas to update); keep and drain what the
    schedule no longer places; report."""
    fleet = _gather(inputs, index)
    if isinstance(fleet, Result):
        return fleet, frozenset()
    rollout = _plan_rollout(inputs, fleet, cache)
    if isinstance(rollout, Result):
        return rollout, frozenset()
    result = Result(requirements={**fleet.requirements, **rollout.requirements})
    kept = _keep_and_drain(inputs, fleet, rollout, result)
    _report(inputs, cache, fleet, rollout, kept, result)
    return result, frozenset(kept.leaving)


@dataclass(frozen=True)
class Gathered:
    """Everything placement reads, every list fetched and every by-name answer in."""

    asks: dict[str, Requirement]
    """The lists the deployment always asks for (``requirements``)."""
    mine: dict[str, Obj]
    """The replicas it composed, by key: its own, whatever the lists or their labels say."""
    clusters: dict[str, Mapping[str, Any]]
    """The clusters a replica may stand on (listed, or found by name), by name."""
    classes: list[Obj]
    requirements: dict[str, Requirement]
    """``asks`` and the by-name requirements that must keep being answered."""
    narrowed: bool
    """Whether a clusterSelector narrows the cluster list (it may then match none)."""


def _gather(inputs: Inputs, index: Clusters) -> Gathered | Result:
    """What placement reads, or, while any of it is not in, the result that holds what runs."""
    asks = requirements(inputs.composite)
    mine = _observed_replicas(inputs.observed)
    unread = _unread(inputs, asks, mine)
    if unread is not None:
        return unread
    # The clusters the replicas stand on that the list does not hold are asked for by name: a
    # list that lags is no evidence that a cluster went.
    standing = {str(objects.dig(r, "spec", "clusterName") or "") for r in mine.values()}
    unlisted_names = standing - {""} - index.keys()
    lookup = look_up(inputs, CLUSTER_BY_NAME, API_VERSION, "InferenceCluster", unlisted_names)
    if lookup.pending:
        return _waiting(asks, inputs.observed, lookup.asked(), lookup.requirements)
    # A cluster name is a label value on every replica placed there: a longer one hosts nothing.
    found = [*index.items(), *lookup.found.items()]
    clusters = {n: c for n, c in found if len(n) <= LABEL_VALUE_MAX}
    # A pool's class the list does not hold is asked for by name, as a cluster is.
    pool_classes = pool_class_names(clusters.values())
    classes, class_lookup = listed_and_found(
        inputs, CLASSES, CLASS_BY_NAME, "InferenceClass", pool_classes
    )
    more = {**lookup.requirements, **class_lookup.requirements}
    if classes is None:
        return _waiting(asks, inputs.observed, class_lookup.asked(), more)
    narrowed = bool(asks[CLUSTERS].match_labels)
    return Gathered(asks, mine, clusters, classes, {**asks, **more}, narrowed)


def _unread(inputs: Inputs, asks: dict[str, Requirement], mine: Mapping[str, Obj]) -> Result | None:
    """The result holding what runs while a list is not fetched yet, or lists no cluster or
    no class while replicas run; None once the lists can be read."""
    missing = [name for name in asks if name not in inputs.required]
    if missing:
        return _waiting(asks, inputs.observed, missing)
    # A clusterSelector may match no cluster at all: then the replicas' clusters are asked
    # for by name, as any cluster the list does not hold.
    narrowed = bool(asks[CLUSTERS].match_labels)
    unlisted = [
        name
        for name in (CLUSTERS, CLASSES)
        if not inputs.required[name] and not (name == CLUSTERS and narrowed)
    ]
    if unlisted and mine:
        return _fleet_unlisted(inputs.composite, asks, inputs.observed, mine, unlisted)
    return None


@dataclass(frozen=True)
class Placer:
    """Schedules the deployment's replicas, plus ``extra`` beyond spec.replicas (the surge's)."""

    inputs: Inputs
    fleet: Gathered
    cache: Footprint
    leaving: frozenset[str]
    """Names of replicas a serving surge replaced: charged to the ledger until gone."""
    outdated: Callable[[ReplicaPlacement], bool] | None = None
    """Whether a kept replica is one the rollout has yet to update (``rolling``)."""

    def __call__(self, extra: int) -> Schedule:
        md = self.inputs.composite
        desired = int(md["spec"]["replicas"])
        # What the deployment composed is its own, whatever the (possibly lagging) list says.
        return schedule(
            {**md, "spec": {**md["spec"], "replicas": desired + extra}},
            self.fleet.clusters,
            self.fleet.classes,
            self.inputs.required[REPLICAS],
            list(self.fleet.mine.values()),
            admits=self.cache.admits,
            hold=self.cache.hold,
            leaving=self.leaving,
            outdated=self.outdated,
        )


@dataclass(frozen=True)
class Rollout:
    """What each placement is composed as: stamped anew, or held as it runs."""

    plan: Schedule
    """The schedule, counting the replicas the deployment asks for (surge replicas aside)."""
    placed: tuple[str, ...]
    """Every placement's key, surge replicas included, in the order they are composed."""
    names: dict[str, str]
    stamped: dict[str, Obj]
    """What each placement is stamped with now, by key."""
    held: frozenset[str]
    """Placements composed as observed: outdated ones not updated yet, and replaced ones."""
    counted: tuple[str, ...]
    """The placements the deployment counts: surge replicas in flight aside."""
    progress: Progress
    weights: Pinning
    requirements: dict[str, Requirement]
    """What judging updated replicas routed again asks for (``reroute.py``)."""
    routes: Routes
    available: frozenset[str]
    """The counted placements that serve as the rollout counts them (``Stamps.available``)."""
    unreachable: frozenset[str]
    """Clusters whose gateway says it has no address."""


def _plan_rollout(inputs: Inputs, fleet: Gathered, cache: Footprint) -> Rollout | Result:
    """Place every replica, stamp it, and decide which outdated ones are updated now (or the
    result that holds what runs, when a device selector does not compile)."""
    md = inputs.composite
    mine = fleet.mine
    read = routes(inputs, mine.values())
    down = frozenset(n for n, c in fleet.clusters.items() if gateway_withdrawn(c))
    surges = surges_of(mine, lambda obj: serves_its_stamp(obj, read, down))
    strategy = Strategy.of(md)
    place = Placer(inputs, fleet, cache, surges.leaving, rolling(md, mine, cache, strategy))
    plan = place(len(surges.in_flight))
    if plan.selector_errors:
        return _invalid_selectors(fleet.asks, mine, plan)
    weights = pinning(cache.cache, [p.cluster for p in plan.placements], mine.values())
    base = Stamps({}, routes=read, unreachable=down, partition=strategy.partition)
    stamps = _stamp_placements(md, plan, fleet, weights, base)
    leaving = bool(set(mine) - set(stamps.placed))
    owed = [k for k in stamps.doomed if k not in surges.replaced]
    started = start(strategy, stamps.candidates, surges, plan, place, leaving, owed)
    surging = _add_surges(md, stamps, started, surges, mine, weights, fleet.clusters)
    held, counted, progress = _pick_updates(strategy, stamps, surging, started, mine)
    # Conditions count the replicas the deployment asks for; the surge is the rollout's.
    counts = tuple(p for p in plan.placements if stamps.key_of(p) not in surging)
    plan = dataclasses.replace(plan, desired=int(md["spec"]["replicas"]), placements=counts)
    return Rollout(
        plan,
        tuple(stamps.placed),
        stamps.names,
        stamps.stamped,
        held,
        counted,
        progress,
        weights,
        _reroute_requirements(md, stamps, mine, plan),
        stamps.routes,
        frozenset(k for k in counted if stamps.available(k, mine.get(k))),
        down,
    )


def rolling(
    md: Obj, mine: Mapping[str, Obj], cache: Footprint, strategy: Strategy
) -> Callable[[ReplicaPlacement], bool]:
    """Whether the observed replica at a placement is one the rollout has yet to update: it runs
    something other than what it is stamped with there, at or above the partition (one below it
    keeps what it runs by design), and is not doomed (replaced, never updated). A scale-in
    removes these first (``scale_in``): removing one advances the rollout too.

    Asked before placement, so the revision of the cache is judged by the clusters the replicas
    stand on (a scale-in places none anew)."""
    weights = pinning(cache.cache, [_on(o) for o in mine.values()], mine.values())
    by_name = {str(o["metadata"]["name"]): o for o in mine.values()}

    def outdated_at(p: ReplicaPlacement) -> bool:
        observed = by_name.get(p.existing or "")
        if observed is None or p.index < strategy.partition or is_doomed(observed):
            return False
        return outdated(observed, _stamped(md, p, str(p.existing), observed, weights))

    return outdated_at


def _reroute_requirements(
    md: Obj, stamps: Stamps, mine: Mapping[str, Obj], plan: Schedule
) -> dict[str, Requirement]:
    """The route Objects are listed while a rollout may update a replica or waits for one to
    be routed again: an update records the routes naming its pool (``reroute.py``), and so
    does a replacement (a move, a surge) the routes of the replica it replaces."""
    moving = stamps.candidates or stamps.doomed or plan.removed
    if not moving and not any(recorded(r) for r in mine.values()):
        return {}
    return {ROUTES: routes_requirement(md), **stamps.routes.requirements}


def _pick_updates(
    strategy: Strategy,
    stamps: Stamps,
    surging: Mapping[str, str],
    started: Started,
    mine: Mapping[str, Obj],
) -> tuple[frozenset[str], tuple[str, ...], Progress]:
    """The outdated replicas the strategy holds this reconcile (the rest are updated now), the
    placements the deployment counts (surge replicas in flight aside), and where the rollout is."""
    replacing = set(surging.values())
    candidates = [c for c in stamps.candidates if c.key not in replacing]
    counted = [k for k in stamps.placed if k not in surging]
    # A placement not created yet serves nothing either (a scale-up, or a replica re-placed off
    # a deleted cluster), nor does one updated whose status does not describe its stamp yet: each
    # spends the budget until it serves.
    unavailable = sum(1 for k in counted if not stamps.available(k, mine.get(k)))
    updating = _updating(candidates, strategy, started, stamps, unavailable)
    held = ({c.key for c in candidates} - updating) | (replacing & set(stamps.placed))
    held |= set(stamps.doomed)
    progress = _progress(counted, held, updating, mine, strategy, stamps, surging)
    moves = bool(updating or surging)
    if held and not moves and _no_room(strategy, started):
        progress = dataclasses.replace(progress, no_room=not progress.stalled)
    return frozenset(held), tuple(counted), progress


def _updating(
    candidates: list[Candidate],
    strategy: Strategy,
    started: Started,
    stamps: Stamps,
    unavailable: int,
) -> set[str]:
    """The candidates updated now, each with the routes naming its pool recorded."""
    # Kill first only where no surge found room; what serves nothing is updated regardless.
    pace = strategy if started.no_room else dataclasses.replace(strategy, max_unavailable=0)
    # An update records the routes naming the replica's pool: none is updated before they
    # are read (the function is called again with them, in the same reconcile).
    updating = to_update(candidates, pace, unavailable) if stamps.routes.read else set()
    for key in updating:
        if key in stamps.pins:
            # Below the partition: pinned to what it reads, as it runs otherwise.
            stamps.stamped[key] = stamps.pins[key]
        _record_routes(stamps.stamped[key], stamps.routes)
    return updating


def _no_room(strategy: Strategy, started: Started) -> bool:
    """No surge found room, and the strategy surges: then a rollout that moves nothing is
    blocked for room (not held by replicas that do not serve)."""
    return started.no_room and bool(strategy.max_surge) and not strategy.by_cluster


@dataclass(frozen=True)
class Stamps:
    """Every placement stamped: its key, name and stamp, and the outdated ones among them."""

    by_name: dict[str, str]
    """The observed replicas' keys by name."""
    placed: list[str] = dataclasses.field(default_factory=list)
    names: dict[str, str] = dataclasses.field(default_factory=dict)
    stamped: dict[str, Obj] = dataclasses.field(default_factory=dict)
    candidates: list[Candidate] = dataclasses.field(default_factory=list)
    """Observed placements running something other than their stamp."""
    outdated: set[str] = dataclasses.field(default_factory=set)
    """The candidates' keys."""
    routes: Routes = dataclasses.field(default_factory=lambda: Routes(read=False))
    """The route Objects, which say whether an updated replica is routed again."""
    unreachable: frozenset[str] = frozenset()
    """Clusters whose gateway says it has no address: no route reaches a replica there."""
    doomed: list[str] = dataclasses.field(default_factory=list)
    """Placements whose delete a Usage refused: replaced, never updated (``doomed.py``)."""
    partition: int = 0
    pins: dict[str, Obj] = dataclasses.field(default_factory=dict)
    """Outdated replicas below the partition that read their cache unpinned: each as it runs,
    pinned to what it reads (``weights.unpinned``), updated to that by the budget."""

    def key_of(self, p: ReplicaPlacement) -> str:
        """A placement's composition resource name: the one it stands under, or a new one."""
        return self.by_name.get(p.existing or "") or replica_key(p.index, p.cluster)

    def describes(self, key: str, observed: Obj) -> bool:
        """Whether the replica's status describes the stamp it is given now."""
        was = described(observed)
        return was is not None and was.revision == stamp_of(self.stamped[key])

    def available(self, key: str, observed: Obj | None) -> bool:
        """Whether the placement serves: an outdated replica while it reports ModelServing (it
        runs what it ran); an updated one only once its status describes its stamp, ready, and
        serving (the status it wrote before its restamp describes what is being replaced)."""
        if observed is None:
            return False
        if key not in self.outdated:
            stamp = stamp_of(self.stamped[key])
            return serves_its_stamp(observed, self.routes, self.unreachable, stamp)
        if serving_status(observed) != "True" or _on(observed) in self.unreachable:
            return False
        # It runs what it ran, but updated before and changed again, it counts only once
        # routed again as well.
        return self.routes.rerouted(observed)


def serves_its_stamp(
    observed: Obj, routes: Routes, unreachable: frozenset[str], stamp: str | None = None
) -> bool:
    """Whether a replica serves ``stamp`` (by default the one it carries), as the rollout
    counts it: its status describes that stamp, ready and serving (the status written before
    a restamp describes what is being replaced); on a cluster whose gateway reaches it (its
    endpoint is withdrawn with the gateway); and routed again by every route recorded on it
    (``reroute.py``)."""
    if serving_status(observed) != "True" or _on(observed) in unreachable:
        return False
    was = described(observed)
    wanted = stamp or stamp_of(observed)
    ready = was is not None and was.ready and was.revision == wanted
    return ready and routes.rerouted(observed)


def _on(replica: Obj) -> str:
    return str(objects.dig(replica, "spec", "clusterName"))


def _stamp_placements(
    md: Obj, plan: Schedule, fleet: Gathered, weights: Pinning, base: Stamps
) -> Stamps:
    """Every placement stamped; ``base``: the routes and unreachable clusters it judges by."""
    mine = fleet.mine
    by_name = {str(obj["metadata"]["name"]): key for key, obj in mine.items()}
    stamps = dataclasses.replace(base, by_name=by_name)
    # A placement replacing a replica the schedule moved waits for the routes of that one.
    moved = {r.index: r for r in plan.removed if r.reason != "scale-down"}
    for p in plan.placements:
        key = stamps.key_of(p)
        observed = mine.get(key)
        # A replica re-placed where it was keeps the name it has: an in-place update, even of
        # one named before names hashed the namespace.
        name = p.existing or (str(observed["metadata"]["name"]) if observed else None)
        stamps.names[key] = name or replica_name(md, p)
        stamps.stamped[key] = _stamped(md, p, stamps.names[key], observed, weights)
        stamps.placed.append(key)
        if observed is not None:
            _judge(stamps, p, key, observed, weights)
        elif p.index in moved:
            was = moved[p.index]
            _adopt(stamps.stamped[key], stamps.routes, was.name, was.cluster, fleet.clusters)
    return stamps


def _judge(stamps: Stamps, p: ReplicaPlacement, key: str, observed: Obj, weights: Pinning) -> None:
    """Record what the observed replica at placement ``p`` is: doomed, outdated (a candidate
    for an update), or updated and waiting to be routed again."""
    if is_doomed(observed):
        # Replaced under a new name, make before break; never updated in place.
        stamps.doomed.append(key)
    elif outdated(observed, stamps.stamped[key]):
        stamps.outdated.add(key)
        # Serving where no route reaches it serves no one: updating it stops nothing.
        serving = stamps.available(key, observed)
        if recorded(observed):
            # Updated now, it still waits for what it waited for.
            _carry_routes(stamps.stamped[key], stamps.routes.moved_on(observed))
        pinned = unpinned(carried(observed), weights) if p.index < stamps.partition else None
        if pinned is not None:
            pinned["metadata"]["annotations"][TEMPLATE_HASH] = template_hash(pinned)
            stamps.pins[key] = pinned
        candidate = Candidate(p.index, key, serving, p.cluster, pin=pinned is not None)
        stamps.candidates.append(candidate)
    elif recorded(observed) and not stamps.available(key, observed):
        # Updated, not serving its stamp and routed again yet: what it waits for stays
        # recorded, each route marked once seen dropping its pool. Routed again while it
        # does not serve yet (a status that said it served), its lane goes once it says it
        # does not, and it counts only once routed again serving.
        _carry_routes(stamps.stamped[key], stamps.routes.moved_on(observed))
    elif _on(observed) in stamps.unreachable:
        # Its endpoint goes with its cluster's gateway: as after an update, the routes naming
        # its pool now must drop it and name it again before it counts once the gateway is back.
        _record_routes(stamps.stamped[key], stamps.routes)


def _adopt(replica: Obj, routes: Routes, name: str, cluster: str, clusters: Clusters) -> None:
    """Record on ``replica`` (replacing ``name`` on ``cluster``) what it waits to be routed by."""
    elsewhere = ""
    if _on(replica) != cluster and cluster in clusters:
        elsewhere = cluster_gateway(clusters[cluster]).provider_config
    _carry_routes(replica, routes.adopted(name, elsewhere))


def _record_routes(replica: Obj, routes: Routes) -> None:
    """Record on a replica updated now the routes naming its pool, beside those it still
    waits for (recorded when its gateway went, or an update before)."""
    naming = routes.naming(str(replica["metadata"]["name"]))
    named = {item.partition("@")[0] for item in naming.split(",")}
    waiting = [f"{r}@{DROPPED if d else ROUTED}" for r, d in recorded(replica) if r not in named]
    naming = ",".join(n for n in [naming, *waiting] if n)
    _carry_routes(replica, naming)
    if not naming:
        (replica["metadata"].get("annotations") or {}).pop(REROUTE, None)


def _moved_on(replica: Obj, routes: Routes, unreachable: frozenset[str]) -> Obj:
    """A replica held as it runs, its record of routes moved on as an updated one's is: one
    updated, then changed again before it was routed again, must not keep its endpoint
    withdrawn for as long as it is held. On a cluster whose gateway is withdrawn, the routes
    naming its pool are recorded, as an update records them."""
    annotations = dict(replica["metadata"].get("annotations") or {})
    if not recorded(replica):
        naming = routes.naming(str(replica["metadata"]["name"])) if routes.read else ""
        if _on(replica) not in unreachable or not naming:
            return replica
        annotations[REROUTE] = naming
    elif routes.rerouted(replica):
        del annotations[REROUTE]
    else:
        annotations[REROUTE] = routes.moved_on(replica)
    return {**replica, "metadata": {**replica["metadata"], "annotations": annotations}}


def _carry_routes(replica: Obj, value: str) -> None:
    if value:
        replica["metadata"].setdefault("annotations", {})[REROUTE] = value


def _add_surges(
    md: Obj,
    stamps: Stamps,
    started: Started,
    surges: Surges,
    mine: Mapping[str, Obj],
    weights: Pinning,
    clusters: Clusters,
) -> dict[str, str]:
    """Stamp the surge replicas started now into ``stamps``, and annotate every surge replica
    with the one it replaces. The surge replicas in flight: key -> the key it replaces."""
    # A surge replica a scale-in removed surges no more: it leaves as any replica scaled away,
    # and the one it was to replace is the rollout's to update again.
    surging = {k: old for k, old in surges.in_flight.items() if k in stamps.stamped}
    for p, old in started.placements:
        key = replica_key(p.index, p.cluster)
        stamps.names[key] = replica_name(md, p)
        stamps.stamped[key] = _stamped(md, p, stamps.names[key], None, weights)
        # It counts once every route naming the one it replaces names it too.
        was = mine[old]
        _adopt(stamps.stamped[key], stamps.routes, str(was["metadata"]["name"]), _on(was), clusters)
        stamps.placed.append(key)
        surging[key] = old
    for key, old in [*surging.items(), *((k, o) for o, k in surges.replaced.items())]:
        if key in stamps.stamped:
            annotations = stamps.stamped[key]["metadata"]["annotations"]
            annotations[SURGE_FOR] = str(mine[old]["metadata"]["name"])
    return surging


@dataclass(frozen=True)
class Kept:
    """What stays of the replicas the schedule no longer places, and what drains."""

    serving: int
    """Counted placements serving."""
    kept: tuple[str, ...]
    """Removed replicas kept serving until their replacements serve (moving)."""
    stranded: dict[str, str]
    """Removed replicas kept as their ground is not listed, each with why, by key."""
    leaving: tuple[str, ...]
    """Replicas draining: kept without an endpoint until no route references their pool."""


def _keep_and_drain(inputs: Inputs, fleet: Gathered, rollout: Rollout, result: Result) -> Kept:
    """Compose every placement into ``result``, then keep what must stay of the rest (make
    before break, stranded) and drain what leaves."""
    md = inputs.composite
    mine = fleet.mine
    for key in rollout.placed:
        observed = mine.get(key)
        replica = rollout.stamped[key]
        if key in rollout.held:
            replica = _moved_on(carried(mine[key]), rollout.routes, rollout.unreachable)
        result.resources[key] = Desired(replica, ready=ready_as_observed(observed))
    plan = rollout.plan
    serving = sum(1 for k in rollout.counted if serving_status(mine.get(k)) == "True")
    # A replacement counts as the rollout counts: serving its stamp, and routed.
    available = len(rollout.available)
    removed = _removed(mine, plan)
    kept = _make_before_break(mine, removed, plan, fleet.clusters, available, result.resources)
    taken = [*result.resources, *kept]
    stranded = _stranded(mine, removed, plan, fleet.clusters, fleet.classes, available, taken)
    result.resources.update(carry_forward({key: mine[key] for key in [*kept, *stranded]}))
    kept += [key for key in stranded if serving_status(mine[key]) == "True"]
    if any(key not in result.resources for key in mine):
        # Asked for whenever a replica leaves, kept or not, so the requirements settle.
        result.requirements[ROUTES] = routes_requirement(md)
        result.requirements[HOLDS] = holds_requirement(md)
    drain = draining(inputs, mine, result.resources)
    result.requirements.update(drain.requirements)
    for key, replica in drain.replicas.items():
        result.resources[key] = Desired(replica, ready=ready_as_observed(mine[key]))
    return Kept(serving, tuple(kept), stranded, tuple(drain.replicas))


def _report(
    inputs: Inputs, cache: Footprint, fleet: Gathered, rollout: Rollout, kept: Kept, result: Result
) -> None:
    """Status and conditions: what is placed, serving, moving, draining, and rolled out."""
    md = inputs.composite
    mine = fleet.mine
    plan = rollout.plan
    replicas = {"total": plan.scheduled, "ready": kept.serving + len(kept.kept)}
    if kept.kept:
        replicas["moving"] = len(kept.kept)
    if kept.leaving:
        replicas["draining"] = len(kept.leaving)
    generation = _generation(md)
    result.status = {"replicas": replicas, "rollout": _rollout_status(generation, rollout.progress)}
    rolled_out = rollout.weights.held(rollout.progress.condition(Strategy.of(md)))
    result.conditions.append(at_generation(rolled_out, generation))
    scheduled = _with_stranded(plan, list(kept.kept), mine, kept.stranded)
    if cache.hold and scheduled.status != "True":
        # Capacity is not what is short: nothing new may be placed until the cache is read.
        waiting = ModelDeployment.WAITING_FOR_MODEL_CACHE
        scheduled = Condition(SCHEDULED, "False", waiting, scheduled.message)
    scheduled = _with_draining(scheduled, kept.leaving, mine)
    # The counted placements' names by key, in the order of the plan's placements.
    counted = {k: rollout.names[k] for k in rollout.counted}
    scheduled = _with_awaiting(scheduled, md, plan, list(counted.values()))
    scheduled = _with_unready(scheduled, plan, fleet.clusters)
    result.conditions.append(scheduled)
    result.conditions.append(serving_condition(plan.desired, counted, list(kept.kept), mine))
    if scheduled.status != "True":
        # Fewer replicas placed than asked: the deployment does not do its job, whatever the
        # replicas it did place report (none at all would read Available).
        result.ready = "False"
    if not inputs.required[CLUSTERS] and not fleet.narrowed:
        result.events.append(_NO_CLUSTERS)


def _generation(md: Obj) -> int | None:
    generation = objects.dig(md, "metadata", "generation")
    return int(generation) if isinstance(generation, int | float) else None


def _rollout_status(generation: int | None, progress: Progress) -> Obj:
    """The rollout's counts and the generation they were counted at. They say nothing of
    ``RolledOut``, which Crossplane writes apart from them (``rollout.at_generation``)."""
    out = progress.status()
    if generation is not None:
        out["observedGeneration"] = generation
    return out


def _progress(
    placed: list[str],
    held: set[str],
    updating: set[str],
    mine: Mapping[str, Obj],
    strategy: Strategy,
    stamps: Stamps,
    surging: Mapping[str, str],
) -> Progress:
    """``placed``: the replicas counted, surge replicas aside (``surging``)."""
    updated = [k for k in placed if k not in held]
    stalled = _stalled([*updated, *surging], mine, stamps)
    below = {c.key for c in stamps.candidates if c.index < strategy.partition and not c.pin}
    return Progress(
        updated=len(updated),
        # One updated now restarts: it is not serving what it was updated to yet.
        serving=sum(1 for k in updated if k not in updating and stamps.available(k, mine.get(k))),
        remaining=len(held),
        stalled=tuple(stalled) if held else (),
        partitioned=len(held & below),
        surge=len(surging),
        doomed=tuple(str(mine[k]["metadata"]["name"]) for k in stamps.doomed),
    )


def _stalled(keys: Iterable[str], mine: Mapping[str, Obj], stamps: Stamps) -> list[str]:
    """The names of the replicas of ``keys`` that say, for their current stamp, that they do
    not serve: a status written before the restamp says nothing of what one does now."""
    return [
        str(mine[k]["metadata"]["name"])
        for k in keys
        if k in mine and stamps.describes(k, mine[k]) and serving_status(mine[k]) == "False"
    ]


def _stamped(
    md: Obj, p: ReplicaPlacement, name: str, observed: Obj | None, weights: Pinning
) -> Obj:
    """The ModelReplica for ``p``, pinned to the weights it reads, annotated with the hash of
    what it is stamped with."""
    out = stamp(md, p, name)
    pin(out, observed, weights)
    out["metadata"].setdefault("annotations", {})[TEMPLATE_HASH] = template_hash(out)
    return out


def _with_unready(cond: Condition, plan: Schedule, clusters: Clusters) -> Condition:
    """ReplicasScheduled False while replicas are placed on a cluster whose serving stack says
    it is not ready: they stand where nothing serves them, and they are held there, not moved.

    Held, because readiness is no evidence the cluster is gone: a stack-wave upgrade or a
    blip brings it back with the engines' weights still staged, while moving them would load
    the model again elsewhere and take capacity other deployments hold. Deleting the cluster,
    or tainting it NoExecute (a drain), moves them."""
    where: dict[str, list[str]] = {}
    for p in sorted(plan.placements, key=lambda p: (p.cluster, p.index)):
        why = _stack_unready(clusters.get(p.cluster))
        if why:
            where.setdefault(f"{p.cluster} ({why})", []).append(str(p.index))
    if not where:
        return cond
    line = "held on clusters whose serving stack is not ready, not moved: " + "; ".join(
        f"{c}: replicas {', '.join(i)}" for c, i in where.items()
    )
    line += " (taint a cluster NoExecute to move them)"
    message = f"{cond.message}; {line}"
    if cond.status != "True":
        return cond._replace(message=message)
    return Condition(SCHEDULED, "False", ModelDeployment.CLUSTER_NOT_READY, message)


def _stack_unready(cluster: Mapping[str, Any] | None) -> str:
    """Why the cluster's serving stack is not ready, "" when it is (or says nothing)."""
    c = objects.condition(cluster, InferenceCluster.STACK_READY)
    if c is None or c.get("status") == "True":
        return ""
    return str(c.get("reason") or "NotReady")


def _with_draining(cond: Condition, leaving: Iterable[str], mine: Mapping[str, Obj]) -> Condition:
    names = sorted(str(mine[k]["metadata"]["name"]) for k in leaving)
    if not names:
        return cond
    line = (
        f"draining {', '.join(names)}: endpoint withdrawn, deleted once no route references "
        f"{'its pool' if len(names) == 1 else 'their pools'}"
    )
    return cond._replace(message=f"{cond.message}; {line}")


def _with_awaiting(cond: Condition, md: Obj, plan: Schedule, names: list[str]) -> Condition:
    """Says which placements their cluster has not admitted yet: its allocation lags, or it
    will refuse one that lost a race for its last devices (and it is placed again)."""
    namespace = namespace_of(md)
    waiting: dict[str, list[str]] = {}
    for p, name in zip(plan.placements, names, strict=True):
        admitted = plan.admitted.get(p.cluster)
        if admitted is not None and (namespace, name) not in admitted:
            waiting.setdefault(p.cluster, []).append(str(p.index))
    if not waiting:
        return cond
    line = "awaiting admission by their cluster: " + ", ".join(
        f"{c} ({', '.join(i)})" for c, i in sorted(waiting.items())
    )
    return cond._replace(message=f"{cond.message}; {line}")


# Said on every reconcile that lists no InferenceCluster: a fleet of none is a setup mistake (or
# every cluster deleted), not a full fleet. A clusterSelector that matches none is said by
# ReplicasScheduled (NoEligibleCluster), as when every cluster listed is refused.
_NO_CLUSTERS = Event(
    "Warning",
    "No InferenceClusters found: nothing can be placed until one exists "
    "(kubectl get inferenceclusters)",
    "NoInferenceClusters",
)


def scheduled_condition(plan: Schedule, kept: Iterable[str], mine: Mapping[str, Obj]) -> Condition:
    where = _by_cluster(plan.placements)
    placed = f"{plan.scheduled} of {plan.desired} replicas placed"
    if where:
        # The condition is sent back on every reconcile: it names a few clusters, not the fleet.
        named = [f"{c} ({', '.join(i)})" for c, i in list(where.items())[:PLACED_CLUSTERS]]
        rest = len(where) - PLACED_CLUSTERS
        placed += ": " + ", ".join(named) + (f" and {rest} more clusters" if rest > 0 else "")
    kept_names = {str(mine[k]["metadata"]["name"]) for k in kept}
    moving = [
        f"{r.name} on {r.cluster} kept serving until its replacement serves ({r.reason})"
        if r.name in kept_names
        else f"removing {r.name} from {r.cluster}: {r.reason}"
        for r in sorted(plan.removed, key=lambda r: r.index)
    ]
    if plan.scheduled >= plan.desired:
        message = "; ".join([placed, *moving])
        return Condition(SCHEDULED, "True", ModelDeployment.ALL_REPLICAS_SCHEDULED, message)
    message = "; ".join([placed, *_grouped(plan.shortfall), *moving])
    # Capacity is not the problem when no cluster may take a replica at all (selector labels,
    # taints, sources): say so, so a typo is not read as a full fleet.
    if not plan.eligible:
        return Condition(SCHEDULED, "False", ModelDeployment.NO_ELIGIBLE_CLUSTER, message)
    return Condition(SCHEDULED, "False", ModelDeployment.INSUFFICIENT_CAPACITY, message)


SHORTFALL_LINES = 10
"""Per-cluster shortfall lines a condition lists before grouping clusters by reason."""
PLACED_CLUSTERS = 10
"""How many clusters ReplicasScheduled names, with the replicas placed on each."""


def _grouped(shortfall: tuple[str, ...]) -> list[str]:
    """The shortfall lines, or on a large fleet one line per reason naming a few clusters:
    a line per cluster would bury the reasons and outgrow a condition message."""
    if len(shortfall) <= SHORTFALL_LINES:
        return list(shortfall)
    groups: dict[str, list[str]] = {}
    for line in shortfall:
        cluster, _, reason = line.partition(": ")
        groups.setdefault(reason, []).append(cluster)
    out = []
    for reason, clusters in groups.items():
        names = ", ".join(clusters[:3])
        if len(clusters) > 3:
            names += f" and {len(clusters) - 3} more clusters"
        out.append(f"{names}: {reason}")
    if len(out) > SHORTFALL_LINES:
        rest = len(out) - SHORTFALL_LINES
        out = [*out[:SHORTFALL_LINES], f"{rest} more reasons (modelplane explain lists them)"]
    return out


def serving_condition(
    desired: int, placed: Mapping[str, str], kept: list[str], mine: Mapping[str, Obj]
) -> Condition:
    """``placed``: the scheduled replicas' names by composition resource name."""
    serving = [k for k in placed if serving_status(mine.get(k)) == "True"]
    message = f"{len(serving) + len(kept)} of {desired} replicas serving"
    if kept:
        # Counted where they serve and as moving: make before break composes both for a while.
        message += f", {len(kept)} moving (kept serving until "
        message += f"{'its replacement serves' if len(kept) == 1 else 'their replacements serve'})"
    waiting = [_waiting_on(placed[k], mine.get(k)) for k in placed if k not in serving]
    if waiting:
        message += "; " + "; ".join(waiting)
    if len(serving) >= desired:
        return Condition(SERVING, "True", ModelDeployment.ALL_REPLICAS_SERVING, message)
    return Condition(SERVING, "False", ModelDeployment.REPLICAS_NOT_SERVING, message)


def _make_before_break(
    mine: Mapping[str, Obj],
    removed: list[tuple[RemovedReplica, str]],
    plan: Schedule,
    clusters: Clusters,
    serving_placed: int,
    desired: Mapping[str, Desired],
) -> list[str]:
    """Replicas the schedule removed that keep serving until enough scheduled ones serve.

    Scale-down removes nothing that would leave fewer than spec.replicas serving; a replica
    whose cluster is gone is not serving anything and goes at once.
    """
    kept: list[str] = []
    room = plan.desired - serving_placed
    for _, key in removed:
        if room <= 0 or key in desired:
            continue
        obj = mine[key]
        if serving_status(obj) == "True" and obj["spec"].get("clusterName") in clusters:
            kept.append(key)
            room -= 1
    return kept


def _stranded(
    mine: Mapping[str, Obj],
    removed: list[tuple[RemovedReplica, str]],
    plan: Schedule,
    clusters: Clusters,
    classes: list[Obj],
    serving_placed: int,
    taken: Iterable[str],
) -> dict[str, str]:
    """Removed replicas standing on something the required lists do not hold (their cluster,
    or the InferenceClass of a pool they are pinned to), each with why, by key.

    A deleted object and a list that failed or lags look alike, and such a replica may still
    be serving (its own status cannot tell: its composition waits for the same object). So
    whether serving or not it stays unless its index is placed again and ``spec.replicas`` of
    the scheduled replicas serve: placed elsewhere, it goes once the replacement serves (make
    before break); with nowhere else to go, or not placed again because the others suffice, it
    stays (nothing is removed on the evidence of a list that may lag).
    """
    if not removed:
        return {}
    replaced = {p.index for p in plan.placements} if serving_placed >= plan.desired else set()
    class_names = {str(c["metadata"]["name"]) for c in classes}
    skip = set(taken)
    out: dict[str, str] = {}
    for replica, key in removed:
        if key in skip or replica.index in replaced:
            continue
        why = _unlisted(mine[key], clusters, class_names)
        if why:
            out[key] = why
    return out


def _removed(mine: Mapping[str, Obj], plan: Schedule) -> list[tuple[RemovedReplica, str]]:
    """The observed replicas the schedule removed, lowest index first, each with its key."""
    if not plan.removed:
        return []
    by_name = {str(obj["metadata"]["name"]): key for key, obj in mine.items()}
    ordered = sorted(plan.removed, key=lambda r: r.index)
    return [(r, by_name[r.name]) for r in ordered if r.name in by_name]


def _unlisted(replica: Obj, clusters: Clusters, class_names: set[str]) -> str:
    """What of the replica's ground is missing from the required lists, or ""."""
    spec = replica.get("spec") or {}
    name = str(spec.get("clusterName", ""))
    cluster = clusters.get(name)
    if cluster is None:
        return f"cluster {name} is deleted"
    pools = {
        str(p.get("name", "")): str(p.get("className", ""))
        for p in objects.dig(cluster, "spec", "nodePools") or ()
    }
    for engine in spec.get("engines") or ():
        for member in engine.get("members") or ():
            pool = str(member.get("nodePoolName", ""))
            class_name = pools.get(pool)
            if class_name is not None and class_name not in class_names:
                return f"InferenceClass {class_name} of pool {pool} is deleted"
    return ""


def _with_stranded(
    plan: Schedule, kept: list[str], mine: Mapping[str, Obj], stranded: Mapping[str, str]
) -> Condition:
    """The ReplicasScheduled condition, saying for each stranded replica why it is kept."""
    if not stranded:
        return scheduled_condition(plan, kept, mine)
    names = {str(mine[k]["metadata"]["name"]): k for k in stranded}
    others = tuple(r for r in plan.removed if r.name not in names)
    cond = scheduled_condition(dataclasses.replace(plan, removed=others), kept, mine)
    placed = {p.index for p in plan.placements}
    lines = []
    for r in sorted(plan.removed, key=lambda r: r.index):
        if r.name not in names:
            continue
        if r.index in placed:
            until = "until its replacement serves"
        elif plan.scheduled < plan.desired:
            until = "as no listed cluster can take it"
        else:
            until = "until its ground is listed again (nothing is scaled down on no evidence)"
        lines.append(f"{r.name} on {r.cluster} kept {until} ({stranded[names[r.name]]})")
    return cond._replace(message="; ".join([cond.message, *lines]))


def _fleet_unlisted(
    md: Obj,
    asks: dict[str, Requirement],
    observed: Mapping[str, Obj],
    mine: Mapping[str, Obj],
    unlisted: list[str],
) -> Result:
    """No InferenceCluster, or no InferenceClass, is listed while replicas run: every deleted,
    or a list that failed or lags. Nothing can be placed, and nothing observed is dropped."""
    what = " and ".join(asks[n].kind for n in unlisted)
    message = (
        f"no {what} is listed (all deleted, or the list failed or lags): "
        f"the {len(mine)} existing replicas are kept as they are and nothing new is placed"
    )
    more = [_NO_CLUSTERS] if CLUSTERS in unlisted else []
    desired = int(md["spec"]["replicas"])
    return _unplaced(observed, asks, mine, desired, ModelDeployment.FLEET_NOT_LISTED, message, more)


def _unplaced(
    held: Mapping[str, Obj],
    asks: dict[str, Requirement],
    mine: Mapping[str, Obj],
    desired: int,
    reason: str,
    message: str,
    more: Iterable[Event] = (),
) -> Result:
    """Nothing can be placed: ``held`` is kept as observed, and ``reason`` says why."""
    names = {key: str(obj["metadata"]["name"]) for key, obj in mine.items()}
    ready = sum(1 for obj in mine.values() if serving_status(obj) == "True")
    return Result.held(
        held,
        requirements=asks,
        status={"replicas": {"total": len(mine), "ready": ready}},
        conditions=[
            Condition(SCHEDULED, "False", reason, message),
            serving_condition(desired, names, [], mine),
        ],
        events=[Event("Warning", message, reason), *more],
        ready="False",
    )


def _observed_replicas(observed: Mapping[str, Obj]) -> dict[str, Obj]:
    # By key: the request's observed map has no order, and everything listed from these
    # (waiting replicas, replicas carried forward) must come out the same on every call.
    return {
        key: obj
        for key, obj in sorted(observed.items())
        if obj.get("kind") == "ModelReplica" and isinstance(obj.get("metadata"), Mapping)
    }


def _waiting(
    asks: dict[str, Requirement],
    observed: Mapping[str, Obj],
    missing: list[str],
    more: Mapping[str, Requirement] | None = None,
) -> Result:
    message = f"reading {', '.join(missing)}; existing replicas are kept as they are"
    return Result.held(
        observed,
        requirements={**asks, **(more or {})},
        conditions=[Condition(SCHEDULED, "Unknown", ModelDeployment.WAITING_FOR_FLEET, message)],
    )


def _invalid_selectors(
    asks: dict[str, Requirement], mine: Mapping[str, Obj], plan: Schedule
) -> Result:
    detail = "; ".join(str(e) for e in plan.selector_errors)
    message = f"invalid device selector: {detail}; existing replicas are kept unchanged"
    return _unplaced(mine, asks, mine, plan.desired, ModelDeployment.INVALID_SELECTOR, message)


def _malformed(md: Obj) -> str | None:
    name = objects.name(md)
    if len(name) > LABEL_VALUE_MAX:
        # Crossplane drops root-level XRD rules, so this cannot be refused at admission.
        return (
            f"ModelDeployment name {name!r} is longer than {LABEL_VALUE_MAX} characters: its "
            "ModelReplicas carry it as a label value, so none can be created; use a shorter name"
        )
    spec = md.get("spec")
    if not isinstance(spec, Mapping):
        return "ModelDeployment spec is required"
    template = spec.get("template")
    if not isinstance(template, Mapping) or not isinstance(template.get("spec"), Mapping):
        return "ModelDeployment spec.template.spec is required"
    problem = _malformed_engines(template["spec"].get("engines"))
    if problem:
        return problem
    if not isinstance(spec.get("replicas"), int):
        return "ModelDeployment spec.replicas must be an integer"
    return None


def _malformed_engines(engines: Any) -> str | None:
    if not isinstance(engines, list) or not engines:
        return "ModelDeployment spec.template.spec.engines must list at least one engine"
    for e, engine in enumerate(engines):
        where = f"ModelDeployment spec.template.spec.engines[{e}]"
        if not isinstance(engine, Mapping) or not isinstance(engine.get("name"), str):
            return f"{where}.name is required"
        members = engine.get("members")
        if not isinstance(members, list) or not members:
            return f"{where}.members must list at least one member"
        for m, member in enumerate(members):
            if not isinstance(member, Mapping) or not isinstance(member.get("template"), Mapping):
                return f"{where}.members[{m}].template is required"
    return None


def _waiting_on(name: str, obj: Obj | None) -> str:
    if obj is None:
        return f"{name}: not created yet"
    c = objects.condition(obj, ModelReplica.MODEL_SERVING)
    if c is None:
        return f"{name}: no ModelServing condition yet"
    return f"{name}: {c.get('reason') or 'NotServing'}: {c.get('message') or ''}".rstrip(": ")


def _by_cluster(placements: Iterable[ReplicaPlacement]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for p in sorted(placements, key=lambda p: (p.cluster, p.index)):
        out.setdefault(p.cluster, []).append(str(p.index))
    return out
