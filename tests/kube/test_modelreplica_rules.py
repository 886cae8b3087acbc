"""Every x-kubernetes-validations rule of the ModelReplica XRD: accepted and rejected shapes.

Each rejection asserts the exact line the API server would print: field path, error kind and
the rule's message.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.kube.modelreplicas import (
    container,
    engine,
    epp,
    errors_of,
    gang,
    member,
    prefill_decode,
    prefill_decode_serving,
    replica,
)

C0 = "spec.engines[0].members[0].template.spec.containers[0]"
M0 = "spec.engines[0].members[0]"
META = f"{M0}.template.metadata"


def with_ports(*ports: dict[str, Any], name: str = "engine", **extra: Any) -> dict[str, Any]:
    return container(name, ports=list(ports), **extra)


def pod(*containers: dict[str, Any], role: str = "Standalone") -> dict[str, Any]:
    return replica([engine(members=[member(role, list(containers))])])


def worker_pod(*containers: dict[str, Any], nodes: int = 1) -> dict[str, Any]:
    """A Leader and Worker gang whose Worker runs ``containers`` on ``nodes`` nodes."""
    worker = member("Worker", list(containers), worker={"nodes": nodes})
    return replica([engine(members=[member("Leader"), worker])])


def labelled(labels: dict[str, str] | None = None, annotations: dict[str, str] | None = None):
    meta: dict[str, Any] = {}
    if labels is not None:
        meta["labels"] = labels
    if annotations is not None:
        meta["annotations"] = annotations
    m = member()
    m["template"]["metadata"] = meta
    return replica([engine(members=[m])])


def probe(kind: str, port: int | str, **extra: Any) -> dict[str, Any]:
    return {kind: {"port": port, **extra}}


ACCEPTED: dict[str, dict[str, Any]] = {
    "a single Standalone engine": replica(),
    "a Leader and Worker gang": replica([gang()]),
    "PrefillDecode with one Prefill and one Decode engine": prefill_decode(),
    "Unified with a router and endpoint picker": replica(
        serving={"router": "EndpointPicker", "endpointPicker": epp()}
    ),
    "the engine serving on 8000": pod(with_ports({"containerPort": 8000, "name": "http"})),
    "the engine serving on serving.port": replica(
        [engine(members=[member(containers=[with_ports({"containerPort": 9000})])])],
        {"port": 9000},
    ),
    "a sidecar on the serving port, engine http elsewhere": pod(
        with_ports({"containerPort": 8001, "name": "http"}),
        with_ports({"containerPort": 8000}, name="proxy"),
    ),
    "a Worker declaring the serving port twice (workers do not serve)": worker_pod(
        with_ports({"containerPort": 8000}),
        with_ports({"containerPort": 8000}, name="side"),
        nodes=2,
    ),
    "a member without devices beside one with them": replica(
        [engine(members=[member("Leader", devices=False), member("Worker", worker={"nodes": 1})])]
    ),
    "a Worker probe naming a declared port": worker_pod(
        with_ports(
            {"containerPort": 9000, "name": "metrics"},
            readinessProbe=probe("httpGet", "metrics"),
        )
    ),
    "a Worker probe on a port number": worker_pod(
        container(readinessProbe=probe("tcpSocket", 9000))
    ),
    "valid labels and annotations": labelled(
        {"app.kubernetes.io/name": "qwen", "tier": "gpu", "empty": ""},
        {"example.com/note": "anything at all", "x": "y"},
    ),
    "cpu, memory and ephemeral-storage resources": pod(
        container(
            resources={
                "requests": {"cpu": "4", "memory": "16Gi"},
                "limits": {"ephemeral-storage": 1000000000},
            }
        )
    ),
    "an httpGet probe with a named port": pod(
        with_ports({"containerPort": 8000, "name": "http"}, readinessProbe=probe("httpGet", "http"))
    ),
    "a grpc probe": pod(container(readinessProbe=probe("grpc", 9090))),
    "distinct port names": pod(
        with_ports({"containerPort": 8000, "name": "http"}, {"containerPort": 9090, "name": "m"})
    ),
    "an epp with cpu and memory": replica(
        serving={
            "router": "EndpointPicker",
            "endpointPicker": epp(resources={"limits": {"cpu": "1", "memory": "1Gi"}}),
        }
    ),
}


@pytest.mark.parametrize("obj", ACCEPTED.values(), ids=ACCEPTED.keys())
def test_accepted(obj: dict[str, Any]) -> None:
    assert errors_of(obj) == []


def _spec(message: str) -> str:
    return f'spec: Invalid value: "object": {message}'


REJECTED: dict[str, tuple[dict[str, Any], str]] = {
    # --- spec ---------------------------------------------------------------------------
    "PrefillDecode with one engine": (
        replica([engine("prefill", phase="Prefill")], prefill_decode_serving()),
        "\n".join(
            [
                _spec(
                    "PrefillDecode serving requires exactly two engines (one Prefill, one Decode)"
                ),
                _spec("PrefillDecode serving requires exactly one engine with phase Decode"),
            ]
        ),
    ),
    "PrefillDecode with two Prefill engines": (
        replica(
            [engine("a", phase="Prefill"), engine("b", phase="Prefill")], prefill_decode_serving()
        ),
        "\n".join(
            [
                _spec("PrefillDecode serving requires exactly one engine with phase Prefill"),
                _spec("PrefillDecode serving requires exactly one engine with phase Decode"),
            ]
        ),
    ),
    "PrefillDecode with two Decode engines": (
        replica(
            [engine("a", phase="Decode"), engine("b", phase="Decode")], prefill_decode_serving()
        ),
        "\n".join(
            [
                _spec("PrefillDecode serving requires exactly one engine with phase Prefill"),
                _spec("PrefillDecode serving requires exactly one engine with phase Decode"),
            ]
        ),
    ),
    "PrefillDecode with no Decode engine": (
        replica([engine("a", phase="Prefill"), engine("b")], prefill_decode_serving()),
        _spec("PrefillDecode serving requires exactly one engine with phase Decode"),
    ),
    "a phase under Unified serving": (
        replica([engine(phase="Prefill")]),
        _spec("engine phase may only be set when serving.mode is PrefillDecode"),
    ),
    "a phase with no serving (defaults do not create serving)": (
        replica([engine(phase="Decode")], {"mode": "Unified"}),
        _spec("engine phase may only be set when serving.mode is PrefillDecode"),
    ),
    "two containers on the serving port": (
        pod(
            with_ports({"containerPort": 8001, "name": "http"}),
            with_ports({"containerPort": 8000}, name="a"),
            with_ports({"containerPort": 8000}, name="b"),
        ),
        _spec(
            "at most one container in a serving pod may declare the serving port "
            "(serving.port, 8000 by default)"
        ),
    ),
    "a sidecar on the serving port without an engine http port": (
        pod(container(), with_ports({"containerPort": 8000}, name="proxy")),
        _spec(
            "when another container declares the serving port, the engine container must "
            "declare its 'http' port on a different port"
        ),
    ),
    "a sidecar on serving.port while the engine's http is that port": (
        replica(
            [
                engine(
                    members=[
                        member(
                            containers=[
                                with_ports({"containerPort": 9000, "name": "http"}),
                                with_ports({"containerPort": 9000}, name="proxy"),
                            ]
                        )
                    ]
                )
            ],
            {"port": 9000},
        ),
        "\n".join(
            [
                _spec(
                    "at most one container in a serving pod may declare the serving port "
                    "(serving.port, 8000 by default)"
                ),
                _spec(
                    "when another container declares the serving port, the engine container "
                    "must declare its 'http' port on a different port"
                ),
            ]
        ),
    ),
    "the engine's http port elsewhere and nobody on the serving port": (
        pod(with_ports({"containerPort": 8001, "name": "http"})),
        _spec(
            "when the engine container's 'http' port isn't the serving port, another container "
            "in its pod must declare the serving port"
        ),
    ),
    "the engine naming the serving port other than http": (
        pod(with_ports({"containerPort": 8000, "name": "api"})),
        _spec("the engine container may name the serving port only 'http'"),
    ),
    # --- serving ------------------------------------------------------------------------
    "an endpointPicker without a router": (
        replica(serving={"endpointPicker": epp()}),
        'spec.serving: Invalid value: "object": serving.endpointPicker may only be set when '
        "serving.router is EndpointPicker",
    ),
    "a router without an endpointPicker": (
        replica(serving={"router": "EndpointPicker"}),
        'spec.serving: Invalid value: "object": serving.router EndpointPicker requires '
        "serving.endpointPicker with its template",
    ),
    "PrefillDecode without a router": (
        replica(
            [engine("prefill", phase="Prefill"), engine("decode", phase="Decode")],
            {"mode": "PrefillDecode"},
        ),
        'spec.serving: Invalid value: "object": PrefillDecode serving requires serving.router '
        "EndpointPicker and serving.endpointPicker",
    ),
    "an endpoint picker container not named epp": (
        replica(
            serving={
                "router": "EndpointPicker",
                "endpointPicker": {
                    "template": {"spec": {"containers": [{"name": "picker", "image": "x"}]}}
                },
            }
        ),
        'spec.serving.endpointPicker.template.spec.containers: Invalid value: "array": '
        "the endpoint picker's container must be named 'epp'",
    ),
    "an endpoint picker asking for a GPU": (
        replica(
            serving={
                "router": "EndpointPicker",
                "endpointPicker": epp(resources={"limits": {"nvidia.com/gpu": 1}}),
            }
        ),
        "spec.serving.endpointPicker.template.spec.containers[0].resources: Invalid value: "
        '"object": resources take only cpu, memory and ephemeral-storage; a member gets devices '
        "from its node pool's device requests",
    ),
    # --- engine -------------------------------------------------------------------------
    "two Standalone members": (
        replica([engine(members=[member(), member()])]),
        'spec.engines[0]: Invalid value: "object": an engine must be either a single Standalone '
        "member or one Leader and one Worker member",
    ),
    "a Leader without a Worker": (
        replica([engine(members=[member("Leader")])]),
        'spec.engines[0]: Invalid value: "object": an engine must be either a single Standalone '
        "member or one Leader and one Worker member",
    ),
    "two Leaders": (
        replica([engine(members=[member("Leader"), member("Leader")])]),
        'spec.engines[0]: Invalid value: "object": an engine must be either a single Standalone '
        "member or one Leader and one Worker member",
    ),
    "an engine without devices": (
        replica([engine(members=[member(devices=False)])]),
        'spec.engines[0]: Invalid value: "object": at least one member of an engine must carry '
        "deviceRequests",
    ),
    # --- member -------------------------------------------------------------------------
    "worker on a Leader": (
        replica([engine(members=[member("Leader", worker={"nodes": 1}), member("Worker")])]),
        f'{M0}: Invalid value: "object": worker may only be set on a Worker member',
    ),
    "worker on a defaulted Standalone": (
        replica([engine(members=[member(None, worker={"nodes": 1})])]),
        f'{M0}: Invalid value: "object": worker may only be set on a Worker member',
    ),
    "a Worker probe naming an undeclared port": (
        worker_pod(container(readinessProbe=probe("httpGet", "http"))),
        'spec.engines[0].members[1]: Invalid value: "object": a Worker\'s engine readinessProbe '
        "may name only a port its engine container declares; Modelplane gives a Worker no http "
        "port",
    ),
    "a Worker tcpSocket probe naming an undeclared port": (
        worker_pod(
            with_ports(
                {"containerPort": 9000, "name": "metrics"},
                readinessProbe=probe("tcpSocket", "other"),
            )
        ),
        'spec.engines[0].members[1]: Invalid value: "object": a Worker\'s engine readinessProbe '
        "may name only a port its engine container declares; Modelplane gives a Worker no http "
        "port",
    ),
    # --- metadata -----------------------------------------------------------------------
    "a reserved modelplane.ai/ label": (
        labelled({"modelplane.ai/pool": "x"}),
        f'{META}: Invalid value: "object": member template.metadata.labels keys must not use the '
        "reserved modelplane.ai/ prefix",
    ),
    "a label key of 64 characters": (
        labelled({"k" * 64: "v"}),
        f'{META}: Invalid value: "object": member template.metadata.labels keys must be valid '
        "Kubernetes label keys",
    ),
    "a label key with a space": (
        labelled({"bad key": "v"}),
        f'{META}: Invalid value: "object": member template.metadata.labels keys must be valid '
        "Kubernetes label keys",
    ),
    "a label prefix over 253 characters": (
        labelled({("a" * 60 + ".") * 4 + "abcdefghij/k": "v"}),
        f'{META}: Invalid value: "object": member template.metadata.labels key prefixes must be '
        "DNS subdomains of at most 253 characters",
    ),
    "a label value with a space": (
        labelled({"tier": "not valid"}),
        f'{META}: Invalid value: "object": member template.metadata.labels values must be valid '
        "Kubernetes label values",
    ),
    "a label value ending in a dash": (
        labelled({"tier": "gpu-"}),
        f'{META}: Invalid value: "object": member template.metadata.labels values must be valid '
        "Kubernetes label values",
    ),
    "an annotation key with an invalid prefix": (
        labelled(annotations={"Example.com/x": "v"}),
        f'{META}: Invalid value: "object": member template.metadata.annotations keys must be '
        "valid Kubernetes annotation keys",
    ),
    "an annotation prefix over 253 characters": (
        labelled(annotations={("a" * 60 + ".") * 4 + "abcdefghij/k": "v"}),
        f'{META}: Invalid value: "object": member template.metadata.annotations key prefixes '
        "must be DNS subdomains of at most 253 characters",
    ),
    # --- containers, resources, probes, ports ---------------------------------------------
    "no container named engine": (
        pod(container("main")),
        f'{M0}.template.spec.containers: Invalid value: "array": exactly one container must be '
        "named 'engine'",
    ),
    "a GPU in container resources": (
        pod(container(resources={"limits": {"nvidia.com/gpu": 1}})),
        f'{C0}.resources: Invalid value: "object": resources take only cpu, memory and '
        "ephemeral-storage; a member gets devices from its node pool's device requests",
    ),
    "a GPU in container requests": (
        pod(container(resources={"requests": {"cpu": "1", "example.com/fpga": "1"}})),
        f'{C0}.resources: Invalid value: "object": resources take only cpu, memory and '
        "ephemeral-storage; a member gets devices from its node pool's device requests",
    ),
    "a probe with two handlers": (
        pod(container(readinessProbe={"httpGet": {"port": 8000}, "tcpSocket": {"port": 8000}})),
        f'{C0}.readinessProbe: Invalid value: "object": readinessProbe sets exactly one of '
        "httpGet, tcpSocket and grpc",
    ),
    "a probe with no handler": (
        pod(container(readinessProbe={"periodSeconds": 5})),
        f'{C0}.readinessProbe: Invalid value: "object": readinessProbe sets exactly one of '
        "httpGet, tcpSocket and grpc",
    ),
    "an httpGet port of 0": (
        pod(container(readinessProbe=probe("httpGet", 0))),
        f'{C0}.readinessProbe.httpGet: Invalid value: "object": httpGet.port must be a port '
        "name or a number from 1 to 65535",
    ),
    "a tcpSocket port of 70000": (
        pod(container(readinessProbe=probe("tcpSocket", 70000))),
        f'{C0}.readinessProbe.tcpSocket: Invalid value: "object": tcpSocket.port must be a port '
        "name or a number from 1 to 65535",
    ),
    "two ports with one name": (
        pod(
            with_ports(
                {"containerPort": 8000, "name": "http"},
                {"containerPort": 9000, "name": "m"},
                {"containerPort": 9001, "name": "m"},
            )
        ),
        f'{C0}.ports: Invalid value: "array": port names must be unique within a container',
    ),
}


@pytest.mark.parametrize(("obj", "expected"), REJECTED.values(), ids=REJECTED.keys())
def test_rejected(obj: dict[str, Any], expected: str) -> None:
    assert errors_of(obj) == expected.split("\n")


def _rule_messages() -> list[str]:
    import yaml

    from modelplane.apis import apis_dir

    found: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for rule in node.get("x-kubernetes-validations", []):
                found.append(rule["message"].strip())
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(yaml.safe_load((apis_dir() / "modelreplicas" / "definition.yaml").read_text()))
    return found


def test_every_rule_site_is_covered_by_a_rejection() -> None:
    messages = _rule_messages()
    assert len(messages) == 29
    expected = "\n".join(e for _, e in REJECTED.values())
    assert [m for m in messages if m not in expected] == []
