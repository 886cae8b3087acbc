"""What `modelplane explain` says of an autoscaled ModelDeployment (docs/design/autoscaling.md,
"Status and explain"): its bounds and the count placed, KEDA's last decision as the status and
the ``Autoscaling`` condition say it, where the next replica would go, and which replica a
scale-in would remove first.

Nothing here decides: the next replica is what the scheduler places when render runs with one
replica more (``explain`` hands over that schedule), and the replica leaving first is the one
``scheduling.scale_in.victim`` picks from the replicas the scheduler keeps
(``policy.retain_all``), in the cost order an autoscaled deployment follows, told which of them
a rollout has yet to update as the composer tells the scheduler (``composer.rolling``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from modelplane.compose.modeldeployment.autoscaling import desired_replicas, minimum
from modelplane.compose.modeldeployment.composer import rolling
from modelplane.compose.modeldeployment.footprint import CACHE, footprint
from modelplane.compose.modeldeployment.rollout import Strategy
from modelplane.composer import namespace_of
from modelplane.kube import objects
from modelplane.kube.objects import Obj
from modelplane.labels import DEPLOYMENT
from modelplane.reasons import ModelDeployment
from modelplane.scheduling import policy
from modelplane.scheduling.demand import Engine, parse_engines
from modelplane.scheduling.devices import class_price, device_kinds
from modelplane.scheduling.fleet import Cluster, parse_clusters
from modelplane.scheduling.options import Matcher, Replica
from modelplane.scheduling.placement import Schedule
from modelplane.scheduling.replicas import replica_identity, replica_index
from modelplane.scheduling.scale_in import Autoscaled, CostOrder, victim
from modelplane.scheduling.scheduler import placement_of
from modelplane.scheduling.spread import parse_constraints
from modelplane.shortlist import counted, plural

__all__ = ["Autoscaling", "Leaving", "Next", "autoscaling_of", "first_to_leave", "next_replica"]

BALANCE = "every removal breaks a spread constraint, so the balance order decides"
ROLLING = "the rollout has yet to update it (removing it advances the rollout)"
ASLEEP = (
    "asleep: the first request through a ModelService that selects it wakes it to one replica "
    "(the next replica below); that request is answered 503 with Retry-After while the replica "
    "starts (placement, image pull, weights, engine start); minReplicas 1 keeps one warm"
)


@dataclass(frozen=True)
class Next:
    """Where the scheduler puts one replica more: its index, cluster and pools, and why that
    cluster ranked first; or, when nothing has room, ``short`` (the scheduler's reasons)."""

    index: int | None = None
    cluster: str = ""
    pools: tuple[str, ...] = ()
    why: str = ""
    short: tuple[str, ...] = ()

    def text(self) -> str:
        if self.index is None:
            return "next replica: no cluster has room for it: " + "; ".join(self.short)
        pools = f"{plural('pool', len(self.pools))} {', '.join(self.pools)}"
        line = f"next replica would go to: replica {self.index} on {self.cluster}, {pools}"
        return line + (f": {self.why}" if self.why else "")

    def to_dict(self) -> Obj:
        return {
            "replica": self.index,
            "cluster": self.cluster or None,
            "pools": list(self.pools),
            "why": self.why,
            "short": list(self.short),
        }


@dataclass(frozen=True)
class Leaving:
    """The replica a scale-in removes first, and why, in the cost order's terms."""

    index: int
    name: str
    cluster: str
    why: tuple[str, ...]

    def text(self) -> str:
        return f"replica {self.index} ({self.name}) on {self.cluster}: " + "; ".join(self.why)

    def to_dict(self) -> Obj:
        return {
            "replica": self.index,
            "name": self.name,
            "cluster": self.cluster,
            "why": list(self.why),
        }


@dataclass(frozen=True)
class Autoscaling:
    """Everything explain says of a deployment's autoscaling."""

    minimum: int
    maximum: int
    written: int
    """``spec.replicas`` as the input has it."""
    placed: int
    """The count placement reads: ``written`` within the bounds."""
    status: Obj
    condition: Obj | None
    source: str
    """Where ``status`` and ``condition`` come from: ``observed`` (the input carried them, as
    ``kubectl get -o yaml`` does) or ``rendered``."""
    next: Next | None
    """None at ``maxReplicas``."""
    leaving: Leaving | None
    """None at ``minReplicas``, or when no replica is kept to remove."""

    def text(self) -> list[str]:
        lines = [f"  autoscaling: {self.minimum} to {self.maximum} replicas, {self.placed} placed"]
        if self.written != self.placed:
            lines.append(
                f"    spec.replicas {self.written} is outside [{self.minimum}, {self.maximum}]: "
                f"clamped to {self.placed}"
            )
        lines.append(f"    last decision ({self.source}): {self._decision()}")
        if self.status.get("asleep"):
            lines.append(f"    {ASLEEP}")
        if self.next is None:
            lines.append(f"    next replica: none, at maxReplicas ({self.maximum})")
        else:
            lines.append(f"    {self.next.text()}")
        if self.placed <= self.minimum:
            lines.append(f"    a scale-in: none, at minReplicas ({self.minimum})")
        elif self.leaving is not None:
            lines.append(f"    a scale-in would remove first: {self.leaving.text()}")
        return lines

    def _decision(self) -> str:
        decided = ", ".join(
            f"{k} {self.status[k]}"
            for k in ("desiredReplicas", "currentReplicas", "lastScaleTime")
            if self.status.get(k) is not None
        )
        c = self.condition
        said = f"{c.get('reason')}: {c.get('message', '')}" if c else "no Autoscaling condition"
        return f"{said} ({decided})" if decided else said

    def to_dict(self) -> Obj:
        return {
            "minReplicas": self.minimum,
            "maxReplicas": self.maximum,
            "specReplicas": self.written,
            "placed": self.placed,
            "clamped": self.written != self.placed,
            "source": self.source,
            "status": dict(self.status),
            "condition": self.condition,
            "next": self.next.to_dict() if self.next is not None else None,
            "scaleIn": self.leaving.to_dict() if self.leaving is not None else None,
        }


def autoscaling_of(
    md: Obj, rendered: Obj | None, coming: Next | None, leaving: Leaving | None
) -> Autoscaling:
    """The report for ``md`` (as the input has it) given its ``rendered`` self. The input's own
    status wins: it is what KEDA last decided on the live control plane, where render has no
    HPA to read."""
    spec = objects.spec(md)
    scaling = spec["autoscaling"]
    observed = _condition(md)
    source, shown = ("observed", md) if observed is not None else ("rendered", rendered)
    # The render's minimum in force: one for a deployment that may sleep but nothing wakes.
    low = objects.status(rendered).get("autoscaling", {}).get("minReplicas")
    wakes = low is None or int(low) == 0
    return Autoscaling(
        minimum=minimum(spec, wakes),
        maximum=int(scaling["maxReplicas"]),
        written=int(spec.get("replicas", scaling.get("minReplicas", 1))),
        placed=desired_replicas(spec, wakes),
        status=dict(objects.status(shown).get("autoscaling") or {}),
        condition=_condition(shown),
        source=source,
        next=coming,
        leaving=leaving,
    )


def _condition(obj: Obj | None) -> Obj | None:
    found = objects.condition(obj, ModelDeployment.AUTOSCALING)
    return dict(found) if found is not None else None


def next_replica(now: Schedule, more: Schedule) -> Next:
    """The replica ``more`` (the schedule for one replica more) places that ``now`` does not,
    with the scheduler's reason its cluster won."""
    held = {p.index for p in now.placements}
    new = [p for p in more.placements if p.index not in held]
    if not new:
        return Next(short=more.shortfall or ("the scheduler placed none",))
    placed = new[0]
    scores = {s.replica: s for c in more.trace for s in c.scores}
    score = scores.get(placed.index)
    pools = tuple(dict.fromkeys(m.pool for e in placed.engines for m in e.members))
    return Next(placed.index, placed.cluster, pools, score.why if score else "")


def first_to_leave(
    md: Obj,
    replicas: Sequence[Obj],
    clusters: Sequence[Obj],
    classes: Sequence[Obj],
    caches: Sequence[Obj] = (),
) -> Leaving | None:
    """The replica of ``md`` that ``scale_in.victim`` removes first, among those the scheduler
    keeps (``replicas``, ``clusters``, ``classes`` and ModelCaches ``caches`` as rendered), and
    why. ``md`` as render admitted it: the replicas' stamps are judged against its defaults."""
    template = objects.dig(md, "spec", "template", "spec") or {}
    engines = parse_engines(template)
    fleet = _fleet(clusters, classes)
    ours = _ours(md, replicas)
    kept, _ = policy.retain_all(
        Matcher(engines),
        ours,
        fleet,
        objects.dig(template, "clusterSelector", "matchLabels") or {},
        list(template.get("tolerations") or []),
    )
    if not kept:
        return None
    stamped = {replica_identity(r)[1]: r for r in ours}
    idle = {k.existing for k in kept if not policy.is_serving(stamped.get(k.existing or ""))}
    load = policy.cluster_load(kept)
    order = Autoscaled(engines, fleet, parse_constraints(template)).start(kept)
    outdated = _outdated(md, engines, ours, kept, caches)
    leaving = victim(kept, load, set(), idle, order, outdated)
    why = _why(leaving, kept, idle, load, order, outdated)
    return Leaving(leaving.index, leaving.existing or "", leaving.cluster, why)


def _outdated(
    md: Obj,
    engines: tuple[Engine, ...],
    ours: Sequence[Obj],
    kept: Sequence[Replica],
    caches: Sequence[Obj],
) -> frozenset[str]:
    """The kept replicas a rollout has yet to update, by name: the composer's own judgement
    (``composer.rolling``), asked of each kept replica as the scheduler asks it."""
    cache = footprint(md, {CACHE: list(caches)})
    mine = {objects.name(r): r for r in ours}
    at = rolling(md, mine, cache, Strategy.of(md))
    return frozenset(k.existing or "" for k in kept if at(placement_of(engines, k)))


def _fleet(clusters: Sequence[Obj], classes: Sequence[Obj]) -> dict[str, Cluster]:
    """The clusters as the scheduler reads them, by name."""
    kinds = {objects.name(c): device_kinds(c) for c in classes}
    prices = {objects.name(c): class_price(c) for c in classes}
    return {c.name: c for c in parse_clusters(clusters, kinds, prices)}


def _ours(md: Obj, replicas: Sequence[Obj]) -> list[Obj]:
    """``md``'s ModelReplicas, one per name, in index order (as the scheduler reads them)."""
    ns, name = namespace_of(md), objects.name(md)
    by_name = {
        objects.name(r): r
        for r in replicas
        if objects.labels(r).get(DEPLOYMENT) == name and namespace_of(r) == ns
    }
    return sorted(by_name.values(), key=lambda r: (replica_index(r) is None, replica_index(r) or 0))


def _why(
    leaving: Replica,
    kept: Sequence[Replica],
    idle: set[str | None],
    load: Mapping[str, int],
    order: CostOrder,
    outdated: frozenset[str] = frozenset(),
) -> tuple[str, ...]:
    """The cost order's terms that set ``leaving`` apart (``scale_in.victim``), in its order."""
    spread = _spread(leaving, kept, order)
    if spread == BALANCE:
        return (spread,)
    why = [spread] if spread else []
    if leaving.existing in outdated:
        why.append(ROLLING)
    if leaving.existing in idle:
        why.append("it is not serving")
    why.append(_price(leaving, kept, order))
    if len(kept) > 1 and all(order.prices[k.index] == order.prices[leaving.index] for k in kept):
        why.append(f"then the balance order: {load[leaving.cluster]} replicas on its cluster")
    return tuple(why)


def _spread(leaving: Replica, kept: Sequence[Replica], order: CostOrder) -> str:
    """What the spread constraints said of ``leaving`` (nothing without any)."""
    if not order.autoscaled.constraints:
        return ""
    counts = order.counts(kept)
    if not order.keeps_spread(counts, leaving):
        return BALANCE
    price = order.prices[leaving.index]
    dearer = [k for k in kept if order.prices[k.index] > price]
    kept_up = "its removal keeps every spread constraint"
    if any(not order.keeps_spread(counts, k) for k in dearer):
        return kept_up + ", a dearer replica's would break one"
    return kept_up


def _price(leaving: Replica, kept: Sequence[Replica], order: CostOrder) -> str:
    """The leaving replica's price as the fill ranks it, against the others kept."""
    rank = order.prices[leaving.index]
    ranks = [order.prices[k.index] for k in kept]
    if rank[0]:
        return (
            f"{counted(rank[0], 'pod')} on unpriced capacity (an unknown price is not a free one)"
        )
    cheapest = min(r[1] for r in ranks)
    if rank == max(ranks) and rank[1] > cheapest:
        return f"the dearest capacity: {rank[1]:g} per hour against {cheapest:g} for the cheapest"
    if all(r == rank for r in ranks):
        return f"its capacity costs {rank[1]:g} per hour, as much as every other"
    return f"its capacity costs {rank[1]:g} per hour"
