"""Which revision a ModelReplica's status describes: the ``RevisionReady`` condition.

A ModelDeployment stamps each replica with the hash of what it is stamped with
(``modelplane.ai/template-hash``) and updates replicas a few at a time, counting those that
serve. But a replica's ``ModelServing`` is written by another reconcile than the stamp: right
after a restamp, the deployment (requeued on its own write) still reads the status the replica
wrote before, saying it serves. Trusted, that would update the next replica, and the next.

So the replica says which revision its status describes, as a Deployment's status carries the
``observedGeneration`` it was written for. The ModelReplica API is fixed (its status schema
declares no field of its own) and Crossplane lets a function set no condition's
``observedGeneration``; a condition is what a function may write, so the revision is one:

- ``RevisionReady`` True (reason ``Running``), message ``revision <hash> ready on <cluster>:
  ...``: the replica
  composed its workloads for that stamp and observed every one of them on its cluster carrying
  it (an annotation on each workload object, not on its pods) and Ready (every copy updated and
  available);
- False, reason ``Updating``, message ``revision <hash> not ready on <cluster>: ...``: it
  composed that stamp, and its cluster does not run it yet (or runs it not ready).

Only a replica stamped with a hash carries it (a hand-written one has nothing to roll out). The
replica composer writes the condition (``modelreplica/revision.py``), the deployment reads it
(``described``): a replica counts as updated and serving only when its status describes the
stamp the deployment gives it now.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from modelplane.kube import objects
from modelplane.labels import TEMPLATE_HASH
from modelplane.reasons import ModelReplica

_MESSAGE = re.compile(r"revision (\S+) ")


def stamp_of(replica: Mapping[str, Any] | None) -> str | None:
    """The hash the replica is stamped with, if its deployment stamped one."""
    value = objects.annotations(replica).get(TEMPLATE_HASH)
    return str(value) if value else None


def revision_message(revision: str, detail: str) -> str:
    """The condition's message: the revision first, as ``described`` reads it back."""
    return f"revision {revision} {detail}"


@dataclass(frozen=True)
class Described:
    """What a replica's status says of its revision."""

    revision: str
    ready: bool


def described(replica: Mapping[str, Any] | None) -> Described | None:
    """The revision the replica's status describes, or None when it says none (written before
    the replica was stamped, by a release before this condition, or not written yet)."""
    c = objects.condition(replica, ModelReplica.REVISION_READY)
    if c is None:
        return None
    match = _MESSAGE.match(str(c.get("message") or ""))
    if match is None:
        return None
    return Described(match.group(1), c.get("status") == "True")
