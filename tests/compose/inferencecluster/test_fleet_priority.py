"""The fleet hop's half of per-caller priority: an InferenceCluster with a Managed gateway
composes one Envoy Gateway EnvoyExtensionPolicy on its fleet listener whose Lua script names
the endpoint picker's objective from the front hop's priority and the request's pool.

The script is checked by its text: there is no Lua here, and Envoy Gateway's Strict validator
runs it against its mocks when it translates the policy."""

from __future__ import annotations

import copy
import re
from typing import Any

from modelplane.compose.inferencecluster.fleetpriority import FLEET_PRIORITY, script
from modelplane.compose.shared.frontdoor import (
    OBJECTIVE_HEADERS,
    POOL_HEADER,
    PRIORITY_HEADER,
    PRIORITY_VALUES,
    priority_objective_name,
)

from .support import cluster, installing, manifest, resources, upstream

Obj = dict[str, Any]


def policy(ic: Obj | None = None) -> Obj:
    return manifest(resources(installing(ic or cluster()))[FLEET_PRIORITY])


def suffixes(lua: str) -> dict[str, str]:
    """The script's table from a priority header's value to its objective name's suffix."""
    return dict(re.findall(r'\["([^"]*)"\] = "([^"]*)"', lua))


def test_a_managed_gateway_gets_one_extension_policy_on_its_fleet_listener() -> None:
    composed = policy()
    assert composed["kind"] == "EnvoyExtensionPolicy"
    assert composed["metadata"]["namespace"] == "modelplane-system"
    assert composed["spec"]["targetRefs"] == [
        {
            "group": "gateway.networking.k8s.io",
            "kind": "Gateway",
            "name": "inference-gateway",
            "sectionName": "fleet",
        }
    ]


def test_the_policy_runs_one_inline_lua_script() -> None:
    assert policy()["spec"]["lua"] == [{"type": "Inline", "inline": script()}]


def test_an_external_gateway_gets_no_policy() -> None:
    # Modelplane composes nothing on a Gateway it does not own.
    external = cluster(gateway={"mode": "External"})
    assert FLEET_PRIORITY not in resources(installing(external))


def test_the_policy_is_admitted_by_the_pinned_crd() -> None:
    composed = copy.deepcopy(policy())
    assert [str(e) for e in upstream().admit(composed).errors] == []


def test_every_priority_value_names_its_pools_objective() -> None:
    table = suffixes(script())
    for value in PRIORITY_VALUES:
        assert "pool" + table[str(value)] == priority_objective_name("pool", value)


def test_only_the_values_the_front_hop_writes_are_honoured() -> None:
    # "+1", "01" or " 1" find no entry, so no header spelling makes a name outside the range.
    assert set(suffixes(script())) == {str(v) for v in PRIORITY_VALUES}


def test_a_negative_value_is_named_with_m_for_its_sign() -> None:
    assert suffixes(script())["-3"] == "-priority-m3"


def test_the_script_reads_the_priority_and_the_pool_the_front_hop_sent() -> None:
    lua = script()
    assert f'headers:get("{PRIORITY_HEADER}")' in lua
    assert f'headers:get("{POOL_HEADER}")' in lua


def test_both_objective_names_are_written_or_removed_together() -> None:
    # The picker reads the new name first: a client's header under either name is replaced or
    # removed on every request.
    lua = script()
    quoted = ", ".join(f'"{name}"' for name in OBJECTIVE_HEADERS)
    assert f"local OBJECTIVE = {{{quoted}}}" in lua
    assert "headers:replace(name, objective)" in lua
    assert "headers:remove(name)" in lua


def test_a_pool_header_that_is_no_dns_label_makes_no_objective() -> None:
    lua = script()
    assert "if suffix ~= nil and valid_pool(pool) then" in lua
    assert "#pool <= 63" in lua
    assert '"^[a-z0-9][a-z0-9%-]*$"' in lua
    assert '"[a-z0-9]$"' in lua


def test_envoy_gateway_is_deleted_only_after_the_policy() -> None:
    composed = resources(installing(cluster()))
    names = {key: obj["metadata"]["name"] for key, obj in composed.items()}
    ordered = {
        (u["spec"]["of"]["resourceRef"]["name"], u["spec"]["by"]["resourceRef"]["name"])
        for u in composed.values()
        if u["kind"] == "Usage"
    }
    assert (names["envoy-gateway"], names[FLEET_PRIORITY]) in ordered
