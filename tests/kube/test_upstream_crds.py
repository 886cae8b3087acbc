"""Every upstream CRD loads, every rule compiles, and composed-style objects are admitted."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from modelplane.kube.admission import Admission
from modelplane.kube.crd import load_definitions

CRDS = Path(__file__).resolve().parents[1] / "upstream" / "crds"
FILES = sorted(CRDS.glob("*.yaml"))


@pytest.fixture(scope="module")
def upstream() -> Admission:
    return Admission.from_paths([CRDS])


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_loads_and_compiles_every_rule(path: Path) -> None:
    definitions = load_definitions([path])
    assert definitions
    for definition in definitions:
        definition.compile()


def _meta(name: str) -> dict[str, Any]:
    return {"name": name, "namespace": "ml-team"}


HTTPROUTE: dict[str, Any] = {
    "apiVersion": "gateway.networking.k8s.io/v1",
    "kind": "HTTPRoute",
    "metadata": _meta("route"),
    "spec": {
        "parentRefs": [{"name": "gw", "namespace": "infra"}],
        "rules": [
            {
                "matches": [{"path": {"type": "PathPrefix", "value": "/ml-team/qwen/"}}],
                "filters": [
                    {
                        "type": "URLRewrite",
                        "urlRewrite": {
                            "path": {"type": "ReplacePrefixMatch", "replacePrefixMatch": "/"}
                        },
                    }
                ],
                "backendRefs": [
                    {"group": "inference.networking.k8s.io", "kind": "InferencePool", "name": "p"}
                ],
                "timeouts": {"request": "0s"},
            }
        ],
    },
}


def test_a_composed_httproute_is_admitted_with_its_defaults(upstream: Admission) -> None:
    admitted = upstream.admit(HTTPROUTE)
    assert admitted.errors == []
    assert admitted.object["spec"]["parentRefs"][0]["kind"] == "Gateway"


def test_rules_reach_properties_named_after_cel_keywords(upstream: Admission) -> None:
    # The HTTPRoute rule compares p1.__namespace__: property names that are CEL keywords are
    # escaped, as the API server does. (The message is the experimental channel's, the bundle
    # the pinned Envoy Gateway installs.)
    route = {**HTTPROUTE, "spec": {**HTTPROUTE["spec"]}}
    route["spec"]["parentRefs"] = [{"name": "gw", "namespace": "infra"}] * 2
    assert [str(e) for e in upstream.admit(route).errors] == [
        'spec.parentRefs: Invalid value: "array": sectionName or port must be unique when '
        "parentRefs includes 2 or more references to the same parent"
    ]


def test_a_runtime_error_in_a_rule_is_reported_like_the_api_server(upstream: Admission) -> None:
    obj = {
        "apiVersion": "kubernetes.m.crossplane.io/v1alpha1",
        "kind": "Object",
        "metadata": _meta("o"),
        "spec": {
            "forProvider": {"manifest": {"apiVersion": "v1", "kind": "Namespace"}},
            "providerConfigRef": {"kind": "ClusterProviderConfig", "name": "c"},
            "readiness": {"policy": "DeriveFromCelQuery"},
        },
    }
    assert [str(e) for e in upstream.admit(obj).errors] == [
        'spec.readiness: Invalid value: "object": no such key: celQuery evaluating rule: '
        "celQuery must be set if policy is DeriveFromCelQuery"
    ]


def test_an_embedded_manifest_keeps_its_fields(upstream: Admission) -> None:
    manifest = {"apiVersion": "v1", "kind": "ConfigMap", "data": {"a": "b"}}
    obj = {
        "apiVersion": "kubernetes.m.crossplane.io/v1alpha1",
        "kind": "Object",
        "metadata": _meta("o"),
        "spec": {"forProvider": {"manifest": manifest}},
    }
    admitted = upstream.admit(obj)
    assert admitted.errors == []
    assert admitted.object["spec"]["forProvider"]["manifest"] == manifest


def test_a_leaderworkerset_is_admitted_and_pruned(upstream: Admission) -> None:
    lws = {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": _meta("lws"),
        "spec": {
            "replicas": 2,
            "leaderWorkerTemplate": {
                "size": 2,
                "workerTemplate": {
                    "spec": {"containers": [{"name": "engine", "image": "x", "bogus": 1}]}
                },
            },
        },
    }
    admitted = upstream.admit(lws)
    assert [str(e) for e in admitted.errors] == [
        'unknown field "spec.leaderWorkerTemplate.workerTemplate.spec.containers[0].bogus"'
    ]


def _podcliqueset(**template: Any) -> dict[str, Any]:
    """A one-clique PodCliqueSet; ``template`` adds fields beside the cliques."""
    leader = {
        "name": "leader",
        "spec": {
            "roleName": "leader",
            "replicas": 1,
            "podSpec": {"containers": [{"name": "engine", "image": "x"}]},
        },
    }
    return {
        "apiVersion": "grove.io/v1alpha1",
        "kind": "PodCliqueSet",
        "metadata": _meta("pcs"),
        "spec": {"replicas": 1, "template": {**template, "cliques": [leader]}},
    }


def test_a_podcliqueset_runs_its_optional_old_self_rules(upstream: Admission) -> None:
    assert upstream.admit(_podcliqueset()).errors == []


def test_knows_only_served_versions(upstream: Admission) -> None:
    assert upstream.knows("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet")
    assert not upstream.knows("leaderworkerset.x-k8s.io/v2", "LeaderWorkerSet")
    assert not upstream.knows("apps/v1", "Deployment")


def test_a_rule_reason_and_field_path_shape_the_error(upstream: Admission) -> None:
    pcs = _podcliqueset(topologyConstraint={"packDomain": "rack"})
    assert [str(e) for e in upstream.admit(pcs).errors] == [
        "spec.template.topologyConstraint.packDomain: Forbidden: packDomain is deprecated and "
        "cannot be used on new workloads; use pack.required"
    ]
