"""Property: `modelplane render` prints byte-identical output whatever order its inputs come in:
the manifests (the environment required resources are answered from, and the composites to
render) and the observed resources, over every example."""

from __future__ import annotations

import functools
import random
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from modelplane import manifests
from modelplane.compose.registry import default_registry
from modelplane.render import api_server_admission, render_documents
from modelplane.simulate import simulate_observed
from tests.properties import examples

Obj = dict[str, Any]
EXAMPLES = sorted(p for p in (Path(__file__).resolve().parents[1] / "examples").iterdir())


@functools.cache
def example(path: Path) -> list[Obj]:
    return [m.obj for m in manifests.load([str(path)])]


@functools.cache
def admit() -> Any:
    return api_server_admission()


def rendered(docs: list[Obj], ready: int | None, observed: list[Obj]) -> str:
    simulate = None if ready is None else functools.partial(simulate_observed, ready_copies=ready)
    out = render_documents(default_registry(), docs, observed, admit(), simulate)
    return manifests.dump(out)


@functools.cache
def observed_state(path: Path) -> list[Obj]:
    """What a cluster reported for the example once its workloads ran: observed resources to
    supply (composed resources, annotated and labelled with their owner)."""
    simulate = functools.partial(simulate_observed, ready_copies=1)
    docs = render_documents(default_registry(), example(path), (), admit(), simulate)
    return [
        d
        for d in docs
        if d["kind"] == "Object"
        and "crossplane.io/composition-resource-name" in d["metadata"].get("annotations", {})
    ]


@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    path=st.sampled_from(EXAMPLES),
    ready=st.sampled_from([None, 0, 1]),
    supplied=st.booleans(),
    seed=st.integers(0, 2**32),
)
def test_every_example_renders_the_same_in_any_input_order(
    path: Path, ready: int | None, supplied: bool, seed: int
) -> None:
    rng = random.Random(seed)
    docs = list(example(path))
    observed = list(observed_state(path)) if supplied else []
    shuffled_docs, shuffled_observed = docs[:], observed[:]
    rng.shuffle(shuffled_docs)
    rng.shuffle(shuffled_observed)
    assert rendered(shuffled_docs, ready, shuffled_observed) == rendered(docs, ready, observed)
