"""Reading Kubernetes manifests from YAML the way kubectl does.

kubectl turns YAML into JSON before anything sees it, so a timestamp stays a string
(``lastTransitionTime: 2026-01-01T00:00:00Z``), and a key given twice in one mapping is an error
rather than silently the last one.
"""

from __future__ import annotations

from typing import Any, ClassVar

import yaml

_BASE: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class DuplicateKeyError(yaml.YAMLError):
    """A mapping that names the same key twice."""


class ManifestLoader(_BASE):
    """A safe loader without the timestamp type and with duplicate-key detection."""

    yaml_implicit_resolvers: ClassVar[dict[Any, Any]] = {
        first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
        for first, resolvers in _BASE.yaml_implicit_resolvers.items()
    }

    def construct_mapping(self, node: Any, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            if key in seen:
                mark = key_node.start_mark
                raise DuplicateKeyError(
                    f'line {mark.line + 1}: mapping key "{key}" already defined'
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def load_all(text: str | bytes) -> list[Any]:
    """Every non-empty document of a YAML stream."""
    return [doc for doc in yaml.load_all(text, Loader=ManifestLoader) if doc is not None]
