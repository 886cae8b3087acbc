"""The Gateway API as Envoy Gateway v1.8.1 implements it: how a route attaches to a listener and
which listeners a request can reach a replica through (walked with ``modelplane.dataplane``)."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from modelplane.compose.inferencecluster.components import ENVOY_GATEWAY_COMPONENT
from modelplane.compose.inferencecluster.status import GATEWAY_API_MINIMUM
from modelplane.compose.modelservice.composer import endpoints_requirement
from modelplane.compose.shared.frontdoor import (
    ENDPOINT_HEADER,
    POOL_HEADER,
    client_secret,
    front_tls_secret,
)
from modelplane.dataplane import Fabric, Listener, Request
from tests.compose.modelservice import kit
from tests.compose.through import run
from tests.conformance.fleets import NAMES, SERVED, rendered_fleet
from tests.upstream_crds import UPSTREAM_CRDS

Obj = dict[str, Any]
FLEET_CA_COPY = "modelplane-fleet-ca"
"""The stack's copy of the fleet CA on each cluster (inferencecluster/gateway.py)."""


def fabric(name: str) -> Fabric:
    return Fabric(rendered_fleet(name).docs)


def _fleet_ca_copies(name: str) -> set[tuple[str, str]]:
    """(cluster, namespace/name) of every Secret whose data is patched from the control plane's
    fleet CA, as provider-kubernetes patches it in."""
    out = set()
    for r in rendered_fleet(name).remote("Secret"):
        refs = r.object["spec"].get("references") or []
        if r.manifest["metadata"]["name"] == FLEET_CA_COPY and any(
            "patchesFrom" in ref for ref in refs
        ):
            out.add((r.cluster, f"{r.manifest['metadata']['namespace']}/{FLEET_CA_COPY}"))
    return out


@pytest.mark.parametrize("name", NAMES)
def test_every_listener_reaching_a_replica_pool_requires_a_client_certificate_from_the_fleet_ca(
    name: str,
) -> None:
    """Every listener of every composed Gateway, every route attached to it (Gateway API
    v1.5.1 attachment: parentRef name, namespace, sectionName; allowedRoutes), every rule: a
    rule naming an InferencePool (or a Service, a pod's address) is reachable only through a
    listener whose Envoy Gateway ClientTrafficPolicy (v1.8.1, api/v1alpha1/tls_types.go
    ClientValidationContext, not optional) requires a certificate signed by the fleet CA."""
    f = fabric(name)
    copies = _fleet_ca_copies(name)
    open_paths = []
    reaching = 0
    for cluster in f.objects:
        for listener in f.listeners(cluster):
            cas = {(cluster, ca) for ca in f.requires_client_certificate(listener)}
            for route in f.attached(listener):
                for rule in route["spec"].get("rules") or []:
                    for ref in rule.get("backendRefs") or []:
                        if ref.get("kind", "Service") not in ("InferencePool", "Service"):
                            continue
                        reaching += 1
                        if not cas or not cas <= copies:
                            open_paths.append((listener.label, route["metadata"]["name"]))
    assert open_paths == []
    routes = [r for r in rendered_fleet(name).remote("HTTPRoute")]
    assert reaching or not routes


@pytest.mark.parametrize("name", NAMES)
def test_every_composed_route_attaches_to_a_composed_listener(name: str) -> None:
    """A route whose parentRef names no listener is never programmed (Gateway API v1.5.1,
    HTTPRoute status: Accepted False, NoMatchingParent): every route Modelplane composes
    attaches to a listener of a Gateway composed on the same cluster."""
    f = fabric(name)
    attached = {
        (li.cluster, r["metadata"].get("namespace"), r["metadata"]["name"])
        for cluster in f.objects
        for li in f.listeners(cluster)
        for r in f.attached(li)
    }
    unattached = [
        (r.cluster, r.manifest["metadata"]["name"])
        for r in rendered_fleet(name).remote("HTTPRoute")
        if (r.cluster, r.manifest["metadata"].get("namespace"), r.manifest["metadata"]["name"])
        not in attached
    ]
    assert unattached == []


def _front_requests(name: str) -> list[tuple[str, Request]]:
    """(gateway, request) for every ModelService on every InferenceGateway serving it."""
    f = rendered_fleet(name)
    out = []
    for ig in f.composites("InferenceGateway"):
        for ms in f.composites("ModelService"):
            serving = {g["name"] for g in ms["status"].get("gateways") or []}
            if ig["metadata"]["name"] not in serving:
                continue
            path = f"/{ms['metadata']['namespace']}/{ms['metadata']['name']}/v1/completions"
            out.append((ig["metadata"]["name"], Request(ig["spec"]["hostname"], path)))
    return out


def _front_listener(f: Fabric, name: str, gateway: str) -> Listener:
    gateways = rendered_fleet(name).composites("InferenceGateway")
    ig = next(g for g in gateways if g["metadata"]["name"] == gateway)
    published = ig["status"]["gateway"]
    return next(
        li
        for li in f.listeners(published["clusterName"])
        if li.gateway["metadata"]["name"] == published["name"]
        and li.spec.get("protocol") == "HTTPS"
    )


@pytest.mark.parametrize("name", SERVED)
def test_a_client_cannot_steer_its_request_with_the_steering_headers(name: str) -> None:
    """Per-backendRef RequestHeaderModifier (Gateway API v1.5.1, HTTPBackendRef.filters; Envoy
    Gateway v1.8.1 supports it there) sets or removes both steering headers on every lane, so a
    request carrying its own reaches exactly what one without them reaches."""
    f = fabric(name)
    for gateway, request in _front_requests(name):
        listener = _front_listener(f, name, gateway)
        plain = f.send(listener, request)
        forged = Request(
            request.host,
            request.path,
            {POOL_HEADER: "anything-pool", ENDPOINT_HEADER: "anything"},
        )
        assert [(d.kind, d.cluster, d.name, d.share) for d in f.send(listener, forged)] == [
            (d.kind, d.cluster, d.name, d.share) for d in plain
        ]


@pytest.mark.parametrize("name", SERVED)
def test_every_request_through_the_front_door_reaches_a_pool_only_over_client_certificates(
    name: str,
) -> None:
    """Walked end to end: every hop after the front door's public listener required a client
    certificate, and the engine sees the path it would see when called directly."""
    f = fabric(name)
    for gateway, request in _front_requests(name):
        for d in f.send(_front_listener(f, name, gateway), request):
            assert d.kind in ("InferencePool", "External", "DirectResponse"), d
            if d.kind == "InferencePool":
                assert d.client_certificate[1:] and all(d.client_certificate[1:]), d
                assert d.path == "/v1/completions"


@pytest.mark.parametrize("name", SERVED)
def test_the_walked_routes_carry_exactly_the_shares_the_plan_decided(name: str) -> None:
    """``modelplane routes`` walks the composed objects; on every fleet the shares it finds are
    the plan's integer weights, endpoint by endpoint."""
    from fractions import Fraction

    from modelplane.compose.modelservice.plan import plan_service
    from modelplane.compose.shared.frontdoor import by_name
    from modelplane.routes import _endpoint_of, _entries, _selects, carried

    f = rendered_fleet(name)
    endpoints = f.composites("ModelEndpoint")
    clusters = by_name(f.composites("InferenceCluster"))
    gateways = {g["metadata"]["name"]: g for g in f.composites("InferenceGateway")}
    fab = fabric(name)
    checked = 0
    for ms in f.composites("ModelService"):
        entries = ms["spec"]["endpoints"]
        selected = [[e for e in endpoints if _selects(entry, ms, e)] for entry in entries]
        plan = plan_service(ms, selected, clusters)
        total = sum(lane.weight for lane in plan.lanes)
        planned = {lane.endpoint: Fraction(lane.weight, total) for lane in plan.lanes}
        mine = _entries(selected)
        for g in ms["status"].get("gateways") or []:
            walked: dict[str, Fraction] = {}
            for d in carried(ms, gateways[g["name"]], fab) or []:
                found = _endpoint_of(d, mine)
                key = found[1]["metadata"]["name"] if found else f"{d.kind} {d.name}"
                walked[key] = walked.get(key, Fraction(0)) + d.share
            if not plan.lanes:
                assert set(walked) <= {k for k in walked if k.startswith("DirectResponse")}
            else:
                assert walked == planned
            checked += 1
    assert checked


GATEWAY_API_KINDS = ("gatewayclasses", "gateways", "httproutes", "backendtlspolicies")


@pytest.mark.parametrize("plural", GATEWAY_API_KINDS)
def test_the_tests_validate_against_the_gateway_api_bundle_the_pinned_chart_installs(
    plural: str,
) -> None:
    """envoyproxy/gateway v1.8.1, charts/gateway-helm/charts/crds/crds/gatewayapi-crds.yaml: the
    chart installs Gateway API v1.5.1, experimental channel. The composed objects are validated
    against those CRDs (tests/upstream/crds), and an InferenceCluster refuses a cluster whose
    bundle is older (status.GATEWAY_API_MINIMUM), so the three agree."""
    crd = yaml.safe_load((UPSTREAM_CRDS / f"gateway.networking.k8s.io_{plural}.yaml").read_text())
    annotations = crd["metadata"]["annotations"]
    minimum = "v" + ".".join(map(str, GATEWAY_API_MINIMUM))
    assert annotations["gateway.networking.k8s.io/bundle-version"] == minimum
    assert annotations["gateway.networking.k8s.io/channel"] == "experimental"


def test_the_pinned_envoy_gateway_is_the_one_whose_crds_the_tests_hold() -> None:
    """The Envoy Gateway CRDs under tests/upstream/crds are v1.8.1's, the default pin."""
    readme = (UPSTREAM_CRDS.parent / "README.md").read_text()
    rows = [r for r in readme.splitlines() if r.startswith("| `gateway.envoyproxy.io_")]
    assert rows and all(f"| {ENVOY_GATEWAY_COMPONENT.version} (" in r for r in rows)


@pytest.mark.parametrize("name", SERVED)
def test_a_replica_called_directly_is_refused_without_a_certificate_the_fleet_ca_signed(
    name: str,
) -> None:
    """A request straight to a cluster's fleet listener, for a replica's own path: refused with no
    client certificate, or with one no fleet CA signed (the front door's server certificate);
    carried to the replica's pool with the certificate a front gateway presents."""
    f = rendered_fleet(name)
    fab = fabric(name)
    [ig, *_] = f.composites("InferenceGateway")
    host = ig["status"]["gateway"]
    on_host = f"{host['clusterName']}/{host['namespace']}"
    client = f"{on_host}/{client_secret(ig['metadata']['name'])}"
    server = f"{on_host}/{front_tls_secret(ig['metadata']['name'])}"
    for replica in f.composites("ModelReplica"):
        cluster = replica["spec"]["clusterName"]
        [listener] = [li for li in fab.listeners(cluster) if li.name == "fleet"]
        meta = replica["metadata"]
        path = f"/{meta['namespace']}/{meta['name']}/v1/completions"
        hostname = f"{cluster}.fleet.modelplane.internal"
        for presented in ("", server):
            [refused] = fab.send(listener, Request(hostname, path, {}, presented))
            assert refused.kind == "Refused", presented
        [reached] = fab.send(listener, Request(hostname, path, {}, client))
        assert (reached.kind, reached.cluster, reached.path) == (
            "InferencePool",
            cluster,
            "/v1/completions",
        )


# --- weight 0: envoyproxy/gateway v1.8.1, internal/gatewayapi/route.go, processHTTPRouteRules ---
# Every backendRef goes through processDestination first (a reference that does not resolve
# lands in the route's ResolvedRefs), then ``if ds.Weight != nil && *ds.Weight == 0 { continue }``
# leaves a weight-0 one out of the rule's destination settings: it gets no request and reaches
# no proxy. A rule with no weighted destination left is answered 500 ("all the valid destination
# settings ... is 0"), unless a filter gave the route a direct response first (the switch skips
# routes whose DirectResponse is set; internal/xds/translator/route.go then serves that).

STABLE = {"track": "stable"}
CANARY = {"track": "canary"}


def front_rule(*entries: tuple[int, dict[str, str]]) -> tuple[Obj, dict[str, Obj]]:
    """The front route's rule for a service of ``entries`` over replicas on east and west, and
    the composed resources by key."""
    required = {
        "inference-gateways": [kit.gateway("main", "edge")],
        "inference-clusters": [
            kit.cluster("edge", pools=False),
            kit.cluster("east"),
            kit.cluster("west"),
        ],
        endpoints_requirement(0): [kit.replica_endpoint("s0", "east", labels=STABLE)],
        endpoints_requirement(1): [kit.replica_endpoint("c0", "west", labels=CANARY)],
    }
    rsp = run(kit.service("qwen", "ml", *entries), {}, required)
    assert rsp.fatal is None, rsp.fatal
    objects = {k: o for k, o in rsp.resources.items() if o["kind"] == "Object"}
    manifests = {k: o["spec"]["forProvider"]["manifest"] for k, o in objects.items()}
    [rule] = manifests["front/main"]["spec"]["rules"]
    return rule, manifests


def test_a_parked_lane_is_a_weight_zero_backend_ref_beside_weighted_ones() -> None:
    """A parked entry beside a weighted one: its lane is a backendRef of weight 0 (Envoy Gateway
    resolves it and sends it nothing) in a rule that still has a weighted destination, so the
    rule is not answered 500; the parked pool keeps its fleet rule for when its weight rises."""
    rule, manifests = front_rule((1, STABLE), (0, CANARY))
    weights = sorted(ref["weight"] for ref in rule["backendRefs"])
    assert weights[0] == 0 and weights[-1] > 0
    assert "filters" not in rule
    fleet_pools = {
        ref["name"]
        for r in manifests["fleet/west"]["spec"]["rules"]
        for ref in r["backendRefs"]
        if ref["kind"] == "InferencePool"
    }
    assert "c0-pool" in fleet_pools


def test_a_rule_whose_every_lane_is_parked_answers_with_the_503_filter_not_envoy_s_500() -> None:
    """Every entry parked: every lane's backendRef weighs 0, which Envoy Gateway answers 500 with
    nothing else weighted; the rule's one weighted backendRef is the sentinel lane, sent to the
    gateway's own fleet listener, whose sentinel route answers with the unavailable filter (an
    HTTPRouteFilter direct response)."""
    rule, manifests = front_rule((0, STABLE), (0, CANARY))
    weighted = [ref for ref in rule["backendRefs"] if ref["weight"]]
    assert [ref["weight"] for ref in weighted] == [1]
    assert len(rule["backendRefs"]) == 3 and "filters" not in rule
    [sentinel_rule] = manifests["unavailable-route/main"]["spec"]["rules"]
    [ext] = [f["extensionRef"] for f in sentinel_rule["filters"] if f["type"] == "ExtensionRef"]
    [unavailable] = [m for m in manifests.values() if m["metadata"]["name"] == ext["name"]]
    assert (unavailable["kind"], unavailable["spec"]["directResponse"]["statusCode"]) == (
        "HTTPRouteFilter",
        503,
    )
