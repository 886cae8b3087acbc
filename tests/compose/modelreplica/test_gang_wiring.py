"""A gang whose engines are never told the leader's address or their rank is composed, with a
Warning naming the member and what it never references (docs/design/workloads.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from modelplane.cli import main
from modelplane.compose.admission import Admission
from modelplane.compose.modelreplica.wiring import REASON

from .support import cluster, engine, engine_container, leader, manifests, replica, run, worker

Obj = dict[str, Any]
EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
SGLANG = ["python3", "-m", "sglang.launch_server"]
WIRED = ["--nnodes", "2", "--dist-init-addr", "$(MODELPLANE_LEADER_ADDRESS):5000"]
WIRED += ["--node-rank", "$(MODELPLANE_RANK)"]


def _gang(leader_args: list[str], worker_args: list[str] | None = None, **fields: Any) -> Obj:
    def member(make: Any, args: list[str]) -> Obj:
        c = engine_container(image="lmsysorg/sglang:v0.5.5", command=SGLANG, args=args, **fields)
        return make(containers=[c])

    args = worker_args if worker_args is not None else leader_args
    return replica(engine("main", member(leader, leader_args), member(worker, args)))


def _warnings(composite: Obj, stack: str = "Standard") -> list[str]:
    result = run(composite, on=cluster(stack=stack))
    assert result.fatal is None, result.fatal
    return [e.message for e in result.events if e.reason == REASON]


def test_a_gang_told_neither_address_nor_rank_warns_for_each_member() -> None:
    warnings = _warnings(_gang(["--nnodes", "2"]))
    assert [w.split(": ")[0] for w in warnings] == [
        "spec.engines[0].members[0]",
        "spec.engines[0].members[1]",
    ]
    assert "$(MODELPLANE_LEADER_ADDRESS) or $(MODELPLANE_RANK)" in warnings[0]


def test_the_warning_is_a_warning_event() -> None:
    result = run(_gang(["--nnodes", "2"]), on=cluster())
    assert {e.severity for e in result.events if e.reason == REASON} == {"Warning"}


def test_a_gang_that_warns_is_composed_all_the_same() -> None:
    assert manifests(run(_gang(["--nnodes", "2"])))["workload-main"]["kind"] == "LeaderWorkerSet"


def test_a_gang_passing_address_and_rank_does_not_warn() -> None:
    assert _warnings(_gang(WIRED)) == []


def test_a_worker_that_dials_the_leader_without_nnodes_needs_no_rank() -> None:
    # Ray: the leader heads the cluster, each worker joins it at the leader's address.
    ray = _gang(["ray start --head"], ["ray start --address=$(MODELPLANE_LEADER_ADDRESS):6379"])
    assert _warnings(ray) == []


def test_a_worker_that_never_dials_the_leader_warns_of_the_address_alone() -> None:
    [warning] = _warnings(_gang(["ray start --head"], ["ray start --block"]))
    assert warning.startswith("spec.engines[0].members[1]: ")
    assert "never reference $(MODELPLANE_LEADER_ADDRESS), " in warning


def test_a_member_passing_nnodes_without_its_rank_warns_of_the_rank_alone() -> None:
    args = ["--nnodes=2", "--dist-init-addr=$(MODELPLANE_LEADER_ADDRESS):5000"]
    warnings = _warnings(_gang(args))
    assert len(warnings) == 2
    assert all("never reference $(MODELPLANE_RANK), " in w for w in warnings)


@pytest.mark.parametrize("ref", ["$MODELPLANE_RANK", "${MODELPLANE_RANK}"])
def test_a_shell_reference_counts(ref: str) -> None:
    script = f"exec python3 -m sglang.launch_server --nnodes 2 --node-rank {ref} "
    script += "--dist-init-addr ${MODELPLANE_LEADER_ADDRESS}:5000"
    gang = replica(
        engine(
            "main",
            leader(containers=[engine_container(command=["sh", "-c", script])]),
            worker(containers=[engine_container(command=["sh", "-c", script])]),
        )
    )
    assert _warnings(gang) == []


def test_a_longer_name_is_not_a_reference() -> None:
    args = ["--nnodes", "2", "--dist-init-addr", "$MODELPLANE_LEADER_ADDRESS_V6:5000"]
    args += ["--node-rank", "$(MODELPLANE_RANK)"]
    assert len(_warnings(_gang(args))) == 2


def test_an_env_variable_defined_from_modelplanes_counts() -> None:
    env = [{"name": "RANK", "value": "$(MODELPLANE_RANK)"}]
    args = ["--nnodes", "2", "--dist-init-addr", "$(MODELPLANE_LEADER_ADDRESS):5000"]
    assert _warnings(_gang([*args, "--node-rank", "$(RANK)"], env=env)) == []


def test_leaderworkersets_own_variables_count_on_the_standard_stack() -> None:
    args = ["--nnodes", "2", "--dist-init-addr", "$(LWS_LEADER_ADDRESS):5000"]
    assert _warnings(_gang([*args, "--node-rank", "$(LWS_WORKER_INDEX)"])) == []


def test_leaderworkersets_own_variables_do_not_count_on_dynamo() -> None:
    # Grove sets no LWS_* variable: the reference stays as written.
    args = ["--nnodes", "2", "--dist-init-addr", "$(LWS_LEADER_ADDRESS):5000"]
    gang = _gang([*args, "--node-rank", "$(LWS_WORKER_INDEX)"])
    assert len(_warnings(gang, stack="Dynamo")) == 2


def test_a_member_without_a_template_is_checked_on_its_partners_containers() -> None:
    gang = _gang(["--nnodes", "2"])
    del gang["spec"]["engines"][0]["members"][0]["template"]
    assert [w.split(": ")[0] for w in _warnings(gang)] == [
        "spec.engines[0].members[0]",
        "spec.engines[0].members[1]",
    ]


def test_a_standalone_engine_never_warns() -> None:
    assert _warnings(replica(engine("main"))) == []


def test_admission_warns_of_a_replica_and_admits_it() -> None:
    admitted = Admission.default().admit(_gang(["--nnodes", "2"]))
    assert admitted.errors == []
    assert [w.split(": ")[0] for w in admitted.warnings] == [
        "spec.engines[0].members[0]",
        "spec.engines[0].members[1]",
    ]


def _fleet_gang_unwired() -> Obj:
    """The fleet-gang example's deployment with its engines told only how many nodes there are."""
    md = yaml.safe_load((EXAMPLES / "fleet-gang" / "deployment.yaml").read_text())
    for member in md["spec"]["template"]["spec"]["engines"][0]["members"]:
        member["template"]["spec"]["containers"][0]["args"] = ["--tp", "32", "--nnodes", "4"]
    return md


def test_admission_warns_of_a_deployment_at_its_templates_path() -> None:
    admitted = Admission.default().admit(_fleet_gang_unwired())
    assert admitted.errors == []
    assert [w.split(": ")[0] for w in admitted.warnings] == [
        "spec.template.spec.engines[0].members[0]",
        "spec.template.spec.engines[0].members[1]",
    ]


def test_validate_prints_each_warning_at_its_members_line_and_exits_zero(tmp_path: Path) -> None:
    path = tmp_path / "md.yaml"
    path.write_text(yaml.safe_dump(_fleet_gang_unwired(), sort_keys=False))
    result = CliRunner().invoke(main, ["validate", str(path)])
    assert result.exit_code == 0, result.output
    lines = path.read_text().splitlines()
    warnings = [w for w in result.stderr.splitlines() if ": Warning: " in w]
    assert len(warnings) == 2
    for warning in warnings:
        line = int(warning.split(":")[1])
        assert lines[line - 1].lstrip().startswith("- role:"), warning
    assert "1 checked, 0 invalid, 2 warnings" in result.stderr
