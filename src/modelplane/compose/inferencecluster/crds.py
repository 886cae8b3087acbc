"""The Gateway API Inference Extension CRDs Modelplane applies, one bundle per pinnable version.

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
