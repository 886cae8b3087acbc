"""The CRDs Modelplane applies beside the Gateway API Inference Extension: its InferencePool, one
bundle per pinnable version, and llm-d-router's InferenceObjective, the one Modelplane's pickers
read priorities from.

Read from the YAML files in ``crds/`` (sources in ``crds/README.md``) once per process.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import yaml

from modelplane.kube.objects import Obj
from modelplane.structs import frozen

_DIR = Path(__file__).parent / "crds"
_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
BUNDLES = ("v1.0.2", "v1.5.0")
"""The bundle versions vendored here: the XRD's enum for servingStack.inferenceExtension.version."""


@functools.cache
def inference_pool_crd(version: str) -> Obj:
    """The InferencePool CRD of bundle ``version`` (frozen: copy before changing it)."""
    if version not in BUNDLES:
        raise KeyError(f"no InferencePool CRD bundle {version!r}; vendored: {', '.join(BUNDLES)}")
    return frozen(yaml.load((_DIR / f"inferencepools-{version}.yaml").read_text(), _LOADER))


OBJECTIVE_RELEASE = "v0.10.0"
"""The llm-d-router release whose ``llm-d.ai`` InferenceObjective CRD is vendored: the release
of Modelplane's default picker image (``compose/shared/endpointpicker.py``)."""


@functools.cache
def inference_objective_crd() -> Obj:
    """llm-d-router's ``llm-d.ai`` InferenceObjective CRD (frozen: copy before changing it)."""
    path = _DIR / f"inferenceobjectives-llm-d-router-{OBJECTIVE_RELEASE}.yaml"
    return frozen(yaml.load(path.read_text(), _LOADER))
