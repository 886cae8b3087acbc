"""A gateway's caller Secrets through the function's gRPC edge, as Crossplane delivers them:
asked for by labels in the control namespace, read as Secrets, and the copies composed."""

from __future__ import annotations

from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from modelplane.compose.admission import Admission
from modelplane.compose.registry import default_registry
from modelplane.function import FunctionRunner
from modelplane.structs import dict_to_struct, struct_to_dict
from tests.compose.modelservice.kit import cluster, gateway

LABELS = {"modelplane.ai/callers": "true"}
SECRET = {
    "apiVersion": "v1",
    "kind": "Secret",
    "metadata": {"name": "search", "namespace": "crossplane-system", "labels": LABELS},
    "type": "Opaque",
    "data": {"search-prod": "a2V5"},
}


def run(required: dict[str, list[dict]]) -> fnv1.RunFunctionResponse:
    ig = gateway()
    ig["spec"]["auth"] = {"callerSecretSelector": {"matchLabels": LABELS}}
    req = fnv1.RunFunctionRequest(meta=fnv1.RequestMeta(tag="t"))
    req.observed.composite.resource.CopyFrom(dict_to_struct(ig))
    for name, objs in required.items():
        for obj in objs:
            req.required_resources[name].items.add().resource.CopyFrom(dict_to_struct(obj))
    return FunctionRunner(default_registry(), admission=Admission.default()).run(req)


def test_the_caller_secrets_are_asked_for_by_labels_in_the_control_namespace() -> None:
    rsp = run({"inference-clusters": [cluster("edge", pools=False)]})
    selector = rsp.requirements.resources["caller-secrets"]
    assert (selector.api_version, selector.kind) == ("v1", "Secret")
    assert dict(selector.match_labels.labels) == LABELS
    assert selector.namespace == "crossplane-system"


def test_listed_caller_secrets_are_read_and_copied() -> None:
    rsp = run({"inference-clusters": [cluster("edge", pools=False)], "caller-secrets": [SECRET]})
    assert [r.message for r in rsp.results if r.severity == fnv1.SEVERITY_FATAL] == []
    copy = struct_to_dict(rsp.desired.resources["caller/search"].resource)
    assert copy["spec"]["references"][0]["patchesFrom"]["name"] == "search"
