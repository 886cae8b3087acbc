"""`modelplane explain` places every replica where `modelplane render` places it: for every
shipped example, and for fleets of Existing clusters and EKS clusters whose pools grow from
minNodeCount to maxNodeCount (issue #40, point 1)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from modelplane.explain import load_manifests
from tests.explain_fleets import deployment, documents, eks, existing, explained, rendered
from tests.properties import examples

EXAMPLES = sorted(p for p in (Path(__file__).resolve().parents[1] / "examples").iterdir())


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_explain_places_as_render_does_in_every_example(example: Path) -> None:
    docs = load_manifests([str(example)])
    assert explained(docs) == rendered(docs)


@st.composite
def fleets(draw: st.DrawFn) -> list[dict[str, Any]]:
    """One or two Existing clusters (with or without a cache class), one or two EKS clusters
    whose pool grows, and one to three deployments, cached or not."""
    objs = [
        existing(f"onprem-{i}", draw(st.integers(0, 4)), draw(st.sampled_from(["efs", None])))
        for i in range(draw(st.integers(1, 2)))
    ]
    for i in range(draw(st.integers(1, 2))):
        low = draw(st.integers(0, 2))
        objs.append(eks(f"eks-{i}", low, draw(st.integers(max(low, 1), 4))))
    for name in draw(st.lists(st.sampled_from("abc"), min_size=1, max_size=3, unique=True)):
        objs.append(
            deployment(
                name,
                draw(st.integers(1, 6)),
                draw(st.sampled_from([1, 2, 4, 8])),
                draw(st.booleans()),
            )
        )
    return documents(*objs)


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(docs=fleets())
def test_explain_places_as_render_does_with_managed_pools(docs: list[dict[str, Any]]) -> None:
    assert explained(docs) == rendered(docs)
