"""Semantic versions as the Kubernetes CEL ``semver`` library (blang/semver) reads them."""

from __future__ import annotations

import re
from dataclasses import dataclass

_STRICT = re.compile(
    r"(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)"
    r"(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?"
    r"(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?"
)
_LOOSE = re.compile(r"v?([0-9]+)(?:\.([0-9]+))?(?:\.([0-9]+))?(.*)")


class SemverError(ValueError):
    """A string that is not a semantic version."""


@dataclass(frozen=True)
class Semver:
    major: int
    minor: int
    patch: int
    pre: tuple[str, ...] = ()
    build: tuple[str, ...] = ()

    def compare(self, other: Semver) -> int:
        """Precedence per semver 2.0.0 §11; build metadata is ignored."""
        mine = (self.major, self.minor, self.patch)
        theirs = (other.major, other.minor, other.patch)
        if mine != theirs:
            return -1 if mine < theirs else 1
        return _compare_pre(self.pre, other.pre)

    def __str__(self) -> str:
        text = f"{self.major}.{self.minor}.{self.patch}"
        if self.pre:
            text += "-" + ".".join(self.pre)
        if self.build:
            text += "+" + ".".join(self.build)
        return text


def _compare_pre(a: tuple[str, ...], b: tuple[str, ...]) -> int:
    if a == b:
        return 0
    # A version without a pre-release ranks above one with it.
    if not a:
        return 1
    if not b:
        return -1
    for x, y in zip(a, b, strict=False):
        if x == y:
            continue
        xn, yn = x.isdigit(), y.isdigit()
        if xn and yn:
            return -1 if int(x) < int(y) else 1
        if xn != yn:
            return -1 if xn else 1
        return -1 if x < y else 1
    return -1 if len(a) < len(b) else 1


def parse_semver(text: str, normalize: bool = False) -> Semver:
    """Parse a strict semantic version; ``normalize`` also accepts ``v1``, ``1.2``, ``01.2.3``."""
    if normalize:
        text = _normalize(text)
    match = _STRICT.fullmatch(text) if isinstance(text, str) else None
    if match is None:
        raise SemverError(f"No Major.Minor.Patch elements found in {text!r}")
    pre = tuple(match.group(4).split(".")) if match.group(4) else ()
    for part in pre:
        if part.isdigit() and len(part) > 1 and part[0] == "0":
            message = f"Numeric PreRelease version must not contain leading zeroes {part!r}"
            raise SemverError(message)
    build = tuple(match.group(5).split(".")) if match.group(5) else ()
    return Semver(int(match.group(1)), int(match.group(2)), int(match.group(3)), pre, build)


def _normalize(text: str) -> str:
    loose = _LOOSE.fullmatch(text)
    if loose is None:
        return text
    parts = [str(int(p)) if p is not None else "0" for p in loose.group(1, 2, 3)]
    return ".".join(parts) + loose.group(4)


def is_semver(text: str, normalize: bool = False) -> bool:
    try:
        parse_semver(text, normalize)
    except SemverError:
        return False
    return True
