"""Properties on random small fleets, checked against an independent brute force.

- No pool is ever overcommitted: every pod of every replica (other deployments' and ours) can be
  put on a node of its pool with all its devices there, gang pods on distinct nodes.
- Whenever the scheduler reports a shortfall, an exhaustive search confirms that the fleet cannot
  hold ``spec.replicas`` replicas.
- A replica takes the cheapest placement that fits anywhere in the fleet.

Classes may carry prices and pools may grow to a ``maxNodeCount``: neither ever costs a replica
its place.
"""

from __future__ import annotations

import itertools
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from modelplane.kube.admission import Admission
from modelplane.scheduling.scheduler import schedule
from tests.fleet import published
from tests.fleet.builders import (
    GPU_SELECTOR,
    declared_cluster,
    device_member,
    engine_of,
    llm_deployment,
    product,
    stamp,
)
from tests.properties import examples

# A device kind: (product, count per node, deviceClassName). Each class's kinds have distinct
# DeviceClass names, so a stamped request names its kind unambiguously.
KINDS = {"h": ("H100", "gpu.h"), "a": ("A100", "gpu.a")}

# The selectors the generator uses, with what they mean, for the oracle.
SELECTORS = {
    GPU_SELECTOR: lambda p: True,
    product("H100"): lambda p: p == "H100",
    product("A100"): lambda p: p == "A100",
}

Class = tuple[tuple[str, int], ...]  # (kind key, count per node)


def inference_class(name: str, kinds: Class, price: int | None = None) -> dict[str, Any]:
    cost = {"cost": {"perNodeHour": price}} if price is not None else {}
    return {
        "metadata": {"name": name},
        "spec": {
            **cost,
            "devices": [
                {
                    "name": f"d{i}",
                    "driver": "gpu.nvidia.com",
                    "deviceClassName": KINDS[k][1],
                    "count": count,
                    "attributes": {"productName": {"string": KINDS[k][0]}},
                }
                for i, (k, count) in enumerate(kinds)
            ],
        },
    }


classes_st = st.lists(
    st.lists(
        st.tuples(st.sampled_from("ha"), st.sampled_from([1, 2, 4])),
        min_size=1,
        max_size=2,
        unique_by=lambda t: t[0],
    ).map(tuple),
    min_size=1,
    max_size=2,
)
request_st = st.tuples(st.sampled_from([1, 2, 4]), st.sampled_from(sorted(SELECTORS)))
member_requests_st = st.lists(request_st, min_size=1, max_size=2)


@st.composite
def engine_st(draw: st.DrawFn, name: str) -> dict[str, Any]:
    copies = draw(st.integers(1, 2))
    if draw(st.booleans()):
        reqs = draw(member_requests_st)
        return engine_of(
            name,
            [device_member(devices=[(f"r{i}", c, [s]) for i, (c, s) in enumerate(reqs)])],
            copies=copies,
        )
    leader = draw(member_requests_st)
    worker = draw(member_requests_st)
    return engine_of(
        name,
        [
            device_member("Leader", devices=[(f"r{i}", c, [s]) for i, (c, s) in enumerate(leader)]),
            device_member(
                "Worker",
                devices=[(f"r{i}", c, [s]) for i, (c, s) in enumerate(worker)],
                nodes=draw(st.integers(1, 2)),
            ),
        ],
        copies=copies,
    )


@st.composite
def fleet_st(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    kinds = draw(classes_st)
    classes = [
        inference_class(f"c{i}", k, draw(st.sampled_from([None, 1, 3, 8])))
        for i, k in enumerate(kinds)
    ]
    clusters = []
    for c in range(draw(st.integers(1, 2))):
        pools = [
            (f"p{p}", f"c{draw(st.integers(0, len(kinds) - 1))}", draw(st.integers(0, 3)))
            for p in range(draw(st.integers(1, 2)))
        ]
        declared = declared_cluster(f"k{c}", pools)
        for spec in declared["spec"]["nodePools"]:
            if grow := draw(st.integers(0, 1)):
                spec["maxNodeCount"] = spec["nodeCount"] + grow
        clusters.append(declared)
    return clusters, classes


@st.composite
def deployment_st(draw: st.DrawFn, name: str, namespace: str) -> dict[str, Any]:
    engines = [draw(engine_st(f"e{i}")) for i in range(draw(st.integers(1, 2)))]
    return llm_deployment(
        name=name, namespace=namespace, replicas=draw(st.integers(1, 3)), engines=engines
    )


# --- the oracle: brute force over everything, sharing no code with the scheduler -------------


def kinds_of(classes: list[dict[str, Any]]) -> dict[str, list[tuple[str, int, str]]]:
    """class name -> [(product, count, deviceClassName)]"""
    return {
        c["metadata"]["name"]: [
            (d["attributes"]["productName"]["string"], d["count"], d["deviceClassName"])
            for d in c["spec"]["devices"]
        ]
        for c in classes
    }


def member_demands(m: dict[str, Any], kinds: list[tuple[str, int, str]]) -> set[tuple[int, ...]]:
    """Every per-pod demand vector this member can have on a node of these kinds."""
    reqs = m["nodeSelector"]["devices"]
    out = set()
    for assignment in itertools.product(range(len(kinds)), repeat=len(reqs)):
        used = [0] * len(kinds)
        ok = True
        for r, k in zip(reqs, assignment, strict=True):
            product_, _count, _ = kinds[k]
            ok &= all(SELECTORS[s["cel"]](product_) for s in r["selectors"])
            used[k] += r["count"]
        if ok and all(u <= kinds[i][1] for i, u in enumerate(used)):
            out.add(tuple(used))
    return out


def pods_fit(capacity: tuple[int, ...], nodes: int, gangs: list[list[tuple[int, ...]]]) -> bool:
    """Brute force: every pod on some node, gang pods on distinct nodes, no node overdrawn."""
    pods = [(g, pod) for g, gang in enumerate(gangs) for pod in gang]
    free = [list(capacity) for _ in range(nodes)]
    used_by: list[set[int]] = [set() for _ in range(nodes)]

    # Pods are placed gang by gang, so what is left to decide at pod i depends only on each
    # node's free devices and whether it holds a pod of gang g already (earlier gangs are
    # complete, later ones not begun): nodes alike are interchangeable, and a state that failed
    # once fails again. Without this, proving that an overcommitted pool's pods do not fit took
    # nodes ** pods tries, and an unlucky example never ended.
    failed: set[tuple[int, tuple[tuple[tuple[int, ...], bool], ...]]] = set()

    def go(i: int) -> bool:
        if i == len(pods):
            return True
        g, pod = pods[i]
        state = (i, tuple(sorted((tuple(free[n]), g in used_by[n]) for n in range(nodes))))
        if state in failed:
            return False
        tried: set[tuple[int, ...]] = set()
        for n in range(nodes):
            if g in used_by[n] or any(f < p for f, p in zip(free[n], pod, strict=True)):
                continue
            if tuple(free[n]) in tried:
                continue
            tried.add(tuple(free[n]))
            for j, p in enumerate(pod):
                free[n][j] -= p
            used_by[n].add(g)
            if go(i + 1):
                return True
            used_by[n].discard(g)
            for j, p in enumerate(pod):
                free[n][j] += p
        failed.add(state)
        return False

    return go(0)


def replica_gangs(
    spec_engines: list[dict[str, Any]],
    pools: dict[str, tuple[str, int]],
    classes: dict[str, list[tuple[str, int, str]]],
) -> dict[str, list[list[tuple[int, ...]]]]:
    """A stamped replica's gangs per pool, demand read back through deviceClassName."""
    out: dict[str, list[list[tuple[int, ...]]]] = {}
    for e in spec_engines:
        per_pool: dict[str, list[tuple[int, ...]]] = {}
        for m in e["members"]:
            pool = m["nodePoolName"]
            kinds = classes[pools[pool][0]]
            vec = [0] * len(kinds)
            for r in m.get("deviceRequests", []):
                vec[[k[2] for k in kinds].index(r["deviceClassName"])] += r["count"]
            pods = m.get("worker", {}).get("nodes", 1) if m["role"] == "Worker" else 1
            per_pool.setdefault(pool, []).extend([tuple(vec)] * pods)
        for pool, pods in per_pool.items():
            out.setdefault(pool, []).extend([list(pods)] * e.get("copies", 1))
    return out


def cluster_pools(c: dict[str, Any]) -> dict[str, tuple[str, int]]:
    """Each pool's class and the nodes it may hold (its maxNodeCount when it may grow)."""
    return {
        p["name"]: (p["className"], max(p["nodeCount"], p.get("maxNodeCount", 0)))
        for p in c["spec"]["nodePools"]
    }


def no_overcommit(
    clusters: list[dict[str, Any]], classes: list[dict[str, Any]], replicas: list[dict[str, Any]]
) -> bool:
    kinds = kinds_of(classes)
    for c in clusters:
        pools = cluster_pools(c)
        gangs: dict[str, list[list[tuple[int, ...]]]] = {}
        for r in replicas:
            if r["spec"]["clusterName"] == c["metadata"]["name"]:
                for pool, gs in replica_gangs(r["spec"]["engines"], pools, kinds).items():
                    gangs.setdefault(pool, []).extend(gs)
        for pool, gs in gangs.items():
            class_name, nodes = pools[pool]
            if not pods_fit(tuple(k[1] for k in kinds[class_name]), nodes, gs):
                return False
    return True


def replica_options(
    md: dict[str, Any],
    pools: dict[str, tuple[str, int]],
    kinds: dict[str, list[tuple[str, int, str]]],
) -> list[dict[str, list[list[tuple[int, ...]]]]]:
    """Every way one replica can sit on a cluster: its gangs per pool."""
    per_engine = []
    for e in md["spec"]["template"]["spec"]["engines"]:
        choices = []
        for layout in itertools.product(sorted(pools), repeat=len(e["members"])):
            demand_sets = [
                member_demands(m, kinds[pools[p][0]])
                for m, p in zip(e["members"], layout, strict=True)
            ]
            for demands in itertools.product(*demand_sets):
                if not any(sum(d) for d in demands):
                    continue
                per_pool: dict[str, list[tuple[int, ...]]] = {}
                for m, p, d in zip(e["members"], layout, demands, strict=True):
                    pods = m["worker"]["nodes"] if m["role"] == "Worker" else 1
                    per_pool.setdefault(p, []).extend([d] * pods)
                choices.append({p: [pods] * e["copies"] for p, pods in per_pool.items()})
        per_engine.append(choices)
    out = []
    for combo in itertools.product(*per_engine):
        merged: dict[str, list[list[tuple[int, ...]]]] = {}
        for part in combo:
            for p, gs in part.items():
                merged.setdefault(p, []).extend(gs)
        out.append(merged)
    return out


def cluster_holds(
    md: dict[str, Any],
    c: dict[str, Any],
    classes: list[dict[str, Any]],
    others: list[dict[str, Any]],
    count: int,
) -> bool:
    kinds = kinds_of(classes)
    pools = cluster_pools(c)
    base: dict[str, list[list[tuple[int, ...]]]] = {}
    for r in others:
        if r["spec"]["clusterName"] == c["metadata"]["name"]:
            for pool, gs in replica_gangs(r["spec"]["engines"], pools, kinds).items():
                base.setdefault(pool, []).extend(gs)
    options = replica_options(md, pools, kinds)
    for combo in itertools.combinations_with_replacement(range(len(options)), count):
        gangs = {p: list(gs) for p, gs in base.items()}
        for i in combo:
            for p, gs in options[i].items():
                gangs.setdefault(p, []).extend(gs)
        if all(
            pods_fit(tuple(k[1] for k in kinds[pools[p][0]]), pools[p][1], gs)
            for p, gs in gangs.items()
        ):
            return True
    return False


def fleet_holds(
    md: dict[str, Any],
    clusters: list[dict[str, Any]],
    classes: list[dict[str, Any]],
    others: list[dict[str, Any]],
) -> bool:
    """Clusters are independent and replicas interchangeable: the fleet holds N replicas iff the
    clusters' individual maxima add up to N."""
    want = md["spec"]["replicas"]
    total = 0
    for c in clusters:
        k = 0
        while total + k < want and cluster_holds(md, c, classes, others, k + 1):
            k += 1
        total += k
    return total >= want


# --- the properties -------------------------------------------------------------------------

SETTINGS = settings(
    max_examples=examples(400),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@SETTINGS
@given(fleet=fleet_st(), data=st.data())
def test_no_pool_is_overcommitted_and_every_shortfall_is_real(
    fleet: Any, data: st.DataObject
) -> None:
    clusters, classes = fleet
    other = data.draw(deployment_st("other", "team-b"))
    others = [stamp(other, p) for p in schedule(other, clusters, classes, []).placements]
    assert no_overcommit(clusters, classes, others)

    md = data.draw(deployment_st("llm", "team-a"))
    result = schedule(md, clusters, classes, others)
    ours = [stamp(md, p) for p in result.placements]
    assert no_overcommit(clusters, classes, others + ours)
    event("shortfall" if result.scheduled < md["spec"]["replicas"] else "complete")
    if result.scheduled < md["spec"]["replicas"]:
        assert result.shortfall
        assert not fleet_holds(md, clusters, classes, others)


@SETTINGS
@given(fleet=fleet_st(), data=st.data())
def test_rescheduling_keeps_every_replica_and_stays_within_capacity(
    fleet: Any, data: st.DataObject
) -> None:
    clusters, classes = fleet
    md = data.draw(deployment_st("llm", "team-a"))
    first = schedule(md, clusters, classes, [])
    ours = [stamp(md, p) for p in first.placements]
    grown = {**md, "spec": {**md["spec"], "replicas": md["spec"]["replicas"] + 1}}
    again = schedule(grown, clusters, classes, ours)
    kept = {(p.index, p.cluster, p.existing) for p in again.placements if p.retained}
    assert kept == {
        (p.index, p.cluster, r["metadata"]["name"])
        for p, r in zip(first.placements, ours, strict=True)
    }
    assert no_overcommit(clusters, classes, [stamp(grown, p) for p in again.placements])
    assert schedule(grown, clusters, classes, ours) == again


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fleet=fleet_st(), data=st.data())
def test_every_placement_stamps_a_modelreplica_the_xrd_admits(
    fleet: Any, data: st.DataObject
) -> None:
    clusters, classes = fleet
    md = data.draw(deployment_st("llm", "team-a"))
    admission = Admission.default()
    for p in schedule(md, clusters, classes, []).placements:
        admitted = admission.admit(stamp(md, p))
        assert admitted.ok, [str(e) for e in admitted.errors]


def _at(replicas: list[dict[str, Any]], when: str) -> list[dict[str, Any]]:
    return [{**r, "metadata": {**r["metadata"], "creationTimestamp": when}} for r in replicas]


@SETTINGS
@given(fleet=fleet_st(), data=st.data())
def test_two_deployments_placed_concurrently_converge_without_overcommit(
    fleet: Any, data: st.DataObject
) -> None:
    clusters, classes = fleet
    a = data.draw(deployment_st("llm", "team-a"))
    b = data.draw(deployment_st("other", "team-b"))
    # Both reconcile against the same empty fleet at once, so both may take the same devices.
    a0 = _at([stamp(a, p) for p in schedule(a, clusters, classes, []).placements], "T0")
    b0 = _at([stamp(b, p) for p in schedule(b, clusters, classes, []).placements], "T0")
    event("raced" if not no_overcommit(clusters, classes, a0 + b0) else "no race")
    # Then each reconciles once in turn, seeing the other's replicas.
    a1_plan = schedule(a, clusters, classes, a0 + b0)
    by_name = {r["metadata"]["name"]: r for r in a0}
    a1 = [
        by_name[p.existing] if p.existing else _at([stamp(a, p)], "T1")[0]
        for p in a1_plan.placements
    ]
    b1_plan = schedule(b, clusters, classes, a1 + b0)
    by_name = {r["metadata"]["name"]: r for r in b0}
    b1 = [by_name[p.existing] if p.existing else stamp(b, p) for p in b1_plan.placements]
    assert no_overcommit(clusters, classes, a1 + b1)


ROUNDS = 8
"""Rounds of (every cluster arbitrates, each deployment reconciles once) a race may take."""


def _reconcile(
    md: dict[str, Any],
    clusters: list[dict[str, Any]],
    classes: list[dict[str, Any]],
    own: list[dict[str, Any]],
    when: str,
) -> list[dict[str, Any]]:
    """The deployment's replicas after one reconcile that reads the clusters as published and
    its own replicas only."""
    plan = schedule(md, clusters, classes, own, own)
    by_name = {r["metadata"]["name"]: r for r in own}
    return [
        by_name[p.existing] if p.existing else _at([stamp(md, p)], when)[0] for p in plan.placements
    ]


def _admitted_fit(
    clusters: list[dict[str, Any]], classes: list[dict[str, Any]], replicas: list[dict[str, Any]]
) -> bool:
    """What each cluster admitted fits its pools, by the brute force above."""
    return all(
        no_overcommit(
            [c], classes, [r for r in replicas if r["metadata"]["name"] in published.admitted(c)]
        )
        for c in clusters
    )


@SETTINGS
@given(fleet=fleet_st(), data=st.data())
def test_two_deployments_racing_with_published_allocation_converge_without_overcommit(
    fleet: Any, data: st.DataObject
) -> None:
    clusters, classes = fleet
    a = data.draw(deployment_st("llm", "team-a"))
    b = data.draw(deployment_st("other", "team-b"))
    # Both reconcile against the same published allocation (nothing yet), so both may take the
    # same devices; neither lists the other's replicas, ever.
    clusters = published.publish_all(clusters, classes, [])
    a_now = _reconcile(a, clusters, classes, [], "T0")
    b_now = _reconcile(b, clusters, classes, [], "T0")
    event("raced" if not no_overcommit(clusters, classes, a_now + b_now) else "no race")
    for n in range(1, ROUNDS + 1):
        clusters = published.publish_all(clusters, classes, a_now + b_now)
        assert _admitted_fit(clusters, classes, a_now + b_now)
        confirmed = all(
            {r["metadata"]["name"] for r in a_now + b_now if r["spec"]["clusterName"] == name}
            <= published.admitted(c)
            for c in clusters
            for name in [c["metadata"]["name"]]
        )
        a_next = _reconcile(a, clusters, classes, a_now, f"T{n}")
        b_next = _reconcile(b, clusters, classes, b_now, f"T{n}")
        if confirmed and (a_next, b_next) == (a_now, b_now):
            break
        a_now, b_now = a_next, b_next
    else:
        raise AssertionError(f"no steady state after {ROUNDS} rounds")
    event(f"settled in round {n}")
    assert no_overcommit(clusters, classes, a_now + b_now)


# --- the cheapest placement -------------------------------------------------------------------


def prices_of(classes: list[dict[str, Any]]) -> dict[str, float]:
    return {c["metadata"]["name"]: c["spec"]["cost"]["perNodeHour"] for c in classes}


def cheapest_fit(
    md: dict[str, Any], clusters: list[dict[str, Any]], classes: list[dict[str, Any]]
) -> float | None:
    """Brute force: the least price of one replica anywhere on the empty fleet, each pod
    costing its class's perNodeHour times the largest share of a node's devices it claims."""
    kinds = kinds_of(classes)
    prices = prices_of(classes)
    best = None
    for c in clusters:
        pools = cluster_pools(c)
        for option in replica_options(md, pools, kinds):
            capacity = {p: tuple(k[1] for k in kinds[pools[p][0]]) for p in option}
            if not all(pods_fit(capacity[p], pools[p][1], gs) for p, gs in option.items()):
                continue
            price = sum(
                prices[pools[p][0]] * max(d / n for d, n in zip(pod, capacity[p], strict=True))
                for p, gs in option.items()
                for gang in gs
                for pod in gang
            )
            best = price if best is None else min(best, price)
    return best


@st.composite
def one_pool_engines_st(draw: st.DrawFn) -> dict[str, Any]:
    """One replica whose engines have one member each (no engine can split across pools, so
    the fewest-splits rule never outranks cost)."""
    engines = []
    for i in range(draw(st.integers(1, 2))):
        reqs = draw(member_requests_st)
        devices = [(f"r{j}", c, [s]) for j, (c, s) in enumerate(reqs)]
        engines.append(
            engine_of(f"e{i}", [device_member(devices=devices)], copies=draw(st.integers(1, 2)))
        )
    return llm_deployment(name="llm", namespace="team-a", replicas=1, engines=engines)


@SETTINGS
@given(fleet=fleet_st(), md=one_pool_engines_st(), prices=st.lists(st.integers(1, 9), max_size=2))
def test_a_replica_takes_the_cheapest_placement_that_fits(
    fleet: Any, md: dict[str, Any], prices: list[int]
) -> None:
    clusters, classes = fleet
    for c, price in zip(classes, [*prices, 1, 1], strict=False):
        c["spec"]["cost"] = {"perNodeHour": price}
    cheapest = cheapest_fit(md, clusters, classes)
    result = schedule(md, clusters, classes, [])
    event("placed" if result.placements else "nothing fits")
    if cheapest is None:
        assert not result.placements
        return
    [placed] = [stamp(md, p) for p in result.placements]
    kinds = kinds_of(classes)
    pools = cluster_pools(
        next(c for c in clusters if c["metadata"]["name"] == placed["spec"]["clusterName"])
    )
    capacity = {p: tuple(k[1] for k in kinds[pools[p][0]]) for p in pools}
    price = sum(
        prices_of(classes)[pools[p][0]] * max(d / n for d, n in zip(pod, capacity[p], strict=True))
        for p, gs in replica_gangs(placed["spec"]["engines"], pools, kinds).items()
        for gang in gs
        for pod in gang
    )
    assert abs(price - cheapest) < 1e-6
