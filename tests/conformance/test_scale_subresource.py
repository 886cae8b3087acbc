"""Why an autoscaled ModelDeployment still requires ``spec.replicas``
(docs/design/autoscaling.md, "The API"): the HPA KEDA drives reads the count through the scale
subresource, and a count that is not written reads as zero, which the HPA never scales from.

- apiextensions-apiserver v0.35.4 ``pkg/registry/customresource/etcd.go``
  (``scaleFromCustomResource``): when ``specReplicasPath`` is not found in the object,
  ``specReplicas = 0``.
- kubernetes v1.35.4 ``pkg/controller/podautoscaler/horizontal.go`` (``reconcileAutoscaler``):
  ``if currentReplicas == 0 && minReplicas != 0`` the HPA sets ``ScalingActive`` False, reason
  ``ScalingDisabled`` ("scaling is disabled since the replica count of the target is zero"),
  and does not rescale.

Both are the versions the e2e tier builds (e2e/build.py).
"""

from __future__ import annotations

import yaml

from tests.fleet.builders import deployment
from tests.fleet.xrd import APIS, errors


def scale_subresource() -> dict[str, str]:
    xrd = yaml.safe_load((APIS / "modeldeployments" / "definition.yaml").read_text())
    return xrd["spec"]["versions"][0]["subresources"]["scale"]


def test_the_scale_subresource_reads_spec_replicas() -> None:
    assert scale_subresource()["specReplicasPath"] == ".spec.replicas"


def test_an_autoscaled_deployment_without_a_replica_count_is_refused() -> None:
    md = deployment()
    md["spec"]["autoscaling"] = {"maxReplicas": 4, "targets": {"kvCacheUtilization": 80}}
    del md["spec"]["replicas"]
    assert any("spec.replicas" in e and "Required" in e for e in errors("modeldeployments", md))


def test_the_smallest_replica_count_admitted_is_one() -> None:
    md = deployment()
    md["spec"]["replicas"] = 0
    assert any("spec.replicas" in e for e in errors("modeldeployments", md))
