"""How Crossplane writes a composite's Ready condition, which render reproduces: read in
crossplane v2.3.0 internal/controller/apiextensions/composite/reconciler.go (Reconcile: the
composite is ``Available`` when every composed resource is ready, else ``Creating`` with
``Unready resources: ...``; a readiness the function gives for the composite itself
(composition_functions.go, ``desired.composite.ready``) supersedes both, ``Creating`` with no
message when False) and v2.3.0 internal/controller/apiextensions/composite/
composition_render.go (RenderComposedResourceMetadata: every composed resource gets a controller
reference to its composite)."""

from __future__ import annotations

from typing import Any

import pytest

from modelplane.composer import Desired, Inputs, Ready, Registry, Result
from modelplane.render import render_passes

API = "modelplane.ai/v1alpha1"


def registry(composite: Ready, composed: Ready) -> Registry:
    def compose(inputs: Inputs) -> Result:
        cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}}
        return Result(resources={"cm": Desired(cm, composed)}, ready=composite)

    out = Registry()
    out.register(API, "ModelCache", compose)
    return out


def ready(composite: Ready, composed: Ready, *, through_function: bool) -> dict[str, Any]:
    xr = {"apiVersion": API, "kind": "ModelCache", "metadata": {"name": "c", "namespace": "ml"}}
    docs, _ = render_passes(registry(composite, composed), [xr], through_function=through_function)
    return docs[0]["status"]["conditions"][0]


@pytest.mark.parametrize("through_function", [False, True])
def test_every_composed_resource_ready_reads_available(through_function: bool) -> None:
    assert ready("Unspecified", "True", through_function=through_function) == {
        "type": "Ready",
        "status": "True",
        "reason": "Available",
    }


@pytest.mark.parametrize("through_function", [False, True])
def test_an_unready_composed_resource_reads_creating_naming_it(through_function: bool) -> None:
    assert ready("Unspecified", "False", through_function=through_function) == {
        "type": "Ready",
        "status": "False",
        "reason": "Creating",
        "message": "Unready resources: cm",
    }


@pytest.mark.parametrize("through_function", [False, True])
def test_a_composite_marked_not_ready_reads_creating_whatever_its_resources(
    through_function: bool,
) -> None:
    assert ready("False", "True", through_function=through_function) == {
        "type": "Ready",
        "status": "False",
        "reason": "Creating",
    }


@pytest.mark.parametrize("through_function", [False, True])
def test_a_composite_marked_ready_reads_available_whatever_its_resources(
    through_function: bool,
) -> None:
    assert ready("True", "False", through_function=through_function)["reason"] == "Available"


def test_every_composed_resource_carries_a_controller_reference_to_its_composite() -> None:
    xr = {"apiVersion": API, "kind": "ModelCache", "metadata": {"name": "c", "namespace": "ml"}}
    docs, _ = render_passes(registry("Unspecified", "True"), [xr])
    [cm] = [d for d in docs if d.get("kind") == "ConfigMap"]
    assert cm["metadata"]["ownerReferences"] == [
        {
            "apiVersion": API,
            "kind": "ModelCache",
            "name": "c",
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]


def test_render_still_names_the_unready_resources_of_a_composite_marked_not_ready() -> None:
    # Crossplane writes no message here; render keeps the list the tree reads readiness from.
    assert ready("False", "False", through_function=False) == {
        "type": "Ready",
        "status": "False",
        "reason": "Creating",
        "message": "Unready resources: cm",
    }
