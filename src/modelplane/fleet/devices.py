"""DRA device selectors evaluated against InferenceClass devices.

An InferenceClass lists device *kinds* (one entry per kind, with a per-node ``count``), not single
devices. A selector is CEL in the DRA dialect with one variable, ``device``:

- ``device.driver``: the kind's DRA driver;
- ``device.attributes["domain"].name`` / ``device.capacity["domain"].name``: an attribute key
  ``domain/name`` lands under ``domain``; a bare ``name`` under the device's own driver domain;
  versions are semver values, capacities quantities (``quantity()``/``semver()`` compare them);
- ``"domain" in device.attributes``.

Each distinct selector text compiles once per process, and evaluates once per (selector, device
kind) however many pools and clusters share the class: the caches key on the text and on the
device's content, never on the pool. A selector that does not compile, or evaluates to something
other than a bool, is a :class:`SelectorProblem`; a runtime error on one device (a missing
attribute, a quantity compared with a version) is simply no match, as a device without the
attribute cannot satisfy the request.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from modelplane.kube import cel

DRA = "DRA"
SYNTHETIC = "Synthetic"


@dataclass(frozen=True)
class DeviceKind:
    """One ``spec.devices[]`` entry of an InferenceClass: ``count`` devices on every node."""

    name: str
    driver: str
    claim: str
    device_class_name: str
    count: int
    key: str
    """Canonical content (driver, attributes, capacity): equal keys evaluate selectors equally."""

    @property
    def claimable(self) -> bool:
        return self.claim != SYNTHETIC


@dataclass(frozen=True)
class SelectorProblem:
    """Why a selector text cannot be used (compile error, or a non-bool result)."""

    message: str


def device_kinds(inference_class: dict[str, Any]) -> tuple[DeviceKind, ...]:
    """The device kinds of an InferenceClass, in class order."""
    kinds = []
    for device in inference_class.get("spec", {}).get("devices") or []:
        content = {
            "driver": device.get("driver", ""),
            "attributes": device.get("attributes") or {},
            "capacity": device.get("capacity") or {},
        }
        kinds.append(
            DeviceKind(
                name=str(device.get("name", "")),
                driver=str(device.get("driver", "")),
                claim=str(device.get("claim", DRA)),
                device_class_name=str(device.get("deviceClassName", "")),
                count=max(0, int(device.get("count", 1))),
                key=json.dumps(content, sort_keys=True, separators=(",", ":")),
            )
        )
    return tuple(kinds)


_ENV: cel.Environment | None = None


def _env() -> cel.Environment:
    global _ENV
    if _ENV is None:
        _ENV = cel.Environment({"device": cel.DYN})
    return _ENV


@lru_cache(maxsize=4096)
def compile_selector(text: str) -> cel.Program | SelectorProblem:
    """The compiled selector, or the problem that stops it compiling."""
    try:
        return _env().compile(text)
    except cel.CelCompileError as e:
        return SelectorProblem(f"does not compile: {e}")


def _split(key: str, driver: str) -> tuple[str, str]:
    domain, sep, ident = key.partition("/")
    return (domain, ident) if sep else (driver, key)


def _attribute_value(value: dict[str, Any]) -> Any:
    if "version" in value:
        return cel.semver_value(str(value["version"]))
    for typed in ("string", "bool", "int"):
        if typed in value:
            return value[typed]
    raise ValueError("no value")


@lru_cache(maxsize=1024)
def _activation(key: str) -> cel.Activation:
    content = json.loads(key)
    driver = content["driver"]
    attributes: dict[str, dict[str, Any]] = {}
    for name, value in content["attributes"].items():
        domain, ident = _split(name, driver)
        try:
            attributes.setdefault(domain, {})[ident] = _attribute_value(value or {})
        except (ValueError, TypeError):
            # A malformed value hides only that attribute: selectors reading it cannot match,
            # selectors reading others still can.
            continue
    capacity: dict[str, dict[str, Any]] = {}
    for name, value in content["capacity"].items():
        domain, ident = _split(name, driver)
        try:
            capacity.setdefault(domain, {})[ident] = cel.quantity_value(str(value["value"]))
        except (ValueError, TypeError, KeyError):
            continue
    device = {"driver": driver, "attributes": attributes, "capacity": capacity}
    return _env().raw_activation({"device": device})


@lru_cache(maxsize=65536)
def evaluate(text: str, device_key: str) -> bool | SelectorProblem:
    """Whether the selector matches a device of this content; a problem when it is unusable."""
    program = compile_selector(text)
    if isinstance(program, SelectorProblem):
        return program
    try:
        result = program.evaluate_raw(_activation(device_key))
    except cel.CelEvaluationError:
        return False
    if not isinstance(result, bool):
        return SelectorProblem(f"evaluates to {type(result).__name__}, not bool")
    return result


def matches(selectors: tuple[str, ...], kind: DeviceKind) -> bool | SelectorProblem:
    """All selectors (ANDed) against one device kind; the first problem wins."""
    for text in selectors:
        result = evaluate(text, kind.key)
        if result is not True:
            return result
    return True
