"""`modelplane explain`: every cluster and pool considered for each deployment, and why."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result

from modelplane.cli import main
from modelplane.explain import explain, load_manifests, natural
from tests.fleet import builders

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
TWO_CLASSES = EXAMPLES / "fleet-two-classes"
SELECTOR_79GI = 'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("79Gi")) >= 0'
L40S_MEMORY = "the devices' memory is 46068Mi (44.9Gi)"
"""Far below what the selector asks: its value is quoted, and no nearer value suggested."""


def run(*paths: str | Path) -> str:
    return explain(load_manifests(str(p) for p in paths))


def invoke(*args: str | Path, stdin: str | bytes | None = None) -> Result:
    return CliRunner().invoke(main, ["explain", *map(str, args)], input=stdin)


def cluster(name: str, pool: str, nodes: int, tier: str = "production") -> dict[str, Any]:
    return {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "InferenceCluster",
        "metadata": {"name": name, "labels": {"tier": tier}},
        "spec": {
            "cluster": {"source": "Existing", "existing": {"secretRef": {"name": f"{name}-kc"}}},
            "nodePools": [{"name": pool, "className": pool, "nodeCount": nodes}],
        },
    }


def llama(replicas: int) -> dict[str, Any]:
    """The 70B deployment of fleet-two-classes: 4 GPUs of at least 79Gi, so only H100s."""
    md = next(
        d
        for d in yaml.safe_load_all((TWO_CLASSES / "deployments.yaml").read_text())
        if d["metadata"]["name"] == "llama-70b"
    )
    md["spec"]["replicas"] = replicas
    md["spec"]["template"]["spec"]["clusterSelector"] = {"matchLabels": {"tier": "production"}}
    return md


def big_fleet(tmp_path: Path, replicas: int = 8) -> Path:
    """48 L40S clusters no replica fits, 4 staging clusters the selector excludes, and 3 H100
    clusters of one node each (two replicas per node): 6 of ``replicas`` can be placed."""
    clusters = [cluster(f"eu-west-{i}", "l40s", 4) for i in range(48)]
    clusters += [cluster(f"staging-{i}", "h100", 1, tier="staging") for i in range(4)]
    clusters += [cluster(f"us-east-{i}", "h100", 1) for i in range(3)]
    (tmp_path / "fleet.yaml").write_text(yaml.safe_dump_all([*clusters, llama(replicas)]))
    (tmp_path / "classes.yaml").write_text((TWO_CLASSES / "classes.yaml").read_text())
    return tmp_path


# --- the text -------------------------------------------------------------------------------


def test_each_deployment_opens_with_how_many_replicas_were_placed_of_those_asked() -> None:
    headlines = [line for line in run(TWO_CLASSES).splitlines() if not line.startswith(" ")]
    assert headlines == [
        "ModelDeployment/ml-team/llama-70b: 1 of 1 replicas placed",
        "ModelDeployment/ml-team/qwen3-8b: 2 of 2 replicas placed",
    ]


def test_a_taken_cluster_says_in_plain_words_which_replica_went_to_which_pool() -> None:
    out = run(EXAMPLES / "fleet-gang").splitlines()
    assert out == [
        "ModelDeployment/ml-team/deepseek-r1: 1 of 1 replicas placed",
        "  train-east: replica 0 placed on pool h100-big",
        "    pool h100-small: has 2 nodes, engine main needs 4",
    ]
    assert "taken (replicas" not in run(TWO_CLASSES)


def test_engines_on_different_pools_are_each_named() -> None:
    assert (
        "  serve-west: replica 0 placed (engine prefill on pool l40s, engine decode on pool h200)"
        in run(EXAMPLES / "fleet-prefill-decode").splitlines()
    )


def test_a_drained_cluster_is_not_eligible_and_its_replica_moves() -> None:
    out = run(EXAMPLES / "fleet-drained").splitlines()
    assert out[1:3] == [
        "  east: not eligible: NoExecute taint modelplane.ai/maintenance not tolerated",
        "  west: replica 0 placed on pool h100",
    ]
    assert out[3].startswith("  removing replica 0 (qwen3-8b-ml-team-east-0-1bb9da39) from east: ")


def test_a_request_no_device_matches_quotes_the_selector_at_fault() -> None:
    assert (
        "  eu-west: rejected: pool l40s: engine main member 0: no device of class l40s matches "
        f"request gpu (selector `{SELECTOR_79GI}`: {L40S_MEMORY})"
    ) in run(TWO_CLASSES).splitlines()


def test_a_near_miss_quotes_the_devices_value_and_the_nearest_that_matches() -> None:
    # An H100 as DRA declares it, 81559Mi, is 79.6Gi: a selector asking for 80Gi misses it.
    h100 = builders.gpu_class("h100", memory="81559Mi")
    selector = builders.memory_at_least("80Gi")
    md = builders.llm_deployment(engines=[builders.standalone(selectors=[selector])])
    out = explain([h100, builders.declared_cluster("a", [("h100", "h100", 1)]), md])
    assert (
        f"  a: rejected: pool h100: engine main member 0: no device of class h100 matches request "
        f"gpu (selector `{selector}`: the devices' memory is 81559Mi (79.6Gi); "
        'quantity("79Gi") would match)'
    ) in out.splitlines()


def test_a_selector_matching_no_cluster_names_the_clusters_and_what_they_carry() -> None:
    clusters = [
        cluster("c1", "h100", 1) | {"metadata": {"name": "c1", "labels": {"region": "us-west"}}},
        cluster("c2", "h100", 1) | {"metadata": {"name": "c2", "labels": {"region": "us-west"}}},
        cluster("c3", "h100", 1) | {"metadata": {"name": "c3", "labels": {}}},
    ]
    md = builders.llm_deployment(selector={"region": "us-wset"})
    out = explain([builders.gpu_class("h100"), *clusters, md]).splitlines()
    assert (
        "  no InferenceCluster matches clusterSelector region=us-wset; "
        "c1, c2: region=us-west; c3: no region label"
    ) in out


def test_a_cluster_reason_is_said_once_not_again_on_its_pool_line() -> None:
    out = run(TWO_CLASSES)
    assert out.count("no device of class l40s matches request gpu") == 1


def test_deployments_are_explained_in_order_each_charged_for_the_ones_before() -> None:
    out = run(TWO_CLASSES)
    first, second = (line for line in out.splitlines() if line.startswith("ModelDeployment"))
    assert first.startswith("ModelDeployment/ml-team/llama-70b")
    assert second.startswith("ModelDeployment/ml-team/qwen3-8b")


def test_clusters_come_in_natural_order() -> None:
    names = ["eu-west-10", "eu-west-2", "eu-west-1", "us-east-0", "eu-west-0"]
    assert sorted(names, key=natural) == [
        "eu-west-0",
        "eu-west-1",
        "eu-west-2",
        "eu-west-10",
        "us-east-0",
    ]


def test_clusters_sharing_a_rejection_are_counted_once_not_listed_one_by_one(
    tmp_path: Path,
) -> None:
    out = run(big_fleet(tmp_path)).splitlines()
    assert out == [
        "ModelDeployment/ml-team/llama-70b: 6 of 8 replicas placed, 2 short",
        "  48 clusters: rejected: pool l40s: engine main member 0: no device of class l40s "
        f"matches request gpu (selector `{SELECTOR_79GI}`: {L40S_MEMORY})",
        "    eu-west-0, eu-west-1, eu-west-2, eu-west-3, eu-west-4 and 43 more",
        "  4 clusters: not eligible: labels do not match clusterSelector tier=production "
        "(it carries tier=staging)",
        "    staging-0, staging-1, staging-2, staging-3",
        "  us-east-0: replicas 0, 3 placed on pool h100; no room for another: pool h100 has 0 "
        "free nodes, engine main needs 1",
        "    replica 0 won: as cheap as us-east-1 and as loaded, first by name",
        "    replica 3 won: as cheap as us-east-1 and as loaded, first by name",
        "  us-east-1: replicas 1, 4 placed on pool h100; no room for another: pool h100 has 0 "
        "free nodes, engine main needs 1",
        "    replica 1 won: as cheap as us-east-2 and as loaded, first by name",
        "    replica 4 won: as cheap as us-east-2 and as loaded, first by name",
        "  us-east-2: replicas 2, 5 placed on pool h100; no room for another: pool h100 has 0 "
        "free nodes, engine main needs 1",
        "    replica 2 won: as cheap as us-east-0, with fewer replicas of this deployment (0)",
    ]


def test_a_cluster_with_room_that_was_not_needed_says_so(tmp_path: Path) -> None:
    # One replica, two clusters that fit it: the second is simply not needed.
    clusters = (TWO_CLASSES / "clusters.yaml").read_text()
    (tmp_path / "fleet.yaml").write_text(
        clusters.replace("name: eu-west", "name: us-west").replace(
            "className: l40s", "className: h100"
        )
    )
    md = (TWO_CLASSES / "deployments.yaml").read_text().split("\n---\n")[1]
    (tmp_path / "md.yaml").write_text(md)
    out = run(TWO_CLASSES / "classes.yaml", tmp_path)
    assert "  us-west: has room, not needed" in out.splitlines()
    assert "rejected" not in out


# --- -o json ----------------------------------------------------------------------------------


def test_json_carries_the_same_facts_structured_for_a_fleet_with_a_shortfall(
    tmp_path: Path,
) -> None:
    result = invoke("-o", "json", big_fleet(tmp_path))
    assert result.exit_code == 3
    [md] = json.loads(result.stdout)["deployments"]
    assert (md["deployment"], md["asked"], md["placed"], md["short"]) == (
        "ml-team/llama-70b",
        8,
        6,
        2,
    )
    rows = md["decisions"]
    assert {tuple(sorted(r)) for r in rows} == {
        (
            "cluster",
            "deployment",
            "engine",
            "hint",
            "member",
            "pool",
            "reason",
            "replicas",
            "request",
            "scores",
            "selector",
            "verdict",
        )
    }
    eu_west_10 = [r for r in rows if r["cluster"] == "eu-west-10" and r["pool"] == "l40s"]
    assert eu_west_10 == [
        {
            "deployment": "ml-team/llama-70b",
            "cluster": "eu-west-10",
            "pool": "l40s",
            "engine": "main",
            "member": 0,
            "request": "gpu",
            "verdict": "rejected",
            "reason": "engine main member 0: no device of class l40s matches request gpu",
            "selector": SELECTOR_79GI,
            "hint": L40S_MEMORY,
            "replicas": [],
            "scores": [],
        }
    ]
    verdicts = {r["cluster"]: r["verdict"] for r in rows if r["pool"] is None}
    assert verdicts["staging-3"] == "ineligible"
    assert verdicts["us-east-1"] == "taken"
    taken = [r for r in rows if r["cluster"] == "us-east-1" and r["pool"] == "h100"]
    assert [(r["verdict"], r["engine"], r["replicas"]) for r in taken] == [
        ("taken", "main", [1, 4])
    ]
    assert [p["cluster"] for p in md["placements"]] == ["us-east-0", "us-east-1", "us-east-2"] * 2
    # Every cluster is a row, in natural order.
    clusters = [r["cluster"] for r in rows if r["pool"] is None]
    assert clusters == sorted(clusters, key=natural) and len(clusters) == 55


# --- the command ------------------------------------------------------------------------------


def test_the_command_exits_zero_when_every_replica_is_placed() -> None:
    result = invoke(EXAMPLES / "fleet-gang")
    assert result.exit_code == 0
    assert result.stdout.startswith("ModelDeployment/ml-team/deepseek-r1: 1 of 1 replicas placed")


def test_the_command_exits_three_when_a_deployment_is_short(tmp_path: Path) -> None:
    result = invoke(big_fleet(tmp_path))
    assert result.exit_code == 3
    assert result.stderr == ""


def test_the_command_exits_one_when_a_device_selector_is_invalid(tmp_path: Path) -> None:
    md = llama(1)
    devices = md["spec"]["template"]["spec"]["engines"][0]["members"][0]["nodeSelector"]
    devices["devices"][0]["selectors"] = [{"cel": "device.capacity["}]
    (tmp_path / "md.yaml").write_text(yaml.safe_dump(md))
    result = invoke(TWO_CLASSES / "classes.yaml", TWO_CLASSES / "clusters.yaml", tmp_path)
    assert result.exit_code == 1
    assert "its device selectors are invalid" in result.stdout.splitlines()[0]
    assert "  invalid selector: spec.template.spec.engines[0]" in result.stdout


def test_the_command_exits_one_when_the_input_holds_no_deployment() -> None:
    result = invoke(EXAMPLES / "fleet-gang" / "fleet.yaml")
    assert result.exit_code == 1
    assert result.stderr == "modelplane explain: no ModelDeployment in the input\n"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "{path}: no such file or directory"),
        ("kind: [unclosed\n", "{path}:2: not valid YAML: did not find expected ',' or ']'"),
        ("- a\n- b\n", "{path}:1: document 1 is not a Kubernetes object (it is a list)"),
    ],
)
def test_the_command_exits_two_on_unreadable_input(
    tmp_path: Path, content: str | None, message: str
) -> None:
    path = tmp_path / "in.yaml"
    if content is not None:
        path.write_text(content)
    result = invoke(path)
    assert result.exit_code == 2
    assert result.stderr.startswith("modelplane explain: " + message.format(path=path))
    assert len(result.stderr.splitlines()) == 1


def test_deployment_focuses_on_one_of_several() -> None:
    result = invoke("--deployment", "ml-team/qwen3-8b", TWO_CLASSES)
    assert result.exit_code == 0
    assert [line for line in result.stdout.splitlines() if not line.startswith(" ")] == [
        "ModelDeployment/ml-team/qwen3-8b: 2 of 2 replicas placed"
    ]


def test_deployment_by_name_alone_matches_any_namespace() -> None:
    result = invoke("--deployment", "llama-70b", "-o", "json", TWO_CLASSES)
    assert [d["deployment"] for d in json.loads(result.stdout)["deployments"]] == [
        "ml-team/llama-70b"
    ]


def test_a_deployment_not_in_the_input_exits_one_naming_it() -> None:
    result = invoke("--deployment", "ml-team/nope", TWO_CLASSES)
    assert result.exit_code == 1
    assert result.stderr == "modelplane explain: no ModelDeployment/ml-team/nope in the input\n"


def test_the_exit_code_follows_the_focused_deployment_only(tmp_path: Path) -> None:
    fleet = big_fleet(tmp_path)
    fits = llama(1)
    fits["metadata"]["name"] = "a-small-one"
    (fleet / "small.yaml").write_text(yaml.safe_dump(fits))
    # a-small-one is explained first (name order) and fits; llama-70b then is short.
    assert invoke(fleet).exit_code == 3
    assert invoke("--deployment", "ml-team/a-small-one", fleet).exit_code == 0


def test_manifests_can_come_on_standard_input() -> None:
    text = "\n---\n".join(p.read_text() for p in sorted((EXAMPLES / "fleet-gang").glob("*.yaml")))
    result = invoke("-", stdin=text)
    assert result.exit_code == 0
    assert result.stdout.startswith("ModelDeployment/ml-team/deepseek-r1: 1 of 1 replicas placed")


def cached_llama_fleet(with_cache: bool) -> list[dict[str, Any]]:
    """Two one-node H100 clusters; the deployment mounts a ModelCache staged on ``a`` only."""
    md = llama(2)
    md["spec"]["template"]["spec"]["modelCacheRef"] = {"name": "llama"}
    staged, other = cluster("a", "h100", 1), cluster("b", "h100", 1)
    staged["metadata"]["labels"]["cache"] = "yes"
    for c in (staged, other):  # both can stage a cache: they name a ReadWriteMany class
        c["spec"]["cluster"]["existing"]["cache"] = {"storageClassName": "rwx"}
    docs = [*yaml.safe_load_all((TWO_CLASSES / "classes.yaml").read_text())]
    docs += [staged, other, md]
    if with_cache:
        spec = {
            "source": "HuggingFace",
            "huggingFace": {"repo": "meta-llama/Llama-3.1-70B", "sizeGiB": 150},
            "clusterSelector": {"matchLabels": {"cache": "yes"}},
        }
        meta = {"name": "llama", "namespace": md["metadata"]["namespace"]}
        docs.append({**CACHE_HEAD, "metadata": meta, "spec": spec})
    return docs


CACHE_HEAD = {"apiVersion": "modelplane.ai/v1alpha1", "kind": "ModelCache"}


def test_a_cluster_the_deployments_model_cache_does_not_stage_on_is_not_eligible() -> None:
    assert explain(cached_llama_fleet(with_cache=True)).splitlines() == [
        "ModelDeployment/ml-team/llama-70b: 2 of 2 replicas placed",
        "  a: replicas 0, 1 placed on pool h100",
        "  b: not eligible: ModelCache llama does not stage on it (clusterSelector cache=yes)",
    ]


def test_a_model_cache_missing_from_the_input_holds_every_placement() -> None:
    out = explain(cached_llama_fleet(with_cache=False)).splitlines()
    assert out[0] == "ModelDeployment/ml-team/llama-70b: 0 of 2 replicas placed, 2 short"
    held = "new replicas are held: ModelCache llama not found in namespace ml-team"
    assert out[1] == f"  a: not eligible: {held}"


def test_a_model_cache_of_another_name_is_not_the_deployments() -> None:
    docs = cached_llama_fleet(with_cache=True)
    docs[-1]["metadata"]["name"] = "other"
    out = explain(docs).splitlines()
    held = "new replicas are held: ModelCache llama not found in namespace ml-team"
    assert out[1] == f"  a: not eligible: {held}"


def test_a_placement_that_grows_a_pool_says_from_how_many_nodes_to_how_many() -> None:
    grows = builders.declared_cluster("a", [("h100", "h100", 0)])
    grows["spec"]["nodePools"][0]["maxNodeCount"] = 2
    out = explain([builders.gpu_class("h100"), grows, builders.llm_deployment()]).splitlines()
    assert out[1] == "  a: replica 0 placed on pool h100 (scales from 0 to 1 nodes)"
