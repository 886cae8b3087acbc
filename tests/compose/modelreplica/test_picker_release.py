"""A user's picker image against what Modelplane writes for it: an llm-d picker release too old
to read it is refused naming the field; one whose tag names no release draws a warning; an image
of another name is the user's own build and passes unjudged."""

from __future__ import annotations

from typing import Any

from modelplane.compose.admission import Admission
from modelplane.compose.modelreplica import picker
from modelplane.compose.modelreplica.composer import compose_replica
from modelplane.compose.shared import pickerversions
from modelplane.composer import Inputs
from tests.compose.modelreplica.routing_fixtures import cluster, replica

Obj = dict[str, Any]

IMAGE_FIELD = "spec.serving.endpointPicker.template.spec.containers[0].image"
PICKER = "ghcr.io/llm-d/llm-d-router-endpoint-picker"
OLD_NAME = "ghcr.io/llm-d/llm-d-inference-scheduler"
OLD_GROUP_CONFIG = {"apiVersion": "inference.networking.x-k8s.io/v1alpha1", "kind": "X"}
NEW_GROUP_CONFIG = {"apiVersion": "llm-d.ai/v1alpha1", "kind": "EndpointPickerConfig"}


def epp_serving(image: str, config: Obj | None = None) -> Obj:
    endpoint_picker: Obj = {"template": {"spec": {"containers": [{"name": "epp", "image": image}]}}}
    if config is not None:
        endpoint_picker["config"] = config
    return {"mode": "Unified", "router": "EndpointPicker", "endpointPicker": endpoint_picker}


def composed(image: str) -> Any:
    composite = replica(serving=epp_serving(image))
    return compose_replica(Inputs(composite=composite, required={"cluster": [cluster()]}))


# --- refused ----------------------------------------------------------------------------------


def test_a_release_before_the_llm_d_ai_group_is_refused_for_the_default_config() -> None:
    problem = picker.serving_problem(epp_serving(f"{PICKER}:v0.4.0"))
    assert problem is not None
    assert problem.startswith(f"{IMAGE_FIELD}: Invalid value: ")
    assert "Modelplane's default config (apiVersion llm-d.ai/v1alpha1)" in problem
    assert f"v0.9.0 or later ({PICKER}:v0.9.0 or newer)" in problem


def test_a_release_before_the_llm_d_ai_group_is_refused_for_a_users_config_of_it() -> None:
    problem = picker.serving_problem(epp_serving(f"{OLD_NAME}:v0.8.0", NEW_GROUP_CONFIG))
    assert problem is not None
    assert "serving.endpointPicker.config (apiVersion llm-d.ai/v1alpha1)" in problem


def test_a_release_before_the_wiring_flags_is_refused_even_with_an_old_group_config() -> None:
    problem = picker.serving_problem(epp_serving(f"{OLD_NAME}:v0.3.2", OLD_GROUP_CONFIG))
    assert problem is not None
    assert "--tracing" in problem
    assert f"v0.4.0 or later ({OLD_NAME}:v0.4.0 or newer)" in problem


def test_a_replica_with_a_picker_too_old_composes_nothing_and_fails_fatal() -> None:
    result = composed(f"{PICKER}:v0.8.1")
    assert result.fatal is not None
    assert result.fatal.startswith(f"ModelReplica is invalid: {IMAGE_FIELD}: Invalid value: ")
    assert result.resources == {}


# --- admitted ---------------------------------------------------------------------------------


def test_the_first_release_of_the_llm_d_ai_group_is_admitted() -> None:
    assert picker.serving_problem(epp_serving(f"{PICKER}:v0.9.0")) is None


def test_an_old_release_with_a_config_of_the_group_it_reads_is_admitted() -> None:
    assert picker.serving_problem(epp_serving(f"{OLD_NAME}:v0.8.0", OLD_GROUP_CONFIG)) is None


def test_a_mirrored_release_with_a_suffix_is_read_as_its_release() -> None:
    image = "registry.example.com/platform/llm-d-router-endpoint-picker:v0.10.0-patched"
    assert picker.serving_problem(epp_serving(image)) is None


def test_a_pre_release_is_read_as_the_release_it_leads_to() -> None:
    assert picker.serving_problem(epp_serving(f"{PICKER}:v0.9.0-rc.1")) is None


def test_an_image_of_another_name_is_not_judged() -> None:
    assert picker.serving_problem(epp_serving("registry.example.com/team/epp:v0.1.0")) is None
    assert picker.image_warnings(epp_serving("registry.example.com/team/epp:latest")) == []


def test_a_tag_and_a_digest_are_judged_by_the_tag() -> None:
    problem = picker.serving_problem(epp_serving(f"{PICKER}:v0.4.0@sha256:{'0' * 64}"))
    assert problem is not None
    assert picker.image_warnings(epp_serving(f"{PICKER}:v0.10.0@sha256:{'0' * 64}")) == []


def test_a_registry_port_is_not_read_as_a_tag() -> None:
    ref = pickerversions.parse("localhost:5000/llm-d-router-endpoint-picker")
    assert (ref.name, ref.tag) == ("llm-d-router-endpoint-picker", None)


# --- warned -----------------------------------------------------------------------------------


def test_an_llm_d_picker_tagged_latest_is_admitted_with_a_warning_naming_the_field() -> None:
    assert picker.serving_problem(epp_serving(f"{PICKER}:latest")) is None
    [warning] = picker.image_warnings(epp_serving(f"{PICKER}:latest"))
    assert warning.startswith(f"{IMAGE_FIELD}: ")
    assert "tag 'latest'" in warning
    assert "v0.9.0 or later" in warning


def test_an_llm_d_picker_pinned_by_digest_alone_draws_a_warning() -> None:
    [warning] = picker.image_warnings(epp_serving(f"{PICKER}@sha256:{'0' * 64}"))
    assert "a digest alone" in warning


def test_an_llm_d_picker_with_no_tag_draws_a_warning_since_it_pulls_latest() -> None:
    [warning] = picker.image_warnings(epp_serving(PICKER))
    assert "no tag: latest" in warning


def test_a_deployments_warning_names_the_field_under_its_template() -> None:
    [warning] = picker.image_warnings(epp_serving(f"{PICKER}:main"), at="spec.template.spec")
    assert warning.startswith(f"spec.template.{IMAGE_FIELD}: ")


def test_a_replica_with_an_unjudged_picker_composes_and_reports_a_warning_event() -> None:
    result = composed(f"{PICKER}:latest")
    assert result.fatal is None
    [event] = [e for e in result.events if e.reason == picker.UNKNOWN_RELEASE]
    assert event.severity == "Warning"
    assert event.message.startswith(f"{IMAGE_FIELD}: ")


def test_admission_admits_an_unjudged_picker_with_the_same_warning() -> None:
    admitted = Admission.default().admit(replica(serving=epp_serving(f"{PICKER}:latest")))
    assert admitted.errors == []
    assert admitted.warnings == picker.image_warnings(epp_serving(f"{PICKER}:latest"))


def test_the_default_picker_draws_no_warning() -> None:
    assert picker.image_warnings({"mode": "PrefillDecode"}) == []
    result = compose_replica(Inputs(composite=replica(), required={"cluster": [cluster()]}))
    assert [e for e in result.events if e.reason == picker.UNKNOWN_RELEASE] == []
