"""ModelService admission of ``spec.modelName``: the name the engines serve, the rewrite target
of model-name routing (docs/design/shared-front-door.md, "Step 2 as built")."""

from __future__ import annotations

import pytest

from tests.fleet.xrd import errors, mutated, rule_error

SERVICE = {
    "apiVersion": "modelplane.ai/v1alpha1",
    "kind": "ModelService",
    "metadata": {"name": "qwen", "namespace": "ml"},
    "spec": {
        "endpoints": [{"selector": {"matchLabels": {"modelplane.ai/deployment": "qwen"}}}],
    },
}
MESSAGE = (
    "modelName must be the name the engines serve: printable ASCII without spaces,"
    " such as Qwen/Qwen3-8B"
)


@pytest.mark.parametrize(
    "name", ["Qwen/Qwen3-8B", "qwen3-32b", "meta-llama/Llama-3.3-70B-Instruct", "ml/qwen:v2"]
)
def test_a_model_name_as_engines_serve_it_is_admitted(name: str) -> None:
    service = mutated(SERVICE, lambda s: s["spec"].update(modelName=name))
    assert errors("modelservices", service) == []


def test_a_service_without_a_model_name_is_admitted() -> None:
    assert errors("modelservices", SERVICE) == []


@pytest.mark.parametrize("name", ["", "Qwen 3", "qwen\t8b", "qwén"])
def test_a_model_name_is_printable_ascii_without_spaces(name: str) -> None:
    service = mutated(SERVICE, lambda s: s["spec"].update(modelName=name))
    assert errors("modelservices", service) == [rule_error("spec.modelName", MESSAGE, "string")]


def test_a_model_name_is_at_most_256_characters() -> None:
    service = mutated(SERVICE, lambda s: s["spec"].update(modelName="m" * 257))
    assert errors("modelservices", service)[0] == (
        "spec.modelName: Too long: may not be more than 256 bytes"
    )
