"""InferenceGateway admission: a gateway on a cluster, with a hostname and TLS; the v0.3.1 shape
is refused with a message saying what the new shape is."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.fleet.xrd import errors, mutated, rule_error

PUBLIC = Path(__file__).parent / "public"
GATEWAY = {
    "apiVersion": "modelplane.ai/v1alpha1",
    "kind": "InferenceGateway",
    "metadata": {"name": "eu"},
    "spec": {
        "clusterName": "gw-eu",
        "hostname": "eu.example.com",
        "tls": {"issuerRef": {"name": "letsencrypt"}},
        "serviceSelector": {"matchLabels": {"region": "eu"}},
    },
}


def spec_error(message: str) -> str:
    return rule_error("spec", message)


def test_a_gateway_on_a_cluster_with_a_hostname_and_an_issuer_is_admitted() -> None:
    assert errors("inferencegateways", GATEWAY) == []


def test_a_gateway_with_a_tls_secret_is_admitted() -> None:
    gw = mutated(GATEWAY, lambda g: g["spec"].update(tls={"secretRef": {"name": "eu-tls"}}))
    assert errors("inferencegateways", gw) == []


def test_the_v0_3_1_manifest_is_refused_with_what_the_new_shape_is() -> None:
    public = yaml.safe_load((PUBLIC / "inference-gateway.yaml").read_text())
    found = errors("inferencegateways", public)
    [old] = [e for e in found if "v0.3.1" in e]
    assert old.startswith("spec: Invalid value:")
    for field in ("spec.clusterName", "spec.hostname", "spec.tls", "remove backend and traefik"):
        assert field in old
    assert "installs nothing there" in old


def test_backend_alone_is_refused_too() -> None:
    gw = mutated(GATEWAY, lambda g: g["spec"].update(backend="Traefik"))
    [error] = errors("inferencegateways", gw)
    assert "v0.3.1 InferenceGateway" in error


def test_cluster_hostname_and_tls_are_each_required_by_name() -> None:
    assert errors("inferencegateways", {**GATEWAY, "spec": {}}) == [
        spec_error("spec.clusterName is required: the InferenceCluster the gateway runs on"),
        spec_error("spec.hostname is required: the DNS name clients call the gateway by"),
        spec_error("spec.tls is required: the gateway serves HTTPS only (secretRef or issuerRef)"),
    ]


def test_tls_takes_exactly_one_source() -> None:
    both = mutated(GATEWAY, lambda g: g["spec"]["tls"].update(secretRef={"name": "eu-tls"}))
    neither = mutated(GATEWAY, lambda g: g["spec"].update(tls={}))
    message = (
        "tls takes exactly one of secretRef (a kubernetes.io/tls Secret) or issuerRef "
        "(a cert-manager issuer)"
    )
    assert errors("inferencegateways", both) == [rule_error("spec.tls", message)]
    assert errors("inferencegateways", neither) == [rule_error("spec.tls", message)]


def test_a_hostname_is_a_lower_case_dns_name_without_wildcard_or_port() -> None:
    message = (
        "hostname must be a lower-case DNS name with at least two labels, without a wildcard "
        "or a port"
    )
    for bad in ("*.example.com", "Eu.example.com", "eu.example.com:443", "localhost"):
        gw = mutated(GATEWAY, lambda g, h=bad: g["spec"].update(hostname=h))
        assert errors("inferencegateways", gw) == [
            rule_error("spec.hostname", message, "string")
        ], bad


def test_an_issuer_defaults_to_a_cert_manager_cluster_issuer() -> None:
    from tests.fleet.xrd import admission

    admitted = admission("inferencegateways").admit(GATEWAY).object
    assert admitted["spec"]["tls"]["issuerRef"] == {
        "name": "letsencrypt",
        "kind": "ClusterIssuer",
        "group": "cert-manager.io",
    }


def test_the_cluster_a_gateway_runs_on_cannot_change() -> None:
    # Transition rules run on update only; offline admission checks creates, so the rule is
    # read from the definition.
    xrd = yaml.safe_load(
        (Path(__file__).resolve().parents[3] / "apis/inferencegateways/definition.yaml").read_text()
    )
    schema = xrd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    rules = schema["properties"]["spec"]["properties"]["clusterName"]["x-kubernetes-validations"]
    assert "self == oldSelf" in [r["rule"] for r in rules]


def test_a_tls_secret_is_read_only_from_crossplane_system() -> None:
    stolen = mutated(
        GATEWAY,
        lambda g: g["spec"].update(
            tls={"secretRef": {"name": "admin", "namespace": "kube-system"}}
        ),
    )
    [error] = errors("inferencegateways", stolen)
    assert error.startswith("spec.tls.secretRef.namespace: Invalid value:")
    assert "must be crossplane-system" in error


def test_a_tls_secret_in_crossplane_system_is_admitted_and_is_the_default() -> None:
    from tests.fleet.xrd import admission

    gw = mutated(GATEWAY, lambda g: g["spec"].update(tls={"secretRef": {"name": "eu-tls"}}))
    admitted = admission("inferencegateways").admit(gw).object
    assert admitted["spec"]["tls"]["secretRef"]["namespace"] == "crossplane-system"
    explicit = mutated(
        gw, lambda g: g["spec"]["tls"]["secretRef"].update(namespace="crossplane-system")
    )
    assert errors("inferencegateways", explicit) == []


def test_an_allow_list_of_hosts_and_cidrs_is_admitted() -> None:
    egress = {
        "allowedHosts": ["vllm.models.svc.cluster.local", "*.corp.internal", "llm"],
        "allowedCIDRs": ["10.20.0.0/16", "192.168.1.7/32", "fd12:3456::/48"],
    }
    assert (
        errors("inferencegateways", mutated(GATEWAY, lambda g: g["spec"].update(egress=egress)))
        == []
    )


@pytest.mark.parametrize("host", ["*", "*.", "Upper.example.com", "a..b", "10.0.0.0/8", "a_b.svc"])
def test_an_allowed_host_must_be_a_dns_name_or_a_wildcard_over_one(host: str) -> None:
    gw = mutated(GATEWAY, lambda g: g["spec"].update(egress={"allowedHosts": [host]}))
    assert errors("inferencegateways", gw) == [
        rule_error(
            "spec.egress.allowedHosts[0]",
            "egress.allowedHosts entries must be lower-case DNS names, optionally *. followed by "
            "one",
            "string",
        )
    ]


@pytest.mark.parametrize("cidr", ["10.0.0.0", "10.0.0.0/33", "256.0.0.0/8", "fd12::/129", "vllm/8"])
def test_an_allowed_cidr_must_be_an_address_and_a_prefix_length(cidr: str) -> None:
    gw = mutated(GATEWAY, lambda g: g["spec"].update(egress={"allowedCIDRs": [cidr]}))
    assert errors("inferencegateways", gw) == [
        rule_error(
            "spec.egress.allowedCIDRs[0]",
            "egress.allowedCIDRs entries must be CIDRs: an IPv4 address and a prefix length 0-32, "
            "or an IPv6 address and 0-128",
            "string",
        )
    ]
