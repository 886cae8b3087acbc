"""The data-plane walk `modelplane routes` prints: a request followed through composed objects as
a Gateway API implementation would carry it."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from modelplane.dataplane import Fabric, Request

Obj = dict[str, Any]


def carried(cluster: str, manifest: Obj) -> Obj:
    return {
        "apiVersion": "kubernetes.m.crossplane.io/v1alpha1",
        "kind": "Object",
        "metadata": {"name": manifest["metadata"]["name"]},
        "spec": {
            "forProvider": {"manifest": manifest},
            "providerConfigRef": {"kind": "ClusterProviderConfig", "name": cluster},
        },
    }


def gateway(listeners: list[Obj], name: str = "gw", namespace: str = "infra") -> Obj:
    return {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "Gateway",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"listeners": listeners},
    }


def listener(name: str, allowed: str = "All", port: int = 80) -> Obj:
    return {
        "name": name,
        "protocol": "HTTP",
        "port": port,
        "allowedRoutes": {"namespaces": {"from": allowed}},
    }


def route(name: str, namespace: str, rules: list[Obj], section: str | None = None) -> Obj:
    parent: Obj = {"name": "gw", "namespace": "infra"}
    if section:
        parent["sectionName"] = section
    return {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "HTTPRoute",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"parentRefs": [parent], "rules": rules},
    }


def pool_rule(prefix: str, pool: str, headers: list[Obj] | None = None, **extra: Any) -> Obj:
    match: Obj = {"path": {"type": "PathPrefix", "value": prefix}}
    if headers:
        match["headers"] = headers
    return {
        "matches": [match],
        "backendRefs": [
            {"group": "inference.networking.k8s.io", "kind": "InferencePool", "name": pool}
        ],
        **extra,
    }


def fabric(*manifests: Obj) -> Fabric:
    return Fabric([carried("c", m) for m in manifests])


def send(f: Fabric, path: str, section: str = "a", **headers: str) -> list[tuple[str, str, str]]:
    [li] = [li for li in f.listeners("c") if li.name == section]
    return [(d.kind, d.name, d.path) for d in f.send(li, Request("h", path, headers))]


def test_a_weight_zero_backend_ref_gets_no_share_beside_a_weighted_one() -> None:
    rule = pool_rule("/", "p")
    rule["backendRefs"] = [
        {**rule["backendRefs"][0], "weight": 2},
        {**rule["backendRefs"][0], "name": "parked", "weight": 0},
    ]
    f = fabric(gateway([listener("a")]), route("r", "t", [rule]))
    assert send(f, "/x") == [("InferencePool", "t/p", "/x")]


def test_a_rule_whose_every_backend_ref_weighs_zero_is_answered_500() -> None:
    """Envoy Gateway v1.8.1 (internal/gatewayapi/route.go) answers such a rule 500."""
    rule = pool_rule("/", "p")
    rule["backendRefs"] = [{**rule["backendRefs"][0], "weight": 0}]
    f = fabric(gateway([listener("a")]), route("r", "t", [rule]))
    assert send(f, "/x") == [("DirectResponse", "500: every backendRef weighs 0", "/x")]


def test_a_route_naming_another_section_does_not_attach() -> None:
    f = fabric(
        gateway([listener("a"), listener("b", port=81)]),
        route("r", "t", [pool_rule("/", "p")], section="b"),
    )
    assert send(f, "/x")[0][0] == "Unrouted"
    assert send(f, "/x", section="b") == [("InferencePool", "t/p", "/x")]


def test_a_listener_admitting_its_own_namespace_ignores_another_namespaces_route() -> None:
    f = fabric(
        gateway([listener("a", allowed="Same")]), route("r", "tenant", [pool_rule("/", "p")])
    )
    assert send(f, "/x")[0][0] == "Unrouted"


def test_the_longest_prefix_wins_then_the_most_header_matches() -> None:
    header = [{"type": "Exact", "name": "x-pick", "value": "2"}]
    f = fabric(
        gateway([listener("a")]),
        route(
            "r",
            "t",
            [
                pool_rule("/a/", "short"),
                pool_rule("/a/b/", "long"),
                pool_rule("/a/b/", "two", header),
            ],
        ),
    )
    assert send(f, "/a/x")[0][1] == "t/short"
    assert send(f, "/a/b/x")[0][1] == "t/long"
    assert send(f, "/a/b/x", **{"x-pick": "2"})[0][1] == "t/two"
    assert send(f, "/a/bc")[0][1] == "t/short"  # prefixes match whole path elements


def test_a_prefix_rewrite_gives_the_pool_the_rest_of_the_path() -> None:
    rewrite = {
        "type": "URLRewrite",
        "urlRewrite": {"path": {"type": "ReplacePrefixMatch", "replacePrefixMatch": "/"}},
    }
    f = fabric(
        gateway([listener("a")]), route("r", "t", [pool_rule("/ns/svc/", "p", filters=[rewrite])])
    )
    assert send(f, "/ns/svc/v1/chat") == [("InferencePool", "t/p", "/v1/chat")]


def test_weights_split_the_share_and_a_backend_outside_the_fleet_ends_the_walk() -> None:
    backend = {
        "apiVersion": "gateway.envoyproxy.io/v1alpha1",
        "kind": "Backend",
        "metadata": {"name": "out", "namespace": "t"},
        "spec": {"endpoints": [{"fqdn": {"hostname": "api.example.com", "port": 443}}]},
    }
    rule = pool_rule("/", "p")
    rule["backendRefs"] = [
        {**rule["backendRefs"][0], "weight": 3},
        {"group": "gateway.envoyproxy.io", "kind": "Backend", "name": "out", "weight": 1},
    ]
    f = fabric(gateway([listener("a")]), route("r", "t", [rule]), backend)
    [li] = f.listeners("c")
    got = [(d.kind, d.name, d.share) for d in f.send(li, Request("h", "/x"))]
    assert got == [
        ("InferencePool", "t/p", Fraction(3, 4)),
        ("External", "api.example.com", Fraction(1, 4)),
    ]
