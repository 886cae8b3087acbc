"""`modelplane explain`: every cluster and pool considered for each deployment, and why."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from modelplane.cli import main
from modelplane.explain import ManifestError, explain, load_manifests

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def run(*paths: str | Path) -> str:
    return explain(load_manifests(str(p) for p in paths))


def test_the_gang_example_takes_the_big_pool_and_says_why_not_the_small_one() -> None:
    out = run(EXAMPLES / "fleet-gang")
    assert out.splitlines()[:4] == [
        "ModelDeployment ml-team/deepseek-r1: 1 of 1 replicas placed",
        "  cluster train-east: taken (replicas 0): hosts replica 0",
        "    pool h100-big: taken: hosts replica 0 engine main",
        "    pool h100-small: rejected: pool h100-small has 2 nodes, engine main needs 4",
    ]


def test_prefill_and_decode_land_on_different_pools() -> None:
    out = run(EXAMPLES / "fleet-prefill-decode")
    assert "    pool l40s: taken: hosts replica 0 engine prefill" in out
    assert "    pool h200: taken: hosts replica 0 engine decode" in out


def test_a_drained_cluster_is_rejected_and_its_replica_moves() -> None:
    out = run(EXAMPLES / "fleet-drained")
    assert (
        "  cluster east: rejected: NoExecute taint modelplane.ai/maintenance not tolerated" in out
    )
    assert "  cluster west: taken (replicas 0): hosts replica 0" in out
    assert "  removing replica 0 (qwen3-8b-east-0-596bddf9) from east: " in out


def test_a_cluster_without_a_fitting_pool_is_named_with_its_reason() -> None:
    out = run(EXAMPLES / "fleet-two-classes")
    assert (
        "  cluster eu-west: not taken: pool l40s: engine main member 0: no device of class l40s "
        "matches request gpu"
    ) in out


def test_deployments_are_explained_in_order_each_charged_for_the_ones_before() -> None:
    out = run(EXAMPLES / "fleet-two-classes")
    first, second = (line for line in out.splitlines() if line.startswith("ModelDeployment"))
    assert first.startswith("ModelDeployment ml-team/llama-70b")
    assert second.startswith("ModelDeployment ml-team/qwen3-8b")


def test_a_shortfall_lists_each_cluster_and_why(tmp_path: Path) -> None:
    fleet = (EXAMPLES / "fleet-gang" / "fleet.yaml").read_text()
    (tmp_path / "fleet.yaml").write_text(fleet.replace("nodeCount: 4", "nodeCount: 2"))
    (tmp_path / "md.yaml").write_text((EXAMPLES / "fleet-gang" / "deployment.yaml").read_text())
    out = run(tmp_path)
    assert "ModelDeployment ml-team/deepseek-r1: 0 of 1 replicas placed" in out
    assert "  short by 1:" in out
    assert "    train-east: " in out


def test_input_without_deployments_says_so() -> None:
    assert run(EXAMPLES / "fleet-gang" / "fleet.yaml") == "no ModelDeployment in the input\n"


def test_unreadable_input_is_an_error_naming_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: [unclosed\n")
    with pytest.raises(ManifestError, match=r"bad\.yaml: not valid YAML"):
        load_manifests([str(bad)])
    with pytest.raises(ManifestError, match="no such file or directory"):
        load_manifests([str(tmp_path / "missing.yaml")])


def test_the_command_prints_the_explanation_and_exits_zero() -> None:
    result = CliRunner().invoke(main, ["explain", str(EXAMPLES / "fleet-gang")])
    assert result.exit_code == 0
    assert result.output.startswith("ModelDeployment ml-team/deepseek-r1: 1 of 1 replicas placed")


def test_the_command_exits_one_on_unreadable_input(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["explain", str(tmp_path / "missing")])
    assert result.exit_code == 1


def test_manifests_can_come_on_standard_input() -> None:
    text = "\n---\n".join(p.read_text() for p in sorted((EXAMPLES / "fleet-gang").glob("*.yaml")))
    result = CliRunner().invoke(main, ["explain", "-"], input=text)
    assert result.exit_code == 0
    assert result.output.startswith("ModelDeployment ml-team/deepseek-r1: 1 of 1 replicas placed")


def test_a_cluster_with_room_that_was_not_needed_is_not_called_rejected(tmp_path: Path) -> None:
    # One replica, two clusters that fit it: the second is simply not needed.
    clusters = (EXAMPLES / "fleet-two-classes" / "clusters.yaml").read_text()
    (tmp_path / "fleet.yaml").write_text(
        clusters.replace("name: eu-west", "name: us-west").replace(
            "className: l40s", "className: h100"
        )
    )
    md = (EXAMPLES / "fleet-two-classes" / "deployments.yaml").read_text().split("\n---\n")[1]
    (tmp_path / "md.yaml").write_text(md)
    out = run(EXAMPLES / "fleet-two-classes" / "classes.yaml", tmp_path)
    assert "  cluster us-west: not needed: can take another replica" in out
    assert "    pool l40s: not needed: has room" in out
    assert "rejected" not in out
