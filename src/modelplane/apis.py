"""Where the project's API definitions (``apis/<plural>/definition.yaml``) live."""

from __future__ import annotations

import os
from pathlib import Path

ENV_VAR = "MODELPLANE_APIS"


class ApisNotFoundError(FileNotFoundError):
    """No ``apis/`` directory could be located."""


def apis_dir() -> Path:
    """``$MODELPLANE_APIS`` if set, else the first ``apis/`` walking up from this package."""
    configured = os.environ.get(ENV_VAR)
    if configured:
        path = Path(configured)
        if not path.is_dir():
            raise ApisNotFoundError(f"{ENV_VAR}={configured} is not a directory")
        return path
    here = Path(__file__).resolve().parent
    for parent in (here, *here.parents):
        candidate = parent / "apis"
        if candidate.is_dir():
            return candidate
    raise ApisNotFoundError(f"no apis/ directory above {here}; set {ENV_VAR}")
