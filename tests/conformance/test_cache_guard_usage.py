"""The cache guard (src/modelplane/compose/inferencecluster/cache_guard.py) against Crossplane
v2.3.4's ClusterUsage.

- cluster/crds/protection.crossplane.io_clusterusages.yaml (tests/upstream/crds): a ClusterUsage
  needs ``spec.by`` or ``spec.reason`` (``has(self.by) || has(self.reason)``); the guard names no
  ``by``, since a ClusterUsage cannot name a namespaced ModelCache (usages.py).
- internal/webhook/protection/usage/handler.go: a DELETE of an object any Usage names as ``of``
  is refused (409) while the Usage exists, and ``inUseMessage`` shows a ``by``-less Usage's
  ``reason`` to whoever asked for the deletion: the reason is what the user reads.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from modelplane.compose.inferencecluster.cache_guard import guard_for
from tests.compose.inferencecluster.support import upstream

ROOT = Path(__file__).resolve().parents[2]
CRD = ROOT / "tests/upstream/crds/protection.crossplane.io_clusterusages.yaml"


def test_a_cluster_usage_needs_a_user_or_a_reason() -> None:
    crd = yaml.safe_load(CRD.read_text())
    [version] = [v for v in crd["spec"]["versions"] if v.get("storage")]
    spec = version["schema"]["openAPIV3Schema"]["properties"]["spec"]
    rules = [r["rule"] for r in spec.get("x-kubernetes-validations", [])]
    assert "has(self.by) || has(self.reason)" in rules


def test_the_cache_guard_gives_the_reason_a_refused_delete_shows() -> None:
    guard = guard_for("east", [("ml", "weights")])
    assert "by" not in guard["spec"]
    assert "ml/weights" in guard["spec"]["reason"]


def test_the_cache_guard_is_a_cluster_usage_crossplane_admits() -> None:
    admitted = upstream().admit(guard_for("east", [("ml", "weights")]))
    assert admitted.ok, admitted
