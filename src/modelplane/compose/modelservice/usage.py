"""A ModelService's token usage over the last hour, by caller, in its status
(docs/design/shared-front-door.md, "Usage in status").

The function never calls out. Where the platform names the fleet-wide Prometheus (the
EnvironmentConfig ``modelplane-autoscaling``, ``metricsconfig.py``), the service composes a
provider-http v1.0.14 ``DisposableRequest`` that asks it one query every ``pollSeconds``, and a
namespaced ``ProviderConfig`` for it; each reconcile reads the answer provider-http stored in
the request's ``status.response`` and summarises it into ``status.usage``: at most ``genai.TOP``
callers by tokens and an ``others`` row, numbers to three significant figures, and the time
Prometheus evaluated the query. An answer that is not a result (Prometheus down, refusing, a
request not yet sent) keeps the summary last published, with its own time: no answer is not
zero usage.

provider-http v1.0.14, read at the tag (tests/conformance/test_provider_http.py): the URL is
immutable (a CEL rule on ``forProvider.url``), so a changed address or query is a new request
under a new composition resource name and the old one is deleted; ``shouldLoopInfinitely``
with ``nextReconcile`` re-sends it on that period; a failed send leaves the last response in
place and a refused one stores its status code.
"""

from __future__ import annotations

import hashlib
import math
import re
import urllib.parse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from modelplane import genai
from modelplane.compose.shared.metricsconfig import (
    ENVIRONMENT_CONFIG_API,
    METRICS_CONFIG,
    MetricsEndpoint,
)
from modelplane.composer import (
    Desired,
    Event,
    Inputs,
    Requirement,
    Result,
    carry_forward,
    namespace_of,
)
from modelplane.kube import objects
from modelplane.kube.names import dns_label
from modelplane.kube.objects import Obj

CONFIG = "usage-metrics"
"""The requirement for the EnvironmentConfig naming the fleet-wide Prometheus."""
API = "usage-api"
"""The requirement for provider-http's DisposableRequest CRD: a kind the API server does not
serve cannot be applied, and one composed resource Crossplane cannot apply stops the service's
every change, so the request is composed only where the CRD is found."""
CRD_API_VERSION = "apiextensions.k8s.io/v1"
REQUEST_CRD = "disposablerequests.http.m.crossplane.io"
REQUEST = "usage-request"
"""Composition resource name prefix of the query: ``usage-request/<hash of its URL>``."""
PROVIDER_CONFIG = "usage-provider-config"
HTTP_API_VERSION = "http.m.crossplane.io/v1alpha2"
STATUS = "usage"
WINDOW = "1h"
DEFAULT_POLL_SECONDS = 300
LEAST_POLL_SECONDS = 10
POLL_SECONDS_INVALID = "UsagePollSecondsInvalid"
"""The reason of the Warning a pollSeconds not taken as written raises."""
PROVIDER_HTTP_NOT_INSTALLED = "ProviderHttpNotInstalled"
NOT_INSTALLED_MESSAGE = (
    f"no usage summary: the EnvironmentConfig {METRICS_CONFIG} names a Prometheus, but the API "
    f"server does not serve {REQUEST_CRD}: install provider-http (v1.0.14 or later), which the "
    "Configuration package depends on"
)


def requirements() -> dict[str, Requirement]:
    return {
        CONFIG: Requirement(ENVIRONMENT_CONFIG_API, "EnvironmentConfig", match_name=METRICS_CONFIG),
        API: Requirement(CRD_API_VERSION, "CustomResourceDefinition", match_name=REQUEST_CRD),
    }


def query(namespace: str, name: str) -> str:
    """The service's tokens by caller and type over ``WINDOW``; ``vector(0)`` answers with an
    unlabelled sample whose time is when Prometheus evaluated it, even with no usage at all. On
    one line: it is read back from the request's URL."""
    tokens = re.sub(r"\s*\n\s*", "", genai.tokens_query(WINDOW, f"{namespace}/{name}"))
    return f"{tokens} or vector(0)"


@dataclass(frozen=True)
class Asking:
    """What the EnvironmentConfig says of the summary: whom to ask and how often, and what is
    wrong with how often (``warning``: the value was not taken as written)."""

    prometheus: str
    poll_seconds: int
    warning: str = ""


def asking(config: Mapping[str, Any] | None) -> Asking | None:
    """None when no Prometheus is named, it needs credentials (``authenticationRef`` is KEDA's,
    which provider-http cannot use), or ``data.usage.pollSeconds`` is 0."""
    endpoint = MetricsEndpoint.from_config(config)
    if endpoint is None or endpoint.authentication:
        return None
    poll = objects.mapping(config, "data", "usage").get("pollSeconds", DEFAULT_POLL_SECONDS)
    field = f"EnvironmentConfig {METRICS_CONFIG} data.usage.pollSeconds"
    if isinstance(poll, bool) or not isinstance(poll, int) or poll < 0:
        warning = (
            f"{field} is {poll!r}, not a whole number of seconds (0 turns the usage summary "
            f"off): Prometheus is asked every {DEFAULT_POLL_SECONDS}s"
        )
        return Asking(endpoint.server_address, DEFAULT_POLL_SECONDS, warning)
    if poll == 0:
        return None
    if poll < LEAST_POLL_SECONDS:
        least = LEAST_POLL_SECONDS
        warning = f"{field} is {poll}, below the least, {least}: asked every {least}s"
        return Asking(endpoint.server_address, LEAST_POLL_SECONDS, warning)
    return Asking(endpoint.server_address, poll)


def add(inputs: Inputs, result: Result) -> None:
    """The summary's objects and ``status.usage`` into ``result``."""
    result.requirements.update(requirements())
    configs, served = inputs.required.get(CONFIG), inputs.required.get(API)
    if configs is None or served is None:
        # Not read yet: what asks stays as it is, and so does what it last said.
        _keep_observed(inputs, result)
        _publish(result, _published(inputs.composite))
        return
    ask = asking(configs[0] if configs else None)
    if ask is None:
        return  # read, and nobody to ask: the summary and what asked for it go
    if not served:
        result.events.append(Event("Warning", NOT_INSTALLED_MESSAGE, PROVIDER_HTTP_NOT_INSTALLED))
        return
    if ask.warning:
        result.events.append(Event("Warning", ask.warning, POLL_SECONDS_INVALID))
    ms = inputs.composite
    url = request_url(ask.prometheus, namespace_of(ms), objects.name(ms))
    key = request_key(url)
    # Ready whatever provider-http says: the summary is a report, and a Prometheus that is down
    # must not take a serving model out of Ready (nor can a ProviderConfig ever be Ready).
    result.resources[PROVIDER_CONFIG] = Desired(provider_config(ms), "True")
    result.resources[key] = Desired(disposable_request(ms, ask, url), "True")
    _publish(result, newer(summarise_response(inputs.observed.get(key)), _published(ms)))


def request_url(prometheus: str, namespace: str, name: str) -> str:
    arguments = urllib.parse.urlencode({"query": query(namespace, name)})
    return f"{prometheus.rstrip('/')}/api/v1/query?{arguments}"


def _digest(url: str) -> str:
    return hashlib.sha256(url.encode()).hexdigest()[:8]


def request_key(url: str) -> str:
    return f"{REQUEST}/{_digest(url)}"


def _provider_config_name(ms: Obj) -> str:
    return dns_label(f"{objects.name(ms)}-usage")


def provider_config(ms: Obj) -> Obj:
    """provider-http's credentials for the query: none (an unauthenticated Prometheus)."""
    return {
        "apiVersion": HTTP_API_VERSION,
        "kind": "ProviderConfig",
        "metadata": {"name": _provider_config_name(ms), "namespace": namespace_of(ms)},
        "spec": {"credentials": {"source": "None"}},
    }


def disposable_request(ms: Obj, ask: Asking, url: str) -> Obj:
    """The query, sent again every ``ask.poll_seconds``."""
    return {
        "apiVersion": HTTP_API_VERSION,
        "kind": "DisposableRequest",
        "metadata": {
            "name": dns_label(f"{objects.name(ms)}-usage-{_digest(url)}"),
            "namespace": namespace_of(ms),
        },
        "spec": {
            "providerConfigRef": {"kind": "ProviderConfig", "name": _provider_config_name(ms)},
            "forProvider": {
                "url": url,
                "method": "GET",
                "shouldLoopInfinitely": True,
                "nextReconcile": f"{ask.poll_seconds}s",
                "waitTimeout": "30s",
            },
        },
    }


def _keep_observed(inputs: Inputs, result: Result) -> None:
    ours = {
        key: obj
        for key, obj in inputs.observed.items()
        if key == PROVIDER_CONFIG or key.startswith(f"{REQUEST}/")
    }
    result.resources.update(carry_forward(ours))


def _published(ms: Obj) -> Mapping[str, Any] | None:
    published = objects.status(ms).get(STATUS)
    return published if isinstance(published, Mapping) else None


def _publish(result: Result, summary: Mapping[str, Any] | None) -> None:
    if summary is not None:
        result.status[STATUS] = dict(summary)


# --- the summary --------------------------------------------------------------------------


def summarise_response(request: Mapping[str, Any] | None) -> Obj | None:
    """The summary of the answer provider-http stored, or None when it holds no result."""
    response = objects.mapping(objects.status(request), "response")
    body, code = response.get("body"), response.get("statusCode")
    if not isinstance(body, str) or code != 200:
        return None
    try:
        answer = genai.read_answer(body, 200, "the fleet-wide Prometheus")
    except genai.CouldNotAskError:
        return None
    stamps = [s.at for s in answer.samples if not s.labels]
    if not stamps:
        return None  # not the query this module asks: it always answers an unlabelled sample
    return summary(answer.samples, max(stamps))


def summary(samples: Sequence[genai.Sample], at: float) -> Obj:
    """``status.usage`` of an answer evaluated at ``at``: ``modelplane usage``'s summary of it
    (one model, so one row per caller), rounded."""
    summarised = genai.summarise(samples, (), genai.TOP)
    out: Obj = {
        "window": WINDOW,
        "at": objects.timestamp(at),
        **_tokens(summarised.total),
        "callers": [
            {"caller": row.caller or genai.NO_CALLER, **_tokens(row.usage)}
            for row in summarised.rows
        ],
    }
    if summarised.others is not None:
        others = summarised.others
        out["others"] = {"callers": others.callers, **_tokens(others.usage)}
    return out


def _tokens(usage: genai.Usage) -> Obj:
    return {
        "tokens": rounded(usage.tokens),
        "inputTokens": rounded(usage.input),
        "outputTokens": rounded(usage.output),
    }


def rounded(value: float) -> int:
    """``value`` to three significant figures, as a whole number: a count that moves by less
    than that is not news worth a status write."""
    if value <= 0 or not math.isfinite(value):
        return 0
    return int(float(f"{value:.3g}"))


def newer(summary: Obj | None, published: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    """The summary to publish: the answer's, unless the one published was evaluated later."""
    if summary is None:
        return published
    if published is not None and str(published.get("at", "")) > str(summary["at"]):
        return published
    return summary
