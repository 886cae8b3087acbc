"""How a kubelet turns a container's ``env`` into the process environment, as a test helper.

Kubernetes expands ``$(VAR)`` in an env value only against the variables listed *before* it in
the same container (kubelet ``makeEnvironmentVariables``; the syntax is
``third_party/forked/golang/expansion/expand.go``): a reference to an undefined or later
variable stays as written, ``$$`` is a literal ``$``, and any other ``$`` is kept. ``command``
and ``args`` are expanded against the finished environment, every variable in it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

Obj = dict[str, Any]


def expand(text: str, lookup: Callable[[str], str | None]) -> str:
    """``text`` with each ``$(NAME)`` that ``lookup`` knows replaced; the rest as Kubernetes
    leaves it."""
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch != "$" or i + 1 == len(text):
            out.append(ch)
            i += 1
            continue
        nxt = text[i + 1]
        if nxt == "$":
            out.append("$")
            i += 2
        elif nxt == "(":
            close = text.find(")", i + 2)
            if close < 0:
                out.append("$(")
                i += 2
                continue
            name = text[i + 2 : close]
            value = lookup(name)
            out.append(f"$({name})" if value is None else value)
            i = close + 1
        else:
            out.append("$" + nxt)
            i += 2
    return "".join(out)


def environment(env: list[Obj], pod_labels: Mapping[str, str]) -> dict[str, str]:
    """The process environment of a container with ``env``, in a pod with ``pod_labels``.

    ``valueFrom`` is resolved for label field references (what these tests use); a later entry
    of the same name replaces an earlier one, as the kubelet does.
    """
    resolved: dict[str, str] = {}
    for entry in env:
        if "valueFrom" in entry and "fieldRef" not in entry["valueFrom"]:
            continue  # a Secret's value (a token): the container reads it, nothing expands it
        if "valueFrom" in entry:
            value = _field(entry["valueFrom"], pod_labels)
        else:
            value = expand(str(entry.get("value", "")), resolved.get)
        resolved[str(entry["name"])] = value
    return resolved


def command_line(container: Obj, environ: Mapping[str, str]) -> list[str]:
    """The container's command and args as the runtime receives them."""
    words = list(container.get("command") or []) + list(container.get("args") or [])
    return [expand(str(w), environ.get) for w in words]


def _field(source: Obj, pod_labels: Mapping[str, str]) -> str:
    path = str(source["fieldRef"]["fieldPath"])
    prefix, suffix = "metadata.labels['", "']"
    if not (path.startswith(prefix) and path.endswith(suffix)):
        raise ValueError(f"unsupported fieldPath {path!r}")
    # A missing label resolves to the empty string, as the downward API gives it.
    return pod_labels.get(path[len(prefix) : -len(suffix)], "")
