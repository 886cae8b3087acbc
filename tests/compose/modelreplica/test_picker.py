"""The endpoint picker: default or user's, with the wiring, RBAC and config Modelplane owns."""

from __future__ import annotations

import hashlib

import pytest
import yaml

from modelplane import labels, simulate
from modelplane.compose.modelreplica import picker, routing
from tests.compose.modelreplica.routing_fixtures import (
    cluster,
    context,
    manifest,
    prefill_decode,
    replica,
    user_picker,
)

Obj = dict


def objects(replica_obj: Obj | None = None) -> dict[str, Obj]:
    return {k: manifest(v) for k, v in routing.compose_routing(context(replica_obj)).items()}


def pod(replica_obj: Obj | None = None) -> Obj:
    return objects(replica_obj)["epp-deployment"]["spec"]["template"]


def epp(replica_obj: Obj | None = None) -> Obj:
    return pod(replica_obj)["spec"]["containers"][0]


def config(replica_obj: Obj | None = None) -> Obj:
    return yaml.safe_load(objects(replica_obj)["epp-config"]["data"]["epp-config.yaml"])


def with_router(**container_fields: object) -> Obj:
    return replica(
        serving={"router": "EndpointPicker", "endpointPicker": user_picker(**container_fields)}
    )


def plugin_types(cfg: Obj) -> list[str]:
    return [p["type"] for p in cfg["plugins"]]


# --- the default picker ---------------------------------------------------------------------


def test_without_a_router_runs_the_pinned_llm_d_router_picker() -> None:
    assert epp()["image"] == "ghcr.io/llm-d/llm-d-router-endpoint-picker:v0.10.0"


def test_default_config_scores_by_prefix_cache_and_queue_depth() -> None:
    cfg = config()
    assert (cfg["apiVersion"], cfg["kind"]) == ("llm-d.ai/v1alpha1", "EndpointPickerConfig")
    assert {"approx-prefix-cache-producer", "prefix-cache-scorer", "queue-scorer"} <= set(
        plugin_types(cfg)
    )
    [profile] = cfg["schedulingProfiles"]
    refs = {p["pluginRef"]: p.get("weight") for p in profile["plugins"]}
    assert refs == {"prefix-cache-scorer": 2, "queue-scorer": 1, "max-score-picker": None}


def test_unified_default_config_has_no_prefill_decode_plugins() -> None:
    text = objects()["epp-config"]["data"]["epp-config.yaml"]
    assert "prefill" not in text
    assert "decode" not in text


def test_every_default_profile_refers_only_to_declared_plugins() -> None:
    for text in (picker.UNIFIED_CONFIG, picker.PREFILL_DECODE_CONFIG):
        cfg = yaml.safe_load(text)
        declared = set(plugin_types(cfg))
        for profile in cfg["schedulingProfiles"]:
            assert {p["pluginRef"] for p in profile["plugins"]} <= declared


def test_prefill_decode_without_config_gets_the_disaggregating_default() -> None:
    cfg = config(prefill_decode())
    assert {
        "prefill-filter",
        "decode-filter",
        "disagg-profile-handler",
        "prefix-based-pd-decider",
    } <= set(plugin_types(cfg))
    assert [p["name"] for p in cfg["schedulingProfiles"]] == ["prefill", "decode"]
    handler = next(p for p in cfg["plugins"] if p["type"] == "disagg-profile-handler")
    assert handler["parameters"] == {"deciders": {"prefill": "prefix-based-pd-decider"}}


def test_prefill_decode_with_a_user_picker_but_no_config_keeps_the_users_container() -> None:
    assert epp(prefill_decode())["image"] == "registry.example.com/epp:v1"


# --- a user picker --------------------------------------------------------------------------


def test_users_container_replaces_the_default() -> None:
    c = epp(
        with_router(
            command=["/epp"],
            args=["--v=4"],
            env=[{"name": "LOG_LEVEL", "value": "debug"}],
            resources={"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"memory": "2Gi"}},
        )
    )
    assert c["name"] == "epp"
    assert c["image"] == "registry.example.com/epp:v1"
    assert c["command"] == ["/epp"]
    assert c["args"][0] == "--v=4"
    assert c["env"][0] == {"name": "LOG_LEVEL", "value": "debug"}
    assert c["resources"] == {
        "requests": {"cpu": "500m", "memory": "1Gi"},
        "limits": {"memory": "2Gi"},
    }


def test_users_env_keeps_its_secret_and_field_refs_verbatim() -> None:
    env = [
        {"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf", "key": "token"}}},
        {"name": "NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
    ]
    got = epp(with_router(env=env))["env"]
    assert got[:2] == env
    assert [e["name"] for e in got] == ["HF_TOKEN", "NAMESPACE", "POD_NAME"]


def test_users_image_pull_secrets_reach_the_pod() -> None:
    r = replica(
        serving={
            "router": "EndpointPicker",
            "endpointPicker": {
                "template": {
                    "spec": {
                        "containers": [{"name": "epp", "image": "private.example.com/epp:v2"}],
                        "imagePullSecrets": [{"name": "regcred"}],
                    }
                }
            },
        }
    )
    assert pod(r)["spec"]["imagePullSecrets"] == [{"name": "regcred"}]


def test_default_picker_has_no_command_or_pull_secrets() -> None:
    assert "command" not in epp()
    assert "imagePullSecrets" not in pod()["spec"]


def test_default_picker_requests_its_cpu_and_memory() -> None:
    assert epp()["resources"] == {
        "requests": {"cpu": "4", "memory": "8Gi"},
        "limits": {"memory": "16Gi"},
    }


def test_a_user_picker_keeps_its_own_resources() -> None:
    mine = {"requests": {"cpu": "1"}}
    assert epp(with_router(resources=mine))["resources"] == mine


def test_tracing_stays_on_when_the_user_turns_it_on() -> None:
    args = epp(with_router(args=["--tracing=true"]))["args"]
    assert [a for a in args if a.startswith("--tracing")] == ["--tracing=true"]


USER_CONFIG = {
    "apiVersion": "llm-d.ai/v1alpha1",
    "kind": "EndpointPickerConfig",
    "plugins": [{"type": "queue-scorer"}, {"type": "max-score-picker"}],
    "schedulingProfiles": [
        {
            "name": "default",
            "plugins": [{"pluginRef": "queue-scorer"}, {"pluginRef": "max-score-picker"}],
        }
    ],
}


@pytest.mark.parametrize(
    "replica_obj",
    [
        replica(
            serving={
                "router": "EndpointPicker",
                "endpointPicker": {**user_picker(), "config": USER_CONFIG},
            }
        ),
        prefill_decode(config=USER_CONFIG),
    ],
    ids=["Unified", "PrefillDecode"],
)
def test_users_config_replaces_the_default(replica_obj: Obj) -> None:
    assert config(replica_obj) == USER_CONFIG


# --- wiring ---------------------------------------------------------------------------------

WIRING = [
    "--pool-name=qwen3-8b-eks-l4-0-pool",
    "--pool-namespace=ml-team",
    "--pool-group=inference.networking.k8s.io",
    "--config-file=/config/epp-config.yaml",
    "--grpc-port=9002",
    "--grpc-health-port=9003",
    "--metrics-port=9090",
    "--metrics-endpoint-auth=false",
    "--tracing=false",
]


def test_default_picker_gets_every_wiring_flag() -> None:
    assert epp()["args"] == WIRING


def test_wiring_flags_are_appended_after_the_users_args() -> None:
    assert epp(with_router(args=["--v=4", "--zap-encoder", "json"]))["args"] == [
        "--v=4",
        "--zap-encoder",
        "json",
        *WIRING,
    ]


@pytest.mark.parametrize(
    ("user_args", "respected"),
    [
        (["--pool-name=custom"], "--pool-name"),
        (["--pool-name", "custom"], "--pool-name"),
        (["-pool-name=custom"], "--pool-name"),
        (["--grpc-port=9102"], "--grpc-port"),
        (["--metrics-endpoint-auth=true"], "--metrics-endpoint-auth"),
        (["--config-file=/etc/epp/mine.yaml"], "--config-file"),
        (["--config-text=plugins: []"], "--config-file"),
    ],
)
def test_a_wiring_flag_the_user_set_is_not_added(user_args: list[str], respected: str) -> None:
    args = epp(with_router(args=user_args))["args"]
    assert args[: len(user_args)] == user_args
    added = [a.split("=")[0] for a in args[len(user_args) :]]
    assert respected not in added
    assert len(added) == len(WIRING) - 1


def test_picker_learns_its_namespace_and_pod_name_from_the_downward_api() -> None:
    assert epp()["env"] == [
        {"name": "NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
        {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
    ]


def test_config_is_mounted_where_the_config_file_flag_points() -> None:
    p = pod()
    [mount] = p["spec"]["containers"][0]["volumeMounts"]
    [volume] = p["spec"]["volumes"]
    assert volume == {
        "name": mount["name"],
        "configMap": {"name": objects()["epp-config"]["metadata"]["name"]},
    }
    assert f"--config-file={mount['mountPath']}/epp-config.yaml" in epp()["args"]


# --- deployment, service, rbac ------------------------------------------------------------


def test_picker_runs_more_than_one_replica() -> None:
    assert objects()["epp-deployment"]["spec"]["replicas"] >= 2


def test_a_picker_rollout_keeps_every_ready_picker_until_its_successor_is_ready() -> None:
    # A Deployment rolling update keeps at least replicas - maxUnavailable pods available and
    # adds at most maxSurge: with 0 unavailable and a surge, a ready picker is always there.
    spec = objects()["epp-deployment"]["spec"]
    assert spec["strategy"]["type"] == "RollingUpdate"
    rolling = spec["strategy"]["rollingUpdate"]
    assert spec["replicas"] - rolling["maxUnavailable"] >= 1
    assert rolling["maxSurge"] >= 1


def test_a_drain_evicts_one_picker_at_a_time_and_never_waits_on_a_broken_one() -> None:
    budget = objects()["epp-disruption-budget"]
    deployment = objects()["epp-deployment"]
    assert budget["kind"] == "PodDisruptionBudget"
    assert 1 <= budget["spec"]["minAvailable"] < deployment["spec"]["replicas"]
    assert budget["spec"]["selector"] == deployment["spec"]["selector"]
    assert budget["spec"]["unhealthyPodEvictionPolicy"] == "AlwaysAllow"


def test_picker_probes_are_grpc_on_the_health_port() -> None:
    c = epp()
    for probe in ("readinessProbe", "livenessProbe"):
        assert c[probe]["grpc"] == {"port": 9003, "service": "inference-extension"}


def test_picker_exposes_ext_proc_health_and_metrics_ports() -> None:
    assert [(p["name"], p["containerPort"]) for p in epp()["ports"]] == [
        ("grpc", 9002),
        ("grpc-health", 9003),
        ("metrics", 9090),
    ]


def test_service_serves_ext_proc_over_http2_and_metrics() -> None:
    svc = objects()["epp-service"]
    assert [(p["name"], p["port"], p.get("appProtocol")) for p in svc["spec"]["ports"]] == [
        ("grpc-ext-proc", 9002, "http2"),
        ("http-metrics", 9090, None),
    ]


def test_deployment_and_service_select_exactly_the_picker_pods() -> None:
    objs = objects()
    pod_labels = objs["epp-deployment"]["spec"]["template"]["metadata"]["labels"]
    assert objs["epp-deployment"]["spec"]["selector"]["matchLabels"] == pod_labels
    assert objs["epp-service"]["spec"]["selector"] == pod_labels
    assert labels.SERVING not in pod_labels


def test_picker_runs_as_its_own_service_account_bound_to_its_role() -> None:
    objs = objects()
    sa = objs["epp-service-account"]["metadata"]["name"]
    assert objs["epp-deployment"]["spec"]["template"]["spec"]["serviceAccountName"] == sa
    binding = objs["epp-role-binding"]
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "Role",
        "name": objs["epp-role"]["metadata"]["name"],
    }
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": sa, "namespace": "ml-team"}]


def test_role_grants_only_reads_of_what_the_picker_watches() -> None:
    assert objects()["epp-role"]["rules"] == [
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]},
        {
            "apiGroups": ["inference.networking.k8s.io"],
            "resources": ["inferencepools"],
            "verbs": ["get", "list", "watch"],
        },
        {
            "apiGroups": ["inference.networking.x-k8s.io", "llm-d.ai"],
            "resources": ["inferenceobjectives", "inferencemodelrewrites"],
            "verbs": ["get", "list", "watch"],
        },
    ]


def test_role_is_namespaced_not_cluster_wide() -> None:
    assert objects()["epp-role"]["kind"] == "Role"
    assert objects()["epp-role-binding"]["kind"] == "RoleBinding"


# --- config checksum ------------------------------------------------------------------------


def checksum_of(replica_obj: Obj) -> str:
    return pod(replica_obj)["metadata"]["annotations"]["modelplane.ai/epp-config-checksum"]


def with_config(cfg: Obj, **container_fields: object) -> Obj:
    return replica(
        serving={
            "router": "EndpointPicker",
            "endpointPicker": {**user_picker(**container_fields), "config": cfg},
        }
    )


def test_checksum_is_the_sha256_of_the_mounted_config() -> None:
    text = objects()["epp-config"]["data"]["epp-config.yaml"]
    assert checksum_of(replica()) == hashlib.sha256(text.encode()).hexdigest()


def test_checksum_changes_when_the_config_changes() -> None:
    changed = {
        **USER_CONFIG,
        "plugins": [{"type": "queue-scorer"}, {"type": "max-score-picker", "parameters": {}}],
    }
    assert checksum_of(with_config(USER_CONFIG)) != checksum_of(with_config(changed))


def test_checksum_changes_between_default_and_user_config() -> None:
    assert checksum_of(with_router()) != checksum_of(with_config(USER_CONFIG))


def test_checksum_changes_with_the_serving_modes_default_config() -> None:
    assert checksum_of(with_router()) != checksum_of(prefill_decode())


def test_checksum_ignores_the_order_of_config_keys() -> None:
    reordered = dict(reversed(list(USER_CONFIG.items())))
    assert checksum_of(with_config(USER_CONFIG)) == checksum_of(with_config(reordered))


def test_checksum_ignores_changes_outside_the_config() -> None:
    assert checksum_of(with_config(USER_CONFIG)) == checksum_of(
        with_config(USER_CONFIG, args=["--v=5"], image="registry.example.com/epp:v2")
    )


# --- readiness ------------------------------------------------------------------------------


def test_picker_deployment_is_ready_only_when_available() -> None:
    obj = routing.compose_routing(context())["epp-deployment"]
    assert obj["spec"]["readiness"]["policy"] == "DeriveFromCelQuery"
    assert simulate.observe(obj, 0)["status"]["conditions"][0]["status"] == "False"
    assert simulate.observe(obj, 1)["status"]["conditions"][0]["status"] == "True"


@pytest.mark.parametrize(
    "status",
    [
        None,
        {},
        {"replicas": 1, "unavailableReplicas": 1},
        {"availableReplicas": 0, "conditions": [{"type": "Available", "status": "False"}]},
        {"conditions": [{"type": "Available", "status": "True"}]},
    ],
    ids=["no-status", "empty", "unavailable", "none-available", "no-available-pods"],
)
def test_picker_readiness_query_is_false_not_an_error_before_it_is_available(
    status: Obj | None,
) -> None:
    remote: Obj = {"kind": "Deployment", "metadata": {"generation": 1}}
    if status is not None:
        remote["status"] = status
    assert simulate.evaluate(picker.AVAILABLE_QUERY, remote) is False


def test_other_picker_objects_are_ready_once_created_remotely() -> None:
    objs = routing.compose_routing(context())
    for key in ("epp-service-account", "epp-role", "epp-role-binding", "epp-config", "epp-service"):
        assert objs[key]["spec"]["readiness"] == {"policy": "SuccessfulCreate"}, key


# --- bad input ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("serving", "field"),
    [
        ("PrefillDecode", "spec.serving: Invalid value"),
        ({"port": 0}, "spec.serving.port: Invalid value"),
        ({"port": "8000"}, "spec.serving.port: Invalid value"),
        ({"router": "Nginx"}, "spec.serving.router: Unsupported value"),
        ({"router": "EndpointPicker"}, "spec.serving.endpointPicker: Required value"),
        ({"endpointPicker": user_picker()}, "spec.serving.endpointPicker: Forbidden"),
        (
            {"router": "EndpointPicker", "endpointPicker": {"template": {}}},
            "spec.serving.endpointPicker.template.spec: Required value",
        ),
        (
            {
                "router": "EndpointPicker",
                "endpointPicker": {"template": {"spec": {"containers": []}}},
            },
            "spec.serving.endpointPicker.template.spec.containers: Invalid value",
        ),
        (
            {
                "router": "EndpointPicker",
                "endpointPicker": {
                    "template": {"spec": {"containers": [{"name": "picker", "image": "x"}]}}
                },
            },
            "spec.serving.endpointPicker.template.spec.containers[0].name: Invalid value",
        ),
        (
            {
                "router": "EndpointPicker",
                "endpointPicker": {"template": {"spec": {"containers": [{"name": "epp"}]}}},
            },
            "spec.serving.endpointPicker.template.spec.containers[0].image: Required value",
        ),
        (
            {"router": "EndpointPicker", "endpointPicker": user_picker(args="--v=4")},
            "spec.serving.endpointPicker.template.spec.containers[0].args: Invalid value",
        ),
        (
            {"router": "EndpointPicker", "endpointPicker": {**user_picker(), "config": {}}},
            "spec.serving.endpointPicker.config: Invalid value",
        ),
    ],
)
def test_bad_serving_fails_cleanly_naming_the_field(serving: object, field: str) -> None:
    from modelplane.compose.modelreplica.composer import compose_replica
    from modelplane.composer import Inputs

    composite = replica()
    composite["spec"]["serving"] = serving
    result = compose_replica(Inputs(composite=composite, required={"cluster": [cluster()]}))
    assert result.fatal is not None
    assert result.fatal.startswith(f"ModelReplica is invalid: {field}")
    assert result.resources == {}


def test_valid_serving_has_no_problem() -> None:
    for r in (replica(), with_router(args=["--v=4"]), prefill_decode(config=USER_CONFIG)):
        assert picker.serving_problem(r["spec"]["serving"]) is None


def test_a_config_read_as_a_view_renders_the_text_its_plain_data_does() -> None:
    from modelplane.structs import StructView, dict_to_struct

    shuffled = dict(reversed(list(USER_CONFIG.items())))
    view = StructView(dict_to_struct(shuffled))
    assert picker.render_config(view) == picker.render_config(USER_CONFIG)
