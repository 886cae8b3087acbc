"""Device names as the API server and the DRA scheduler read them: a deviceClassName that is no
DNS subdomain is refused where it is written (it would be stamped into ResourceClaimTemplates the
API server refuses), and a selector reading a capacity or attribute the class does not declare
says so, listing the names it does declare.

The rule is the API server's: kubernetes pkg/apis/resource/validation/validation.go validates a
request's deviceClassName with ``validateDeviceClassName = corevalidation.ValidateDNS1123Subdomain``
(read in the stored copy of the file; the v1.34 tree was too large to fetch here)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from modelplane import cli
from modelplane.scheduling.devices import device_kinds, undeclared
from tests.edited import edited_example
from tests.fleet.builders import inference_class

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_an_inference_class_naming_an_invalid_device_class_is_refused(tmp_path: Path) -> None:
    root = edited_example(
        tmp_path,
        "fleet-two-classes",
        "classes.yaml",
        "deviceClassName: gpu.nvidia.com",
        "deviceClassName: nvidia.com/gpu",
        1,
    )
    for command in ("validate", "render", "explain"):
        out = CliRunner().invoke(cli.main, [command, str(root)])
        assert out.exit_code == 1, (command, out.output)
        assert 'spec.devices[0].deviceClassName: Invalid value: "nvidia.com/gpu"' in out.output


def test_a_replica_requesting_an_invalid_device_class_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "replica.yaml"
    text = (EXAMPLES / "replica-seed" / "replica.yaml").read_text()
    path.write_text(
        text.replace("deviceClassName: gpu.nvidia.com", "deviceClassName: nvidia.com/gpu")
    )
    out = CliRunner().invoke(cli.main, ["validate", str(path)])
    assert out.exit_code == 1
    assert "deviceRequests[0].deviceClassName: Invalid value" in out.stdout


def test_a_misspelt_capacity_name_is_named_with_the_names_the_class_declares(
    tmp_path: Path,
) -> None:
    root = edited_example(
        tmp_path, "fleet-two-classes", "deployments.yaml", ".memory.compareTo", ".memroy.compareTo"
    )
    out = CliRunner().invoke(cli.main, ["explain", str(root)])
    assert out.exit_code == 3
    assert (
        "the selector reads capacity gpu.nvidia.com/memroy, which no device of the class "
        "declares (it declares capacity gpu.nvidia.com/memory and attributes "
    ) in out.stdout


def test_a_selector_on_declared_names_that_matches_nothing_says_only_that(tmp_path: Path) -> None:
    root = edited_example(
        tmp_path, "fleet-two-classes", "deployments.yaml", 'quantity("79Gi")', 'quantity("790Gi")'
    )
    out = CliRunner().invoke(cli.main, ["explain", str(root)])
    assert "no device of class h100 matches request gpu (selector" in out.stdout
    assert "which no device of the class declares" not in out.stdout


def test_each_cluster_names_the_misspelt_name_once(tmp_path: Path) -> None:
    root = edited_example(
        tmp_path, "fleet-two-classes", "deployments.yaml", ".memory.compareTo", ".memroy.compareTo"
    )
    out = CliRunner().invoke(cli.main, ["explain", str(root), "--deployment", "ml-team/llama-70b"])
    assert out.stdout.count("memroy, which no device") == 2  # eu-west and us-east, a line each


def test_an_undeclared_attribute_is_named_and_a_declared_one_is_not() -> None:
    [kind] = device_kinds(inference_class("h100"))
    assert undeclared(('device.attributes["gpu.nvidia.com"].model == "h100"',), (kind,)) == ""
    found = undeclared(("device.attributes['gpu.nvidia.com'].modle == 'h100'",), (kind,))
    assert found.startswith("the selector reads attributes gpu.nvidia.com/modle, which")
