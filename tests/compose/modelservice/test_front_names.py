"""Front route names on a gateway's host cluster, where one namespace holds every tenant's routes:
a name cut to fit carries an 80-bit hash, so no tenant can search for a name that takes over
another's route; names that fit whole, and names routes were composed with, stay as they were."""

from __future__ import annotations

import copy
import re
from typing import Any

from modelplane.compose.modelservice.composer import (
    CLUSTERS,
    GATEWAYS,
    compose_service,
    endpoints_requirement,
)
from modelplane.compose.shared.frontdoor import front_route_name, unavailable_filter_name
from modelplane.composer import Inputs, Result
from modelplane.kube.names import dns_label, unique_label
from tests.compose.modelservice.kit import cluster, gateway, manifests, observed, service

Obj = dict[str, Any]
LONG_GATEWAY = "front-door-for-every-team-in-the-europe-west-region-01"  # 54 characters
LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")


def composed(ms: Obj, gateway_name: str, seen: dict[str, Obj] | None = None) -> Result:
    required = {
        GATEWAYS: [gateway(gateway_name, "edge", address="203.0.113.1")],
        CLUSTERS: [cluster("edge", pools=False)],
        endpoints_requirement(0): [],  # nothing ready: the routes answer through the filter
    }
    return compose_service(Inputs(composite=ms, required=required, observed=seen or {}))


def front(result: Result, gateway_name: str) -> tuple[str, str]:
    """The front route's name and the filter name its sentinel lane is answered 503 through."""
    composed_objects = manifests(result)
    route = composed_objects[f"front/{gateway_name}"]
    [rule] = composed_objects[f"unavailable-route/{gateway_name}"]["spec"]["rules"]
    return route["metadata"]["name"], rule["filters"][0]["extensionRef"]["name"]


def test_routes_of_two_tenants_behind_a_long_gateway_name_differ_by_80_bits() -> None:
    # With 54 characters of gateway name the readable head held nothing else: two tenants'
    # routes differed only by a 32-bit hash, which a tenant can search for in a core-hour.
    assert len(LONG_GATEWAY) == 54
    a, _ = front(composed(service("qwen", "team-a"), LONG_GATEWAY), LONG_GATEWAY)
    b, _ = front(composed(service("qwen", "team-b"), LONG_GATEWAY), LONG_GATEWAY)
    common = len(next(p for p in (a[:n] for n in range(len(a), -1, -1)) if b.startswith(p)))
    assert a != b
    assert len(a) - common >= 20 and len(b) - common >= 20  # 20 hex digits: 80 bits
    for name in (a, b):
        assert len(name) <= 63 and LABEL.fullmatch(name)


def test_names_that_fit_whole_are_those_composed_before() -> None:
    for parts in (("main", "ml", "qwen"), ("inference-gateway", "team-a", "llama-3-70b")):
        assert front_route_name(*parts) == dns_label(*parts)
        assert unavailable_filter_name(*parts) == dns_label(*parts, "unavailable")
    name, _ = front(composed(service("qwen", "ml"), "main"), "main")
    assert name == "main-ml-qwen-" + dns_label("main", "ml", "qwen").rsplit("-", 1)[1]


def test_a_route_composed_with_a_cut_name_keeps_it() -> None:
    # provider-kubernetes leaves the object a renamed manifest named in place (its issue 287):
    # renamed, the old route would go on matching the service's path, ahead of the new one.
    ms = service("qwen", "team-a")
    first = composed(ms, LONG_GATEWAY)
    seen = observed(first)
    legacy = {
        f"front/{LONG_GATEWAY}": dns_label(LONG_GATEWAY, "team-a", "qwen"),
        f"unavailable/{LONG_GATEWAY}": dns_label(LONG_GATEWAY, "team-a", "qwen", "unavailable"),
    }
    for key, name in legacy.items():
        seen[key] = copy.deepcopy(seen[key])
        seen[key]["spec"]["forProvider"]["manifest"]["metadata"]["name"] = name
    again = composed(ms, LONG_GATEWAY, seen)
    route, filter_ = front(again, LONG_GATEWAY)
    assert (route, filter_) == tuple(legacy.values())
    filter_manifest = manifests(again)[f"unavailable/{LONG_GATEWAY}"]
    assert filter_manifest["metadata"]["name"] == filter_


def test_a_kept_name_must_be_the_one_these_parts_had() -> None:
    other = dns_label(LONG_GATEWAY, "team-b", "qwen")
    assert front_route_name(LONG_GATEWAY, "team-a", "qwen", kept=other) == unique_label(
        LONG_GATEWAY, "team-a", "qwen"
    )


def test_a_long_hashed_name_never_equals_a_dns_label_name() -> None:
    # Every dns_label name of several parts, cut or whole, has a hyphen ninth from its end;
    # a long-hashed one a digit of its hash there.
    for n in range(43, 64):  # "-team-a-qwen" after n characters: past 54, cut
        name = unique_label("g" * n, "team-a", "qwen")
        assert name[-9] != "-"
        assert dns_label("g" * n, "team-a", "qwen")[-9] == "-"
