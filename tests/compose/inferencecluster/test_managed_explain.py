"""The scheduler's reason behind `modelplane explain` when a managed cluster is still
provisioning: it reads the StackReady the composition writes while the cloud builds it."""

from __future__ import annotations

from pathlib import Path

import yaml

from modelplane.compose.inferencecluster.composer import CLASSES, compose_cluster
from modelplane.composer import Inputs
from modelplane.kube.admission import Admission
from modelplane.scheduling.scheduler import schedule

PUBLIC = Path(__file__).parent / "public" / "qwen3-8b"
ROOT = Path(__file__).resolve().parents[3]


def _admitted(path: Path) -> dict:
    admission = Admission.from_paths(sorted((ROOT / "apis").glob("*/definition.yaml")))
    return admission.admit(yaml.safe_load(path.read_text())).object


def test_a_cluster_being_provisioned_takes_no_replica_yet() -> None:
    cluster = _admitted(PUBLIC / "inference-cluster.yaml")
    inference_class = _admitted(PUBLIC / "inference-class.yaml")
    # The first reconcile: nothing observed yet, the cloud is building the cluster.
    result = compose_cluster(
        Inputs(composite=cluster, required={CLASSES: [inference_class]}, observed={})
    )
    cluster["status"] = {
        **result.status,
        "conditions": [
            {"type": c.type, "status": c.status, "reason": c.reason, "message": c.message}
            for c in result.conditions
        ],
    }
    # explain renders its input as render does (clusters simulated ready): the reason is the
    # scheduler's, read from the StackReady the composition wrote.
    deployment = _admitted(PUBLIC / "model-deployment.yaml")
    plan = schedule(deployment, [cluster], [inference_class], [])
    assert plan.scheduled == 0
    assert "the EKS cluster is still provisioning" in " ".join(plan.shortfall)
