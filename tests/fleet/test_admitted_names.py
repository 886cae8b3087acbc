"""Every field that becomes a name, namespace, label, host, path or port is admitted only when it
is what the API server (or the upstream CRD) accepts for what it becomes, with a message naming
the field; and every list that drives requirements or composed objects is bounded."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from tests.compose.inferencecluster.test_xrd_inferencecluster import base as inference_cluster_base
from tests.compose.inferencegateway.test_xrd_inferencegateway import GATEWAY
from tests.compose.modelcache.test_modelcache import cache
from tests.compose.modelendpoint.test_xrd_modelendpoint import EXTERNAL
from tests.compose.modelservice.test_xrd_modelservice import SERVICE
from tests.fleet.builders import deployment
from tests.fleet.xrd import errors, mutated

Obj = dict[str, Any]


def cluster() -> Obj:
    return inference_cluster_base()


def copied(obj: Obj) -> Callable[[], Obj]:
    return lambda: copy.deepcopy(obj)


def model_deployment() -> Obj:
    return deployment("qwen")


def existing(ic: Obj) -> Obj:
    return ic["spec"]["cluster"]["existing"]["secretRef"]


KINDS: dict[str, tuple[str, Callable[[], Obj]]] = {
    "InferenceCluster": ("inferenceclusters", cluster),
    "InferenceGateway": ("inferencegateways", copied(GATEWAY)),
    "ModelService": ("modelservices", copied(SERVICE)),
    "ModelEndpoint": ("modelendpoints", copied(EXTERNAL)),
    "ModelDeployment": ("modeldeployments", model_deployment),
    "ModelCache": ("modelcaches", lambda: cache(auth={"name": "hf-token"})),
}

Mutation = Callable[[Obj], object]
REFUSED: list[tuple[str, str, Mutation, str]] = [
    (
        "ModelCache",
        "spec.huggingFace.authSecret.key",
        lambda o: o["spec"]["huggingFace"]["authSecret"].update(key="a]b[c"),
        "huggingFace.authSecret.key must be a Secret key",
    ),
    (
        "ModelCache",
        "spec.clusterSelector.matchLabels",
        lambda o: o["spec"].update(clusterSelector={"matchLabels": {"gpu": "h100 80g"}}),
        "clusterSelector.matchLabels values must be label values",
    ),
    (
        "InferenceCluster",
        "spec.gateway.namespace",
        lambda o: o["spec"].setdefault("gateway", {}).update(namespace="Bad_NS"),
        "gateway.namespace must be a lower-case DNS label",
    ),
    (
        "InferenceCluster",
        "spec.gateway.name",
        lambda o: o["spec"].setdefault("gateway", {}).update(name="Inference_Gateway!"),
        "gateway.name must be a lower-case DNS subdomain",
    ),
    (
        "InferenceCluster",
        "spec.gateway.fleetCASecretRef.namespace",
        lambda o: (
            o["spec"]
            .setdefault("gateway", {})
            .update(fleetCASecretRef={"name": "ca", "namespace": "Bad NS"})
        ),
        "gateway.fleetCASecretRef.namespace must be a lower-case DNS label",
    ),
    (
        "InferenceCluster",
        "spec.cluster.existing.secretRef.namespace",
        lambda o: existing(o).update(namespace="Bad NS"),
        "cluster.existing.secretRef.namespace must be a lower-case DNS label",
    ),
    (
        "InferenceCluster",
        "spec.cluster.existing.secretRef.name",
        lambda o: existing(o).update(name="KC!"),
        "cluster.existing.secretRef.name must be a lower-case DNS subdomain",
    ),
    (
        "InferenceCluster",
        "spec.cluster.existing.secretRef.key",
        lambda o: existing(o).update(key="a]b[c"),
        "cluster.existing.secretRef.key must be a Secret key",
    ),
    (
        "InferenceCluster",
        "spec.taints[0].key",
        lambda o: o["spec"].update(taints=[{"key": "bad key!", "effect": "NoSchedule"}]),
        "taints[].key must be a label key",
    ),
    (
        "InferenceCluster",
        "spec.nodePools[0].className",
        lambda o: o["spec"]["nodePools"][0].update(className="H100_80G"),
        "nodePools[].className must be an InferenceClass's name",
    ),
    (
        "InferenceGateway",
        "spec.hostname",
        lambda o: o["spec"].update(hostname="a" * 64 + ".example.com"),
        "hostname has a label longer than 63 characters",
    ),
    (
        "InferenceGateway",
        "spec.hostname",
        lambda o: o["spec"].update(hostname="203.0.113.7"),
        "hostname must be a DNS name, not an IP address",
    ),
    (
        "InferenceGateway",
        "metadata.name",
        lambda o: o["metadata"].update(name="g" * 64),
        "Too long: may not be more than 63 bytes",
    ),
    (
        "InferenceGateway",
        "spec.serviceSelector.matchLabels",
        lambda o: o["spec"]["serviceSelector"].update(matchLabels={"bad key!": "eu"}),
        "serviceSelector.matchLabels keys must be label keys",
    ),
    (
        "InferenceGateway",
        "spec.serviceSelector.matchLabels",
        lambda o: o["spec"]["serviceSelector"].update(matchLabels={"region": "eu west"}),
        "serviceSelector.matchLabels values must be label values",
    ),
    (
        "InferenceGateway",
        "spec.tls.secretRef.name",
        lambda o: o["spec"].update(tls={"secretRef": {"name": "EU_TLS"}}),
        "tls.secretRef.name must be a lower-case DNS subdomain",
    ),
    (
        "ModelService",
        "metadata.name",
        lambda o: o["metadata"].update(name="s" * 64),
        "Too long: may not be more than 63 bytes",
    ),
    (
        "ModelService",
        "spec.endpoints[0].selector.matchLabels",
        lambda o: o["spec"]["endpoints"][0]["selector"].update(matchLabels={"-app": "qwen"}),
        "endpoints[].selector.matchLabels keys must be label keys",
    ),
    (
        "ModelService",
        "spec.endpoints[0].selector.matchLabels",
        lambda o: o["spec"]["endpoints"][0]["selector"].update(matchLabels={"app": "qwen?"}),
        "endpoints[].selector.matchLabels values must be label values",
    ),
    (
        "ModelEndpoint",
        "spec.url",
        lambda o: o["spec"].update(url="https://" + "a" * 60 + ".example.com" * 20 + "/v1"),
        "url's host is longer than 253 characters",
    ),
    (
        "ModelEndpoint",
        "spec.url",
        lambda o: o["spec"].update(url="https://" + "a" * 64 + ".example.com/v1"),
        "url's host has a label longer than 63 characters",
    ),
    (
        "ModelEndpoint",
        "spec.url",
        lambda o: o["spec"].update(url="https://api.together.xyz:0/v1"),
        "url's port must be 1 to 65535",
    ),
    (
        "ModelEndpoint",
        "spec.url",
        lambda o: o["spec"].update(url="https://api.together.xyz:99999/v1"),
        "url's port must be 1 to 65535",
    ),
    (
        "ModelEndpoint",
        "spec.auth.secretRef.key",
        lambda o: o["spec"]["auth"]["secretRef"].update(key="a]b[c"),
        "auth.secretRef.key must be a Secret key",
    ),
    (
        "ModelEndpoint",
        "spec.auth.secretRef.name",
        lambda o: o["spec"]["auth"]["secretRef"].update(name="Key!"),
        "auth.secretRef.name must be a lower-case DNS subdomain",
    ),
    (
        "ModelEndpoint",
        "spec.rewritePath",
        lambda o: o["spec"].update(rewritePath="/v1 beta/"),
        "rewritePath must be an HTTP path",
    ),
    (
        "ModelDeployment",
        "spec.template.spec.clusterSelector.matchLabels",
        lambda o: o["spec"]["template"]["spec"].update(
            clusterSelector={"matchLabels": {"region": "eu/west"}}
        ),
        "clusterSelector.matchLabels values must be label values",
    ),
]


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_the_base_objects_are_admitted(kind: str) -> None:
    plural, build = KINDS[kind]
    assert errors(plural, build()) == []


@pytest.mark.parametrize(
    ("kind", "path", "mutate", "message"),
    REFUSED,
    ids=[f"{k}-{p}-{m.split(' must')[0].split(' has')[0]}" for k, p, _, m in REFUSED],
)
def test_a_field_that_becomes_a_name_is_refused_naming_the_field(
    kind: str, path: str, mutate: Mutation, message: str
) -> None:
    plural, build = KINDS[kind]
    found = errors(plural, mutated(build(), mutate))
    assert any(e.startswith(f"{path}: ") and message in e for e in found), found


def test_the_largest_valid_names_are_admitted() -> None:
    ic = mutated(
        cluster(),
        lambda o: o["spec"].update(
            gateway={"namespace": "n" * 63, "name": "g" * 63 + "." + "w" * 63},
            taints=[{"key": "example.com/" + "k" * 63, "value": "v" * 63, "effect": "NoSchedule"}],
        ),
    )
    assert errors("inferenceclusters", ic) == []
    assert (
        errors("modelservices", mutated(SERVICE, lambda o: o["metadata"].update(name="s" * 63)))
        == []
    )
    port = mutated(EXTERNAL, lambda o: o["spec"].update(url="https://api.together.xyz:65535/v1"))
    assert errors("modelendpoints", port) == []


# --- list bounds ---------------------------------------------------------------------------------


def schema_errors(plural: str, obj: Obj) -> list[str]:
    """The structural schema's errors (the API server then skips the rules, and says so)."""
    return [e for e in errors(plural, obj) if not e.startswith("<nil>: ")]


def test_a_service_holds_at_most_16_entries() -> None:
    entry = {"weight": 1, "selector": {"matchLabels": {"app": "qwen"}}}
    sixteen = mutated(SERVICE, lambda o: o["spec"].update(endpoints=[entry] * 16))
    seventeen = mutated(SERVICE, lambda o: o["spec"].update(endpoints=[entry] * 17))
    assert errors("modelservices", sixteen) == []
    assert schema_errors("modelservices", seventeen) == [
        "spec.endpoints: Too many: 17: must have at most 16 items"
    ]


def test_a_cluster_holds_at_most_32_taints() -> None:
    taints = [{"key": f"t{i}", "effect": "NoSchedule"} for i in range(33)]
    found = schema_errors(
        "inferenceclusters", mutated(cluster(), lambda o: o["spec"].update(taints=taints))
    )
    assert found == ["spec.taints: Too many: 33: must have at most 32 items"]


def test_a_gateways_allow_lists_hold_at_most_32_entries() -> None:
    hosts = [f"h{i}.example.com" for i in range(33)]
    gw = mutated(GATEWAY, lambda o: o["spec"].update(egress={"allowedHosts": hosts}))
    assert schema_errors("inferencegateways", gw) == [
        "spec.egress.allowedHosts: Too many: 33: must have at most 32 items"
    ]
