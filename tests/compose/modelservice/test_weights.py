"""Weight arithmetic: integers the Gateway API accepts (1..1,000,000), each within one unit of its
exact value at the route's scale for any number of endpoints, and exact whenever the exact
integers fit, so an entry's share does not move as its endpoints come and go."""

from __future__ import annotations

from fractions import Fraction
from functools import reduce
from math import gcd

from hypothesis import given, settings
from hypothesis import strategies as st

from modelplane.compose.modelservice.plan import Plan, plan_service
from modelplane.compose.modelservice.weights import integer_weights
from tests.compose.modelservice.kit import cluster, external_endpoint, replica_endpoint, service
from tests.properties import examples

MAX = 1_000_000
shares = st.lists(
    st.fractions(min_value=Fraction(1, 10**9), max_value=1).filter(lambda f: f > 0),
    min_size=1,
    max_size=16,
)


def within_one_unit(shares_: list[Fraction], weights: list[int]) -> bool:
    """Each weight within one unit of its exact value at the route's scale (the largest share
    at the largest weight)."""
    scale = Fraction(max(weights)) / max(shares_)
    return all(abs(w - s * scale) <= 1 for s, w in zip(shares_, weights, strict=True))


@given(shares)
def test_weights_are_integers_the_gateway_api_accepts(shares_: list[Fraction]) -> None:
    assert all(1 <= w <= MAX for w in integer_weights(shares_))


@given(shares)
def test_each_weight_is_within_one_unit_of_its_exact_value(shares_: list[Fraction]) -> None:
    assert within_one_unit(shares_, integer_weights(shares_))


@given(st.lists(st.integers(1, 1000), min_size=1, max_size=16))
def test_weights_that_fit_are_exact_and_smallest(numbers: list[int]) -> None:
    weights = integer_weights([Fraction(n, 7) for n in numbers])
    scale = Fraction(weights[0], numbers[0])
    assert all(w == n * scale for n, w in zip(numbers, weights, strict=True))
    assert reduce(gcd, weights) == 1


def test_three_endpoints_at_a_90_10_split_get_45_45_10() -> None:
    assert integer_weights([Fraction(45, 100), Fraction(45, 100), Fraction(10, 100)]) == [9, 9, 2]


# --- the plan: entries' shares across both hops ---------------------------------------------------

CLUSTERS = ["a", "b", "c", "d"]
FLEET = {c: cluster(c) for c in CLUSTERS}


@st.composite
def services(draw: st.DrawFn, max_weight: int, max_count: int) -> tuple[dict, list[list[dict]]]:
    """A service whose entries select replicas spread over clusters, or external endpoints."""
    n_entries = draw(st.integers(1, 4))
    entries, selected = [], []
    for i in range(n_entries):
        weight = draw(st.integers(1, max_weight))
        count = draw(st.integers(0, max_count))
        external = draw(st.booleans()) and count <= 3
        found = []
        for j in range(count):
            name = f"e{i}-{j}"
            if external:
                found.append(external_endpoint(name))
            else:
                found.append(replica_endpoint(name, draw(st.sampled_from(CLUSTERS))))
        entries.append((weight, {"entry": str(i)}))
        selected.append(found)
    return service("s", "ml", *entries), selected


def realised(plan: Plan) -> dict[str, Fraction]:
    """Each endpoint's share as the front route's integer weights carry it (the fleet hop has one
    pool per rule, so it splits nothing)."""
    total = sum(lane.weight for lane in plan.lanes)
    return {lane.endpoint: Fraction(lane.weight, total) for lane in plan.lanes}


def declared(plan: Plan) -> dict[int, Fraction]:
    active = [e for e in plan.entries if e.ready]
    total = sum(e.weight for e in active)
    return {e.index: Fraction(e.weight, total) for e in active}


@settings(max_examples=examples(150), deadline=None)
@given(services(max_weight=1_000_000, max_count=40))
def test_every_routes_weights_are_within_one_unit_for_any_endpoint_counts(
    case: tuple[dict, list[list[dict]]],
) -> None:
    ms, selected = case
    plan = plan_service(ms, selected, FLEET)
    if plan.lanes:
        assert within_one_unit([lane.share for lane in plan.lanes], [x.weight for x in plan.lanes])
    assert all(1 <= lane.weight <= MAX for lane in plan.lanes)
    assert len(plan.lanes) <= 16


@settings(max_examples=examples(150), deadline=None)
@given(services(max_weight=100, max_count=4))  # at most 16 lanes: none left out
def test_entries_get_exactly_their_declared_share_whatever_their_endpoint_counts(
    case: tuple[dict, list[list[dict]]],
) -> None:
    ms, selected = case
    plan = plan_service(ms, selected, FLEET)
    got = realised(plan)
    by_entry: dict[int, Fraction] = {}
    for m in plan.members:
        if m.ready:
            by_entry[m.entry] = by_entry.get(m.entry, Fraction(0)) + got[m.name]
    assert by_entry == declared(plan)
    # ...and evenly over each entry's endpoints.
    for e in plan.entries:
        assert len({got[name] for name in e.ready}) <= 1


def test_a_canary_keeps_its_share_as_the_stable_deployment_scales() -> None:
    for stable in range(1, 12):
        selected = [
            [replica_endpoint(f"s{i}", CLUSTERS[i % 4]) for i in range(stable)],
            [replica_endpoint("canary", "d")],
        ]
        plan = plan_service(service("s", "ml", (90, {}), (10, {})), selected, FLEET)
        assert realised(plan)["canary"] == Fraction(1, 10), stable
