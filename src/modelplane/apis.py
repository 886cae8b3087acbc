"""Where the project's API definitions (``<plural>/definition.yaml`` and Compositions) live.

An installed wheel carries them inside the package (``modelplane/apis``, copied there from the
repository's ``apis/`` at build time), so an install needs no environment variable. A source
checkout installed editable has no such copy and reads the repository's ``apis/`` itself.
``$MODELPLANE_APIS`` overrides both.
"""

from __future__ import annotations

import os
from importlib.resources import files
from pathlib import Path

GROUP = "modelplane.ai"
API_VERSION = f"{GROUP}/v1alpha1"
"""The one version of every kind the project defines (its XRDs serve only this one)."""
ENV_VAR = "MODELPLANE_APIS"
DEFINITION = "definition.yaml"


class ApisNotFoundError(FileNotFoundError):
    """No directory of API definitions could be located; the message is one line for the user."""


def apis_dir() -> Path:
    """``$MODELPLANE_APIS`` if set, else the package's own copy, else the checkout's ``apis/``."""
    configured = os.environ.get(ENV_VAR)
    if configured:
        path = Path(configured)
        if not path.is_dir():
            raise ApisNotFoundError(f"{ENV_VAR}={configured} is not a directory")
        return _holding_definitions(path, f"{ENV_VAR}={configured}")
    packaged = files("modelplane") / "apis"
    if isinstance(packaged, Path) and packaged.is_dir():
        return _holding_definitions(packaged, f"the installed package's {packaged}")
    here = Path(__file__).resolve().parent
    for parent in here.parents:
        candidate = parent / "apis"
        if candidate.is_dir() and (parent / "pyproject.toml").is_file():
            return _holding_definitions(candidate, str(candidate))
    raise ApisNotFoundError(
        f"no API definitions: the modelplane package at {here} has no apis/ (reinstall it) "
        f"and no {ENV_VAR} is set"
    )


def _holding_definitions(path: Path, named: str) -> Path:
    if not any(path.glob(f"*/{DEFINITION}")):
        raise ApisNotFoundError(f"no API definitions: {named} holds no */{DEFINITION}")
    return path
