"""``modelplane usage``: the queries it asks, how it reads Prometheus's answers, the bounded
summary and its two outputs, and the errors that name what to fix.

Prometheus's answers here are recorded shapes of its HTTP API (prometheus.io/docs/prometheus/
latest/querying/api/, "Format overview", "Instant queries", "Expression query result formats"):
``{"status": "success", "data": {"resultType": "vector", "result": [{"metric": {...}, "value":
[<unix time>, "<number>"]}]}}``, and on a refusal a 4xx or 5xx with ``{"status": "error",
"errorType": ..., "error": ...}``. A real Prometheus answers them in tests/e2e/test_usage.py.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from modelplane import cli, exits, genai
from modelplane import usage as u
from modelplane.compose.inferencecluster.components import CALLER_METRIC_LABEL
from tests.conformance.test_envoy_ai_gateway_metrics import GEN_AI_LABELS, GEN_AI_SERIES

ROOT = Path(__file__).resolve().parents[1]
OPERATIONS = ROOT / "docs" / "operations.md"
AT = 1_764_950_400.0  # 2025-12-05T16:00:00Z
PROMETHEUS = "http://prometheus.example:9090"
MODEL = "ml-team/qwen3-8b"


def vector(*results: dict[str, Any], warnings: list[str] | None = None) -> bytes:
    doc: dict[str, Any] = {"status": "success", "data": {"resultType": "vector", "result": []}}
    doc["data"]["result"] = list(results)
    if warnings:
        doc["warnings"] = warnings
    return json.dumps(doc).encode()


def result(value: str, **labels: str) -> dict[str, Any]:
    return {"metric": labels, "value": [AT, value]}


def tokens(caller: str | None, kind: str, value: float, model: str = MODEL) -> genai.Sample:
    labels = {"gen_ai_original_model": model, "gen_ai_token_type": kind}
    return genai.Sample({**labels, "caller": caller} if caller else labels, value)


def requests(caller: str | None, value: float, model: str = MODEL) -> genai.Sample:
    labels = {"gen_ai_original_model": model}
    return genai.Sample({**labels, "caller": caller} if caller else labels, value)


def asked(model: str | None = MODEL, over: str = "1h") -> u.Asked:
    return u.Asked(PROMETHEUS, over, model, AT)


def invoke(*args: str, env: dict[str, str] | None = None) -> Any:
    return CliRunner().invoke(cli.main, ["usage", *args], env=env)


# --- the queries ----------------------------------------------------------------------------


def test_the_tokens_query_sums_input_and_output_per_caller_model_and_token_type() -> None:
    assert genai.tokens_query() == (
        "sum by (caller, gen_ai_original_model, gen_ai_token_type) (\n"
        '  increase(gen_ai_client_token_usage_sum{gen_ai_token_type=~"input|output"}[1h])\n'
        ")"
    )


def test_the_requests_query_sums_requests_per_caller_and_model() -> None:
    assert genai.requests_query() == (
        "sum by (caller, gen_ai_original_model) (\n"
        "  increase(gen_ai_server_request_duration_seconds_count[1h])\n"
        ")"
    )


def test_one_service_is_matched_on_the_model_name_callers_sent() -> None:
    assert f'{{gen_ai_original_model="{MODEL}", gen_ai_token_type=~"input|output"}}' in (
        genai.tokens_query("1h", MODEL)
    )
    assert f'_count{{gen_ai_original_model="{MODEL}"}}[1h]' in genai.requests_query("1h", MODEL)


def test_the_window_is_the_range_of_both_queries() -> None:
    assert "[90m])" in genai.tokens_query("90m")
    assert "[90m])" in genai.requests_query("90m")


def usage_section() -> str:
    text = OPERATIONS.read_text()
    start = text.index("### Usage and cost by caller")
    return text[start : text.index("\n## ", start)]


def promql_blocks(text: str) -> list[str]:
    return [b.strip() for b in re.findall(r"```promql\n(.*?)```", text, re.S)]


def test_the_operations_page_shows_the_queries_the_command_asks() -> None:
    blocks = promql_blocks(usage_section())
    assert genai.tokens_query() in blocks
    assert genai.requests_query() in blocks


def test_the_operations_page_shows_the_command() -> None:
    assert f"modelplane usage {MODEL}" in usage_section()


def test_the_operations_page_example_is_what_the_command_prints_for_its_numbers() -> None:
    counted = genai.summarise(
        [
            tokens("search", "input", 1_234_567),
            tokens("search", "output", 345_679),
            tokens("ads", "input", 201_300),
            tokens("ads", "output", 80_250),
        ],
        [requests("search", 1234), requests("ads", 310)],
    )
    at = u.Asked("http://prometheus.monitoring:9090", "1h", MODEL, 1_796_493_600.0)
    printed = u.as_text(counted, at, u.Prices(input=0.40, output=1.60))
    (example,) = re.findall(r"```console\n\$ modelplane usage .*?```", usage_section(), re.S)
    assert printed in example


def test_the_queries_name_series_and_labels_the_ai_gateway_exports() -> None:
    assert {genai.TOKENS, genai.REQUESTS} <= GEN_AI_SERIES
    assert {genai.MODEL, genai.TOKEN_TYPE} <= GEN_AI_LABELS


def test_the_caller_label_is_the_one_the_stack_maps_the_caller_header_to() -> None:
    assert genai.CALLER == CALLER_METRIC_LABEL


# --- what the command takes -----------------------------------------------------------------


@pytest.mark.parametrize("text", ["1h", "30m", "90s", "500ms", "1d12h", "2w", "1y", "1h30m"])
def test_a_window_in_prometheus_duration_syntax_is_taken(text: str) -> None:
    assert u.window(text) == text


@pytest.mark.parametrize(
    "text", ["", "1", "h", "1x", "1.5h", "-1h", "30m1h", "1h 30m", "1H", "1h\n"]
)
def test_a_window_prometheus_would_not_parse_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="is not a Prometheus duration"):
        u.window(text)


@pytest.mark.parametrize("text", ["0s", "0h0m"])
def test_a_window_of_zero_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="longer than 0"):
        u.window(text)


def test_a_bad_window_is_a_usage_error_naming_the_flag() -> None:
    out = invoke(MODEL, "--prometheus", PROMETHEUS, "--window", "1x")
    assert out.exit_code == exits.UNREADABLE
    assert out.stderr.startswith("modelplane usage: Invalid value for '--window': '1x' is not")


@pytest.mark.parametrize(
    "text", ["qwen3-8b", "ml-team/", "/qwen", "ML-team/qwen", 'a/b"}', "a/b/c", "a/b\n"]
)
def test_a_service_not_named_namespace_slash_service_is_refused(text: str) -> None:
    out = invoke(text, "--prometheus", PROMETHEUS)
    assert out.exit_code == exits.UNREADABLE
    assert "Invalid value for 'NAMESPACE/SERVICE'" in out.stderr


def test_a_service_and_all_together_are_refused() -> None:
    out = invoke(MODEL, "--all", "--prometheus", PROMETHEUS)
    assert out.exit_code == exits.UNREADABLE
    assert "give NAMESPACE/SERVICE or --all, not both" in out.stderr


def test_neither_a_service_nor_all_is_refused() -> None:
    out = invoke("--prometheus", PROMETHEUS)
    assert out.exit_code == exits.UNREADABLE
    assert "give NAMESPACE/SERVICE or --all" in out.stderr


def test_without_a_prometheus_the_error_names_the_flag_and_the_variable() -> None:
    out = invoke(MODEL, env={u.ENVIRONMENT: ""})
    assert out.exit_code == exits.UNREADABLE
    assert "give --prometheus URL or set MODELPLANE_PROMETHEUS" in out.stderr


def test_the_prometheus_address_is_read_from_the_environment_too() -> None:
    out = invoke(MODEL, env={u.ENVIRONMENT: "ftp://prometheus"})
    assert "Invalid value for '--prometheus': 'ftp://prometheus' is not an http://" in out.stderr


def test_a_negative_price_is_refused_naming_the_flag() -> None:
    out = invoke(MODEL, "--prometheus", PROMETHEUS, "--price-output", "-1")
    assert out.exit_code == exits.UNREADABLE
    assert "Invalid value for '--price-output'" in out.stderr


def test_a_prometheus_that_cannot_be_reached_exits_non_zero_naming_the_flag() -> None:
    # Port 1 on loopback: nothing listens, the connection is refused at once.
    out = invoke(MODEL, "--prometheus", "http://127.0.0.1:1")
    assert out.exit_code == exits.UNREADABLE
    assert out.stderr.startswith(
        "modelplane usage: could not reach Prometheus at http://127.0.0.1:1"
    )
    assert "--prometheus, or $MODELPLANE_PROMETHEUS" in out.stderr


def test_the_command_loads_neither_grpc_nor_the_sdk() -> None:
    probe = (
        "import sys\nfrom modelplane.cli import main\n"
        "try:\n    main(['usage', 'a/b', '--prometheus', 'http://127.0.0.1:1'])\n"
        "except SystemExit:\n    pass\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'grpc', 'crossplane'}))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.stdout.strip() == "[]"


# --- Prometheus's answers -------------------------------------------------------------------


def test_a_vector_answer_is_read_as_labelled_samples() -> None:
    body = vector(result("1234.5", caller="search", gen_ai_token_type="input"))
    answer = genai.read_answer(body, 200, PROMETHEUS)
    labels = {"caller": "search", "gen_ai_token_type": "input"}
    assert answer.samples == (genai.Sample(labels, 1234.5, AT),)


def test_an_empty_vector_is_no_samples() -> None:
    assert genai.read_answer(vector(), 200, PROMETHEUS).samples == ()


def test_prometheus_warnings_are_kept() -> None:
    answer = genai.read_answer(vector(warnings=["partial results"]), 200, PROMETHEUS)
    assert answer.warnings == ("partial results",)


def test_a_nan_sample_counts_nothing() -> None:
    assert genai.read_answer(vector(result("NaN", caller="a")), 200, PROMETHEUS).samples == ()


def test_a_refused_query_says_what_prometheus_said() -> None:
    body = json.dumps(
        {
            "status": "error",
            "errorType": "bad_data",
            "error": 'invalid parameter "query": 1:1: parse error: unexpected end of input',
        }
    ).encode()
    with pytest.raises(
        genai.CouldNotAskError, match="refused the query: bad_data: invalid parameter"
    ):
        genai.read_answer(body, 400, PROMETHEUS)


def test_an_unavailable_prometheus_is_could_not_ask() -> None:
    body = b'{"status": "error", "errorType": "unavailable", "error": "TSDB not ready"}'
    with pytest.raises(genai.CouldNotAskError, match="unavailable: TSDB not ready"):
        genai.read_answer(body, 503, PROMETHEUS)


def test_an_answer_that_is_not_prometheus_json_asks_whether_the_address_is_right() -> None:
    with pytest.raises(genai.CouldNotAskError, match=r"HTTP 404 .* is it the Prometheus server's"):
        genai.read_answer(b"<html>404 page not found</html>", 404, PROMETHEUS)


def test_a_matrix_answer_is_not_taken_for_a_vector() -> None:
    body = json.dumps({"status": "success", "data": {"resultType": "matrix", "result": []}})
    with pytest.raises(genai.CouldNotAskError, match="answered a matrix result, not a vector"):
        genai.read_answer(body.encode(), 200, PROMETHEUS)


def test_a_sample_without_a_value_is_could_not_ask() -> None:
    body = vector({"metric": {"caller": "a"}})
    with pytest.raises(genai.CouldNotAskError, match=re.escape("not {metric, value}")):
        genai.read_answer(body, 200, PROMETHEUS)


# --- the summary ----------------------------------------------------------------------------


def test_input_output_and_requests_meet_in_one_row_per_caller_and_model() -> None:
    summary = genai.summarise(
        [tokens("search", "input", 100), tokens("search", "output", 30)], [requests("search", 4)]
    )
    assert summary.rows == (genai.Row("search", MODEL, genai.Usage(100, 30, 4)),)


def test_callers_are_ranked_by_tokens() -> None:
    summary = genai.summarise(
        [tokens("small", "input", 10), tokens("big", "output", 500), tokens("mid", "input", 90)],
        [],
    )
    assert [r.caller for r in summary.rows] == ["big", "mid", "small"]


def test_a_series_without_a_caller_is_its_own_row() -> None:
    summary = genai.summarise([tokens(None, "input", 10)], [requests(None, 1)])
    assert summary.rows == (genai.Row(None, MODEL, genai.Usage(10, 0, 1)),)


def test_token_types_other_than_input_and_output_are_not_counted() -> None:
    summary = genai.summarise([tokens("a", "cached_input", 10), tokens("a", "input", 10)], [])
    assert summary.total == genai.Usage(10, 0, 0)


def test_past_twenty_callers_the_rest_are_summed_into_others() -> None:
    many = [tokens(f"team-{i:02}", "input", 100 - i) for i in range(25)]
    summary = genai.summarise(many, [requests("team-24", 3)])
    assert {r.caller for r in summary.rows} == {f"team-{i:02}" for i in range(20)}
    assert summary.others == genai.Others(
        callers=5, models=1, usage=genai.Usage(80 + 79 + 78 + 77 + 76, 0, 3)
    )


def test_a_kept_caller_keeps_every_model_row() -> None:
    many = [tokens(f"team-{i:02}", "input", 100 - i) for i in range(21)]
    summary = genai.summarise([*many, tokens("team-00", "input", 1, model="ml-team/other")], [])
    assert [r.model for r in summary.rows if r.caller == "team-00"] == [MODEL, "ml-team/other"]
    assert summary.others is not None and summary.others.callers == 1


def test_twenty_callers_or_fewer_have_no_others() -> None:
    summary = genai.summarise([tokens(f"team-{i:02}", "input", 1) for i in range(20)], [])
    assert summary.others is None


def test_the_total_counts_the_others_too() -> None:
    many = [tokens(f"team-{i:02}", "input", 1) for i in range(30)]
    assert genai.summarise(many, []).total == genai.Usage(30, 0, 0)


# --- the outputs ----------------------------------------------------------------------------


SUMMARY = genai.summarise(
    [tokens("search", "input", 1_234_567.4), tokens("search", "output", 345_678.6)],
    [requests("search", 1234.2)],
)


def test_the_table_heads_with_the_service_window_prometheus_and_time() -> None:
    first = u.as_text(SUMMARY, asked()).splitlines()[0]
    assert first == (
        f"ModelService/{MODEL}: usage over the last 1h ({PROMETHEUS}, 2025-12-05T16:00:00Z)"
    )


def test_the_table_shows_whole_numbers_with_thousands_separators() -> None:
    lines = u.as_text(SUMMARY, asked()).splitlines()
    assert lines[1].split() == [
        "CALLER",
        "MODEL",
        "INPUT",
        "TOKENS",
        "OUTPUT",
        "TOKENS",
        "REQUESTS",
    ]
    assert lines[2].split() == ["search", MODEL, "1,234,567", "345,679", "1,234"]
    assert lines[3].split() == ["total", "1,234,567", "345,679", "1,234"]


def test_all_services_head_the_table_as_every_model_service() -> None:
    assert u.as_text(SUMMARY, asked(model=None)).startswith("every ModelService: usage")


def test_prices_add_a_cost_column_per_million_tokens() -> None:
    lines = u.as_text(SUMMARY, asked(), u.Prices(input=0.40, output=1.60)).splitlines()
    assert lines[1].split()[-1] == "COST"
    # 1,234,567.4 x 0.40 / 1e6 + 345,678.6 x 1.60 / 1e6 = 0.4938 + 0.5531
    assert lines[2].split()[-1] == "1.05"


def test_without_prices_there_is_no_cost_column() -> None:
    assert "COST" not in u.as_text(SUMMARY, asked())


def test_a_cost_under_a_cent_keeps_two_figures() -> None:
    small = genai.summarise([tokens("a", "input", 1000)], [])
    assert u.as_text(small, asked(), u.Prices(input=0.40)).splitlines()[2].split()[-1] == "0.0004"


def test_the_others_row_says_how_many_callers_and_models_it_sums() -> None:
    many = genai.summarise([tokens(f"team-{i:02}", "input", 100 - i) for i in range(23)], [])
    line = u.as_text(many, asked()).splitlines()[-2]
    assert line.split() == ["others", "(3", "callers)", "(1", "models)", "237", "0", "0"]


def test_the_table_says_what_a_row_without_a_caller_is() -> None:
    text = u.as_text(genai.summarise([tokens(None, "input", 5)], []), asked())
    assert "(no caller)" in text.splitlines()[2]
    assert text.splitlines()[-1] == "(no caller): requests through a gateway without spec.auth"


def test_json_carries_the_same_facts_unrounded() -> None:
    doc = json.loads(u.as_json(SUMMARY, asked()))
    assert doc == {
        "service": MODEL,
        "window": "1h",
        "prometheus": PROMETHEUS,
        "time": "2025-12-05T16:00:00Z",
        "pricesPerMillionTokens": None,
        "rows": [
            {
                "caller": "search",
                "model": MODEL,
                "inputTokens": 1_234_567.4,
                "outputTokens": 345_678.6,
                "requests": 1234.2,
            }
        ],
        "others": None,
        "total": {"inputTokens": 1_234_567.4, "outputTokens": 345_678.6, "requests": 1234.2},
    }


def test_json_with_prices_gives_each_row_its_cost() -> None:
    doc = json.loads(u.as_json(SUMMARY, asked(), u.Prices(input=0.40, output=1.60)))
    assert doc["pricesPerMillionTokens"] == {"input": 0.40, "output": 1.60}
    assert doc["rows"][0]["cost"] == pytest.approx(1.04691272)
    assert doc["total"]["cost"] == pytest.approx(1.04691272)


def test_json_gives_a_row_without_a_caller_a_null_caller() -> None:
    summary = genai.summarise([tokens(None, "input", 5)], [])
    assert json.loads(u.as_json(summary, asked()))["rows"][0]["caller"] is None


def test_json_gives_others_their_counts_and_usage() -> None:
    many = genai.summarise([tokens(f"team-{i:02}", "input", 100 - i) for i in range(21)], [])
    others = json.loads(u.as_json(many, asked()))["others"]
    assert others == {
        "callers": 1,
        "models": 1,
        "inputTokens": 80,
        "outputTokens": 0,
        "requests": 0,
    }


# --- the command ----------------------------------------------------------------------------


class Recorded:
    """Prometheus's recorded answers, by the series each query reads; the queries it got."""

    def __init__(self, tokens: bytes = b"", requests: bytes = b"") -> None:
        self.answers = {genai.TOKENS: tokens or vector(), genai.REQUESTS: requests or vector()}
        self.asked: list[tuple[str, str, float]] = []

    def __call__(self, prometheus: str, query: str, at: float) -> u.Answer:
        self.asked.append((prometheus, query, at))
        series = genai.TOKENS if genai.TOKENS in query else genai.REQUESTS
        return genai.read_answer(self.answers[series], 200, prometheus)


def refused(prometheus: str, query: str, at: float) -> u.Answer:
    body = b'{"status": "error", "errorType": "execution", "error": "query timed out"}'
    return genai.read_answer(body, 422, prometheus)


RECORDED_TOKENS = vector(
    result("600", caller="search", gen_ai_original_model=MODEL, gen_ai_token_type="input"),
    result("150", caller="search", gen_ai_original_model=MODEL, gen_ai_token_type="output"),
)
RECORDED_REQUESTS = vector(result("12", caller="search", gen_ai_original_model=MODEL))


def test_the_command_prints_the_callers_usage(capsys: pytest.CaptureFixture[str]) -> None:
    code = u.usage_command(asked(), asking=Recorded(RECORDED_TOKENS, RECORDED_REQUESTS))
    assert code == exits.OK
    assert capsys.readouterr().out.splitlines()[2].split() == ["search", MODEL, "600", "150", "12"]


def test_both_queries_ask_the_same_prometheus_at_the_same_time() -> None:
    recorded = Recorded(RECORDED_TOKENS, RECORDED_REQUESTS)
    u.usage_command(asked(over="2h"), asking=recorded)
    assert [(p, at) for p, _, at in recorded.asked] == [(PROMETHEUS, AT), (PROMETHEUS, AT)]
    assert [q for _, q, _ in recorded.asked] == [
        genai.tokens_query("2h", MODEL),
        genai.requests_query("2h", MODEL),
    ]


def test_all_services_ask_without_a_model_matcher() -> None:
    recorded = Recorded()
    u.usage_command(asked(model=None), asking=recorded)
    assert [q for _, q, _ in recorded.asked] == [
        genai.tokens_query("1h"),
        genai.requests_query("1h"),
    ]


def test_no_series_is_no_usage_recorded_and_says_why_it_can_be(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert u.usage_command(asked(), asking=Recorded()) == exits.OK
    out = capsys.readouterr().out
    assert out.startswith(f"no usage recorded for ModelService/{MODEL} over the last 1h")
    assert "path-form requests" in out and "spec.auth" in out


def test_no_series_in_json_is_empty_rows_and_the_reason_on_stderr(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert u.usage_command(asked(), "json", asking=Recorded()) == exits.OK
    said = capsys.readouterr()
    assert json.loads(said.out)["rows"] == []
    assert said.err.startswith("modelplane usage: no usage recorded")


def test_a_refused_query_could_not_ask_and_exits_non_zero(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert u.usage_command(asked(), asking=refused) == exits.UNREADABLE
    said = capsys.readouterr()
    assert said.out == ""
    assert said.err == (
        f"modelplane usage: Prometheus at {PROMETHEUS} refused the query: execution: query timed "
        "out (the address is --prometheus, or $MODELPLANE_PROMETHEUS)\n"
    )


def test_prometheus_warnings_reach_stderr_once(capsys: pytest.CaptureFixture[str]) -> None:
    warned = vector(warnings=["partial results"])
    u.usage_command(asked(), asking=Recorded(warned, warned))
    assert capsys.readouterr().err.count("Prometheus warns: partial results") == 1


def test_json_output_is_the_summary(capsys: pytest.CaptureFixture[str]) -> None:
    u.usage_command(asked(), "json", asking=Recorded(RECORDED_TOKENS, RECORDED_REQUESTS))
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert rows == [
        {
            "caller": "search",
            "model": MODEL,
            "inputTokens": 600,
            "outputTokens": 150,
            "requests": 12,
        }
    ]
