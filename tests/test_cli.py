"""The `modelplane` command line as a pipeline sees it: exit codes, one error format, --version,
and commands that start without loading what only `serve` needs."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner, Result

from modelplane import exits
from modelplane.cli import main

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
SEED = EXAMPLES / "replica-seed"
ERROR_LINE = re.compile(r"^modelplane (render|validate|explain|serve): \S+:\d+: \S.*$")


def invoke(*args: str | Path, stdin: str | bytes | None = None) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args], input=stdin)


def short_fleet(tmp_path: Path) -> Path:
    """fleet-gang with its big pool cut to 2 nodes: the 4-node gang fits nowhere."""
    fleet = (EXAMPLES / "fleet-gang" / "fleet.yaml").read_text()
    (tmp_path / "fleet.yaml").write_text(fleet.replace("nodeCount: 4", "nodeCount: 2"))
    (tmp_path / "md.yaml").write_text((EXAMPLES / "fleet-gang" / "deployment.yaml").read_text())
    return tmp_path


def invalid_replica(tmp_path: Path) -> Path:
    replica = yaml.safe_load((SEED / "replica.yaml").read_text())
    replica["spec"]["engines"][0]["members"][0]["role"] = "Boss"
    path = tmp_path / "replica.yaml"
    path.write_text(yaml.safe_dump(replica))
    return path


def unreadable(tmp_path: Path) -> Path:
    path = tmp_path / "broken.yaml"
    path.write_text("apiVersion: v1\nkind: [unclosed\n")
    return path


# --- exit codes -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["render", EXAMPLES / "fleet-two-classes"], exits.OK),
        (["render", "{invalid}", SEED / "cluster.yaml", SEED / "classes.yaml"], exits.INVALID),
        (["render", "{unreadable}"], exits.UNREADABLE),
        (["render", "{missing}"], exits.UNREADABLE),
        (["render", "--output", "xml", SEED], exits.UNREADABLE),
        (["render", "{short}"], exits.SHORT),
        (["validate", SEED / "replica.yaml"], exits.OK),
        (["validate", "{invalid}"], exits.INVALID),
        (["validate", "{unreadable}"], exits.UNREADABLE),
        (["validate", "{missing}"], exits.UNREADABLE),
        (["validate", "--bogus", SEED], exits.UNREADABLE),
        (["explain", EXAMPLES / "fleet-gang"], exits.OK),
        (["explain", SEED / "cluster.yaml"], exits.INVALID),
        (["explain", "{unreadable}"], exits.UNREADABLE),
        (["explain", "{missing}"], exits.UNREADABLE),
        (["explain", "-o", "yaml", EXAMPLES / "fleet-gang"], exits.UNREADABLE),
        (["explain", "{short}"], exits.SHORT),
        (["serve", "--bogus"], exits.UNREADABLE),
        (["usage", "--all", "--prometheus", "http://127.0.0.1:1"], exits.UNREADABLE),
        (["usage", "--all", "--window", "an hour", "--prometheus", "http://x"], exits.UNREADABLE),
        ([], exits.UNREADABLE),
        (["no-such-command"], exits.UNREADABLE),
    ],
    ids=lambda v: " ".join(map(str, v)) if isinstance(v, list) else str(v),
)
def test_every_command_exits_with_the_shared_codes(
    tmp_path: Path, args: list[str | Path], code: int
) -> None:
    (tmp_path / "short").mkdir()
    fill = {
        "{invalid}": invalid_replica(tmp_path),
        "{unreadable}": unreadable(tmp_path),
        "{missing}": tmp_path / "missing.yaml",
        "{short}": short_fleet(tmp_path / "short"),
    }
    result = invoke(*[fill.get(str(a), a) for a in args])
    assert result.exit_code == code, result.output


def test_the_exit_codes_are_documented_in_every_help() -> None:
    for command in ([], ["render"], ["validate"], ["explain"], ["serve"], ["usage"]):
        out = invoke(*command, "--help").output
        assert "Exit codes (the same for every command):" in out, command
        assert "3  rendered, but a ModelDeployment could not place every replica" in out


def test_the_readme_states_the_same_exit_codes() -> None:
    readme = (ROOT / "README.md").read_text()
    for code, meaning in (
        (0, "success"),
        (1, "input invalid, or a composition failed"),
        (2, "input unreadable, or a usage error"),
        (3, "could not place every replica"),
    ):
        assert re.search(rf"\| `{code}` \|[^\n]*{re.escape(meaning)}", readme), code


# --- one error format -----------------------------------------------------------------------


@pytest.mark.parametrize("command", ["render", "validate", "explain"])
def test_errors_name_the_command_the_file_and_the_line(tmp_path: Path, command: str) -> None:
    path = unreadable(tmp_path)
    result = invoke(command, path)
    assert result.stderr == (
        f"modelplane {command}: {path}:3: not valid YAML: did not find expected ',' or ']' "
        "(while parsing a flow sequence at line 2)\n"
    )
    assert ERROR_LINE.match(result.stderr.strip())


@pytest.mark.parametrize("command", ["render", "validate", "explain"])
def test_a_missing_path_is_the_same_error_in_every_command(tmp_path: Path, command: str) -> None:
    result = invoke(command, tmp_path / "missing.yaml")
    assert (
        result.stderr
        == f"modelplane {command}: {tmp_path}/missing.yaml: no such file or directory\n"
    )


def test_a_shortfall_in_render_names_the_deployment_where_it_is_written(tmp_path: Path) -> None:
    fleet = short_fleet(tmp_path)
    result = invoke("render", fleet)
    assert result.exit_code == exits.SHORT
    [line] = result.stderr.splitlines()
    assert line.startswith(
        f"modelplane render: {fleet}/md.yaml:1: ModelDeployment/ml-team/deepseek-r1: "
        "0 of 1 replicas placed"
    )
    assert ERROR_LINE.match(line)


# --- version and start-up -------------------------------------------------------------------


def test_version_names_the_package_and_the_model_replica_api_it_serves() -> None:
    result = invoke("--version")
    assert result.exit_code == 0
    assert result.output == "modelplane 0.1.0 (serves ModelReplica modelplane.ai/v1alpha1)\n"


def test_serve_keeps_the_sdk_options_though_they_load_only_when_it_runs() -> None:
    out = invoke("serve", "--help").output
    assert "--tls-server-certs-dir" in out and "--insecure" in out and "--address" in out


LOADED = """
import sys
from modelplane.cli import main
try:
    main({args!r})
except SystemExit:
    pass
heavy = sorted({{m.split(".")[0] for m in sys.modules}} & {{"grpc", "crossplane"}})
print("LOADED", ",".join(heavy), file=sys.stderr)
"""


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["validate", "--help"],
        ["validate", str(SEED / "replica.yaml")],
    ],
    ids=" ".join,
)
# explain renders its input as render does (one scheduling path), so it loads what render does.
def test_commands_other_than_serve_render_and_explain_never_load_grpc_or_the_sdk(
    args: list[str],
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", LOADED.format(args=args)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stderr.splitlines()[-1] == "LOADED "
