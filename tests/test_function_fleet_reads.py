"""The front door's compositions list every InferenceCluster of the fleet and read a few fields
of each: through the function they read the list as checked views, so a reconcile costs what it
reads, and admission checks what is read (a cluster the API server stored is valid; a field a
composition reads that is not is still refused, naming it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from modelplane.compose.admission import Admission
from modelplane.compose.registry import SERVICE_ENTRIES, default_registry
from modelplane.function import FunctionRunner
from modelplane.structs import dict_to_struct
from tests.compose.modelservice.kit import (
    cluster,
    external_endpoint,
    gateway,
    replica_endpoint,
    service,
)

Obj = dict[str, Any]
ROOT = Path(__file__).resolve().parents[1]
CLUSTERS = "inference-clusters"
GATEWAYS = "inference-gateways"


def fleet_of(kind: str, clusters: list[Obj]) -> tuple[Obj, dict[str, list[Obj]]]:
    """A composite of ``kind`` on the gateway ``main`` (on cluster edge), and its requirements
    answered with ``clusters`` (a service's one endpoint on east)."""
    if kind == "InferenceGateway":
        return gateway(), {CLUSTERS: clusters}
    if kind == "ModelService":
        endpoint = replica_endpoint("qwen-0", "east", labels={"modelplane.ai/deployment": "qwen"})
        required = {GATEWAYS: [gateway()], CLUSTERS: clusters, "endpoints-0": [endpoint]}
        return service(), {**required, "replicas-0": []}
    return external_endpoint("api"), {GATEWAYS: [gateway()], CLUSTERS: clusters}


def fatal(composite: Obj, required: dict[str, list[Obj]]) -> list[str]:
    req = fnv1.RunFunctionRequest(meta=fnv1.RequestMeta(tag="t"))
    req.observed.composite.resource.CopyFrom(dict_to_struct(composite))
    for name, objs in required.items():
        for obj in objs:
            req.required_resources[name].items.add().resource.CopyFrom(dict_to_struct(obj))
    runner = FunctionRunner(default_registry(), admission=Admission.default())
    rsp = runner.run(req)
    return [r.message for r in rsp.results if r.severity == fnv1.SEVERITY_FATAL]


KINDS = ["InferenceGateway", "ModelService", "ModelEndpoint"]


@pytest.mark.parametrize("kind", KINDS)
def test_a_cluster_field_the_composition_never_reads_is_not_checked(kind: str) -> None:
    unread = cluster("east")
    unread["spec"]["nodePools"] = 5  # the scheduler's, never the front door's
    assert fatal(*fleet_of(kind, [cluster("edge"), unread])) == []


@pytest.mark.parametrize("kind", KINDS)
def test_a_mistyped_cluster_field_the_composition_reads_is_refused_naming_it(kind: str) -> None:
    clusters = [cluster("edge"), cluster("east")]
    for c in clusters:
        c["status"]["gateway"]["fleetHostname"] = 5
    [message] = fatal(*fleet_of(kind, clusters))
    assert message.startswith(f"required resource {CLUSTERS}[")
    assert "is invalid: status.gateway.fleetHostname: " in message


def test_a_service_reads_its_entries_endpoints_as_views_too() -> None:
    composite, required = fleet_of("ModelService", [cluster("edge"), cluster("east")])
    [endpoint] = required["endpoints-0"]
    endpoint["metadata"]["annotations"] = {"note": 5}  # a field no composition reads
    assert fatal(composite, required) == []


def test_every_entry_a_service_may_have_has_its_lists_read_as_views() -> None:
    definition = yaml.safe_load((ROOT / "apis" / "modelservices" / "definition.yaml").read_text())
    [version] = definition["spec"]["versions"]
    entries = version["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["endpoints"]
    assert entries["maxItems"] == SERVICE_ENTRIES
    lazy = default_registry().lazy_requirements("modelplane.ai/v1alpha1", "ModelService")
    last = SERVICE_ENTRIES - 1
    assert {f"endpoints-{last}", f"replicas-{last}", CLUSTERS} <= lazy
