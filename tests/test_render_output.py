"""`modelplane render`'s output modes: the tree, kubectl's names and List, and the progress line.

Regenerate the golden tree after an intended change with
``MODELPLANE_UPDATE_GOLDEN=1 uv run pytest tests/test_render_output.py`` and review the diff.
"""

from __future__ import annotations

import io
import json
import os
import time
from pathlib import Path

import yaml
from click.testing import CliRunner, Result

from modelplane import output
from modelplane.cli import main

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
GOLDEN = Path(__file__).parent / "golden"
READY = "crossplane.io/composition-resource-name"


def render(*args: str | Path) -> Result:
    result = CliRunner().invoke(main, ["render", *map(str, args)])
    assert result.exit_code == 0, result.output
    return result


def test_the_tree_of_fleet_two_classes_matches_its_golden_file() -> None:
    got = render(EXAMPLES / "fleet-two-classes", "-o", "tree").stdout
    path = GOLDEN / "render-tree-fleet-two-classes.txt"
    if os.environ.get("MODELPLANE_UPDATE_GOLDEN"):
        GOLDEN.mkdir(exist_ok=True)
        path.write_text(got)
    assert got == path.read_text()


def test_the_tree_has_a_line_per_composite_and_composed_resource_and_a_closing_count() -> None:
    stream = list(yaml.safe_load_all(render(EXAMPLES / "fleet-two-classes").stdout))
    lines = render(EXAMPLES / "fleet-two-classes", "-o", "tree", "--show-usages").stdout
    # A header, one line per document of the stream (it holds no results), the counts.
    assert len(lines.splitlines()) == 1 + len(stream) + 1
    assert lines.splitlines()[-1] == (
        "9 composites (4 ready), 157 composed resources (115 ready), on 2 clusters"
    )


def test_the_tree_hides_usages_and_counts_them_in_its_closing_line() -> None:
    stream = list(yaml.safe_load_all(render(EXAMPLES / "fleet-two-classes").stdout))
    usages = [d for d in stream if d["apiVersion"].startswith("protection.crossplane.io/")]
    lines = render(EXAMPLES / "fleet-two-classes", "-o", "tree").stdout.splitlines()
    assert usages and not [line for line in lines if "Usage/" in line]
    assert len(lines) == 1 + len(stream) - len(usages) + 1
    assert lines[-1] == (
        "9 composites (4 ready), 157 composed resources (115 ready), on 2 clusters, "
        f"{len(usages)} Usages hidden (--show-usages)"
    )


def test_show_usages_puts_every_usage_in_the_tree() -> None:
    tree = render(EXAMPLES / "fleet-two-classes", "-o", "tree", "--show-usages").stdout
    names = [r["name"].lstrip("│├└─ ") for r in rows(tree)]
    assert "ClusterUsage/eu-west-replica-guard-9b8eba9d" in names
    assert sum(1 for n in names if n.startswith("Usage/")) == 20


def test_rows_that_would_read_the_same_show_their_api_group() -> None:
    tree = rows(render(EXAMPLES / "fleet-two-classes", "-o", "tree").stdout)
    configs = [r["name"].lstrip("│├└─ ") for r in tree if "ClusterProviderConfig" in r["name"]]
    assert [c for c in configs if c.endswith("/eu-west")] == [
        "ClusterProviderConfig.helm.m.crossplane.io/eu-west",
        "ClusterProviderConfig.kubernetes.m.crossplane.io/eu-west",
    ]
    # A kind and name no other row shares keeps its short form.
    assert any(r["name"] == "InferenceCluster/eu-west" for r in tree)


def test_a_group_is_shown_only_for_rows_that_collide() -> None:
    docs = [
        {"apiVersion": "x/v1", "kind": "Top", "metadata": {"name": "top"}},
        *(
            {
                "apiVersion": f"{group}/v1",
                "kind": kind,
                "metadata": {"name": "same", "labels": {output.COMPOSITE_LABEL: "top"}},
            }
            for group, kind in (("a.io", "Config"), ("b.io", "Config"), ("a.io", "Other"))
        ),
    ]
    out = io.StringIO()
    output.print_tree(output.tree(docs, lambda d: d["kind"] == "Top"), out)
    assert [line.split()[1] for line in out.getvalue().splitlines()[2:-1]] == [
        "Config.a.io/same",
        "Config.b.io/same",
        "Other/same",
    ]


def rows(tree: str) -> list[dict[str, str]]:
    """The tree's lines as columns, cut where the header's columns start."""
    header, *lines, _ = tree.splitlines()
    starts = [header.index(c) for c in ("NAME", "CLUSTER", "READY", "STATUS")]
    cuts = list(zip(starts, [*starts[1:], None], strict=True))
    return [
        dict(
            zip(
                ("name", "cluster", "ready", "status"),
                (line[a:b].strip() for a, b in cuts),
                strict=True,
            )
        )
        for line in lines
    ]


def test_remote_objects_show_their_manifest_and_the_cluster_they_go_to() -> None:
    tree = rows(render(EXAMPLES / "replica-seed", "-o", "tree").stdout)
    [pool] = [r for r in tree if "InferencePool/" in r["name"]]
    assert pool == {
        "name": "├─ InferencePool/qwen3-8b-eks-l4-0-pool",
        "cluster": "eks-l4",
        "ready": "False",
        "status": "",
    }


def test_readiness_follows_what_the_function_reported() -> None:
    before = render(EXAMPLES / "replica-seed", "-o", "tree", "--simulate-ready-copies", "0")
    after = render(EXAMPLES / "replica-seed", "-o", "tree", "--simulate-ready-copies", "1")
    workload = "Deployment/qwen3-8b-eks-l4-0-qwen3-8b"
    assert [r["ready"] for r in rows(before.stdout) if workload in r["name"]] == ["False"]
    assert {r["ready"] for r in rows(after.stdout)} == {"True"}
    assert after.stdout.splitlines()[-1].startswith(
        "3 composites (3 ready), 65 composed resources (65 ready), on 1 cluster"
    )


def test_a_nested_composite_holds_its_own_resources_in_the_tree() -> None:
    docs = [
        {"apiVersion": "x/v1", "kind": "Top", "metadata": {"name": "top"}},
        {
            "apiVersion": "x/v1",
            "kind": "Mid",
            "metadata": {"name": "mid", "labels": {output.COMPOSITE_LABEL: "top"}},
        },
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": "leaf",
                "labels": {output.COMPOSITE_LABEL: "mid"},
                "annotations": {READY: "leaf"},
            },
        },
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "after", "labels": {output.COMPOSITE_LABEL: "top"}},
        },
    ]
    docs[0]["status"] = {
        "conditions": [{"type": "Ready", "status": "False", "message": "Unready resources: x"}]
    }
    docs[1]["status"] = {
        "conditions": [{"type": "Ready", "status": "False", "message": "Unready resources: leaf"}]
    }
    [top] = output.tree(docs, lambda d: d["kind"] in ("Top", "Mid"))
    assert [c.doc["kind"] for c in top.children] == ["Mid", "Secret"]
    assert [c.doc["kind"] for c in top.children[0].children] == ["ConfigMap"]
    assert top.children[0].children[0].ready == "False"
    assert top.children[1].ready == "True"
    out = io.StringIO()
    output.print_tree([top], out)
    assert [line.split()[0] for line in out.getvalue().splitlines()[1:-1]] == [
        "Top/top",
        "├─",
        "│",
        "└─",
    ]


def test_names_are_printed_as_kubectl_prints_them() -> None:
    names = render(EXAMPLES / "replica-seed", "-o", "name").stdout.splitlines()
    assert names[:4] == [
        "inferenceclass.modelplane.ai/nvidia-l4",
        "inferencecluster.modelplane.ai/eks-l4",
        "release.helm.m.crossplane.io/eks-l4-cert-manager-defa3370",
        "release.helm.m.crossplane.io/eks-l4-envoy-ai-gateway-e05b5d35",
    ]
    assert all("/" in n and n.split("/")[0] == n.split("/")[0].lower() for n in names)


def test_json_is_a_v1_list_of_the_yaml_streams_objects() -> None:
    stream = list(yaml.safe_load_all(render(EXAMPLES / "replica-seed").stdout))
    listed = json.loads(render(EXAMPLES / "replica-seed", "-o", "json").stdout)
    assert listed == {
        "apiVersion": "v1",
        "kind": "List",
        "metadata": {"resourceVersion": ""},
        "items": stream,
    }


def test_yaml_stays_the_crossplane_render_stream() -> None:
    out = render(EXAMPLES / "replica-seed").stdout
    assert out.startswith("---\n")
    assert all(d.get("kind") != "List" for d in yaml.safe_load_all(out))


def kinds(out: str) -> list[str]:
    return [d["kind"] for d in yaml.safe_load_all(out)]


# service-regional's function warns (its results hold a Warning).
WARNS = EXAMPLES / "service-regional"


def test_yaml_leaves_the_functions_results_out_unless_asked() -> None:
    shown = render(WARNS, "--include-function-results").stdout
    assert "Result" in kinds(shown)
    plain = render(WARNS).stdout
    assert "Result" not in kinds(plain)
    assert [k for k in kinds(shown) if k != "Result"] == kinds(plain)


def test_results_are_asked_for_with_crossplanes_short_flag_too() -> None:
    long = render(WARNS, "--include-function-results").stdout
    assert render(WARNS, "-r").stdout == long


def test_json_leaves_the_functions_results_out_unless_asked() -> None:
    plain = json.loads(render(WARNS, "-o", "json").stdout)
    shown = json.loads(render(WARNS, "-o", "json", "-r").stdout)
    assert "Result" not in [d["kind"] for d in plain["items"]]
    assert "Result" in [d["kind"] for d in shown["items"]]


# --- progress ---------------------------------------------------------------------------------


def drain(leader: int) -> bytes:
    """All a closed terminal's program side wrote (Linux reports EIO once it is read out)."""
    out = b""
    try:
        while chunk := os.read(leader, 4096):
            out += chunk
    except OSError:
        pass
    os.close(leader)
    return out


def test_render_reports_each_composite_and_pass_as_it_goes() -> None:
    from modelplane.compose.registry import default_registry
    from modelplane.manifests import load
    from modelplane.render import render_documents
    from modelplane.simulate import simulate_stack

    heard: list[tuple[int, int]] = []
    inputs = [m.obj for m in load([str(EXAMPLES / "fleet-two-classes")])]
    render_documents(
        default_registry(),
        inputs,
        simulate=simulate_stack,
        progress=lambda p, n: heard.append((p, n)),
    )
    assert [n for _, n in heard] == list(range(1, len(heard) + 1))
    passes = [p for p, _ in heard]
    assert passes == sorted(passes) and passes[0] == 1 and passes[-1] > 1
    # Each pass renders every composite of the tree as it stands: the last the whole tree, 9 in
    # fleet-two-classes (replicas appear once their clusters' stacks are observed installed).
    assert passes.count(passes[-1]) == 9


def test_progress_is_silent_when_stderr_is_not_a_terminal() -> None:
    result = render(EXAMPLES / "fleet-two-classes")
    assert result.stderr == ""
    stream = io.StringIO()
    progress = output.Progress(stream, after=0)
    progress(1, 5)
    progress.close()
    assert stream.getvalue() == ""


def test_progress_on_a_terminal_is_one_updating_line_cleared_at_the_end() -> None:
    leader, follower = os.openpty()
    with os.fdopen(follower, "w") as terminal:
        progress = output.Progress(terminal, after=0)
        progress(1, 3)
        time.sleep(0.11)  # updates are at most ten a second
        progress(2, 7)
        progress.close()
    written = drain(leader).decode()
    assert "\n" not in written
    frames = written.split("\r")
    assert frames[1].startswith("modelplane render: 3 composites rendered, pass 1, ")
    assert frames[2].startswith("modelplane render: 7 composites rendered, pass 2, ")
    assert frames[-1] == "\x1b[K"


def test_progress_waits_before_saying_anything() -> None:
    leader, follower = os.openpty()
    with os.fdopen(follower, "w") as terminal:
        progress = output.Progress(terminal, after=3600)
        progress(1, 3)
        progress.close()
        terminal.write("x")
    assert drain(leader) == b"x"
