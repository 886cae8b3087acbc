"""`modelplane render`: composition trees in process, with Crossplane's required-resources loop."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from modelplane import cli, render
from modelplane.render import RESOURCE_NAME, Renderer, RenderError, render_documents
from tests import standin

FLEET = [standin.cluster(), standin.inference_class()]


def test_requirements_are_answered_until_they_are_stable():
    renderer = Renderer(standin.registry(), [standin.replica(), *FLEET])
    [rendered] = renderer.render_all()
    # 1: asks for the cluster; 2: given it, asks for its class; 3: given both, composes.
    assert rendered.rounds == 3
    assert sorted(rendered.resources) == ["engine-e0"]


def test_a_requirement_nothing_answers_leaves_the_composite_waiting():
    [rendered] = Renderer(standin.registry(), [standin.replica(cluster="absent")]).render_all()
    assert rendered.resources == {}
    assert rendered.composite["status"]["conditions"][1]["reason"] == "WaitingForCluster"


def test_requirements_by_labels_and_namespace_match_only_what_they_select():
    from modelplane.composer import Requirement

    renderer = Renderer(standin.registry(), [])
    obj = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "a"}}
    obj["metadata"]["labels"] = {"team": "ml", "tier": "gpu"}
    assert render._matches(obj, Requirement("v1", "Secret", match_labels={"team": "ml"}))
    assert not render._matches(obj, Requirement("v1", "Secret", match_labels={"team": "web"}))
    assert not render._matches(obj, Requirement("v1", "Secret", namespace="b"))
    assert render._matches(obj, Requirement("v1", "Secret"))
    assert renderer._env.select(Requirement("v1", "Secret")) == []


def test_composed_resources_carry_their_composition_resource_name_and_owner():
    docs = render_documents(standin.registry(), [standin.replica(engines=2), *FLEET])
    composed = [d for d in docs if d["kind"] == "ConfigMap"]
    assert [d["metadata"]["annotations"][RESOURCE_NAME] for d in composed] == [
        "engine-e0",
        "engine-e1",
    ]
    assert {d["metadata"]["labels"]["crossplane.io/composite"] for d in composed} == {"r0"}
    assert {d["metadata"]["namespace"] for d in composed} == {"ml"}


def test_the_composite_shows_its_status_conditions_and_results_follow():
    docs = render_documents(standin.registry(), [standin.replica(), *FLEET])
    xr, configmap, result = docs
    assert xr["status"]["engines"] == 1
    assert xr["status"]["conditions"] == [
        {
            "type": "Ready",
            "status": "False",
            "reason": "Creating",
            "message": "Unready resources: engine-e0",
        },
        {"type": "Placed", "status": "True", "reason": "Placed", "message": "on c1"},
    ]
    assert configmap["kind"] == "ConfigMap"
    assert result == {
        "apiVersion": "render.crossplane.io/v1beta1",
        "kind": "Result",
        "step": "modelplane",
        "severity": "SEVERITY_NORMAL",
        "message": "composed 1 engines",
    }


def test_observed_resources_make_the_composite_ready():
    observed = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "e0", "annotations": {RESOURCE_NAME: "engine-e0"}},
        "status": {"ready": True},
    }
    docs = render_documents(standin.registry(), [standin.replica(), *FLEET], [observed])
    assert docs[0]["status"]["conditions"][0] == {
        "type": "Ready",
        "status": "True",
        "reason": "Available",
    }


def test_observed_resources_belong_to_the_composite_their_label_names():
    replicas = [standin.replica("r0"), standin.replica("r1")]
    observed = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": "e0",
            "annotations": {RESOURCE_NAME: "engine-e0"},
            "labels": {"crossplane.io/composite": "r1"},
        },
        "status": {"ready": True},
    }
    rendered = Renderer(standin.registry(), [*replicas, *FLEET], [observed]).render_all()
    assert [r.ready["engine-e0"] for r in rendered] == [False, True]


def test_a_composed_composite_is_rendered_in_turn():
    child_spec = {"clusterName": "c1", "engines": [{"name": "inner"}]}
    docs = render_documents(standin.registry(), [standin.replica(child=child_spec), *FLEET])
    kinds = [(d["kind"], d.get("metadata", {}).get("name")) for d in docs]
    assert kinds == [
        ("ModelReplica", "r0"),
        ("ConfigMap", "e0"),
        ("Result", None),
        ("ModelReplica", kinds[3][1]),
        ("ConfigMap", "inner"),
        ("Result", None),
    ]
    child = docs[3]
    assert child["metadata"]["annotations"][RESOURCE_NAME] == "child"
    assert child["status"]["engines"] == 1


def test_an_input_composite_owned_by_another_input_composite_is_not_rendered_twice():
    owned = standin.replica("r0-child")
    owned["metadata"]["labels"] = {"crossplane.io/composite": "r0"}
    renderer = Renderer(standin.registry(), [standin.replica("r0"), owned, *FLEET])
    assert [c["metadata"]["name"] for c in renderer.composites()] == ["r0"]


def test_a_composite_sees_the_status_another_composition_published():
    registry = standin.registry(with_cluster_composer=True)
    docs = render_documents(registry, [standin.replica(), *FLEET])
    [configmap] = [d for d in docs if d["kind"] == "ConfigMap"]
    assert configmap["data"]["gateway"] == "gw.c1"
    [cluster] = [d for d in docs if d["kind"] == "InferenceCluster"]
    assert cluster["status"]["gateway"] == "gw.c1"


def test_simulated_observed_state_reaches_the_next_pass():
    def all_ready(desired):
        return {k: {**r, "status": {"ready": True}} for k, r in desired.items()}

    docs = render_documents(standin.registry(), [standin.replica(), *FLEET], simulate=all_ready)
    assert docs[0]["status"]["conditions"][0]["status"] == "True"


def test_without_observed_state_composed_resources_exist_but_are_not_ready():
    docs = render_documents(standin.registry(), [standin.replica(), *FLEET])
    assert docs[0]["status"]["conditions"][0]["reason"] == "Creating"


def test_invalid_composites_are_refused_with_the_admission_errors():
    def admit(obj: dict) -> tuple[dict, list[str]]:
        return obj, ["spec.clusterName: Required value"]

    with pytest.raises(RenderError, match=r"ModelReplica/ml/r0 is invalid:\n  spec.clusterName"):
        render_documents(standin.registry(), [standin.replica()], admit=admit)


def test_a_fatal_result_fails_the_render_naming_the_composite():
    broken = standin.replica()
    del broken["spec"]["engines"]
    with pytest.raises(RenderError, match=r"ModelReplica/ml/r0: composing ModelReplica"):
        render_documents(standin.registry(), [broken, *FLEET])


def test_input_without_a_composite_is_an_error_that_says_what_is_composed():
    with pytest.raises(RenderError, match="no composite resource in the input"):
        render_documents(standin.registry(), FLEET)


# --- the command ----------------------------------------------------------------------------


@pytest.fixture
def registry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("modelplane.compose.registry.default_registry", standin.registry)


def write(tmp_path, name: str, *objs: dict) -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump_all(objs))
    return str(path)


def test_render_command_prints_a_yaml_stream(tmp_path, registry):
    d = tmp_path / "fleet"
    d.mkdir()
    write(d, "replica.yaml", standin.replica())
    write(d, "fleet.yaml", *FLEET)
    out = CliRunner().invoke(cli.main, ["render", str(d), "--include-function-results"])
    assert out.exit_code == 0, out.output
    docs = list(yaml.safe_load_all(out.output))
    assert [doc["kind"] for doc in docs] == ["ModelReplica", "ConfigMap", "Result"]


def test_render_command_prints_json_as_a_kubernetes_list(tmp_path, registry):
    path = write(tmp_path, "all.yaml", standin.replica(), *FLEET)
    out = CliRunner().invoke(cli.main, ["render", path, "-o", "json", "-r"])
    listed = json.loads(out.stdout)
    assert (listed["apiVersion"], listed["kind"]) == ("v1", "List")
    assert [doc["kind"] for doc in listed["items"]] == ["ModelReplica", "ConfigMap", "Result"]


def test_render_command_prints_names_as_kubectl_does(tmp_path, registry):
    path = write(tmp_path, "all.yaml", standin.replica(), *FLEET)
    out = CliRunner().invoke(cli.main, ["render", path, "-o", "name"])
    assert out.stdout.splitlines() == ["modelreplica.modelplane.ai/r0", "configmap/e0"]


def test_render_command_reads_observed_resources(tmp_path, registry):
    path = write(tmp_path, "all.yaml", standin.replica(), *FLEET)
    observed = write(
        tmp_path,
        "observed.yaml",
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"annotations": {RESOURCE_NAME: "engine-e0"}},
            "status": {"ready": True},
        },
    )
    out = CliRunner().invoke(cli.main, ["render", path, "--observed-resources", observed])
    xr = next(yaml.safe_load_all(out.output))
    assert xr["status"]["conditions"][0]["status"] == "True"


def test_render_command_refuses_an_invalid_composite_with_the_api_server_errors(tmp_path, registry):
    bad = standin.replica()
    bad["spec"]["engines"][0]["members"][0]["role"] = "Boss"
    path = write(tmp_path, "r.yaml", bad, *FLEET)
    out = CliRunner().invoke(cli.main, ["render", path])
    assert out.exit_code == 1
    # One line per error, at the line of the field at fault, as validate prints them.
    role = next(
        i for i, line in enumerate(Path(path).read_text().splitlines(), 1) if "role: Boss" in line
    )
    assert out.stderr.splitlines()[0] == (
        f"modelplane render: {path}:{role}: ModelReplica/ml/r0: "
        'spec.engines[0].members[0].role: Unsupported value: "Boss": '
        'supported values: "Standalone", "Leader", "Worker"'
    )


def test_render_command_reports_unreadable_yaml_naming_the_file(tmp_path, registry):
    path = tmp_path / "bad.yaml"
    path.write_text("kind: [unclosed\n")
    out = CliRunner().invoke(cli.main, ["render", str(path)])
    assert out.exit_code == 2
    assert out.stderr == (
        f"modelplane render: {path}:2: not valid YAML: did not find expected ',' or ']' "
        "(while parsing a flow sequence at line 1)\n"
    )


def test_render_command_refuses_an_object_without_a_kind_as_invalid(tmp_path, registry):
    path = write(tmp_path, "x.yaml", {"apiVersion": "v1", "metadata": {"name": "x"}})
    out = CliRunner().invoke(cli.main, ["render", path])
    assert out.exit_code == 1
    assert out.stderr == f"modelplane render: {path}:1: kind: Required value\n"


def test_render_command_reports_a_missing_path(tmp_path, registry):
    out = CliRunner().invoke(cli.main, ["render", str(tmp_path / "nope.yaml")])
    assert out.exit_code == 2
    assert "no such file or directory" in out.output


def test_shared_sub_objects_are_written_out_in_full_not_as_yaml_aliases():
    from modelplane import manifests

    shared = {"name": "A", "value": "1"}
    text = manifests.dump([{"kind": "X", "env": [shared], "more": [shared]}])
    assert "&" not in text and "*" not in text
    assert text.count("name: A") == 2


def test_a_render_leaves_the_cyclic_collector_as_it_found_it():
    import gc

    seen = []
    registry = standin.registry()
    compose = registry.lookup(standin.GROUP_VERSION, "ModelReplica")

    def spying(inputs):
        seen.append(gc.isenabled())
        return compose(inputs)

    registry.register(standin.GROUP_VERSION, "ModelReplica", spying)
    assert gc.isenabled()
    render_documents(registry, [standin.replica(), *FLEET])
    assert seen and not any(seen)  # off while rendering
    assert gc.isenabled()
    gc.disable()
    try:
        render_documents(registry, [standin.replica(), *FLEET])
        assert not gc.isenabled()  # a caller's choice stands
    finally:
        gc.enable()
