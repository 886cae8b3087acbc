"""`validate` checks what the docs say it checks, and render refuses what validate refuses: a
selector missing a `)`, a malformed `quantity()` literal, a misspelled kind in our group (with a
did-you-mean; other groups' kinds are skipped, each by name), an unserved version; and a
deployment written without a namespace says which namespace its cache was looked for in."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from modelplane import cli, exits
from tests.edited import EXAMPLES, edited_example

FLEET = "fleet-two-classes"
SELECTOR = 'compareTo(quantity("40Gi")) >= 0'


def invoke(*args: str | Path) -> tuple[int, str]:
    out = CliRunner().invoke(cli.main, [str(a) for a in args])
    return out.exit_code, out.output  # validate's error lines are on stdout, others' on stderr


def test_validate_refuses_a_selector_missing_a_parenthesis(tmp_path: Path) -> None:
    root = edited_example(
        tmp_path, FLEET, "deployments.yaml", SELECTOR, 'compareTo(quantity("40Gi") >= 0'
    )
    code, err = invoke("validate", root)
    assert code == exits.INVALID, err
    assert f"{root}/deployments.yaml:28: ModelDeployment/ml-team/qwen3-8b: " in err
    assert "nodeSelector.devices[0].selectors[0].cel: Invalid value: " in err
    assert "does not compile" in err and "missing ')'" in err
    assert "1 invalid" in err


def test_validate_refuses_a_malformed_quantity_naming_the_field(tmp_path: Path) -> None:
    root = edited_example(
        tmp_path, FLEET, "deployments.yaml", 'quantity("79Gi")', 'quantity("79 GiB")'
    )
    code, err = invoke("validate", root)
    assert code == exits.INVALID, err
    assert f"{root}/deployments.yaml:56: ModelDeployment/ml-team/llama-70b: " in err
    assert "selectors[0].cel: Invalid value: " in err
    assert 'quantity("79 GiB") is not a quantity' in err


@pytest.mark.parametrize("command", ["validate", "render", "routes", "explain"])
def test_a_misspelled_kind_of_our_group_is_an_error_with_a_did_you_mean(
    tmp_path: Path, command: str
) -> None:
    root = edited_example(
        tmp_path, FLEET, "deployments.yaml", "kind: ModelDeployment\n", "kind: ModelDeploymnet\n"
    )
    code, err = invoke(command, root)
    assert code == exits.INVALID, err
    line = (
        f"{root}/deployments.yaml:5: ModelDeploymnet/ml-team/qwen3-8b: kind: Invalid value: "
        '"ModelDeploymnet": not a kind of group modelplane.ai; did you mean "ModelDeployment"?'
    )
    assert line in err


@pytest.mark.parametrize("command", ["validate", "render", "routes", "explain"])
def test_an_unserved_version_is_refused_by_every_command(tmp_path: Path, command: str) -> None:
    root = edited_example(
        tmp_path,
        FLEET,
        "classes.yaml",
        "apiVersion: modelplane.ai/v1alpha1",
        "apiVersion: modelplane.ai/v1beta1",
        count=1,
    )
    code, err = invoke(command, root)
    assert code == exits.INVALID, err
    assert 'no matches for kind "InferenceClass" in version "modelplane.ai/v1beta1"' in err


def test_validate_names_every_skipped_object(tmp_path: Path) -> None:
    root = tmp_path / FLEET
    shutil.copytree(EXAMPLES / FLEET, root)
    (root / "other.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: x}\n---\n"
        "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: b}\n"
    )
    code, err = invoke("validate", root)
    assert code == exits.OK, err
    assert f"{root}/other.yaml:1: ConfigMap/x/a: skipped: kind not defined in apis/" in err
    assert f"{root}/other.yaml:5: Widget/b: skipped: kind not defined in apis/" in err
    assert "2 skipped" in err


def test_a_cache_not_found_says_which_namespace_was_assumed(tmp_path: Path) -> None:
    root = edited_example(tmp_path, FLEET, "deployments.yaml", "  namespace: ml-team\n", "", 1)
    path = root / "deployments.yaml"
    path.write_text(
        path.read_text().replace(
            "      clusterSelector:\n",
            "      modelCacheRef: {name: qwen3-8b}\n      clusterSelector:\n",
            1,
        )
    )
    shutil.copy(EXAMPLES / "replica-cache" / "modelcache.yaml", root)
    code, err = invoke("render", root)
    assert code == exits.INVALID, err
    assert (
        "ModelCache qwen3-8b not found in namespace default (metadata.namespace is not set: "
        "default assumed)"
    ) in err
