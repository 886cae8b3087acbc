"""The fleet's keys stay where they belong: an InferenceGateway's front certificate
(``spec.tls.secretRef``, copied with its ``tls.key`` to the gateway's cluster) and an
InferenceCluster's trust bundle (``spec.gateway.fleetTrustSecretRef``, one key copied as
``ca.crt``) never name the fleet CA's key or a fleet certificate Secret Modelplane issues. Each
is refused at admission (the XRD, so ``modelplane validate`` and the API server alike) and by the
composition, whose refusal names the field."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from modelplane.cli import main
from modelplane.compose.inferencecluster.composer import compose_cluster
from modelplane.compose.inferencegateway.composer import CLUSTERS, compose_gateway
from modelplane.compose.shared.frontdoor import client_secret
from modelplane.composer import Inputs, Result
from tests.compose.inferencecluster.support import cluster as declared_cluster
from tests.compose.modelservice.kit import cluster, gateway
from tests.conformance.fleets import NAMES, rendered_fleet
from tests.fleet.xrd import errors

Obj = dict[str, Any]
FLEET = [cluster("edge", pools=False), cluster("east")]
SERVER_LEAF = "east-fleet-server"
CLIENT_LEAF = client_secret("other")


def admitted_gateway(secret: str) -> list[str]:
    return errors("inferencegateways", gateway(secret=secret))


def composed_gateway(secret: str, fleet: list[Obj] | None = None) -> Result:
    required = {CLUSTERS: FLEET if fleet is None else fleet}
    return compose_gateway(Inputs(composite=gateway(secret=secret), required=required))


def with_trust(trust: Obj, ca: Obj | None = None) -> Obj:
    """An InferenceCluster as admitted before these rules existed: the trust reference set on
    the stored object, past admission."""
    ic = copy.deepcopy(declared_cluster())
    ic["spec"]["gateway"]["fleetTrustSecretRef"] = trust
    if ca is not None:
        ic["spec"]["gateway"]["fleetCASecretRef"] = ca
    return ic


def declared_with_trust(trust: Obj) -> Obj:
    return {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "InferenceCluster",
        "metadata": {"name": "east"},
        "spec": {
            "cluster": {"source": "Existing", "existing": {"secretRef": {"name": "east-kc"}}},
            "gateway": {"fleetTrustSecretRef": trust},
        },
    }


# --- InferenceGateway spec.tls.secretRef -------------------------------------------------------


def test_a_front_certificate_naming_the_fleet_ca_secret_is_refused_at_admission() -> None:
    [error] = admitted_gateway("modelplane-fleet-ca")
    assert error.startswith('spec.tls.secretRef.name: Invalid value: "string"')
    assert "the fleet CA Secret" in error


@pytest.mark.parametrize("secret", [SERVER_LEAF, CLIENT_LEAF])
def test_a_front_certificate_naming_a_fleet_leaf_secret_is_refused_at_admission(
    secret: str,
) -> None:
    [error] = admitted_gateway(secret)
    assert error.startswith("spec.tls.secretRef.name: ")
    assert "fleet certificate Secret Modelplane issues" in error


def test_the_composition_refuses_a_front_certificate_naming_the_fleet_ca_secret() -> None:
    result = composed_gateway("modelplane-fleet-ca")
    assert result.fatal is not None and result.resources == {}
    assert result.fatal.startswith(
        "InferenceGateway spec.tls.secretRef.name 'modelplane-fleet-ca' is the fleet CA Secret"
    )


@pytest.mark.parametrize("secret", [SERVER_LEAF, CLIENT_LEAF])
def test_the_composition_refuses_a_front_certificate_naming_a_fleet_leaf_secret(
    secret: str,
) -> None:
    result = composed_gateway(secret)
    assert result.fatal is not None and result.resources == {}
    assert f"InferenceGateway spec.tls.secretRef.name {secret!r} is a " in result.fatal


def test_the_composition_refuses_a_front_certificate_naming_a_clusters_own_fleet_ca() -> None:
    """A cluster's ``fleetCASecretRef`` may name another CA Secret in crossplane-system, which
    only the composition, reading the fleet, knows of."""
    custom = copy.deepcopy(FLEET)
    custom[1]["spec"]["gateway"] = {"fleetCASecretRef": {"name": "platform-ca"}}
    assert admitted_gateway("platform-ca") == []
    result = composed_gateway("platform-ca", custom)
    assert result.fatal is not None and result.resources == {}
    assert "'platform-ca' is the fleet CA Secret" in result.fatal


def test_a_ca_secret_outside_crossplane_system_is_no_reason_to_refuse_a_name() -> None:
    custom = copy.deepcopy(FLEET)
    custom[1]["spec"]["gateway"] = {"fleetCASecretRef": {"name": "api-tls", "namespace": "pki"}}
    assert composed_gateway("api-tls", custom).fatal is None


def test_a_front_certificate_of_its_own_is_admitted_and_composed() -> None:
    assert admitted_gateway("api-tls") == []
    result = composed_gateway("api-tls")
    assert result.fatal is None and result.resources


# --- InferenceCluster spec.gateway.fleetTrustSecretRef -----------------------------------------


def test_a_trust_bundle_naming_the_ca_secrets_key_is_refused_at_admission() -> None:
    found = errors(
        "inferenceclusters", declared_with_trust({"name": "modelplane-fleet-ca", "key": "tls.key"})
    )
    assert [e.split(": ")[0] for e in found] == ["spec.gateway.fleetTrustSecretRef.key"]
    assert "must not be tls.key" in found[0]


def test_a_trust_bundle_naming_a_key_that_holds_no_certificates_is_refused_at_admission() -> None:
    """A managed cluster's connection Secret (a kubeconfig) sits in the same namespace."""
    found = errors(
        "inferenceclusters",
        declared_with_trust({"name": "west-cluster-auth-conn-1a2b3c4d", "key": "kubeconfig"}),
    )
    assert [e.split(": ")[0] for e in found] == ["spec.gateway.fleetTrustSecretRef.key"]
    assert "must name a PEM certificate bundle" in found[0]


@pytest.mark.parametrize("secret", [SERVER_LEAF, CLIENT_LEAF])
def test_a_trust_bundle_naming_a_fleet_leaf_secret_is_refused_at_admission(secret: str) -> None:
    found = errors("inferenceclusters", declared_with_trust({"name": secret}))
    assert [e.split(": ")[0] for e in found] == ["spec.gateway.fleetTrustSecretRef.name"]
    assert "fleet certificate Secret Modelplane issues" in found[0]


@pytest.mark.parametrize(
    "trust",
    [
        {"name": "fleet-trust"},
        {"name": "fleet-trust", "key": "trust-bundle.pem"},
        {"name": "modelplane-fleet-ca", "key": "tls.crt"},
    ],
)
def test_a_trust_bundle_of_certificates_is_admitted(trust: Obj) -> None:
    assert errors("inferenceclusters", declared_with_trust(trust)) == []


def test_the_composition_refuses_a_trust_bundle_naming_the_ca_secrets_key() -> None:
    result = compose_cluster(
        Inputs(composite=with_trust({"name": "modelplane-fleet-ca", "key": "tls.key"}))
    )
    assert result.fatal is not None and result.resources == {}
    assert result.fatal.startswith(
        "InferenceCluster spec.gateway.fleetTrustSecretRef.key 'tls.key' is a TLS Secret's "
        "private key (the fleet CA's private key)"
    )


def test_the_composition_refuses_a_trust_bundle_naming_a_credential() -> None:
    trust = {"name": "west-cluster-auth-conn-1a2b3c4d", "key": "kubeconfig"}
    result = compose_cluster(Inputs(composite=with_trust(trust)))
    assert result.fatal is not None and result.resources == {}
    assert "fleetTrustSecretRef.key 'kubeconfig' names no PEM certificate bundle" in result.fatal


@pytest.mark.parametrize("secret", [SERVER_LEAF, CLIENT_LEAF])
def test_the_composition_refuses_a_trust_bundle_naming_a_fleet_leaf_secret(secret: str) -> None:
    result = compose_cluster(Inputs(composite=with_trust({"name": secret, "key": "ca.crt"})))
    assert result.fatal is not None and result.resources == {}
    assert f"fleetTrustSecretRef.name {secret!r} is a " in result.fatal


# --- the offline admission path, and every name Modelplane issues ------------------------------


def test_modelplane_validate_refuses_the_ca_key_at_the_fields_line(tmp_path: Path) -> None:
    path = tmp_path / "gateway.yaml"
    path.write_text(yaml.safe_dump(gateway(secret="modelplane-fleet-ca"), sort_keys=False))
    result = CliRunner().invoke(main, ["validate", str(path)])
    assert result.exit_code == 1, result.output
    [line] = result.stdout.splitlines()
    assert line.startswith(f"{path}:")
    assert "InferenceGateway/main: spec.tls.secretRef.name: Invalid value" in line


@pytest.mark.parametrize("name", NAMES)
def test_every_fleet_certificate_secret_the_fleet_issues_is_one_no_field_may_name(
    name: str,
) -> None:
    """Ties the refused suffixes to the Certificates the compositions compose."""
    issued = [
        c["spec"]["secretName"]
        for c in rendered_fleet(name).composed("Certificate")
        if c["apiVersion"].startswith("cert-manager.io/")
    ]
    for secret in issued:
        assert admitted_gateway(secret) != [], secret
        assert errors("inferenceclusters", declared_with_trust({"name": secret})) != [], secret
