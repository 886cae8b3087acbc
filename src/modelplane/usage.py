"""``modelplane usage``: tokens and requests per caller and model over a window, asked of the
fleet-wide Prometheus (docs/operations.md, "Usage and cost by caller").

The series are Envoy AI Gateway v1.1.0's gen_ai metrics, labelled with the authenticated caller
(docs/design/shared-front-door.md, "Step 5 as built"). The queries are built here and nowhere
else; docs/operations.md shows them and a test holds the two equal. Read-only, and standard
library only: the command starts without the composition function's dependencies.
"""

from __future__ import annotations

import json
import math
import re
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from modelplane import exits

COMMAND = "usage"
ENVIRONMENT = "MODELPLANE_PROMETHEUS"
DEFAULT_WINDOW = "1h"
TOP = 20
TIMEOUT_SECONDS = 30.0
PER_TOKENS = 1_000_000

# The names the AI Gateway's Prometheus exporter gives them (tests/conformance/
# test_envoy_ai_gateway_metrics.py); the caller label is the stack's
# (compose/inferencecluster/components.py CALLER_METRIC_LABEL, held equal by a test).
TOKENS = "gen_ai_client_token_usage_sum"
REQUESTS = "gen_ai_server_request_duration_seconds_count"
CALLER = "caller"
MODEL = "gen_ai_original_model"
TOKEN_TYPE = "gen_ai_token_type"
INPUT, OUTPUT = "input", "output"

# Prometheus's duration syntax (its docs, "Time Durations"): unit-suffixed numbers, longest unit
# first, each unit at most once.
_DURATION = re.compile(
    r"(?:(\d+)y)?(?:(\d+)w)?(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?(?:(\d+)ms)?"
)
_LABEL = r"[a-z0-9](?:[-a-z0-9]*[a-z0-9])?"
_SERVICE = re.compile(rf"{_LABEL}/[a-z0-9](?:[-a-z0-9.]*[a-z0-9])?")
NO_CALLER = "(no caller)"


class CouldNotAskError(Exception):
    """Prometheus could not be reached, or did not answer the query: nothing is known."""


def window(text: str) -> str:
    """``text`` if it is a Prometheus duration longer than zero; ValueError says why not."""
    parts = _DURATION.fullmatch(text)
    if not text or parts is None:
        raise ValueError(
            f"{text!r} is not a Prometheus duration: numbers with units (ms, s, m, h, d, w, y), "
            "the longest first, e.g. 1h, 30m, 1d12h"
        )
    if not any(int(n) for n in parts.groups() if n):
        raise ValueError(f"{text!r} is empty: give a window longer than 0, e.g. 1h")
    return text


def service(text: str) -> str:
    """``text`` if it names a ModelService as its model name does (``<namespace>/<service>``)."""
    if not _SERVICE.fullmatch(text):
        raise ValueError(
            f"{text!r} is not <namespace>/<service>: a ModelService's namespace and name, as "
            "callers name its model"
        )
    return text


def prometheus_url(text: str) -> str:
    """``text`` if it is an http(s) address with a host."""
    parsed = urllib.parse.urlsplit(text)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise ValueError(f"{text!r} is not an http:// or https:// address of a Prometheus server")
    return text


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


# --- Prometheus's answer ------------------------------------------------------------------


@dataclass(frozen=True)
class Sample:
    labels: dict[str, str]
    value: float


@dataclass(frozen=True)
class Answer:
    samples: tuple[Sample, ...]
    warnings: tuple[str, ...] = ()


def read_answer(body: bytes, status: int, where: str) -> Answer:
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
        _, value = result["value"]
        return Sample(labels, float(value))
    except (AttributeError, KeyError, TypeError, ValueError):
        raise CouldNotAskError(
            f"Prometheus at {where} answered a vector sample that is not {{metric, value}}: "
            f"{json.dumps(result)[:200]}"
        ) from None


Ask = Callable[[str, str, float], Answer]


def ask(prometheus: str, query: str, at: float) -> Answer:
    """Runs ``query`` at time ``at`` (Unix seconds) on the Prometheus at ``prometheus``."""
    arguments = urllib.parse.urlencode({"query": query, "time": f"{at:.3f}"})
    url = f"{prometheus.rstrip('/')}/api/v1/query?{arguments}"
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT_SECONDS) as answer:
            return read_answer(answer.read(), answer.status, prometheus)
    except urllib.error.HTTPError as e:
        # Prometheus answers a refused query with a 4xx or 5xx whose body says why.
        return read_answer(e.read(), e.code, prometheus)
    except urllib.error.URLError as e:
        raise CouldNotAskError(f"could not reach Prometheus at {prometheus}: {e.reason}") from None
    except OSError as e:
        raise CouldNotAskError(f"could not reach Prometheus at {prometheus}: {e}") from None


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

    def cost(self, prices: Prices) -> float:
        return (self.input * prices.input + self.output * prices.output) / PER_TOKENS

    def as_dict(self, prices: Prices | None) -> dict[str, Any]:
        fields: dict[str, Any] = {
            "inputTokens": self.input,
            "outputTokens": self.output,
            "requests": self.requests,
        }
        if prices is not None:
            fields["cost"] = self.cost(prices)
        return fields


@dataclass(frozen=True)
class Prices:
    """Per million tokens, the platform's own price list (docs/operations.md's first method)."""

    input: float = 0.0
    output: float = 0.0


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
    """Rows per caller and model, the ``top`` callers by tokens only; the rest in ``others``."""
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
    return Summary(tuple(rows), _others(rest), _sum(cells.values()))


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
        usage=_sum(rest.values()),
    )


def _sum(usages: Iterable[Usage]) -> Usage:
    total = Usage()
    for u in usages:
        total += u
    return total


# --- output -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Asked:
    """What was asked, of whom and when: the heading of either output."""

    prometheus: str
    over: str
    model: str | None
    at: float

    @property
    def subject(self) -> str:
        return f"ModelService/{self.model}" if self.model else "every ModelService"

    @property
    def when(self) -> str:
        return datetime.fromtimestamp(self.at, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


HEADERS = ("CALLER", "MODEL", "INPUT TOKENS", "OUTPUT TOKENS", "REQUESTS")


def as_text(summary: Summary, asked: Asked, prices: Prices | None = None) -> str:
    """The summary as a table a person reads: whole numbers with thousands separators."""
    head = f"{asked.subject}: usage over the last {asked.over} ({asked.prometheus}, {asked.when})"
    table: list[tuple[str, ...]] = [(*HEADERS, "COST")] if prices else [HEADERS]
    for row in summary.rows:
        table.append(_cells(row.caller or NO_CALLER, row.model, row.usage, prices))
    if summary.others is not None:
        o = summary.others
        label = f"others ({o.callers} callers)"
        table.append(_cells(label, f"({o.models} models)", o.usage, prices))
    table.append(_cells("total", "", summary.total, prices))
    lines = [head, *_aligned(table)]
    if any(r.caller is None for r in summary.rows):
        lines.append(f"{NO_CALLER}: requests through a gateway without spec.auth")
    return "\n".join(lines) + "\n"


def _cells(caller: str, model: str, usage: Usage, prices: Prices | None) -> tuple[str, ...]:
    numbers = (_whole(usage.input), _whole(usage.output), _whole(usage.requests))
    money = (_money(usage.cost(prices)),) if prices else ()
    return (caller, model, *numbers, *money)


def _whole(value: float) -> str:
    return f"{round(value):,}"


def _money(value: float) -> str:
    # Small amounts keep two significant figures rather than round to 0.00.
    return f"{value:,.2f}" if value == 0 or value >= 0.01 else f"{value:.2g}"


def _aligned(table: Sequence[tuple[str, ...]]) -> list[str]:
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    lines = []
    for row in table:
        cells = [
            cell.ljust(width) if i < 2 else cell.rjust(width)
            for i, (cell, width) in enumerate(zip(row, widths, strict=True))
        ]
        lines.append("  ".join(cells).rstrip())
    return lines


def as_json(summary: Summary, asked: Asked, prices: Prices | None = None) -> str:
    """The same facts for machines: token and request counts as Prometheus computed them."""
    doc = {
        "service": asked.model,
        "window": asked.over,
        "prometheus": asked.prometheus,
        "time": asked.when,
        "pricesPerMillionTokens": (
            None if prices is None else {"input": prices.input, "output": prices.output}
        ),
        "rows": [
            {"caller": r.caller, "model": r.model, **r.usage.as_dict(prices)} for r in summary.rows
        ],
        "others": (
            None
            if summary.others is None
            else {
                "callers": summary.others.callers,
                "models": summary.others.models,
                **summary.others.usage.as_dict(prices),
            }
        ),
        "total": summary.total.as_dict(prices),
    }
    return json.dumps(doc, indent=2) + "\n"


def nothing_recorded(asked: Asked) -> str:
    return (
        f"no usage recorded for {asked.subject} over the last {asked.over} in Prometheus at "
        f"{asked.prometheus}: only requests by model name are counted (path-form requests, "
        "/<namespace>/<service>/..., are not), and per caller only on a gateway with spec.auth"
    )


# --- the command --------------------------------------------------------------------------


def usage_command(
    asked: Asked,
    output: str = "text",
    prices: Prices | None = None,
    asking: Ask = ask,
    top: int = TOP,
) -> int:
    """Asks, summarises and prints; the exit code: 0 asked (usage or none recorded), 2 could
    not ask."""
    try:
        tokens = asking(asked.prometheus, tokens_query(asked.over, asked.model), asked.at)
        requests = asking(asked.prometheus, requests_query(asked.over, asked.model), asked.at)
    except CouldNotAskError as e:
        exits.error(COMMAND, f"{e} (the address is --prometheus, or ${ENVIRONMENT})")
        return exits.UNREADABLE
    for warning in dict.fromkeys((*tokens.warnings, *requests.warnings)):
        exits.error(COMMAND, f"Prometheus warns: {warning}")
    summary = summarise(tokens.samples, requests.samples, top)
    recorded = bool(summary.rows) or summary.others is not None
    if output == "json":
        print(as_json(summary, asked, prices), end="")
        if not recorded:
            exits.error(COMMAND, nothing_recorded(asked))
    elif recorded:
        print(as_text(summary, asked, prices), end="")
    else:
        print(nothing_recorded(asked))
    return exits.OK
