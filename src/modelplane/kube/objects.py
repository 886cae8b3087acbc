"""Reading Kubernetes objects as the API returns them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def condition(obj: Mapping[str, Any] | None, type_: str) -> Mapping[str, Any] | None:
    """The object's status condition of ``type_``, if it reports one."""
    for c in ((obj or {}).get("status") or {}).get("conditions") or ():
        # A dict first: an abstract isinstance check costs more than the rest of the loop.
        if (type(c) is dict or isinstance(c, Mapping)) and c.get("type") == type_:
            return c
    return None
