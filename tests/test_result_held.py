"""``Result.held``: the one way a composer that cannot decide keeps what it composed."""

from __future__ import annotations

from modelplane.composer import Condition, Desired, Requirement, Result

READY = {"status": {"conditions": [{"type": "Ready", "status": "True"}]}}
OBSERVED = {
    "b": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "b", "uid": "1"}},
    "a": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, **READY},
}


def test_held_carries_every_observed_resource_forward_ready_as_observed() -> None:
    held = Result.held(OBSERVED)
    assert held.resources == {
        "a": Desired({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}, "True"),
        "b": Desired({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "b"}}, "False"),
    }


def test_held_keeps_what_the_composer_says_of_why() -> None:
    asks = {"classes": Requirement("modelplane.ai/v1alpha1", "InferenceClass")}
    waiting = Condition("Ready", "Unknown", "Waiting", "reading classes")
    held = Result.held(
        OBSERVED, requirements=asks, status={"x": 1}, conditions=[waiting], ready="False"
    )
    assert (held.requirements, held.status, held.conditions, held.ready) == (
        asks,
        {"x": 1},
        [waiting],
        "False",
    )
    assert held.fatal is None


def test_held_requirements_are_its_own_not_the_callers() -> None:
    asks: dict[str, Requirement] = {}
    Result.held(OBSERVED, requirements=asks).requirements["more"] = Requirement("v1", "Secret")
    assert asks == {}
