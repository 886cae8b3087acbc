"""provider-kubernetes as a gateway's hops are handed to its shards: a second Object applying a
remote object that exists takes it over, and an observe-only Object deletes nothing.

Read at the versions the project requires (docs/design/install.md), v1.2.1 and main at
350ef9acf911, ``internal/controller/namespaced/object/object.go``:

- ``external.Observe`` Gets the remote object by its manifest's namespace and name
  (``c.client.Get(ctx, types.NamespacedName{...}, current)``) and reports it existing whoever
  created it: no owner, label or annotation of the Object that first applied it is checked.
  With server-side apply (``syncer.go``, ``SSAResourceSyncer.SyncResource``) each Object
  applies as the field owner named for itself with ``client.ForceOwnership``: the second takes
  every field over rather than conflicting.
  ``handleObservation`` then compares the desired manifest with the observed state; unequal,
  the managed reconciler calls ``Update``, which applies the desired manifest
  (``syncer.SyncResource``). So the shard's Object, naming the Backend the gateway's own Object
  created, adopts it in place: never a second one, never a failure, never a gap.
- ``external.Delete`` deletes the remote object by name; the managed reconciler of
  crossplane-runtime v2.3.3 (``pkg/reconciler/managed/reconciler.go``, ``policies.go``
  ``ShouldDelete``) calls it only when ``managementPolicies`` hold ``Delete`` or ``*``. The
  gateway's own Object, made ``[Observe]`` before it is released, deletes nothing when it goes.
"""

from __future__ import annotations

from typing import Any

from modelplane.compose.inferencegateway.shards import SHARD
from tests.compose.inferencegateway.test_handover import HOPS, release
from tests.compose.through import run

Obj = dict[str, Any]


def test_a_shards_hop_object_names_the_remote_object_the_gateways_own_created() -> None:
    ig, observed, clusters = release()
    rsp = run(ig, observed, {"inference-clusters": clusters})
    shard_objects = {
        k: o
        for key, s in rsp.resources.items()
        if key.startswith(SHARD)
        for k, o in run(s).resources.items()
    }
    for key in (k for k in observed if k.startswith(HOPS)):
        mine, theirs = shard_objects[key], observed[key]
        # Two Objects on the control plane (Crossplane gives each one owner) ...
        assert mine["metadata"]["name"] != theirs["metadata"]["name"]
        # ... applying, through the same ClusterProviderConfig, the one remote object it Gets.
        assert mine["spec"]["providerConfigRef"] == theirs["spec"]["providerConfigRef"]
        assert mine["spec"]["forProvider"]["manifest"] == theirs["spec"]["forProvider"]["manifest"]


def test_the_gateways_own_hop_object_kept_for_the_handover_may_not_delete() -> None:
    ig, observed, clusters = release()
    rsp = run(ig, observed, {"inference-clusters": clusters})
    for key in (k for k in observed if k.startswith(HOPS)):
        policies = rsp.resources[key]["spec"]["managementPolicies"]
        assert "Delete" not in policies and "*" not in policies
