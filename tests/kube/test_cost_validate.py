"""`modelplane validate` and the CEL cost budget: refused definitions exit 1, --definitions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from modelplane.cli import main
from tests.kube.crds import thing_crd

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "replica-seed" / "replica.yaml"
SHIPPED = sorted(p.parent.name for p in (ROOT / "apis").glob("*/definition.yaml"))


def invoke(*args: str):
    return CliRunner().invoke(main, ["validate", *args])


def over_budget_crd(tmp_path: Path) -> Path:
    """A CRD whose one rule compares every pair of an unbounded list of strings."""
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {
                    "names": {
                        "type": "array",
                        "items": {"type": "string"},
                        "x-kubernetes-validations": [
                            {"rule": "self.all(a, self.exists_one(b, a == b))"}
                        ],
                    }
                },
            }
        },
    }
    path = tmp_path / "crd.yaml"
    path.write_text(yaml.safe_dump(thing_crd(schema)))
    return path


RULE = (
    "spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[names]"
    ".x-kubernetes-validations[0].rule"
)


def test_a_crd_over_the_budget_is_reported_as_the_api_server_refuses_it(tmp_path: Path) -> None:
    result = invoke("--crd", str(over_budget_crd(tmp_path)), str(EXAMPLE))
    assert result.exit_code == 1
    assert (
        f"CustomResourceDefinition/things.example.com: {RULE}: Forbidden: estimated rule cost "
        "exceeds budget by factor of more than 100x"
    ) in result.stdout
    assert "1 definitions over the CEL cost budget" in result.stderr


def test_the_shipped_definitions_are_within_the_budget_when_objects_are_validated() -> None:
    result = invoke(str(EXAMPLE))
    assert result.exit_code == 0, result.output
    assert "CEL cost budget" not in result.stderr


def test_definitions_mode_prints_every_shipped_definitions_total() -> None:
    result = invoke("--definitions")
    assert result.exit_code == 0, result.output
    for plural in SHIPPED:
        assert f"CompositeResourceDefinition/{plural}.modelplane.ai" in result.stdout
    assert result.stdout.count("estimated total") == len(SHIPPED)
    assert f"{len(SHIPPED)} definitions, 0 over the CEL cost budget" in result.stderr


def test_definitions_mode_exits_one_when_a_crd_is_over_the_budget(tmp_path: Path) -> None:
    result = invoke("--definitions", "--crd", str(over_budget_crd(tmp_path)))
    assert result.exit_code == 1
    assert f"{RULE}: Forbidden:" in result.stdout


def test_validate_without_paths_or_definitions_is_a_usage_error() -> None:
    result = invoke()
    assert result.exit_code == 2
    assert "--definitions" in result.output
