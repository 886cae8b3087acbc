"""No tenant reaches inside the fleet through an external ModelEndpoint: every class of address a
gateway must not dial is refused, at admission where the URL's spelling tells and by the
composition for every other spelling, and a platform team's allow list on the InferenceGateway
opens private hosts (never the gateway itself or a metadata service). Public providers work."""

from __future__ import annotations

import ipaddress
from typing import Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from modelplane.compose.modelendpoint.composer import CLUSTERS, GATEWAYS, compose_endpoint
from modelplane.composer import Inputs, Result
from tests.compose.modelservice.kit import cluster, condition, external_endpoint, gateway
from tests.fleet.xrd import errors
from tests.properties import checks_something, examples, vacuous

FLEET = [cluster("edge", pools=False), cluster("west")]
Verdict = Literal["refused at admission", "refused", "composed"]

NEVER_V4 = ["127.0.0.0/8", "0.0.0.0/8", "169.254.0.0/16", "224.0.0.0/4", "240.0.0.0/4"]
PRIVATE_V4 = ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10"]
NEVER_V6 = ["::1/128", "fe80::/10", "ff00::/8"]
PRIVATE_V6 = ["fc00::/7"]
PUBLIC_V4 = ["8.8.0.0/16", "1.1.1.0/24", "52.0.0.0/10", "104.16.0.0/13"]
PUBLIC_V6 = ["2001:4860::/32", "2606:4700::/32"]
METADATA = [
    "169.254.169.254",
    "metadata.google.internal",
    "metadata",
    "metadata.goog",
    "instance-data.ec2.internal",
    "metadata.azure.com",
    "100.100.100.200",
    "[fd00:ec2::254]",
    "168.63.129.16",
]
PROVIDERS = [
    "api.openai.com",
    "api.together.xyz",
    "api.anthropic.com",
    "generativelanguage.googleapis.com",
    "my-team.openai.azure.com",
    "api.fireworks.ai",
]
EVERYTHING = ["0.0.0.0/0", "::/0"]


def gateways(cidrs: list[str] | None = None, hosts: list[str] | None = None) -> list[dict]:
    """Two gateways on two clusters, each with the same allow list."""
    out = []
    for g in (gateway("a", "edge"), gateway("b", "west")):
        if cidrs or hosts:
            g["spec"]["egress"] = {"allowedCIDRs": cidrs or [], "allowedHosts": hosts or []}
        out.append(g)
    return out


def verdict(url: str, fleet_gateways: list[dict] | None = None) -> tuple[Verdict, Result | None]:
    """What the fleet makes of an endpoint naming ``url``: the API server's admission first (the
    function admits every composite too), then the composition."""
    endpoint = external_endpoint("e", url, ready=False)
    if errors("modelendpoints", endpoint):
        return "refused at admission", None
    required = {GATEWAYS: fleet_gateways or gateways(), CLUSTERS: FLEET}
    result = compose_endpoint(Inputs(composite=endpoint, required=required))
    if result.resources:
        return "composed", result
    routing = condition(result, "RoutingReady")
    assert (routing.status, result.status) == ("False", {}), routing
    return "refused", result


def address_in(
    networks: list[str],
) -> st.SearchStrategy[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    def pick(network: str) -> st.SearchStrategy[ipaddress.IPv4Address | ipaddress.IPv6Address]:
        net = ipaddress.ip_network(network)
        offsets = st.integers(0, net.num_addresses - 1)
        return offsets.map(lambda i: net.network_address + i)

    return st.sampled_from(networks).flatmap(pick)


def spellings(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> list[str]:
    """Every way a resolver (inet_aton, getaddrinfo) reads as ``address``."""
    if address.version == 6:
        return [f"[{address}]", f"[{address.exploded}]"]
    n = int(address)
    a, b, c, d = address.packed
    return [
        str(address),
        str(n),
        hex(n),
        f"0{n:o}",
        f"{a}.{n & 0xFFFFFF}",
        f"{a}.{b}.{n & 0xFFFF}",
        ".".join(f"0{x:o}" for x in (a, b, c, d)),
        ".".join(hex(x) for x in (a, b, c, d)),
        f"[::ffff:{address}]",
        f"[::ffff:{(n >> 16):x}:{(n & 0xFFFF):x}]",
        f"[0:0:0:0:0:ffff:{address}]",
    ]


def spelled(networks: list[str]) -> st.SearchStrategy[str]:
    return address_in(networks).flatmap(lambda a: st.sampled_from(spellings(a)))


labels = st.from_regex(r"[a-z]([a-z0-9-]{0,10}[a-z0-9])?", fullmatch=True)
schemes = st.sampled_from(["http", "https"])
ports = st.one_of(st.just(""), st.integers(1, 65535).map(lambda p: f":{p}"))


def url(scheme: str, host: str, port: str) -> str:
    return f"{scheme}://{host}{port}/v1"


@settings(max_examples=examples(150), deadline=None)
@given(host=spelled(NEVER_V4 + NEVER_V6), port=ports)
def test_loopback_unspecified_link_local_and_multicast_are_refused_in_every_spelling(
    host: str, port: str
) -> None:
    assert verdict(url("http", host, port))[0] != "composed"
    assert verdict(url("http", host, port), gateways(EVERYTHING))[0] != "composed"


@settings(max_examples=examples(150), deadline=None)
@given(host=spelled(PRIVATE_V4 + PRIVATE_V6), port=ports)
def test_private_and_cgnat_addresses_are_refused_in_every_spelling(host: str, port: str) -> None:
    assert verdict(url("http", host, port))[0] != "composed"


@settings(max_examples=examples(100), deadline=None)
@given(address=address_in(PRIVATE_V4 + PRIVATE_V6), port=ports)
def test_a_private_address_the_platform_team_allows_on_every_gateway_is_composed(
    address: ipaddress.IPv4Address | ipaddress.IPv6Address, port: str
) -> None:
    host = f"[{address}]" if address.version == 6 else str(address)
    network = str(ipaddress.ip_network(f"{address}/{address.max_prefixlen - 4}", strict=False))
    assert verdict(url("http", host, port), gateways([network]))[0] == "composed"


@settings(max_examples=examples(100), deadline=None)
@given(host=st.sampled_from(METADATA), scheme=schemes, port=ports)
def test_a_cloud_metadata_service_is_refused_whatever_the_allow_list(
    host: str, scheme: str, port: str
) -> None:
    hosts = [host.strip("[]"), "*.internal", "*.goog", "*.com"]
    for allow in (gateways(), gateways(EVERYTHING, hosts)):
        assert verdict(url(scheme, host, port), allow)[0] != "composed"


@settings(max_examples=examples(100), deadline=None)
@given(
    local=st.sampled_from(["localhost", "{}.localhost"]),
    label=labels,
    scheme=schemes,
    port=ports,
)
def test_localhost_is_refused_whatever_the_allow_list(
    local: str, label: str, scheme: str, port: str
) -> None:
    host = local.format(label)
    everything = gateways(EVERYTHING, [host, "*.localhost"])
    for allow in (gateways(), everything):
        assert verdict(url(scheme, host, port), allow)[0] != "composed"


cluster_local = st.one_of(
    labels,
    st.tuples(labels, labels).map(lambda t: f"{t[0]}.{t[1]}.svc"),
    st.tuples(labels, labels).map(lambda t: f"{t[0]}.{t[1]}.svc.cluster.local"),
    st.tuples(labels, labels).map(lambda t: f"{t[0]}.{t[1]}.internal"),
    labels.map(lambda t: f"{t}.local"),
)


@checks_something
@settings(max_examples=examples(150), deadline=None)
@given(host=cluster_local, scheme=schemes, port=ports)
def test_names_only_a_clusters_resolver_answers_are_refused_unless_every_gateway_allows_them(
    host: str, scheme: str, port: str
) -> None:
    if host.split(".")[0] in ("localhost", "metadata", "instance-data"):
        vacuous("a name refused whatever the allow list (another test's)")
        return
    assert verdict(url(scheme, host, port))[0] == "refused"
    assert verdict(url(scheme, host, port), gateways(hosts=[host]))[0] == "composed"
    suffix = "*." + host.split(".", 1)[1] if "." in host else host
    assert verdict(url(scheme, host, port), gateways(hosts=[suffix]))[0] == "composed"


@settings(max_examples=examples(100), deadline=None)
@given(host=st.sampled_from(PROVIDERS), scheme=schemes, port=ports)
def test_public_providers_are_composed_with_no_allow_list(
    host: str, scheme: str, port: str
) -> None:
    assert verdict(url(scheme, host, port))[0] == "composed"


@settings(max_examples=examples(100), deadline=None)
@given(address=address_in(PUBLIC_V4 + PUBLIC_V6), port=ports)
def test_public_addresses_are_composed_with_no_allow_list(
    address: ipaddress.IPv4Address | ipaddress.IPv6Address, port: str
) -> None:
    host = f"[{address}]" if address.version == 6 else str(address)
    assert verdict(url("http", host, port))[0] == "composed"


# --- the issue's own cases, and what a refusal looks like ---------------------------------------


def test_the_metadata_service_is_refused_at_admission() -> None:
    assert verdict("http://169.254.169.254/latest/meta-data/")[0] == "refused at admission"


def test_the_kubernetes_service_address_is_refused_with_the_reason_in_the_condition() -> None:
    outcome, result = verdict("http://10.96.0.1:443/")
    assert outcome == "refused" and result is not None
    routing = condition(result, "RoutingReady")
    assert routing.reason == "EgressRefused"
    assert "'10.96.0.1' is a private address" in routing.message
    assert "spec.egress.allowedCIDRs" in routing.message
    assert [(e.severity, e.reason) for e in result.events] == [("Warning", "EgressRefused")]


def test_an_in_cluster_service_is_refused_with_the_reason_in_the_condition() -> None:
    host = "prometheus-prometheus.monitoring.svc.cluster.local"
    outcome, result = verdict(f"http://{host}:9090/")
    assert outcome == "refused" and result is not None
    assert "spec.egress.allowedHosts" in condition(result, "RoutingReady").message


def test_a_host_one_gateway_does_not_allow_is_refused() -> None:
    one = gateways(["10.0.0.0/8"])
    one[1]["spec"].pop("egress")
    assert verdict("http://10.1.2.3:8000/", one)[0] == "refused"


def test_an_endpoint_refused_later_loses_what_was_composed_for_it() -> None:
    endpoint = external_endpoint("e", "http://10.1.2.3:8000/", ready=False)
    allowed = Inputs(
        composite=endpoint, required={GATEWAYS: gateways(["10.0.0.0/8"]), CLUSTERS: FLEET}
    )
    composed = compose_endpoint(allowed)
    assert composed.resources
    observed = {k: d.resource for k, d in composed.resources.items()}
    closed = Inputs(
        composite=endpoint, required={GATEWAYS: gateways(), CLUSTERS: FLEET}, observed=observed
    )
    result = compose_endpoint(closed)
    assert result.resources == {}
    assert condition(result, "RoutingReady").reason == "EgressRefused"


def test_a_refusal_of_what_no_gateway_may_reach_needs_no_gateway_read() -> None:
    endpoint = external_endpoint("e", "http://0x7f.1/", ready=False)
    result = compose_endpoint(Inputs(composite=endpoint))
    assert result.resources == {}
    assert "loopback" in condition(result, "RoutingReady").message


# --- names only a cluster's or a network's resolver answers (issue 39) --------------------------

SHORT_SERVICE_NAMES = [
    "kubernetes.default",
    "prometheus.monitoring:9090",
    "vllm.other-tenant:8000",
    "kube-dns.kube-system:53",
    "envoy-gateway.envoy-gateway-system:19000",
]


@pytest.mark.parametrize("host", SHORT_SERVICE_NAMES)
def test_a_kubernetes_short_service_name_is_refused(host: str) -> None:
    """``<service>.<namespace>`` reaches the Service through a resolver's search domains."""
    outcome, result = verdict(f"http://{host}/")
    assert outcome == "refused" and result is not None
    message = condition(result, "RoutingReady").message
    assert "no public suffix" in message and "spec.egress.allowedHosts" in message


@pytest.mark.parametrize("host", ["x.pod", "x.lan", "x.corp", "printer.home", "nas.intranet"])
def test_a_name_under_no_public_suffix_is_refused(host: str) -> None:
    assert verdict(f"https://{host}/v1")[0] == "refused"


@pytest.mark.parametrize(
    "host",
    [
        "169-254-169-254.default.pod",
        "169-254-169-254.default.pod.cluster.local",
        "127-0-0-1.kube-system.pod",
        "fe80--1.default.pod.cluster.local",
    ],
)
def test_a_pod_name_spelling_what_no_gateway_may_reach_is_refused_whatever_the_allow_list(
    host: str,
) -> None:
    """CoreDNS in ``pods insecure`` mode answers ``a-b-c-d.<ns>.pod`` with the address spelled."""
    allow = gateways(EVERYTHING, [host, "*.pod", "*.cluster.local"])
    outcome, result = verdict(f"http://{host}/", allow)
    assert outcome == "refused" and result is not None
    assert "which no gateway may reach" in condition(result, "RoutingReady").message


@pytest.mark.parametrize("host", ["prometheus.monitoring", "x.corp", "10-1-2-3.models.pod"])
def test_a_private_name_every_gateway_allows_is_composed(host: str) -> None:
    """The platform team's allow list still opens what it names, exactly or by suffix."""
    assert verdict(f"http://{host}:8000/", gateways(hosts=[host]))[0] == "composed"
    suffix = "*." + host.split(".", 1)[1]
    assert verdict(f"http://{host}:8000/", gateways(hosts=[suffix]))[0] == "composed"


def test_a_site_local_ipv6_address_is_refused_unless_every_gateway_allows_it() -> None:
    outcome, result = verdict("http://[fec0::1]:8000/")
    assert outcome == "refused" and result is not None
    assert "a site-local address" in condition(result, "RoutingReady").message
    assert verdict("http://[fec0::1]:8000/", gateways(["fec0::/10"]))[0] == "composed"


@pytest.mark.parametrize("host", ["co.uk", "com.au"])
def test_a_public_suffix_itself_is_refused(host: str) -> None:
    assert verdict(f"https://{host}/")[0] == "refused"


@pytest.mark.parametrize("host", ["vllm.dev", "api.example.co.uk", "x.xn--p1ai", "github.io"])
def test_a_name_under_an_icann_suffix_is_composed(host: str) -> None:
    """``github.io`` is a suffix only in the list's private section, which is not consulted."""
    assert verdict(f"https://{host}/v1")[0] == "composed"
