"""What Grove v0.1.0-alpha.11 makes of a PodCliqueSet's gang pods: names, labels and env order.

Read from github.com/ai-dynamo/grove at tag v0.1.0-alpha.11:
- operator/api/common/namegen.go: scaling group ``<pcs>-<pcs index>-<group>``, its PodGangs
  (copies below minAvailable share ``<pcs>-<pcs index>``, each further copy ``<pcsg>-<n>``), its
  cliques
  ``<pcsg>-<copy>-<clique>``, headless Service ``<pcs>-<pcs index>`` and its address
  ``<service>.<namespace>.svc.cluster.local``;
- operator/internal/controller/podclique/components/pod/pod.go: hostname
  ``<clique>-<pod index>``, subdomain the headless Service; the pod's labels; and
  ``addEnvironmentVariables``, appending GROVE_PCS_NAME, GROVE_PCS_INDEX, GROVE_PCLQ_NAME,
  GROVE_HEADLESS_SERVICE, GROVE_PCLQ_POD_INDEX;
- operator/internal/controller/podcliquescalinggroup/components/podclique/podclique.go: the
  scaling group's clique labels and ``addEnvironmentVariablesToPodContainerSpecs``, appending
  GROVE_PCSG_NAME, GROVE_PCSG_TEMPLATE_NUM_PODS, GROVE_PCSG_INDEX when the clique is built,
  before the pod is;
- operator/internal/controller/common/component/utils/pod.go: ``AddEnvVarsToContainers``
  appends (``append(containers[i].Env, envVars...)``): Grove's variables come after the
  template's own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

Obj = dict[str, Any]

TAG = "v0.1.0-alpha.11"


def _label_ref(key: str) -> Obj:
    return {"fieldRef": {"fieldPath": f"metadata.labels['{key}']"}}


@dataclass(frozen=True)
class GangPod:
    """One pod of a scaling-group clique: PodCliqueSet replica 0, gang ``copy``."""

    pcs: str
    namespace: str
    group: str
    copy: int
    clique: str
    pod_index: int = 0
    min_available: int = 1
    """The scaling group's minAvailable: copies below it share the base PodGang."""

    @property
    def scaling_group(self) -> str:
        return f"{self.pcs}-0-{self.group}"

    @property
    def clique_name(self) -> str:
        return f"{self.scaling_group}-{self.copy}-{self.clique}"

    @property
    def pod_gang(self) -> str:
        """``GeneratePodGangNameForPodCliqueOwnedByPCSG``: base gang, else one per copy."""
        if self.copy < self.min_available:
            return f"{self.pcs}-0"
        return f"{self.scaling_group}-{self.copy - self.min_available}"

    @property
    def headless_service(self) -> str:
        return f"{self.pcs}-0"

    @property
    def fqdn(self) -> str:
        """The DNS name the pod answers to: hostname under its subdomain."""
        hostname = f"{self.clique_name}-{self.pod_index}"
        return f"{hostname}.{self.headless_service}.{self.namespace}.svc.cluster.local"

    def labels(self, template_labels: dict[str, str]) -> dict[str, str]:
        # Grove's labels are assigned over the clique's.
        return {
            **template_labels,
            "app.kubernetes.io/managed-by": "grove-operator",
            "app.kubernetes.io/part-of": self.pcs,
            "grove.io/podcliquescalinggroup": self.scaling_group,
            "grove.io/podcliquescalinggroup-replica-index": str(self.copy),
            "grove.io/podcliqueset-replica-index": "0",
            "grove.io/podclique": self.clique_name,
            "grove.io/podgang": self.pod_gang,
            "grove.io/podclique-pod-index": str(self.pod_index),
        }

    def env(self, template_env: list[Obj], group_pods: int) -> list[Obj]:
        """A container's env as the kubelet receives it: the template's, then Grove's."""
        scaling_group = [
            {"name": "GROVE_PCSG_NAME", "valueFrom": _label_ref("grove.io/podcliquescalinggroup")},
            {"name": "GROVE_PCSG_TEMPLATE_NUM_PODS", "value": str(group_pods)},
            {
                "name": "GROVE_PCSG_INDEX",
                "valueFrom": _label_ref("grove.io/podcliquescalinggroup-replica-index"),
            },
        ]
        pod = [
            {"name": "GROVE_PCS_NAME", "value": self.pcs},
            {"name": "GROVE_PCS_INDEX", "value": "0"},
            {"name": "GROVE_PCLQ_NAME", "value": self.clique_name},
            {
                "name": "GROVE_HEADLESS_SERVICE",
                "value": f"{self.headless_service}.{self.namespace}.svc.cluster.local",
            },
            {
                "name": "GROVE_PCLQ_POD_INDEX",
                "valueFrom": _label_ref("grove.io/podclique-pod-index"),
            },
        ]
        return [*template_env, *scaling_group, *pod]
