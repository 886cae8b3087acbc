"""What every part of the ModelReplica composition reads, resolved once per call."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from modelplane.composer import namespace_of
from modelplane.kube import objects
from modelplane.kube.objects import Obj


@dataclass(frozen=True)
class ReplicaContext:
    """The call's inputs, and the fields derived from them that every object asks for,
    resolved once at construction."""

    replica: Obj
    """The ModelReplica with its XRD defaults applied."""
    cluster: Obj
    """The InferenceCluster named by spec.clusterName."""
    provider_config: str
    """The cluster's ClusterProviderConfig (status.providerConfigRef.name)."""
    observed: Mapping[str, Obj]
    """Observed composed resources by composition resource name."""
    model_cache: Obj | None = None

    name: str = field(init=False)
    namespace: str = field(init=False)
    """The replica's namespace, which is also the remote namespace of its objects."""
    spec: Obj = field(init=False)
    stack: str = field(init=False)
    serving: Obj = field(init=False)
    serving_port: int = field(init=False)
    mode: str = field(init=False)
    model_cache_name: str | None = field(init=False)
    """spec.modelCacheRef.name: the ModelCache whose volume engine containers mount."""
    member_claims: dict[int, Any] = field(init=False, default_factory=dict)
    """Each claiming member's ``claims.MemberClaim`` by ``id()`` of the member; members live
    as long as this context, so their ids stay theirs."""

    def __post_init__(self) -> None:
        metadata, spec = self.replica["metadata"], self.replica["spec"]
        serving = spec.get("serving") or {}
        ref = spec.get("modelCacheRef")
        derived = {
            "name": str(metadata["name"]),
            "namespace": namespace_of(self.replica),
            "spec": spec,
            "stack": str(objects.dig(self.cluster, "spec", "stack") or "Standard"),
            "serving": serving,
            "serving_port": int(serving.get("port", 8000)),
            "mode": str(serving.get("mode", "Unified")),
            "model_cache_name": str(ref["name"]) if ref else None,
        }
        for key, value in derived.items():
            object.__setattr__(self, key, value)

    @property
    def engines(self) -> list[Obj]:
        return list(self.spec["engines"])
