"""Every value the stack sets is one the pinned chart reads: the key exists in the chart's own
default values (tests/upstream/values), with a value of the same shape.

A value under a default that is an empty map is the chart passing a free-form map through, and
Envoy Gateway's ``config.envoyGateway`` is rendered verbatim as its configuration file (the
EnvoyGateway API, whose extension-manager fields docs/design/serving-stack.md traces to Envoy AI
Gateway's own values for it): below those, keys are not the chart's to know.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from .managed import managed, of_kind, provisioned
from .support import ROOT, cluster, installing, releases

VALUES = ROOT / "tests" / "upstream" / "values"
# cluster-autoscaler's extraArgs: every key becomes a flag (templates/deployment.yaml).
PASSED_THROUGH = {"gateway-helm": ("config", "envoyGateway"), "cluster-autoscaler": ("extraArgs",)}


def leaves(values: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    if isinstance(values, dict) and values:
        for key, value in values.items():
            yield from leaves(value, (*path, key))
    else:
        yield path, values


def default_at(defaults: Any, path: tuple[str, ...]) -> tuple[bool, Any]:
    """Whether the chart reads ``path``, and its default there (``None`` when passed through)."""
    node = defaults
    for i, key in enumerate(path):
        if isinstance(node, dict) and not node and i > 0:
            return True, None  # a free-form map the chart passes through
        if not isinstance(node, dict) or key not in node:
            return False, None
        node = node[key]
    return True, node


def charts() -> list[tuple[str, str, dict[str, Any]]]:
    found = {}
    for stack in ("Standard", "Dynamo"):
        for release in releases(installing(cluster(stack=stack))).values():
            chart = release["spec"]["forProvider"]["chart"]
            values = release["spec"]["forProvider"]["values"]
            found[chart["name"]] = (chart["name"], chart["version"], values)
    # What a managed EKS cluster adds: the cluster autoscaler.
    for release in of_kind(provisioned(managed("EKS")), "Release").values():
        chart = release["spec"]["forProvider"]["chart"]
        found.setdefault(
            chart["name"],
            (chart["name"], chart["version"], release["spec"]["forProvider"]["values"]),
        )
    return sorted(found.values())


def _id(value: Any) -> str:
    # Values that crossed the wire come back in protobuf map order, which differs between
    # processes: the id must not, or parallel workers collect different tests.
    return json.dumps(value, sort_keys=True) if isinstance(value, dict) else str(value)


@pytest.mark.parametrize(("chart", "version", "values"), charts(), ids=_id)
def test_every_value_set_is_one_the_pinned_chart_reads(
    chart: str, version: str, values: dict[str, Any]
) -> None:
    path = VALUES / f"{chart}-{version}.yaml"
    assert path.exists(), f"no published values for {chart} {version} in {VALUES}"
    defaults = yaml.safe_load(path.read_text()) or {}
    through = PASSED_THROUGH.get(chart)
    for leaf, value in leaves(values):
        if through and leaf[: len(through)] == through:
            continue
        known, default = default_at(defaults, leaf)
        assert known, f"{chart} {version} reads no value {'.'.join(leaf)}"
        if default is not None and value is not None:
            assert type(value) is type(default) or (
                isinstance(value, dict) and isinstance(default, dict)
            ), f"{chart} {version}: {'.'.join(leaf)} is a {type(default).__name__} in the chart"


def test_every_pinned_chart_has_its_published_values_in_the_repository() -> None:
    pinned = {f"{chart}-{version}.yaml" for chart, version, _ in charts()}
    assert pinned <= {p.name for p in Path(VALUES).glob("*.yaml")}
