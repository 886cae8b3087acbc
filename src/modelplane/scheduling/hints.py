"""What a capacity selector no device satisfies was compared with: the devices' own value, and
the nearest value the selector could name that they would satisfy.

A selector ``memory.compareTo(quantity("80Gi")) >= 0`` against H100s declared as the 81559Mi
DRA reports (79.6Gi) fails; quoting only the selector hides why. The hint reads
``the devices' memory is 81559Mi (79.6Gi); quantity("79Gi") would match`` (the suggestion only
for a near miss).
"""

from __future__ import annotations

import json
import math
import operator
import re
from collections.abc import Iterable
from fractions import Fraction

from modelplane.kube.quantity import QuantityError, parse_quantity
from modelplane.scheduling.devices import DeviceKind

_COMPARE = re.compile(
    r'device\.capacity\["(?P<domain>[^"]+)"\]\.(?P<name>[A-Za-z0-9_.-]+)'
    r'\.compareTo\(quantity\("(?P<quantity>[^"]+)"\)\)\s*(?P<op>>=|<=|==|>|<)\s*0'
)
_SUFFIX = re.compile(r"[A-Za-z]*$")
_OPS = {">=": operator.ge, ">": operator.gt, "<=": operator.le, "<": operator.lt, "==": operator.eq}
NEAR = Fraction(5, 100)
"""A device value within this share of the selector's is a near miss (80Gi asked of 79.6Gi):
the hint suggests the value that matches. Further off, the devices are simply too small (or
too big), and it only quotes their value."""


def capacity_hint(selector: str, kinds: Iterable[DeviceKind]) -> str:
    """The hint for the first capacity comparison in ``selector`` no device kind satisfies
    ("" when the selector compares no capacity, or no device declares the one compared)."""
    for m in _COMPARE.finditer(selector):
        values = [v for k in kinds if (v := _declared(k, m["domain"], m["name"])) is not None]
        try:
            wanted = parse_quantity(m["quantity"]).value
        except QuantityError:
            continue
        failing = [(text, value) for text, value in values if not _OPS[m["op"]](value, wanted)]
        if failing:
            text, value = failing[0]
            suffix = _SUFFIX.search(m["quantity"])
            unit = suffix.group(0) if suffix else ""
            said = f"the devices' {m['name']} is {text}{_in_unit(text, value, unit)}"
            if abs(value - wanted) > NEAR * wanted:
                return said
            return f'{said}; quantity("{_nearest(value, m["op"], unit)}") would match'
    return ""


def _declared(kind: DeviceKind, domain: str, name: str) -> tuple[str, Fraction] | None:
    if kind.driver != domain:
        return None
    capacity = json.loads(kind.key).get("capacity") or {}
    raw = capacity.get(name) or capacity.get(f"{domain}/{name}")
    if not isinstance(raw, dict):
        return None
    text = str(raw.get("value", ""))
    try:
        return text, parse_quantity(text).value
    except QuantityError:
        return None


def _scale(unit: str) -> Fraction:
    try:
        return parse_quantity(f"1{unit}").value
    except QuantityError:
        return Fraction(1)


def _nearest(value: Fraction, op: str, unit: str) -> str:
    """The value in ``unit`` closest to the selector's that ``value`` satisfies."""
    scale = _scale(unit)
    if op == "==":
        exact = value / scale
        return f"{exact.numerator}{unit}" if exact.denominator == 1 else f"{value}"
    if op in (">=", ">"):
        n = math.floor(value / scale)
        n -= 1 if op == ">" and n * scale == value else 0
    else:
        n = math.ceil(value / scale)
        n += 1 if op == "<" and n * scale == value else 0
    return f"{n}{unit}"


def _in_unit(text: str, value: Fraction, unit: str) -> str:
    """`` (79.6Gi)`` when the device's value is written in another unit, else ""."""
    if not unit or text.endswith(unit):
        return ""
    # Rounded down: 81559Mi is 79.6Gi, and 46068Mi 44.9Gi, never a rounded-up 45.0Gi.
    return f" ({math.floor(value / _scale(unit) * 10) / 10:.1f}{unit})"
