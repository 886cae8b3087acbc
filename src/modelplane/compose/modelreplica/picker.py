"""The replica's endpoint picker (EPP): the llm-d-router process the gateway asks where to send
each request, with the RBAC, config and Service it needs.

Without ``serving.router`` Modelplane runs its own pinned picker and scoring config. With
``router: EndpointPicker`` the user's ``epp`` container and config replace those, and Modelplane
adds only the wiring a user cannot know: the pool's hashed name, the namespace, the config file
path, ports, RBAC and the Service.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import json
from collections.abc import Mapping
from typing import Any

import yaml
from google.protobuf import struct_pb2

from modelplane.compose.modelreplica.context import ReplicaContext
from modelplane.compose.modelreplica.labelsets import component, component_pod, deployment_of, owned
from modelplane.compose.modelreplica.remote import wrap
from modelplane.compose.shared import pickerversions
from modelplane.compose.shared.endpointpicker import (
    DEFAULT_IMAGE,
    PLACEMENT,
    PREFILL_DECODE_CONFIG,
    UNIFIED_CONFIG,
)
from modelplane.compose.shared.frontdoor import POOL_GROUP
from modelplane.compose.shared.remote import cel_readiness
from modelplane.kube import objects
from modelplane.kube.objects import Obj
from modelplane.structs import ListView, StructView, frozen, struct_to_dict

CONTAINER = "epp"
COMPONENT = "endpoint-picker"

EXT_PROC_PORT = 9002
HEALTH_PORT = 9003
METRICS_PORT = 9090
CONFIG_DIR = "/config"
CONFIG_FILE = "epp-config.yaml"
CONFIG_VOLUME = "epp-config"
CHECKSUM_ANNOTATION = "modelplane.ai/epp-config-checksum"
# The reason of the Warning event for a picker image of no readable release.
UNKNOWN_RELEASE = "PickerReleaseUnknown"

SERVICE_ACCOUNT_KEY = "epp-service-account"
ROLE_KEY = "epp-role"
ROLE_BINDING_KEY = "epp-role-binding"
CONFIG_KEY = "epp-config"
DEPLOYMENT_KEY = "epp-deployment"
SERVICE_KEY = "epp-service"
DISRUPTION_BUDGET_KEY = "epp-disruption-budget"
KEYS = (
    SERVICE_ACCOUNT_KEY,
    ROLE_KEY,
    ROLE_BINDING_KEY,
    CONFIG_KEY,
    DEPLOYMENT_KEY,
    SERVICE_KEY,
    DISRUPTION_BUDGET_KEY,
)

# Every request of the replica passes through a picker (the gateway's ext_proc filter fails
# closed), so two run side by side, each able to route on its own.
REPLICAS = 2

RULES = frozen(
    [
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]},
        {
            "apiGroups": [POOL_GROUP],
            "resources": ["inferencepools"],
            "verbs": ["get", "list", "watch"],
        },
        {
            "apiGroups": ["inference.networking.x-k8s.io", "llm-d.ai"],
            "resources": ["inferenceobjectives", "inferencemodelrewrites"],
            "verbs": ["get", "list", "watch"],
        },
    ]
)
"""The picker's Role: least privilege, read what it watches and nothing else. It reads
objectives and model rewrites from both the old GAIE group and llm-d's; a missing rule makes it
log forbidden errors or crashloop."""


# Available means at least one picker passes its gRPC readiness probe: one is enough to route.
# The has() guards keep the query false, not an error, before the remote object reports status.
AVAILABLE_QUERY = (
    "has(object.status) && has(object.status.availableReplicas)"
    " && object.status.availableReplicas >= 1"
)


def compose_picker(ctx: ReplicaContext, *, name: str, pool: str) -> dict[str, Obj]:
    """The picker's objects (composition resource name -> wrapped Object), all named ``name``."""
    ns = ctx.namespace
    config = config_text(ctx)

    # Every object shares one name, so one metadata (frozen: written to each, built once).
    meta: Obj = frozen({"name": name, "namespace": ns, "labels": owned(ctx.name)})

    manifests: dict[str, Obj] = {
        SERVICE_ACCOUNT_KEY: {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta},
        ROLE_KEY: {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": meta,
            "rules": RULES,
        },
        ROLE_BINDING_KEY: {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": meta,
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
            "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": ns}],
        },
        CONFIG_KEY: {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": meta,
            "data": {CONFIG_FILE: config},
        },
        DEPLOYMENT_KEY: _deployment(ctx, meta, pool, config),
        SERVICE_KEY: _service(ctx, meta),
        DISRUPTION_BUDGET_KEY: _disruption_budget(ctx, meta),
    }
    readiness = {DEPLOYMENT_KEY: cel_readiness(AVAILABLE_QUERY)}
    return {key: wrap(ctx, key, m, readiness=readiness.get(key)) for key, m in manifests.items()}


def config_text(ctx: ReplicaContext) -> str:
    """The EndpointPickerConfig file: the user's, else the default for the serving mode."""
    user = _picker(ctx).get("config")
    if user:
        return render_config(user)
    return PREFILL_DECODE_CONFIG if ctx.mode == "PrefillDecode" else UNIFIED_CONFIG


def render_config(config: Mapping[str, Any]) -> str:
    # Keys sorted: a Struct round trip does not keep map order, and the text (hence the
    # checksum, hence the picker's rollout) must change only when the config does.
    if isinstance(config, StructView):  # as the function reads it: digest the protobuf
        return _render_struct(config.struct.SerializeToString(deterministic=True))
    return _render(_CANONICAL.encode(config))


@functools.lru_cache(maxsize=64)
def _render_struct(serialized: bytes) -> str:
    return render_config(struct_to_dict(struct_pb2.Struct.FromString(serialized)))


@functools.lru_cache(maxsize=64)
def _render(canonical: str) -> str:
    return yaml.dump(json.loads(canonical), Dumper=_DUMPER, sort_keys=True)


_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"))


def checksum(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def wiring_args(ctx: ReplicaContext, pool: str) -> list[tuple[str, str]]:
    """The flags Modelplane supplies, as (flag, value): each is appended only if absent."""
    return [
        ("--pool-name", pool),
        ("--pool-namespace", ctx.namespace),
        ("--pool-group", POOL_GROUP),
        ("--config-file", f"{CONFIG_DIR}/{CONFIG_FILE}"),
        ("--grpc-port", str(EXT_PROC_PORT)),
        ("--grpc-health-port", str(HEALTH_PORT)),
        ("--metrics-port", str(METRICS_PORT)),
        # Modelplane grants no tokenreviews/subjectaccessreviews, so an authenticated metrics
        # endpoint would reject every scrape.
        ("--metrics-endpoint-auth", "false"),
        # Tracing is on by default and exports to an OTLP collector Modelplane does not run.
        ("--tracing", "false"),
    ]


# A flag the user set in another spelling that makes ours conflict, not just duplicate.
_EXCLUSIVE = {"--config-file": ("--config-text",)}


def merge_args(user: list[str], wiring: list[tuple[str, str]]) -> list[str]:
    """The user's args verbatim, then each wiring flag the user did not set (in any spelling)."""
    given = {a.split("=", 1)[0] for a in user if a.startswith("-")}
    given |= {"--" + f.lstrip("-") for f in given}  # -flag and --flag are the same to Go
    args = list(user)
    for flag, value in wiring:
        if flag in given or any(x in given for x in _EXCLUSIVE.get(flag, ())):
            continue
        args.append(f"{flag}={value}")
    return args


def serving_problem(serving: Any) -> str | None:
    """The first problem in ``spec.serving`` that routing would trip on, or None.

    The XRD rejects all of these; this is the backstop that turns a hand-made replica into a
    Fatal result naming the field instead of a KeyError.
    """
    path = "spec.serving"
    if serving is None:
        return None
    if not isinstance(serving, Mapping):
        return f"{path}: Invalid value: must be an object"
    port = serving.get("port")
    if port is not None and (
        isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536
    ):
        return f"{path}.port: Invalid value: {port!r}: must be between 1 and 65535"
    router = serving.get("router")
    if router is None:
        if serving.get("endpointPicker") is not None:
            return (
                f"{path}.endpointPicker: Forbidden: "
                "may only be set when serving.router is EndpointPicker"
            )
        return None
    if router != "EndpointPicker":
        return f'{path}.router: Unsupported value: {router!r}: supported values: "EndpointPicker"'
    return _picker_problem(serving.get("endpointPicker"), path)


def _picker_problem(picker: Any, path: str) -> str | None:
    """``spec.serving.endpointPicker`` of a replica whose router is the EndpointPicker."""
    if not isinstance(picker, Mapping):
        return f"{path}.endpointPicker: Required value: serving.router EndpointPicker needs it"
    spec = objects.dig(picker, "template", "spec")
    if not isinstance(spec, Mapping):
        return f"{path}.endpointPicker.template.spec: Required value"
    containers = spec.get("containers")
    if not isinstance(containers, list) or len(containers) != 1:
        return (
            f"{path}.endpointPicker.template.spec.containers: Invalid value: exactly one container"
        )
    config = picker.get("config")
    if config is not None and (not isinstance(config, Mapping) or not config):
        return f"{path}.endpointPicker.config: Invalid value: must be a non-empty object"
    cpath = f"{path}.endpointPicker.template.spec.containers[0]"
    return _container_problem(containers[0], cpath, config)


def _container_problem(c: Any, cpath: str, config: Any) -> str | None:
    if not isinstance(c, Mapping) or c.get("name") != CONTAINER:
        return f"{cpath}.name: Invalid value: the endpoint picker's container must be named 'epp'"
    if not isinstance(c.get("image"), str) or not c["image"]:
        return f"{cpath}.image: Required value"
    for field in ("command", "args", "env"):
        if c.get(field) is not None and not isinstance(c[field], (list, ListView)):
            return f"{cpath}.{field}: Invalid value: must be a list"
    if not all(isinstance(a, str) for a in c.get("args") or ()):
        return f"{cpath}.args: Invalid value: every argument must be a string"
    # A picker that cannot read what Modelplane writes crash-loops, and the gateway then fails
    # every request of the replica: refuse it here, naming the field.
    why = pickerversions.too_old(c["image"], config)
    if why is not None:
        return f"{cpath}.image: Invalid value: {c['image']!r}: {why}"
    return None


def image_warnings(serving: Any, at: str = "spec") -> list[str]:
    """``path: message`` when the user's picker image is an llm-d picker of no readable release
    (``latest``, a digest): admitted, since it may well be new enough, but not judged."""
    picker = objects.mapping(serving, "endpointPicker")
    if objects.dig(serving, "router") != "EndpointPicker" or not picker:
        return []
    containers = objects.dig(picker, "template", "spec", "containers") or ()
    path = f"{at}.serving.endpointPicker.template.spec.containers[0].image"
    found = [
        pickerversions.unknown_release(str(c.get("image")), picker.get("config"))
        for c in containers[:1]
    ]
    return [f"{path}: {w}" for w in found if w]


def _picker(ctx: ReplicaContext) -> Obj:
    if ctx.serving.get("router") != "EndpointPicker":
        return {}
    return ctx.serving.get("endpointPicker") or {}


def _user_container(ctx: ReplicaContext) -> Obj:
    """The user's ``epp`` container; {} when Modelplane runs its own picker."""
    containers = objects.mapping(_picker(ctx), "template", "spec").get("containers", [])
    return next((c for c in containers if c.get("name") == CONTAINER), None) or {}


def image(ctx: ReplicaContext) -> str:
    """The image the replica's picker runs: the user's ``epp`` container's, else Modelplane's."""
    return str(_user_container(ctx).get("image") or DEFAULT_IMAGE)


def _deployment(ctx: ReplicaContext, meta: Obj, pool: str, config: str) -> Obj:
    spec = objects.mapping(_picker(ctx), "template", "spec")
    user = _user_container(ctx)
    container: Obj = {"name": CONTAINER, "image": image(ctx)}
    if user.get("command"):
        container["command"] = list(user["command"])
    container["args"] = merge_args(list(user.get("args", [])), wiring_args(ctx, pool))
    container["env"] = _env(list(user.get("env", [])))
    container["ports"] = _PORTS
    container["readinessProbe"] = _READINESS_PROBE
    container["livenessProbe"] = _LIVENESS_PROBE
    container["resources"] = user.get("resources") or _RESOURCES
    container["volumeMounts"] = _CONFIG_MOUNTS

    selector = component(ctx.name, COMPONENT)
    pod_spec: Obj = {
        "serviceAccountName": meta["name"],
        # Lets the picker drain in-flight ext-proc streams, as upstream's chart does.
        "terminationGracePeriodSeconds": 130,
        "containers": [container],
        "volumes": [{"name": CONFIG_VOLUME, "configMap": {"name": meta["name"]}}],
    }
    if spec.get("imagePullSecrets"):
        pod_spec["imagePullSecrets"] = spec["imagePullSecrets"]
    pod_spec.update(copy.deepcopy(dict(PLACEMENT)))
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": meta,
        "spec": {
            "replicas": REPLICAS,
            # A new picker is ready before an old one goes: routing never pauses for a rollout.
            "strategy": _SURGE_ONE,
            "selector": {"matchLabels": selector},
            "template": {
                "metadata": {
                    # Its selector's labels, and the deployment's for its metrics' series.
                    "labels": component_pod(ctx.name, COMPONENT, *deployment_of(ctx.replica)),
                    # The picker reads its config only at startup: a new checksum rolls it.
                    "annotations": {CHECKSUM_ANNOTATION: checksum(config)},
                },
                "spec": pod_spec,
            },
        },
    }


_SURGE_ONE = frozen(
    {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}
)
# llm-d-router's chart requests 8 CPUs and 8Gi for its one picker (config/charts/routerlib,
# v0.10.0); two share the load here. No CPU limit: scoring is bursty.
_RESOURCES = frozen({"requests": {"cpu": "4", "memory": "8Gi"}, "limits": {"memory": "16Gi"}})
_PORTS = frozen(
    [
        {"name": "grpc", "containerPort": EXT_PROC_PORT, "protocol": "TCP"},
        {"name": "grpc-health", "containerPort": HEALTH_PORT, "protocol": "TCP"},
        {"name": "metrics", "containerPort": METRICS_PORT, "protocol": "TCP"},
    ]
)
# Without leader election every picker reports one gRPC health service for both probes.
_HEALTH = {"port": HEALTH_PORT, "service": "inference-extension"}
_READINESS_PROBE = frozen({"grpc": _HEALTH, "periodSeconds": 2})
_LIVENESS_PROBE = frozen({"grpc": _HEALTH, "initialDelaySeconds": 5, "periodSeconds": 10})
_CONFIG_MOUNTS = frozen([{"name": CONFIG_VOLUME, "mountPath": CONFIG_DIR, "readOnly": True}])

# The picker finds its own namespace and pod name through the downward API.
_DOWNWARD_ENV = frozen(
    [
        {"name": n, "valueFrom": {"fieldRef": {"fieldPath": path}}}
        for n, path in (("NAMESPACE", "metadata.namespace"), ("POD_NAME", "metadata.name"))
    ]
)


def _env(user: list[Obj]) -> list[Obj]:
    if not user:
        return _DOWNWARD_ENV
    names = {e.get("name") for e in user}
    return user + [e for e in _DOWNWARD_ENV if e["name"] not in names]


def _service(ctx: ReplicaContext, meta: Obj) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": meta,
        "spec": {
            "type": "ClusterIP",
            "selector": component(ctx.name, COMPONENT),
            "ports": _SERVICE_PORTS,
        },
    }


def _disruption_budget(ctx: ReplicaContext, meta: Obj) -> Obj:
    # A drain takes one picker at a time; a picker that is not ready may always go, so a
    # crashlooping one never blocks a node drain.
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": meta,
        "spec": {
            "minAvailable": 1,
            "selector": {"matchLabels": component(ctx.name, COMPONENT)},
            "unhealthyPodEvictionPolicy": "AlwaysAllow",
        },
    }


_SERVICE_PORTS = frozen(
    [
        {
            "name": "grpc-ext-proc",
            "port": EXT_PROC_PORT,
            "targetPort": EXT_PROC_PORT,
            "protocol": "TCP",
            # The gateway speaks gRPC (HTTP/2) to the picker.
            "appProtocol": "http2",
        },
        {
            "name": "http-metrics",
            "port": METRICS_PORT,
            "targetPort": METRICS_PORT,
            "protocol": "TCP",
        },
    ]
)
