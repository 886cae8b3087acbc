"""Exit codes say what the user must do, for every kind (README, "Exit codes"): a name that
points at nothing or a selector that selects nothing is input to fix (1), a deployment that does
not fit is capacity to add (3), and a capacity shortfall stays 3 when, as its consequence, a
ModelService entry selects nothing. Each case is a shipped example with one edit."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from modelplane import cli, exits
from tests.edited import EXAMPLES, edited_example

CANARY = "service-canary"


def invoke(*args: str | Path) -> tuple[int, str]:
    out = CliRunner().invoke(cli.main, [str(a) for a in args])
    return out.exit_code, out.stderr


def only_entry_misspelled(tmp_path: Path) -> Path:
    root = edited_example(
        tmp_path, CANARY, "service.yaml", "deployment: qwen-stable", "deployment: qwen-stabel"
    )
    service = (root / "service.yaml").read_text()
    # Drop the canary entry: the misspelled one is now the service's only entry.
    head, _, _ = service.partition("  - weight: 10\n")
    (root / "service.yaml").write_text(head)
    return root


@pytest.mark.parametrize("command", ["render", "routes"])
def test_a_service_whose_only_entry_is_misspelled_exits_one(tmp_path: Path, command: str) -> None:
    code, err = invoke(command, only_entry_misspelled(tmp_path))
    assert code == exits.INVALID, err
    assert "ModelService/ml-team/qwen: " in err
    assert "entry 0 (weight 90, modelplane.ai/deployment=qwen-stabel)" in err
    assert "nothing serves the service" in err


@pytest.mark.parametrize("command", ["render", "routes", "explain"])
def test_a_pool_naming_no_class_exits_one(tmp_path: Path, command: str) -> None:
    root = edited_example(
        tmp_path,
        CANARY,
        "clusters.yaml",
        "className: h100, nodeCount: 2",
        "className: h100s, nodeCount: 2",
    )
    code, err = invoke(command, root)
    assert code == exits.INVALID, err
    assert "InferenceCluster/us-east: pool h100 names InferenceClass h100s" in err


@pytest.mark.parametrize("command", ["render", "routes"])
def test_a_gateway_naming_no_cluster_exits_one(tmp_path: Path, command: str) -> None:
    root = edited_example(
        tmp_path, CANARY, "gateway.yaml", "clusterName: edge", "clusterName: egde"
    )
    code, err = invoke(command, root)
    assert code == exits.INVALID, err
    assert f"{root}/gateway.yaml:" in err
    assert "InferenceGateway/main: InferenceCluster egde does not exist" in err


def test_a_deployment_naming_no_cache_exits_one(tmp_path: Path) -> None:
    root = edited_example(
        tmp_path,
        CANARY,
        "deployments.yaml",
        "      clusterSelector:",
        "      modelCacheRef: {name: no-such-cache}\n      clusterSelector:",
        count=1,
    )
    code, err = invoke("render", root)
    assert code == exits.INVALID, err
    assert "ModelCache no-such-cache not found in namespace ml-team" in err


def test_an_endpoint_naming_no_cluster_exits_one(tmp_path: Path) -> None:
    root = tmp_path / "service-overflow"
    shutil.copytree(EXAMPLES / "service-overflow", root)
    (root / "lost.yaml").write_text(
        "apiVersion: modelplane.ai/v1alpha1\nkind: ModelEndpoint\nmetadata:\n"
        "  name: lost\n  namespace: ml-team\nspec:\n  url: http://lost.example:8000\n"
        "  clusterName: nowhere\n  inferencePool: lost\n"
    )
    code, err = invoke("render", root)
    assert code == exits.INVALID, err
    assert f"{root}/lost.yaml:1: ModelEndpoint/ml-team/lost: InferenceCluster nowhere" in err


def starved_canary(tmp_path: Path) -> Path:
    """service-canary with the canary asking 9 GPUs a node where nodes carry 8."""
    root = tmp_path / CANARY
    shutil.copytree(EXAMPLES / CANARY, root)
    path = root / "deployments.yaml"
    text = path.read_text()
    at = text.index("name: qwen-canary")
    path.write_text(text[:at] + text[at:].replace("count: 1", "count: 9", 1))
    return root


@pytest.mark.parametrize("command", ["render", "routes", "explain"])
def test_a_shortfall_that_empties_a_canary_entry_exits_three(tmp_path: Path, command: str) -> None:
    code, err = invoke(command, starved_canary(tmp_path))
    assert code == exits.SHORT, err
    if command != "explain":  # explain prints its verdict on stdout
        assert "ModelDeployment/ml-team/qwen-canary: 0 of 1 replicas placed" in err


@pytest.mark.parametrize("command", ["render", "routes", "explain"])
def test_the_shipped_canary_exits_zero(command: str) -> None:
    code, err = invoke(command, EXAMPLES / CANARY)
    assert code == exits.OK, err
