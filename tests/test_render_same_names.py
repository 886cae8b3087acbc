"""A ModelService (or ModelCache) named after its ModelDeployment, the public project's own
convention: every composite appears once, under its owner, because owners are told apart by the
controller reference's kind (or uid), never by the name a label carries."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

from click.testing import CliRunner

from modelplane import cli
from tests.edited import edited_example

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def renamed(tmp_path: Path) -> Path:
    """service-canary with its ModelService named as the stable deployment."""
    return edited_example(
        tmp_path, "service-canary", "service.yaml", "  name: qwen\n", "  name: qwen-stable\n"
    )


def render(*args: str) -> str:
    out = CliRunner().invoke(cli.main, ["render", *args])
    assert out.exit_code == 0, out.stderr
    return out.stdout


def test_no_object_is_listed_twice(tmp_path: Path) -> None:
    names = render(str(renamed(tmp_path)), "-o", "name").splitlines()
    assert [n for n, count in Counter(names).items() if count > 1] == []


def test_the_tree_counts_each_composite_once_under_its_owner(tmp_path: Path) -> None:
    tree = render(str(renamed(tmp_path)), "-o", "tree").splitlines()
    # 1 class, 3 clusters, 1 gateway with a shard per cluster (each hashed to its own), 2
    # deployments with 3 replicas between them, 1 service
    assert tree[-1].startswith("14 composites")
    roots = [line.split()[0] for line in tree[1:-1] if not line.startswith(("├", "└", "│", " "))]
    assert not [r for r in roots if r.startswith(("ModelReplica/", "InferenceGatewayShard/"))]


def test_the_deployment_owns_its_replicas_and_the_service_its_routes(tmp_path: Path) -> None:
    tree = render(str(renamed(tmp_path)), "-o", "tree").splitlines()
    nested = ("├", "└", "│", " ")
    start = next(
        i for i, t in enumerate(tree) if t.startswith("ModelDeployment/ml-team/qwen-stable")
    )
    below = []
    for line in tree[start + 1 : -1]:
        if not line.startswith(nested):
            break
        below.append(line)
    assert sum("ModelReplica/" in line for line in below) == 2
    # The service's 503 filter is its own, not the deployment's.
    assert not any("HTTPRouteFilter/" in line for line in below)


CACHE = """\
apiVersion: modelplane.ai/v1alpha1
kind: ModelCache
metadata:
  name: qwen3-8b
  namespace: ml-team
spec:
  source: HuggingFace
  huggingFace:
    repo: Qwen/Qwen3-8B
    sizeGiB: 20
"""


def test_a_cache_named_as_its_deployment_lists_each_object_once(tmp_path: Path) -> None:
    root = tmp_path / "cached"
    shutil.copytree(EXAMPLES / "fleet-two-classes", root)
    (root / "cache.yaml").write_text(CACHE)  # a file of its own: nothing in the example changes
    names = render(str(root), "-o", "name").splitlines()
    assert [n for n, count in Counter(names).items() if count > 1] == []
    tree = render(str(root), "-o", "tree").splitlines()
    plain = render(str(EXAMPLES / "fleet-two-classes"), "-o", "tree").splitlines()
    assert int(tree[-1].split()[0]) == int(plain[-1].split()[0]) + 1
