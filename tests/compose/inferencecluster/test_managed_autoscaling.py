"""How a managed cluster's GPU pools grow and stay grown: what the cluster autoscaler (v1.35.0,
what the cluster-autoscaler chart 9.57.0 deploys on EKS; the Azure provider at the same release)
models a node of a pool at zero from, and how upjet (at 59c45527ebe4, what provider-upjet-aws
and provider-upjet-azure v2.6.0 build on) keeps Crossplane from setting a pool the autoscaler
resized back to its first size. Each rule is read from the upstream source named."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from modelplane import cli
from modelplane.compose.inferencecluster.managed.eks import AUTOSCALER_VERSION
from modelplane.labels import POOL
from tests.compose.inferencecluster.managed import managed, observed_as_ready, provisioned, run

Obj = dict[str, Any]
PUBLIC = Path(__file__).parent / "public"
VALUES = Path(__file__).resolve().parents[2] / "upstream" / "values"
EKS_EFFECTS = {"NO_SCHEDULE": "NoSchedule", "NO_EXECUTE": "NoExecute"}
AZURE_LABEL_TAG = "k8s.io_cluster-autoscaler_node-template_label_"
AZURE_TAINT_TAG = "k8s.io_cluster-autoscaler_node-template_taint_"


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _init_exclusive(for_provider: Obj, init_provider: Obj, prefix: str = "") -> list[str]:
    """upjet pkg/controller/ignored_tfpluginsdk.go getIgnoredFieldsMap: the paths of the fields
    initProvider sets and forProvider does not, in the API's shape (objects, not Terraform's
    singleton lists), joined with dots."""
    out = []
    for key, value in init_provider.items():
        path = f"{prefix}{_snake(key)}"
        if key not in for_provider:
            out.append(path)
        elif isinstance(value, dict):
            out += _init_exclusive(for_provider[key], value, f"{path}.")
    return out


def _diff_dropped(resource: Obj, attribute: str) -> bool:
    """upjet external_tfpluginsdk.go filterInitExclusiveDiffs: a Terraform diff attribute is
    dropped when it is one of those paths or under one (``<path>.``)."""
    spec = resource["spec"]
    ignored = _init_exclusive(spec["forProvider"], spec.get("initProvider") or {})
    return any(attribute == k or attribute.startswith(f"{k}.") for k in ignored)


def _observed_scaled(source: str, key: str, at_provider: Obj, **spec: Any) -> dict[str, Obj]:
    observed = observed_as_ready(provisioned(managed(source, **spec)))
    observed[key]["status"]["atProvider"].update(at_provider)
    return observed


def test_the_rules_here_are_read_at_the_autoscaler_the_pinned_chart_deploys() -> None:
    # A chart bump brings another autoscaler: these rules are to be read again at its tag.
    values = yaml.safe_load((VALUES / f"cluster-autoscaler-{AUTOSCALER_VERSION}.yaml").read_text())
    assert values["image"]["tag"] == "v1.35.0"


def test_a_node_group_the_autoscaler_resized_is_not_set_back_to_its_first_size() -> None:
    # Terraform's diff names the size scaling_config.0.desired_size. upjet at 59c45527ebe4 does
    # not convert the paths it ignores to Terraform's lists (fixed upstream in f6ae634, after
    # it), so only a top-level scalingConfig that forProvider leaves out is ignored.
    ic = managed("EKS")
    observed = _observed_scaled(
        "EKS", "nodegroup-gpua", {"scalingConfig": {"minSize": 1, "maxSize": 6, "desiredSize": 5}}
    )
    group = run(ic, observed).resources["nodegroup-gpua"]
    assert _diff_dropped(group, "scaling_config.0.desired_size")


def test_the_aks_pool_size_the_autoscaler_set_is_not_set_back() -> None:
    ic = managed("AKS")
    observed = _observed_scaled("AKS", "nodepool-gpua", {"nodeCount": 5})
    assert _diff_dropped(run(ic, observed).resources["nodepool-gpua"], "node_count")


def test_new_bounds_reach_a_created_node_group_keeping_the_autoscalers_size() -> None:
    ic = managed("EKS")
    ic["spec"]["nodePools"][0]["maxNodeCount"] = 4
    observed = _observed_scaled(
        "EKS", "nodegroup-gpua", {"scalingConfig": {"minSize": 1, "maxSize": 6, "desiredSize": 5}}
    )
    group = run(ic, observed).resources["nodegroup-gpua"]
    assert group["spec"]["forProvider"]["scalingConfig"] == {
        "minSize": 1,
        "maxSize": 4,
        "desiredSize": 4,
    }


@pytest.mark.parametrize(
    ("counts", "seed"),
    [
        ({"nodeCount": 0, "minNodeCount": 0, "maxNodeCount": 4}, 0),
        ({"nodeCount": 0, "minNodeCount": 1, "maxNodeCount": 4}, 1),
        ({"nodeCount": 5, "minNodeCount": 0, "maxNodeCount": 3}, 3),
    ],
)
@pytest.mark.parametrize("source", ["EKS", "AKS"])
def test_a_pool_is_created_at_its_node_count_within_its_bounds(
    source: str, counts: Obj, seed: int
) -> None:
    # EKS (CreateNodegroup) and AKS (an autoscaled agent pool's count) refuse a size outside
    # the bounds.
    ic = managed(source)
    ic["spec"]["nodePools"][0].update(counts)
    pool = run(ic).resources["nodegroup-gpua" if source == "EKS" else "nodepool-gpua"]
    init = pool["spec"]["initProvider"]
    assert (init["scalingConfig"]["desiredSize"] if source == "EKS" else init["nodeCount"]) == seed


def test_an_aks_pool_at_zero_is_one_azurerm_creates_autoscaled() -> None:
    """hashicorp/terraform-provider-azurerm v4.54.0 (provider-upjet-azure v2.6.0's
    TERRAFORM_PROVIDER_VERSION) internal/services/containers/
    kubernetes_cluster_node_pool_resource.go: with auto_scaling_enabled, create sends
    node_count (min_count when it is 0), min_count 0 is accepted, max_count must be at least
    min_count, and an update refuses max_count 0."""
    ic = managed("AKS")
    ic["spec"]["nodePools"][0].update(nodeCount=0, minNodeCount=0)
    ic["spec"]["nodePools"][0].pop("maxNodeCount")
    pool = run(ic).resources["nodepool-gpua"]
    fp = pool["spec"]["forProvider"]
    assert (fp["autoScalingEnabled"], fp["minCount"], pool["spec"]["initProvider"]) == (
        True,
        0,
        {"nodeCount": 0},
    )
    assert fp["maxCount"] >= max(1, fp["minCount"])


def test_the_eks_autoscaler_may_read_what_a_node_group_at_zero_carries() -> None:
    """cluster-autoscaler-1.35.0 cloudprovider/aws/README.md: eks:DescribeNodegroup lets it pull
    a managed node group's labels and taints; aws_manager.go buildNodeFromTemplate calls it
    for a group whose Auto Scaling group carries eks:cluster-name and eks:nodegroup-name, which
    EKS adds to every managed node group's (proposals/circumvent-tag-limit-aws.md)."""
    policy = provisioned(managed("EKS")).resources["policy-autoscaler"]["spec"]["forProvider"]
    actions = {a for s in yaml.safe_load(policy["policy"])["Statement"] for a in s["Action"]}
    assert {"eks:DescribeNodegroup", "autoscaling:DescribeTags"} <= actions


def _eks_modelled(group: Obj) -> tuple[dict[str, str], list[tuple[str, str, str]]]:
    """cluster-autoscaler-1.35.0 cloudprovider/aws/aws_wrapper.go getManagedNodegroupInfo: the
    labels and taints of a managed node group's modelled node are the group's own
    (DescribeNodegroup), taint effects translated by taintEksTranslator."""
    fp = group["spec"]["forProvider"]
    taints = [(t["key"], t["value"], EKS_EFFECTS[t["effect"]]) for t in fp.get("taint") or []]
    return dict(fp.get("labels") or {}), taints


def _azure_modelled(pool: Obj) -> tuple[dict[str, str], list[tuple[str, str, str]]]:
    """cluster-autoscaler-1.35.0 cloudprovider/azure/azure_scale_set.go TemplateNodeInfo passes
    no labels or taints of its own; azure_template.go processVMSSTemplate takes them from the
    scale set's tags (extractLabelsFromTags, extractTaintsFromTags: "_" is "/", "~2" is "_")."""
    tags = pool["spec"]["forProvider"].get("tags") or {}

    def name(tag: str, prefix: str) -> str:
        return tag[len(prefix) :].replace("_", "/").replace("~2", "_")

    labels = {name(k, AZURE_LABEL_TAG): v for k, v in tags.items() if k.startswith(AZURE_LABEL_TAG)}
    taints = []
    for tag, value in tags.items():
        if tag.startswith(AZURE_TAINT_TAG) and re.fullmatch(r".*:(NoSchedule|NoExecute)", value):
            taint_value, effect = value.split(":", 1)
            taints.append((name(tag, AZURE_TAINT_TAG), taint_value, effect))
    return labels, taints


def _tolerated(taint: tuple[str, str, str], tolerations: list[Obj]) -> bool:
    key, value, effect = taint
    return any(
        (t.get("key") in (None, "", key))
        and (t.get("operator") == "Exists" or t.get("value") == value)
        and t.get("effect") in (None, "", effect)
        for t in tolerations
    )


def _pods(docs: list[Obj]) -> Iterator[Obj]:
    for d in docs:
        if d["kind"] != "Object":
            continue
        manifest = d["spec"]["forProvider"]["manifest"]
        template = (manifest.get("spec") or {}).get("template") or {}
        if manifest["kind"] == "Deployment" and POOL in (template.get("spec") or {}).get(
            "nodeSelector", {}
        ):
            yield template["spec"]


@pytest.mark.parametrize(
    ("example", "files", "kind", "modelled"),
    [
        (
            "qwen3-8b",
            ["inference-class.yaml", "inference-cluster.yaml", "model-deployment.yaml"],
            "NodeGroup",
            _eks_modelled,
        ),
        (
            "qwen2.5-72b",
            [
                "inference-class-aks.yaml",
                "inference-cluster-aks.yaml",
                "model-cache.yaml",
                "model-deployment.yaml",
            ],
            "KubernetesClusterNodePool",
            _azure_modelled,
        ),
    ],
    ids=["EKS", "AKS"],
)
def test_a_gpu_replica_fits_the_node_the_autoscaler_models_for_its_pool_at_zero(
    example: str, files: list[str], kind: str, modelled: Any
) -> None:
    paths = [str(PUBLIC / example / f) for f in files]
    docs = [d for d in yaml.safe_load_all(CliRunner().invoke(cli.main, ["render", *paths]).stdout)]
    pools = {
        d["spec"]["forProvider"]["nodeLabels" if kind != "NodeGroup" else "labels"][POOL]: d
        for d in docs
        if d and d["kind"] == kind
    }
    pods = list(_pods([d for d in docs if d]))
    assert pods
    for pod in pods:
        labels, taints = modelled(pools[pod["nodeSelector"][POOL]])
        assert pod["nodeSelector"].items() <= labels.items()
        assert taints
        assert all(_tolerated(t, pod.get("tolerations") or []) for t in taints), taints
