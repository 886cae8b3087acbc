"""The upstream CRDs composed objects are admitted against (tests/upstream/crds; each one's
repository and release in tests/upstream/README.md), loaded once per test process."""

from __future__ import annotations

import functools
from pathlib import Path

from modelplane.kube.admission import Admission

UPSTREAM_CRDS = Path(__file__).parent / "upstream" / "crds"


@functools.cache
def upstream() -> Admission:
    """Every upstream CRD as one admission, its CEL rules compiled once."""
    return Admission.from_paths([UPSTREAM_CRDS])
