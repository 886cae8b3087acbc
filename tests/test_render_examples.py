"""Every shipped example renders through the command line, as the README tells a newcomer."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from modelplane import cli

EXAMPLES = sorted(
    p for p in (Path(__file__).resolve().parents[1] / "examples").iterdir() if p.is_dir()
)


def render(*args: str, exit_code: int = 0) -> list[dict]:
    out = CliRunner().invoke(cli.main, ["render", *args])
    assert out.exit_code == exit_code, out.output
    return list(yaml.safe_load_all(out.stdout))


def conditions(doc: dict) -> dict[str, str]:
    return {c["type"]: c["status"] for c in doc["status"]["conditions"]}


def replicas(docs: list[dict]) -> list[dict]:
    return [d for d in docs if d["kind"] == "ModelReplica"]


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_each_example_renders_composites_then_their_composed_resources(example):
    docs = render(str(example))
    assert docs[0]["status"]["conditions"]
    composed = [
        d
        for d in docs
        if "crossplane.io/composition-resource-name" in d.get("metadata", {}).get("annotations", {})
    ]
    assert composed


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_each_example_serves_once_a_copy_of_every_engine_is_ready(example):
    before = replicas(render(str(example), "--simulate-ready-copies", "0"))
    after = replicas(render(str(example), "--simulate-ready-copies", "1"))
    assert before and after
    assert {conditions(r)["ModelServing"] for r in before} == {"False"}
    assert {conditions(r)["ModelServing"] for r in after} == {"True"}


def test_a_negative_simulated_copy_count_is_refused_naming_the_option():
    out = CliRunner().invoke(
        cli.main, ["render", str(EXAMPLES[0]), "--simulate-ready-copies", "-1"]
    )
    assert out.exit_code == 2
    assert "--simulate-ready-copies" in out.output


def test_rendering_is_byte_identical_across_runs():
    first = CliRunner().invoke(cli.main, ["render", *map(str, EXAMPLES)]).output
    second = CliRunner().invoke(cli.main, ["render", *map(str, EXAMPLES)]).output
    assert first == second


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_each_example_cluster_resolves_its_pools_and_publishes_a_gateway(example):
    docs = render(str(example), "--simulate-ready-copies", "1")
    clusters = [d for d in docs if d["kind"] == "InferenceCluster"]
    assert clusters
    for cluster in clusters:
        assert conditions(cluster)["PoolsResolved"] == "True"
        assert conditions(cluster)["GatewayReady"] == "True"
        assert cluster["status"]["gateway"]["address"]


def test_two_deployments_rendered_together_never_share_one_node(tmp_path):
    # Both deployments see the same free node in the first pass, as two concurrent reconciles
    # would; the later-created (here: later by namespace) replica must give way.
    fleet = Path(__file__).resolve().parents[1] / "examples" / "fleet-two-classes"
    md = yaml.safe_load_all((fleet / "deployments.yaml").read_text())
    llama = next(d for d in md if d["metadata"]["name"] == "llama-70b")
    engines = llama["spec"]["template"]["spec"]["engines"]
    engines[0]["members"][0]["nodeSelector"]["devices"][0]["count"] = 8
    twins = []
    for ns, replicas_ in (("team-a", 1), ("team-b", 2)):
        twin = {**llama, "metadata": {"name": "llm", "namespace": ns}}
        twins.append({**twin, "spec": {**llama["spec"], "replicas": replicas_}})
    (tmp_path / "md.yaml").write_text(yaml.safe_dump_all(twins))
    # Everything renders, but team-b's deployment is a replica short: exit 3.
    docs = render(
        str(fleet / "classes.yaml"), str(fleet / "clusters.yaml"), str(tmp_path), exit_code=3
    )
    # us-east has two 8-GPU H100 nodes: three 8-GPU replicas cannot all be there.
    on_us_east = [r for r in replicas(docs) if r["spec"]["clusterName"] == "us-east"]
    assert len(on_us_east) == 2
    team_b = next(
        d for d in docs if d["kind"] == "ModelDeployment" and d["metadata"]["namespace"] == "team-b"
    )
    assert conditions(team_b)["ReplicasScheduled"] == "False"
