"""A minimal CustomResourceDefinition for tests that load definitions of their own."""

from __future__ import annotations

from typing import Any


def thing_crd(schema: dict[str, Any]) -> dict[str, Any]:
    """The CRD of namespaced ``example.com/v1`` Things whose one version has ``schema``."""
    version = {"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": schema}}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "things.example.com"},
        "spec": {
            "group": "example.com",
            "names": {"kind": "Thing", "plural": "things"},
            "scope": "Namespaced",
            "versions": [version],
        },
    }
