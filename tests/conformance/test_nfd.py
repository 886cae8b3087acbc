"""Node Feature Discovery v0.19.0: the labels the NVIDIA DRA driver's kubelet plugin is placed
by."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conformance.fleets import NAMES, rendered_fleet

CHART_VALUES = Path(__file__).resolve().parents[1] / "upstream" / "values"
DISPLAY_CLASSES = ("0300", "0301", "0302", "0380")
"""PCI display controllers (class 03): VGA, XGA, 3D, other. NVIDIA GPUs present as 0300 or 0302."""
NVIDIA = "10de"


def nfd_labels(device_class: str) -> dict[str, str]:
    """kubernetes-sigs/node-feature-discovery v0.19.0, source/pci/pci.go: the default
    deviceClassWhitelist ["03", "0b40", "12"] admits every display class, and the default
    deviceLabelFields ["class", "vendor"] name the label pci-<class>_<vendor>.present."""
    return {f"feature.node.kubernetes.io/pci-{device_class}_{NVIDIA}.present": "true"}


def selected(affinity: dict[str, Any], labels: dict[str, str]) -> bool:
    """A required node affinity: any term, every expression in it (In only, as the chart's)."""
    terms = affinity["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ]
    return any(
        all(
            e["operator"] == "In" and labels.get(e["key"]) in e["values"]
            for e in term["matchExpressions"]
        )
        for term in terms
    )


def plugin_affinity(release: dict[str, Any]) -> dict[str, Any]:
    """The kubelet plugin's affinity as Helm renders it: the Release's value, else the chart's
    default (dra-driver-nvidia-gpu v0.4.1 values.yaml, kept in tests/upstream/values)."""
    values = release["spec"]["forProvider"].get("values") or {}
    if "affinity" in (values.get("kubeletPlugin") or {}):
        return values["kubeletPlugin"]["affinity"]
    version = release["spec"]["forProvider"]["chart"]["version"]
    default = yaml.safe_load((CHART_VALUES / f"dra-driver-nvidia-gpu-{version}.yaml").read_text())
    return default["kubeletPlugin"]["affinity"]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("device_class", DISPLAY_CLASSES)
def test_a_node_with_an_nvidia_gpu_of_any_display_class_gets_the_dra_plugin(
    name: str, device_class: str
) -> None:
    releases = [
        r
        for r in rendered_fleet(name).composed("Release")
        if r["spec"]["forProvider"]["chart"]["name"] == "dra-driver-nvidia-gpu"
    ]
    assert releases
    for release in releases:
        assert selected(plugin_affinity(release), nfd_labels(device_class))


def test_the_charts_own_affinity_misses_some_display_classes() -> None:
    """Why the Release sets the affinity: the chart's default names 0300 and 0302 only."""
    default = yaml.safe_load((CHART_VALUES / "dra-driver-nvidia-gpu-0.4.1.yaml").read_text())
    affinity = default["kubeletPlugin"]["affinity"]
    assert [c for c in DISPLAY_CLASSES if not selected(affinity, nfd_labels(c))] == ["0301", "0380"]
