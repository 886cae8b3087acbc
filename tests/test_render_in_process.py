"""`render` composes in process on plain data; what it prints is what it prints when every call
goes through the FunctionRunner as a RunFunctionRequest (the function Crossplane calls)."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pytest

from modelplane import manifests
from modelplane.compose.registry import default_registry
from modelplane.composer import Desired, Inputs, Registry, Result
from modelplane.render import RenderError, api_server_admission, render_passes
from modelplane.simulate import simulate_observed, simulate_stack
from tests import standin
from tests.fleet.builders import declared_cluster, deployment, engine, inference_class, member

Obj = dict[str, Any]
EXAMPLES = sorted(p for p in (Path(__file__).resolve().parents[1] / "examples").iterdir())
SIMULATIONS = {
    "stack installed": simulate_stack,
    "no workload ready": functools.partial(simulate_observed, ready_copies=0),
    "one copy ready": functools.partial(simulate_observed, ready_copies=1),
}


@functools.cache
def admit() -> Any:
    return api_server_admission()


def both_ways(docs: list[Obj], simulate: Any, observed: list[Obj] = ()) -> tuple[Any, Any]:
    def run(through_function: bool) -> Any:
        return render_passes(
            default_registry(),
            docs,
            observed,
            admit(),
            simulate,
            through_function=through_function,
        )

    return run(False), run(True)


@pytest.mark.parametrize("simulation", sorted(SIMULATIONS))
@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_every_example_renders_the_same_in_process_as_through_the_function(
    path: Path, simulation: str
) -> None:
    docs = [m.obj for m in manifests.load([str(path)])]
    in_process, through_function = both_ways(docs, SIMULATIONS[simulation])
    assert manifests.dump(in_process[0]) == manifests.dump(through_function[0])
    assert in_process[1] == through_function[1]


def test_a_fleet_with_supplied_observed_state_renders_the_same_both_ways() -> None:
    fleet = [inference_class("h100")]
    fleet += [declared_cluster(f"c{i}", [("h100", "h100", 2)]) for i in range(4)]
    fleet += [deployment(f"m{j}", engine("main", member(gpus=2)), replicas=3) for j in range(2)]
    once = render_passes(default_registry(), fleet, (), admit(), simulate_stack)[0]
    observed = [
        d
        for d in once
        if d["kind"] == "Object"
        and "crossplane.io/composition-resource-name" in d["metadata"].get("annotations", {})
    ]
    in_process, through_function = both_ways(fleet, simulate_stack, observed)
    assert in_process == through_function


def test_numbers_in_the_inputs_reach_composers_as_the_function_reads_them() -> None:
    replica = standin.replica()
    replica["spec"]["engines"] = [{"name": "e0", "weight": 2.0}, {"name": "e1", "weight": 0.5}]
    seen: list[Any] = []

    def compose(inputs: Inputs) -> Result:
        seen.append([e["weight"] for e in inputs.composite["spec"]["engines"]])
        return Result()

    registry = Registry()
    registry.register(standin.GROUP_VERSION, "ModelReplica", compose)
    for through_function in (False, True):
        render_passes(registry, [replica], through_function=through_function)
    assert {type(w) for ws in seen for w in ws} == {int, float}
    assert all(ws == [2, 0.5] and type(ws[0]) is int for ws in seen)


def failing(result: Result | Exception) -> Registry:
    def compose(inputs: Inputs) -> Result:
        if isinstance(result, Exception):
            raise result
        return result

    registry = Registry()
    registry.register(standin.GROUP_VERSION, "ModelReplica", compose)
    return registry


@pytest.mark.parametrize(
    ("outcome", "message"),
    [
        (
            KeyError("spec"),
            "composing ModelReplica.modelplane.ai/v1alpha1 failed: KeyError: 'spec'",
        ),
        (
            Result(resources={"bad": Desired({"apiVersion": "v1", "data": {1: "x"}})}),
            "composing ModelReplica.modelplane.ai/v1alpha1 produced an invalid result",
        ),
        (
            Result(resources={"bad": Desired({"apiVersion": "v1", "data": object()})}),
            "composing ModelReplica.modelplane.ai/v1alpha1 produced an invalid result: "
            "cannot encode a object in a protobuf Struct",
        ),
        (Result.failed("the cluster is gone"), "the cluster is gone"),
    ],
    ids=["composer raises", "key not a string", "value not JSON", "fatal result"],
)
def test_a_faulty_composition_is_refused_with_the_functions_message_both_ways(
    outcome: Result | Exception, message: str
) -> None:
    errors = []
    for through_function in (False, True):
        with pytest.raises(RenderError) as refused:
            render_passes(failing(outcome), [standin.replica()], through_function=through_function)
        errors.append(str(refused.value))
    assert message in errors[0]
    assert errors[0].startswith("ModelReplica/")
    assert errors[0].split(": ", 1)[0] == errors[1].split(": ", 1)[0]
    assert message in errors[1]
