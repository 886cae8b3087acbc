"""The gateway's usage series in Prometheus: their names, the queries over them, Prometheus's
answer read as an instant vector, and that answer summarised by caller.

The series are Envoy AI Gateway v1.1.0's gen_ai metrics, labelled with the authenticated caller
(docs/design/shared-front-door.md, "Step 5 as built"). Two readers share them: ``modelplane
usage`` asks Prometheus itself, and a ModelService's usage summary reads the answer provider-http
fetched for it (compose/modelservice/usage.py). Standard library only: the command starts
without the composition function's dependencies.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
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
TOP = 20
"""Callers a summary names; the rest are summed into ``others``."""
NO_CALLER = "(no caller)"
"""How a summary shows requests through a gateway without ``spec.auth`` (no caller label)."""


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


# --- the summary --------------------------------------------------------------------------


@dataclass(frozen=True)
class Usage:
    input: float = 0.0
    output: float = 0.0
    requests: float = 0.0

    @property
    def tokens(self) -> float:
        return self.input + self.output

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input + other.input, self.output + other.output, self.requests + other.requests
        )


@dataclass(frozen=True)
class Row:
    caller: str | None
    model: str
    usage: Usage


@dataclass(frozen=True)
class Others:
    callers: int
    models: int
    usage: Usage


@dataclass(frozen=True)
class Summary:
    rows: tuple[Row, ...]
    others: Others | None
    total: Usage


Cells = dict[tuple[str | None, str], Usage]


def summarise(tokens: Iterable[Sample], requests: Iterable[Sample], top: int = TOP) -> Summary:
    """Rows per caller and model, the ``top`` callers by tokens only; the rest in ``others``.
    Samples of another token type, or of none (``vector(0)``'s), count for nothing."""
    cells = _cells_of(tokens, requests)
    per_caller: dict[str | None, Usage] = {}
    for (caller, _), usage in cells.items():
        per_caller[caller] = per_caller.get(caller, Usage()) + usage
    ranked = sorted(
        per_caller, key=lambda c: (-per_caller[c].tokens, -per_caller[c].requests, c or "")
    )
    rank = {caller: i for i, caller in enumerate(ranked[:top])}
    rows = sorted(
        (Row(caller, model, usage) for (caller, model), usage in cells.items() if caller in rank),
        key=lambda r: (rank[r.caller], -r.usage.tokens, r.model),
    )
    rest = {key: usage for key, usage in cells.items() if key[0] not in rank}
    return Summary(tuple(rows), _others(rest), sum(cells.values(), Usage()))


def _cells_of(tokens: Iterable[Sample], requests: Iterable[Sample]) -> Cells:
    """Usage per (caller, model); a series without a caller is the caller None."""
    cells: Cells = {}

    def add(labels: dict[str, str], usage: Usage) -> None:
        key = (labels.get(CALLER) or None, labels.get(MODEL, ""))
        cells[key] = cells.get(key, Usage()) + usage

    for s in tokens:
        kind = s.labels.get(TOKEN_TYPE)
        if kind == INPUT:
            add(s.labels, Usage(input=s.value))
        elif kind == OUTPUT:
            add(s.labels, Usage(output=s.value))
    for s in requests:
        add(s.labels, Usage(requests=s.value))
    return cells


def _others(rest: Cells) -> Others | None:
    if not rest:
        return None
    return Others(
        callers=len({caller for caller, _ in rest}),
        models=len({model for _, model in rest}),
        usage=sum(rest.values(), Usage()),
    )
