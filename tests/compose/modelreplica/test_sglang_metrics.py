"""An engine container that launches SGLang's server gets ``--enable-metrics`` (SGLang serves
/metrics only with it, and the picker scores SGLang pods on their metrics), right after the
launcher; any other command line is left as written (docs/design/workloads.md)."""

from __future__ import annotations

from typing import Any

import pytest

from modelplane.compose import pods_revision
from modelplane.compose.modelreplica import sglang

from .support import (
    container,
    engine,
    engine_container,
    leader,
    pod_specs,
    replica,
    run,
    standalone,
    worker,
    workload,
)

Obj = dict[str, Any]
IMAGE = "lmsysorg/sglang:v0.5.5"
LAUNCH = ["python3", "-m", "sglang.launch_server"]


def _engine(**fields: Any) -> Obj:
    """The composed engine container of a Standalone with these fields."""
    member = standalone(containers=[engine_container(image=IMAGE, **fields)])
    spec = pod_specs(workload(run(replica(engine("main", member)))))["standalone"]
    return container(spec)


def test_the_flag_follows_the_launcher_in_the_command() -> None:
    got = _engine(command=LAUNCH, args=["--model-path", "m"])
    assert got["command"] == [*LAUNCH, "--enable-metrics"]
    assert got["args"] == ["--model-path", "m"]


def test_the_flag_follows_the_launcher_in_the_args() -> None:
    got = _engine(args=[*LAUNCH, "--model-path", "m"])
    assert got["args"] == [*LAUNCH, "--enable-metrics", "--model-path", "m"]


def test_the_flag_follows_the_launcher_in_a_shell_script() -> None:
    script = "exec python3 -m sglang.launch_server --model-path m && echo done"
    got = _engine(command=["sh", "-c", script])
    assert got["command"][2] == (
        "exec python3 -m sglang.launch_server --enable-metrics --model-path m && echo done"
    )


@pytest.mark.parametrize("flag", ["--enable-metrics", "--enable-metrics --port 8000"])
def test_a_command_line_that_enables_metrics_is_left_as_written(flag: str) -> None:
    script = f"python3 -m sglang.launch_server {flag}"
    assert _engine(command=["sh", "-c", script])["command"] == ["sh", "-c", script]


def test_a_flag_with_a_longer_name_does_not_count_as_the_flag() -> None:
    got = _engine(command=LAUNCH, args=["--enable-metrics-for-all-schedulers"])
    assert got["command"] == [*LAUNCH, "--enable-metrics"]


@pytest.mark.parametrize(
    "command",
    [
        ["vllm", "serve", "m"],
        ["python3", "-m", "sglang_router.launch_server"],
        ["sh", "-c", "/opt/sglang.launch_server.sh"],
    ],
)
def test_a_command_line_that_never_launches_sglangs_server_is_left_as_written(
    command: list[str],
) -> None:
    assert _engine(command=command)["command"] == command


def test_every_member_of_a_gang_gets_the_flag() -> None:
    members = [
        make(containers=[engine_container(image=IMAGE, command=LAUNCH)])
        for make in (leader, worker)
    ]
    specs = pod_specs(workload(run(replica(engine("main", *members)))))
    for role in ("leader", "worker"):
        assert container(specs[role])["command"] == [*LAUNCH, "--enable-metrics"], role


def test_the_input_is_left_as_it_was() -> None:
    given = engine_container(image=IMAGE, command=LAUNCH)
    assert sglang.with_metrics(given)["command"] == [*LAUNCH, "--enable-metrics"]
    assert given["command"] == LAUNCH


def test_the_pods_revision_moves_with_the_flag(monkeypatch: pytest.MonkeyPatch) -> None:
    # A replica its deployment's rollout has not reached keeps its pods: the flag reaches
    # running SGLang engines through the rollout strategy, not all at once.
    before = pods_revision.reference_pods()
    monkeypatch.setattr(sglang, "METRICS_FLAG", "--enable-metrics-for-all-schedulers")
    assert pods_revision.reference_pods() != before
