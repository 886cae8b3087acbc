"""A namespaced kind written without a namespace is read in the API server's ``default`` one:
every lookup it makes that finds nothing says which namespace it looked in, and that it was
assumed, as a ModelDeployment's cache "not found" does."""

from __future__ import annotations

from pathlib import Path

import yaml
from click.testing import CliRunner

from modelplane import cli
from modelplane.composer import namespace_said
from tests.edited import edited_example

ASSUMED = "default (metadata.namespace is not set: default assumed)"


def render(root: Path, *args: str) -> tuple[int, list[dict], str]:
    out = CliRunner().invoke(cli.main, ["render", str(root), *args])
    return out.exit_code, [d for d in yaml.safe_load_all(out.stdout) if d], out.stderr


def conditions(docs: list[dict], kind: str) -> dict[str, dict]:
    [doc] = [d for d in docs if d["kind"] == kind]
    return {c["type"]: c for c in doc["status"]["conditions"]}


def test_a_named_namespace_is_said_as_it_is() -> None:
    assert namespace_said({"metadata": {"namespace": "ml-team"}}) == "ml-team"


def test_a_missing_namespace_is_said_assumed() -> None:
    assert namespace_said({"metadata": {"name": "x"}}) == ASSUMED


def test_a_service_without_a_namespace_says_where_its_entries_found_nothing(
    tmp_path: Path,
) -> None:
    root = edited_example(tmp_path, "service-canary", "service.yaml", "  namespace: ml-team\n", "")
    code, docs, stderr = render(root, "--simulate-ready-copies", "1")
    assert code == 1
    message = conditions(docs, "ModelService")["EndpointsResolved"]["message"]
    assert message.startswith(f"no ModelEndpoint or ModelReplica in namespace {ASSUMED} matches")
    assert f"in namespace {ASSUMED} matches" in stderr


def test_a_service_in_its_namespace_names_it_alone(tmp_path: Path) -> None:
    root = edited_example(tmp_path, "service-canary", "service.yaml", "qwen-canary}", "qwen-canry}")
    code, _, stderr = render(root, "--simulate-ready-copies", "1")
    assert code == 1
    assert "in namespace ml-team matches" in stderr
    assert "assumed" not in stderr


def test_a_replica_without_a_namespace_says_where_its_cache_was_not_found(
    tmp_path: Path,
) -> None:
    root = edited_example(tmp_path, "replica-cache", "replica.yaml", "  namespace: ml-team\n", "")
    _, docs, _ = render(root, "--simulate-ready-copies", "1")
    serving = conditions(docs, "ModelReplica")["ModelServing"]
    assert serving["reason"] == "WaitingForModelCache"
    assert f"ModelCache 'qwen3-8b' is not available in namespace {ASSUMED}" in serving["message"]
