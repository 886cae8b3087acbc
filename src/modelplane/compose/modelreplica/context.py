"""What every part of the ModelReplica composition reads, resolved once per call."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

Obj = dict[str, Any]

DEFAULT_SERVING_PORT = 8000


# Read-only after construction; properties are computed once (every object of a call asks).
@dataclass(frozen=True)
class ReplicaContext:
    replica: Obj
    """The ModelReplica with its XRD defaults applied."""
    cluster: Obj
    """The InferenceCluster named by spec.clusterName."""
    provider_config: str
    """The cluster's ClusterProviderConfig (status.providerConfigRef.name)."""
    observed: Mapping[str, Obj]
    """Observed composed resources by composition resource name."""
    model_cache: Obj | None = None

    @cached_property
    def name(self) -> str:
        return str(self.replica["metadata"]["name"])

    @cached_property
    def namespace(self) -> str:
        """The replica's namespace, which is also the remote namespace of its objects."""
        return str(self.replica["metadata"].get("namespace") or "default")

    @cached_property
    def spec(self) -> Obj:
        return self.replica["spec"]

    @property
    def engines(self) -> list[Obj]:
        return list(self.spec["engines"])

    @cached_property
    def stack(self) -> str:
        return str(self.cluster.get("spec", {}).get("stack") or "Standard")

    @cached_property
    def serving(self) -> Obj:
        return self.spec.get("serving") or {}

    @cached_property
    def serving_port(self) -> int:
        return int(self.serving.get("port", DEFAULT_SERVING_PORT))

    @cached_property
    def mode(self) -> str:
        return str(self.serving.get("mode", "Unified"))

    @cached_property
    def claim_revisions(self) -> dict[int, str]:
        """Claim-template revisions by ``id()`` of the member (see claims.member_revision);
        members live as long as this context, so their ids stay theirs."""
        return {}

    @cached_property
    def model_cache_name(self) -> str | None:
        """spec.modelCacheRef.name: the ModelCache whose volume engine containers mount."""
        ref = self.spec.get("modelCacheRef")
        return str(ref["name"]) if ref else None
