"""The package installs on a real Crossplane: every XRD Established, every Composition's
revision a valid pipeline, the Function Installed and Healthy."""

from __future__ import annotations

from pathlib import Path

import pytest

from e2e.environment import Environment
from tests.e2e.conftest import ROOT, conditions

pytestmark = pytest.mark.e2e


def test_every_xrd_of_the_package_is_established(e2e: Environment) -> None:
    shipped = sorted(p.parent.name for p in (ROOT / "apis").glob("*/definition.yaml"))
    established = e2e.control.get("xrd")["items"]
    names = sorted(x["metadata"]["name"].split(".")[0] for x in established)
    assert names == shipped
    for xrd in established:
        ref = ("xrd", xrd["metadata"]["name"])
        e2e.control.kubectl("wait", *ref, "--for=condition=Established", "--timeout=120s")


def test_every_composition_revision_is_a_valid_pipeline(e2e: Environment) -> None:
    revisions = e2e.control.get("compositionrevisions")["items"]
    assert len(revisions) == len(list((ROOT / "apis").glob("*/composition.yaml")))
    for revision in revisions:
        ref = ("compositionrevision", revision["metadata"]["name"])
        e2e.control.kubectl("wait", *ref, "--for=condition=ValidPipeline", "--timeout=120s")


def test_the_function_is_installed_and_healthy(e2e: Environment) -> None:
    ref = ("function.pkg.crossplane.io", "modelplane-function-modelplane")
    e2e.control.kubectl("wait", *ref, "--for=condition=Healthy", "--timeout=120s")
    assert conditions(e2e.control, *ref)["Installed"][0] == "True"


def test_the_function_answers_crossplane_over_mtls(e2e: Environment) -> None:
    # A composite's reconcile goes through the function: an InferenceClass turns Ready only
    # once the function composed it.
    e2e.control.apply(Path(ROOT / "docs/getting-started/classes.yaml").read_text())
    e2e.control.kubectl(
        "wait", "inferenceclass/nvidia-l4", "--for=condition=Ready", "--timeout=120s"
    )
