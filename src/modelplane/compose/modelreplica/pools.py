"""The node pools a replica's members are pinned to, which must be label values.

Pods are pinned to a pool by the node selector ``modelplane.ai/pool=<nodePoolName>``, and a
label value is at most 63 characters of alphanumerics, ``-``, ``_`` and ``.``, starting and
ending alphanumeric. The ModelReplica XRD (the API contract, verbatim) allows longer names,
but no cluster can label a pool so (the InferenceCluster XRD refuses such pool names), and a
workload selecting one would be refused by the workload cluster. Such a replica composes
nothing new: it reports why in its ModelServing condition and keeps what it composed before.
"""

from __future__ import annotations

import re
from typing import Any

from modelplane.composer import Condition, Event, Requirement, Result
from modelplane.kube.names import LABEL_VALUE_MAX
from modelplane.kube.objects import Obj
from modelplane.labels import POOL
from modelplane.reasons import ModelReplica

REASON = ModelReplica.INVALID_NODE_POOL
_LABEL_VALUE = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")


def unlabelable(replica: Obj) -> str | None:
    """The first member pinned to a pool no node can be labelled with, as ``path: why``."""
    for e, engine in enumerate(replica["spec"]["engines"]):
        for m, member in enumerate(engine["members"]):
            pool = str(member["nodePoolName"])
            if len(pool) > LABEL_VALUE_MAX or not _LABEL_VALUE.fullmatch(pool):
                return (
                    f"spec.engines[{e}].members[{m}].nodePoolName {pool!r} is not a label value "
                    f"(at most {LABEL_VALUE_MAX} characters of alphanumerics, '-', '_' and '.', "
                    f"starting and ending alphanumeric), so no node can carry {POOL}={pool} "
                    "and no InferenceCluster can declare the pool"
                )
    return None


def refused(observed: dict[str, Any], requirements: dict[str, Requirement], problem: str) -> Result:
    """Nothing new is composed; what was composed before is kept as last observed."""
    kept = f"; keeping the {len(observed)} composed resources as last observed" if observed else ""
    message = f"{problem}: nothing is composed for it{kept}"
    return Result.held(
        observed,
        requirements=requirements,
        conditions=[Condition(ModelReplica.MODEL_SERVING, "False", REASON, message)],
        events=[Event("Warning", message, REASON)],
    )
