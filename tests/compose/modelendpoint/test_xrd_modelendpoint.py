"""ModelEndpoint admission: the public shape (url, rewritePath) admitted unchanged; our additions
(clusterName, inferencePool, auth) each with its rule."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.fleet.xrd import admission, errors, mutated, rule_error

PUBLIC = sorted((Path(__file__).parent / "public").glob("*.yaml"))
EXTERNAL = {
    "apiVersion": "modelplane.ai/v1alpha1",
    "kind": "ModelEndpoint",
    "metadata": {"name": "together", "namespace": "ml"},
    "spec": {
        "url": "https://api.together.xyz/v1",
        "rewritePath": "/",
        "auth": {"secretRef": {"name": "together-key"}},
    },
}
REPLICA = {
    "apiVersion": "modelplane.ai/v1alpha1",
    "kind": "ModelEndpoint",
    "metadata": {"name": "qwen-east-0", "namespace": "ml"},
    "spec": {
        "url": "http://10.0.0.4/ml/qwen-east-0/v1",
        "rewritePath": "/ml/qwen-east-0/",
        "clusterName": "east",
        "inferencePool": "qwen-east-0-pool",
    },
}


@pytest.mark.parametrize("path", PUBLIC, ids=lambda p: p.name)
def test_the_public_apis_manifests_are_admitted_unchanged(path: Path) -> None:
    doc = yaml.safe_load(path.read_text())
    assert errors("modelendpoints", doc) == []
    assert admission("modelendpoints").admit(doc).object["spec"] == doc["spec"]


def test_an_external_endpoint_with_a_credential_is_admitted_with_its_defaults() -> None:
    assert errors("modelendpoints", EXTERNAL) == []
    auth = admission("modelendpoints").admit(EXTERNAL).object["spec"]["auth"]
    assert auth == {
        "secretRef": {"name": "together-key", "key": "credential"},
        "header": "Authorization",
    }


def test_a_replica_endpoint_names_its_cluster_and_pool() -> None:
    assert errors("modelendpoints", REPLICA) == []


@pytest.mark.parametrize(
    "url",
    ["ftp://host/x", "https://", "https://host:port/", "https://host/?q=1", "https://u:p@host/"],
)
def test_a_url_is_http_or_https_host_port_and_path(url: str) -> None:
    endpoint = mutated(EXTERNAL, lambda e: e["spec"].update(url=url))
    message = (
        "url must be http:// or https://, a host, an optional port and an optional path "
        "(no query, fragment or credentials)"
    )
    assert errors("modelendpoints", endpoint) == [rule_error("spec.url", message, "string")]


def test_a_rewrite_path_starts_with_a_slash() -> None:
    endpoint = mutated(EXTERNAL, lambda e: e["spec"].update(rewritePath="v1/"))
    assert errors("modelendpoints", endpoint) == [
        rule_error("spec.rewritePath", "rewritePath must start with /", "string")
    ]


def test_cluster_and_pool_go_together() -> None:
    endpoint = mutated(REPLICA, lambda e: e["spec"].pop("inferencePool"))
    assert errors("modelendpoints", endpoint) == [
        rule_error(
            "spec",
            "clusterName and inferencePool go together: an endpoint on a Modelplane cluster "
            "names both (a ModelDeployment sets them)",
        )
    ]


def test_a_credential_is_for_external_endpoints_only() -> None:
    endpoint = mutated(REPLICA, lambda e: e["spec"].update(auth=EXTERNAL["spec"]["auth"]))
    assert errors("modelendpoints", endpoint) == [
        rule_error(
            "spec",
            "auth is for external endpoints: the fleet's own clusters are reached over mutual TLS",
        )
    ]


def test_a_credential_header_is_an_http_header_name() -> None:
    endpoint = mutated(EXTERNAL, lambda e: e["spec"]["auth"].update(header="x api key"))
    assert errors("modelendpoints", endpoint) == [
        rule_error("spec.auth.header", "header must be an HTTP header name", "string")
    ]
