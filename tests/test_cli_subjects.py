"""Every command names an object one way, ``Kind/namespace/name`` (as `render -o tree` and
kubectl's ``kind/name`` do), and errors about input start with ``file:line:`` at the line of the
key at fault, even when its value is a block mapping or sequence."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from modelplane import cli, manifests
from tests.edited import edited_example

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def invoke(*args: str) -> tuple[int, str, str]:
    out = CliRunner().invoke(cli.main, list(args))
    return out.exit_code, out.stdout, out.stderr


def short_fleet(tmp_path: Path) -> Path:
    """fleet-two-classes with llama-70b asking for more replicas than the fleet holds."""
    return edited_example(
        tmp_path, "fleet-two-classes", "deployments.yaml", "replicas: 1", "replicas: 40", 1
    )


def test_validate_names_the_object_kind_slash_namespace_slash_name(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    text = (EXAMPLES / "replica-seed" / "replica.yaml").read_text()
    path.write_text(text.replace("count: 1", "count: 0"))
    code, stdout, _ = invoke("validate", str(path))
    assert code == 1
    assert stdout.splitlines()[0].split(": ")[1] == "ModelReplica/ml-team/qwen3-8b-eks-l4-0"


def test_render_names_a_short_deployment_kind_slash_namespace_slash_name(tmp_path: Path) -> None:
    code, _, stderr = invoke("render", str(short_fleet(tmp_path)), "-o", "name")
    assert code == 3
    assert f"{tmp_path}/fleet-two-classes/deployments.yaml:" in stderr
    assert ": ModelDeployment/ml-team/llama-70b: " in stderr


def test_explain_heads_each_deployment_kind_slash_namespace_slash_name() -> None:
    code, stdout, _ = invoke("explain", str(EXAMPLES / "fleet-two-classes"))
    assert code == 0
    assert stdout.splitlines()[0].startswith("ModelDeployment/ml-team/llama-70b: ")


def test_explain_names_a_deployment_it_cannot_find_the_same_way() -> None:
    code, _, stderr = invoke(
        "explain", str(EXAMPLES / "fleet-two-classes"), "--deployment", "ml-team/nope"
    )
    assert code == 1
    assert stderr == "modelplane explain: no ModelDeployment/ml-team/nope in the input\n"


def test_routes_heads_each_service_kind_slash_namespace_slash_name() -> None:
    code, stdout, _ = invoke("routes", str(EXAMPLES / "service-canary"))
    assert code == 0
    assert stdout.splitlines()[0].startswith("ModelService/ml-team/qwen: ")


def test_routes_reports_an_invalid_input_one_line_each_at_its_file_and_line(
    tmp_path: Path,
) -> None:
    root = edited_example(
        tmp_path, "service-canary", "deployments.yaml", "replicas: 2", "replicas: 0", 1
    )
    path = root / "deployments.yaml"
    code, _, stderr = invoke("routes", str(root))
    assert code == 1
    lines = stderr.splitlines()
    assert lines, stderr
    for line in lines:
        assert line.startswith(f"modelplane routes: {path}:"), line
        assert "ModelDeployment/ml-team/qwen-stable: spec.replicas" in line


def test_a_key_whose_value_is_a_block_mapping_is_placed_on_the_key_line() -> None:
    text = "apiVersion: v1\nkind: X\nmetadata:\n  name: x\nspec:\n  template:\n    a: 1\n"
    [m] = manifests.parse(text, "f.yaml")
    assert m.where_is("spec.template") == "f.yaml:6"
    assert m.where_is("spec") == "f.yaml:5"


def test_a_key_whose_value_is_a_block_sequence_is_placed_on_the_key_line() -> None:
    text = "kind: X\nspec:\n  engines:\n  - name: a\n  - name: b\n"
    [m] = manifests.parse(text, "f.yaml")
    assert m.where_is("spec.engines") == "f.yaml:3"
    assert m.where_is("spec.engines[1]") == "f.yaml:5"
    assert m.where_is("spec.engines[1].name") == "f.yaml:5"
