"""Property: any ModelReplica the XRD admits composes, deterministically, into names that fit."""

from __future__ import annotations

import json
import re

import kubernetes_validate
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from modelplane.compose.modelreplica.composer import compose_replica
from modelplane.compose.modelreplica.names import GROVE_COMBINED_MAX
from modelplane.composer import Inputs
from modelplane.kube.admission import Admission
from tests.properties import examples
from tests.upstream_crds import UPSTREAM_CRDS

from .support import REPLICA_XRD, cluster, model_cache

ADMISSION = Admission.from_paths([UPSTREAM_CRDS, REPLICA_XRD])
DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
# The one kind whose names may pass 63 characters: an InferenceObjective is named
# ``<pool>-priority-<value>`` (up to 75 characters), a name the fleet hop's Lua builds from the
# pool header, so it cannot carry the hash a cut name does. Kubernetes accepts it: the llm-d.ai
# CRD (llm-d-router v0.10.0, tests/upstream/crds/llm-d.ai_inferenceobjectives.yaml) leaves
# ``metadata`` unvalidated (``type: object``), so the API server holds a custom resource's name
# to a DNS subdomain, at most 253 characters.
NAME_LIMITS = {"InferenceObjective": 253}

label = st.from_regex(r"[a-z0-9]([-a-z0-9]{0,20}[a-z0-9])?", fullmatch=True)
long_label = st.from_regex(r"[a-z]([-a-z0-9]{40,61}[a-z0-9])", fullmatch=True)
subdomain = st.one_of(
    label,
    long_label,
    st.lists(label, min_size=2, max_size=6).map(".".join).filter(lambda s: len(s) <= 253),
)
engine_name = st.one_of(label, long_label, st.text(min_size=1, max_size=63).filter(str.strip))
port = st.integers(min_value=1, max_value=65535)


@st.composite
def devices(draw):
    names = draw(st.lists(label, min_size=1, max_size=3, unique=True))
    out = []
    for n in names:
        request = {
            "name": n,
            "deviceClassName": draw(st.sampled_from(["gpu.nvidia.com", "x.example.com"])),
        }
        if draw(st.booleans()):
            request["count"] = draw(st.integers(1, 64))
        selectors = draw(st.lists(st.sampled_from(["device.driver == 'x'", "true"]), max_size=2))
        if selectors:
            request["selectors"] = [{"cel": s} for s in selectors]
        out.append(request)
    return out


@st.composite
def pod_spec(draw, *, serving: bool, serving_port: int):
    engine: dict = {"name": "engine", "image": "img:1"}
    sidecar_names = draw(st.lists(label.filter(lambda n: n != "engine"), max_size=2, unique=True))
    sidecars = [{"name": n, "image": "side:1"} for n in sidecar_names]
    layout = (
        draw(st.sampled_from(["none", "engine", "engine-unnamed", "sidecar"]))
        if serving
        else "none"
    )
    if layout == "sidecar" and not sidecars:
        layout = "none"
    other = draw(port.filter(lambda p: p != serving_port))
    if layout == "engine":
        engine["ports"] = [{"name": "http", "containerPort": serving_port}]
    elif layout == "engine-unnamed":
        engine["ports"] = [{"containerPort": serving_port}]
    elif layout == "sidecar":
        sidecars[0]["ports"] = [{"name": "serve", "containerPort": serving_port}]
        engine["ports"] = [{"name": "http", "containerPort": other}]
    elif not serving and draw(st.booleans()):
        engine["ports"] = [{"name": "dist", "containerPort": other}]
    probe = draw(st.sampled_from([None, "number", "tcp", "grpc", "named"]))
    if probe == "number":
        engine["readinessProbe"] = {"httpGet": {"path": "/ready", "port": other}}
    elif probe == "tcp":
        engine["readinessProbe"] = {"tcpSocket": {"port": other}, "periodSeconds": 5}
    elif probe == "grpc":
        engine["readinessProbe"] = {"grpc": {"port": other}}
    elif probe == "named" and any(p.get("name") for p in engine.get("ports", [])):
        name = next(p["name"] for p in engine["ports"] if p.get("name"))
        engine["readinessProbe"] = {"httpGet": {"path": "/", "port": name}}
    if draw(st.booleans()):
        engine["env"] = [
            {"name": "A", "value": "1"},
            {"name": "B", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
        ]
    if draw(st.booleans()):
        engine["resources"] = {
            "requests": {"cpu": "1", "memory": "1Gi"},
            "limits": {"memory": 1024},
        }
    containers = [engine, *sidecars]
    order = draw(st.permutations(containers))
    spec: dict = {"containers": list(order)}
    if draw(st.booleans()):
        spec["imagePullSecrets"] = [{"name": "regcred"}]
    return spec


@st.composite
def member(draw, role: str, *, claims: bool, serving_port: int, with_spec: bool = True):
    m: dict = {"role": role, "nodePoolName": draw(label)}
    if claims:
        m["deviceRequests"] = draw(devices())
    template: dict = {}
    if draw(st.booleans()):
        template["metadata"] = {"labels": {"team": "a"}, "annotations": {"note": "x"}}
    if with_spec:
        template["spec"] = draw(pod_spec(serving=role != "Worker", serving_port=serving_port))
    m["template"] = template
    if role == "Worker" and draw(st.booleans()):
        m["worker"] = {"nodes": draw(st.integers(1, 63))}
    return m


@st.composite
def engine(draw, name: str, serving_port: int):
    obj: dict = {"name": name}
    if draw(st.booleans()):
        obj["copies"] = draw(st.integers(1, 64))
    if draw(st.booleans()):
        obj["members"] = [draw(member("Standalone", claims=True, serving_port=serving_port))]
    else:
        claims = draw(st.sampled_from([(True, True), (False, True), (True, False)]))
        bare = draw(st.sampled_from([None, "Leader", "Worker"]))
        lead = draw(
            member(
                "Leader", claims=claims[0], serving_port=serving_port, with_spec=bare != "Leader"
            )
        )
        work = draw(
            member(
                "Worker", claims=claims[1], serving_port=serving_port, with_spec=bare != "Worker"
            )
        )
        obj["members"] = draw(st.permutations([lead, work]))
    return obj


@st.composite
def replicas(draw):
    serving_port = draw(st.sampled_from([None, 8000, 9000, 31337]))
    sp = serving_port or 8000
    names = draw(st.lists(engine_name, min_size=1, max_size=3, unique=True))
    spec: dict = {
        "clusterName": "c1",
        "engines": [draw(engine(n, sp)) for n in names],
    }
    if serving_port is not None:
        spec["serving"] = {"port": serving_port}
    if draw(st.booleans()):
        spec["modelCacheRef"] = {"name": "weights"}
    return {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelReplica",
        "metadata": {"name": draw(subdomain), "namespace": draw(label)},
        "spec": spec,
    }


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(replica=replicas(), stack=st.sampled_from(["Standard", "Dynamo", None]))
def test_admitted_replicas_compose_deterministically_into_names_that_fit(replica, stack):
    admitted = ADMISSION.admit(replica)
    assume(admitted.ok)
    composite = admitted.object
    required = {"cluster": [cluster(stack=stack)], "modelcache": [model_cache()]}
    first = compose_replica(Inputs(composite=composite, required=required))
    again = compose_replica(Inputs(composite=composite, required=required))
    assert first.fatal is None, first.fatal
    dump = lambda r: json.dumps({k: (d.resource, d.ready) for k, d in r.resources.items()})  # noqa: E731
    assert dump(first) == dump(again)

    for key, desired in first.resources.items():
        obj = desired.resource
        assert DNS_LABEL.fullmatch(obj["metadata"]["name"]) and len(obj["metadata"]["name"]) <= 63
        manifest = obj["spec"]["forProvider"]["manifest"]
        name = manifest["metadata"]["name"]
        limit = NAME_LIMITS.get(manifest["kind"], 63)
        assert DNS_LABEL.fullmatch(name) and len(name) <= limit, (key, name)
        for value in manifest["metadata"].get("labels", {}).values():
            assert LABEL_VALUE.fullmatch(value) and len(value) <= 63, (key, value)
        if manifest["kind"] == "PodCliqueSet":
            assert len(name) + len("gang") + len("worker") + 2 <= GROVE_COMBINED_MAX
        if manifest["kind"] == "LeaderWorkerSet":  # room for <lws>-63 StatefulSets' pods
            assert len(f"{name}-63") <= 52, (key, name)
        if manifest["kind"] in ("LeaderWorkerSet", "PodCliqueSet", "Service"):
            assert name[0].isalpha(), (key, name)  # becomes a Service name: DNS-1035
        if manifest["kind"] in ("LeaderWorkerSet", "PodCliqueSet"):
            assert [str(e) for e in ADMISSION.admit(manifest).errors] == [], key
        elif manifest["kind"] in ("Deployment", "ResourceClaimTemplate"):
            kubernetes_validate.validate(manifest, "1.34", strict=True)


@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(replica=replicas(), stack=st.sampled_from(["Standard", "Dynamo", None]))
def test_through_run_function_views_compose_what_plain_data_does(replica, stack):
    """At the gRPC edge the composite's containers and the cluster arrive as read-only views
    and constants are frozen; the response must carry exactly what composing plain data gives."""
    from crossplane.function.proto.v1 import run_function_pb2 as fnv1

    from modelplane.compose.registry import default_registry
    from modelplane.function import FunctionRunner
    from modelplane.structs import dict_to_struct, plain
    from tests.compose.through import response_to_dict

    admitted = ADMISSION.admit(replica)
    assume(admitted.ok)
    required = {"cluster": [cluster(stack=stack)], "modelcache": [model_cache()]}
    direct = compose_replica(Inputs(composite=admitted.object, required=required))
    req = fnv1.RunFunctionRequest(meta=fnv1.RequestMeta(tag="property"))
    req.observed.composite.resource.CopyFrom(dict_to_struct(admitted.object))
    for name, objs in required.items():
        for obj in objs:
            req.required_resources[name].items.add().resource.CopyFrom(dict_to_struct(obj))
    answered = response_to_dict(FunctionRunner(default_registry()).run(req))
    assert answered["desired"]["resources"] == {
        k: {"resource": plain(d.resource), "ready": f"READY_{d.ready.upper()}"}
        for k, d in direct.resources.items()
    }
