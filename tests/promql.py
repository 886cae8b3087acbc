"""How Prometheus reads the one ``=~`` label matcher of a composed query, for tests that check
which series it selects (unit, conformance and e2e alike)."""

from __future__ import annotations

import json
import re

_MATCHER = re.compile(r'=~("(?:[^"\\]|\\.)*")')


def regex(query: str) -> str:
    """The matcher's regex: its double-quoted string decoded as PromQL decodes it, with Go's
    escapes (JSON's are the same for these: both read ``\\\\`` as one backslash and refuse
    ``\\-`` or ``\\.``, which is why the composer doubles the backslashes ``re.escape`` wrote)."""
    [quoted] = _MATCHER.findall(query)
    decoded: str = json.loads(quoted)
    return decoded


def selects(query: str, value: str) -> bool:
    """Whether the matcher selects a label value: Prometheus anchors the regex at both ends."""
    return re.fullmatch(regex(query), value) is not None
