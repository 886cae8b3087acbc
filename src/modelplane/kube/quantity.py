"""Kubernetes resource quantities (``resource.Quantity``) as exact rationals.

Parsing follows apimachinery: a signed decimal number followed by a binary-SI suffix (Ki..Ei), a
decimal-SI suffix (n, u, m, k, M, G, T, P, E) or a decimal exponent (e3, E-2). Values are kept as
``Fraction`` so comparisons are exact, as ``inf.Dec`` makes them in Go: ``1Gi == 1024Mi``; like
apimachinery, parsing rounds a magnitude up to a whole nano and caps a binary-SI one at int64's
maximum, so ``1.0000000001 == 1.000000001`` and ``8Ei == 10Ei``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from fractions import Fraction

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
NANOS_PER_UNIT = 10**9

QUANTITY_PATTERN = r"^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
_FORMAT_ERROR = f"quantities must match the regular expression '{QUANTITY_PATTERN}'"

_NUMBER = re.compile(r"([+-]?)([0-9]*)(?:\.([0-9]*))?")
_EXPONENT = re.compile(r"[eE]([+-]?[0-9]+)")
_SUFFIXES: dict[str, Fraction] = {
    "": Fraction(1),
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 10**3),
    # Decimal SI counts in thousands (k = 10**3 .. E = 10**18), binary SI in 1024s (Ki .. Ei).
    **{suffix: Fraction(1000**power) for power, suffix in enumerate("kMGTPE", 1)},
    **{suffix + "i": Fraction(1024**power) for power, suffix in enumerate("KMGTPE", 1)},
}


class QuantityError(ValueError):
    """A string that is not a Kubernetes quantity."""


@dataclass(frozen=True, order=False)
class Quantity:
    """An exact quantity; ``text`` is what was parsed (for messages), ``value`` is the number."""

    value: Fraction
    text: str = ""

    def sign(self) -> int:
        return (self.value > 0) - (self.value < 0)

    def is_integer(self) -> bool:
        """True when the value is a whole number that fits an int64 (``isInteger()``)."""
        return self.value.denominator == 1 and INT64_MIN <= self.value.numerator <= INT64_MAX

    def as_integer(self) -> int:
        if not self.is_integer():
            raise QuantityError("cannot convert value to integer")
        return self.value.numerator

    def as_approximate_float(self) -> float:
        return float(self.value)

    def compare(self, other: Quantity) -> int:
        return (self.value > other.value) - (self.value < other.value)

    def add(self, other: Quantity | int) -> Quantity:
        return Quantity(self.value + _amount(other))

    def sub(self, other: Quantity | int) -> Quantity:
        return Quantity(self.value - _amount(other))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Quantity) and self.value == other.value

    def __hash__(self) -> int:
        return hash(self.value)

    def __lt__(self, other: Quantity) -> bool:
        return self.value < other.value

    def __str__(self) -> str:
        return self.text or _canonical(self.value)


def _amount(other: Quantity | int) -> Fraction:
    return other.value if isinstance(other, Quantity) else Fraction(other)


def _canonical(value: Fraction) -> str:
    if value.denominator == 1:
        return str(value.numerator)
    # Any exact decimal expansion: nano units are enough for every parsed quantity.
    return f"{value.numerator * 10**9 // value.denominator}n"


def parse_quantity(text: str) -> Quantity:
    """Parse ``text`` as ``resource.ParseQuantity`` does, or raise ``QuantityError``."""
    if not isinstance(text, str) or not text:
        raise QuantityError(_FORMAT_ERROR)
    number = _NUMBER.match(text)
    assert number is not None  # every part of the pattern is optional
    sign, whole, frac = number.group(1), number.group(2), number.group(3) or ""
    if not whole and not frac:
        raise QuantityError(_FORMAT_ERROR)
    suffix = text[number.end() :]
    if suffix in _SUFFIXES:
        scale = _SUFFIXES[suffix]
    else:
        exponent = _EXPONENT.fullmatch(suffix)
        if exponent is None:
            raise QuantityError(_FORMAT_ERROR)
        scale = Fraction(10) ** int(exponent.group(1))
    value = Fraction(f"{whole or 0}.{frac or 0}") * scale
    # resource.ParseQuantity (apimachinery v0.34.0, pkg/api/resource/quantity.go) rounds a
    # non-zero magnitude up to a whole nano and caps a binary-SI one at int64's maximum.
    value = Fraction(math.ceil(value * NANOS_PER_UNIT), NANOS_PER_UNIT)
    if suffix.endswith("i"):
        value = min(value, Fraction(INT64_MAX))
    return Quantity(-value if sign == "-" else value, text)


def is_quantity(text: str) -> bool:
    try:
        parse_quantity(text)
    except QuantityError:
        return False
    return True
