"""The taint GPU nodes carry, and the toleration that lets a pod onto them.

Modelplane's managed GPU pools are tainted ``nvidia.com/gpu``; serving pods and the DaemonSets
that must run on those nodes tolerate it. A leaf module, so the pod composition and the managed
clusters read the same key without importing each other.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

GPU_TAINT_KEY = "nvidia.com/gpu"
GPU_TOLERATION: Mapping[str, str] = MappingProxyType(
    {"key": GPU_TAINT_KEY, "operator": "Exists", "effect": "NoSchedule"}
)
"""Tolerates the GPU taint with any value. Read-only: copy it into composed output."""
