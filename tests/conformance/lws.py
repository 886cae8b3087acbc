"""What LeaderWorkerSet v0.9.0 makes of one group's pods: which pod is which, and the env it
puts before the template's.

Read from github.com/kubernetes-sigs/lws at tag v0.9.0:
- pkg/controllers/leaderworkerset_controller.go: the leaders' StatefulSet is named after the
  LeaderWorkerSet, so group ``g``'s leader is the pod ``<lws>-<g>``, labelled worker index 0;
  its service name, the headless Service ``reconcileHeadlessServices`` creates under the default
  SubdomainShared, is the LeaderWorkerSet's name too (the pods' subdomain);
- pkg/controllers/pod_controller.go: each group's worker StatefulSet has ``size - 1`` replicas
  from ordinal 1, so its workers have indices 1 .. size - 1 (the pod webhook,
  pkg/webhooks/pod_webhook.go, labels each with its ordinal);
- pkg/utils/pod/pod_utils.go ``AddLWSVariables`` (called by that webhook for every pod):
  LWS_LEADER_ADDRESS ``<lws>-<group index>.<subdomain>.<namespace>``, LWS_GROUP_SIZE,
  LWS_WORKER_INDEX (names in api/leaderworkerset/v1/leaderworkerset_types.go), put first in
  every container by ``addEnvVarsIfNotExists``, the template's own variables after them (one of
  the same name is dropped).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

Obj = dict[str, Any]

TAG = "v0.9.0"


@dataclass(frozen=True)
class GroupPod:
    """Pod ``index`` (0: the leader) of group ``group`` of a LeaderWorkerSet of ``size``."""

    lws: str
    namespace: str
    group: int
    index: int
    size: int

    @property
    def leader_address(self) -> str:
        return f"{self.lws}-{self.group}.{self.lws}.{self.namespace}"

    def env(self, template_env: list[Obj]) -> list[Obj]:
        """The container's env once the pod webhook has added LeaderWorkerSet's variables."""
        lws = [
            {"name": "LWS_LEADER_ADDRESS", "value": self.leader_address},
            {"name": "LWS_GROUP_SIZE", "value": str(self.size)},
            {"name": "LWS_WORKER_INDEX", "value": str(self.index)},
        ]
        names = {e["name"] for e in lws}
        return lws + [e for e in template_env if e["name"] not in names]


def group_pods(lws: Obj, group: int) -> list[tuple[GroupPod, Obj]]:
    """Each pod of one group with its pod template: the leader, then the workers by index."""
    template = lws["spec"]["leaderWorkerTemplate"]
    size = int(template["size"])
    name, namespace = lws["metadata"]["name"], lws["metadata"]["namespace"]
    workers = template["workerTemplate"]
    leader = template.get("leaderTemplate") or workers
    return [
        (GroupPod(name, namespace, group, i, size), leader if i == 0 else workers)
        for i in range(size)
    ]
