"""docs/getting-started.md's step "A front door two teams share" cannot rot: the manifest it
applies is admitted, the caller Secrets its commands create are the ones its gateway, budgets and
services select, and rendered through the function as the guide's fleet after the step (its
class and cluster, the step's manifest, those Secrets) it composes what the step promises: the
API-key policy over both teams' Secrets, a budget per team, each service's model route and its
authorization, and the 403 and 429 answers the step shows, word for word.

Envoy does not run here: what the proxy does with these objects is held by the conformance
tests the step cites (tests/conformance/test_envoy_gateway_api_key.py,
test_envoy_gateway_authorization.py, test_envoy_rate_limits.py, test_envoy_rate_limit_answer.py,
test_envoy_ai_gateway_routing.py)."""

from __future__ import annotations

import base64
import json
import re
import shlex
from functools import cache
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from modelplane import cli
from modelplane.compose.inferencegateway.callers import CALLER_HEADER, copy_name
from modelplane.compose.modelservice.models import MODEL_HEADER, model_route_name
from modelplane.compose.registry import default_registry
from modelplane.compose.shared.frontdoor import CONTROL_NAMESPACE
from modelplane.kube.names import dns_label, unique_label
from modelplane.render import api_server_admission, render_passes
from modelplane.simulate import simulate_observed
from tests.docs.test_getting_started import GUIDE, MANIFESTS, ROOT
from tests.envoy_lua import on_request

Obj = dict[str, Any]
HEADING = "## 10. A front door two teams share"
APPLIED = "docs/getting-started-teams/teams.yaml"
_BLOCK = re.compile(r"```sh\n(.*?)```", re.S)
_CREATE = "kubectl -n crossplane-system create secret generic "
_LABEL = "kubectl -n crossplane-system label secret "


def step() -> str:
    """The step's text: from its heading to the next section."""
    text = GUIDE.read_text()
    start = text.index(HEADING)
    end = text.find("\n## ", start + len(HEADING))
    return text[start : end if end != -1 else len(text)]


def step_commands() -> list[str]:
    out: list[str] = []
    for block in _BLOCK.findall(step()):
        joined = block.replace("\\\n", " ")
        out += [line.strip() for line in joined.splitlines() if line.strip()]
    return out


def applied() -> list[Obj]:
    [path] = [shlex.split(c)[-1] for c in step_commands() if c.startswith("kubectl apply -f ")]
    return [d for d in yaml.safe_load_all((ROOT / path).read_text()) if d]


def of_kind(kind: str) -> list[Obj]:
    return [d for d in applied() if d["kind"] == kind]


def caller_secrets() -> list[Obj]:
    """The Secrets the step's commands create and label, each key a placeholder (the step
    generates real ones; the function reads only names, labels and entry names)."""
    secrets: dict[str, Obj] = {}
    for c in step_commands():
        words = shlex.split(c)
        if c.startswith(_CREATE):
            name = words[len(shlex.split(_CREATE))]
            entries = [w.removeprefix("--from-literal=") for w in words if "--from-literal=" in w]
            secrets[name] = {
                "apiVersion": "v1",
                "kind": "Secret",
                "type": "Opaque",
                "metadata": {"name": name, "namespace": CONTROL_NAMESPACE, "labels": {}},
                "data": {
                    e.partition("=")[0]: base64.b64encode(b"placeholder").decode() for e in entries
                },
            }
        elif c.startswith(_LABEL):
            name, *labels = words[len(shlex.split(_LABEL)) :]
            secrets[name]["metadata"]["labels"].update(dict(w.split("=", 1) for w in labels))
    return list(secrets.values())


def labelled(labels: dict[str, str]) -> list[str]:
    """The callers (entries) of the step's Secrets carrying ``labels``."""
    return sorted(
        caller
        for s in caller_secrets()
        if labels.items() <= s["metadata"]["labels"].items()
        for caller in s["data"]
    )


@cache
def rendered() -> tuple[Obj, ...]:
    inputs = [
        d
        for p in (MANIFESTS / "classes.yaml", MANIFESTS / "cluster.yaml")
        for d in yaml.safe_load_all(p.read_text())
        if d
    ]
    docs, _passes = render_passes(
        default_registry(),
        [*inputs, *caller_secrets(), *applied()],
        admit=api_server_admission(),
        simulate=lambda r: simulate_observed(r, ready_copies=1),
        through_function=True,
    )
    return tuple(docs)


def composed(kind: str, name: str) -> Obj:
    """A manifest the render composes onto the gateway's cluster."""
    [found] = [
        d["spec"]["forProvider"]["manifest"]
        for d in rendered()
        if d.get("kind") == "Object"
        and d["spec"]["forProvider"]["manifest"]["kind"] == kind
        and d["spec"]["forProvider"]["manifest"]["metadata"]["name"] == name
    ]
    return found


def composite(kind: str, name: str, namespace: str | None = None) -> Obj:
    [found] = [
        d
        for d in rendered()
        if d.get("kind") == kind
        and d["metadata"]["name"] == name
        and d["metadata"].get("namespace") == namespace
        and "status" in d
    ]
    return found


def conditions(obj: Obj) -> dict[str, str]:
    return {c["type"]: c["status"] for c in obj["status"]["conditions"]}


def gateway() -> Obj:
    [gw] = of_kind("InferenceGateway")
    return gw


def services() -> list[Obj]:
    return of_kind("ModelService")


def ids(objs: list[Obj]) -> list[str]:
    return [f"{o['metadata']['namespace']}/{o['metadata']['name']}" for o in objs]


def test_the_step_applies_a_gateway_with_callers_and_budgets_and_a_service_per_team() -> None:
    spec = gateway()["spec"]
    assert spec["auth"]["callerSecretSelector"]["matchLabels"]
    assert len(spec["limits"]) == 2
    assert len({s["metadata"]["namespace"] for s in services()}) == 2
    assert all({"modelName", "callers"} <= s["spec"].keys() for s in services())


def test_every_object_of_the_step_is_admitted() -> None:
    out = CliRunner().invoke(cli.main, ["validate", str(ROOT / APPLIED)])
    assert out.exit_code == 0, out.output


def test_the_step_creates_one_caller_secret_per_team_that_the_gateway_selects() -> None:
    wanted = gateway()["spec"]["auth"]["callerSecretSelector"]["matchLabels"]
    secrets = caller_secrets()
    assert len(secrets) == 2
    assert all(wanted.items() <= s["metadata"]["labels"].items() for s in secrets)


def test_each_budget_and_each_service_selects_exactly_one_teams_callers() -> None:
    selectors = [e["callers"]["selector"]["matchLabels"] for e in gateway()["spec"]["limits"]]
    selectors += [s["spec"]["callers"]["selector"]["matchLabels"] for s in services()]
    teams = {s["metadata"]["labels"]["team"]: list(s["data"]) for s in caller_secrets()}
    for labels in selectors:
        assert labelled(labels) == teams[labels["team"]], labels


def test_the_step_is_rendered_ready_through_the_function() -> None:
    gw = composite("InferenceGateway", gateway()["metadata"]["name"])
    assert conditions(gw)["GatewayReady"] == "True"
    for svc in services():
        meta = svc["metadata"]
        assert conditions(composite("ModelService", meta["name"], meta["namespace"]))["Ready"] == (
            "True"
        )


def test_the_tree_the_step_promises_is_what_its_render_prints() -> None:
    [render] = [c for c in step_commands() if c.startswith("uv run modelplane render ")]
    out = CliRunner().invoke(cli.main, shlex.split(render)[3:])
    assert out.exit_code == 0, out.output
    [promised] = re.findall(r"`(\d+ composites \(\d+ ready\))`", step())
    assert out.stdout.splitlines()[-1].startswith(promised)


def test_the_gateway_says_the_caller_secrets_it_reads_as_the_step_shows() -> None:
    gw = composite("InferenceGateway", gateway()["metadata"]["name"])
    [ready] = [c for c in gw["status"]["conditions"] if c["type"] == "GatewayReady"]
    [promised] = re.findall(r"`(callers from \d+ Secrets: [^`]+)`", step())
    assert ready["message"].endswith(promised)


def test_the_gateway_authenticates_each_teams_callers_and_strips_the_key() -> None:
    name = gateway()["metadata"]["name"]
    api_key = composed("SecurityPolicy", dns_label(name, "callers"))["spec"]["apiKeyAuth"]
    assert sorted(r["name"] for r in api_key["credentialRefs"]) == sorted(
        copy_name(name, s["metadata"]["name"]) for s in caller_secrets()
    )
    assert api_key["forwardClientIDHeader"] == CALLER_HEADER
    assert api_key["sanitize"] is True


def test_each_team_has_the_budget_the_step_sets() -> None:
    name = gateway()["metadata"]["name"]
    rules = composed("BackendTrafficPolicy", dns_label(name, "limits"))["spec"]["rateLimit"]
    budgets = {
        (h["value"], r["limit"]["requests"])
        for r in rules["global"]["rules"]
        for h in r["clientSelectors"][0]["headers"]
        if h["type"] == "RegularExpression"
    }
    wanted = set()
    for entry in gateway()["spec"]["limits"]:
        pattern = f"^({'|'.join(labelled(entry['callers']['selector']['matchLabels']))})$"
        rates = [entry.get("requestsPerMinute"), *entry.get("tokensPerMinute", {}).values()]
        wanted |= {(pattern, rate) for rate in rates if rate}
    assert budgets == wanted


def test_the_budget_the_step_describes_is_the_one_it_applies() -> None:
    [ads] = [
        e
        for e in gateway()["spec"]["limits"]
        if e["callers"]["selector"]["matchLabels"] == {"team": "ads"}
    ]
    tokens = ads["tokensPerMinute"]
    described = (
        f"Team ads' budget is {ads['requestsPerMinute']} requests a minute (and "
        f"{tokens['input']:,} input and {tokens['output']:,} output tokens)"
    )
    assert described in " ".join(step().split())


@pytest.mark.parametrize("service", services(), ids=ids(services()))
def test_each_service_is_routed_by_its_model_name_to_what_its_engines_serve(service: Obj) -> None:
    ns, name = service["metadata"]["namespace"], service["metadata"]["name"]
    route = composed("AIGatewayRoute", model_route_name(gateway()["metadata"]["name"], ns, name))
    [rule] = route["spec"]["rules"]
    assert rule["matches"][0]["headers"][0]["name"] == MODEL_HEADER
    assert rule["matches"][0]["headers"][0]["value"] == f"{ns}/{name}"
    assert {r["modelNameOverride"] for r in rule["backendRefs"]} == {service["spec"]["modelName"]}
    assert f'"model": "{ns}/{name}"' in step()


@pytest.mark.parametrize("service", services(), ids=ids(services()))
def test_each_service_allows_its_own_teams_callers_only(service: Obj) -> None:
    ns, name = service["metadata"]["namespace"], service["metadata"]["name"]
    policy = composed(
        "SecurityPolicy", unique_label(gateway()["metadata"]["name"], ns, name, "callers")
    )
    [rule] = policy["spec"]["authorization"]["rules"]
    # A team is its namespace: the Secret the step labels team=<namespace> holds its callers.
    assert rule["principal"]["headers"] == [
        {"name": CALLER_HEADER, "values": labelled({"team": ns})}
    ]
    assert policy["spec"]["authorization"]["defaultAction"] == "Deny"


def test_each_teams_callers_list_only_their_teams_model() -> None:
    # The guide says GET /v1/models lists each caller only the models it may use: the catalog
    # the render composes, run in LuaJIT (tests/envoy_lua.py).
    policy = composed("EnvoyExtensionPolicy", dns_label(gateway()["metadata"]["name"], "priority"))
    script = policy["spec"]["lua"][-1]["inline"]
    for service in services():
        ns, name = service["metadata"]["namespace"], service["metadata"]["name"]
        for caller in labelled({"team": ns}):
            request = {":method": "GET", ":path": "/v1/models", CALLER_HEADER: caller}
            body = json.loads(on_request(script, request).body or "")
            assert [m["id"] for m in body["data"]] == [f"{ns}/{name}"], caller
    assert "lists each caller only the" in step()


def overrides(kind: str, name: str) -> dict[int, Obj]:
    return {
        o["match"]["statusCodes"][0]["value"]: o["response"]
        for o in composed(kind, name)["spec"]["responseOverride"]
    }


def shown(status: int) -> str:
    """The JSON answer the step shows for ``status``, as the caller receives it."""
    [body] = [
        line
        for line in step().splitlines()
        if line.startswith('{"error": ') and json.loads(line)["error"]["code"] == status
    ]
    return body


_OPERATOR = re.compile(r"%[A-Z_]+\([^)]*\)%")


def filled(template: str, answer: str) -> list[str] | None:
    """The values Envoy put for each command operator of ``template`` (a response body format
    string) to send ``answer``, or None when ``answer`` is not that body."""
    pattern = "(.+?)".join(re.escape(part) for part in _OPERATOR.split(template))
    found = re.fullmatch(pattern, answer)
    return list(found.groups()) if found else None


def test_the_403_the_step_shows_is_the_answer_composed_for_another_teams_caller() -> None:
    name = gateway()["metadata"]["name"]
    matched = {}
    for svc in services():
        ns, svc_name = svc["metadata"]["namespace"], svc["metadata"]["name"]
        policy = unique_label(name, ns, svc_name, "denied")
        body = overrides("BackendTrafficPolicy", policy)[403]["body"]["inline"]
        values = filled(body, shown(403))
        if values is not None:
            matched[f"{ns}/{svc_name}"] = (svc, values)
    [(svc, [caller])] = matched.values()
    allowed = labelled(svc["spec"]["callers"]["selector"]["matchLabels"])
    assert caller not in allowed
    assert caller in labelled({})


def test_the_429_the_step_shows_is_the_answer_composed_for_a_spent_budget() -> None:
    spent = overrides("BackendTrafficPolicy", dns_label(gateway()["metadata"]["name"], "limits"))
    assert filled(spent[429]["body"]["inline"], shown(429)) is not None
    [retry] = spent[429]["header"]["set"]
    assert f"{retry['name'].lower()}: {retry['value']}" in step()
