"""ModelService admission: the public shape admitted unchanged; the timeout addition checked."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.fleet.xrd import admission, errors, mutated, rule_error

PUBLIC = sorted((Path(__file__).parent / "public").glob("*.yaml"))
SERVICE = {
    "apiVersion": "modelplane.ai/v1alpha1",
    "kind": "ModelService",
    "metadata": {"name": "qwen", "namespace": "ml"},
    "spec": {
        "endpoints": [
            {"weight": 90, "selector": {"matchLabels": {"modelplane.ai/deployment": "stable"}}},
            {"weight": 10, "selector": {"matchLabels": {"modelplane.ai/deployment": "canary"}}},
        ],
        "timeout": "5m",
    },
}


@pytest.mark.parametrize("path", PUBLIC, ids=lambda p: p.name)
def test_the_public_apis_manifests_are_admitted_unchanged_but_for_the_weight_default(
    path: Path,
) -> None:
    doc = yaml.safe_load(path.read_text())
    assert errors("modelservices", doc) == []
    admitted = admission("modelservices").admit(doc).object["spec"]
    assert admitted == {
        "endpoints": [{"weight": 1, **e} for e in doc["spec"]["endpoints"]],
    }


def test_a_weighted_service_with_a_timeout_is_admitted() -> None:
    assert errors("modelservices", SERVICE) == []


@pytest.mark.parametrize("weight", [-1, 1_000_001])
def test_a_weight_is_zero_to_a_million(weight: int) -> None:
    service = mutated(SERVICE, lambda s: s["spec"]["endpoints"][0].update(weight=weight))
    [error] = errors("modelservices", service)
    assert error.startswith("spec.endpoints[0].weight: Invalid value:")


def test_a_service_selects_at_least_one_entry() -> None:
    service = mutated(SERVICE, lambda s: s["spec"].update(endpoints=[]))
    [error] = errors("modelservices", service)
    assert error.startswith("spec.endpoints: Invalid value:")


@pytest.mark.parametrize("timeout", ["5 minutes", "300", "1d", "-5s"])
def test_a_timeout_is_a_gateway_api_duration(timeout: str) -> None:
    service = mutated(SERVICE, lambda s: s["spec"].update(timeout=timeout))
    assert errors("modelservices", service) == [
        rule_error(
            "spec.timeout",
            "timeout must be a Gateway API duration such as 300s, 5m or 1h30m",
            "string",
        )
    ]
