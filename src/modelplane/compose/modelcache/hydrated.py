"""A cluster's weights, once hydrated, stay hydrated until evidence says they are gone.

The hydration Job and the token copy are needed only while the weights download. Once a
cluster's Job is observed Complete, the cache's status records it (``status.clusters[]``:
``hydratedBy``, the digest of the Job that filled the claim, and ``claimUID``, the claim it
filled); from the next reconcile on, the Job and the token Secret are no longer composed, so
Crossplane deletes them and no credential lingers on the workload cluster. A Job cleaned up by
its TTL or by hand is then no evidence of anything: the cluster stays Ready.

Only evidence takes it back: a new download (the Job's digest changes: another repo, revision,
image or token setting), or the claim gone (its Object no longer observed, or the claim on the
cluster re-created under another uid). Then the Job, and the token with it, are composed again.
Recording first and dropping one reconcile later means the memory is durable before the Job
goes: a lost status write costs one more (idempotent) download, never a claim left unfilled.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from modelplane.compose.shared.remote import OBSERVED_MANIFEST
from modelplane.composer import Result
from modelplane.kube import objects
from modelplane.kube.objects import Obj

HYDRATED_BY = "hydratedBy"
CLAIM_UID = "claimUID"


def recorded(mc: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """The clusters the cache's status records as hydrated, by name."""
    out: dict[str, Mapping[str, Any]] = {}
    for entry in objects.dig(mc, "status", "clusters") or ():
        if isinstance(entry, Mapping) and entry.get("phase") == "Ready" and entry.get(HYDRATED_BY):
            out[str(entry.get("name", ""))] = entry
    return out


def claim_uid(claim: Mapping[str, Any] | None) -> str:
    """The uid of the claim on the workload cluster, from its observed Object ("" if unknown)."""
    return str(objects.dig(claim, *OBSERVED_MANIFEST, "metadata", "uid") or "")


def still_hydrated(entry: Mapping[str, Any] | None, digest: str, claim: Obj | None) -> bool:
    """Whether the recorded hydration still holds for the Job of ``digest`` and the observed
    claim Object: nothing says the weights are gone."""
    if entry is None or entry.get(HYDRATED_BY) != digest or claim is None:
        return False
    was, now = str(entry.get(CLAIM_UID) or ""), claim_uid(claim)
    return not (was and now and was != now)


def keep_status(mc: Mapping[str, Any], result: Result) -> Result:
    """``result`` publishing the status the cache has: a reconcile that cannot read the fleet
    must not lose the record of what is hydrated (the status it returns replaces the old)."""
    status = mc.get("status") or {}
    for field in ("clusters", "summary", "resolved"):
        if field in status:
            result.status.setdefault(field, status[field])
    return result
