"""The fleet examples are valid input and every deployment in them is placed whole."""

from __future__ import annotations

from pathlib import Path

import pytest

from modelplane.compose.modeldeployment.stamp import replica_name, stamp
from modelplane.explain import load_manifests
from modelplane.kube.admission import Admission
from modelplane.scheduling.scheduler import schedule

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("fleet-*"))


@pytest.fixture(scope="module")
def admission() -> Admission:
    return Admission.from_paths(sorted((ROOT / "apis").glob("*/definition.yaml")))


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_every_object_is_admitted(example: Path, admission: Admission) -> None:
    for doc in load_manifests([str(example)]):
        assert [str(e) for e in admission.admit(doc).errors] == [], doc["metadata"]["name"]


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_every_deployment_is_placed_into_replicas_that_pass_the_xrd(
    example: Path, admission: Admission
) -> None:
    docs = [admission.admit(d).object for d in load_manifests([str(example)])]
    kinds = {k: [d for d in docs if d["kind"] == k] for k in {d["kind"] for d in docs}}
    deployments = kinds.get("ModelDeployment", [])
    assert deployments
    for md in deployments:
        plan = schedule(
            md,
            kinds["InferenceCluster"],
            kinds["InferenceClass"],
            kinds.get("ModelReplica", []),
        )
        assert plan.scheduled == plan.desired, plan.shortfall
        for p in plan.placements:
            mr = stamp(md, p, p.existing or replica_name(md, p))
            assert [str(e) for e in admission.admit(mr).errors] == []
