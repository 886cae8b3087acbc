"""The serving stack's components: what each installs, at which tested version, with which values.

Each component is Managed (installed: its Releases and Objects) or External (the cluster's own,
observed: an observe-only Object on the API it provides, never created, changed or deleted).
Some objects are Modelplane's own configuration of a component and are composed in both modes:
the KAI queue the replicas' gangs are labelled into, the PodMonitors that scrape the pickers
and engines. Chart values are checked against each chart's published ``values.yaml`` at the
pinned version; docs/design/serving-stack.md records why each is set.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from modelplane.compose.inferencecluster.crds import inference_objective_crd, inference_pool_crd
from modelplane.compose.inferencecluster.releases import (
    CRD_ESTABLISHED,
    Chart,
    observed_crd,
    release,
    stack_object,
)
from modelplane.compose.inferencecluster.target import Setting, Target
from modelplane.compose.shared.frontdoor import CALLER_HEADER, POOL_GROUP
from modelplane.compose.shared.gpu_taint import GPU_TAINT_KEY
from modelplane.compose.shared.remote import NEVER_DELETE, OBSERVE_ONLY, cel_readiness
from modelplane.kube.objects import Obj
from modelplane.labels import (
    COMPONENT,
    DEPLOYMENT,
    DEPLOYMENT_NAMESPACE,
    LLMD_ROLE,
    MANAGED_BY,
    REPLICA,
    SERVING,
)

STANDARD = "Standard"
DYNAMO = "Dynamo"

# What the replicas rely on, stated once here; tests/compose/inferencecluster/test_wiring.py
# renders a cluster and a replica together and checks each against what the replica composes.
EG_CONTROLLER = "gateway.envoyproxy.io/gatewayclass-controller"
EG_NAMESPACE = "envoy-gateway-system"
AI_GATEWAY_NAMESPACE = "envoy-ai-gateway-system"
AI_GATEWAY_CONTROLLER = "ai-gateway-controller"
AI_GATEWAY_EXTENSION_PORT = 1063
AI_GATEWAY_EXTPROC_METRICS_PORT = "aigw-admin"
"""The port the AI Gateway names on the external processor it injects into Envoy's pods."""
CALLER_METRIC_LABEL = "caller"
"""The gen_ai metrics' attribute (and Prometheus label) holding the authenticated caller."""
POOL_VERSION = "v1"
DRA_NAMESPACE = "dra-driver-nvidia-gpu"
DRA_DEVICE_CLASS = "gpu.nvidia.com"
GANG_SCHEDULER = "kai-scheduler"
KAI_QUEUE_LABEL = "kai.scheduler/queue"
KAI_ROOT_QUEUE = "modelplane-root"
KAI_QUEUE = "modelplane"
PICKER_COMPONENT = "endpoint-picker"
PICKER_METRICS_PORT = "metrics"
ENGINE_METRICS_PORT = "http"

# Composition resource names.
CERT_MANAGER = "cert-manager"
ENVOY_GATEWAY = "envoy-gateway"
AI_GATEWAY_CRDS = "envoy-ai-gateway-crds"
AI_GATEWAY = "envoy-ai-gateway"
POOL_CRD = "inference-pool-crd"
OBJECTIVE_CRD = "inference-objective-crd"
NFD = "node-feature-discovery"
DRA = "nvidia-dra-driver"
DRA_QUOTA = "nvidia-dra-driver-quota"
LWS = "leaderworkerset"
GROVE = "grove"
KAI = "kai-scheduler"
KAI_ROOT_QUEUE_KEY = "kai-queue-root"
KAI_QUEUE_KEY = "kai-queue"
PROMETHEUS = "prometheus"
GATEWAY_API_BUNDLE = "gateway-api-bundle"
GATEWAY_API_CRD = "gateways.gateway.networking.k8s.io"
PICKER_MONITOR = "podmonitor-endpoint-pickers"
ENGINE_MONITOR = "podmonitor-engines"
GATEWAY_MONITOR = "podmonitor-gateway"
RATE_LIMIT_REDIS = "envoy-gateway-ratelimit-redis"
RATE_LIMIT_REDIS_SERVICE = "envoy-gateway-ratelimit-redis-service"
RATE_LIMIT_REDIS_POLICY = "envoy-gateway-ratelimit-redis-policy"

REDIS_NAME = "modelplane-ratelimit-redis"
"""The Redis Deployment and Service on the cluster: never Envoy Gateway's own ``envoy-ratelimit``
name or labels (its rate-limit infra selects by them)."""
REDIS_PORT = 6379
RATE_LIMIT_SERVICE_LABELS = {
    "app.kubernetes.io/name": "envoy-ratelimit",
    "app.kubernetes.io/component": "ratelimit",
    "app.kubernetes.io/managed-by": "envoy-gateway",
}
"""The labels of Envoy Gateway's own rate-limit service pods: the only clients of the Redis."""
REDIS_IMAGE = "redis:6.0.6"
"""The image Envoy Gateway v1.8.1's global-rate-limit task and examples/redis/redis.yaml run
(tests/conformance/test_envoy_rate_limit_backend.py)."""


@dataclass(frozen=True)
class Component:
    name: str
    """As status and the StackReady condition name it."""
    field: str
    """Its block under spec.servingStack."""
    version: str
    """The tested default, overridden by the block's version."""
    charts: tuple[Chart, ...] = ()
    stacks: tuple[str, ...] = (STANDARD, DYNAMO)
    values: Callable[[Target, Setting, Chart], Obj] = lambda _t, _s, _c: {}
    extra: Callable[[Target, Setting], dict[str, Obj]] = lambda _t, _s: {}
    """Further objects a Managed install composes (a CRD, a ResourceQuota)."""
    config: Callable[[Target, Setting], dict[str, Obj]] = lambda _t, _s: {}
    """Modelplane's own objects for the component, composed Managed or External."""
    probe: Callable[[Target, str], dict[str, Obj]] = lambda _t, _n: {}
    """What an External install is observed by."""
    outlives: tuple[tuple[str, str], ...] = ()
    """(of, by) composition resource names: ``of`` is deleted only once ``by`` is gone."""

    def resources(self, t: Target) -> dict[str, Obj]:
        setting = t.setting(self.field, self.version)
        out = dict(self.config(t, setting))
        if not setting.managed:
            out.update(self.probe(t, self.name))
            return out
        for chart in self.charts:
            values = self.values(t, setting, chart)
            out[chart.key] = release(t, self.name, chart, setting.version, values)
        out.update(self.extra(t, setting))
        return out


def _crd_probe(crd: str) -> Callable[[Target, str], dict[str, Obj]]:
    def probe(t: Target, name: str) -> dict[str, Obj]:
        key = f"{name}-observed"
        return {key: observed_crd(t, name, key, crd)}

    return probe


def _cert_manager_values(_t: Target, _s: Setting, _c: Chart) -> Obj:
    # CRDs come with the chart and stay when it is uninstalled (deleting them would delete
    # every Certificate on the cluster, the user's too). A Certificate's Secret is owned by it,
    # so removing the fleet Certificate removes its key. Gateway API support is off by default
    # and the front door's HTTP-01 solver (gatewayHTTPRoute) needs it: the chart writes
    # ``config`` as the controller's ControllerConfiguration (prerequisites.py: it then needs
    # the Gateway API CRDs before it starts).
    return {
        "crds": {"enabled": True, "keep": True},
        "enableCertificateOwnerRef": True,
        "config": {"gatewayAPI": {"enabled": True}},
    }


def _envoy_gateway_values(t: Target, _s: Setting, _c: Chart) -> Obj:
    # Envoy AI Gateway's base values (manifests/envoy-gateway-values.yaml) plus its InferencePool
    # add-on (examples/inference-pool/envoy-gateway-values-addon.yaml): the extension server gets
    # every listener, route, cluster and secret, and InferencePool becomes a backend kind.
    translation = {k: {"includeAll": True} for k in ("listener", "route", "cluster", "secret")}
    return {
        "config": {
            "envoyGateway": {
                "gateway": {"controllerName": EG_CONTROLLER},
                "provider": {"type": "Kubernetes"},
                "logging": {"level": {"default": "info"}},
                "extensionApis": {"enableEnvoyPatchPolicy": True, "enableBackend": True},
                "extensionManager": {
                    "hooks": {
                        "xdsTranslator": {
                            "translation": translation,
                            "post": ["Translation", "Cluster", "Route"],
                        }
                    },
                    "service": {
                        "fqdn": {
                            "hostname": ai_gateway_controller_host(),
                            "port": AI_GATEWAY_EXTENSION_PORT,
                        }
                    },
                    "backendResources": [
                        {"group": POOL_GROUP, "kind": "InferencePool", "version": POOL_VERSION}
                    ],
                },
                **_rate_limit_backend(t),
            }
        }
    }


def _rate_limit_backend(t: Target) -> Obj:
    """The EnvoyGateway ``rateLimit`` naming the Redis below, when a hosted gateway needs one:
    Envoy Gateway then deploys its rate-limit service (``envoy-ratelimit``) itself."""
    if not t.rate_limits:
        return {}
    url = f"{REDIS_NAME}.{EG_NAMESPACE}.svc.cluster.local:{REDIS_PORT}"
    return {"rateLimit": {"backend": {"type": "Redis", "redis": {"url": url}}}}


def _rate_limit_redis(t: Target, _s: Setting) -> dict[str, Obj]:
    # One replica, no persistence, the layout of Envoy Gateway's global-rate-limit task: it holds
    # per-minute counters only, and a restart forgives at most a minute's spending.
    if not t.rate_limits:
        return {}
    labels = {"app.kubernetes.io/name": REDIS_NAME, MANAGED_BY: "modelplane"}
    meta = {"name": REDIS_NAME, "namespace": EG_NAMESPACE, "labels": labels}
    container = {
        "name": "redis",
        "image": REDIS_IMAGE,
        "ports": [{"name": "redis", "containerPort": REDIS_PORT}],
        "resources": {
            "requests": {"cpu": "200m", "memory": "256Mi"},
            "limits": {"cpu": "1500m", "memory": "512Mi"},
        },
    }
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": meta,
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels}, "spec": {"containers": [container]}},
        },
    }
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": meta,
        "spec": {
            "selector": labels,
            "ports": [{"name": "redis", "port": REDIS_PORT, "targetPort": REDIS_PORT}],
        },
    }
    # The Redis has no password: only Envoy Gateway's rate-limit service may reach it, so no
    # other pod can reset a caller's counters (where the cluster's network enforces policies).
    policy = {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": meta,
        "spec": {
            "podSelector": {"matchLabels": labels},
            "policyTypes": ["Ingress"],
            "ingress": [
                {
                    "from": [{"podSelector": {"matchLabels": dict(RATE_LIMIT_SERVICE_LABELS)}}],
                    "ports": [{"protocol": "TCP", "port": REDIS_PORT}],
                }
            ],
        },
    }
    name = ENVOY_GATEWAY_COMPONENT.name
    return {
        RATE_LIMIT_REDIS: stack_object(t, name, RATE_LIMIT_REDIS, deployment),
        RATE_LIMIT_REDIS_SERVICE: stack_object(t, name, RATE_LIMIT_REDIS_SERVICE, service),
        RATE_LIMIT_REDIS_POLICY: stack_object(t, name, RATE_LIMIT_REDIS_POLICY, policy),
    }


def ai_gateway_controller_host() -> str:
    return f"{AI_GATEWAY_CONTROLLER}.{AI_GATEWAY_NAMESPACE}.svc.cluster.local"


def _ai_gateway_values(_t: Target, _s: Setting, chart: Chart) -> Obj:
    if chart.key == AI_GATEWAY_CRDS:
        return {}
    # The controller's Service is the extension server Envoy Gateway dials; the chart also binds
    # Envoy Gateway's ServiceAccount (in envoyGateway.namespace) to read InferencePools, without
    # which Envoy Gateway's caches never sync and it never becomes ready.
    # The controller passes metricsRequestHeaderAttributes to the external processor it injects
    # into Envoy's pods, which adds the header's value to each gen_ai metric as an attribute: the
    # caller the gateway authenticated becomes a `caller` label on every token and request series.
    return {
        "controller": {
            "fullnameOverride": AI_GATEWAY_CONTROLLER,
            "metricsRequestHeaderAttributes": f"{CALLER_HEADER}:{CALLER_METRIC_LABEL}",
        },
        "envoyGateway": {"namespace": EG_NAMESPACE},
    }


def _pool_crd(t: Target, s: Setting) -> dict[str, Obj]:
    # Never deleted: removing a CRD removes every InferencePool (InferenceObjective) on the
    # cluster, anyone's. The objective CRD is part of the stack so that StackReady, which
    # replicas are placed behind, waits for it: a picker looks for the llm-d.ai group once, at
    # its start (llm-d-router v0.10.0 pkg/epp/server/controller_config.go). It carries no
    # inference-extension bundle annotation, so the stack's waves do not read it as a version.
    return {
        key: stack_object(
            t,
            INFERENCE_EXTENSION.name,
            key,
            crd,
            readiness=cel_readiness(CRD_ESTABLISHED),
            management_policies=list(NEVER_DELETE),
        )
        for key, crd in (
            (POOL_CRD, inference_pool_crd(s.version)),
            (OBJECTIVE_CRD, inference_objective_crd()),
        )
    }


def _nfd_values(_t: Target, _s: Setting, _c: Chart) -> Obj:
    # GPU nodes are commonly tainted nvidia.com/gpu; a worker kept off them never labels them
    # pci-10de, and the DRA driver's kubelet plugin (node affinity on that label) never starts.
    return {"worker": {"tolerations": [{"key": GPU_TAINT_KEY, "operator": "Exists"}]}}


# Node Feature Discovery (v0.19.0, source/pci/pci.go) labels every device of a class under "03"
# by class and vendor: pci-<class>_10de.present. The chart's kubelet-plugin affinity (v0.4.1)
# names 0300 and 0302 only, so a GPU presenting as 0301 (XGA) or 0380 (other display controller)
# would get no plugin; this names every display class, and keeps the chart's other terms.
_NVIDIA_DISPLAY_CLASSES = ("0300", "0301", "0302", "0380")
_DRA_PLUGIN_NODES = [
    ("feature.node.kubernetes.io/pci-10de.present", "true"),
    *(
        (f"feature.node.kubernetes.io/pci-{c}_10de.present", "true")
        for c in _NVIDIA_DISPLAY_CLASSES
    ),
    ("feature.node.kubernetes.io/cpu-model.vendor_id", "NVIDIA"),  # Tegra
    ("nvidia.com/gpu.present", "true"),  # labelled by the GPU Operator
]


def _dra_values(_t: Target, s: Setting, _c: Chart) -> Obj:
    # GPU allocation is off in the chart until overridden; ComputeDomains (multi-node NVLink
    # through IMEX) need hardware and daemons Modelplane does not manage.
    terms = [
        {"matchExpressions": [{"key": key, "operator": "In", "values": [value]}]}
        for key, value in _DRA_PLUGIN_NODES
    ]
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}
        }
    }
    values: Obj = {
        "gpuResourcesEnabledOverride": True,
        "resources": {"gpus": {"enabled": True}, "computeDomains": {"enabled": False}},
        "kubeletPlugin": {"affinity": affinity},
    }
    root = str(s.spec.get("driverRoot") or "/")
    if root != "/":
        values["nvidiaDriverRoot"] = root
    return values


def _dra_quota(t: Target, _s: Setting) -> dict[str, Obj]:
    # The kubelet plugin runs at system-node-critical priority; clusters that admit critical
    # pods only where a quota allows them (GKE among them) need this quota in its namespace.
    quota = {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {"name": "allow-critical-pods", "namespace": DRA_NAMESPACE},
        "spec": {
            "hard": {"pods": "1G"},
            "scopeSelector": {
                "matchExpressions": [
                    {
                        "operator": "In",
                        "scopeName": "PriorityClass",
                        "values": ["system-node-critical", "system-cluster-critical"],
                    }
                ]
            },
        },
    }
    return {DRA_QUOTA: stack_object(t, NVIDIA_DRA_DRIVER.name, DRA_QUOTA, quota)}


def _dra_probe(t: Target, name: str) -> dict[str, Obj]:
    key = f"{name}-observed"
    device_class = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": DRA_DEVICE_CLASS},
    }
    return {key: stack_object(t, name, key, device_class, management_policies=OBSERVE_ONLY)}


def _grove_values(_t: Target, _s: Setting, _c: Chart) -> Obj:
    # The replicas' gangs name kai-scheduler; Grove only hands gangs to a listed backend.
    return {
        "config": {
            "scheduler": {"profiles": [{"name": "default-scheduler"}, {"name": GANG_SCHEDULER}]}
        }
    }


def _kai_values(_t: Target, _s: Setting, _c: Chart) -> Obj:
    # The pod grouper reads each gang's queue from this label. KAI would set runtimeClassName
    # nvidia on pods requesting nvidia.com/gpu; a DRA cluster has no such RuntimeClass (the DRA
    # driver injects devices through CDI), so that injection is off.
    return {
        "podgrouper": {"queueLabelKey": KAI_QUEUE_LABEL},
        "admission": {"gpuPodRuntimeClassName": ""},
    }


_UNBOUNDED = {"quota": -1, "limit": -1, "overQuotaWeight": 1}


def _kai_queues(t: Target, _s: Setting) -> dict[str, Obj]:
    # KAI is only the gang admission point: Modelplane's scheduler decides what fits, so the
    # queues bound nothing. Only a leaf queue takes workloads, hence the root above it.
    def queue(key: str, name: str, parent: str | None) -> Obj:
        spec: Obj = {"parentQueue": parent} if parent else {}
        spec["resources"] = {k: dict(_UNBOUNDED) for k in ("cpu", "gpu", "memory")}
        manifest = {
            "apiVersion": "scheduling.run.ai/v2",
            "kind": "Queue",
            "metadata": {"name": name, "labels": {MANAGED_BY: "modelplane"}},
            "spec": spec,
        }
        return stack_object(t, KAI_SCHEDULER.name, key, manifest)

    return {
        KAI_ROOT_QUEUE_KEY: queue(KAI_ROOT_QUEUE_KEY, KAI_ROOT_QUEUE, None),
        KAI_QUEUE_KEY: queue(KAI_QUEUE_KEY, KAI_QUEUE, KAI_ROOT_QUEUE),
    }


CLUSTER_EXTERNAL_LABEL = "cluster"
"""The external label each cluster's Prometheus puts on every series it hands on (to a federation
or remote write): the InferenceCluster's name, so fleet-wide queries tell clusters apart."""


def _prometheus_values(t: Target, _s: Setting, _c: Chart) -> Obj:
    # Every PodMonitor and ServiceMonitor in every namespace is scraped, not only the chart's
    # own; dashboards and alert routing are the platform team's choice, so they stay off.
    spec = {
        "podMonitorSelectorNilUsesHelmValues": False,
        "serviceMonitorSelectorNilUsesHelmValues": False,
        "podMonitorNamespaceSelector": {},
        "serviceMonitorNamespaceSelector": {},
        "externalLabels": {CLUSTER_EXTERNAL_LABEL: t.cluster},
    }
    return {
        "fullnameOverride": "prometheus",
        "grafana": {"enabled": False},
        "alertmanager": {"enabled": False},
        "prometheus": {"prometheusSpec": spec},
    }


POD_TARGET_LABELS = (DEPLOYMENT, DEPLOYMENT_NAMESPACE, REPLICA)
"""The pod labels the engine and picker monitors copy onto every series, as
``modelplane_ai_deployment``, ``modelplane_ai_deployment_namespace`` and ``modelplane_ai_replica``
(Prometheus Operator turns each character a label name cannot hold into ``_``): what a
deployment's fleet-wide queries select by. A pod without one gets no such label."""


def _pod_monitors(t: Target, _s: Setting) -> dict[str, Obj]:
    # In the gateway's namespace, which Modelplane creates, so they exist with an External
    # Prometheus too; each selects its pods in every namespace.
    def monitor(
        name: str, selector: dict[str, str], port: str, path: str, copied: tuple[str, ...] = ()
    ) -> Obj:
        spec: Obj = {
            "namespaceSelector": {"any": True},
            "selector": {"matchLabels": selector},
            "podMetricsEndpoints": [{"port": port, "path": path}],
        }
        if copied:
            spec["podTargetLabels"] = list(copied)
        return {
            "apiVersion": "monitoring.coreos.com/v1",
            "kind": "PodMonitor",
            "metadata": {
                "name": name,
                "namespace": t.gateway.namespace,
                "labels": {MANAGED_BY: "modelplane"},
            },
            "spec": spec,
        }

    pickers = {MANAGED_BY: "modelplane", COMPONENT: PICKER_COMPONENT}
    # Modelplane's own label alone: Grove sets managed-by: grove-operator on its pods.
    engines = {SERVING: "true"}
    proxies = {
        "app.kubernetes.io/component": "proxy",
        "app.kubernetes.io/managed-by": "envoy-gateway",
    }
    specs = {
        PICKER_MONITOR: monitor(
            "modelplane-endpoint-pickers",
            pickers,
            PICKER_METRICS_PORT,
            "/metrics",
            POD_TARGET_LABELS,
        ),
        ENGINE_MONITOR: monitor(
            "modelplane-engines",
            engines,
            ENGINE_METRICS_PORT,
            "/metrics",
            (*POD_TARGET_LABELS, LLMD_ROLE),
        ),
        GATEWAY_MONITOR: monitor("modelplane-gateway", proxies, "metrics", "/stats/prometheus"),
    }
    # The AI Gateway's external processor runs in the same pods and serves its gen_ai metrics
    # (tokens and requests, by model and caller) on its own admin port.
    endpoints = specs[GATEWAY_MONITOR]["spec"]["podMetricsEndpoints"]
    endpoints.append({"port": AI_GATEWAY_EXTPROC_METRICS_PORT, "path": "/metrics"})
    return {k: stack_object(t, PROMETHEUS_STACK.name, k, m) for k, m in specs.items()}


CERT_MANAGER_COMPONENT = Component(
    name="cert-manager",
    field="certManager",
    version="v1.21.1",
    charts=(Chart(CERT_MANAGER, "https://charts.jetstack.io", "cert-manager", "cert-manager"),),
    values=_cert_manager_values,
    probe=_crd_probe("certificates.cert-manager.io"),
)


def _gateway_api_bundle(t: Target, _s: Setting) -> dict[str, Obj]:
    # Helm installs a chart's crds/ only where they do not exist yet, so a cluster that already
    # has Gateway API CRDs keeps its bundle under any Envoy Gateway: observed, Managed or External,
    # and reported when older than what the composed objects need (status.outdated_gateway_api).
    return {
        GATEWAY_API_BUNDLE: observed_crd(t, "envoy-gateway", GATEWAY_API_BUNDLE, GATEWAY_API_CRD)
    }


ENVOY_GATEWAY_COMPONENT = Component(
    name="envoy-gateway",
    field="envoyGateway",
    # The version Envoy AI Gateway v1.1.0's end-to-end suite runs against.
    version="v1.8.1",
    charts=(Chart(ENVOY_GATEWAY, "oci://docker.io/envoyproxy", "gateway-helm", EG_NAMESPACE),),
    values=_envoy_gateway_values,
    extra=_rate_limit_redis,
    config=_gateway_api_bundle,
    probe=_crd_probe("envoyproxies.gateway.envoyproxy.io"),
)
ENVOY_AI_GATEWAY = Component(
    name="envoy-ai-gateway",
    field="envoyAIGateway",
    version="v1.1.0",
    charts=(
        Chart(
            AI_GATEWAY_CRDS,
            "oci://docker.io/envoyproxy",
            "ai-gateway-crds-helm",
            AI_GATEWAY_NAMESPACE,
        ),
        Chart(AI_GATEWAY, "oci://docker.io/envoyproxy", "ai-gateway-helm", AI_GATEWAY_NAMESPACE),
    ),
    values=_ai_gateway_values,
    probe=_crd_probe("aigatewayroutes.aigateway.envoyproxy.io"),
)
INFERENCE_EXTENSION = Component(
    name="inference-extension",
    field="inferenceExtension",
    version="v1.0.2",
    extra=_pool_crd,
    probe=_crd_probe(f"inferencepools.{POOL_GROUP}"),
)
NODE_FEATURE_DISCOVERY = Component(
    name="node-feature-discovery",
    field="nodeFeatureDiscovery",
    version="0.19.0",
    charts=(
        Chart(
            NFD,
            "oci://registry.k8s.io/nfd/charts",
            "node-feature-discovery",
            "node-feature-discovery",
        ),
    ),
    values=_nfd_values,
    probe=_crd_probe("nodefeatures.nfd.k8s-sigs.io"),
)
NVIDIA_DRA_DRIVER = Component(
    name="nvidia-dra-driver",
    field="nvidiaDRADriver",
    version="0.4.1",
    charts=(
        Chart(
            DRA,
            "oci://registry.k8s.io/dra-driver-nvidia/charts",
            "dra-driver-nvidia-gpu",
            DRA_NAMESPACE,
        ),
    ),
    values=_dra_values,
    extra=_dra_quota,
    probe=_dra_probe,
)
LEADER_WORKER_SET = Component(
    name="leaderworkerset",
    field="leaderWorkerSet",
    # LeaderWorkerSet publishes its chart under the release tag, v included
    # (hack/push-chart.sh at v0.10.0); provider-helm compares the strings.
    version="v0.10.0",
    charts=(Chart(LWS, "oci://registry.k8s.io/lws/charts", "lws", "lws-system"),),
    stacks=(STANDARD,),
    probe=_crd_probe("leaderworkersets.leaderworkerset.x-k8s.io"),
)
GROVE_COMPONENT = Component(
    name="grove",
    field="grove",
    version="v0.1.0-alpha.11",
    charts=(Chart(GROVE, "oci://ghcr.io/ai-dynamo/grove", "grove-charts", "grove-system"),),
    stacks=(DYNAMO,),
    values=_grove_values,
    probe=_crd_probe("podcliquesets.grove.io"),
)
KAI_SCHEDULER = Component(
    name="kai-scheduler",
    field="kaiScheduler",
    # The version Grove v0.1.0-alpha.11's end-to-end suite runs against; its pod grouper
    # also groups LeaderWorkerSets (pkg/podgrouper/podgrouper/plugins/leaderworkerset).
    version="v0.15.2",
    charts=(
        Chart(KAI, "oci://ghcr.io/kai-scheduler/kai-scheduler", "kai-scheduler", "kai-scheduler"),
    ),
    values=_kai_values,
    config=_kai_queues,
    probe=_crd_probe("queues.scheduling.run.ai"),
    outlives=((KAI, KAI_ROOT_QUEUE_KEY), (KAI, KAI_QUEUE_KEY)),
)
PROMETHEUS_STACK = Component(
    name="prometheus",
    field="prometheus",
    version="88.5.3",
    charts=(
        Chart(
            PROMETHEUS,
            "https://prometheus-community.github.io/helm-charts",
            "kube-prometheus-stack",
            "monitoring",
        ),
    ),
    values=_prometheus_values,
    config=_pod_monitors,
    probe=_crd_probe("podmonitors.monitoring.coreos.com"),
    outlives=tuple((PROMETHEUS, k) for k in (PICKER_MONITOR, ENGINE_MONITOR, GATEWAY_MONITOR)),
)

INSTALLED = (
    CERT_MANAGER_COMPONENT,
    ENVOY_GATEWAY_COMPONENT,
    ENVOY_AI_GATEWAY,
    INFERENCE_EXTENSION,
    NODE_FEATURE_DISCOVERY,
    NVIDIA_DRA_DRIVER,
    LEADER_WORKER_SET,
    GROVE_COMPONENT,
    KAI_SCHEDULER,
    PROMETHEUS_STACK,
)
"""Every installable component, in the order status lists them; the gateway follows."""


def for_stack(stack: str) -> tuple[Component, ...]:
    return tuple(c for c in INSTALLED if stack in c.stacks)
