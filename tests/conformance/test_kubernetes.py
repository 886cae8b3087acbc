"""Kubernetes as the pods Modelplane composes meet it: the preStop sleep a ModelDeployment's
drain puts on every container of its replicas' pods.

Read at the version the project requires (Kubernetes 1.34, docs/getting-started.md):

- kubernetes/api v0.34.0 (Kubernetes 1.34.0), ``core/v1/types.go``: ``LifecycleHandler.Sleep``
  ("+featureGate=PodLifecycleSleepAction"); ``Lifecycle.PreStop``: "The Pod's termination grace
  period countdown begins before the PreStop hook is executed".
- kubernetes/kubernetes ``pkg/features/kube_features.go``: PodLifecycleSleepAction alpha in
  1.29, beta (on by default) in 1.30, GA and locked on in 1.34 (the versioned feature spec);
  PodLifecycleSleepActionAllowZero GA in 1.34.
- kubernetes/kubernetes ``pkg/apis/core/validation/validation.go``, ``validateSleepAction``: a
  sleep's seconds must be non-negative and at most the pod's terminationGracePeriodSeconds, or
  the API server refuses the pod.
- kubernetes/kubernetes ``pkg/kubelet/kuberuntime/kuberuntime_container.go``:
  ``killContainersWithSyncResult`` stops every container of a pod in its own goroutine, and
  ``killContainer`` runs that container's preStop, subtracts the time it took from the grace
  period and only then signals it (with at least ``minimumGracePeriodInSeconds``, 2 s, left).
  A container without the sleep is signalled at once while the others sleep.
- kubernetes/kubernetes ``pkg/kubelet/kuberuntime/kuberuntime_container.go`` (release-1.35),
  ``makeMounts``: for a container's ``terminationMessagePath`` (default
  ``/dev/termination-log``) the kubelet creates a file of its own on the host, chmods it 0666
  whatever the umask, and bind-mounts it over that path without ``readonly``; so a non-root
  user under ``readOnlyRootFilesystem`` writes it (the node conformance test "should report
  termination message if TerminationMessagePath is set as non-root user and at a non-default
  path"), and the kubelet reads it into ``state.terminated.message``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from modelplane import labels
from modelplane.compose.modeldeployment.stamp import GRACE_SECONDS, PRE_STOP_SECONDS
from tests.compose.modelreplica import support
from tests.compose.through import run
from tests.conformance.fleets import EXAMPLES, NAMES, rendered_fleet

Obj = dict[str, Any]
ROOT = Path(__file__).resolve().parents[2]
SLEEP_GA = (1, 34)
"""PodLifecycleSleepAction GA (and locked on) from this Kubernetes version."""


def pod_specs(node: Any) -> Iterator[Obj]:
    """Every pod spec in a manifest (a Deployment's, a LeaderWorkerSet's, a PodClique's)."""
    if isinstance(node, dict):
        if isinstance(node.get("containers"), list):
            yield node
        for value in node.values():
            yield from pod_specs(value)
    elif isinstance(node, list):
        for value in node:
            yield from pod_specs(value)


def sleeps(pod: Obj) -> dict[str, int | None]:
    """Each container's preStop sleep seconds, or None."""
    out: dict[str, int | None] = {}
    for c in pod["containers"]:
        sleep = ((c.get("lifecycle") or {}).get("preStop") or {}).get("sleep")
        out[c["name"]] = int(sleep["seconds"]) if sleep else None
    return out


SIDECAR = "replica-sidecar, stamped with the default drain"
CASES = [*NAMES, SIDECAR]
"""Every conformance fleet, and the sidecar example as a ModelDeployment would stamp it (no
fleet runs a sidecar under a drain)."""


def drained(name: str) -> list[Obj]:
    if name == SIDECAR:
        manifests = _sidecar_manifests()
    else:
        manifests = [r.manifest for r in rendered_fleet(name).remote()]
    return [
        pod
        for manifest in manifests
        for pod in pod_specs(manifest)
        if any(s is not None for s in sleeps(pod).values())
    ]


def _sidecar_manifests() -> list[Obj]:
    [mr] = yaml.safe_load_all((EXAMPLES / "replica-sidecar" / "replica.yaml").read_text())
    mr["metadata"]["annotations"] = {
        labels.TERMINATION_GRACE: str(GRACE_SECONDS),
        labels.PRE_STOP_SECONDS: str(PRE_STOP_SECONDS),
    }
    rsp = run(mr, {}, {"cluster": [support.cluster(mr["spec"]["clusterName"])]})
    assert rsp.fatal is None, rsp.fatal
    return [o["spec"]["forProvider"]["manifest"] for o in rsp.resources.values()]


def test_some_fleet_has_drained_pods() -> None:
    assert any(drained(name) for name in NAMES)


@pytest.mark.parametrize("name", CASES)
def test_every_pre_stop_sleep_leaves_its_container_time_after_the_signal(name: str) -> None:
    """validateSleepAction refuses a sleep longer than the grace period; the kubelet signals the
    container only once the sleep is over, with what is left: the sleep is shorter."""
    for pod in drained(name):
        grace = pod.get("terminationGracePeriodSeconds", 30)
        for container, seconds in sleeps(pod).items():
            assert seconds is None or 0 <= seconds < grace, (container, seconds, grace)


@pytest.mark.parametrize("name", CASES)
def test_every_container_of_a_drained_pod_sleeps_alike(name: str) -> None:
    """The kubelet stops a pod's containers in parallel, each after its own preStop: one that
    did not sleep (a sidecar in front of the engine) would stop serving at once."""
    for pod in drained(name):
        own = {c["name"] for c in pod["containers"] if _own_pre_stop(c)}
        found = {s for n, s in sleeps(pod).items() if n not in own}
        assert len(found) == 1 and None not in found, sleeps(pod)


def _own_pre_stop(container: Obj) -> bool:
    pre_stop = (container.get("lifecycle") or {}).get("preStop") or {}
    return bool(pre_stop) and "sleep" not in pre_stop


def test_every_kubernetes_version_a_managed_cluster_defaults_to_has_the_sleep_action() -> None:
    text = (ROOT / "apis" / "inferenceclusters" / "definition.yaml").read_text()
    defaults = re.findall(r'kubernetesVersion: \{type: string, default: "([^"]+)"\}', text)
    assert defaults
    for version in defaults:
        major, minor = (int(x) for x in re.findall(r"\d+", version)[:2])
        assert (major, minor) >= SLEEP_GA, version


def test_the_documented_minimum_kubernetes_has_the_sleep_action() -> None:
    text = (ROOT / "docs" / "getting-started.md").read_text()
    [minimum] = re.findall(r"Kubernetes (\d+)\.(\d+) or later", text)
    assert tuple(int(x) for x in minimum) >= SLEEP_GA


def test_the_resolve_pod_ends_with_its_commit_where_the_kubelet_mounts_the_message_file() -> None:
    # A ModelCache resolving a branch: its Pod runs as the hydration Job does (non-root, a
    # read-only root filesystem) and writes the commit to the file the kubelet mounts writable.
    from modelplane.compose.modelcache.resolve import TERMINATION_LOG
    from tests.compose.modelcache.test_modelcache_resolve import pod

    spec = pod()["a"]["spec"]
    [only] = spec["containers"]
    assert only.get("terminationMessagePath", "/dev/termination-log") == TERMINATION_LOG
    assert TERMINATION_LOG == "/dev/termination-log"  # the path Kubernetes defaults to
    assert f"open({TERMINATION_LOG!r}, 'w')" in only["command"][2]
    assert only["securityContext"]["readOnlyRootFilesystem"] is True
    assert spec["securityContext"]["runAsNonRoot"] is True
