"""provider-helm v1.4.0: how a Release is judged up to date."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from modelplane.compose.inferencecluster.components import INSTALLED
from modelplane.compose.inferencecluster.status import component_state
from tests.conformance.fleets import NAMES, rendered_fleet

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "design" / "serving-stack.md"
CRD = ROOT / "tests" / "upstream" / "crds" / "helm.m.crossplane.io_releases.yaml"


def published_forms() -> dict[str, str]:
    """Chart name -> the version its registry publishes, from the table in the docs."""
    text = DOC.read_text()
    section = text[text.index("### Chart versions, in the form each registry publishes") :]
    out = {}
    for line in section.splitlines():
        m = re.match(r"\| (`[^|]+`) \| `([^`]+)`", line)
        if m:
            for chart in re.findall(r"`([^`]+)`", m.group(1)):
                out[chart] = m.group(2)
        elif out and not line.startswith("|"):
            break
    return out


def test_every_chart_modelplane_installs_has_its_published_form_and_source_tabled() -> None:
    charts = {c.name for component in INSTALLED for c in component.charts}
    assert charts == set(published_forms())


def test_every_default_pin_is_the_version_as_published() -> None:
    forms = published_forms()
    assert {c.name: component.version for component in INSTALLED for c in component.charts} == forms


@pytest.mark.parametrize("name", NAMES)
def test_every_composed_release_names_its_chart_version_as_the_registry_publishes_it(
    name: str,
) -> None:
    """crossplane-contrib/provider-helm v1.4.0, pkg/controller/namespaced/release/observe.go:
    ``in.Chart.Version != ocm.Version`` (the installed chart's metadata) marks the release out of
    date as plain strings, so ``0.10.0`` against a chart published ``v0.10.0`` upgrades on every
    reconcile and the Release is never Ready."""
    forms = published_forms()
    wrong = {
        (r["metadata"]["name"], chart["name"], chart["version"])
        for r in rendered_fleet(name).composed("Release")
        for chart in [r["spec"]["forProvider"]["chart"]]
        if chart["version"] != forms[chart["name"]]
    }
    assert wrong == set()


def test_a_release_states_in_status_the_chart_version_it_installed() -> None:
    """crossplane-contrib/provider-helm v1.4.0, apis/namespaced/release/v1beta1/types.go
    ``ReleaseObservation.Version`` ("the actual deployed chart version"), which
    pkg/controller/namespaced/release/observe.go ``generateObservation`` fills from the Helm
    release's chart metadata: the version the stack's upgrade waves read as installed."""
    crd = yaml.safe_load(CRD.read_text())
    [version] = crd["spec"]["versions"]
    at_provider = version["schema"]["openAPIV3Schema"]["properties"]["status"]["properties"][
        "atProvider"
    ]
    assert at_provider["properties"]["version"]["type"] == "string"


@pytest.mark.parametrize(("installed", "state"), [("v1.20.0", "Installing"), ("v1.21.1", "Ready")])
def test_a_release_whose_installed_version_is_not_the_composed_one_is_not_ready(
    installed: str, state: str
) -> None:
    """provider-helm v1.4.0, pkg/controller/namespaced/release/release.go ``Observe``: Ready
    (Available) is written only on an observation, so until the provider has upgraded a changed
    Release it still reads Ready from the version before; ``status.atProvider.version`` says
    which version that was."""
    release = {
        "kind": "Release",
        "spec": {"forProvider": {"chart": {"name": "cert-manager", "version": "v1.21.1"}}},
        "status": {
            "atProvider": {"state": "deployed", "version": installed},
            "conditions": [{"type": "Ready", "status": "True", "reason": "Available"}],
        },
    }
    observed = {"cert-manager": release}
    got = component_state(
        "cert-manager", "Managed", "v1.21.1", ["cert-manager"], observed, {"cert-manager": True}
    )
    assert got.state == state
