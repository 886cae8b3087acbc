"""The serving stack applies llm-d-router's ``llm-d.ai`` InferenceObjective CRD beside the
InferencePool CRD: the replicas' objectives (a caller's priority) are of that kind, and a picker
looks for the group only once, at its start, so the CRD is part of what StackReady waits for
(docs/design/shared-front-door.md, "Priority as designed")."""

from __future__ import annotations

import pytest

from modelplane.compose.inferencecluster.components import OBJECTIVE_CRD
from modelplane.compose.inferencecluster.releases import composed_version
from modelplane.compose.modelreplica.objectives import OBJECTIVE_API_VERSION
from modelplane.composer import Result

from .support import cluster, installing, manifest, observed_as_installed, resources, run


def stack_ready(result: Result) -> str:
    [ready] = [c for c in result.conditions if c.type == "StackReady"]
    return str(ready.status)


@pytest.mark.parametrize("stack", ["Standard", "Dynamo"])
def test_every_managed_stack_applies_the_objective_crd_the_replicas_compose(stack: str) -> None:
    crd = manifest(resources(installing(cluster(stack=stack)))[OBJECTIVE_CRD])
    served = [f"{crd['spec']['group']}/{v['name']}" for v in crd["spec"]["versions"] if v["served"]]
    assert crd["metadata"]["name"] == "inferenceobjectives.llm-d.ai"
    assert served == [OBJECTIVE_API_VERSION]


def test_the_objective_crd_is_never_deleted() -> None:
    # Deleting a CRD deletes every object of its kind on the cluster, anyone's.
    obj = resources(installing(cluster()))[OBJECTIVE_CRD]
    assert "Delete" not in obj["spec"]["managementPolicies"]
    assert "*" not in obj["spec"]["managementPolicies"]


def test_the_stack_is_not_ready_until_the_objective_crd_is_established() -> None:
    ic = cluster()
    observed = observed_as_installed(installing(ic))
    assert stack_ready(run(ic, observed)) == "True"
    observed[OBJECTIVE_CRD].pop("status", None)
    assert stack_ready(run(ic, observed)) != "True"


def test_the_objective_crd_is_not_read_as_an_inference_extension_bundle_version() -> None:
    # The stack's waves read a CRD Object's bundle annotation as the component's version.
    obj = resources(installing(cluster()))[OBJECTIVE_CRD]
    assert composed_version(obj) == ""


def test_an_external_inference_extension_leaves_the_objective_crd_to_its_owner() -> None:
    ic = cluster(servingStack={"inferenceExtension": {"mode": "External"}})
    assert OBJECTIVE_CRD not in resources(installing(ic))
