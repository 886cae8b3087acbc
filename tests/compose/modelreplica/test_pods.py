"""Every member pod: placement, device claims, shared memory, cache, ports, probes, passthrough."""

from __future__ import annotations

import pytest

from modelplane.compose.shared.cache import cache_claim_name, revision_marker, revision_path

from .support import (
    GPU,
    claim_templates,
    cluster,
    container,
    engine,
    engine_container,
    env_names,
    leader,
    model_cache,
    pod_specs,
    replica,
    run,
    standalone,
    worker,
    workload,
)

STACKS = ["Standard", "Dynamo"]


def gang_pods(stack: str, lead: dict, work: dict, **kw) -> dict[str, dict]:
    result = run(replica(engine("main", lead, work), **kw), on=cluster(stack=stack))
    return pod_specs(workload(result))


@pytest.mark.parametrize("stack", STACKS)
def test_members_pin_to_their_own_pools(stack):
    pods = gang_pods(stack, leader("head"), worker("frontier"))
    assert pods["leader"]["nodeSelector"] == {"modelplane.ai/pool": "head"}
    assert pods["worker"]["nodeSelector"] == {"modelplane.ai/pool": "frontier"}


def test_every_pod_tolerates_gpu_taints_claimless_ones_too():
    pods = gang_pods("Standard", leader(devices=[]), worker())
    for pod in pods.values():
        assert pod["tolerations"] == [
            {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
        ]


@pytest.mark.parametrize("stack", STACKS)
def test_a_claimless_member_gets_no_claim_template_or_claim(stack):
    result = run(replica(engine("main", leader(devices=[]), worker())), on=cluster(stack=stack))
    pods = pod_specs(workload(result))
    assert "resourceClaims" not in pods["leader"]
    assert "resources" not in container(pods["leader"])
    assert set(claim_templates(result)) == {"worker"}


def test_a_claiming_member_references_its_own_template_from_the_engine_only():
    sidecar = {"name": "proxy", "image": "proxy:1"}
    result = run(replica(engine("main", standalone(containers=[engine_container(), sidecar]))))
    pod = pod_specs(workload(result))["standalone"]
    template = claim_templates(result)["standalone"]
    assert pod["resourceClaims"] == [
        {"name": "devices", "resourceClaimTemplateName": template["metadata"]["name"]}
    ]
    assert container(pod)["resources"] == {"claims": [{"name": "devices"}]}
    assert "resources" not in container(pod, "proxy")


def test_claims_sit_beside_the_users_cpu_and_memory():
    resources = {"requests": {"cpu": "4", "memory": "32Gi"}, "limits": {"memory": "32Gi"}}
    result = run(
        replica(engine("main", standalone(containers=[engine_container(resources=resources)])))
    )
    assert container(pod_specs(workload(result))["standalone"])["resources"] == {
        **resources,
        "claims": [{"name": "devices"}],
    }


def test_device_requests_become_exactly_requests_with_cel_selectors():
    devices = [
        {
            "name": "gpu",
            "deviceClassName": "gpu.nvidia.com",
            "count": 8,
            "selectors": [{"cel": "a == 1"}, {"cel": "b == 2"}],
        },
        {"name": "nic", "deviceClassName": "rdma.example.com"},
    ]
    result = run(replica(engine("main", standalone(devices=devices))))
    template = claim_templates(result)["standalone"]
    assert template["apiVersion"] == "resource.k8s.io/v1"
    assert template["spec"]["spec"]["devices"]["requests"] == [
        {
            "name": "gpu",
            "exactly": {
                "deviceClassName": "gpu.nvidia.com",
                "count": 8,
                "selectors": [{"cel": {"expression": "a == 1"}}, {"cel": {"expression": "b == 2"}}],
            },
        },
        {"name": "nic", "exactly": {"deviceClassName": "rdma.example.com", "count": 1}},
    ]


def test_pods_never_ask_for_extended_resource_gpus():
    user = engine_container(resources={"limits": {"memory": "1Gi"}})
    pods = gang_pods("Standard", leader(containers=[user]), worker(containers=[user]))
    for pod in pods.values():
        for c in pod["containers"]:
            resources = c.get("resources", {})
            assert set(resources.get("limits", {})) <= {"cpu", "memory", "ephemeral-storage"}
            assert set(resources.get("requests", {})) <= {"cpu", "memory", "ephemeral-storage"}


@pytest.mark.parametrize("stack", STACKS)
def test_engine_containers_mount_shared_memory(stack):
    for pod in gang_pods(stack, leader(), worker()).values():
        assert {"name": "dshm", "emptyDir": {"medium": "Memory"}} in pod["volumes"]
        assert {"name": "dshm", "mountPath": "/dev/shm"} in container(pod)["volumeMounts"]


def test_sidecars_pass_through_verbatim_in_the_users_order():
    first = {
        "name": "a-sidecar",
        "image": "a:1",
        "args": ["--x"],
        "ports": [{"containerPort": 9100}],
    }
    last = {
        "name": "z-sidecar",
        "image": "z:1",
        "readinessProbe": {"grpc": {"port": 9200}},
        "resources": {"requests": {"cpu": "100m"}},
    }
    result = run(replica(engine("main", standalone(containers=[first, engine_container(), last]))))
    pod = pod_specs(workload(result))["standalone"]
    assert [c["name"] for c in pod["containers"]] == ["a-sidecar", "engine", "z-sidecar"]
    assert pod["containers"][0] == first
    assert pod["containers"][2] == last


def test_user_container_fields_pass_through():
    env = [
        {"name": "A", "value": "1"},
        {"name": "B", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k", "optional": True}}},
        {"name": "C", "valueFrom": {"configMapKeyRef": {"name": "m", "key": "k"}}},
        {"name": "D", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
    ]
    user = engine_container(command=["python3", "-m", "x"], args=["--a", "--b"], env=env)
    engine_out = container(
        pod_specs(workload(run(replica(engine("main", standalone(containers=[user]))))))[
            "standalone"
        ]
    )
    assert engine_out["command"] == ["python3", "-m", "x"]
    assert engine_out["args"] == ["--a", "--b"]
    assert engine_out["env"] == env


def test_image_pull_secrets_reach_the_pod():
    member = standalone(pull_secrets=[{"name": "regcred"}])
    pod = pod_specs(workload(run(replica(engine("main", member)))))["standalone"]
    assert pod["imagePullSecrets"] == [{"name": "regcred"}]


def test_the_engine_serves_the_serving_port_named_http_by_default():
    pod = pod_specs(workload(run(replica())))["standalone"]
    assert container(pod)["ports"] == [{"name": "http", "containerPort": 8000}]


def test_serving_port_follows_serving_port_setting():
    pod = pod_specs(workload(run(replica(serving={"port": 9000}))))["standalone"]
    assert container(pod)["ports"] == [{"name": "http", "containerPort": 9000}]
    assert container(pod)["readinessProbe"]["httpGet"]["port"] == 9000


def test_the_engine_keeps_other_ports_beside_the_added_http_port():
    user = engine_container(ports=[{"name": "metrics", "containerPort": 8300}])
    pod = pod_specs(workload(run(replica(engine("main", standalone(containers=[user]))))))[
        "standalone"
    ]
    assert container(pod)["ports"] == [
        {"name": "metrics", "containerPort": 8300},
        {"name": "http", "containerPort": 8000},
    ]


def test_an_engine_that_declares_the_serving_port_keeps_it_as_written():
    user = engine_container(ports=[{"containerPort": 8000}])
    pod = pod_specs(workload(run(replica(engine("main", standalone(containers=[user]))))))[
        "standalone"
    ]
    assert container(pod)["ports"] == [{"containerPort": 8000}]
    assert container(pod)["readinessProbe"]["httpGet"]["port"] == 8000


def test_a_sidecar_on_the_serving_port_leaves_the_engine_its_own_http_port():
    sidecar = {"name": "proxy", "image": "p:1", "ports": [{"containerPort": 8000}]}
    user = engine_container(ports=[{"name": "http", "containerPort": 8200}])
    pod = pod_specs(workload(run(replica(engine("main", standalone(containers=[sidecar, user]))))))[
        "standalone"
    ]
    assert container(pod)["ports"] == [{"name": "http", "containerPort": 8200}]
    assert container(pod)["readinessProbe"]["httpGet"] == {"path": "/health", "port": 8200}
    assert container(pod, "proxy") == sidecar


@pytest.mark.parametrize("stack", STACKS)
def test_workers_get_neither_http_port_nor_default_probe(stack):
    pods = gang_pods(stack, leader(), worker())
    assert "ports" not in container(pods["worker"])
    assert "readinessProbe" not in container(pods["worker"])
    assert container(pods["leader"])["ports"] == [{"name": "http", "containerPort": 8000}]
    assert container(pods["leader"])["readinessProbe"]["httpGet"] == {
        "path": "/health",
        "port": 8000,
    }


def test_default_probe_tolerates_slow_health_handlers():
    probe = container(pod_specs(workload(run(replica())))["standalone"])["readinessProbe"]
    assert probe["timeoutSeconds"] >= 5
    assert probe["periodSeconds"] >= 10


@pytest.mark.parametrize(
    "probe",
    [
        {"httpGet": {"path": "/ready", "port": "http"}},
        {"httpGet": {"path": "/ready", "port": 8000}, "periodSeconds": 3},
        {"tcpSocket": {"port": 8000}},
        {"grpc": {"port": 9000, "service": "health"}},
    ],
    ids=["httpGet-by-name", "httpGet-by-number", "tcpSocket", "grpc"],
)
def test_a_user_probe_replaces_the_default_whole(probe):
    user = engine_container(readinessProbe=probe)
    pod = pod_specs(workload(run(replica(engine("main", standalone(containers=[user]))))))[
        "standalone"
    ]
    assert container(pod)["readinessProbe"] == probe


def test_a_workers_own_probe_passes_through():
    probe = {"tcpSocket": {"port": "dist"}}
    user = engine_container(ports=[{"name": "dist", "containerPort": 5000}], readinessProbe=probe)
    pods = gang_pods("Standard", leader(), worker(containers=[user]))
    assert container(pods["worker"])["readinessProbe"] == probe
    assert container(pods["worker"])["ports"] == [{"name": "dist", "containerPort": 5000}]


@pytest.mark.parametrize("stack", STACKS)
def test_with_a_model_cache_every_engine_container_mounts_it(stack):
    sidecar = {"name": "proxy", "image": "p:1"}
    result = run(
        replica(
            engine("main", leader(containers=[engine_container(), sidecar]), worker()),
            cache="weights",
        ),
        on=cluster(stack=stack),
        cache=model_cache(),
    )
    for pod in pod_specs(workload(result)).values():
        assert {
            "name": "model-cache",
            "persistentVolumeClaim": {"claimName": cache_claim_name("weights"), "readOnly": True},
        } in pod["volumes"]
        mount = {"name": "model-cache", "mountPath": "/mnt/models", "readOnly": True}
        assert mount in container(pod)["volumeMounts"]
    proxy = container(pod_specs(workload(result))["leader"], "proxy")
    assert proxy == sidecar


@pytest.mark.parametrize("stack", STACKS)
def test_with_a_model_cache_every_member_pod_waits_for_the_hydrated_marker(stack):
    cache = model_cache()
    result = run(
        replica(engine("main", leader(), worker()), cache="weights"),
        on=cluster(stack=stack),
        cache=cache,
    )
    for role, pod in pod_specs(workload(result)).items():
        [wait] = pod["initContainers"]
        assert wait["image"] == container(pod)["image"], role
        assert wait["command"][-1] == revision_marker(cache, "main"), role
        assert wait["volumeMounts"] == [
            {"name": "model-cache", "mountPath": "/mnt/models", "readOnly": True}
        ]


def test_without_a_cache_no_pod_waits():
    assert "initContainers" not in pod_specs(workload(run(replica())))["standalone"]


def test_with_a_model_cache_engines_find_it_through_env_not_flags():
    user = engine_container(args=["--model=Qwen/Qwen3-8B"], env=[{"name": "X", "value": "1"}])
    result = run(
        replica(engine("main", standalone(containers=[user])), cache="weights"), cache=model_cache()
    )
    engine_out = container(pod_specs(workload(result))["standalone"])
    assert engine_out["args"] == ["--model=Qwen/Qwen3-8B"]
    assert env_names(engine_out) == [
        "HF_HUB_CACHE",
        "MODELPLANE_MODEL_CACHE",
        "HF_HUB_OFFLINE",
        "MODELPLANE_MODEL_REVISION",
        "X",
    ]
    assert engine_out["env"][0]["value"] == revision_path(model_cache(), "main")
    assert engine_out["env"][2]["value"] == "1"


def test_without_a_cache_there_is_no_cache_volume_or_env():
    pod = pod_specs(workload(run(replica())))["standalone"]
    assert [v["name"] for v in pod["volumes"]] == ["dshm"]
    assert "env" not in container(pod)


def test_composing_never_changes_the_input():
    import copy

    composite = replica(engine("main", leader(), worker(nodes=2)), cache="weights")
    before = copy.deepcopy(composite)
    run(composite, cache=model_cache())
    assert composite == before


def test_changed_device_requests_get_a_new_claim_template_as_its_spec_is_immutable():
    # The API server rejects any change to a ResourceClaimTemplate's spec, so new requests
    # need a new template (and a new composition key, so Crossplane deletes the old one).
    before = run(replica(engine("main", standalone())))
    after = run(replica(engine("main", standalone(devices=[{**GPU[0], "count": 2}]))))
    keys = {k for k in before.resources if k.startswith("claims-")}
    new_keys = {k for k in after.resources if k.startswith("claims-")}
    assert keys and new_keys and keys.isdisjoint(new_keys)
    old, new = claim_templates(before)["standalone"], claim_templates(after)["standalone"]
    assert old["metadata"]["name"] != new["metadata"]["name"]
    (claim,) = pod_specs(workload(after))["standalone"]["resourceClaims"]
    assert claim["resourceClaimTemplateName"] == new["metadata"]["name"]


def test_a_claim_template_keeps_its_name_and_key_while_its_requests_stay():
    first = run(replica(engine("main", standalone())))
    again = run(replica(engine("main", standalone(metadata={"labels": {"team": "a"}}))))
    assert {k for k in first.resources if k.startswith("claims-")} == {
        k for k in again.resources if k.startswith("claims-")
    }
