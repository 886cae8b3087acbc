"""A ModelService's token usage of the last hour in its status, asked of a real Prometheus by a
real provider-http (v1.0.14, built from its Go module by ``e2e.build``).

Where the EnvironmentConfig ``modelplane-autoscaling`` names the fleet-wide Prometheus, every
ModelService composes a provider-http ``ProviderConfig`` and a ``DisposableRequest`` that asks
Prometheus its tokens by caller every ``data.usage.pollSeconds``; the function summarises the
answer provider-http stores in the request's ``status.response`` into ``status.usage``.

Prometheus (v3.4.2, ``e2e.autoscaler.start_prometheus``) scrapes a stand-in of Envoy AI Gateway
v1.1.0's ``gen_ai_client_token_usage`` histogram (the series and labels ``test_usage.py``
cites), whose counters are raised between scrapes so ``increase()`` over the hour is what the
stand-in counted. provider-http runs in a network namespace of its own (``e2e.relay``: its
metrics server takes ``:8080``, as provider-kubernetes' does) and reaches the API server and
Prometheus at their own addresses through relays. The service selects nothing (no fleet is
needed): its summary depends only on what Prometheus counted for its name.
"""

from __future__ import annotations

import json
import re
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import pytest

from e2e import autoscaler, build, control, processes
from e2e.environment import Environment
from e2e.exposition import serve as serve_text
from e2e.kubernetes import condition_true
from tests.e2e import genai_standin as standin
from tests.e2e.conftest import ROOT, documents, eventually, namespace, sampled

pytestmark = pytest.mark.e2e

NAMESPACE = "usage-summary"
NAME = "summarised"
MODEL = f"{NAMESPACE}/{NAME}"
OTHER = f"{NAMESPACE}/another"
NO_CALLER = "(no caller)"
POLL_SECONDS = 10
"""``data.usage.pollSeconds``: the least the function accepts."""
PROVIDER_POLL = "10s"
# What the stand-in counted once raised: (caller, model, input tokens, output tokens). The
# caller None is a request through a gateway without auth (the series has no caller label);
# the other model's tokens must not count (search would read 14,000 input tokens if they did).
RAISED: tuple[tuple[str | None, str, int, int], ...] = (
    ("search", MODEL, 12_000, 3_000),
    ("ads", MODEL, 4_000, 1_000),
    (None, MODEL, 600, 150),
    ("search", OTHER, 2_000, 500),
)
# The contract's PromQL (whitespace aside): the service's tokens by caller and type over the
# hour, and vector(0), whose sample carries the time Prometheus evaluated it.
QUERY = (
    "sum by (caller, gen_ai_original_model, gen_ai_token_type) (increase("
    f'gen_ai_client_token_usage_sum{{gen_ai_original_model="{MODEL}", '
    'gen_ai_token_type=~"input|output"}[1h])) or vector(0)'
)
DR = "disposablerequests.http.m.crossplane.io"
PC = "providerconfigs.http.m.crossplane.io"


class Exposition:
    """The AI Gateway's token histogram (stand-in): every counter 0 until ``raised``."""

    def __init__(self) -> None:
        self.raised = False
        self._server = serve_text(self.text)

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def text(self) -> str:
        lines = [f"# TYPE {standin.TOKENS} histogram"]
        count = 10 if self.raised else 0
        for caller, model, given, answered in RAISED:
            for kind, total in (("input", given), ("output", answered)):
                labels = standin.labels(caller, model, gen_ai_token_type=kind)
                lines += standin.histogram(standin.TOKENS, labels, count, total if count else 0)
        return "\n".join(lines) + "\n"

    def rise(self) -> None:
        self.raised = True

    def stop(self) -> None:
        self._server.shutdown()


@dataclass
class Stack:
    env: Environment
    prometheus: str
    exposition: Exposition
    provider_started: bool = False
    summary: dict[str, Any] = field(default_factory=dict)
    """status.usage once provider-http's answer was summarised."""


def service() -> dict[str, Any]:
    (svc,) = [
        d
        for d in documents(ROOT / "docs/getting-started/frontdoor.yaml")
        if d["kind"] == "ModelService"
    ]
    svc["metadata"] = {"name": NAME, "namespace": NAMESPACE}
    # Nothing to route to: the summary reads only what Prometheus counted for the name.
    svc["spec"]["endpoints"][0]["selector"]["matchLabels"] = {"e2e.modelplane.ai/none": NAME}
    return svc


def metrics_config(prometheus: str) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.crossplane.io/v1beta1",
        "kind": "EnvironmentConfig",
        "metadata": {"name": "modelplane-autoscaling"},
        "data": {
            "prometheus": {"serverAddress": prometheus},
            "usage": {"pollSeconds": POLL_SECONDS},
        },
    }


@pytest.fixture(scope="module")
def stack(e2e: Environment) -> Iterator[Stack]:
    """Prometheus scraping the stand-in, the counters raised and scraped, the EnvironmentConfig
    naming that Prometheus, and the ModelService."""
    binary = build.build_all(["prometheus"])["prometheus"] / "prometheus"
    exposition = Exposition()
    stack: Stack | None = None
    try:
        url = autoscaler.start_prometheus(e2e.control, binary, [f"127.0.0.1:{exposition.port}"]).url
        standin.scrape_a_rise(url, "ads", exposition.rise, 4_000)
        e2e.control.apply([metrics_config(url)])
        namespace(e2e, NAMESPACE)
        e2e.control.apply([service()])
        stack = Stack(e2e, url, exposition)
        yield stack
    finally:
        _take_out(e2e, stack)
        e2e.control.kubectl("delete", "environmentconfig", "modelplane-autoscaling", check=False)
        processes.stop(e2e.control.run, "prometheus")
        exposition.stop()


def _take_out(env: Environment, stack: Stack | None) -> None:
    """The ModelService and what it composed gone, provider-http still running to let go of
    its requests and config (its finalizers), then provider-http stopped."""
    control_plane = env.control
    control_plane.kubectl(
        "-n", NAMESPACE, "delete", "modelservice", NAME, "--timeout=120s", check=False
    )

    def gone() -> None:
        for kind in (DR, PC):
            assert control_plane.get(kind, "-n", NAMESPACE)["items"] == []

    try:
        eventually(gone, timeout=120, interval=2)
    except AssertionError:
        # provider-http gone first (or never started after it had a finalizer on them): nothing
        # else will let them go, and the next module must not find them.
        for kind in (DR, PC):
            for item in control_plane.get(kind, "-n", NAMESPACE)["items"]:
                print(f"\n{kind} {item['metadata']['name']} held by its finalizers: lifted")
                control_plane.kubectl(
                    "-n",
                    NAMESPACE,
                    "patch",
                    kind,
                    item["metadata"]["name"],
                    "--type=merge",
                    "-p",
                    '{"metadata":{"finalizers":null}}',
                    check=False,
                )
    finally:
        if stack is not None and stack.provider_started:
            control.stop_provider_http(control_plane)


def requests_of(env: Environment) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = env.control.get(DR, "-n", NAMESPACE)["items"]
    return [i for i in items if i["metadata"]["name"].startswith(f"{NAME}-usage-")]


def the_request(env: Environment) -> dict[str, Any]:
    (request,) = requests_of(env)
    return request


def usage_of(env: Environment) -> dict[str, Any]:
    ms = env.control.get("modelservice", NAME, "-n", NAMESPACE)
    found: dict[str, Any] = (ms.get("status") or {}).get("usage") or {}
    return found


def callers(usage: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["caller"]: c for c in usage.get("callers") or []}


def three_figures(value: float) -> int:
    return int(float(f"{value:.3g}"))


def counted(caller: str | None) -> tuple[int, int]:
    """What the stand-in counted for the service and ``caller``: input and output tokens."""
    [(given, answered)] = [(i, o) for c, m, i, o in RAISED if c == caller and m == MODEL]
    return given, answered


def within(value: int, counted: int) -> bool:
    """``value`` is ``counted`` to three significant figures, allowing for increase()'s
    extrapolation (at most ``standin.EXTRAPOLATED``)."""
    return three_figures(counted) <= value <= three_figures(counted * standin.EXTRAPOLATED)


def when(stamp: str) -> float:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


@pytest.fixture(scope="module")
def summarised(stack: Stack) -> Stack:
    """provider-http started; the ModelService once its status shows the answer summarised."""
    binary = build.build_all(["provider-http"])["provider-http"] / "provider-http"
    port = urllib.parse.urlsplit(stack.prometheus).port
    assert port is not None
    stack.provider_started = True
    control.start_provider_http(stack.env.control, binary, [port], PROVIDER_POLL)

    def shown() -> None:
        usage = usage_of(stack.env)
        assert set(callers(usage)) == {"search", "ads", NO_CALLER}, usage
        stack.summary = usage

    eventually(shown, timeout=300, interval=3)
    print(f"\nstatus.usage: {json.dumps(stack.summary)}")
    return stack


def test_the_service_composes_its_usage_request_and_the_api_server_admits_it(
    stack: Stack,
) -> None:
    env = stack.env

    def composed() -> None:
        # Listed, not got by name: a get of what is not there yet fails outright.
        configs = env.control.get(PC, "-n", NAMESPACE)["items"]
        (config,) = [c for c in configs if c["metadata"]["name"] == f"{NAME}-usage"]
        assert config["spec"]["credentials"]["source"] == "None"
        request = the_request(env)
        assert request["spec"]["providerConfigRef"] == {
            "kind": "ProviderConfig",
            "name": f"{NAME}-usage",
        }
        asked = request["spec"]["forProvider"]
        assert {k: asked.get(k) for k in ("method", "shouldLoopInfinitely", "nextReconcile")} == {
            "method": "GET",
            "shouldLoopInfinitely": True,
            "nextReconcile": f"{POLL_SECONDS}s",
        }
        assert asked["waitTimeout"] == "30s"
        url = urllib.parse.urlsplit(asked["url"])
        assert f"{url.scheme}://{url.netloc}{url.path}" == f"{stack.prometheus}/api/v1/query"
        (query,) = urllib.parse.parse_qs(url.query)["query"]
        assert re.sub(r"\s", "", query) == re.sub(r"\s", "", QUERY)
        ms = env.control.get("modelservice", NAME, "-n", NAMESPACE)
        assert condition_true(ms, "Synced"), ms.get("status")

    eventually(composed, timeout=180, interval=2)


def test_the_composed_query_is_one_prometheus_answers_with_the_callers_tokens(
    stack: Stack,
) -> None:
    # The URL as composed, asked directly: what provider-http will be answered.
    url = the_request(stack.env)["spec"]["forProvider"]["url"]
    with urllib.request.urlopen(url, timeout=10) as answer:
        body = json.load(answer)
    assert body["status"] == "success"
    found = {
        (r["metric"].get("caller"), r["metric"]["gen_ai_token_type"]): float(r["value"][1])
        for r in body["data"]["result"]
        if r["metric"]
    }
    assert 12_000 <= found[("search", "input")] <= 12_000 * standin.EXTRAPOLATED
    assert {caller for caller, _ in found} == {"search", "ads", None}


def test_provider_http_asks_prometheus_and_the_status_shows_each_callers_tokens(
    summarised: Stack,
) -> None:
    usage = summarised.summary
    assert usage["window"] == "1h"
    shown = callers(usage)
    for caller in ("search", "ads", None):
        given, answered = counted(caller)
        row = shown[caller or NO_CALLER]
        assert within(row["inputTokens"], given), (caller, row)
        assert within(row["outputTokens"], answered), (caller, row)
    given = sum(i for c, m, i, _ in RAISED if m == MODEL)
    answered = sum(o for c, m, _, o in RAISED if m == MODEL)
    assert within(usage["inputTokens"], given), usage
    assert within(usage["outputTokens"], answered), usage
    assert within(usage["tokens"], given + answered), usage
    assert "others" not in usage
    # Prometheus's evaluation time: a moment ago.
    assert time.time() - 600 < when(usage["at"]) <= time.time() + 5


def test_the_callers_are_ranked_by_tokens(summarised: Stack) -> None:
    assert [c["caller"] for c in summarised.summary["callers"]] == ["search", "ads", NO_CALLER]


def test_kubectl_get_shows_the_services_tokens_of_the_hour(summarised: Stack) -> None:
    (xrd,) = documents(ROOT / "apis/modelservices/definition.yaml")
    (version,) = [v for v in xrd["spec"]["versions"] if v.get("referenceable")]
    columns = [
        c
        for c in version.get("additionalPrinterColumns") or []
        if c["jsonPath"].startswith(".status.usage")
    ]
    assert columns, "the ModelService XRD prints no column of .status.usage"
    table = summarised.env.control.kubectl("-n", NAMESPACE, "get", "modelservice", NAME).stdout
    header, row = table.splitlines()[:2]
    usage = usage_of(summarised.env)
    for column in columns:
        path = column["jsonPath"].removeprefix(".status.usage.").split(".")
        expected: Any = usage
        for key in path:
            expected = expected[key]
        assert cell(header, row, column["name"].upper()) == str(expected)


def cell(header: str, row: str, name: str) -> str:
    """The value under ``name`` in a ``kubectl get`` table, read by the header's columns (a
    blank cell would shift a whitespace split)."""
    starts = [m.start() for m in re.finditer(r"\S+", header)]
    names = header.split()
    at = names.index(name)
    end = starts[at + 1] if at + 1 < len(starts) else None
    return row[starts[at] : end].strip()


@dataclass(frozen=True)
class Outage:
    stopped_at: float
    kept: dict[str, Any]
    """status.usage once the function has read provider-http's failed ask."""
    samples: list[Any]
    """status.usage every 2 s from just before Prometheus stopped."""
    after: list[Any]
    """The samples read after ``kept``, over two more polls (a read that failed left out)."""


@pytest.fixture(scope="module")
def outage(summarised: Stack) -> Outage:
    """Prometheus stopped; provider-http's next ask failed; the status over two polls after."""
    env = summarised.env
    with sampled(lambda: usage_of(env), every=2) as samples:
        stopped_at = time.time()
        processes.stop(env.control.run, "prometheus")

        def failed() -> None:
            status = the_request(env).get("status") or {}
            assert status.get("error"), status
            assert when(status["lastReconcileTime"]) >= stopped_at - 1, status

        eventually(failed, timeout=120, interval=2)
        # The function's next reconcile of the service (the request's status changed) has read it.
        time.sleep(2 * POLL_SECONDS)
        kept, since = usage_of(env), len(samples)
        time.sleep(2 * POLL_SECONDS)
    after = [s for s in samples[since:] if not isinstance(s, Exception)]
    return Outage(stopped_at, kept, samples, after)


def test_with_prometheus_down_the_summary_stays_with_its_old_time(outage: Outage) -> None:
    assert set(callers(outage.kept)) == {"search", "ads", NO_CALLER}
    assert when(outage.kept["at"]) <= outage.stopped_at + 1
    assert outage.after and all(s == outage.kept for s in outage.after)


def test_with_prometheus_down_the_summary_is_never_emptied(outage: Outage) -> None:
    read = [s for s in outage.samples if not isinstance(s, Exception)]
    assert read and all(set(callers(s)) == {"search", "ads", NO_CALLER} for s in read)


REFUSAL = '{"status":"error","errorType":"unavailable","error":"not ready"}'
"""What a Prometheus answers, 503, to every query while overloaded or its storage not ready."""


@pytest.fixture(scope="module")
def refused(summarised: Stack, outage: Outage) -> Iterator[tuple[Outage, list[Any]]]:
    """After the outage, a server at Prometheus's address that refuses the query: provider-http
    stores the 503 as the request's response, which the function must not read as usage."""
    env = summarised.env
    port = urllib.parse.urlsplit(summarised.prometheus).port or 0
    server = serve_text(lambda: REFUSAL, status=503, content_type="application/json", port=port)
    try:

        def stored() -> None:
            response = (the_request(env).get("status") or {}).get("response") or {}
            assert response.get("statusCode") == 503, response

        eventually(stored, timeout=120, interval=2)
        with sampled(lambda: usage_of(env), every=2) as samples:
            time.sleep(2 * POLL_SECONDS)
        yield outage, [s for s in samples if not isinstance(s, Exception)]
    finally:
        server.shutdown()
        server.server_close()


def test_a_prometheus_refusing_the_query_keeps_the_summary_too(
    refused: tuple[Outage, list[Any]],
) -> None:
    outage, samples = refused
    assert samples and all(s == outage.kept for s in samples)
