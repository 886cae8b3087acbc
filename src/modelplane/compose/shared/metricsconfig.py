"""The EnvironmentConfig in which the platform names the fleet-wide Prometheus: what a
ModelDeployment's autoscaler reads load from (``modeldeployment/autoscaling.py``) and what a
ModelService's usage summary is asked of (``modelservice/usage.py``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from modelplane.kube import objects
from modelplane.kube.objects import Obj

METRICS_CONFIG = "modelplane-autoscaling"
"""The EnvironmentConfig's name (kept from when autoscaling was its only reader)."""
ENVIRONMENT_CONFIG_API = "apiextensions.crossplane.io/v1beta1"


@dataclass(frozen=True)
class MetricsEndpoint:
    """The fleet-wide Prometheus the platform names (``data.prometheus`` of ``METRICS_CONFIG``)."""

    server_address: str
    authentication: Obj | None = None

    @classmethod
    def from_config(cls, config: Mapping[str, Any] | None) -> MetricsEndpoint | None:
        prometheus = objects.mapping(config, "data", "prometheus")
        address = prometheus.get("serverAddress")
        if not isinstance(address, str) or not address:
            return None
        return cls(address, prometheus.get("authenticationRef"))
