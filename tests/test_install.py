"""One install story: what the Configuration depends on, what Crossplane installs, what is called.

Crossplane's rules are transcribed in tests/crossplane_packages.py, each with its source.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
import yaml

from modelplane.kube.admission import Admission, UnknownKindError
from tests.crossplane_packages import (
    crossplane_releases,
    dependency_name,
    is_constraint,
    to_dns_label,
)

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
CONFIGURATION = yaml.safe_load((ROOT / "package" / "configuration" / "crossplane.yaml").read_text())
DEPENDENCIES = CONFIGURATION["spec"]["dependsOn"]


def shipped(kind: str) -> list[dict]:
    return [
        doc
        for path in sorted((ROOT / "apis").glob("*/*.yaml"))
        for doc in yaml.safe_load_all(path.read_text())
        if doc and doc["kind"] == kind
    ]


def dependency(kind: str, repository_name: str) -> dict:
    [dep] = [
        d
        for d in DEPENDENCIES
        if d["kind"] == kind and d["package"].endswith(f"/{repository_name}")
    ]
    return dep


def readme_section(title: str) -> str:
    start = README.index(f"## {title}\n")
    end = README.find("\n## ", start + 1)
    return README[start : end if end >= 0 else None]


def readme_yaml(title: str) -> list[dict]:
    blocks = re.findall(r"```yaml\n(.*?)```", readme_section(title), re.S)
    return [yaml.safe_load(re.sub(r"(?m)^   ", "", block)) for block in blocks]


@pytest.mark.parametrize(
    ("text", "label"),
    [
        # crossplane-runtime pkg/xpkg/name_test.go, TestToDNSLabel.
        ("-hi/my.name/is-", "hi-my-name-is"),
        ("a" * 64, "a" * 63),
        ("a" * 60 + "----", "a" * 60),
    ],
)
def test_the_dns_label_rule_gives_crossplanes_own_answers(text, label):
    assert to_dns_label(text) == label


@pytest.mark.parametrize(
    ("package", "name"),
    [
        # The Function Crossplane users find installed for function-patch-and-transform.
        (
            "xpkg.crossplane.io/crossplane-contrib/function-patch-and-transform",
            "crossplane-contrib-function-patch-and-transform",
        ),
        (
            "xpkg.crossplane.io/crossplane-contrib/provider-helm:v1.4.0",
            "crossplane-contrib-provider-helm",
        ),
        ("registry.example.com:5000/team/fn@sha256:" + "0" * 64, "team-fn"),
        ("crossplane/provider-aws", "crossplane-provider-aws"),
        ("busybox", "library-busybox"),
    ],
)
def test_a_dependency_is_named_for_its_repository_path_alone(package, name):
    assert dependency_name(package) == name


@pytest.mark.parametrize(
    "text", [">=v2.3.0", "v1.2.1", ">=1.2, <2.0.0", "^v1.4.0", ">= v1.0.0 || ~2.1", "1.x"]
)
def test_semver_constraints_are_recognised(text):
    assert is_constraint(text)


@pytest.mark.parametrize("text", ["", "latest", ">=v2.3.0.1", "v1.2-", ">>1.0", "v2.3.0 ||"])
def test_other_text_is_not_a_semver_constraint(text):
    assert not is_constraint(text)


def test_the_function_dependency_installs_under_the_name_every_composition_calls():
    [function] = [d for d in DEPENDENCIES if d["kind"] == "Function"]
    called = {
        step["functionRef"]["name"]
        for composition in shipped("Composition")
        for step in composition["spec"]["pipeline"]
    }
    assert called == {dependency_name(function["package"])}


def accepts(crds: list[Path], objects: list[dict]) -> bool:
    admission = Admission.from_paths(crds)
    try:
        return all(not admission.admit(obj).errors for obj in objects)
    except UnknownKindError:
        return False


def oldest_accepting_release() -> str | None:
    """The oldest Crossplane release from which every release accepts every XRD and Composition."""
    objects = shipped("CompositeResourceDefinition") + shipped("Composition")
    oldest = None
    for release, crds in crossplane_releases():
        if not accepts(crds, objects):
            oldest = None
        elif oldest is None:
            oldest = release
    return oldest


def test_the_newest_known_crossplane_release_accepts_every_xrd_and_composition():
    # Failing here, a shipped XRD uses something no recorded release accepts: record the release
    # that brings it under tests/upstream/crossplane-releases (tests/upstream/README.md says how).
    assert oldest_accepting_release() is not None


def test_the_configuration_requires_exactly_the_oldest_crossplane_accepting_its_xrds():
    assert CONFIGURATION["spec"]["crossplane"]["version"] == f">={oldest_accepting_release()}"


def test_the_crossplane_releases_on_record_start_at_the_first_v2_release():
    # The derivation can only say "from the oldest release on record": that must be v2.0.0.
    [(oldest, _), *_] = crossplane_releases()
    assert oldest == "v2.0.0"


@pytest.mark.parametrize(
    ("repository_name", "floor"),
    [("provider-kubernetes", "v1.2.1"), ("provider-helm", "v1.4.0")],
)
def test_each_provider_is_pinned_to_a_real_release(repository_name, floor):
    # provider-helm v1.4.0 is the release tests/upstream/crds holds; provider-kubernetes v1.2.1 is
    # its newest release, a subset of the main-branch CRDs held there (docs/design/install.md).
    dep = dependency("Provider", repository_name)
    assert dep["package"] == f"xpkg.crossplane.io/crossplane-contrib/{repository_name}"
    assert dep["version"] == f">={floor}"


def test_the_readme_states_what_the_configuration_requires():
    section = " ".join(readme_section("Install into Crossplane").split())
    crossplane = CONFIGURATION["spec"]["crossplane"]["version"].removeprefix(">=")
    assert f"Crossplane {crossplane} or later" in section
    for dep in DEPENDENCIES:
        repository_name = dep["package"].rpartition("/")[2]
        if dep["kind"] == "Provider":
            assert f"{repository_name} ({dep['version'].removeprefix('>=')} or later)" in section
        else:
            assert f"`{dep['package']}`" in section
            assert f"`{dependency_name(dep['package'])}`" in section


def test_the_readme_installs_the_function_under_the_dependency_name():
    [function] = [d for d in DEPENDENCIES if d["kind"] == "Function"]
    [manual] = [o for o in readme_yaml("Install into Crossplane") if o["kind"] == "Function"]
    assert manual["apiVersion"] == function["apiVersion"]
    assert manual["metadata"]["name"] == dependency_name(function["package"])
    assert manual["spec"]["package"].rpartition(":")[0] == function["package"]


def test_the_readme_installs_every_package_at_pkg_crossplane_io_v1():
    packages = [
        o
        for o in readme_yaml("Install into Crossplane")
        if o["kind"] in {"Configuration", "Function"}
    ]
    assert {o["kind"] for o in packages} == {"Configuration", "Function"}
    assert {o["apiVersion"] for o in packages} == {"pkg.crossplane.io/v1"}


def test_the_readme_rewrites_the_registry_of_the_function_package_path():
    [config] = [o for o in readme_yaml("Install into Crossplane") if o["kind"] == "ImageConfig"]
    [function] = [d for d in DEPENDENCIES if d["kind"] == "Function"]
    [match] = config["spec"]["matchImages"]
    assert function["package"].startswith(match["prefix"] + "/")


def test_the_readme_states_the_python_range_as_pyproject_does():
    requires = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    low, high = re.fullmatch(r">=3\.(\d+),<3\.(\d+)", requires).groups()  # type: ignore[union-attr]
    versions = [f"3.{minor}" for minor in range(int(low), int(high))]
    stated = ", ".join(versions[:-1]) + f" or {versions[-1]}"
    claim = f'Python {stated} (pyproject: `requires-python = "{requires}"`)'
    assert claim in " ".join(README.split())
