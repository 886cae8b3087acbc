"""An engine whose parallelism flags disagree with the GPUs its member claims is composed, with
a Warning naming the member, both numbers and what follows (modelreplica/parallelism.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from modelplane.cli import main
from modelplane.compose.modelreplica.parallelism import REASON, parallelism_warnings

from .support import engine, engine_container, leader, replica, run, standalone, worker

Obj = dict[str, Any]
EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def gpus(count: int) -> list[Obj]:
    return [{"name": "gpu", "deviceClassName": "gpu.nvidia.com", "count": count}]


def alone(args: list[str], count: int = 1, **fields: Any) -> Obj:
    container = engine_container(args=args, **fields)
    return replica(engine("main", standalone(containers=[container], devices=gpus(count))))


def gang(args: list[str], per_node: int = 8, workers: int = 3) -> Obj:
    def member(make: Any, **extra: Any) -> Obj:
        return make(containers=[engine_container(args=args)], devices=gpus(per_node), **extra)

    return replica(engine("main", member(leader), member(worker, nodes=workers)))


def warnings(composite: Obj) -> list[str]:
    return parallelism_warnings(composite["spec"]["engines"])


def test_more_ranks_than_claimed_gpus_warns_that_the_engine_will_not_start() -> None:
    [warning] = warnings(alone(["--tensor-parallel-size", "2"], count=1))
    assert warning.startswith("spec.engines[0].members[0]: ")
    assert "parallel size is 2 but its pod claims 1 GPU(s)" in warning
    assert "will not start" in warning


def test_fewer_ranks_than_claimed_gpus_warns_of_idle_gpus() -> None:
    [warning] = warnings(alone(["--tensor-parallel-size=2"], count=4))
    assert "2 claimed GPU(s) stay idle" in warning


def test_matching_parallelism_does_not_warn() -> None:
    assert warnings(alone(["--tensor-parallel-size", "4"], count=4)) == []


def test_tensor_times_pipeline_size_is_what_is_compared() -> None:
    assert warnings(alone(["-tp", "2", "--pipeline-parallel-size", "2"], count=4)) == []
    assert len(warnings(alone(["-tp", "2", "--pipeline-parallel-size", "2"], count=2))) == 1


def test_sglang_flags_inside_a_shell_script_are_read() -> None:
    script = ["sh", "-c", "python3 -m sglang.launch_server --tp 4 --port 8000"]
    assert len(warnings(alone([], count=2, command=script))) == 1


def test_a_gang_is_compared_with_every_node_it_claims() -> None:
    assert warnings(gang(["--tp", "32"])) == []
    found = warnings(gang(["--tp", "16"]))
    assert [w.split(": ")[0] for w in found] == [
        "spec.engines[0].members[0]",
        "spec.engines[0].members[1]",
    ]
    assert "parallel size is 16 but its gang claims 32 GPU(s)" in found[0]


@pytest.mark.parametrize(
    "args",
    [["--tensor-parallel-size", "$(TP)"], ["--tp", "2", "--dp", "2"], ["--model", "x"]],
    ids=["not-a-number", "data-parallel", "no-flag"],
)
def test_what_the_flags_do_not_say_plainly_is_not_checked(args: list[str]) -> None:
    assert warnings(alone(args, count=1)) == []


def test_the_replica_is_composed_with_a_warning_event() -> None:
    result = run(alone(["--tensor-parallel-size", "2"], count=1))
    assert result.fatal is None
    [event] = [e for e in result.events if e.reason == REASON]
    assert event.severity == "Warning"
    assert "will not start" in event.message


def test_validate_prints_the_warning_and_exits_zero(tmp_path: Path) -> None:
    path = tmp_path / "replica.yaml"
    path.write_text(yaml.safe_dump(alone(["--tensor-parallel-size", "2"]), sort_keys=False))
    result = CliRunner().invoke(main, ["validate", str(path)])
    assert result.exit_code == 0, result.output
    assert "parallel size is 2 but its pod claims 1 GPU(s)" in result.stderr
    assert "1 warning" in result.stderr


@pytest.mark.parametrize("example", sorted(p.name for p in EXAMPLES.iterdir() if p.is_dir()))
def test_no_example_claims_other_than_its_engines_parallelism(example: str) -> None:
    for path in sorted((EXAMPLES / example).rglob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if isinstance(doc, dict) and doc.get("kind") == "ModelReplica":
                assert warnings(doc) == [], path


@pytest.mark.parametrize("example", ["fleet-gang", "fleet-prefill-decode"])
def test_the_replicas_a_deployment_example_stamps_claim_its_parallelism(example: str) -> None:
    # -r: the function's warnings are Result documents, printed only when asked.
    result = CliRunner().invoke(main, ["render", str(EXAMPLES / example), "-r"])
    assert result.exit_code == 0, result.output
    assert "tensor-parallel" in result.output or "--tp" in result.output
    assert REASON not in result.output


def test_gpus_are_counted_in_the_device_class_the_clusters_driver_installs() -> None:
    from modelplane.compose.inferencecluster import components
    from modelplane.compose.modelreplica import parallelism

    assert parallelism.DRA_DEVICE_CLASS == components.DRA_DEVICE_CLASS
