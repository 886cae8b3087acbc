"""Gangs on the Standard stack, against KAI scheduler v0.15.2 and LeaderWorkerSet v0.10.0.

KAI (github.com/kai-scheduler/KAI-Scheduler, tag v0.15.2) groups a LeaderWorkerSet's pods in
pkg/podgrouper/podgrouper/plugins/leaderworkerset/lws_grouper.go, registered for
leaderworkerset.x-k8s.io LeaderWorkerSet in pkg/podgrouper/podgrouper/hub/hub.go: one PodGroup
per group (``<name>-group-<index>``), whose minAvailable is the group's size under
``startupPolicy: LeaderCreated`` but 1 for an unscheduled leader under ``LeaderReady``; the queue
is read from the top owner's labels first (plugins/defaultgrouper/default_grouper.go). Its
scheduler filters with Kubernetes' InterPodAffinity plugin
(pkg/scheduler/k8s_internal/predicates/predicates.go), so a gang's anti-affinity holds.
"""

from __future__ import annotations

import pytest

from modelplane.compose.modelreplica.composer import compose_replica
from tests.compose.modelreplica.support import example_inputs
from tests.conformance.fleets import NAMES, rendered_fleet

Obj = dict


def _leaderworkerset() -> Obj:
    result = compose_replica(example_inputs("replica-gang-standard"))
    (lws,) = [
        d.resource["spec"]["forProvider"]["manifest"]
        for k, d in result.resources.items()
        if k.startswith("workload-")
    ]
    assert lws["kind"] == "LeaderWorkerSet"
    return lws


def test_kai_places_each_group_whole_only_under_leader_created():
    # Under LeaderReady the grouper asks for the leader alone first: the half-placed group
    # this scheduler is there to prevent.
    assert _leaderworkerset()["spec"]["startupPolicy"] == "LeaderCreated"


def test_the_queue_is_on_the_leaderworkerset_the_grouper_reads_first():
    labels = _leaderworkerset()["metadata"]["labels"]
    assert labels["kai.scheduler/queue"] == "modelplane"


def test_gang_spreading_keys_on_the_label_leaderworkerset_gives_one_group():
    # api/leaderworkerset/v1/leaderworkerset_types.go (lws v0.10.0): GroupUniqueHashLabelKey,
    # set on every pod of a group by pkg/webhooks/pod_webhook.go.
    template = _leaderworkerset()["spec"]["leaderWorkerTemplate"]
    for role in ("leaderTemplate", "workerTemplate"):
        affinity = template[role]["spec"]["affinity"]["podAntiAffinity"]
        [term] = affinity["requiredDuringSchedulingIgnoredDuringExecution"]
        assert term["matchLabelKeys"] == ["leaderworkerset.sigs.k8s.io/group-key"]


def _lws_pod_templates(lws: Obj) -> list[Obj]:
    t = lws["spec"]["leaderWorkerTemplate"]
    return [t.get("leaderTemplate") or t["workerTemplate"], t["workerTemplate"]]


@pytest.mark.parametrize("name", NAMES)
def test_every_leaderworkerset_of_every_fleet_is_grouped_whole_by_the_kai_its_cluster_runs(
    name: str,
) -> None:
    f = rendered_fleet(name)
    releases = {
        r["spec"]["providerConfigRef"]["name"]
        for r in f.composed("Release")
        if r["spec"]["forProvider"]["chart"]["name"] == "kai-scheduler"
    }
    for gang in f.remote("LeaderWorkerSet"):
        lws = gang.manifest
        assert lws["spec"].get("startupPolicy", "LeaderCreated") == "LeaderCreated"
        assert lws["metadata"]["labels"].get("kai.scheduler/queue") == "modelplane"
        assert gang.cluster in releases, gang.cluster
        for pod in _lws_pod_templates(lws):
            assert pod["spec"]["schedulerName"] == "kai-scheduler"
