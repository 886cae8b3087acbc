"""Envoy Gateway v1.8.1 (097ab899b9d0) and the Envoy it runs (v1.38.1, its default image,
api/v1alpha1/shared_types.go ``DefaultEnvoyProxyImage``): how a gateway's proxy resolves the
hostnames Backends name, so a tenant's endpoint host is dialled as written and never completed
with the proxy pod's search domains (``<ns>.svc.cluster.local`` and the rest of resolv.conf).

Envoy Gateway offers no DNS field for search domains: api/v1alpha1/dns_types.go ``DNS`` (on a
BackendTrafficPolicy or a Backend's cluster settings) has ``dnsRefreshRate``, ``respectDnsTtl`` and
``lookupFamily`` only, and internal/xds/translator/cluster.go ``buildXdsCluster`` builds a Backend's
``fqdn`` endpoint as a STRICT_DNS cluster with no resolver of its own, so Envoy resolves it with the
server-wide resolver. That one is configured by the bootstrap, which the EnvoyProxy's ``bootstrap``
merges into Envoy Gateway's default (api/v1alpha1/envoyproxy_types.go ``ProxyBootstrap``, type
``Merge``; internal/xds/bootstrap/util.go ``mergeBootstrap``, a proto merge; handed to Envoy as
``--config-yaml`` by internal/infrastructure/common/proxy_args.go ``BuildProxyArgs``). Envoy's
c-ares resolver turns ``dns_resolver_options.no_default_search_domain`` into ``ARES_FLAG_NOSEARCH``
(source/extensions/network/dns_resolver/cares/dns_impl.cc ``defaultAresOptions``). The proxy's own
xDS address needs no search: internal/infrastructure/kubernetes/proxy/resource.go writes it
``envoy-gateway.<namespace>.svc.<domain>.``, fully qualified."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from tests.conformance.fleets import NAMES, rendered_fleet

Obj = dict[str, Any]
CARES = "type.googleapis.com/envoy.extensions.network.dns_resolver.cares.v3.CaresDnsResolverConfig"


def _merged(proxy: Obj) -> Obj:
    bootstrap = proxy["spec"].get("bootstrap") or {}
    assert bootstrap.get("type") == "Merge", proxy["metadata"]
    merged = yaml.safe_load(bootstrap["value"])
    assert isinstance(merged, dict)
    return merged


@pytest.mark.parametrize("name", NAMES)
def test_every_composed_envoy_proxy_resolves_names_without_search_domains(name: str) -> None:
    proxies = rendered_fleet(name).remote("EnvoyProxy")
    assert proxies
    for proxy in proxies:
        resolver = _merged(proxy.manifest)["typed_dns_resolver_config"]
        assert resolver["name"] == "envoy.network.dns_resolver.cares"
        assert resolver["typed_config"]["@type"] == CARES
        assert resolver["typed_config"]["dns_resolver_options"] == {
            "no_default_search_domain": True
        }


@pytest.mark.parametrize("name", NAMES)
def test_the_bootstrap_merge_changes_nothing_envoy_gateway_guards(name: str) -> None:
    """internal/xds/bootstrap/validate.go ``Validate`` refuses a bootstrap whose
    ``dynamic_resources`` or ``xds_cluster`` differ from the default (the GatewayClass is then
    not accepted); a merge that adds one top-level field leaves both as they are."""
    for proxy in rendered_fleet(name).remote("EnvoyProxy"):
        assert set(_merged(proxy.manifest)) == {"typed_dns_resolver_config"}


@pytest.mark.parametrize("name", NAMES)
def test_every_backend_dialled_by_name_is_dialled_by_a_proxy_that_does_not_search(
    name: str,
) -> None:
    """A Backend is dialled by the proxies of the Gateways on its cluster; each Gateway's class
    names its EnvoyProxy (``parametersRef``), whose bootstrap the class's proxies run."""
    f = rendered_fleet(name)
    by_cluster: dict[str, list[Obj]] = {}
    for r in f.remote("Backend"):
        if any("fqdn" in e for e in r.manifest["spec"].get("endpoints") or []):
            by_cluster.setdefault(r.cluster, []).append(r.manifest)
    proxies = {
        (r.cluster, r.manifest["metadata"]["namespace"], r.manifest["metadata"]["name"]): (
            r.manifest
        )
        for r in f.remote("EnvoyProxy")
    }
    classes = {
        (r.cluster, r.manifest["metadata"]["name"]): r.manifest for r in f.remote("GatewayClass")
    }
    for cluster in by_cluster:
        gateways = [r.manifest for r in f.remote("Gateway") if r.cluster == cluster]
        assert gateways, cluster
        for gateway in gateways:
            ref = classes[(cluster, gateway["spec"]["gatewayClassName"])]["spec"]["parametersRef"]
            proxy = proxies[(cluster, ref["namespace"], ref["name"])]
            options = _merged(proxy)["typed_dns_resolver_config"]["typed_config"]
            assert options["dns_resolver_options"]["no_default_search_domain"] is True
