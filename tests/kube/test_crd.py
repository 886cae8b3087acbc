"""Loading CRDs and XRDs into definitions; the CRD Crossplane generates for an XR."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from modelplane.kube.admission import Admission, UnknownKindError
from modelplane.kube.crd import Definition, DefinitionError, definition_of, load_definitions
from tests.kube.crds import thing_crd


def xrd(api: str = "apiextensions.crossplane.io/v2", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": api,
        "kind": "CompositeResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "names": {"kind": "Widget", "plural": "widgets"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "referenceable": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {
                                "spec": {
                                    "type": "object",
                                    "properties": {"size": {"type": "integer", "default": 1}},
                                }
                            },
                        }
                    },
                },
                {"name": "v0", "served": False, "referenceable": False},
            ],
            **spec,
        },
    }


def widget(spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w", "namespace": "n"},
        "spec": spec,
    }


def with_spec_rule(rule: dict[str, Any]) -> Definition:
    """The widget definition with ``rule`` on its spec, loaded but not compiled."""
    doc = xrd()
    spec = doc["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    spec["x-kubernetes-validations"] = [rule]
    definition = definition_of(doc)
    assert definition is not None
    return definition


def admission_of(doc: dict[str, Any]) -> Admission:
    definition = definition_of(doc)
    assert definition is not None
    return Admission([definition])


def test_a_v2_xr_accepts_crossplanes_spec_crossplane_fields() -> None:
    admitted = admission_of(xrd()).admit(
        widget({"crossplane": {"compositionRef": {"name": "c"}, "resourceRefs": []}})
    )
    assert admitted.errors == []
    assert admitted.object["spec"] == {
        "crossplane": {
            "compositionRef": {"name": "c"},
            "resourceRefs": [],
            "compositionUpdatePolicy": "Automatic",
        },
        "size": 1,
    }


def test_a_v2_xr_does_not_take_legacy_top_level_fields() -> None:
    errors = admission_of(xrd()).admit(widget({"compositionRef": {"name": "c"}})).errors
    assert [str(e) for e in errors] == ['unknown field "spec.compositionRef"']


@pytest.mark.parametrize(
    "doc",
    [xrd(scope="LegacyCluster"), xrd(api="apiextensions.crossplane.io/v1")],
    ids=["v2 LegacyCluster", "v1"],
)
def test_a_legacy_xr_takes_crossplane_fields_at_the_top_of_spec(doc: dict[str, Any]) -> None:
    obj = widget(
        {
            "compositionRef": {"name": "c"},
            "claimRef": {
                "apiVersion": "example.com/v1",
                "kind": "Claim",
                "namespace": "n",
                "name": "c",
            },
        }
    )
    assert admission_of(doc).admit(obj).errors == []


def test_only_served_versions_are_known() -> None:
    admission = admission_of(xrd())
    assert admission.knows("example.com/v1", "Widget")
    assert not admission.knows("example.com/v0", "Widget")
    with pytest.raises(UnknownKindError, match=r"example\.com/v0"):
        admission.admit({**widget({}), "apiVersion": "example.com/v0"})


def test_other_documents_are_not_definitions(tmp_path: Path) -> None:
    path = tmp_path / "mixed.yaml"
    path.write_text(yaml.safe_dump_all([{"apiVersion": "v1", "kind": "ConfigMap"}, xrd()]))
    assert [d.kind for d in load_definitions([tmp_path])] == ["Widget"]


def test_a_definition_without_a_kind_is_a_load_error() -> None:
    doc = xrd()
    del doc["spec"]["names"]["kind"]
    with pytest.raises(DefinitionError, match=r"spec\.names\.kind: Required value"):
        definition_of(doc)


def test_a_rule_that_does_not_compile_fails_compile_with_its_location() -> None:
    definition = with_spec_rule({"rule": "self.size >", "message": "m"})
    with pytest.raises(DefinitionError, match=r"properties\[spec\]\.x-kubernetes-validations\[0\]"):
        definition.compile()


def test_unreadable_yaml_is_a_load_error(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("a: [")
    with pytest.raises(DefinitionError, match="not YAML"):
        load_definitions([path])


def test_a_crd_may_constrain_metadata_name() -> None:
    crd = thing_crd(
        {
            "type": "object",
            "properties": {
                "metadata": {
                    "type": "object",
                    "properties": {"name": {"type": "string", "maxLength": 5}},
                }
            },
            "x-kubernetes-validations": [
                {"rule": "self.metadata.name != 'nope'", "message": "no nope"}
            ],
        }
    )
    admission = admission_of(crd)

    def errors(name: str) -> list[str]:
        obj = {"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"name": name}}
        return [str(e) for e in admission.admit(obj).errors]

    assert errors("nope") == ['<nil>: Invalid value: "object": no nope']
    assert errors("toolong")[0] == "metadata.name: Too long: may not be more than 5 bytes"


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        ("self.sizee > 1", "<input>:1:5: undefined field 'sizee'"),
        ("self.size == 'one'", "found no matching overload for '_==_' applied to '(int, string)'"),
        ("self.size", "rule must evaluate to bool, not INT"),
    ],
)
def test_rules_are_type_checked_against_the_schema_at_load(rule: str, message: str) -> None:
    definition = with_spec_rule({"rule": rule})
    with pytest.raises(DefinitionError) as raised:
        definition.compile()
    assert message in str(raised.value)
    assert "properties[spec].x-kubernetes-validations[0]" in str(raised.value)


def test_a_message_expression_must_yield_a_string() -> None:
    definition = with_spec_rule({"rule": "self.size > 1", "messageExpression": "self.size"})
    with pytest.raises(DefinitionError, match="must evaluate to string, not INT"):
        definition.compile()


def test_a_composites_name_is_capped_at_63_characters_as_crossplane_generates_it() -> None:
    # crossplane-runtime v2.3.4 pkg/xcrd/crd.go: maxCompositeNameLength, lowered (never raised)
    # by the XRD's own metadata.name maxLength.
    from modelplane.kube.crd import composite_schema

    plain = composite_schema(
        {"type": "object", "properties": {"spec": {"type": "object"}}}, "Namespaced"
    )
    assert plain["properties"]["metadata"]["properties"]["name"]["maxLength"] == 63
    for declared, capped in ((40, 40), (100, 63)):
        xr = {
            "type": "object",
            "properties": {
                "metadata": {
                    "type": "object",
                    "properties": {"name": {"type": "string", "maxLength": declared}},
                },
                "spec": {"type": "object"},
            },
        }
        assert (
            composite_schema(xr, "Cluster")["properties"]["metadata"]["properties"]["name"][
                "maxLength"
            ]
            == capped
        )
