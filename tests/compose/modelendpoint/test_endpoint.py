"""The ModelEndpoint composition: a replica's endpoint is routable once its cluster has a gateway
address; an external one once its backend exists on every gateway's cluster, its credential
copied from a Secret without ever appearing in a manifest."""

from __future__ import annotations

import pytest

from modelplane.compose.modelendpoint.composer import CLUSTER, CLUSTERS, GATEWAYS, compose_endpoint
from modelplane.composer import Inputs, Result
from tests.compose.modelservice.kit import (
    again,
    cluster,
    condition,
    external_endpoint,
    gateway,
    invalid,
    manifests,
    replica_endpoint,
)

FLEET = [cluster("edge", pools=False), cluster("east"), cluster("west")]
GATEWAYS_ = [gateway("a", "edge"), gateway("b", "edge"), gateway("c", "west")]


def external(endpoint: dict, gateways: list[dict] | None = None) -> Inputs:
    return Inputs(
        composite=endpoint,
        required={GATEWAYS: GATEWAYS_ if gateways is None else gateways, CLUSTERS: FLEET},
    )


def routing(result: Result) -> tuple[str, str]:
    c = condition(result, "RoutingReady")
    return c.status, c.reason


# --- a replica's endpoint -----------------------------------------------------------------------


def test_a_replica_endpoint_requires_its_cluster_by_name() -> None:
    result = compose_endpoint(Inputs(composite=replica_endpoint("r0", "east", ready=False)))
    assert result.requirements[CLUSTER].match_name == "east"
    assert routing(result) == ("Unknown", "Waiting")
    assert result.resources == {}


def test_a_replica_endpoint_is_routable_to_its_pool_once_its_cluster_has_an_address() -> None:
    endpoint = replica_endpoint("r0", "east", ready=False)
    result = compose_endpoint(Inputs(composite=endpoint, required={CLUSTER: [cluster("east")]}))
    assert result.resources == {}
    assert result.status == {"routing": {"backendName": "r0-pool", "clusterName": "east"}}
    assert routing(result) == ("True", "ClusterReachable")
    assert "east.fleet.modelplane.internal" in condition(result, "RoutingReady").message


@pytest.mark.parametrize(
    ("found", "reason"),
    [([], "ClusterNotFound"), ([cluster("east", address="")], "WaitingForGateway")],
)
def test_a_replica_endpoint_publishes_no_backend_while_its_cluster_cannot_be_reached(
    found: list[dict], reason: str
) -> None:
    endpoint = replica_endpoint("r0", "east", ready=False)
    result = compose_endpoint(Inputs(composite=endpoint, required={CLUSTER: found}))
    assert result.status == {}
    assert routing(result) == ("False", reason)


# --- an external endpoint -----------------------------------------------------------------------


def test_an_external_endpoint_composes_its_backend_on_each_gateways_cluster_once() -> None:
    result = compose_endpoint(external(external_endpoint("together", ready=False)))
    assert sorted(result.resources) == [
        "backend-tls/edge",
        "backend-tls/west",
        "backend/edge",
        "backend/west",
        "namespace/edge",
        "namespace/west",
    ]
    assert {d.resource["spec"]["providerConfigRef"]["name"] for d in result.resources.values()} == {
        "pc-edge",
        "pc-west",
    }


def test_its_backend_dials_the_url_host_and_port_verifying_https_with_the_system_cas() -> None:
    endpoint = external_endpoint("groq", "https://api.groq.com/openai/v1", ready=False)
    objects = manifests(compose_endpoint(external(endpoint)))
    backend = objects["backend/edge"]
    assert backend["metadata"]["namespace"] == "ml"
    assert backend["spec"] == {"endpoints": [{"fqdn": {"hostname": "api.groq.com", "port": 443}}]}
    assert objects["backend-tls/edge"]["spec"] == {
        "targetRefs": [
            {"group": "gateway.envoyproxy.io", "kind": "Backend", "name": "groq-external"}
        ],
        "validation": {"wellKnownCACertificates": "System", "hostname": "api.groq.com"},
    }


def allowing(cidrs: list[str] | None = None, hosts: list[str] | None = None) -> list[dict]:
    """The fleet's gateways, each letting endpoints reach what the platform team listed."""
    egress = {"allowedCIDRs": cidrs or [], "allowedHosts": hosts or []}
    return [{**g, "spec": {**g["spec"], "egress": egress}} for g in GATEWAYS_]


def test_a_plain_http_endpoint_gets_no_tls() -> None:
    endpoint = external_endpoint("onprem", "http://10.1.2.3:8000/", ready=False)
    objects = manifests(compose_endpoint(external(endpoint, allowing(["10.0.0.0/8"]))))
    assert objects["backend/edge"]["spec"] == {
        "endpoints": [{"ip": {"address": "10.1.2.3", "port": 8000}}]
    }
    assert "backend-tls/edge" not in objects


def test_a_credential_is_copied_from_the_users_secret_and_injected_by_a_filter() -> None:
    auth = {"secretRef": {"name": "together-key", "key": "token"}, "header": "Authorization"}
    result = compose_endpoint(external(external_endpoint("together", auth=auth, ready=False)))
    secret = result.resources["credential/edge"].resource
    assert secret["spec"]["forProvider"]["manifest"] == {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": "together-credential",
            "namespace": "ml",
            "labels": {"app.kubernetes.io/managed-by": "modelplane"},
        },
        "type": "Opaque",
    }
    assert secret["spec"]["references"] == [
        {
            "patchesFrom": {
                "apiVersion": "v1",
                "kind": "Secret",
                "name": "together-key",
                "namespace": "ml",
                "fieldPath": "data[token]",
            },
            "toFieldPath": "data[credential]",
        }
    ]
    injection = manifests(result)["credential-filter/edge"]["spec"]["credentialInjection"]
    assert injection == {
        "header": "Authorization",
        "overwrite": True,
        "credential": {"valueRef": {"group": "", "kind": "Secret", "name": "together-credential"}},
    }


def test_the_backend_is_published_only_once_it_exists_on_every_gateways_cluster() -> None:
    inputs = external(external_endpoint("together", ready=False))
    first = compose_endpoint(inputs)
    assert first.status == {}
    assert routing(first) == ("False", "WaitingForBackend")
    assert "edge, west" in condition(first, "RoutingReady").message
    settled = again(compose_endpoint, inputs, first)
    assert settled.status == {"routing": {"backendName": "together-external"}}
    assert routing(settled) == ("True", "BackendConfigured")


def test_with_no_gateway_nothing_is_composed_and_it_says_so() -> None:
    result = compose_endpoint(external(external_endpoint("together", ready=False), gateways=[]))
    assert result.resources == {}
    assert routing(result) == ("False", "NoGateway")


@pytest.mark.parametrize(
    "url",
    [
        "ftp://x/",
        "https://",
        "https://203.0.113.9/v1",
        "https://host/?q=1",
        "https://host.example:0/v1",
        "https://host.example:99999/v1",
    ],
)
def test_a_url_that_cannot_be_routed_composes_nothing_and_warns(url: str) -> None:
    result = compose_endpoint(external(external_endpoint("bad", url, ready=False)))
    assert result.resources == {}
    assert routing(result) == ("False", "InvalidURL")
    assert [e.severity for e in result.events] == ["Warning"]


def test_until_gateways_and_clusters_are_read_what_was_composed_and_published_is_kept() -> None:
    inputs = external(external_endpoint("together", ready=False))
    settled = again(compose_endpoint, inputs, compose_endpoint(inputs))
    published = {**external_endpoint("together"), "status": settled.status}
    observed = {k: d.resource for k, d in settled.resources.items()}
    held = compose_endpoint(Inputs(composite=published, observed=observed))
    assert set(held.resources) == set(settled.resources)
    assert held.status == settled.status


def test_every_composed_object_passes_its_schema() -> None:
    auth = {"secretRef": {"name": "k"}}
    for endpoint in (
        external_endpoint("together", auth=auth, ready=False),
        external_endpoint("onprem", "http://10.1.2.3:8000/", ready=False),
        external_endpoint("e" * 63, "https://" + "h" * 60 + ".example.com/v1", ready=False),
    ):
        assert invalid(compose_endpoint(external(endpoint))) == {}


def test_a_gateways_cluster_that_stops_being_writable_keeps_what_was_composed_there() -> None:
    inputs = external(external_endpoint("together", ready=False))
    done = again(compose_endpoint, inputs, compose_endpoint(inputs))
    fleet = [cluster("edge", provider=False), cluster("east"), cluster("west")]
    later = Inputs(
        composite=inputs.composite,
        required={GATEWAYS: GATEWAYS_, CLUSTERS: fleet},
        observed={k: d.resource for k, d in done.resources.items()},
    )
    result = compose_endpoint(later)
    assert set(result.resources) == set(done.resources)


def test_with_no_gateway_listed_what_was_composed_is_kept() -> None:
    inputs = external(external_endpoint("together", ready=False))
    done = again(compose_endpoint, inputs, compose_endpoint(inputs))
    later = Inputs(
        composite=inputs.composite,
        required={GATEWAYS: [], CLUSTERS: FLEET},
        observed={k: d.resource for k, d in done.resources.items()},
    )
    assert set(compose_endpoint(later).resources) == set(done.resources)
