"""Property: whatever valid deployment the ModelDeployment XRD admits, every ModelReplica the
composer stamps from it passes the ModelReplica XRD, and each member round-trips unchanged."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from modelplane.compose.modeldeployment.composer import (
    CLASSES,
    CLUSTERS,
    REPLICAS,
    compose_deployment,
)
from modelplane.compose.modeldeployment.footprint import CACHE
from modelplane.composer import Inputs
from tests.fleet.builders import GPU_SELECTOR, inference_class, inference_cluster, model_cache
from tests.fleet.xrd import admission
from tests.properties import examples

Obj = dict[str, Any]
NIC = {
    "name": "nic",
    "claim": "Synthetic",
    "driver": "net.example.com",
    "count": 1,
    "attributes": {"linkType": {"string": "infiniband"}},
}
CLASS = inference_class("big")
CLASS["spec"]["devices"].append(NIC)
# 16 nodes: any one generated replica fits (2 engines x 2 copies x a 4-node gang).
FLEET = [inference_cluster(n, {"big": ("big", 16)}, classes=[CLASS]) for n in ("a", "b")]
for _ic in FLEET:  # some generated deployments mount a model cache
    _ic["status"]["cache"] = {"storageClassName": "rwx"}


def request(name: str, gpus: int) -> Obj:
    return {"name": name, "count": gpus, "selectors": [{"cel": GPU_SELECTOR}]}


NIC_REQUEST = {
    "name": "nic",
    "count": 1,
    "selectors": [{"cel": 'device.driver == "net.example.com"'}],
}


@st.composite
def containers(draw: st.DrawFn, serving: bool, port: int) -> list[Obj]:
    engine: Obj = {"name": "engine", "image": "vllm/vllm-openai:v0.11.0"}
    if draw(st.booleans()):
        engine["args"] = draw(st.lists(st.sampled_from(["--model", "x", "--tp", "2"]), max_size=4))
    if draw(st.booleans()):
        engine["env"] = [{"name": "HF_HOME", "value": "/models"}]
    if draw(st.booleans()):
        engine["resources"] = {"requests": {"cpu": "4", "memory": "32Gi"}}
    out = [engine]
    if serving and draw(st.booleans()):
        # A proxy in front: it takes the serving port, the engine's http port moves.
        engine["ports"] = [{"name": "http", "containerPort": port + 1}]
        out.append({"name": "proxy", "image": "proxy:v1", "ports": [{"containerPort": port}]})
    elif serving and draw(st.booleans()):
        engine["ports"] = [{"name": "http", "containerPort": port}]
        engine["readinessProbe"] = {"httpGet": {"path": "/health", "port": "http"}}
    return out


@st.composite
def members(draw: st.DrawFn, port: int) -> list[Obj]:
    def member(role: str, serving: bool, selector: bool) -> Obj:
        m: Obj = {
            "role": role,
            "template": {
                "metadata": {"labels": {"team": "ml"}, "annotations": {"note": "x"}},
                "spec": {"containers": draw(containers(serving, port))},
            },
        }
        if selector:
            devices = [request("gpu", draw(st.integers(1, 8)))]
            if draw(st.booleans()):
                devices.append(NIC_REQUEST)
            m["nodeSelector"] = {"devices": devices}
        return m

    if draw(st.booleans()):
        return [member("Standalone", True, True)]
    leader_claims = draw(st.booleans())
    worker = member("Worker", False, True)
    worker["worker"] = {"nodes": draw(st.integers(1, 3))}
    return [member("Leader", True, leader_claims), worker]


@st.composite
def deployments(draw: st.DrawFn) -> Obj:
    port = draw(st.sampled_from([8000, 8080]))
    pd = draw(st.booleans())
    names = ["prefill", "decode"] if pd else draw(st.sampled_from([["main"], ["main", "aux"]]))
    engines = []
    for name in names:
        e: Obj = {"name": name, "copies": draw(st.integers(1, 2)), "members": draw(members(port))}
        if pd:
            e["phase"] = name.capitalize()
        engines.append(e)
    spec: Obj = {"engines": engines}
    serving: Obj = {"mode": "PrefillDecode" if pd else "Unified"}
    if port != 8000:
        serving["port"] = port
    if pd or draw(st.booleans()):
        serving["router"] = "EndpointPicker"
        serving["endpointPicker"] = {
            "template": {"spec": {"containers": [{"name": "epp", "image": "epp:v1"}]}},
            "config": {"plugins": [{"type": "prefix-cache-scorer"}]},
        }
    spec["serving"] = serving
    if draw(st.booleans()):
        spec["modelCacheRef"] = {"name": "weights"}
    return {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelDeployment",
        "metadata": {"name": "model", "namespace": "ml"},
        "spec": {
            "replicas": draw(st.integers(1, 3)),
            "template": {"metadata": {"labels": {"app": "model"}}, "spec": spec},
        },
    }


def _without(obj: Obj, *keys: str) -> Obj:
    return {k: v for k, v in obj.items() if k not in keys}


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(deployments())
def test_every_stamped_replica_passes_the_model_replica_xrd(md: Obj) -> None:
    admitted = admission("modeldeployments").admit(md)
    assume(not admitted.errors)
    md = admitted.object
    # The cache it may reference stages everywhere: it constrains nothing here.
    required = {CLUSTERS: FLEET, CLASSES: [CLASS], REPLICAS: [], CACHE: [model_cache("weights")]}
    result = compose_deployment(Inputs(composite=md, required=required))
    assert result.fatal is None
    assert result.resources, [c.message for c in result.conditions]
    template_engines = {e["name"]: e for e in md["spec"]["template"]["spec"]["engines"]}
    for desired in result.resources.values():
        mr = desired.resource
        assert [str(e) for e in admission("modelreplicas").admit(mr).errors] == []
        for engine in mr["spec"]["engines"]:
            source = template_engines[engine["name"]]
            assert _without(engine, "members") == _without(source, "members")
            for stamped, member in zip(engine["members"], source["members"], strict=True):
                assert _without(stamped, "nodePoolName", "deviceRequests") == _without(
                    member, "nodeSelector"
                )


CLUSTER_NAMES = ("a", "b", "c")
DRAIN = [{"key": "maintenance", "effect": "NoExecute"}]


def _plain(replicas: int) -> Obj:
    request = {"devices": [{"name": "gpu", "count": 8, "selectors": [{"cel": GPU_SELECTOR}]}]}
    member = {
        "role": "Standalone",
        "nodeSelector": request,
        "template": {"spec": {"containers": [{"name": "engine", "image": "vllm:v1"}]}},
    }
    return {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelDeployment",
        "metadata": {"name": "m", "namespace": "ml"},
        "spec": {
            "replicas": replicas,
            "template": {"spec": {"engines": [{"name": "main", "copies": 1, "members": [member]}]}},
        },
    }


def _cluster(name: str, drained: bool) -> Obj:
    return inference_cluster(
        name, {"big": ("big", 1)}, taints=DRAIN if drained else None, classes=[CLASS]
    )


def _serving(mr: Obj) -> Obj:
    status = {"conditions": [{"type": "ModelServing", "status": "True", "reason": "Serving"}]}
    return {**mr, "status": status}


@settings(max_examples=examples(80), deadline=None)
@given(
    before=st.integers(1, 3),
    after=st.integers(1, 3),
    drained=st.sets(st.sampled_from(CLUSTER_NAMES)),
    deleted=st.sets(st.sampled_from(CLUSTER_NAMES), max_size=2),
)
def test_a_serving_replica_is_dropped_only_when_enough_others_serve_or_its_cluster_is_gone(
    before: int, after: int, drained: set[str], deleted: set[str]
) -> None:
    first = compose_deployment(
        Inputs(
            composite=_plain(before),
            required={
                CLUSTERS: [_cluster(n, False) for n in CLUSTER_NAMES],
                CLASSES: [CLASS],
                REPLICAS: [],
            },
        )
    )
    observed = {k: _serving(d.resource) for k, d in first.resources.items()}
    fleet = [_cluster(n, n in drained) for n in CLUSTER_NAMES if n not in deleted]
    result = compose_deployment(
        Inputs(
            composite=_plain(after),
            required={CLUSTERS: fleet, CLASSES: [CLASS], REPLICAS: list(observed.values())},
            observed=observed,
        )
    )
    assert result.fatal is None
    serving_kept = [k for k in observed if k in result.resources]
    for key, mr in observed.items():
        if key in result.resources or mr["spec"]["clusterName"] in deleted:
            continue
        # Dropped while its cluster still exists: only if enough replicas still serve.
        assert len(serving_kept) >= after, (key, sorted(result.resources))
