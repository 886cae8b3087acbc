"""The pods revision: what this Modelplane composes into pods of its own accord, as a digest.

A release that changes what the ModelReplica composer adds to pods (the default picker image or
config, a default probe, the wiring env, a label or an annotation) moves it, and nothing else
does: it is taken over the pod templates, specs, labels and annotations (and the ConfigMaps pods
mount), composed for a fixed set of stamped reference replicas, a Standalone engine behind the
default picker with a cache, gangs on both stacks, an SGLang server, and prefill/decode. A
ModelDeployment stamps it on every replica (``modelplane.ai/pods-revision``), so a new one rolls
out through the deployment's strategy (``modelreplica/revision.py``).
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Iterator, Mapping
from typing import Any

from modelplane.compose.admission import Admission
from modelplane.compose.modelreplica import objectives, routing
from modelplane.compose.modelreplica.context import ReplicaContext
from modelplane.compose.modelreplica.workloads import compose_workloads
from modelplane.compose.shared.remote import MANIFEST
from modelplane.kube import objects
from modelplane.kube.objects import Obj
from modelplane.labels import DEPLOYMENT, DEPLOYMENT_NAMESPACE

POD_KINDS = frozenset({"Deployment", "LeaderWorkerSet", "PodCliqueSet", "ConfigMap"})
"""Remote kinds whose change restarts pods: workloads, and the ConfigMap the picker mounts."""


@functools.cache
def pods_revision() -> str:
    return "p" + hashlib.sha256(reference_pods().encode()).hexdigest()[:12]


def reference_pods() -> str:
    """What the revision digests: the reference replicas' pod templates, as JSON."""
    admission = Admission.default()
    out = []
    for stack, replica in _REFERENCES:
        admitted = admission.admit_input(replica)
        assert not admitted.errors, admitted.errors
        ctx = ReplicaContext(
            replica=admitted.object,
            cluster=_cluster(stack),
            provider_config="reference",
            observed={},
            model_cache=_CACHE if admitted.object["spec"].get("modelCacheRef") else None,
        )
        resources = objectives.served(
            ctx, {**compose_workloads(ctx), **routing.compose_routing(ctx)}
        )
        for key, obj in sorted(resources.items()):
            if bears_pods(obj):
                out.append([key, list(_pod_parts(objects.mapping(obj, *MANIFEST)))])
    return json.dumps(out, sort_keys=True)


def bears_pods(obj: Mapping[str, Any]) -> bool:
    """Whether a provider-kubernetes Object applies something that runs pods."""
    return objects.dig(obj, *MANIFEST, "kind") in POD_KINDS


def _pod_parts(manifest: Any) -> Iterator[Any]:
    """The pod templates in a manifest (their specs and labels), or a ConfigMap's data."""
    if manifest.get("kind") == "ConfigMap":
        yield manifest.get("data")
        return
    stack = [manifest.get("spec")]
    while stack:
        node = stack.pop()
        if isinstance(node, Mapping):
            if "containers" in node:
                yield node
            # A template's labels and annotations (metadata's, a Grove clique's): changing
            # them restarts its pods as a changed spec does. Selectors are matchLabels, never
            # this; the workload's own metadata is outside its spec, never walked.
            for part in ("labels", "annotations"):
                if isinstance(node.get(part), Mapping):
                    yield {part: node[part]}
            stack.extend(node[k] for k in sorted(node, reverse=True))
        elif isinstance(node, list):
            stack.extend(reversed(node))


def _cluster(stack: str) -> Obj:
    return {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "InferenceCluster",
        "metadata": {"name": "reference"},
        "spec": {"stack": stack},
        "status": {
            "providerConfigRef": {"name": "reference"},
            "gateway": {"name": "inference-gateway", "namespace": "modelplane-system"},
        },
    }


_CACHE: Obj = {
    "apiVersion": "modelplane.ai/v1alpha1",
    "kind": "ModelCache",
    "metadata": {"name": "weights", "namespace": "reference"},
    "spec": {"source": "HuggingFace", "huggingFace": {"repo": "org/model", "sizeGiB": 20}},
}


def _member(role: str, nodes: int | None = None) -> Obj:
    member: Obj = {
        "role": role,
        "nodePoolName": "gpu",
        "deviceRequests": [
            {"name": "gpu", "deviceClassName": "gpu.nvidia.com", "count": 8, "selectors": []}
        ],
        "template": {
            "spec": {
                "containers": [
                    {
                        "name": "engine",
                        "image": "engine:reference",
                        "ports": [{"name": "http", "containerPort": 8000}],
                    }
                ]
            }
        },
    }
    if nodes is not None:
        member["worker"] = {"nodes": nodes}
    return member


def _replica(name: str, engines: list[Obj], serving: Obj | None = None, cache: bool = False) -> Obj:
    spec: Obj = {"clusterName": "reference", "engines": engines}
    if serving is not None:
        spec["serving"] = serving
    if cache:
        spec["modelCacheRef"] = {"name": "weights"}
    return {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelReplica",
        # Stamped, as every replica the revision rolls is: what Modelplane adds to a stamped
        # replica's pods (its deployment's labels) moves the revision too.
        "metadata": {
            "name": name,
            "namespace": "reference",
            "labels": {DEPLOYMENT: "reference", DEPLOYMENT_NAMESPACE: "reference"},
        },
        "spec": spec,
    }


def _sglang() -> Obj:
    """A Standalone SGLang server: what Modelplane adds to SGLang's command line."""
    member = _member("Standalone")
    [engine] = member["template"]["spec"]["containers"]
    engine["image"] = "lmsysorg/sglang:reference"
    engine["command"] = ["python3", "-m", "sglang.launch_server"]
    return member


_GANG = [{"name": "main", "members": [_member("Leader"), _member("Worker", nodes=1)]}]
_REFERENCES: tuple[tuple[str, Obj], ...] = (
    (
        "Standard",
        _replica("standalone", [{"name": "main", "members": [_member("Standalone")]}], cache=True),
    ),
    ("Standard", _replica("gang", _GANG)),
    ("Dynamo", _replica("gang", _GANG)),
    ("Standard", _replica("sglang", [{"name": "main", "members": [_sglang()]}])),
    (
        "Standard",
        _replica(
            "prefill-decode",
            [
                {"name": "prefill", "phase": "Prefill", "members": [_member("Standalone")]},
                {"name": "decode", "phase": "Decode", "members": [_member("Standalone")]},
            ],
            serving={
                "mode": "PrefillDecode",
                "router": "EndpointPicker",
                "endpointPicker": {
                    "template": {"spec": {"containers": [{"name": "epp", "image": "epp:ref"}]}}
                },
            },
        ),
    ),
)
