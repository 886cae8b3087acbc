"""The whole tree through `modelplane render`: gateways, services, deployments, their endpoints
and every route, from one directory; the public API's manifests unchanged; two teams' same-named
deployments never share a service's traffic."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml
from click.testing import CliRunner

from modelplane import cli
from modelplane.compose.shared.replicapool import replica_pool_name
from tests.compose.modelservice.kit import KUBERNETES, ROOT, upstream

Obj = dict[str, Any]
EXAMPLES = sorted(p for p in (ROOT / "examples").glob("service-*") if p.is_dir())
PUBLIC = Path(__file__).resolve().parents[1]
RESOURCE = "crossplane.io/composition-resource-name"
OWNER = "crossplane.io/composite"
OURS = ("InferenceGateway", "ModelService", "ModelEndpoint")


def render(*paths: str | Path, copies: int = 1, code: int = 0) -> list[Obj]:
    out = CliRunner().invoke(
        cli.main, ["render", *map(str, paths), "--simulate-ready-copies", str(copies)]
    )
    assert out.exit_code == code, out.output
    return [d for d in yaml.safe_load_all(out.stdout) if d]


def of(docs: list[Obj], kind: str) -> list[Obj]:
    return [d for d in docs if d["kind"] == kind]


def conditions(doc: Obj) -> dict[str, str]:
    return {c["type"]: c["status"] for c in doc["status"]["conditions"]}


def composed_by(docs: list[Obj], owners: set[str]) -> list[Obj]:
    return [
        d
        for d in docs
        if d["kind"] == "Object" and (d["metadata"].get("labels") or {}).get(OWNER) in owners
    ]


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_every_service_of_every_example_reports_an_address_once_a_copy_is_ready(
    example: Path,
) -> None:
    services = of(render(example), "ModelService")
    assert services
    for ms in services:
        assert ms["status"]["address"].startswith("https://"), ms["metadata"]["name"]
        assert conditions(ms) == {
            "Ready": "True",
            "EndpointsResolved": "True",
            "RoutingReady": "True",
        }


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_with_no_ready_copy_a_service_of_replicas_only_answers_503_and_is_not_ready(
    example: Path,
) -> None:
    for ms in of(render(example, copies=0), "ModelService"):
        externals = ms["status"]["endpoints"]["ready"]  # replicas have no endpoint yet
        assert conditions(ms)["Ready"] == ("True" if externals else "False")
        assert conditions(ms)["RoutingReady"] == ("True" if externals else "False")


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_every_object_the_front_door_composes_in_an_example_passes_its_schema(
    example: Path,
) -> None:
    docs = render(example)
    owners = {d["metadata"]["name"] for d in docs if d["kind"] in OURS}
    objects = composed_by(docs, owners)
    assert objects
    for obj in objects:
        bare = copy.deepcopy(obj)
        bare.pop("status", None)
        assert [str(e) for e in upstream().admit(bare).errors] == []
        manifest = obj["spec"]["forProvider"]["manifest"]
        if upstream().knows(manifest["apiVersion"], manifest["kind"]):
            assert [str(e) for e in upstream().admit(manifest).errors] == [], manifest["kind"]
        else:
            kubernetes_validate.validate(manifest, KUBERNETES, strict=True)


FLEET = """
apiVersion: modelplane.ai/v1alpha1
kind: InferenceClass
metadata: {name: h100}
spec:
  devices:
  - {name: gpu, driver: gpu.nvidia.com, deviceClassName: gpu.nvidia.com, count: 8}
---
apiVersion: modelplane.ai/v1alpha1
kind: InferenceCluster
metadata: {name: east}
spec:
  cluster: {source: Existing, existing: {secretRef: {name: east}}}
  nodePools: [{name: h100, className: h100, nodeCount: 4}]
status:
  providerConfigRef: {name: east}
  gateway: {name: inference-gateway, namespace: modelplane-system, address: 203.0.113.10,
            className: envoy, fleetHostname: east.fleet.modelplane.internal}
---
apiVersion: modelplane.ai/v1alpha1
kind: InferenceGateway
metadata: {name: main}
spec:
  clusterName: east
  hostname: inference.example.com
  tls: {issuerRef: {name: letsencrypt}}
"""


def deployment(name: str, namespace: str) -> str:
    return f"""
apiVersion: modelplane.ai/v1alpha1
kind: ModelDeployment
metadata: {{name: {name}, namespace: {namespace}}}
spec:
  replicas: 1
  template:
    spec:
      engines:
      - name: main
        members:
        - role: Standalone
          nodeSelector:
            devices:
            - name: gpu
              count: 1
              selectors: [{{cel: "true"}}]
          template:
            spec:
              containers: [{{name: engine, image: vllm/vllm-openai:v0.11.0}}]
"""


def write(tmp: Path, text: str, *files: Path) -> Path:
    (tmp / "fleet.yaml").write_text(text)
    for f in files:
        (tmp / f.name).write_text(f.read_text())
    return tmp


def test_two_teams_same_named_deployments_never_share_a_services_traffic(tmp_path: Path) -> None:
    service = """
apiVersion: modelplane.ai/v1alpha1
kind: ModelService
metadata: {{name: qwen, namespace: {ns}}}
spec:
  endpoints: [{{selector: {{matchLabels: {{modelplane.ai/deployment: qwen}}}}}}]
"""
    text = FLEET + "".join(
        "---" + deployment("qwen", ns) + "---" + service.format(ns=ns)
        for ns in ("team-a", "team-b")
    )
    docs = render(write(tmp_path, text))
    endpoints = {
        (e["metadata"]["namespace"], e["metadata"]["name"]) for e in of(docs, "ModelEndpoint")
    }
    assert {ns for ns, _ in endpoints} == {"team-a", "team-b"}
    for ms in of(docs, "ModelService"):
        ns = ms["metadata"]["namespace"]
        assert ms["status"]["endpoints"] == {"matched": 1, "ready": 1}
        [fleet] = [
            o
            for o in composed_by(docs, {"qwen"})
            if o["metadata"]["namespace"] == ns
            and o["metadata"]["annotations"][RESOURCE] == "fleet/east"
        ]
        pools = [
            b["name"]
            for b in fleet["spec"]["forProvider"]["manifest"]["spec"]["rules"][0]["backendRefs"]
        ]
        [mine] = [name for n, name in endpoints if n == ns]
        assert pools == [replica_pool_name(mine)]


def test_the_public_apis_service_and_external_endpoint_render_unchanged(tmp_path: Path) -> None:
    public = [
        PUBLIC / "modelservice" / "public" / "model-service-external.yaml",
        PUBLIC / "modelendpoint" / "public" / "model-endpoint-external.yaml",
    ]
    docs = render(write(tmp_path, FLEET + "---" + deployment("kimi-k2", "ml-team"), *public))
    for path in public:
        given = yaml.safe_load(path.read_text())
        [out] = [
            d for d in of(docs, given["kind"]) if d["metadata"]["name"] == given["metadata"]["name"]
        ]
        assert out["spec"] == (
            given["spec"]
            if given["kind"] == "ModelEndpoint"
            else {"endpoints": [{"weight": 1, **e} for e in given["spec"]["endpoints"]]}
        )
    [ms] = of(docs, "ModelService")
    assert ms["status"]["address"] == "https://inference.example.com/ml-team/kimi-k2"
    assert ms["status"]["endpoints"] == {"matched": 2, "ready": 2}
    [egress] = [
        o["spec"]["forProvider"]["manifest"]
        for o in composed_by(docs, {"kimi-k2"})
        if o["metadata"]["annotations"][RESOURCE].startswith("egress/")
    ]
    rewrite = egress["spec"]["rules"][0]["filters"][1]["urlRewrite"]
    assert rewrite == {
        "path": {"type": "ReplacePrefixMatch", "replacePrefixMatch": "/"},
        "hostname": "api.together.xyz",
    }


def test_every_public_service_manifest_renders(tmp_path: Path) -> None:
    for path in sorted((PUBLIC / "modelservice" / "public").glob("*.yaml")):
        # Nothing is deployed, so every entry selects nothing: named, and exit 1 (README).
        docs = render(write(tmp_path, FLEET, path), code=1)
        [ms] = of(docs, "ModelService")
        assert conditions(ms)["EndpointsResolved"] == "False", path.name
        assert ms["status"]["gateways"][0]["name"] == "main"
        (tmp_path / path.name).unlink()
