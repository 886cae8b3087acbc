"""Each engine becomes one workload chosen by its member roles and the cluster's stack."""

from __future__ import annotations

import pytest

from modelplane.compose.modelreplica import network, objectives, routing
from modelplane.compose.modelreplica.workloads import (
    DEPLOYMENT_READY,
    GANGS_READY,
    LEADERWORKERSET_READY,
    PODCLIQUESET_READY,
)

from .support import (
    cluster,
    container,
    engine,
    env_names,
    leader,
    manifests,
    pod_labels,
    pod_specs,
    replica,
    run,
    standalone,
    worker,
    workload,
)

GANG = engine("main", leader(), worker(nodes=3), copies=2)


@pytest.mark.parametrize(
    ("members", "stack", "kind"),
    [
        ([standalone()], "Standard", "Deployment"),
        ([standalone()], "Dynamo", "Deployment"),
        ([leader(), worker()], "Standard", "LeaderWorkerSet"),
        ([leader(), worker()], None, "LeaderWorkerSet"),
        ([leader(), worker()], "Dynamo", "PodCliqueSet"),
    ],
)
def test_workload_kind_follows_roles_and_stack(members, stack, kind):
    result = run(replica(engine("main", *members)), on=cluster(stack=stack))
    assert workload(result)["kind"] == kind


def test_deployment_runs_one_pod_per_copy():
    result = run(replica(engine("main", standalone(), copies=3)))
    assert workload(result)["spec"]["replicas"] == 3


def test_deployment_rollouts_replace_copies_without_surging_onto_devices_it_lacks():
    strategy = workload(run(replica(engine("main", standalone(), copies=3))))["spec"]["strategy"]
    assert strategy == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1},
    }


def test_copies_default_to_one():
    assert workload(run(replica()))["spec"]["replicas"] == 1


def test_leaderworkerset_runs_one_group_per_copy_of_leader_plus_workers():
    lws = workload(run(replica(GANG)))
    assert lws["spec"]["replicas"] == 2
    assert lws["spec"]["leaderWorkerTemplate"]["size"] == 4


def test_leaderworkerset_without_worker_nodes_has_one_worker():
    lws = workload(run(replica(engine("main", leader(), worker(nodes=None)))))
    assert lws["spec"]["leaderWorkerTemplate"]["size"] == 2


def test_podcliqueset_is_one_gang_per_copy_scheduled_whole():
    pcs = workload(run(replica(GANG), on=cluster(stack="Dynamo")))
    template = pcs["spec"]["template"]
    assert pcs["spec"]["replicas"] == 1
    (group,) = template["podCliqueScalingGroups"]
    assert group["cliqueNames"] == ["leader", "worker1", "worker2", "worker3"]
    assert (group["replicas"], group["minAvailable"]) == (2, 1)
    sizes = {
        c["name"]: (c["spec"]["replicas"], c["spec"]["minAvailable"]) for c in template["cliques"]
    }
    assert sizes == {name: (1, 1) for name in group["cliqueNames"]}


def test_grove_publishes_the_leaders_address_before_it_is_ready():
    # A multi-node leader is ready only once its workers have joined it by that address.
    pcs = workload(run(replica(GANG), on=cluster(stack="Dynamo")))
    assert pcs["spec"]["template"]["headlessServiceConfig"] == {"publishNotReadyAddresses": True}


def test_grove_pods_go_to_the_gang_scheduler_and_queue():
    pcs = workload(run(replica(GANG), on=cluster(stack="Dynamo")))
    for clique in pcs["spec"]["template"]["cliques"]:
        assert clique["spec"]["podSpec"]["schedulerName"] == "kai-scheduler"
        assert clique["labels"]["kai.scheduler/queue"] == "modelplane"


def test_grove_gang_readiness_is_observed_on_its_scaling_group():
    result = run(replica(GANG), on=cluster(stack="Dynamo"))
    gang = result.resources["gang-main"].resource
    pcs_name = workload(result)["metadata"]["name"]
    assert gang["spec"]["managementPolicies"] == ["Observe"]
    assert gang["spec"]["forProvider"]["manifest"]["kind"] == "PodCliqueScalingGroup"
    assert gang["spec"]["forProvider"]["manifest"]["metadata"]["name"] == f"{pcs_name}-0-gang"
    assert gang["spec"]["readiness"] == GANGS_READY


@pytest.mark.parametrize(
    ("members", "stack", "readiness"),
    [
        ([standalone()], "Standard", DEPLOYMENT_READY),
        ([leader(), worker()], "Standard", LEADERWORKERSET_READY),
        ([leader(), worker()], "Dynamo", PODCLIQUESET_READY),
    ],
)
def test_workload_objects_derive_readiness_from_a_cel_query(members, stack, readiness):
    result = run(replica(engine("main", *members)), on=cluster(stack=stack))
    assert result.resources["workload-main"].resource["spec"]["readiness"] == readiness
    assert readiness["policy"] == "DeriveFromCelQuery"


def test_gang_members_learn_leader_address_rank_and_size_before_user_env():
    user = container_with_env()
    result = run(
        replica(engine("main", leader(containers=[user]), worker(nodes=3, containers=[user])))
    )
    for role, pod in pod_specs(workload(result)).items():
        env = container(pod)["env"]
        assert env_names(container(pod)) == [
            "MODELPLANE_LEADER_ADDRESS",
            "MODELPLANE_RANK",
            "MODELPLANE_GANG_SIZE",
            "HF_TOKEN",
        ], role
        assert env[0]["value"] == "$(LWS_LEADER_ADDRESS)"
        assert env[1]["value"] == "$(LWS_WORKER_INDEX)"
        assert env[2]["value"] == "4"


def test_grove_gang_env_defines_the_copy_index_before_the_address_that_reads_it():
    result = run(replica(GANG), on=cluster(stack="Dynamo"))
    pcs = workload(result)
    name, ns = pcs["metadata"]["name"], pcs["metadata"]["namespace"]
    env = container(pod_specs(pcs)["worker"])["env"]
    assert env[0] == {
        "name": "MODELPLANE_GANG_INDEX",
        "valueFrom": {
            "fieldRef": {
                "fieldPath": "metadata.labels['grove.io/podcliquescalinggroup-replica-index']"
            }
        },
    }
    assert env[1] == {
        "name": "MODELPLANE_LEADER_ADDRESS",
        "value": f"{name}-0-gang-$(MODELPLANE_GANG_INDEX)-leader-0.{name}-0.{ns}.svc.cluster.local",
    }


def test_each_grove_worker_rank_is_a_clique_that_states_its_rank():
    pcs = workload(run(replica(GANG), on=cluster(stack="Dynamo")))
    ranks = {
        c["name"]: {
            e["name"]: e.get("value") for e in c["spec"]["podSpec"]["containers"][0]["env"]
        }["MODELPLANE_RANK"]
        for c in pcs["spec"]["template"]["cliques"]
    }
    assert ranks == {"leader": "0", "worker1": "1", "worker2": "2", "worker3": "3"}


def test_standalone_engines_get_no_gang_env():
    result = run(replica(engine("main", standalone(containers=[container_with_env()]))))
    assert env_names(container(pod_specs(workload(result))["standalone"])) == ["HF_TOKEN"]


def test_only_the_engine_container_gets_injected_env():
    sidecar = {"name": "proxy", "image": "proxy:1", "env": [{"name": "A", "value": "1"}]}
    result = run(replica(engine("main", leader(containers=[engine_only(), sidecar]), worker())))
    assert container(pod_specs(workload(result))["leader"], "proxy") == sidecar


def test_leaderworkerset_starts_workers_with_the_leader_and_restarts_groups_whole():
    lws = workload(run(replica(GANG)))
    assert lws["spec"]["startupPolicy"] == "LeaderCreated"
    assert lws["spec"]["leaderWorkerTemplate"]["restartPolicy"] == "RecreateGroupOnPodRestart"


@pytest.mark.parametrize("stack", ["Standard", "Dynamo"])
def test_a_gang_member_without_a_template_spec_runs_its_partners_containers(stack):
    bare = worker(nodes=2)
    del bare["template"]["spec"]
    lead = leader(containers=[engine_only(image="img:lead")])
    result = run(replica(engine("main", lead, bare)), on=cluster(stack=stack))
    assert container(pod_specs(workload(result))["worker"])["image"] == "img:lead"


def test_only_serving_pods_carry_the_serving_label():
    result = run(replica(GANG))
    found = pod_labels(workload(result))
    assert found["leader"]["modelplane.ai/serving"] == "true"
    assert "modelplane.ai/serving" not in found["worker"]
    assert found["worker"]["modelplane.ai/role"] == "Worker"


@pytest.mark.parametrize("stack", ["Standard", "Dynamo"])
def test_member_labels_and_annotations_reach_their_own_pods_only(stack):
    lead = leader(metadata={"labels": {"team": "a"}, "annotations": {"note": "lead"}})
    work = worker(metadata={"labels": {"tier": "w"}})
    result = run(replica(engine("main", lead, work)), on=cluster(stack=stack))
    found = pod_labels(workload(result))
    assert found["leader"]["team"] == "a" and "tier" not in found["leader"]
    assert found["worker"]["tier"] == "w" and "team" not in found["worker"]
    manifest = workload(result)
    if stack == "Standard":
        t = manifest["spec"]["leaderWorkerTemplate"]
        assert t["leaderTemplate"]["metadata"]["annotations"] == {"note": "lead"}
        assert "annotations" not in t["workerTemplate"]["metadata"]
    else:
        cliques = {c["name"]: c for c in manifest["spec"]["template"]["cliques"]}
        assert cliques["leader"]["annotations"] == {"note": "lead"}
        assert "annotations" not in cliques["worker1"]


def test_modelplane_labels_win_over_member_labels():
    member = standalone(metadata={"labels": {"modelplane.ai/serving": "false"}})
    labels = pod_labels(workload(run(replica(engine("main", member)))))["standalone"]
    assert labels["modelplane.ai/serving"] == "true"


def test_deployment_selects_its_own_engines_pods():
    result = run(replica(engine("a"), engine("b")))
    for name in ("a", "b"):
        deployment = workload(result, name)
        selector = deployment["spec"]["selector"]["matchLabels"]
        template_labels = deployment["spec"]["template"]["metadata"]["labels"]
        assert selector == {"modelplane.ai/replica": "r", "modelplane.ai/engine": name}
        assert selector.items() <= template_labels.items()


def test_prefill_decode_engines_label_serving_pods_with_their_llm_d_role():
    epp = {"containers": [{"name": "epp", "image": "example.com/epp:v1"}]}
    serving = {
        "mode": "PrefillDecode",
        "router": "EndpointPicker",
        "endpointPicker": {"template": {"spec": epp}},
    }
    result = run(
        replica(engine("p", phase="Prefill"), engine("d", phase="Decode"), serving=serving)
    )
    assert pod_labels(workload(result, "p"))["standalone"]["llm-d.ai/role"] == "prefill"
    assert pod_labels(workload(result, "d"))["standalone"]["llm-d.ai/role"] == "decode"


def test_every_remote_object_names_its_owner():
    result = run(replica(GANG, engine("solo")))
    for key, manifest in manifests(result).items():
        labels = manifest["metadata"].get("labels", {})
        assert labels.get("app.kubernetes.io/managed-by") == "modelplane", key
        if key != "namespace":
            assert labels["modelplane.ai/replica"] == "r", key
            # Routing, the network policies and the priority objectives (an InferenceObjective
            # names the replica's pool) serve the whole replica, not one engine.
            if key not in (*routing.KEYS, *network.KEYS, *objectives.KEYS):
                assert labels["modelplane.ai/engine"] in ("main", "solo"), key


def engine_only(**fields):
    return {"name": "engine", "image": "vllm/vllm-openai:v0.23.0", **fields}


def container_with_env():
    return engine_only(
        env=[{"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf", "key": "token"}}}]
    )


def test_prefill_decode_gangs_on_grove_role_label_their_leaders():
    epp = {"containers": [{"name": "epp", "image": "example.com/epp:v1"}]}
    serving = {
        "mode": "PrefillDecode",
        "router": "EndpointPicker",
        "endpointPicker": {"template": {"spec": epp}},
    }
    composite = replica(
        engine("p", leader(), worker(nodes=2), phase="Prefill"),
        engine("d", leader(), worker(nodes=2), phase="Decode"),
        serving=serving,
    )
    result = run(composite, on=cluster(stack="Dynamo"))
    for name, role in (("p", "prefill"), ("d", "decode")):
        found = pod_labels(workload(result, name))
        assert found["leader"]["llm-d.ai/role"] == role
        assert "llm-d.ai/role" not in found["worker"]


def test_leaderworkerset_gangs_are_handed_to_the_gang_scheduler_in_its_queue():
    lws = workload(run(replica(GANG)))
    assert lws["metadata"]["labels"]["kai.scheduler/queue"] == "modelplane"
    for role, pod in pod_specs(lws).items():
        assert pod["schedulerName"] == "kai-scheduler", role


@pytest.mark.parametrize(
    ("stack", "gang_label"),
    [("Standard", "leaderworkerset.sigs.k8s.io/group-key"), ("Dynamo", "grove.io/podgang")],
)
def test_members_of_one_gang_land_on_distinct_nodes(stack, gang_label):
    lws = workload(run(replica(GANG), on=cluster(stack=stack)))
    for role, pod in pod_specs(lws).items():
        [term] = pod["affinity"]["podAntiAffinity"][
            "requiredDuringSchedulingIgnoredDuringExecution"
        ]
        assert term["topologyKey"] == "kubernetes.io/hostname", role
        assert term["matchLabelKeys"] == [gang_label], role
        # The engine's own pods (by Modelplane's labels only: Grove overwrites managed-by on
        # its pods), narrowed to the pod's gang by the gang's label.
        own = ("modelplane.ai/replica", "modelplane.ai/engine")
        assert term["labelSelector"]["matchLabels"] == {
            k: lws["metadata"]["labels"][k] for k in own
        }


def test_standalone_pods_are_left_to_the_default_scheduler_and_free_to_share_nodes():
    pod = pod_specs(workload(run(replica())))["standalone"]
    assert "schedulerName" not in pod
    assert "affinity" not in pod
