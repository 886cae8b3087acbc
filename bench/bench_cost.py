"""The CEL cost budget of every definition Modelplane ships, and what estimating it takes.

For each XRD under apis/ (as the CRD Crossplane generates for it): each version's estimated
total against the API server's 100,000,000 per-schema limit, and its costliest rules against the
10,000,000 per-rule limit (cost per evaluation x evaluations per object). Then the time to
estimate: apis/ alone, and the upstream CRDs of tests/upstream/crds (1,000+ rules) for scale,
as a ratio to apis/ measured in the same run (best of N).

Run: uv run python bench/bench_cost.py
"""

from __future__ import annotations

import time
from pathlib import Path

from modelplane.kube.cel.budget import (
    STATIC_ESTIMATED_COST_LIMIT,
    STATIC_ESTIMATED_CRD_COST_LIMIT,
    estimate_definition,
)
from modelplane.kube.crd import Definition, load_definitions

ROOT = Path(__file__).resolve().parents[1]
RUNS = 5


def best(definitions: list[Definition]) -> float:
    fastest = float("inf")
    for _ in range(RUNS):
        start = time.perf_counter()
        for definition in definitions:
            estimate_definition(definition)
        fastest = min(fastest, time.perf_counter() - start)
    return fastest


def main() -> None:
    shipped = load_definitions([ROOT / "apis"])
    print(f"{'definition':<34} {'version':<9} {'rules':>5} {'total':>12} {'of limit':>9}")
    for definition in shipped:
        cost = estimate_definition(definition)
        for schema in cost.schemas:
            share = 100 * schema.total / STATIC_ESTIMATED_CRD_COST_LIMIT
            print(
                f"{cost.name:<34} {schema.version:<9} {len(schema.expressions):>5} "
                f"{schema.total:>12,} {share:>8.2f}%"
            )
            for x in schema.costliest(2):
                per_rule = 100 * x.total / STATIC_ESTIMATED_COST_LIMIT
                where = x.path.removeprefix(schema.path)
                print(f"    {x.total:>12,} ({per_rule:.2f}% of a rule's limit) {where}")
    upstream = load_definitions([ROOT / "tests" / "upstream" / "crds"])
    rules = sum(len(s.expressions) for d in upstream for s in estimate_definition(d).schemas)
    ours = best(shipped)
    theirs = best(upstream)
    print(f"estimate apis/: {ours * 1000:.1f} ms")
    print(
        f"estimate {len(upstream)} upstream CRDs ({rules} rules): {theirs * 1000:.0f} ms "
        f"= {theirs / ours:.1f}x apis/"
    )


if __name__ == "__main__":
    main()
