"""How CEL names the properties of a Kubernetes object (apiserver/pkg/cel/escaping.go)."""

from __future__ import annotations

import re

RESERVED = frozenset(
    {
        "true",
        "false",
        "null",
        "in",
        "as",
        "break",
        "const",
        "continue",
        "else",
        "for",
        "function",
        "if",
        "import",
        "let",
        "loop",
        "package",
        "namespace",
        "return",
        "var",
        "void",
        "while",
    }
)
_ACCESSIBLE = re.compile(r"[a-zA-Z_.\-/][a-zA-Z0-9_.\-/]*")
_IDENT = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")


def is_plain(name: str) -> bool:
    """True when CEL reaches the property under its own name."""
    return name not in RESERVED and "__" not in name and _IDENT.fullmatch(name) is not None


def escape(name: str) -> str | None:
    """The CEL name of a property, or None when CEL cannot reach it."""
    if name in RESERVED:
        return f"__{name}__"
    if is_plain(name):
        return name
    if not _ACCESSIBLE.fullmatch(name):
        return None
    return (
        name.replace("__", "__underscores__")
        .replace(".", "__dot__")
        .replace("-", "__dash__")
        .replace("/", "__slash__")
    )
