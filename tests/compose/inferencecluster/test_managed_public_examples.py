"""The public Modelplane's example manifests with EKS, GKE and AKS clusters, unchanged, place
here as its scheduler places them: render provisions each cluster (simulated), installs its
stack, and the scheduler puts every replica on the pool the public scheduler picks (spread
across clusters, ties broken by cluster name)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from modelplane import cli

PUBLIC = Path(__file__).parent / "public"

# (example, files, exit code, every ModelReplica's (deployment, cluster, pool)).
SCENARIOS = [
    (
        "collecting-engine-metrics",
        ["inference-class.yaml", "inference-cluster.yaml", "model-deployment.yaml"],
        0,
        [("qwen2-5-0-5b", "gke-l4-single", "gpu-l4")],
    ),
    (
        "glm-4.5-air",
        ["inference-class.yaml", "inference-cluster.yaml", "model-deployment.yaml"],
        0,
        [("glm-air", "gke-a100", "gpu-a100")],
    ),
    (
        "kimi-k2",
        [
            "inference-class.yaml",
            "inference-cluster.yaml",
            "model-cache.yaml",
            "model-deployment.yaml",
        ],
        0,
        [("kimi-k2", "eks-kimi", "gpu-h200")],
    ),
    (
        "llama-3.1-8b",
        [
            "inference-class-eks.yaml",
            "inference-class-gke.yaml",
            "inference-cluster-eks.yaml",
            "inference-cluster-gke.yaml",
            "model-deployment.yaml",
        ],
        0,
        [("llama-3-1-8b", "eks-l4-single", "gpu-l4")],
    ),
    (
        # Without the Nebius half of the example (refused here), the one A100 takes one of the
        # two replicas, as the public scheduler places them with only the AKS platform applied.
        "qwen2.5-72b",
        [
            "inference-class-aks.yaml",
            "inference-cluster-aks.yaml",
            "model-cache.yaml",
            "model-deployment.yaml",
        ],
        3,
        [("qwen-72b", "aks-a100-single", "gpua100")],
    ),
    (
        "qwen3-8b",
        ["inference-class.yaml", "inference-cluster.yaml", "model-deployment.yaml"],
        0,
        [("qwen3-8b", "eks-l4", "gpu-l4")],
    ),
    (
        "qwen3-coder",
        [
            "inference-class.yaml",
            "inference-cluster.yaml",
            "model-cache.yaml",
            "model-deployment.yaml",
        ],
        0,
        [("qwen3-coder", "eks-coder", "gpu-h200")],
    ),
    (
        "qwen3-coder",
        ["inference-class-fp8.yaml", "inference-cluster.yaml", "model-deployment-fp8.yaml"],
        0,
        [("qwen3-coder-sgl", "eks-coder", "gpu-h200")],
    ),
]


def _placed(docs: list[dict]) -> list[tuple[str, str, str]]:
    return sorted(
        (d["metadata"]["labels"]["modelplane.ai/deployment"], d["spec"]["clusterName"], pool)
        for d in docs
        if d and d["kind"] == "ModelReplica"
        for pool in sorted({m["nodePoolName"] for e in d["spec"]["engines"] for m in e["members"]})
    )


@pytest.mark.parametrize(
    ("example", "files", "exit_code", "placed"),
    SCENARIOS,
    ids=[f"{s[0]}-{s[1][-1]}" for s in SCENARIOS],
)
def test_the_public_examples_place_as_the_public_scheduler_places_them(
    example: str, files: list[str], exit_code: int, placed: list[tuple[str, str, str]]
) -> None:
    paths = [str(PUBLIC / example / f) for f in files]
    out = CliRunner().invoke(cli.main, ["render", *paths])
    assert out.exit_code == exit_code, out.output
    assert _placed(list(yaml.safe_load_all(out.stdout))) == placed


@pytest.mark.parametrize(
    "cluster",
    sorted(PUBLIC.glob("*/inference-cluster*.yaml")),
    ids=lambda p: f"{p.parent.name}/{p.name}",
)
def test_each_public_cluster_is_provisioned_and_ready_in_render(cluster: Path) -> None:
    # The class of the cluster's own cloud (inference-cluster-gke.yaml: inference-class-gke.yaml):
    # a pool naming a class not given is a typo render exits 1 for.
    classes = [cluster.parent / cluster.name.replace("inference-cluster", "inference-class")]
    out = CliRunner().invoke(cli.main, ["render", str(cluster), *map(str, classes)])
    assert out.exit_code == 0, out.output
    [ic] = [d for d in yaml.safe_load_all(out.stdout) if d and d["kind"] == "InferenceCluster"]
    conditions = {c["type"]: (c["status"], c["reason"]) for c in ic["status"]["conditions"]}
    assert conditions["SourceSupported"] == ("True", "Managed")
    assert conditions["StackReady"] == ("True", "Installed")
