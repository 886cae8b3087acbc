"""A deployment's answer as the clusters run it, for tests that reconcile over several rounds:
a ModelReplica new or restamped (its pod templates changed) restarts and does not serve this
round; any other serves when the test's ``serves`` says so. Each writes its status at once, for
the stamp it was given (``reported``)."""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any

from tests.fleet.builders import reported, stamp_of

Obj = dict[str, Any]


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
