"""A deployment's answer as the clusters run it, for tests that reconcile over several rounds:
a ModelReplica new or restamped (its pod templates changed) restarts and does not serve this
round; any other serves when the test's ``serves`` says so. Each writes its status at once, for
the stamp it was given (``reported``)."""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any

from modelplane.compose.replica_revision import CONDITION, revision_message
from modelplane.labels import TEMPLATE_HASH
from tests.fleet.builders import with_condition

Obj = dict[str, Any]


def stamp_of(obj: Obj) -> str:
    return str(((obj.get("metadata") or {}).get("annotations") or {}).get(TEMPLATE_HASH))


def as_run(
    answer: Mapping[str, Obj], before: Mapping[str, Obj], serves: Callable[[Obj], bool]
) -> dict[str, Obj]:
    """Every resource of ``answer`` as observed next, its replicas' ModelServing set."""
    after = {}
    for key, obj in answer.items():
        obj = copy.deepcopy(obj)
        if obj["kind"] == "ModelReplica":
            was = before.get(key)
            restarted = was is None or stamp_of(was) != stamp_of(obj)
            obj = reported(obj, up=not restarted and serves(obj))
        after[key] = obj
    return after


def reported(replica: Obj, up: bool, stamp: str | None = None) -> Obj:
    """The replica with the status its own reconcile writes: ModelServing, and RevisionReady
    for ``stamp`` (the one it carries, by default) ready exactly when it serves."""
    out = with_condition(replica, "ModelServing", "True" if up else "False")
    message = revision_message(stamp or stamp_of(replica), "ready" if up else "not ready")
    reason = "Running" if up else "Updating"
    return with_condition(out, CONDITION, "True" if up else "False", reason, message)
