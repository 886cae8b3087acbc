"""A replica's remote objects: each in an Object named after the replica and its resource key."""

from __future__ import annotations

from modelplane.compose.modelreplica.context import ReplicaContext
from modelplane.compose.shared.remote import remote_object
from modelplane.kube.names import dns_label
from modelplane.kube.objects import Obj


def wrap(
    ctx: ReplicaContext,
    key: str,
    manifest: Obj,
    *,
    readiness: Obj | None = None,
    management_policies: list[str] | None = None,
) -> Obj:
    """An Object (in the replica's namespace on the control plane) that applies ``manifest``.

    ``key`` is the composition resource name; the Object's name derives from it and the
    replica, so Objects of different replicas in one namespace never collide.
    """
    return remote_object(
        dns_label(ctx.name, key),
        ctx.namespace,
        ctx.provider_config,
        manifest,
        readiness=readiness,
        management_policies=management_policies,
    )
