"""A ModelService's token usage over the last hour in its status (docs/design/shared-front-door.md,
"Usage in status"): provider-http asks the fleet-wide Prometheus, the function summarises the
answer it stored, and no answer is never read as no usage."""

from __future__ import annotations

import json
import urllib.parse
from typing import Any

import pytest

from modelplane import genai
from modelplane.compose.modelservice import usage
from modelplane.compose.modelservice.composer import compose_service
from modelplane.composer import Inputs, Result
from tests.compose.modelservice.kit import invalid, replica_endpoint, service, service_inputs

Obj = dict[str, Any]
PROMETHEUS = "http://thanos-query.monitoring:9090"
AT = 1_796_559_600.0  # 2026-12-06T12:20:00Z
AT_TEXT = "2026-12-06T12:20:00Z"


def config(**prometheus: Any) -> Obj:
    data: Obj = {"prometheus": {"serverAddress": PROMETHEUS, **prometheus}}
    return {
        "apiVersion": "apiextensions.crossplane.io/v1beta1",
        "kind": "EnvironmentConfig",
        "metadata": {"name": "modelplane-autoscaling"},
        "data": data,
    }


def polled(seconds: Any) -> Obj:
    obj = config()
    obj["data"]["usage"] = {"pollSeconds": seconds}
    return obj


CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "disposablerequests.http.m.crossplane.io"},
}


def inputs(
    found: list[Obj] | None = None,
    observed: dict[str, Obj] | None = None,
    published: Obj | None = None,
    served: list[Obj] | None = None,
) -> Inputs:
    """The service ml/qwen with one replica ready; ``found``: what the EnvironmentConfig
    requirement answered (None: not answered yet); ``served``: what the DisposableRequest CRD
    requirement answered (provider-http's CRD unless given)."""
    ms = service("qwen", "ml")
    if published is not None:
        ms["status"] = {"usage": published}
    base = service_inputs(ms, [[replica_endpoint("qwen-0", "east")]])
    required = dict(base.required)
    if found is not None:
        required[usage.CONFIG] = found
    required[usage.API] = [CRD] if served is None else served
    return Inputs(composite=ms, required=required, observed=observed or {})


def request_key(result: Result) -> str:
    [key] = [k for k in result.resources if k.startswith(f"{usage.REQUEST}/")]
    return key


def request(result: Result) -> Obj:
    return result.resources[request_key(result)].resource


def sample(value: float, caller: str | None = None, kind: str = "input") -> Obj:
    labels = {"gen_ai_original_model": "ml/qwen", "gen_ai_token_type": kind}
    if caller:
        labels["caller"] = caller
    return {"metric": labels, "value": [AT, str(value)]}


def answered(*samples: Obj, code: int = 200, at: float = AT) -> Obj:
    """A DisposableRequest as provider-http leaves it after Prometheus answered ``samples``
    (and ``vector(0)``'s unlabelled sample)."""
    result = [*samples, {"metric": {}, "value": [at, "0"]}]
    body = {"status": "success", "data": {"resultType": "vector", "result": result}}
    return {
        "apiVersion": usage.HTTP_API_VERSION,
        "kind": "DisposableRequest",
        "status": {"response": {"statusCode": code, "body": json.dumps(body)}},
    }


def reconciled(answer: Obj, published: Obj | None = None, found: list[Obj] | None = None) -> Result:
    """A reconcile that observes the service's request holding ``answer``."""
    found = [config()] if found is None else found
    key = request_key(compose_service(inputs(found)))
    return compose_service(inputs(found, {key: answer}, published))


# --- what is composed ----------------------------------------------------------------------------


def test_the_service_reads_the_environment_config_naming_the_prometheus() -> None:
    requirement = compose_service(inputs()).requirements[usage.CONFIG]
    assert (requirement.kind, requirement.match_name) == (
        "EnvironmentConfig",
        "modelplane-autoscaling",
    )


def test_a_named_prometheus_is_asked_through_a_disposable_request_and_its_provider_config() -> None:
    result = compose_service(inputs([config()]))
    assert request(result)["metadata"]["name"] == f"qwen-usage-{request_key(result)[-8:]}"
    spec = request(result)["spec"]
    assert spec["providerConfigRef"] == {"kind": "ProviderConfig", "name": "qwen-usage"}
    assert result.resources[usage.PROVIDER_CONFIG].resource["spec"] == {
        "credentials": {"source": "None"}
    }
    assert spec["forProvider"]["method"] == "GET"
    assert spec["forProvider"]["shouldLoopInfinitely"] is True


def test_the_usage_objects_are_valid_against_provider_http_crds() -> None:
    result = compose_service(inputs([config()]))
    keys = {usage.PROVIDER_CONFIG, request_key(result)}
    assert {k: v for k, v in invalid(result).items() if k in keys} == {}


def test_the_query_is_the_services_tokens_by_caller_over_the_last_hour() -> None:
    url = urllib.parse.urlsplit(
        request(compose_service(inputs([config()])))["spec"]["forProvider"]["url"]
    )
    assert f"{url.scheme}://{url.netloc}{url.path}" == f"{PROMETHEUS}/api/v1/query"
    [query] = urllib.parse.parse_qs(url.query)["query"]
    assert query == (
        "sum by (caller, gen_ai_original_model, gen_ai_token_type) (increase("
        'gen_ai_client_token_usage_sum{gen_ai_original_model="ml/qwen", '
        'gen_ai_token_type=~"input|output"}[1h])) or vector(0)'
    )


def test_the_query_is_the_one_modelplane_usage_asks_for_the_service() -> None:
    assert usage.query("ml", "qwen").replace(" or vector(0)", "") == "".join(
        line.strip() for line in genai.tokens_query("1h", "ml/qwen").splitlines()
    )


def test_the_request_is_sent_again_every_five_minutes_by_default() -> None:
    spec = request(compose_service(inputs([config()])))["spec"]["forProvider"]
    assert spec["nextReconcile"] == "300s"


@pytest.mark.parametrize(("seconds", "sent"), [(60, "60s"), (3, "10s"), ("often", "300s")])
def test_the_platform_sets_how_often_it_is_asked(seconds: Any, sent: str) -> None:
    spec = request(compose_service(inputs([polled(seconds)])))["spec"]["forProvider"]
    assert spec["nextReconcile"] == sent


@pytest.mark.parametrize(
    ("seconds", "says"),
    [
        ("often", "data.usage.pollSeconds is 'often', not a whole number of seconds"),
        (3, "data.usage.pollSeconds is 3, below the least, 10: asked every 10s"),
    ],
)
def test_a_poll_not_taken_as_written_is_a_warning_naming_the_field(seconds: Any, says: str) -> None:
    [event] = compose_service(inputs([polled(seconds)])).events
    assert (event.severity, event.reason) == ("Warning", "UsagePollSecondsInvalid")
    assert says in event.message and "EnvironmentConfig modelplane-autoscaling" in event.message


def test_a_poll_taken_as_written_raises_no_warning() -> None:
    assert compose_service(inputs([polled(60)])).events == []


def test_a_poll_of_zero_turns_the_summary_off() -> None:
    result = compose_service(inputs([polled(0)]))
    assert usage.PROVIDER_CONFIG not in result.resources
    assert not [k for k in result.resources if k.startswith(usage.REQUEST)]


def test_no_prometheus_named_asks_nothing_and_publishes_nothing() -> None:
    result = compose_service(inputs([]))
    assert usage.PROVIDER_CONFIG not in result.resources
    assert "usage" not in result.status


def test_the_service_asks_whether_provider_http_is_installed() -> None:
    requirement = compose_service(inputs()).requirements[usage.API]
    asked = (requirement.kind, requirement.match_name)
    assert asked == ("CustomResourceDefinition", "disposablerequests.http.m.crossplane.io")


def test_without_provider_http_nothing_is_composed_that_crossplane_cannot_apply() -> None:
    result = compose_service(inputs([config()], served=[]))
    assert usage.PROVIDER_CONFIG not in result.resources
    assert not [k for k in result.resources if k.startswith(usage.REQUEST)]


def test_without_provider_http_a_warning_says_to_install_it() -> None:
    [event] = compose_service(inputs([config()], served=[])).events
    assert (event.severity, event.reason) == ("Warning", "ProviderHttpNotInstalled")
    assert "install provider-http" in event.message


def test_until_provider_http_is_looked_for_the_usage_objects_stay_as_they_are() -> None:
    key = request_key(compose_service(inputs([config()])))
    held = inputs([config()], {key: answered()}, published={"at": AT_TEXT, "tokens": 5})
    required = dict(held.required)
    del required[usage.API]
    result = compose_service(Inputs(held.composite, required=required, observed=held.observed))
    assert key in result.resources
    assert result.status["usage"] == {"at": AT_TEXT, "tokens": 5}


def test_a_prometheus_that_needs_credentials_is_not_asked() -> None:
    named = config(
        authenticationRef={"name": "thanos-reader", "kind": "ClusterTriggerAuthentication"}
    )
    assert usage.PROVIDER_CONFIG not in compose_service(inputs([named])).resources


def test_a_new_address_is_a_new_request_the_old_one_is_deleted() -> None:
    # forProvider.url is immutable: the old request is left out of desired state, so Crossplane
    # deletes it, and a new one is created.
    before = request_key(compose_service(inputs([config()])))
    moved = config()
    moved["data"]["prometheus"]["serverAddress"] = "http://prometheus.monitoring:9090"
    result = compose_service(inputs([moved], {before: answered()}))
    assert before not in result.resources
    assert request_key(result) != before


def test_the_usage_objects_never_take_the_service_out_of_ready() -> None:
    result = compose_service(inputs([config()]))
    assert result.resources[usage.PROVIDER_CONFIG].ready == "True"
    assert result.resources[request_key(result)].ready == "True"


def test_until_the_environment_config_is_read_the_usage_objects_stay_as_they_are() -> None:
    key = request_key(compose_service(inputs([config()])))
    seen = {key: answered(), usage.PROVIDER_CONFIG: {"apiVersion": usage.HTTP_API_VERSION}}
    result = compose_service(inputs(None, seen, published={"at": AT_TEXT, "tokens": 5}))
    assert {key, usage.PROVIDER_CONFIG} <= set(result.resources)
    assert result.status["usage"] == {"at": AT_TEXT, "tokens": 5}


# --- the summary ---------------------------------------------------------------------------------


def test_the_summary_counts_each_callers_input_and_output_tokens() -> None:
    result = reconciled(
        answered(sample(1200, "search"), sample(300, "search", "output"), sample(40, "chat"))
    )
    assert result.status["usage"] == {
        "window": "1h",
        "at": AT_TEXT,
        "tokens": 1540,
        "inputTokens": 1240,
        "outputTokens": 300,
        "callers": [
            {"caller": "search", "tokens": 1500, "inputTokens": 1200, "outputTokens": 300},
            {"caller": "chat", "tokens": 40, "inputTokens": 40, "outputTokens": 0},
        ],
    }


def test_the_summary_is_stamped_with_when_prometheus_counted() -> None:
    result = reconciled(answered(sample(1, "search"), at=AT + 60))
    assert result.status["usage"]["at"] == "2026-12-06T12:21:00Z"


def test_counts_are_rounded_to_three_significant_figures() -> None:
    result = reconciled(answered(sample(123_456.7, "search")))
    assert result.status["usage"]["callers"][0]["inputTokens"] == 123_000


def test_requests_without_a_caller_are_counted_as_no_caller() -> None:
    result = reconciled(answered(sample(10)))
    assert [c["caller"] for c in result.status["usage"]["callers"]] == ["(no caller)"]


def test_no_usage_is_a_summary_of_zero_at_its_time() -> None:
    result = reconciled(answered())
    assert result.status["usage"]["callers"] == []
    assert (result.status["usage"]["tokens"], result.status["usage"]["at"]) == (0, AT_TEXT)


def test_twenty_callers_are_named_and_the_rest_counted_together() -> None:
    samples = [sample(1000 - i, f"team-{i:02d}") for i in range(23)]
    result = reconciled(answered(*samples))
    summary = result.status["usage"]
    assert [c["caller"] for c in summary["callers"]] == [f"team-{i:02d}" for i in range(20)]
    assert summary["others"] == {
        "callers": 3,
        "tokens": 2940,
        "inputTokens": 2940,
        "outputTokens": 0,
    }


def test_a_refused_answer_keeps_the_summary_last_published() -> None:
    published = {"window": "1h", "at": AT_TEXT, "tokens": 7}
    refused = answered(code=503)
    refused["status"]["response"]["body"] = '{"status":"error","errorType":"unavailable"}'
    assert reconciled(refused, published).status["usage"] == published


def test_a_request_not_yet_answered_publishes_nothing() -> None:
    unanswered = {"apiVersion": usage.HTTP_API_VERSION, "kind": "DisposableRequest"}
    assert "usage" not in reconciled(unanswered).status


def test_an_answer_older_than_the_summary_published_does_not_replace_it() -> None:
    published = {"window": "1h", "at": "2026-12-06T13:00:00Z", "tokens": 7}
    assert reconciled(answered(sample(5, "a")), published).status["usage"] == published


def test_a_held_service_keeps_its_summary() -> None:
    published = {"window": "1h", "at": AT_TEXT, "tokens": 7}
    held = inputs([config()], published=published)
    required = dict(held.required)
    del required["inference-gateways"]
    result = compose_service(Inputs(composite=held.composite, required=required))
    assert result.status["usage"] == published
