"""A front door two teams share, on the real API servers (docs/design/shared-front-door.md).

One InferenceGateway with ``spec.auth``, ``spec.limits`` and ``spec.priority``, a caller Secret
per team on the control plane, and a ModelService per team called by model name: team search's
open only to its own callers and to ``ops``, team ads' to every authenticated caller. On the
gateway's cluster they compose the caller Secrets' copies (entries patched in by
provider-kubernetes, never in a manifest), the API-key SecurityPolicy, the header guard, the
per-caller rate limits, the priority policy with the per-caller model lists, each service's
AIGatewayRoute and search's authorization and 403 body, each admitted by Envoy Gateway v1.8.1's
and Envoy AI Gateway v1.1.0's CRDs there; the control plane refuses a model name or a callers
list it could not serve, naming the field.

Envoy and the AI Gateway's controller do not run in this tier (Envoy is C++, no Go module): what
the proxy does with these objects is held by the conformance tests
(tests/conformance/test_envoy_gateway_api_key.py, test_envoy_rate_limits.py,
test_envoy_ai_gateway_routing.py, test_envoy_gateway_authorization.py). The gateway's client
certificate is a cert-manager Certificate, which the tier does not run: its CRD is applied here
so the gateway composes whole (nothing waits for it to be issued). The services select no
endpoint, so their routes answer 503 until a deployment serves.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any

import pytest
import yaml

from e2e import control
from e2e.environment import Environment
from modelplane.compose.inferencegateway.callers import CALLER_HEADER, copy_name
from modelplane.compose.inferencegateway.priority import (
    FAIRNESS_HEADERS,
    OBJECTIVE_HEADERS,
    PRIORITY_HEADER,
)
from modelplane.compose.modelservice.models import MODEL_HEADER, model_route_name
from modelplane.kube.names import dns_label, unique_label
from tests.e2e.conftest import (
    ROOT,
    add_fleet,
    documents,
    eventually,
    guide_cluster,
    namespace,
    retire,
    tls_secret,
)
from tests.envoy_lua import on_request

pytestmark = pytest.mark.e2e

CLUSTER = "front-a"
GATEWAY = "shared-front"
TLS_SECRET = "shared-front-tls"
CALLERS = {"e2e.modelplane.ai/callers": "true"}
TEAMS = {
    # team: (caller Secret, its one caller, namespace and service, the model its engines serve)
    "search": ("search-callers", "search-prod", "search", "qwen", "Qwen/Qwen3-8B"),
    "ads": ("ads-callers", "ads-prod", "ads", "llama", "meta-llama/Llama-3.1-8B-Instruct"),
}
LIMITS = [
    {"callers": {"names": ["search-prod"]}, "requestsPerMinute": 60, "perModel": True},
    {"tokensPerMinute": {"input": 1000, "output": 500, "total": 1500}},
]
PRIORITY = [{"callers": {"names": ["search-prod"]}, "value": 2}]
WAIT = 300


def gateway() -> dict[str, Any]:
    (gw, _service) = documents(ROOT / "docs/getting-started/frontdoor.yaml")
    gw["metadata"] = {"name": GATEWAY}
    gw["spec"]["clusterName"] = CLUSTER
    gw["spec"]["tls"] = {"secretRef": {"name": TLS_SECRET}}
    gw["spec"]["auth"] = {"callerSecretSelector": {"matchLabels": CALLERS}}
    gw["spec"]["limits"] = LIMITS
    gw["spec"]["priority"] = PRIORITY
    return gw


def service(team: str) -> dict[str, Any]:
    (_gw, svc) = documents(ROOT / "docs/getting-started/frontdoor.yaml")
    _secret, _caller, space, name, served = TEAMS[team]
    svc["metadata"] = {"name": name, "namespace": space}
    svc["spec"]["endpoints"][0]["selector"]["matchLabels"] = {"e2e.modelplane.ai/none": name}
    svc["spec"]["modelName"] = served
    if team == "search":
        svc["spec"]["callers"] = {"names": ["ops"], "selector": {"matchLabels": {"team": team}}}
    return svc


def secrets(hostname: str) -> list[dict[str, Any]]:
    meta = {"namespace": control.NAMESPACE}
    tls = tls_secret(TLS_SECRET, hostname, "e2e-shared-front")
    teams = [
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "type": "Opaque",
            "metadata": {"name": secret, "labels": CALLERS | {"team": team}, **meta},
            "stringData": {caller: f"{caller}-key"},
        }
        for team, (secret, caller, *_rest) in TEAMS.items()
    ]
    return [tls, *teams]


@pytest.fixture(scope="module")
def front(e2e: Environment) -> Iterator[Environment]:
    classes = documents(ROOT / "docs/getting-started/classes.yaml")
    add_fleet(e2e, [*classes, guide_cluster(CLUSTER)])
    e2e.control.kubectl(
        "wait", f"inferencecluster/{CLUSTER}", "--for=condition=Ready", "--timeout=300s"
    )
    e2e.control.apply(documents(ROOT / "tests/upstream/crds/cert-manager.io_certificates.yaml"))
    spaces = {space for _s, _c, space, *_rest in TEAMS.values()}
    for space in spaces:
        namespace(e2e, space)
    gw = gateway()
    e2e.control.apply([*secrets(gw["spec"]["hostname"]), gw, *(service(t) for t in TEAMS)])
    try:
        yield e2e
    finally:
        for _secret, _caller, space, name, _served in TEAMS.values():
            e2e.control.kubectl("-n", space, "delete", "modelservice", name, check=False)
        e2e.control.kubectl("delete", "inferencegateway", GATEWAY, "--timeout=300s", check=False)
        for secret, *_rest in TEAMS.values():
            e2e.control.kubectl("-n", control.NAMESPACE, "delete", "secret", secret, check=False)
        retire(e2e, spaces, {CLUSTER})


def on_host(env: Environment, kind: str, name: str) -> dict[str, Any]:
    items = env.workloads[CLUSTER].get(kind, "--all-namespaces")["items"]
    [found] = [i for i in items if i["metadata"]["name"] == name]
    return found


def test_each_teams_caller_secret_is_copied_with_its_entries(front: Environment) -> None:
    def copied() -> None:
        for secret, caller, *_rest in TEAMS.values():
            copy = on_host(front, "secrets", copy_name(GATEWAY, secret))
            assert copy["type"] == "Opaque"
            assert base64.b64decode(copy["data"][caller]).decode() == f"{caller}-key"

    eventually(copied, timeout=WAIT, interval=2)


def test_the_api_key_policy_names_every_copy_and_strips_the_key(front: Environment) -> None:
    def admitted() -> None:
        policy = on_host(
            front, "securitypolicies.gateway.envoyproxy.io", dns_label(GATEWAY, "callers")
        )
        api_key = policy["spec"]["apiKeyAuth"]
        assert sorted(r["name"] for r in api_key["credentialRefs"]) == sorted(
            copy_name(GATEWAY, secret) for secret, *_rest in TEAMS.values()
        )
        assert api_key["forwardClientIDHeader"] == CALLER_HEADER
        assert api_key["sanitize"] is True

    eventually(admitted, timeout=WAIT, interval=2)


def test_the_guard_removes_the_headers_only_the_gateway_may_set(front: Environment) -> None:
    # The model header too: a per-model budget must count the model the AI Gateway read; and,
    # with priorities, the priority and the picker's objective and fairness headers.
    def admitted() -> None:
        guard = on_host(
            front, "clienttrafficpolicies.gateway.envoyproxy.io", dns_label(GATEWAY, "caller-guard")
        )
        remove = guard["spec"]["headers"]["earlyRequestHeaders"]["remove"]
        picker = [PRIORITY_HEADER, *OBJECTIVE_HEADERS, *FAIRNESS_HEADERS]
        assert remove == [CALLER_HEADER, MODEL_HEADER, *picker]

    eventually(admitted, timeout=WAIT, interval=2)


def test_each_callers_priority_is_stamped_after_authentication(front: Environment) -> None:
    def admitted() -> None:
        policy = on_host(
            front, "envoyextensionpolicies.gateway.envoyproxy.io", dns_label(GATEWAY, "priority")
        )
        lua, _catalog = policy["spec"]["lua"]
        assert '["search-prod"] = "2"' in lua["inline"], lua["inline"]
        assert policy["spec"]["targetRefs"][0]["sectionName"] == "https"

    eventually(admitted, timeout=WAIT, interval=2)


def test_each_caller_lists_only_the_models_it_may_use(front: Environment) -> None:
    # The gateway lists the services in every namespace (Crossplane's own read); the catalog's
    # script, as the gateway's cluster admitted it, is run in LuaJIT (tests/envoy_lua.py).
    def listed() -> None:
        policy = on_host(
            front, "envoyextensionpolicies.gateway.envoyproxy.io", dns_label(GATEWAY, "priority")
        )
        script = policy["spec"]["lua"][-1]["inline"]
        seen = {}
        for _secret, caller, *_rest in TEAMS.values():
            request = {":method": "GET", ":path": "/v1/models", CALLER_HEADER: caller}
            body = json.loads(on_request(script, request).body or "{}")
            seen[caller] = [m["id"] for m in body.get("data", [])]
        # search's service is open to its team and ops; ads' to everyone.
        assert seen == {"search-prod": ["ads/llama", "search/qwen"], "ads-prod": ["ads/llama"]}

    eventually(listed, timeout=WAIT, interval=5)


def test_the_rate_limits_count_each_caller_across_every_route(front: Environment) -> None:
    def admitted() -> None:
        policy = on_host(
            front, "backendtrafficpolicies.gateway.envoyproxy.io", dns_label(GATEWAY, "limits")
        )
        rules = policy["spec"]["rateLimit"]["global"]["rules"]
        assert [r["limit"]["requests"] for r in rules] == [60, 1000, 500, 1500]
        assert all(r["shared"] for r in rules)

    eventually(admitted, timeout=WAIT, interval=2)


@pytest.mark.parametrize("team", sorted(TEAMS))
def test_each_teams_service_is_routed_by_its_model_name(front: Environment, team: str) -> None:
    _secret, _caller, space, name, _served = TEAMS[team]

    def admitted() -> None:
        route = on_host(
            front,
            "aigatewayroutes.aigateway.envoyproxy.io",
            model_route_name(GATEWAY, space, name),
        )
        [rule] = route["spec"]["rules"]
        [match] = rule["matches"]
        assert match["headers"][0]["name"] == MODEL_HEADER
        assert match["headers"][0]["value"] == f"{space}/{name}"
        assert route["spec"]["parentRefs"][0]["name"] == f"{GATEWAY}-front"

    eventually(admitted, timeout=WAIT, interval=2)


def test_search_is_open_to_its_team_and_ops_only(front: Environment) -> None:
    _secret, caller, space, name, _served = TEAMS["search"]

    def admitted() -> None:
        policy = on_host(
            front,
            "securitypolicies.gateway.envoyproxy.io",
            unique_label(GATEWAY, space, name, "callers"),
        )
        [rule] = policy["spec"]["authorization"]["rules"]
        assert rule["principal"]["headers"] == [{"name": CALLER_HEADER, "values": ["ops", caller]}]
        assert policy["spec"]["mergeType"] == "StrategicMerge"
        denied = on_host(
            front,
            "backendtrafficpolicies.gateway.envoyproxy.io",
            unique_label(GATEWAY, space, name, "denied"),
        )
        assert denied["spec"]["responseOverride"][0]["source"] == "Local"

    eventually(admitted, timeout=WAIT, interval=2)


def test_ads_is_open_to_every_authenticated_caller(front: Environment) -> None:
    _secret, _caller, space, name, _served = TEAMS["ads"]
    eventually(
        lambda: on_host(
            front,
            "aigatewayroutes.aigateway.envoyproxy.io",
            model_route_name(GATEWAY, space, name),
        ),
        timeout=WAIT,
        interval=2,
    )
    policies = front.workloads[CLUSTER].get("securitypolicies.gateway.envoyproxy.io", "-A")
    names = {p["metadata"]["name"] for p in policies["items"]}
    assert unique_label(GATEWAY, space, name, "callers") not in names


@pytest.mark.parametrize(
    ("field", "value"), [("modelName", "Qwen 3"), ("callers", {})], ids=["modelName", "callers"]
)
def test_a_service_the_front_door_could_not_serve_is_refused_naming_the_field(
    front: Environment, field: str, value: Any
) -> None:
    svc = service("search")
    svc["metadata"]["name"] = "refused"
    svc["spec"][field] = value
    refused = front.control.kubectl(
        "apply", "--dry-run=server", "-f", "-", input=yaml.safe_dump(svc), check=False
    )
    assert refused.returncode != 0
    assert f"spec.{field}" in refused.stderr
