"""provider-helm v1.4.0: how a Release is judged up to date."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from modelplane.compose.inferencecluster.components import INSTALLED
from tests.conformance.fleets import NAMES, fleet

DOC = Path(__file__).resolve().parents[2] / "docs" / "design" / "serving-stack.md"


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
        for r in fleet(name).composed("Release")
        for chart in [r["spec"]["forProvider"]["chart"]]
        if chart["version"] != forms[chart["name"]]
    }
    assert wrong == set()
