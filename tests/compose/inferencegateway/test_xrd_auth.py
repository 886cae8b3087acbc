"""InferenceGateway ``spec.auth`` admission: callers selected by Secret labels, the key read from
one header; without ``auth`` nobody is authenticated, as before."""

from __future__ import annotations

import pytest

from tests.compose.inferencegateway.gateways import CALLERS, GATEWAY
from tests.fleet.xrd import admission, errors, mutated, rule_error


def with_auth(auth: dict) -> dict:
    return mutated(GATEWAY, lambda g: g["spec"].update(auth=auth))


def test_a_gateway_without_auth_is_admitted_as_before() -> None:
    assert errors("inferencegateways", GATEWAY) == []


def test_callers_selected_by_labels_are_admitted() -> None:
    assert errors("inferencegateways", with_auth(CALLERS)) == []


def test_the_key_header_defaults_to_authorization() -> None:
    admitted = admission("inferencegateways").admit(with_auth(CALLERS)).object
    assert admitted["spec"]["auth"]["keyHeader"] == "authorization"


def test_another_key_header_is_admitted() -> None:
    assert errors("inferencegateways", with_auth({**CALLERS, "keyHeader": "x-api-key"})) == []


def test_auth_without_a_selector_is_refused_naming_the_field() -> None:
    assert errors("inferencegateways", with_auth({"keyHeader": "x-api-key"})) == [
        rule_error(
            "spec.auth",
            "auth.callerSecretSelector is required: the labels of the Secrets holding the "
            "callers (an auth that selects none would refuse everyone)",
        )
    ]


def test_an_empty_selector_is_refused_since_it_would_select_every_secret() -> None:
    [error] = errors("inferencegateways", with_auth({"callerSecretSelector": {"matchLabels": {}}}))
    assert error.startswith("spec.auth.callerSecretSelector.matchLabels:")
    assert "should have at least 1 properties" in error


def test_a_selector_without_match_labels_is_refused() -> None:
    found = errors("inferencegateways", with_auth({"callerSecretSelector": {}}))
    assert found[0] == "spec.auth.callerSecretSelector.matchLabels: Required value"


def test_a_selector_key_must_be_a_label_key() -> None:
    auth = {"callerSecretSelector": {"matchLabels": {"not a key": "x"}}}
    assert errors("inferencegateways", with_auth(auth)) == [
        rule_error(
            "spec.auth.callerSecretSelector.matchLabels",
            "auth.callerSecretSelector.matchLabels keys must be label keys: an optional "
            "DNS-subdomain prefix of at most 253 characters and /, then a name of at most 63 "
            "(alphanumerics, -, _, .)",
        )
    ]


def test_a_selector_value_must_be_a_label_value() -> None:
    auth = {"callerSecretSelector": {"matchLabels": {"team": "not a value"}}}
    assert errors("inferencegateways", with_auth(auth)) == [
        rule_error(
            "spec.auth.callerSecretSelector.matchLabels",
            "auth.callerSecretSelector.matchLabels values must be label values: at most 63 "
            "alphanumerics, -, _ or ., beginning and ending with an alphanumeric",
        )
    ]


@pytest.mark.parametrize("header", ["x api key", "x-api-key:", "-x"])
def test_the_key_header_must_be_a_header_name(header: str) -> None:
    found = errors("inferencegateways", with_auth({**CALLERS, "keyHeader": header}))
    assert found == [
        rule_error(
            "spec.auth.keyHeader",
            "auth.keyHeader must be an HTTP header name: alphanumerics and -",
            "string",
        )
    ]


@pytest.mark.parametrize("header", ["x-modelplane-caller", "X-Modelplane-Caller"])
def test_the_key_header_cannot_be_the_identity_header(header: str) -> None:
    found = errors("inferencegateways", with_auth({**CALLERS, "keyHeader": header}))
    assert found == [
        rule_error(
            "spec.auth.keyHeader",
            "auth.keyHeader must not be x-modelplane-caller, the identity header the gateway sets",
            "string",
        )
    ]
