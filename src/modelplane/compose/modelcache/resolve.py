"""A branch or tag resolved to one commit, once for the whole cache.

``hf download --revision main`` on each cluster would resolve ``main`` when that cluster
downloads: two clusters minutes apart could hold two commits, and one deployment's replicas
serve two sets of weights. So a revision that is not a commit is resolved once, by a small Pod
on the first cluster the cache stages on (in name order): it asks the Hub for the revision's
commit (huggingface_hub ``HfApi.model_info(repo, revision=..., expand=["sha"]).sha``) and ends
with that commit as its termination message, which the Pod's observed status carries back
through its provider-kubernetes Object (no ConfigMap, no RBAC on the workload cluster). The
cache records it in ``status.resolved`` and every cluster downloads that commit.

Evidence, not absence: once recorded, the record alone decides; the Pod goes, and nothing that
is (not) observed of it resolves the branch again. Only a new request does: another repo,
another revision, or a new value of the ``modelplane.ai/resolve-revision`` annotation. The
record names the repo it was resolved in, so an edited repo is never asked for the commit of
the one before. The Pod is kept until the
record is in the cache's status, so a lost status write reads the same commit back from it.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any

from modelplane.compose.shared.cache import COMMIT, RESOLVED, requested_revision, resolve_request
from modelplane.compose.shared.remote import OBSERVED_MANIFEST
from modelplane.kube import objects
from modelplane.kube.objects import Obj

TERMINATION_LOG = "/dev/termination-log"
_DOWNLOAD_ONLY = ("HF_HUB_CACHE", "MODELPLANE_HYDRATED_MARKER")
# argv, never the shell, carries the repo and revision; the commit is the termination message.
_RESOLVE = (
    "import sys\n"
    "from huggingface_hub import HfApi\n"
    "info = HfApi().model_info(sys.argv[1], revision=sys.argv[2], expand=['sha'])\n"
    f"open({TERMINATION_LOG!r}, 'w').write(info.sha)\n"
)


def resolve_pod(mc: Mapping[str, Any], template: Obj) -> Obj:
    """The Pod resolving the cache's revision, from the hydration Job's pod ``template`` (same
    image, user, token and scratch); the name is set by the caller."""
    spec = copy.deepcopy(template["spec"])
    [container] = spec["containers"]
    container.update(
        {
            "name": "resolve",
            "command": ["python3", "-c", _RESOLVE],
            "args": [str(mc["spec"]["huggingFace"]["repo"]), requested_revision(mc)],
            "env": [e for e in container["env"] if e["name"] not in _DOWNLOAD_ONLY],
            # A failed attempt's log tail becomes its message: the status shows why (a gated
            # repo, a revision that does not exist) while the kubelet retries.
            "terminationMessagePolicy": "FallbackToLogsOnError",
        }
    )
    container["volumeMounts"] = [m for m in container["volumeMounts"] if m["mountPath"] == "/tmp"]
    spec["volumes"] = [v for v in spec["volumes"] if "emptyDir" in v]
    # OnFailure: a flaky Hub is retried in place, and a success ends the Pod Succeeded.
    spec["restartPolicy"] = "OnFailure"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": copy.deepcopy(template["metadata"]) | {"name": ""},
        "spec": spec,
    }


def observed(obj: Mapping[str, Any] | None) -> tuple[str | None, str]:
    """The commit the observed resolve Pod ended with, or None and what it is doing."""
    pod = objects.dig(obj, *OBSERVED_MANIFEST)
    if not pod:
        return None, "the resolve Pod is not observed yet"
    commit, failed = _outcome(objects.dig(pod, "status", "containerStatuses") or ())
    if commit is not None:
        return commit, ""
    if failed:
        return None, f"the resolve Pod failed, retrying: {failed}"
    return None, "the resolve Pod is asking the Hub"


def _outcome(statuses: Iterable[Mapping[str, Any]]) -> tuple[str | None, str]:
    """The commit the first container to succeed printed, else None and the last failure's
    message ("" if none failed)."""
    failed = ""
    for status in statuses:
        done = objects.mapping(status, "state", "terminated")
        message = str(done.get("message") or "").strip()
        if done.get("exitCode") == 0 and COMMIT.match(message):
            return message, ""
        last = objects.mapping(status, "lastState", "terminated")
        failed = str(last.get("message") or done.get("message") or "").strip()[-300:]
    return None, failed


def record(mc: Mapping[str, Any], commit: str) -> Obj:
    """The status record of ``commit`` answering the cache's current request: what it resolved
    (the repo, the revision and the annotation asking again) and to which commit, so a record
    for another repo is never taken for this one (cache.resolved_commit)."""
    return {"repo": str(mc["spec"]["huggingFace"]["repo"]), **resolve_request(mc), "commit": commit}


def with_record(mc: Obj, entry: Obj) -> Obj:
    """The cache as if its status already recorded ``entry``."""
    return {**mc, "status": {**(mc.get("status") or {}), RESOLVED: entry}}
