"""The InferenceGateway composition: a front door on its cluster, HTTPS for its hostname, and a
mutually authenticated hop to every cluster of the fleet; nothing on the control plane."""

from __future__ import annotations

import pytest

from modelplane.compose.inferencegateway.composer import (
    CLIENT_CERTIFICATE,
    CLIENT_SECRET,
    CLUSTERS,
    GATEWAY,
    OLD_SHAPE,
    TLS,
    compose_gateway,
)
from modelplane.compose.inferencegateway.shard import BACKEND, BACKEND_TLS
from modelplane.compose.shared.frontdoor import (
    CONTROL_NAMESPACE,
    cluster_backend_name,
    fleet_pki,
    front_gateway_name,
)
from modelplane.composer import Inputs, Result
from tests.compose.inferencegateway.kit import again_with_shards, hop_manifests, hops, shard_results
from tests.compose.modelservice.kit import cluster, condition, gateway, invalid, manifests

FLEET = [cluster("edge", pools=False), cluster("east"), cluster("west", address="")]


def compose(ig: dict, fleet: list[dict] | None = None, observed: dict | None = None) -> Result:
    return compose_gateway(
        Inputs(
            composite=ig,
            required={CLUSTERS: FLEET if fleet is None else fleet},
            observed=observed or {},
        )
    )


def recomposed(ig: dict, fleet: list[dict] | None = None) -> Result:
    inputs = Inputs(composite=ig, required={CLUSTERS: FLEET if fleet is None else fleet})
    return again_with_shards(inputs, compose_gateway(inputs))


def test_everything_but_the_client_certificate_is_composed_on_the_gateways_cluster() -> None:
    result = compose(gateway())
    objects = {k: d.resource for k, d in result.resources.items() if not k.startswith("shard/")}
    for key, obj in {**objects, **hops(result)}.items():
        if key == CLIENT_CERTIFICATE:
            continue
        assert obj["kind"] == "Object", key
        assert obj["spec"]["providerConfigRef"] == {
            "kind": "ClusterProviderConfig",
            "name": "pc-edge",
        }
        assert obj["metadata"]["namespace"] == CONTROL_NAMESPACE


def test_a_gateway_only_cluster_without_node_pools_hosts_a_gateway() -> None:
    result = recomposed(gateway(cluster_name="edge"))
    assert "nodePools" not in FLEET[0]["spec"]
    assert condition(result, "GatewayReady").status == "True"


def test_the_front_gateway_serves_https_for_its_hostname_and_only_modelplanes_routes() -> None:
    gw = manifests(compose(gateway(secret="api-tls", hostname="api.example.com")))[GATEWAY]
    assert gw["metadata"] == {
        "name": "main-front",
        "namespace": "modelplane-system",
        "labels": {"app.kubernetes.io/managed-by": "modelplane"},
    }
    assert gw["spec"]["gatewayClassName"] == "envoy"
    [listener] = gw["spec"]["listeners"]
    assert (listener["protocol"], listener["port"], listener["hostname"]) == (
        "HTTPS",
        443,
        "api.example.com",
    )
    assert listener["tls"] == {
        "mode": "Terminate",
        "certificateRefs": [{"group": "", "kind": "Secret", "name": "main-tls"}],
    }
    assert listener["allowedRoutes"]["namespaces"] == {"from": "Same"}


def test_a_tls_secret_is_copied_to_the_cluster_without_its_keys_in_any_manifest() -> None:
    result = compose(gateway(secret="api-tls"))
    obj = result.resources[TLS].resource
    manifest = obj["spec"]["forProvider"]["manifest"]
    assert manifest == {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": "main-tls",
            "namespace": "modelplane-system",
            "labels": {"app.kubernetes.io/managed-by": "modelplane"},
        },
        "type": "kubernetes.io/tls",
    }
    assert obj["spec"]["references"] == [
        {
            "patchesFrom": {
                "apiVersion": "v1",
                "kind": "Secret",
                "name": "api-tls",
                "namespace": "crossplane-system",
                "fieldPath": f"data[{key}]",
            },
            "toFieldPath": f"data[{key}]",
        }
        for key in ("tls.crt", "tls.key")
    ]


def test_an_issuers_http01_challenge_is_served_on_a_port_80_listener_carrying_nothing_else() -> (
    None
):
    result = compose(gateway(issuer="letsencrypt", hostname="api.example.com"))
    listeners = manifests(result)[GATEWAY]["spec"]["listeners"]
    [acme] = [lst for lst in listeners if lst["name"] == "acme"]
    assert (acme["protocol"], acme["port"], acme["hostname"]) == ("HTTP", 80, "api.example.com")
    assert acme["allowedRoutes"]["namespaces"] == {"from": "Same"}


def test_a_tls_secret_needs_no_port_80_listener() -> None:
    listeners = manifests(compose(gateway(secret="api-tls")))[GATEWAY]["spec"]["listeners"]
    assert [lst["name"] for lst in listeners] == ["https"]


def test_an_issuer_gets_a_certificate_for_the_hostname() -> None:
    cert = manifests(compose(gateway(issuer="letsencrypt", hostname="api.example.com")))[TLS]
    assert cert["kind"] == "Certificate"
    assert cert["spec"]["secretName"] == "main-tls"
    assert cert["spec"]["dnsNames"] == ["api.example.com"]
    assert cert["spec"]["issuerRef"] == {
        "name": "letsencrypt",
        "kind": "ClusterIssuer",
        "group": "cert-manager.io",
    }


def test_the_hop_client_certificate_is_issued_on_the_control_plane_by_the_hosts_issuer() -> None:
    result = compose(gateway())
    cert = result.resources[CLIENT_CERTIFICATE].resource
    assert (cert["kind"], cert["metadata"]["namespace"]) == ("Certificate", "crossplane-system")
    assert cert["spec"]["issuerRef"] == {
        "name": fleet_pki(FLEET[0]).issuer,
        "kind": "Issuer",
        "group": "cert-manager.io",
    }
    assert "client auth" in cert["spec"]["usages"]
    assert manifests(result)[GATEWAY]["spec"]["tls"] == {
        "backend": {
            "clientCertificateRef": {"group": "", "kind": "Secret", "name": "main-fleet-client"}
        }
    }


def test_the_host_receives_the_client_certificate_and_the_fleet_cas_certificate_only() -> None:
    result = compose(gateway())
    leaf = result.resources[CLIENT_CERTIFICATE].resource["spec"]["secretName"]
    copy = result.resources[CLIENT_SECRET].resource
    secret = copy["spec"]["forProvider"]["manifest"]
    assert (secret["metadata"]["name"], secret["type"]) == (
        "main-fleet-client",
        "kubernetes.io/tls",
    )
    assert "data" not in secret and "stringData" not in secret
    assert [
        (r["patchesFrom"]["name"], r["patchesFrom"]["fieldPath"], r["toFieldPath"])
        for r in copy["spec"]["references"]
    ] == [
        (leaf, "data[tls.crt]", "data[tls.crt]"),
        (leaf, "data[tls.key]", "data[tls.key]"),
        ("modelplane-fleet-ca", "data[tls.crt]", "data[ca.crt]"),
    ]


def test_every_cluster_with_a_gateway_address_is_reached_over_mutual_tls() -> None:
    result = compose(gateway())
    objects = hop_manifests(result)
    assert sorted(k for k in objects if k.startswith(BACKEND)) == ["backend/east", "backend/edge"]
    backend = objects[BACKEND + "east"]
    assert backend["metadata"]["name"] == cluster_backend_name("main", "east")
    assert backend["spec"]["endpoints"] == [
        {"fqdn": {"hostname": "east.gw.example.net", "port": 443}}
    ]
    assert backend["spec"]["tls"] == {
        "sni": "east.fleet.modelplane.internal",
        "caCertificateRefs": [{"group": "", "kind": "Secret", "name": "main-fleet-client"}],
        "clientCertificateRef": {"kind": "Secret", "name": "main-fleet-client"},
    }
    policy = objects[BACKEND_TLS + "east"]
    assert policy["spec"] == {
        "targetRefs": [
            {
                "group": "gateway.envoyproxy.io",
                "kind": "Backend",
                "name": backend["metadata"]["name"],
            }
        ],
        "validation": {
            "caCertificateRefs": [{"group": "", "kind": "Secret", "name": "main-fleet-client"}],
            "hostname": "east.fleet.modelplane.internal",
        },
    }


def test_a_cluster_address_that_is_an_ip_is_dialled_as_one() -> None:
    fleet = [cluster("edge"), cluster("east", address="203.0.113.7")]
    backend = hop_manifests(compose(gateway(), fleet))[BACKEND + "east"]
    assert backend["spec"]["endpoints"] == [{"ip": {"address": "203.0.113.7", "port": 443}}]


def test_the_fleet_hostname_defaults_to_the_contracts_name_when_not_published() -> None:
    fleet = [cluster("edge"), cluster("east")]
    del fleet[1]["status"]["gateway"]["fleetHostname"]
    policy = hop_manifests(compose(gateway(), fleet))[BACKEND_TLS + "east"]
    assert policy["spec"]["validation"]["hostname"] == "east.fleet.modelplane.internal"


def test_a_cluster_without_an_address_is_named_unreachable() -> None:
    result = recomposed(gateway())
    assert "no gateway address published by west" in condition(result, "GatewayReady").message


def test_ready_once_programmed_with_an_address_and_both_certificates_issued() -> None:
    first = compose(gateway())
    assert condition(first, "GatewayReady").status == "False"
    assert {k: d.ready for k, d in first.resources.items()}[GATEWAY] == "False"
    result = recomposed(gateway())
    ready = condition(result, "GatewayReady")
    assert (ready.status, ready.reason) == ("True", "Programmed")
    assert (
        result.status["address"] == "main-front.modelplane-system.pc-edge.gateways.modelplane.test"
    )
    assert ready.message.startswith(
        "https://main.example.com on cluster edge at "
        "main-front.modelplane-system.pc-edge.gateways.modelplane.test"
    )
    assert result.status["gateway"] == {
        "name": front_gateway_name("main"),
        "namespace": "modelplane-system",
        "clusterName": "edge",
    }
    assert {d.ready for d in result.resources.values()} == {"True"}


def test_until_the_fleet_is_read_everything_composed_is_kept() -> None:
    done = recomposed(gateway())
    observed = {k: d.resource for k, d in done.resources.items()}
    result = compose_gateway(Inputs(composite=gateway(), observed=observed))
    assert set(result.resources) == set(done.resources)
    assert condition(result, "GatewayReady").reason == "WaitingForFleet"


@pytest.mark.parametrize(
    ("fleet", "reason"),
    [
        ([cluster("east")], "ClusterNotFound"),
        ([cluster("edge", provider=False)], "WaitingForCluster"),
    ],
)
def test_a_host_cluster_not_ready_keeps_what_was_composed_and_says_why(
    fleet: list[dict], reason: str
) -> None:
    done = recomposed(gateway())
    observed = {k: d.resource for k, d in done.resources.items()}
    result = compose(gateway(), fleet, observed)
    assert set(result.resources) == set(done.resources)
    assert (condition(result, "GatewayReady").status, condition(result, "GatewayReady").reason) == (
        "False",
        reason,
    )


def test_a_cluster_whose_stack_publishes_no_gateway_class_yet_gets_nothing_and_says_why() -> None:
    result = compose(gateway(), [cluster("edge", class_name=None)])
    assert result.resources == {}
    ready = condition(result, "GatewayReady")
    assert (ready.status, ready.reason) == ("False", "WaitingForCluster")
    assert "publishes no status.gateway.className" in ready.message


def test_a_gateway_class_stops_being_published_keeps_the_class_it_was_applied_with() -> None:
    first = compose(gateway())
    fleet = [cluster("edge", class_name=None), cluster("east")]
    result = compose(gateway(), fleet, {GATEWAY: first.resources[GATEWAY].resource})
    assert manifests(result)[GATEWAY]["spec"]["gatewayClassName"] == "envoy"


def test_the_v0_3_1_shape_fails_the_composition_saying_what_the_new_shape_is() -> None:
    old = {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "InferenceGateway",
        "metadata": {"name": "default"},
        "spec": {"backend": "Traefik", "traefik": {"version": "40.2.0"}},
    }
    result = compose(old)
    assert result.fatal == OLD_SHAPE
    assert "spec.clusterName" in OLD_SHAPE and "spec.tls" in OLD_SHAPE


@pytest.mark.parametrize("tls", ["secret", "issuer"])
def test_every_composed_object_passes_its_schema(tls: str) -> None:
    ig = gateway(secret="api-tls") if tls == "secret" else gateway()
    fleet = [*FLEET, cluster("ip", address="203.0.113.7"), cluster("c" * 60 + ".example.net")]
    result = compose(ig, fleet)
    assert (
        invalid(Result(resources={k: d for k, d in result.resources.items() if "/" not in k})) == {}
    )
    for shard in shard_results(result, settled=False).values():
        assert invalid(shard) == {}


def test_two_gateways_on_one_cluster_never_share_an_object() -> None:
    a = {**manifests(compose(gateway("a", "edge"))), **hop_manifests(compose(gateway("a", "edge")))}
    b = {**manifests(compose(gateway("b", "edge"))), **hop_manifests(compose(gateway("b", "edge")))}
    names = lambda objs: {(m["kind"], m["metadata"]["name"]) for m in objs.values()}  # noqa: E731
    assert not names(a) & names(b)


def test_the_same_inputs_compose_the_same_output() -> None:
    assert compose(gateway()) == compose(gateway())


def test_a_cluster_listed_before_its_status_was_written_keeps_the_hop_to_it() -> None:
    done = recomposed(gateway())
    stale = [c if c["metadata"]["name"] != "east" else {**c, "status": None} for c in FLEET]
    stale = [{k: v for k, v in c.items() if v is not None} for c in stale]
    observed = {k: d.resource for k, d in done.resources.items()}
    result = compose(gateway(), stale, observed)
    for key in (BACKEND + "east", BACKEND_TLS + "east"):
        assert hops(result)[key] == hops(done)[key]


def test_a_tls_secret_outside_crossplane_system_is_never_copied() -> None:
    ig = gateway(secret="admin")
    ig["spec"]["tls"]["secretRef"]["namespace"] = "kube-system"
    result = compose(ig)
    assert result.fatal is not None
    assert "spec.tls.secretRef.namespace 'kube-system'" in result.fatal
    assert result.resources == {}


def test_a_tls_secret_is_read_from_crossplane_system() -> None:
    result = compose(gateway(secret="api-tls"))
    [source] = {
        r["patchesFrom"]["namespace"] for r in result.resources[TLS].resource["spec"]["references"]
    }
    assert source == "crossplane-system"


def test_on_a_large_fleet_the_condition_names_ten_clusters_and_counts_the_rest() -> None:
    fleet = [cluster("edge"), *(cluster(f"c{i:02d}") for i in range(30))]
    fleet += [cluster(f"dark{i:02d}", address="") for i in range(12)]
    message = condition(recomposed(gateway(), fleet), "GatewayReady").message
    assert "reaches the fleet listener of 31 clusters: c00, c01, c02, c03, c04, c05, c06, " in (
        message
    )
    assert "c07, c08, c09 and 21 more; no gateway address published by dark00, " in message
    assert message.endswith("dark08, dark09 and 2 more")


def test_on_a_large_fleet_every_cluster_reached_still_gets_its_backend() -> None:
    fleet = [cluster("edge"), *(cluster(f"c{i:02d}") for i in range(30))]
    backends = [k for k in hops(compose(gateway(), fleet)) if k.startswith(BACKEND)]
    assert len(backends) == 31
