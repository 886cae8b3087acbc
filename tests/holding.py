"""The shipped composers, but a ModelReplica annotated ``modelplane.test/hold: <path>`` is held
before composing: its worker writes its pid to ``<path>.started`` and waits until ``<path>``
exists. Serve tests start ``modelplane serve`` with this registry to have a composition that
runs exactly as long as they say."""

from __future__ import annotations

import os
import time
from pathlib import Path

from modelplane.apis import API_VERSION
from modelplane.compose.modelreplica.composer import (
    CACHE_REQUIREMENT,
    CLUSTER_REQUIREMENT,
    LAZY_COMPOSITE,
    compose_replica,
)
from modelplane.compose.registry import default_registry
from modelplane.composer import Inputs, Registry, Result

HOLD = "modelplane.test/hold"


def held(inputs: Inputs) -> Result:
    path = ((inputs.composite.get("metadata") or {}).get("annotations") or {}).get(HOLD)
    if path:
        # Written aside, then renamed: the marker appears with its content.
        aside = Path(f"{path}.starting")
        aside.write_text(str(os.getpid()))
        aside.rename(f"{path}.started")
        while not Path(path).exists():
            time.sleep(0.01)
    return compose_replica(inputs)


def registry() -> Registry:
    r = default_registry()
    r.register(
        API_VERSION,
        "ModelReplica",
        held,
        lazy=(CLUSTER_REQUIREMENT, CACHE_REQUIREMENT),
        lazy_composite=LAZY_COMPOSITE,
    )
    return r
