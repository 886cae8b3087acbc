"""Integer backendRef weights for exact shares.

A route carries shares as integer weights of 1..1,000,000 (the Gateway API's range; 0 would stop
a ready backend's traffic). When the smallest integers proportional to the shares fit, they are
used and the shares are exact, whatever the number of backends. When they do not fit, the largest
share is put at 1,000,000 and every other weight rounded: each is then within one unit of its
exact value at that scale (a share too small for one unit gets one).
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from functools import reduce
from math import gcd, lcm

from modelplane.compose.shared.frontdoor import WEIGHT_MAX


def integer_weights(shares: Sequence[Fraction], allow_zero: bool = False) -> list[int]:
    """Weights proportional to ``shares`` (each > 0), each in ``1..WEIGHT_MAX``. With
    ``allow_zero``, a share of 0 (a parked lane) gets weight 0 and the rest are weighed alone."""
    if allow_zero:
        positive = iter(integer_weights([s for s in shares if s > 0]))
        return [next(positive) if s > 0 else 0 for s in shares]
    if not shares:
        return []
    if any(s <= 0 for s in shares):
        raise ValueError(f"every share must be positive, got {[str(s) for s in shares]}")
    exact = _smallest_proportional(shares)
    if max(exact) <= WEIGHT_MAX:
        return exact
    top = max(shares)
    return [max(1, round(s * WEIGHT_MAX / top)) for s in shares]


def _smallest_proportional(shares: Sequence[Fraction]) -> list[int]:
    """The smallest positive integers in the proportions of ``shares``."""
    scale = reduce(lcm, (s.denominator for s in shares), 1)
    exact = [int(s * scale) for s in shares]
    common = reduce(gcd, exact)
    return [w // common for w in exact]
