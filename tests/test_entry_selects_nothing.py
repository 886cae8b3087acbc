"""A ModelService entry whose selector matches no ModelEndpoint and no ModelReplica (a canary's
misspelled deployment label) is reported, not silently dropped: EndpointsResolved is not True and
names the entry, a Warning result says so, and `routes` and `render` exit 1 naming the file."""

from __future__ import annotations

from pathlib import Path

import yaml
from click.testing import CliRunner

from modelplane import cli
from modelplane.compose.modelservice.composer import endpoints_requirement, replicas_requirement
from tests.compose.modelservice import kit
from tests.compose.through import run
from tests.edited import edited_example

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
TYPO = "qwen-canray"


def misspelled(tmp_path: Path) -> Path:
    """service-canary with the canary entry's deployment label misspelled."""
    return edited_example(
        tmp_path, "service-canary", "service.yaml", "deployment: qwen-canary", f"deployment: {TYPO}"
    )


def test_routes_exits_one_naming_the_file_line_and_the_entry(tmp_path: Path) -> None:
    out = CliRunner().invoke(cli.main, ["routes", str(misspelled(tmp_path))])
    assert out.exit_code == 1
    [line] = out.stderr.splitlines()
    assert line.startswith(f"modelplane routes: {tmp_path}/service-canary/service.yaml:3: ")
    assert "ModelService/ml-team/qwen: " in line
    assert f"entry 1 (weight 10, modelplane.ai/deployment={TYPO})" in line


def test_render_exits_one_with_the_condition_and_a_warning(tmp_path: Path) -> None:
    out = CliRunner().invoke(
        cli.main, ["render", str(misspelled(tmp_path)), "--simulate-ready-copies", "1", "-r"]
    )
    assert out.exit_code == 1
    assert (
        f"modelplane render: {tmp_path}/service-canary/service.yaml:3: ModelService/" in out.stderr
    )
    docs = [d for d in yaml.safe_load_all(out.stdout) if d]
    [service] = [d for d in docs if d["kind"] == "ModelService"]
    conditions = {c["type"]: c for c in service["status"]["conditions"]}
    assert conditions["EndpointsResolved"]["status"] == "False"
    assert conditions["EndpointsResolved"]["reason"] == "EntryMatchesNothing"
    assert conditions["Ready"]["status"] == "False"
    assert any(
        d["kind"] == "Result"
        and d["severity"] == "SEVERITY_WARNING"
        and d.get("reason") == "EntryMatchesNothing"
        for d in docs
    )


def test_the_spelled_canary_routes_and_renders_with_exit_zero() -> None:
    assert CliRunner().invoke(cli.main, ["routes", str(EXAMPLES / "service-canary")]).exit_code == 0
    rendered = CliRunner().invoke(cli.main, ["render", str(EXAMPLES / "service-canary")])
    assert rendered.exit_code == 0, rendered.stderr


def canary_inputs(canary_replicas: list[dict[str, object]]) -> dict[str, object]:
    stable = kit.external_endpoint("stable", labels={"app": "stable"})
    return {
        "inference-gateways": [],
        "inference-clusters": [],
        endpoints_requirement(0): [stable],
        endpoints_requirement(1): [],
        replicas_requirement(0): [],
        replicas_requirement(1): canary_replicas,
    }


SERVICE = kit.service("qwen", "ml", (9, {"app": "stable"}), (1, {"app": "canary"}))


def test_an_entry_selecting_no_endpoint_and_no_replica_is_named_with_a_warning() -> None:
    rsp = run(SERVICE, required=canary_inputs([]))
    status, reason, message = rsp.condition("EndpointsResolved")
    assert (status, reason) == ("False", "EntryMatchesNothing")
    assert "entry 1 (weight 1, app=canary)" in message
    assert [m for s, m in rsp.events if s == "Warning" and "entry 1" in m]
    assert rsp.composite_ready == "READY_FALSE"


def test_an_entry_whose_replicas_do_not_serve_yet_is_not_called_a_typo() -> None:
    replica = {"apiVersion": kit.API, "kind": "ModelReplica", "metadata": {"name": "canary-0"}}
    rsp = run(SERVICE, required=canary_inputs([replica]))
    assert rsp.condition("EndpointsResolved")[1] != "EntryMatchesNothing"
