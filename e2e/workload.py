"""A workload cluster: fake GPU nodes (kwok), the stand-in DRA driver's slices, LeaderWorkerSet,
and the CRDs and objects of a serving stack the InferenceCluster observes as External.

Nothing runs in a pod: kwok marks a pod bound to one of its nodes Running and Ready
(kustomize/stage/pod/fast/pod-ready.yaml). Scheduling is real: kube-scheduler places pods by
node selector and allocates their ResourceClaims from the slices (DynamicResources plugin).
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from e2e import build, pki, processes, standins
from e2e.kubernetes import Cluster, condition_true, free_port

Obj = dict[str, Any]

REPOSITORY = Path(__file__).resolve().parents[1]
UPSTREAM_CRDS = REPOSITORY / "tests" / "upstream" / "crds"
POOL_LABEL = "modelplane.ai/pool"
GATEWAY_NAMESPACE = "modelplane-system"
KWOK_NODE = {"kwok.x-k8s.io/node": "fake"}

# kwok carries no default stages in its binary (pkg/kwok/cmd/root.go: "no stages found"); these
# are the ones kwokctl embeds for a fast cluster (pkg/kwokctl/runtime/cluster.go).
KWOK_STAGES = (
    "kustomize/stage/node/fast/node-initialize.yaml",
    "kustomize/stage/node/heartbeat-with-lease/node-heartbeat-with-lease.yaml",
    "kustomize/stage/pod/fast/pod-ready.yaml",
    "kustomize/stage/pod/fast/pod-complete.yaml",
    "kustomize/stage/pod/fast/pod-delete.yaml",
)

# The CRDs of the components an e2e InferenceCluster marks External (each is what that
# component's chart installs; tests/upstream/README.md names the release of each file).
EXTERNAL_STACK_CRDS = (
    "cert-manager.io_certificates.yaml",
    "cert-manager.io_issuers.yaml",
    "cert-manager.io_clusterissuers.yaml",
    "gateway.networking.k8s.io_gatewayclasses.yaml",
    "gateway.networking.k8s.io_gateways.yaml",
    "gateway.networking.k8s.io_httproutes.yaml",
    "gateway.networking.k8s.io_grpcroutes.yaml",
    "gateway.networking.k8s.io_referencegrants.yaml",
    "gateway.networking.k8s.io_backendtlspolicies.yaml",
    "gateway.envoyproxy.io_backends.yaml",
    "gateway.envoyproxy.io_backendtrafficpolicies.yaml",
    "gateway.envoyproxy.io_clienttrafficpolicies.yaml",
    "gateway.envoyproxy.io_envoyextensionpolicies.yaml",
    "gateway.envoyproxy.io_envoyproxies.yaml",
    "gateway.envoyproxy.io_httproutefilters.yaml",
    "gateway.envoyproxy.io_securitypolicies.yaml",
    "aigateway.envoyproxy.io_aigatewayroutes.yaml",
    "aigateway.envoyproxy.io_aiservicebackends.yaml",
    "aigateway.envoyproxy.io_backendsecuritypolicies.yaml",
    "inference.networking.k8s.io_inferencepools.yaml",
    "inference.networking.x-k8s.io_inferenceobjectives.yaml",
    "llm-d.ai_inferenceobjectives.yaml",
    "grove.io_podcliquesets.yaml",
    "grove.io_podcliquescalinggroups.yaml",
    "grove.io_podcliques.yaml",
    "scheduling.run.ai_queues.yaml",
    "monitoring.coreos.com_podmonitors.yaml",
)

# NodeFeature is what NFD's chart installs; External NFD observes that CRD and nothing of its
# schema matters here, so the harness declares it with an open schema.
NODE_FEATURE_CRD: Obj = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "nodefeatures.nfd.k8s-sigs.io"},
    "spec": {
        "group": "nfd.k8s-sigs.io",
        "names": {"kind": "NodeFeature", "listKind": "NodeFeatureList", "plural": "nodefeatures"},
        "scope": "Namespaced",
        "versions": [
            {
                "name": "v1alpha1",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "x-kubernetes-preserve-unknown-fields": True,
                    }
                },
            }
        ],
    },
}


@dataclass(frozen=True)
class Pool:
    """A node pool: ``nodes`` fake nodes labelled ``modelplane.ai/pool=<name>``, each with the
    devices of ``inference_class``."""

    name: str
    nodes: int
    inference_class: Obj


def kwok_config(run: Path) -> Path:
    root = build.module_dir("kwok", "sigs.k8s.io/kwok")
    text = "\n---\n".join((root / stage).read_text() for stage in KWOK_STAGES)
    path = run / "kwok-stages.yaml"
    path.write_text(text)
    return path


def start_kwok(cluster: Cluster, binary: Path) -> None:
    processes.start(
        cluster.run,
        f"{cluster.name}-kwok",
        [
            str(binary),
            f"--kubeconfig={cluster.kubeconfig}",
            f"--config={kwok_config(cluster.run)}",
            "--manage-all-nodes=false",
            "--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
            "--node-lease-duration-seconds=40",
            "--cidr=10.244.0.0/16",
        ],
        # kwok merges ~/.kwok/kwok.yaml into its configuration when present: keep it out.
        env={"HOME": str(cluster.dir)},
    )


def node(name: str, pool: str) -> Obj:
    capacity = {"cpu": "64", "memory": "512Gi", "ephemeral-storage": "2Ti", "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "annotations": {**KWOK_NODE, "node.alpha.kubernetes.io/ttl": "0"},
            "labels": {
                "kubernetes.io/arch": "amd64",
                "kubernetes.io/os": "linux",
                "kubernetes.io/hostname": name,
                "type": "kwok",
                POOL_LABEL: pool,
            },
        },
        "status": {"allocatable": capacity, "capacity": capacity},
    }


def add_pools(cluster: Cluster, pools: list[Pool]) -> None:
    """Fake nodes for every pool, and the slice the DRA driver would publish for each."""
    objects: list[Obj] = [standins.device_class()]
    for pool in pools:
        for index in range(pool.nodes):
            name = f"{pool.name}-{index}"
            objects.append(node(name, pool.name))
            objects.append(standins.resource_slice(name, pool.inference_class))
    cluster.apply(objects)
    names = [f"{p.name}-{i}" for p in pools for i in range(p.nodes)]
    for name in names:
        processes.wait_until(
            lambda n=name: _node_ready(cluster, n), 120, f"node {name} Ready on {cluster.name}"
        )


def _node_ready(cluster: Cluster, name: str) -> bool:
    return condition_true(cluster.get("node", name), "Ready")


def apply_crd_files(cluster: Cluster, paths: list[Path]) -> None:
    documents: list[Obj] = [
        d for path in paths for d in yaml.safe_load_all(path.read_text()) if isinstance(d, dict)
    ]
    cluster.apply_crds(documents)


def install_external_stack(cluster: Cluster) -> None:
    apply_crd_files(cluster, [UPSTREAM_CRDS / name for name in EXTERNAL_STACK_CRDS])
    cluster.apply([NODE_FEATURE_CRD])


def start_lws(cluster: Cluster, binary: Path, webhook_ca: pki.Pair) -> None:
    """The LeaderWorkerSet controller with its webhooks on loopback (they set the group and
    worker-index labels its controllers read: pkg/webhooks/pod_webhook.go)."""
    root = build.module_dir("lws", "sigs.k8s.io/lws")
    crds = sorted((root / "config" / "crd" / "bases").glob("*.yaml"))
    apply_crd_files(cluster, crds)
    certs = cluster.dir / "lws-certs"
    pki.leaf(webhook_ca, "lws-webhook", ips=("127.0.0.1",), server=True).write(certs)
    port = free_port()
    config = {
        "apiVersion": "config.lws.x-k8s.io/v1alpha1",
        "kind": "Configuration",
        "leaderElection": {"leaderElect": False},
        "internalCertManagement": {"enable": False},
        "webhook": {"host": "127.0.0.1", "port": port, "certDir": str(certs)},
        "metrics": {"bindAddress": f"127.0.0.1:{free_port()}"},
        "health": {"healthProbeBindAddress": f"127.0.0.1:{free_port()}"},
    }
    path = cluster.dir / "lws-config.yaml"
    path.write_text(yaml.safe_dump(config))
    cluster.apply(lws_webhooks(root, port, webhook_ca.cert))
    processes.start(
        cluster.run,
        f"{cluster.name}-lws",
        [str(binary), f"--config={path}", f"--kubeconfig={cluster.kubeconfig}"],
    )


def lws_webhooks(root: Path, port: int, ca: bytes) -> list[Obj]:
    """LWS's webhook configurations (config/webhook/manifests.yaml) dialled at a loopback URL,
    with the pod webhooks' objectSelector of its kustomize patches (mutating-patch.yaml,
    validating-patch.yaml) so pods of no LeaderWorkerSet never wait on it."""
    configurations = [
        d
        for d in yaml.safe_load_all((root / "config" / "webhook" / "manifests.yaml").read_text())
        if isinstance(d, dict)
    ]
    bundle = base64.b64encode(ca).decode()
    for configuration in configurations:
        configuration["metadata"]["name"] = f"lws-{configuration['metadata']['name']}"
        for webhook in configuration["webhooks"]:
            path = webhook["clientConfig"]["service"]["path"]
            webhook["clientConfig"] = {"url": f"https://127.0.0.1:{port}{path}", "caBundle": bundle}
            if any("pods" in rule["resources"] for rule in webhook["rules"]):
                webhook["objectSelector"] = {
                    "matchExpressions": [
                        {"key": "leaderworkerset.sigs.k8s.io/name", "operator": "Exists"}
                    ]
                }
    return configurations


def install_gateway(cluster: Cluster) -> None:
    """The cluster's own inference Gateway, as an InferenceCluster with ``gateway.mode:
    External`` observes it: class ``modelplane`` of Envoy Gateway's controller, the mutual-TLS
    ``fleet`` listener a Managed gateway composes (compose/inferencecluster/gateway.py)."""
    cluster.apply(
        [
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": GATEWAY_NAMESPACE}},
            {
                "apiVersion": "gateway.networking.k8s.io/v1",
                "kind": "GatewayClass",
                "metadata": {"name": "modelplane"},
                "spec": {"controllerName": standins.GATEWAY_CONTROLLER},
            },
            {
                "apiVersion": "gateway.networking.k8s.io/v1",
                "kind": "Gateway",
                "metadata": {"name": "inference-gateway", "namespace": GATEWAY_NAMESPACE},
                "spec": {
                    "gatewayClassName": "modelplane",
                    "listeners": [
                        {
                            "name": "fleet",
                            "port": 443,
                            "protocol": "HTTPS",
                            "allowedRoutes": {"namespaces": {"from": "All"}},
                            "tls": {
                                "mode": "Terminate",
                                "certificateRefs": [
                                    {"kind": "Secret", "name": "inference-gateway-fleet-tls"}
                                ],
                            },
                        }
                    ],
                },
            },
        ]
    )
