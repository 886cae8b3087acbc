"""DRA device selectors in CEL: the ``device`` variable as Kubernetes builds it.

``device_value(driver, attributes, capacity, expression=None)`` turns a device described the
ResourceSlice (and InferenceClass) way — ``attributes: {name: {string|version|bool|int: v}}``,
``capacity: {name: {value: "80Gi"}}``, names optionally qualified ``domain/name`` — into the
value a selector sees: ``device.driver``, ``device.attributes[domain].name`` (versions as
``semver``), ``device.capacity[domain].name`` (quantities). Unqualified names belong to the
driver's domain. As in Kubernetes, looking up a domain the device lacks yields an empty map, so
``has(device.attributes["other.com"].x)`` is false rather than an error; pass the selector as
``expression`` so the domains it names are present.

``selector_environment()`` is the (shared) environment selectors compile in.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any

from modelplane.kube.cel.runtime import DYN, Environment, quantity_value, semver_value

_DOMAIN_LOOKUP = re.compile(r"""\.(?:attributes|capacity)\[\s*["']([^"']+)["']\s*\]""")


@functools.cache
def selector_environment() -> Environment:
    return Environment({"device": DYN})


def _split(name: str, driver: str) -> tuple[str, str]:
    domain, _, short = name.rpartition("/")
    return (domain or driver), short


def _attribute(value: Mapping[str, Any]) -> Any:
    if "version" in value:
        return semver_value(str(value["version"]))
    for kind in ("string", "bool", "int"):
        if kind in value:
            return value[kind]
    raise ValueError(f"attribute {dict(value)!r} sets none of string, version, bool, int")


def device_value(
    driver: str,
    attributes: Mapping[str, Mapping[str, Any]] | None = None,
    capacity: Mapping[str, Mapping[str, Any]] | None = None,
    expression: str | None = None,
    *,
    skip_malformed: bool = False,
) -> dict[str, Any]:
    """The CEL ``device`` for a selector.

    A malformed attribute or quantity raises ValueError, or with ``skip_malformed`` hides only
    that entry: selectors reading it cannot match, selectors reading others still can.
    """
    attrs: dict[str, dict[str, Any]] = {}
    caps: dict[str, dict[str, Any]] = {}
    for name, value in (attributes or {}).items():
        domain, short = _split(name, driver)
        try:
            attrs.setdefault(domain, {})[short] = _attribute(value or {})
        except (ValueError, TypeError):
            if not skip_malformed:
                raise
    for name, value in (capacity or {}).items():
        domain, short = _split(name, driver)
        try:
            caps.setdefault(domain, {})[short] = quantity_value(str(value["value"]))
        except (ValueError, TypeError, KeyError):
            if not skip_malformed:
                raise
    if expression:
        for domain in _DOMAIN_LOOKUP.findall(expression):
            attrs.setdefault(domain, {})
            caps.setdefault(domain, {})
    return {"driver": driver, "attributes": attrs, "capacity": caps}
