"""No cluster holds the keys to the others: the fleet CA's private key never leaves the control
plane, and each workload cluster receives only its own leaf keys.

Whole fleets are rendered (their InferenceClusters, InferenceGateways, ModelServices and
deployments), then every composed object sent to a workload cluster is followed to what it
puts there: its manifest, plus the Secret keys provider-kubernetes patches in from the control
plane (``spec.references[].patchesFrom``, resolved on every observe: provider-kubernetes v1.2.1
``internal/controller/namespaced/object/object.go``, ``resolveReferencies``). The control plane's
Secrets stand for themselves: the fleet CA Secret of every cluster, and the Secret cert-manager
writes for every Certificate composed there (``tls.crt``, ``tls.key``, ``ca.crt``: cert-manager
v1.21.1 ``pkg/controller/certificaterequests/ca/ca.go``, the CA issuer reading ``tls.crt`` and
``tls.key`` of its CA Secret in its own namespace, ``pkg/util/kube/pki.go``).
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pytest

from modelplane import manifests
from modelplane.compose.registry import default_registry
from modelplane.compose.shared.frontdoor import fleet_pki
from modelplane.render import api_server_admission, render_documents
from modelplane.simulate import simulate_observed

Obj = dict[str, Any]
EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
FLEETS = ["service-canary", "service-overflow", "service-regional"]
COMPOSITE = "crossplane.io/composite"


def render(example: str) -> list[Obj]:
    inputs = [m.obj for m in manifests.load([str(EXAMPLES / example)])]
    simulate = functools.partial(simulate_observed, ready_copies=1)
    return render_documents(
        default_registry(), inputs, admit=api_server_admission(), simulate=simulate
    )


def certificates(docs: list[Obj]) -> list[Obj]:
    """The cert-manager Certificates composed on the control plane itself."""
    return [
        d for d in docs if d["kind"] == "Certificate" and d["apiVersion"] == "cert-manager.io/v1"
    ]


def control_plane_secrets(docs: list[Obj]) -> dict[tuple[str, str], dict[str, str]]:
    """Every Secret on the control plane an Object may read, each value naming what it is."""
    secrets: dict[tuple[str, str], dict[str, str]] = {}
    for cluster in (d for d in docs if d["kind"] == "InferenceCluster"):
        pki = fleet_pki(cluster)
        secrets[(pki.namespace, pki.ca_secret)] = {
            "tls.crt": f"certificate of CA {pki.ca_secret}",
            "tls.key": f"PRIVATE KEY of CA {pki.ca_secret}",
        }
    for cert in certificates(docs):
        leaf = cert["spec"]["secretName"]
        secrets[(cert["metadata"]["namespace"], leaf)] = {
            "tls.crt": f"certificate of {leaf}",
            "tls.key": f"private key of {leaf}",
            "ca.crt": "certificate of the issuing CA",
        }
    for gateway in (d for d in docs if d["kind"] == "InferenceGateway"):
        ref = (gateway["spec"]["tls"] or {}).get("secretRef")
        if ref:
            name = ref["name"]
            secrets[(ref.get("namespace", "crossplane-system"), name)] = {
                "tls.crt": f"certificate of {name}",
                "tls.key": f"private key of {name}",
            }
    for endpoint in (d for d in docs if d["kind"] == "ModelEndpoint"):
        auth = endpoint["spec"].get("auth")
        if auth:
            ref = auth["secretRef"]
            namespace = endpoint["metadata"]["namespace"]
            secrets[(namespace, ref["name"])] = {ref["key"]: f"credential {ref['name']}"}
    return secrets


def received(docs: list[Obj]) -> dict[str, list[str]]:
    """Per workload cluster (its ClusterProviderConfig), every Secret value it ends up holding."""
    secrets = control_plane_secrets(docs)
    out: dict[str, list[str]] = {}
    for obj in (d for d in docs if d["kind"] == "Object"):
        held = out.setdefault(obj["spec"]["providerConfigRef"]["name"], [])
        manifest = obj["spec"]["forProvider"]["manifest"]
        if manifest.get("kind") == "Secret":
            held += [str(v) for v in (manifest.get("data") or {}).values()]
            held += [str(v) for v in (manifest.get("stringData") or {}).values()]
        for ref in obj["spec"].get("references") or []:
            source = ref.get("patchesFrom") or {}
            if source.get("kind") != "Secret":
                continue
            key = source["fieldPath"].removeprefix("data[").removesuffix("]")
            held.append(secrets[(source["namespace"], source["name"])][key])
    return out


def leaf_owners(docs: list[Obj]) -> dict[str, str]:
    """Each leaf certificate's Secret, by the provider config of the cluster it belongs on: a
    cluster's own server certificate, a gateway's client certificate on its host cluster."""
    config = {
        d["metadata"]["name"]: d["status"]["providerConfigRef"]["name"]
        for d in docs
        if d["kind"] == "InferenceCluster"
    }
    host = {
        d["metadata"]["name"]: config[d["spec"]["clusterName"]]
        for d in docs
        if d["kind"] == "InferenceGateway"
    }
    owners = {}
    for cert in certificates(docs):
        composite = cert["metadata"]["labels"][COMPOSITE]
        owners[cert["spec"]["secretName"]] = config.get(composite) or host[composite]
    return owners


@pytest.fixture(scope="module", params=FLEETS)
def rendered(request: pytest.FixtureRequest) -> list[Obj]:
    return render(request.param)


def test_no_object_sent_to_a_workload_cluster_carries_a_ca_private_key(rendered: list[Obj]) -> None:
    held = received(rendered)
    assert held, "the fleet composes nothing for its clusters"
    for cluster, values in held.items():
        assert not [v for v in values if "PRIVATE KEY of CA" in v], cluster


def test_a_cluster_receives_no_other_clusters_leaf_key(rendered: list[Obj]) -> None:
    owners = leaf_owners(rendered)
    assert owners, "no leaf certificate is issued on the control plane"
    for cluster, values in received(rendered).items():
        for value in values:
            if (
                value.startswith("private key of ")
                and value.removeprefix("private key of ") in owners
            ):
                assert owners[value.removeprefix("private key of ")] == cluster, value


def test_every_cluster_and_every_front_gateway_gets_a_leaf_of_its_own(rendered: list[Obj]) -> None:
    owners = leaf_owners(rendered)
    clusters = [d for d in rendered if d["kind"] == "InferenceCluster"]
    gateways = [d for d in rendered if d["kind"] == "InferenceGateway"]
    assert len(owners) == len(clusters) + len(gateways)
    assert set(owners.values()) == {c["status"]["providerConfigRef"]["name"] for c in clusters}


def test_every_fleet_leaf_gets_a_new_key_on_renewal_and_is_found_by_its_label(
    rendered: list[Obj],
) -> None:
    # cert-manager v1.21.1 pkg/apis/certmanager/v1/types_certificate.go: rotationPolicy Always
    # generates a new private key on every issuance (the default since v1.18.0, set anyway).
    for cert in certificates(rendered):
        assert cert["spec"]["privateKey"]["rotationPolicy"] == "Always"
        assert cert["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "modelplane"
