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
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from modelplane.kube import dra, objects
from modelplane.kube.cel import runtime as cel
from modelplane.kube.quantity import QuantityError, parse_quantity

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
    memory: int = 0
    """Bytes of the ``memory`` capacity (any domain), 0 when none: how capable the device is,
    for ranking the least capable fit first."""

    @property
    def claimable(self) -> bool:
        return self.claim != SYNTHETIC


@dataclass(frozen=True)
class SelectorProblem:
    """Why a selector text cannot be used (compile error, or a non-bool result)."""

    message: str


def device_kinds(inference_class: dict[str, Any]) -> tuple[DeviceKind, ...]:
    """The device kinds of an InferenceClass, in name order: ``spec.devices`` is a list-map
    keyed by name, so the order it is written in decides nothing."""
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
                memory=_memory(device.get("capacity") or {}),
            )
        )
    return tuple(sorted(kinds, key=lambda k: k.name))


def _memory(capacity: dict[str, Any]) -> int:
    for name, value in sorted(capacity.items()):
        if name.rsplit("/", 1)[-1] == "memory" and isinstance(value, dict):
            try:
                memory = parse_quantity(str(value.get("value", "0"))).as_approximate_float()
                return max(0, int(memory))
            except (QuantityError, ValueError, OverflowError):
                return 0
    return 0


def class_price(inference_class: dict[str, Any]) -> float | None:
    """``spec.cost.perNodeHour``, None when the class has no price (or a malformed one)."""
    cost = objects.mapping(inference_class, "spec", "cost")
    value = cost.get("perNodeHour")
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        return None
    return float(value)


DEVICE_FIELDS = ("driver", "attributes", "capacity", "allowMultipleAllocations")
"""The fields Kubernetes declares on the CEL ``device`` of a DRA selector."""

# CEL string literals (raw, triple-quoted, single or double quoted), blanked before looking for
# field selections so that text inside a string is never read as one.
_STRINGS = re.compile(
    r"[rRbB]{0,2}"
    r"""('''[\s\S]*?'''|"{3}[\s\S]*?"{3}|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')"""
)
# ``device.<field>`` where ``device`` is the variable, not a field of something else.
_DEVICE_FIELD = re.compile(r"(?<![\w.])device\s*\.\s*([A-Za-z_]\w*)")


@lru_cache(maxsize=4096)
def compile_selector(text: str) -> cel.Program | SelectorProblem:
    """The compiled selector, or the problem that stops it compiling."""
    try:
        program = dra.selector_environment().compile(text)
    except cel.CelCompileError as e:
        return SelectorProblem(f"does not compile: {e}")
    # ``device`` is declared dynamic here, so a misspelt field would only fail at runtime, as a
    # silent no-match on every device. Kubernetes declares its fields and refuses the text.
    for field in _DEVICE_FIELD.findall(_STRINGS.sub('""', text)):
        if field not in DEVICE_FIELDS:
            return SelectorProblem(
                f"does not compile: undefined field '{field}' of device "
                f"(a DRA device has {', '.join(DEVICE_FIELDS)})"
            )
    return program


@lru_cache(maxsize=1024)
def _activation(key: str) -> cel.Activation:
    content = json.loads(key)
    device = dra.device_value(
        content["driver"], content["attributes"], content["capacity"], skip_malformed=True
    )
    return dra.selector_environment().raw_activation({"device": device})


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


# ``device.capacity["domain"].name`` and ``device.attributes["domain"].name`` in a selector.
_QUALIFIED = re.compile(
    r"(?<![\w.])device\s*\.\s*(capacity|attributes)\s*\[\s*(?:\"([^\"]*)\"|'([^']*)')\s*\]"
    r"\s*\.\s*([A-Za-z_]\w*)"
)


def undeclared(selectors: tuple[str, ...], kinds: tuple[DeviceKind, ...]) -> str:
    """The capacity and attribute names the selectors read that no device kind declares, with
    the names they do declare, or "": a misspelt name (``memroy``) only ever fails to match."""
    declared: dict[str, set[str]] = {"capacity": set(), "attributes": set()}
    for kind in kinds:
        content = json.loads(kind.key)
        for field in declared:
            for key in content[field]:
                declared[field].add(key if "/" in key else f"{kind.driver}/{key}")
    missing = sorted(
        {
            (field, f"{dq or sq}/{name}")
            for text in selectors
            for field, dq, sq, name in _QUALIFIED.findall(text)
            if f"{dq or sq}/{name}" not in declared[field]
        }
    )
    if not missing:
        return ""
    read = ", ".join(f"{field} {name}" for field, name in missing)
    # No "; " inside: reasons are joined with it, and explain splits them again.
    known = " and ".join(
        f"{field} {', '.join(sorted(names)) or '(none)'}" for field, names in declared.items()
    )
    return f"the selector reads {read}, which no device of the class declares (it declares {known})"


def matches(selectors: tuple[str, ...], kind: DeviceKind) -> bool | SelectorProblem:
    """All selectors (ANDed) against one device kind; the first problem wins."""
    for text in selectors:
        result = evaluate(text, kind.key)
        if result is not True:
            return result
    return True
