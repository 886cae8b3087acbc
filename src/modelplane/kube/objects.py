"""Reading Kubernetes objects as the API returns them.

The API omits empty fields, clients send ``null`` for them, and an observed object may be
partial while a provider is still writing it: a reader cannot tell these apart and should not
try. So every accessor here reads a missing key, a ``null`` and a value of the wrong shape on
the way alike, as absent, and answers with the empty value of what was asked for (``dig``:
with the default it is given). ``assoc`` writes one value into a copy, leaving what it was
given (a composed object its composer may share) untouched.
"""

# No ``from __future__ import annotations``: it would shadow ``annotations`` below, and every
# annotation here already evaluates at runtime.
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

Body = Mapping[str, Any]
"""A Kubernetes object, or any part of one, as decoded from JSON or YAML."""

Obj = dict[str, Any]
"""An object, or any part of one, as a composer builds it: ``Body`` in its mutable form."""


def dig(obj: Body | None, *path: str, default: Any = None) -> Any:
    """The value at ``path`` under ``obj``, or ``default`` when the path is broken.

    A key missing on the way, or a value on the way that is not a mapping (``null``, a list, a
    string), ends the walk with ``default``. The value at the end is returned as it is, ``null``
    included: ``dig(o, "spec", "replicas", default=1)`` reads as ``o["spec"].get("replicas", 1)``
    would, and ``dig(o, "spec", "replicas") or 1`` as ``.get("replicas") or 1``.
    """
    value: Any = obj
    for key in path:
        # A known mapping type first: an abstract isinstance check costs more than the rest of
        # a step, and owners, render and the fleet-wide composers read every object of a fleet
        # this way on every pass (dicts, and the lazy views of a request's Structs).
        if type(value) not in _MAPPINGS and not _is_mapping(value):
            return default
        # One lookup: a lazy view's get() reads its Struct once, `in` then `[]` twice.
        value = value.get(key, _MISSING)
        if value is _MISSING:
            return default
    return value


_MISSING = object()
_MAPPINGS: set[type] = {dict}
"""The types seen to be mappings: checked by identity, the abstract check made once per type."""


def _is_mapping(value: Any) -> bool:
    if isinstance(value, Mapping):
        _MAPPINGS.add(type(value))
        return True
    return False


def mapping(obj: Body | None, *path: str) -> Body:
    """The mapping at ``path`` under ``obj``: empty when the path is broken or ends elsewhere."""
    value = dig(obj, *path)
    return value if type(value) in _MAPPINGS or _is_mapping(value) else {}


def assoc(obj: Body | None, path: tuple[str, ...], value: Any) -> Obj:
    """A copy of ``obj`` with ``value`` at ``path``: each mapping on the way copied (one missing
    or not a mapping made empty), everything beside it shared, ``obj`` itself untouched."""
    head, *rest = path
    out = dict(obj or {})
    out[head] = assoc(mapping(obj, head), tuple(rest), value) if rest else value
    return out


def metadata(obj: Body | None) -> Body:
    return mapping(obj, "metadata")


def name(obj: Body | None) -> str:
    """The object's ``metadata.name``: empty when it has none."""
    return str(dig(obj, "metadata", "name") or "")


def namespace(obj: Body | None) -> str:
    """The object's ``metadata.namespace`` as written: empty when it names none (a caller that
    means the API server's ``default`` says so itself)."""
    return str(dig(obj, "metadata", "namespace") or "")


def labels(obj: Body | None) -> Mapping[str, str]:
    return mapping(obj, "metadata", "labels")


def annotations(obj: Body | None) -> Mapping[str, str]:
    return mapping(obj, "metadata", "annotations")


def spec(obj: Body | None) -> Body:
    return mapping(obj, "spec")


def status(obj: Body | None) -> Body:
    return mapping(obj, "status")


def condition(obj: Body | None, type_: str) -> Body | None:
    """The object's status condition of ``type_``, if it reports one."""
    # Inlined rather than through status(): this runs for every observed object in every pass.
    for c in ((obj or {}).get("status") or {}).get("conditions") or ():
        if (type(c) is dict or isinstance(c, Mapping)) and c.get("type") == type_:
            return c
    return None


def timestamp(seconds: float) -> str:
    """Unix ``seconds`` as Kubernetes writes a time (``metav1.Time``: RFC 3339 in UTC, whole
    seconds)."""
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def seconds(value: Any) -> float | None:
    """A time as Kubernetes writes it (``timestamp``), in Unix seconds; None when it is absent
    or not one."""
    if not value:
        return None
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None
