"""`modelplane routes`: each ModelService's routing table (gateway, endpoint, cluster, declared
weight, share of traffic), the shares read from the integer weights its routes carry."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from modelplane import cli

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def routes(*args: str) -> str:
    out = CliRunner().invoke(cli.main, ["routes", *args])
    assert out.exit_code == 0, out.output
    return out.output


def rows(table: str) -> list[list[str]]:
    return [
        line.split()
        for line in table.splitlines()
        if line.startswith("  ") and "GATEWAY" not in line
    ]


def test_a_90_10_canary_gives_each_stable_replica_45_percent_and_the_canary_10() -> None:
    table = routes(str(EXAMPLES / "service-canary"))
    assert table.splitlines()[0] == "ModelService/ml-team/qwen: 3 of 3 endpoints ready"
    assert table.splitlines()[1].split() == ["GATEWAY", "ENDPOINT", "CLUSTER", "WEIGHT", "SHARE"]
    assert sorted((r[2], r[3], r[4]) for r in rows(table)) == [
        ("eu-west", "10", "10.00%"),
        ("us-east", "90", "45.00%"),
        ("us-east", "90", "45.00%"),
    ]
    assert {r[0] for r in rows(table)} == {"main"}


def test_an_external_provider_is_shown_by_its_host() -> None:
    table = routes(str(EXAMPLES / "service-overflow"))
    assert ["public", "kimi-k2-together", "external", "api.together.xyz", "1", "10.00%"] in rows(
        table
    )


def test_each_regional_service_is_routed_only_on_its_regions_gateway() -> None:
    table = routes(str(EXAMPLES / "service-regional"))
    blocks = table.strip().split("\n\n")
    by_service = {b.splitlines()[0].split()[0].rstrip(":"): rows(b) for b in blocks}
    assert {r[0] for r in by_service["ModelService/ml-team/qwen-eu"]} == {"eu"}
    assert {r[0] for r in by_service["ModelService/ml-team/qwen-us"]} == {"us"}
    assert [r[4] for r in by_service["ModelService/ml-team/qwen-us"]] == ["50.00%", "50.00%"]


def test_with_nothing_ready_the_table_says_the_service_answers_503() -> None:
    table = routes(str(EXAMPLES / "service-canary"), "--simulate-ready-copies", "0")
    [row] = rows(table)
    assert " ".join(row) == "main (none ready: answers 503)"


def test_an_input_without_a_service_exits_one_saying_so() -> None:
    out = CliRunner().invoke(cli.main, ["routes", str(EXAMPLES / "fleet-two-classes")])
    assert out.exit_code == 1
    assert out.stderr == "modelplane routes: no ModelService in the input: nothing to route\n"
    assert out.stdout == ""


def test_unreadable_input_is_refused() -> None:
    out = CliRunner().invoke(cli.main, ["routes", "/nonexistent"])
    assert out.exit_code == 2


def test_an_endpoint_inside_the_fleet_gets_no_share_and_says_why(tmp_path: Path) -> None:
    for doc in (EXAMPLES / "service-overflow").glob("*.yaml"):
        text = doc.read_text().replace("https://api.together.xyz/v1", "http://10.96.0.1:443/")
        (tmp_path / doc.name).write_text(text)
    table = routes(str(tmp_path))
    assert not [r for r in rows(table) if "kimi-k2-together" in r]
    assert "kimi-k2-together" in table and "EgressRefused" in table


def structured(output: str, *args: str) -> list[dict[str, Any]]:
    text = routes(*args, "-o", output)
    data = json.loads(text) if output == "json" else yaml.safe_load(text)
    services: list[dict[str, Any]] = data["services"]
    return services


@pytest.mark.parametrize("output", ["json", "yaml"])
def test_structured_output_holds_the_tables_rows(output: str) -> None:
    [service] = structured(output, str(EXAMPLES / "service-canary"))
    assert (service["namespace"], service["name"]) == ("ml-team", "qwen")
    assert service["endpoints"] == {"matched": 3, "ready": 3}
    assert sorted(
        (r["gateway"], r["cluster"], r["weight"], r["share"]) for r in service["routes"]
    ) == [
        ("main", "eu-west", 10, 0.1),
        ("main", "us-east", 90, 0.45),
        ("main", "us-east", 90, 0.45),
    ]


def test_structured_output_gives_an_external_endpoints_host_apart_from_its_cluster() -> None:
    [service] = structured("json", str(EXAMPLES / "service-overflow"))
    [external] = [r for r in service["routes"] if r["endpoint"] == "kimi-k2-together"]
    assert (external["cluster"], external["external"]) == (None, "api.together.xyz")


def test_structured_output_says_why_a_row_reaches_no_endpoint() -> None:
    [service] = structured("json", str(EXAMPLES / "service-canary"), "--simulate-ready-copies", "0")
    [row] = service["routes"]
    assert (row["endpoint"], row["share"], row["note"]) == (None, None, "none ready: answers 503")


def test_structured_output_has_one_entry_per_service_in_namespace_and_name_order() -> None:
    names = [s["name"] for s in structured("yaml", str(EXAMPLES / "service-regional"))]
    assert names == ["qwen-eu", "qwen-us"]
