"""Doomed replicas: a delete that a Usage refused is replayed later, whatever became of it.

Crossplane v2.3.4's Usage webhook (``internal/webhook/protection/usage/handler.go``) refuses a
DELETE of an object any Usage holds and records the attempt on the object, as the annotation
``usage.crossplane.io/deletion-attempt-with-policy: <propagation policy>``; nothing in
Crossplane ever removes it. When a Usage of the object with ``replayDeletion`` is deleted, the
Usage reconciler (``internal/controller/protection/usage/reconciler.go``) deletes the object
again with that policy if the annotation is there, however long ago the attempt was. A
ModelService's Usages replay (``modelservice/holds.py``), and one is released whenever the
service's routes stop naming the replica's pool: an update withdrawing its endpoint, its
cluster's gateway going, a selector edit.

A deployment leaves a replica out of its desired state only once no route names its pool and
no Usage is listed holding it (``drain.py``); but lists lag, and Crossplane then deletes it
while a Usage still holds it: refused, recorded. If the deployment wants that replica again
(scaled in while the lists lagged, then out), it is doomed: the next release of its Usage
deletes it, serving or not, and it comes back cold under the same name.

So a replica carrying the annotation is never counted as a placement for the future. It is
replaced under a new name, make before break, whatever ``spec.rollout`` says: a replacement is
placed beside it at a free index, as a surge is (``surge.py``, annotated
``modelplane.ai/surge-for: <doomed replica>``); once the replacement serves its stamp and is
routed, the doomed replica leaves as a scale-in does (endpoint first, then the replica once no
route references its pool). Until then it is kept as it runs, never updated in place: a restart
would withdraw its endpoint, release its Usage and replay the delete.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from modelplane.kube import objects
from modelplane.labels import DELETION_ATTEMPT


def is_doomed(replica: Mapping[str, Any] | None) -> bool:
    """Whether a delete of the replica was refused by a Usage (and will be replayed)."""
    return DELETION_ATTEMPT in objects.annotations(replica)
