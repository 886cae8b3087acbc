"""The Crossplane packages: every file parses, every Composition is wired to what exists."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
# sha256 of the API reference's ModelReplica XRD (spec/modelreplicas.definition.yaml).
SPEC_XRD_SHA256 = "233284063b75c7a9129d5dec3f140ced693940fc6eb3ce1fd52ab50462e02b13"
APIS = ROOT / "apis"


def documents(*globs: str) -> list[tuple[Path, dict]]:
    return [
        (path, doc)
        for pattern in globs
        for path in sorted(ROOT.glob(pattern))
        for doc in yaml.safe_load_all(path.read_text())
        if doc
    ]


def of_kind(kind: str) -> list[tuple[Path, dict]]:
    return [
        (p, d) for p, d in documents("apis/**/*.yaml", "package/**/*.yaml") if d["kind"] == kind
    ]


def xrd_types() -> set[tuple[str, str]]:
    return {
        (f"{d['spec']['group']}/{v['name']}", d["spec"]["names"]["kind"])
        for _, d in of_kind("CompositeResourceDefinition")
        for v in d["spec"]["versions"]
        if v.get("served")
    }


def test_every_package_file_parses_as_kubernetes_objects():
    docs = documents("apis/**/*.yaml", "package/**/*.yaml")
    assert docs
    for path, doc in docs:
        assert {"apiVersion", "kind", "metadata"} <= doc.keys(), path


def test_the_modelreplica_xrd_is_the_spec_verbatim():
    shipped = (APIS / "modelreplicas" / "definition.yaml").read_bytes()
    assert hashlib.sha256(shipped).hexdigest() == SPEC_XRD_SHA256


def test_every_xrd_folder_is_named_for_its_plural():
    for path, xrd in of_kind("CompositeResourceDefinition"):
        assert path.parent.name == xrd["spec"]["names"]["plural"], path
        assert xrd["metadata"]["name"] == f"{xrd['spec']['names']['plural']}.{xrd['spec']['group']}"


@pytest.mark.parametrize(
    ("path", "composition"),
    of_kind("Composition"),
    ids=lambda v: v.parent.name if isinstance(v, Path) else "",
)
def test_each_composition_names_an_xrd_that_exists(path, composition):
    ref = composition["spec"]["compositeTypeRef"]
    assert (ref["apiVersion"], ref["kind"]) in xrd_types()


@pytest.mark.parametrize(
    ("path", "composition"),
    of_kind("Composition"),
    ids=lambda v: v.parent.name if isinstance(v, Path) else "",
)
def test_each_composition_calls_the_function_this_project_ships(path, composition):
    [(_, function)] = of_kind("Function")
    assert composition["spec"]["mode"] == "Pipeline"
    steps = composition["spec"]["pipeline"]
    assert [s["functionRef"]["name"] for s in steps] == [function["metadata"]["name"]]


def test_the_configuration_depends_on_crossplane_v2_provider_kubernetes_and_the_function():
    [(_, config)] = of_kind("Configuration")
    assert config["spec"]["crossplane"]["version"].startswith(">=v2")
    deps = config["spec"]["dependsOn"]
    assert any(d.get("provider", "").endswith("/provider-kubernetes") for d in deps)
    assert any(d.get("function", "").endswith("/function-modelplane") for d in deps)


def test_the_function_image_is_glibc_non_root_and_serves():
    dockerfile = (ROOT / "package" / "function" / "Dockerfile").read_text()
    bases = [line.split()[1] for line in dockerfile.splitlines() if line.startswith("FROM ")]
    assert bases and not any("alpine" in b for b in bases)
    user = [line.split()[1] for line in dockerfile.splitlines() if line.startswith("USER ")]
    assert user and not user[-1].startswith(("0", "root"))
    assert 'ENTRYPOINT ["modelplane", "serve"]' in dockerfile
