"""The search within one cluster keeps the cheapest placement it finds, not the last."""

from __future__ import annotations

from modelplane.scheduling.scheduler import schedule
from tests.fleet.builders import (
    declared_cluster,
    device_member,
    engine_of,
    gpu_class,
    llm_deployment,
    priced,
)


def test_the_cheapest_combination_of_engines_wins_when_the_cheapest_pool_holds_only_one() -> None:
    # "cheap" holds one engine: the small one there first leaves the big one on "dear" (2.25);
    # the big one there and the small one on "dear" costs less (1.5).
    fleet = [declared_cluster("a", [("cheap", "cheap", 1), ("dear", "dear", 2)])]
    md = llm_deployment(
        engines=[
            engine_of("small", [device_member(devices=[("gpu", 1, [])])]),
            engine_of("big", [device_member(devices=[("gpu", 2, [])])], copies=2),
        ]
    )
    [p] = schedule(
        md, fleet, [priced(gpu_class(n, count=4), p) for n, p in (("cheap", 1), ("dear", 2))], []
    ).placements
    assert [(e.name, e.members[0].pool) for e in p.engines] == [("small", "dear"), ("big", "cheap")]
