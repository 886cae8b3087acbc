"""`modelplane explain` says when a managed cluster is still provisioning: the scheduler reads
the StackReady the composition writes while the cloud builds the cluster."""

from __future__ import annotations

from pathlib import Path

import yaml
from click.testing import CliRunner

from modelplane.cli import main
from modelplane.compose.inferencecluster.composer import CLASSES, compose_cluster
from modelplane.composer import Inputs
from modelplane.kube.admission import Admission

PUBLIC = Path(__file__).parent / "public" / "qwen3-8b"
ROOT = Path(__file__).resolve().parents[3]


def _admitted(path: Path) -> dict:
    admission = Admission.from_paths(sorted((ROOT / "apis").glob("*/definition.yaml")))
    return admission.admit(yaml.safe_load(path.read_text())).object


def test_explain_says_a_cluster_being_provisioned_takes_no_replica_yet(tmp_path: Path) -> None:
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
    (tmp_path / "cluster.yaml").write_text(yaml.safe_dump(cluster))
    out = CliRunner().invoke(
        main,
        [
            "explain",
            str(tmp_path / "cluster.yaml"),
            str(PUBLIC / "inference-class.yaml"),
            str(PUBLIC / "model-deployment.yaml"),
        ],
    )
    assert out.exit_code == 3, out.output
    assert "0 of 1" in out.output
    assert "the EKS cluster is still provisioning" in out.output
