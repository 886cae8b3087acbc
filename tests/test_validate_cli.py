"""`modelplane validate`: exit codes, error lines, stdin, directories, --crd and --output."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from modelplane.cli import main
from tests.kube.crds import thing_crd
from tests.kube.modelreplicas import engine, member, replica

ROOT = Path(__file__).resolve().parents[1]
# The API reference's example, verbatim.
EXAMPLE = ROOT / "examples" / "replica-seed" / "replica.yaml"
CRDS = ROOT / "tests" / "upstream" / "crds"


def invoke(*args: str, stdin: str | None = None):
    return CliRunner().invoke(main, ["validate", *args], input=stdin)


def write(tmp_path: Path, name: str, *docs: object) -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump_all(docs))
    return path


def test_a_valid_replica_exits_zero() -> None:
    result = invoke(str(EXAMPLE))
    assert result.exit_code == 0, result.output
    assert "1 checked, 0 invalid" in result.stderr


def test_an_invalid_replica_prints_one_line_per_error_and_exits_one(tmp_path: Path) -> None:
    bad = replica([engine(members=[member(devices=False)])])
    path = write(tmp_path, "bad.yaml", bad)
    result = invoke(str(path))
    assert result.exit_code == 1
    # The line is the field's: spec.engines[0] starts on line 9 of the dumped file.
    assert path.read_text().splitlines()[8].strip() == "- members:"
    assert result.stdout.splitlines() == [
        f'{path}:9: ModelReplica/ml-team/qwen-0: spec.engines[0]: Invalid value: "object": '
        "at least one member of an engine must carry deviceRequests"
    ]


def test_every_document_of_a_stream_is_checked(tmp_path: Path) -> None:
    good = replica()
    bad = replica([engine(phase="Prefill")])
    bad["metadata"]["name"] = "bad"
    path = write(tmp_path, "many.yaml", good, bad)
    result = invoke(str(path))
    assert result.exit_code == 1
    assert "2 checked, 1 invalid" in result.stderr
    assert [line.split(": ")[1] for line in result.stdout.splitlines()] == [
        "ModelReplica/ml-team/bad"
    ]


def test_stdin_is_read_with_dash() -> None:
    result = invoke("-", stdin=EXAMPLE.read_text())
    assert result.exit_code == 0


def test_directories_are_walked(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    write(tmp_path / "sub", "a.yaml", replica())
    write(tmp_path, "b.yml", replica())
    result = invoke(str(tmp_path))
    assert result.exit_code == 0
    assert "2 checked" in result.stderr


def test_unknown_kinds_are_skipped_and_counted(tmp_path: Path) -> None:
    path = write(tmp_path, "cm.yaml", {"apiVersion": "v1", "kind": "ConfigMap"}, replica())
    result = invoke(str(path))
    assert result.exit_code == 0
    assert "1 skipped" in result.stderr


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "no such file or directory"),
        ("a: [unclosed", "not valid YAML"),
        ("- just\n- a list\n", "is not a Kubernetes object"),
    ],
)
def test_unreadable_input_exits_two_with_a_clear_message(
    tmp_path: Path, content: str | None, message: str
) -> None:
    path = tmp_path / "in.yaml"
    if content is not None:
        path.write_text(content)
    result = invoke(str(path))
    assert result.exit_code == 2
    assert message in result.stderr
    assert "Traceback" not in result.output


def test_output_defaulted_prints_the_defaulted_objects() -> None:
    result = invoke("-o", "defaulted", str(EXAMPLE))
    assert result.exit_code == 0
    [obj] = list(yaml.safe_load_all(result.stdout))
    assert obj["spec"]["engines"][0]["copies"] == 1


def test_crd_adds_definitions(tmp_path: Path) -> None:
    pool = {
        "apiVersion": "inference.networking.k8s.io/v1",
        "kind": "InferencePool",
        "metadata": {"name": "p", "namespace": "n"},
        "spec": {
            "selector": {"matchLabels": {"app": "x"}},
            "targetPorts": [{"number": 8000}, {"number": 8000}],
            "endpointPickerRef": {"name": "epp", "port": {"number": 9002}},
        },
    }
    path = write(tmp_path, "pool.yaml", pool)
    without = invoke(str(path))
    assert without.exit_code == 1
    assert "skipped: InferencePool inference.networking.k8s.io/v1" in without.stderr
    result = invoke(
        "--crd", str(CRDS / "inference.networking.k8s.io_inferencepools.yaml"), str(path)
    )
    assert result.exit_code == 1
    assert "spec.targetPorts" in result.stdout


def test_a_crd_whose_rule_does_not_compile_is_a_load_error(tmp_path: Path) -> None:
    crd = thing_crd({"type": "object", "x-kubernetes-validations": [{"rule": "self.size( > 1"}]})
    path = write(tmp_path, "crd.yaml", crd)
    result = invoke("--crd", str(path), str(EXAMPLE))
    assert result.exit_code == 2
    assert "x-kubernetes-validations[0]" in result.stderr
    assert "Syntax error" in result.stderr


def test_an_unserved_version_of_a_known_kind_is_invalid(tmp_path: Path) -> None:
    obj = replica()
    obj["apiVersion"] = "modelplane.ai/v9"
    path = write(tmp_path, "v9.yaml", obj)
    result = invoke(str(path))
    assert result.exit_code == 1
    assert result.stdout.strip() == (
        f'{path}:1: ModelReplica/ml-team/qwen-0: apiVersion: Invalid value: "modelplane.ai/v9": '
        'no matches for kind "ModelReplica" in version "modelplane.ai/v9" '
        "(served: modelplane.ai/v1alpha1)"
    )


def test_a_duplicate_key_is_unreadable_input(tmp_path: Path) -> None:
    path = tmp_path / "dup.yaml"
    path.write_text("apiVersion: v1\nkind: ConfigMap\nkind: Secret\n")
    result = invoke(str(path))
    assert result.exit_code == 2
    assert 'mapping key "kind" already defined' in result.stderr


def test_timestamps_stay_strings_as_kubectl_sends_them(tmp_path: Path) -> None:
    text = yaml.safe_dump(replica()) + (
        "status:\n  conditions:\n  - type: Ready\n    status: 'True'\n    reason: Available\n"
        "    lastTransitionTime: 2026-01-01T00:00:00Z\n"
    )
    path = tmp_path / "xr.yaml"
    path.write_text(text)
    result = invoke(str(path))
    assert result.exit_code == 0, result.output


def test_json_manifests_in_directories_are_read(tmp_path: Path) -> None:
    import json

    (tmp_path / "r.json").write_text(json.dumps(replica()))
    result = invoke(str(tmp_path))
    assert result.exit_code == 0
    assert "1 checked" in result.stderr


def test_hidden_directories_are_not_walked(tmp_path: Path) -> None:
    (tmp_path / ".venv").mkdir()
    (tmp_path / ".venv" / "junk.json").write_text("{not yaml")
    write(tmp_path, "r.yaml", replica())
    result = invoke(str(tmp_path))
    assert result.exit_code == 0, result.stderr


def test_input_with_no_object_of_a_known_kind_exits_one_saying_so(tmp_path: Path) -> None:
    path = write(tmp_path, "cm.yaml", {"apiVersion": "v1", "kind": "ConfigMap"})
    result = invoke(str(path))
    assert result.exit_code == 1
    assert result.stderr == (
        "modelplane validate: nothing to validate: none of the 1 object in the input has a "
        "kind defined in apis/ or by --crd (skipped: ConfigMap v1)\n"
    )


def test_an_empty_file_exits_one_saying_it_holds_no_objects(tmp_path: Path) -> None:
    path = tmp_path / "empty.yaml"
    path.write_text("# nothing yet\n---\n")
    result = invoke(str(path))
    assert result.exit_code == 1
    assert result.stderr == "modelplane validate: nothing to validate: the input holds no objects\n"


def test_each_document_of_a_stream_is_named_by_the_line_it_starts_on(tmp_path: Path) -> None:
    good = yaml.safe_dump(replica())
    bad = replica([engine(members=[member(devices=False)])])
    bad["metadata"]["name"] = "bad"
    path = tmp_path / "two.yaml"
    path.write_text(good + "---\n" + yaml.safe_dump(bad))
    result = invoke(str(path))
    second = len(good.splitlines()) + 2
    [line] = result.stdout.splitlines()
    assert line.startswith(f"{path}:{second + 8}: ModelReplica/ml-team/bad: spec.engines[0]: ")
