"""``modelplane usage``: tokens and requests per caller and model over a window, asked of the
fleet-wide Prometheus (docs/operations.md, "Usage and cost by caller").

The series, the queries over them and the reading of Prometheus's answer are in ``genai.py``
(docs/operations.md shows the queries and a test holds the two equal). Read-only, and standard
library only: the command starts without the composition function's dependencies.
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from modelplane import exits
from modelplane.genai import (
    NO_CALLER,
    Answer,
    CouldNotAskError,
    Summary,
    Usage,
    read_answer,
    requests_query,
    summarise,
    tokens_query,
)
from modelplane.kube import objects

COMMAND = "usage"
ENVIRONMENT = "MODELPLANE_PROMETHEUS"
PER_TOKENS = 1_000_000

# Prometheus's duration syntax (its docs, "Time Durations"): unit-suffixed numbers, longest unit
# first, each unit at most once.
_DURATION = re.compile(
    r"(?:(\d+)y)?(?:(\d+)w)?(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?(?:(\d+)ms)?"
)
_LABEL = r"[a-z0-9](?:[-a-z0-9]*[a-z0-9])?"
_SERVICE = re.compile(rf"{_LABEL}/[a-z0-9](?:[-a-z0-9.]*[a-z0-9])?")


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


Ask = Callable[[str, str, float], Answer]


def ask(prometheus: str, query: str, at: float) -> Answer:
    """Runs ``query`` at time ``at`` (Unix seconds) on the Prometheus at ``prometheus``."""
    arguments = urllib.parse.urlencode({"query": query, "time": f"{at:.3f}"})
    url = f"{prometheus.rstrip('/')}/api/v1/query?{arguments}"
    try:
        with urllib.request.urlopen(url, timeout=30.0) as answer:
            return read_answer(answer.read(), answer.status, prometheus)
    except urllib.error.HTTPError as e:
        # Prometheus answers a refused query with a 4xx or 5xx whose body says why.
        return read_answer(e.read(), e.code, prometheus)
    except urllib.error.URLError as e:
        raise CouldNotAskError(f"could not reach Prometheus at {prometheus}: {e.reason}") from None
    except OSError as e:
        raise CouldNotAskError(f"could not reach Prometheus at {prometheus}: {e}") from None


# --- prices -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Prices:
    """Per million tokens, the platform's own price list (docs/operations.md's first method)."""

    input: float = 0.0
    output: float = 0.0


def _cost(usage: Usage, prices: Prices) -> float:
    return (usage.input * prices.input + usage.output * prices.output) / PER_TOKENS


def _as_dict(usage: Usage, prices: Prices | None) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "inputTokens": usage.input,
        "outputTokens": usage.output,
        "requests": usage.requests,
    }
    if prices is not None:
        fields["cost"] = _cost(usage, prices)
    return fields


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
        return objects.timestamp(self.at)


HEADERS = ("CALLER", "MODEL", "INPUT TOKENS", "OUTPUT TOKENS", "REQUESTS")


def as_text(summary: Summary, asked: Asked, prices: Prices | None = None) -> str:
    """The summary as a table a person reads: whole numbers with thousands separators."""
    head = f"{asked.subject}: usage over the last {asked.over} ({asked.prometheus}, {asked.when})"
    table: list[tuple[str, ...]] = [(*HEADERS, "COST")] if prices else [HEADERS]
    table += [_cells(r.caller or NO_CALLER, r.model, r.usage, prices) for r in summary.rows]
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
    money = (_money(_cost(usage, prices)),) if prices else ()
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
            {"caller": r.caller, "model": r.model, **_as_dict(r.usage, prices)}
            for r in summary.rows
        ],
        "others": (
            None
            if summary.others is None
            else {
                "callers": summary.others.callers,
                "models": summary.others.models,
                **_as_dict(summary.others.usage, prices),
            }
        ),
        "total": _as_dict(summary.total, prices),
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
    asked: Asked, output: str = "text", prices: Prices | None = None, asking: Ask = ask
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
    summary = summarise(tokens.samples, requests.samples)
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
