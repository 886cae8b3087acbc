"""The Crossplane packages: every file parses and is admitted by the upstream schemas it targets.

The Configuration package is package/configuration/crossplane.yaml plus every XRD and Composition
under apis/; the Function package is package/function/crossplane.yaml (plus its runtime image).
XRDs and Compositions are checked against Crossplane's own CRDs (tests/upstream/crds); the package
metadata files against the schema transcribed from Crossplane's meta types
(tests/upstream/package-meta); see tests/upstream/README.md for where each comes from.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from modelplane.kube.admission import Admission
from tests.crossplane_packages import is_constraint

ROOT = Path(__file__).resolve().parents[1]
UPSTREAM = ROOT / "tests" / "upstream"
CROSSPLANE_CRDS = [
    UPSTREAM / "crds" / "apiextensions.crossplane.io_compositeresourcedefinitions.yaml",
    UPSTREAM / "crds" / "apiextensions.crossplane.io_compositions.yaml",
]
PACKAGE_META = UPSTREAM / "package-meta"
# sha256 of the API reference's ModelReplica XRD (spec/modelreplicas.definition.yaml).
SPEC_XRD_SHA256 = "233284063b75c7a9129d5dec3f140ced693940fc6eb3ce1fd52ab50462e02b13"
APIS = ROOT / "apis"
PACKAGE = ROOT / "package"
# What Crossplane's package linters admit besides the one meta object (crossplane-runtime
# pkg/xpkg/lint.go: NewConfigurationLinter, NewFunctionLinter).
CONFIGURATION_KINDS = {
    "CompositeResourceDefinition",
    "Composition",
    "ManagedResourceActivationPolicy",
    "Operation",
    "CronOperation",
    "WatchOperation",
}
FUNCTION_KINDS = {"CustomResourceDefinition"}


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


def meta(package: str) -> dict:
    [doc] = [d for _, d in documents(f"package/{package}/*.yaml")]
    return doc


def xrd_types() -> set[tuple[str, str]]:
    return {
        (f"{d['spec']['group']}/{v['name']}", d["spec"]["names"]["kind"])
        for _, d in of_kind("CompositeResourceDefinition")
        for v in d["spec"]["versions"]
        if v.get("served")
    }


def by_folder(v: object) -> str:
    return v.parent.name if isinstance(v, Path) else ""


def test_every_package_file_parses_as_kubernetes_objects():
    docs = documents("apis/**/*.yaml", "package/**/*.yaml")
    assert docs
    for path, doc in docs:
        assert {"apiVersion", "kind", "metadata"} <= doc.keys(), path


@pytest.mark.parametrize("package", ["configuration", "function"])
def test_each_package_metadata_file_is_admitted_by_crossplanes_meta_schema(package):
    doc = meta(package)
    admission = Admission.from_paths([PACKAGE_META])
    assert admission.knows(doc["apiVersion"], doc["kind"]), "not meta.pkg.crossplane.io/v1"
    assert [str(e) for e in admission.admit(doc).errors] == []


def test_the_configuration_holds_only_what_crossplane_admits_in_one():
    assert meta("configuration")["kind"] == "Configuration"
    assert {d["kind"] for _, d in documents("apis/**/*.yaml")} <= CONFIGURATION_KINDS


def test_the_function_package_holds_only_its_metadata():
    assert meta("function")["kind"] == "Function"
    others = [d for _, d in documents("package/function/**/*.yaml")][1:]
    assert {d["kind"] for d in others} <= FUNCTION_KINDS


@pytest.mark.parametrize("package", ["configuration", "function"])
def test_each_crossplane_version_constraint_is_a_semver_constraint(package):
    assert is_constraint(meta(package)["spec"]["crossplane"]["version"])


def test_dependencies_use_the_current_form_with_semver_constraints():
    for dep in meta("configuration")["spec"]["dependsOn"]:
        assert set(dep) == {"apiVersion", "kind", "package", "version"}, dep
        assert dep["apiVersion"] == "pkg.crossplane.io/v1"
        assert dep["kind"] in {"Provider", "Function", "Configuration"}
        assert ":" not in dep["package"].rpartition("/")[2], "the version is in `version`"
        assert is_constraint(dep["version"]), dep


def test_modelplane_validate_admits_every_xrd_and_composition_against_crossplanes_crds():
    crds = [arg for crd in CROSSPLANE_CRDS for arg in ("--crd", str(crd))]
    done = subprocess.run(
        [sys.executable, "-m", "modelplane", "validate", *crds, str(APIS)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_xrd_and_composition_is_of_a_kind_crossplane_serves():
    admission = Admission.from_paths(CROSSPLANE_CRDS)
    for path, doc in documents("apis/**/*.yaml"):
        assert admission.knows(doc["apiVersion"], doc["kind"]), path


def test_the_modelreplica_xrd_is_the_spec_verbatim():
    shipped = (APIS / "modelreplicas" / "definition.yaml").read_bytes()
    assert hashlib.sha256(shipped).hexdigest() == SPEC_XRD_SHA256


def test_every_xrd_folder_is_named_for_its_plural():
    for path, xrd in of_kind("CompositeResourceDefinition"):
        assert path.parent.name == xrd["spec"]["names"]["plural"], path
        assert xrd["metadata"]["name"] == f"{xrd['spec']['names']['plural']}.{xrd['spec']['group']}"


@pytest.mark.parametrize(("path", "composition"), of_kind("Composition"), ids=by_folder)
def test_each_composition_names_an_xrd_that_exists(path, composition):
    ref = composition["spec"]["compositeTypeRef"]
    assert (ref["apiVersion"], ref["kind"]) in xrd_types()


@pytest.mark.parametrize(("path", "composition"), of_kind("Composition"), ids=by_folder)
def test_each_composition_is_one_pipeline_step_calling_a_function(path, composition):
    assert composition["spec"]["mode"] == "Pipeline"
    [step] = composition["spec"]["pipeline"]
    assert step["functionRef"]["name"]
