"""The gateway's usage series in Prometheus: their names, the queries over them, and Prometheus's
answer read as an instant vector.

The series are Envoy AI Gateway v1.1.0's gen_ai metrics, labelled with the authenticated caller
(docs/design/shared-front-door.md, "Step 5 as built"). Two readers share them: ``modelplane
usage`` asks Prometheus itself, and a ModelService's usage summary reads the answer provider-http
fetched for it (compose/modelservice/usage.py). Standard library only: the command starts
without the composition function's dependencies.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

# The names the AI Gateway's Prometheus exporter gives them (tests/conformance/
# test_envoy_ai_gateway_metrics.py); the caller label is the stack's
# (compose/inferencecluster/components.py CALLER_METRIC_LABEL, held equal by a test).
TOKENS = "gen_ai_client_token_usage_sum"
REQUESTS = "gen_ai_server_request_duration_seconds_count"
CALLER = "caller"
MODEL = "gen_ai_original_model"
TOKEN_TYPE = "gen_ai_token_type"
INPUT, OUTPUT = "input", "output"
DEFAULT_WINDOW = "1h"


class CouldNotAskError(Exception):
    """Prometheus could not be reached, or did not answer the query: nothing is known."""


def _selector(model: str | None, *more: str) -> str:
    matchers = ([f'{MODEL}="{model}"'] if model else []) + list(more)
    return "{" + ", ".join(matchers) + "}" if matchers else ""


def tokens_query(over: str = DEFAULT_WINDOW, model: str | None = None) -> str:
    """Input and output tokens per caller, model and token type over ``over``."""
    selector = _selector(model, f'{TOKEN_TYPE}=~"{INPUT}|{OUTPUT}"')
    return f"sum by ({CALLER}, {MODEL}, {TOKEN_TYPE}) (\n  increase({TOKENS}{selector}[{over}])\n)"


def requests_query(over: str = DEFAULT_WINDOW, model: str | None = None) -> str:
    """Requests per caller and model over ``over``."""
    return f"sum by ({CALLER}, {MODEL}) (\n  increase({REQUESTS}{_selector(model)}[{over}])\n)"


@dataclass(frozen=True)
class Sample:
    labels: dict[str, str]
    value: float
    at: float = 0.0
    """When Prometheus evaluated it (Unix seconds)."""


@dataclass(frozen=True)
class Answer:
    samples: tuple[Sample, ...]
    warnings: tuple[str, ...] = ()


def read_answer(body: bytes | str, status: int, where: str) -> Answer:
    """A query API answer (``/api/v1/query``) read as an instant vector; CouldNotAskError when it
    is a refusal or not one."""
    try:
        doc = json.loads(body)
    except ValueError:
        doc = None
    if not isinstance(doc, dict):
        raise CouldNotAskError(
            f"{where} answered HTTP {status} with something other than Prometheus's query API "
            "JSON: is it the Prometheus server's address?"
        )
    if doc.get("status") == "error":
        kind = doc.get("errorType") or "error"
        raise CouldNotAskError(
            f"Prometheus at {where} refused the query: {kind}: {doc.get('error')}"
        )
    if status != 200 or doc.get("status") != "success":
        raise CouldNotAskError(f"Prometheus at {where} answered HTTP {status}, not a result")
    return Answer(_vector(doc.get("data"), where), tuple(map(str, doc.get("warnings") or ())))


def _vector(data: Any, where: str) -> tuple[Sample, ...]:
    kind = data.get("resultType") if isinstance(data, dict) else None
    if kind != "vector" or not isinstance(data.get("result"), list):
        raise CouldNotAskError(
            f"Prometheus at {where} answered a {kind or 'malformed'} result, not a vector"
        )
    return tuple(s for s in (_sample(r, where) for r in data["result"]) if not math.isnan(s.value))


def _sample(result: Any, where: str) -> Sample:
    try:
        labels = {str(k): str(v) for k, v in (result.get("metric") or {}).items()}
        at, value = result["value"]
        return Sample(labels, float(value), float(at))
    except (AttributeError, KeyError, TypeError, ValueError):
        raise CouldNotAskError(
            f"Prometheus at {where} answered a vector sample that is not {{metric, value}}: "
            f"{json.dumps(result)[:200]}"
        ) from None
