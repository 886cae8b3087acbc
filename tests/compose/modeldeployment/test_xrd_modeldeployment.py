"""ModelDeployment admission: every rule accepts a fitting deployment and rejects what the
scheduler or the ModelReplica composition could not handle, with the API server's path and
message; and the template stays the ModelReplica's shape so members round-trip unchanged."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.fleet.builders import deployment, engine, member
from tests.fleet.xrd import APIS, admission, errors, mutated, rule_error

Obj = dict[str, Any]
TSPEC = "spec.template.spec"
ENGINE = f"{TSPEC}.engines[0]"
MEMBER = f"{ENGINE}.members[0]"
CONTAINERS = f"{MEMBER}.template.spec.containers"
EPP = {"template": {"spec": {"containers": [{"name": "epp", "image": "epp:v1"}]}}}


def base() -> Obj:
    return deployment("qwen", replicas=2)


def prefill_decode() -> Obj:
    return deployment(
        "pd",
        engine("prefill", phase="Prefill"),
        engine("decode", phase="Decode"),
        serving={"mode": "PrefillDecode", "router": "EndpointPicker", "endpointPicker": EPP},
    )


def gang() -> Obj:
    worker = member("Worker")
    worker["worker"] = {"nodes": 2}
    return deployment("gang", engine("main", member("Leader"), worker))


def tspec(md: Obj) -> Obj:
    return md["spec"]["template"]["spec"]


def eng(md: Obj, i: int = 0) -> Obj:
    return tspec(md)["engines"][i]


def mem(md: Obj, i: int = 0) -> Obj:
    return eng(md)["members"][i]


def meta(md: Obj) -> Obj:
    return mem(md)["template"]["metadata"]


def containers(md: Obj) -> list[Obj]:
    return mem(md)["template"]["spec"]["containers"]


def engine_container(md: Obj) -> Obj:
    return containers(md)[0]


def sidecar(port: int, name: str = "proxy") -> Obj:
    return {"name": name, "image": "proxy:v1", "ports": [{"containerPort": port}]}


def test_a_deployment_is_admitted_with_defaults() -> None:
    md = base()
    del eng(md)["copies"]
    del mem(md)["role"]
    del mem(md)["nodeSelector"]["devices"][0]["count"]
    result = admission("modeldeployments").admit(md)
    assert [str(e) for e in result.errors] == []
    admitted = result.object["spec"]["template"]["spec"]["engines"][0]
    assert admitted["copies"] == 1
    assert admitted["members"][0]["role"] == "Standalone"
    assert admitted["members"][0]["nodeSelector"]["devices"][0]["count"] == 1


# (id, base, accept, reject, path, message): ``accept`` keeps the object valid near the rule's
# edge; ``reject`` breaks exactly that rule (other rules may also fire, as on the API server).
CASES: list[tuple[str, Any, Any, Any, str, str]] = [
    (
        "template labels: reserved prefix",
        base,
        lambda md: md["spec"]["template"]["metadata"]["labels"].update({"modelplane.io/x": "y"}),
        lambda md: md["spec"]["template"]["metadata"]["labels"].update({"modelplane.ai/x": "y"}),
        "spec.template.metadata",
        "template.metadata.labels keys must not use the reserved modelplane.ai/ prefix",
    ),
    (
        "template labels: keys",
        base,
        lambda md: md["spec"]["template"]["metadata"]["labels"].update({"example.com/tier": "a"}),
        lambda md: md["spec"]["template"]["metadata"]["labels"].update({"tier!": "a"}),
        "spec.template.metadata",
        "template.metadata.labels keys must be valid Kubernetes label keys",
    ),
    (
        "template labels: key prefix length",
        base,
        lambda md: md["spec"]["template"]["metadata"]["labels"].update({"a" * 253 + "/k": "v"}),
        lambda md: md["spec"]["template"]["metadata"]["labels"].update({"a" * 254 + "/k": "v"}),
        "spec.template.metadata",
        "template.metadata.labels key prefixes must be DNS subdomains of at most 253 characters",
    ),
    (
        "template labels: values",
        base,
        lambda md: md["spec"]["template"]["metadata"]["labels"].update(tier="gold_1.a"),
        lambda md: md["spec"]["template"]["metadata"]["labels"].update(tier="gold!"),
        "spec.template.metadata",
        "template.metadata.labels values must be valid Kubernetes label values",
    ),
    (
        "PrefillDecode has two engines",
        prefill_decode,
        lambda md: None,
        lambda md: tspec(md)["engines"].append(engine("extra")),
        TSPEC,
        "PrefillDecode serving requires exactly two engines (one Prefill, one Decode)",
    ),
    (
        "PrefillDecode has one Prefill engine",
        prefill_decode,
        lambda md: None,
        lambda md: eng(md, 1).update(phase="Prefill"),
        TSPEC,
        "PrefillDecode serving requires exactly one engine with phase Prefill",
    ),
    (
        "PrefillDecode has one Decode engine",
        prefill_decode,
        lambda md: None,
        lambda md: eng(md, 0).update(phase="Decode"),
        TSPEC,
        "PrefillDecode serving requires exactly one engine with phase Decode",
    ),
    (
        "phases only under PrefillDecode",
        base,
        lambda md: tspec(md).update(serving={"mode": "Unified"}),
        lambda md: eng(md).update(phase="Prefill"),
        TSPEC,
        "engine phase may only be set when serving.mode is PrefillDecode",
    ),
    (
        "one container declares the serving port",
        base,
        lambda md: containers(md).append(sidecar(9000)),
        lambda md: containers(md).append(sidecar(8000)),
        TSPEC,
        "at most one container in a serving pod may declare the serving port (serving.port, "
        "8000 by default)",
    ),
    (
        "a sidecar on the serving port moves the engine's http port",
        base,
        lambda md: (
            engine_container(md)["ports"][0].update(containerPort=8001),
            containers(md).append(sidecar(8000)),
        ),
        lambda md: (engine_container(md).pop("ports"), containers(md).append(sidecar(8000))),
        TSPEC,
        "when another container declares the serving port, the engine container must declare "
        "its 'http' port on a different port",
    ),
    (
        "an engine http port elsewhere needs a container on the serving port",
        base,
        lambda md: (
            tspec(md).update(serving={"mode": "Unified", "port": 9000})
            or engine_container(md)["ports"][0].update(containerPort=9000)
        ),
        lambda md: engine_container(md)["ports"][0].update(containerPort=9000),
        TSPEC,
        "when the engine container's 'http' port isn't the serving port, another container in "
        "its pod must declare the serving port",
    ),
    (
        "the engine names the serving port http",
        base,
        lambda md: None,
        lambda md: engine_container(md)["ports"][0].update(name="api"),
        TSPEC,
        "the engine container may name the serving port only 'http'",
    ),
    (
        "an engine is one Standalone or a Leader and a Worker",
        gang,
        lambda md: None,
        lambda md: (
            eng(md)["members"][1].update(role="Leader") or eng(md)["members"][1].pop("worker")
        ),
        ENGINE,
        "an engine must be either a single Standalone member or one Leader and one Worker member",
    ),
    (
        "an engine asks for devices",
        gang,
        lambda md: mem(md, 0).pop("nodeSelector"),
        lambda md: [m.pop("nodeSelector") for m in eng(md)["members"]],
        ENGINE,
        "at least one member of an engine must carry a nodeSelector asking for devices",
    ),
    (
        "worker sizing belongs to a Worker",
        base,
        lambda md: None,
        lambda md: mem(md).update(worker={"nodes": 2}),
        MEMBER,
        "worker may only be set on a Worker member",
    ),
    (
        "a Worker's probe names a port it declares",
        gang,
        lambda md: eng(md)["members"][1]["template"]["spec"]["containers"][0].update(
            readinessProbe={"httpGet": {"port": "http"}}
        ),
        lambda md: eng(md)["members"][1]["template"]["spec"]["containers"][0].update(
            readinessProbe={"httpGet": {"port": "health"}}
        ),
        f"{ENGINE}.members[1]",
        "a Worker's engine readinessProbe may name only a port its engine container declares; "
        "Modelplane gives a Worker no http port",
    ),
    (
        "member labels: reserved prefix",
        base,
        lambda md: meta(md)["labels"].update({"example.ai/x": "y"}),
        lambda md: meta(md)["labels"].update({"modelplane.ai/x": "y"}),
        f"{MEMBER}.template.metadata",
        "member template.metadata.labels keys must not use the reserved modelplane.ai/ prefix",
    ),
    (
        "member labels: keys",
        base,
        lambda md: None,
        lambda md: meta(md)["labels"].update({"-bad": "y"}),
        f"{MEMBER}.template.metadata",
        "member template.metadata.labels keys must be valid Kubernetes label keys",
    ),
    (
        "member labels: key prefix length",
        base,
        lambda md: meta(md)["labels"].update({"a" * 253 + "/k": "v"}),
        lambda md: meta(md)["labels"].update({"a" * 254 + "/k": "v"}),
        f"{MEMBER}.template.metadata",
        "member template.metadata.labels key prefixes must be DNS subdomains of at most 253 "
        "characters",
    ),
    (
        "member labels: values",
        base,
        lambda md: None,
        lambda md: meta(md)["labels"].update(team="ml team"),
        f"{MEMBER}.template.metadata",
        "member template.metadata.labels values must be valid Kubernetes label values",
    ),
    (
        "member annotations: keys",
        base,
        lambda md: meta(md).update(annotations={"example.com/note": "any text at all"}),
        lambda md: meta(md).update(annotations={"note!": "x"}),
        f"{MEMBER}.template.metadata",
        "member template.metadata.annotations keys must be valid Kubernetes annotation keys",
    ),
    (
        "member annotations: key prefix length",
        base,
        lambda md: meta(md).update(annotations={"a" * 253 + "/k": "v"}),
        lambda md: meta(md).update(annotations={"a" * 254 + "/k": "v"}),
        f"{MEMBER}.template.metadata",
        "member template.metadata.annotations key prefixes must be DNS subdomains of at most 253 "
        "characters",
    ),
    (
        "one container is the engine",
        base,
        lambda md: containers(md).append(sidecar(9000)),
        lambda md: engine_container(md).update(name="vllm"),
        CONTAINERS,
        "exactly one container must be named 'engine'",
    ),
    (
        "port names are unique in a container",
        base,
        lambda md: engine_container(md)["ports"].append({"name": "metrics", "containerPort": 9090}),
        lambda md: engine_container(md)["ports"].append({"name": "http", "containerPort": 9090}),
        f"{CONTAINERS}[0].ports",
        "port names must be unique within a container",
    ),
    (
        "resources are cpu, memory and ephemeral storage",
        base,
        lambda md: engine_container(md).update(
            resources={"requests": {"cpu": "8", "memory": "64Gi"}}
        ),
        lambda md: engine_container(md).update(resources={"limits": {"nvidia.com/gpu": 1}}),
        f"{CONTAINERS}[0].resources",
        "resources take only cpu, memory and ephemeral-storage; a member gets devices from its "
        "node pool's device requests",
    ),
    (
        "a probe has one handler",
        base,
        lambda md: engine_container(md).update(readinessProbe={"tcpSocket": {"port": 8000}}),
        lambda md: engine_container(md).update(
            readinessProbe={"tcpSocket": {"port": 8000}, "httpGet": {"port": 8000}}
        ),
        f"{CONTAINERS}[0].readinessProbe",
        "readinessProbe sets exactly one of httpGet, tcpSocket and grpc",
    ),
    (
        "an httpGet port is a name or a port number",
        base,
        lambda md: engine_container(md).update(readinessProbe={"httpGet": {"port": 65535}}),
        lambda md: engine_container(md).update(readinessProbe={"httpGet": {"port": 0}}),
        f"{CONTAINERS}[0].readinessProbe.httpGet",
        "httpGet.port must be a port name or a number from 1 to 65535",
    ),
    (
        "a tcpSocket port is a name or a port number",
        base,
        lambda md: engine_container(md).update(readinessProbe={"tcpSocket": {"port": "http"}}),
        lambda md: engine_container(md).update(readinessProbe={"tcpSocket": {"port": 70000}}),
        f"{CONTAINERS}[0].readinessProbe.tcpSocket",
        "tcpSocket.port must be a port name or a number from 1 to 65535",
    ),
    (
        "an endpoint picker template needs the EndpointPicker router",
        base,
        lambda md: tspec(md).update(serving={"router": "EndpointPicker", "endpointPicker": EPP}),
        lambda md: tspec(md).update(serving={"endpointPicker": EPP}),
        f"{TSPEC}.serving",
        "serving.endpointPicker may only be set when serving.router is EndpointPicker",
    ),
    (
        "the EndpointPicker router needs its template",
        base,
        lambda md: None,
        lambda md: tspec(md).update(serving={"router": "EndpointPicker"}),
        f"{TSPEC}.serving",
        "serving.router EndpointPicker requires serving.endpointPicker with its template",
    ),
    (
        "the endpoint picker container is epp",
        prefill_decode,
        lambda md: None,
        lambda md: tspec(md)["serving"]["endpointPicker"]["template"]["spec"]["containers"][
            0
        ].update(name="picker"),
        f"{TSPEC}.serving.endpointPicker.template.spec.containers",
        "the endpoint picker's container must be named 'epp'",
    ),
    (
        "endpoint picker resources are cpu, memory and ephemeral storage",
        prefill_decode,
        lambda md: tspec(md)["serving"]["endpointPicker"]["template"]["spec"]["containers"][
            0
        ].update(resources={"limits": {"memory": "1Gi"}}),
        lambda md: tspec(md)["serving"]["endpointPicker"]["template"]["spec"]["containers"][
            0
        ].update(resources={"limits": {"nvidia.com/gpu": 1}}),
        f"{TSPEC}.serving.endpointPicker.template.spec.containers[0].resources",
        "resources take only cpu, memory and ephemeral-storage; a member gets devices from its "
        "node pool's device requests",
    ),
    (
        "a device request name is a DNS label",
        base,
        lambda md: mem(md)["nodeSelector"]["devices"][0].update(name="gpu-0"),
        lambda md: mem(md)["nodeSelector"]["devices"][0].update(name="GPU_0"),
        f"{MEMBER}.nodeSelector.devices[0]",
        "a device request name must be a DNS label (it names the DRA DeviceRequest)",
    ),
    (
        "an Equal toleration has a key",
        base,
        lambda md: tspec(md).update(tolerations=[{"key": "drain", "value": "yes"}]),
        lambda md: tspec(md).update(tolerations=[{"operator": "Equal", "value": "yes"}]),
        f"{TSPEC}.tolerations[0]",
        "an Equal toleration needs a key",
    ),
    (
        "an Exists toleration has no value",
        base,
        lambda md: tspec(md).update(tolerations=[{"operator": "Exists"}]),
        lambda md: tspec(md).update(tolerations=[{"operator": "Exists", "key": "k", "value": "v"}]),
        f"{TSPEC}.tolerations[0]",
        "an Exists toleration may not set a value",
    ),
]


@pytest.mark.parametrize(
    ("make", "accept", "reject", "path", "message"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_rule(make: Any, accept: Any, reject: Any, path: str, message: str) -> None:
    value = "array" if path.endswith(("containers", "ports")) else "object"
    assert errors("modeldeployments", mutated(make(), accept)) == []
    assert rule_error(path, message, value) in errors("modeldeployments", mutated(make(), reject))


def _schema(plural: str) -> Obj:
    doc = yaml.safe_load((APIS / plural / "definition.yaml").read_text())
    return doc["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]


def _without_descriptions(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _without_descriptions(v) for k, v in node.items() if k != "description"}
    if isinstance(node, list):
        return [_without_descriptions(v) for v in node]
    return node


PD_NEEDS_A_PICKER = (
    "self.mode != 'PrefillDecode' || (has(self.router) && self.router == 'EndpointPicker')"
)


def test_template_spec_keeps_the_model_replica_spec_shape_and_rules() -> None:
    replica = _without_descriptions(_schema("modelreplicas"))
    template = _without_descriptions(_schema("modeldeployments")["properties"]["template"])
    tspec_schema = template["properties"]["spec"]
    assert tspec_schema["x-kubernetes-validations"] == replica["x-kubernetes-validations"]
    assert tspec_schema["properties"]["modelCacheRef"] == replica["properties"]["modelCacheRef"]
    # All but one rule: a deployment may leave PrefillDecode's picker to the default it stamps.
    replica_serving = copy.deepcopy(replica["properties"]["serving"])
    rules = replica_serving["x-kubernetes-validations"]
    rules[:] = [r for r in rules if r["rule"] != PD_NEEDS_A_PICKER]
    assert len(rules) == 2
    assert tspec_schema["properties"]["serving"] == replica_serving


def test_the_public_prefill_decode_shape_is_admitted_without_a_picker() -> None:
    md = prefill_decode()
    tspec(md)["serving"] = {"mode": "PrefillDecode"}
    assert errors("modeldeployments", md) == []


def test_template_members_are_replica_members_with_a_node_selector_for_the_placement() -> None:
    r_engine = copy.deepcopy(
        _without_descriptions(_schema("modelreplicas"))["properties"]["engines"]
    )
    d_engine = _without_descriptions(
        _schema("modeldeployments")["properties"]["template"]["properties"]["spec"]["properties"][
            "engines"
        ]
    )
    r_member = r_engine["items"]["properties"]["members"]["items"]
    d_member = d_engine["items"]["properties"]["members"]["items"]
    assert {k: v for k, v in d_member["properties"].items() if k != "nodeSelector"} == {
        k: v
        for k, v in r_member["properties"].items()
        if k not in ("nodePoolName", "deviceRequests")
    }
    assert d_member["x-kubernetes-validations"] == r_member["x-kubernetes-validations"]
    assert d_member["required"] == ["template"]
    r_item = {k: v for k, v in r_engine["items"].items() if k != "properties"}
    d_item = {k: v for k, v in d_engine["items"].items() if k != "properties"}
    assert d_item["x-kubernetes-validations"][0] == r_item["x-kubernetes-validations"][0]
    assert {k: v for k, v in d_engine["items"]["properties"].items() if k != "members"} == {
        k: v for k, v in r_engine["items"]["properties"].items() if k != "members"
    }


def test_schema_files_exist() -> None:
    assert Path(APIS / "modeldeployments" / "composition.yaml").exists()


def test_a_drain_whose_pre_stop_outlasts_its_grace_period_is_refused() -> None:
    md = deployment("qwen")
    md["spec"]["drain"] = {"terminationGracePeriodSeconds": 60, "preStopSeconds": 60}
    [error] = errors("modeldeployments", md)
    assert "drain.preStopSeconds must be less than drain.terminationGracePeriodSeconds" in error


def test_a_deployment_without_a_drain_is_admitted_with_its_defaults() -> None:
    admitted = admission("modeldeployments").admit(deployment("qwen")).object["spec"]
    assert admitted["drain"] == {"terminationGracePeriodSeconds": 600, "preStopSeconds": 30}


def test_a_rollout_that_could_update_nothing_is_refused() -> None:
    md = deployment("qwen")
    md["spec"]["rollout"] = {"maxUnavailable": 0}
    [error] = errors("modeldeployments", md)
    assert "rollout.maxUnavailable and rollout.maxSurge cannot both be 0" in error


def test_a_rollout_that_only_surges_is_admitted() -> None:
    md = deployment("qwen")
    md["spec"]["rollout"] = {"maxUnavailable": 0, "maxSurge": 1}
    assert errors("modeldeployments", md) == []
