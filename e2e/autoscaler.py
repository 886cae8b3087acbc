"""The autoscaling loop of docs/design/autoscaling.md on loopback: a Prometheus that scrapes the
load simulator (``e2e.loadsim``), and KEDA's operator and metrics adapter on the control plane,
registered as the ``external.metrics.k8s.io`` API that kube-controller-manager's HPA reads.

Both build from their Go modules on demand (``e2e.build.ON_DEMAND``): KEDA v2.20.2 and Prometheus
v3.4.2 (module v0.304.2, the version KEDA's go.mod pins). Everything else is KEDA's chart's
wiring, named where it differs:

- The adapter is an aggregated API server. The chart registers its APIService on a ClusterIP
  Service; no Service IP reaches loopback here, so the Service is an ExternalName to
  ``localhost``, which the aggregator dials as it is (k8s.io/apiserver v0.35.4
  ``pkg/util/proxy/proxy.go`` ``ResolveCluster``) while still checking the serving certificate
  against ``<service>.<namespace>.svc``, the name the leaf carries.
- The operator's gRPC metrics service and the adapter's client share one KEDA CA and one leaf
  (the chart's ``kedaorg-certs``: ``ca.crt``, ``tls.crt``, ``tls.key``;
  ``pkg/metricsservice/utils/tls.go``), with cert rotation off.
- Every port is a free loopback one: the operator's metrics default (:8080) is taken by
  provider-kubernetes.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from e2e import build, pki, processes
from e2e.kubernetes import Cluster, condition_true, free_port
from modelplane.compose.shared.metricsconfig import METRICS_CONFIG

NAMESPACE = "keda"
ADAPTER_SERVICE = "keda-metrics-apiserver"
OPERATOR_SERVICE = "keda-operator"
EXTERNAL_METRICS = "v1beta1.external.metrics.k8s.io"
SCRAPE_SECONDS = 1


STACK = ("keda-adapter", "keda-operator", "prometheus")
"""The processes ``start_stack`` starts, in the order ``stop_stack`` stops them."""


@dataclass(frozen=True)
class Prometheus:
    url: str


def start_stack(cluster: Cluster, targets: list[str]) -> Prometheus:
    """The fleet's autoscaling as a platform wires it: a Prometheus scraping ``targets``, KEDA,
    and the EnvironmentConfig that names that Prometheus to the function."""
    binaries = build.build_all(["keda", "prometheus"])
    prometheus = start_prometheus(cluster, binaries["prometheus"] / "prometheus", targets)
    start_keda(cluster, binaries["keda"])
    named = {"prometheus": {"serverAddress": prometheus.url}}
    cluster.apply(
        [
            {
                "apiVersion": "apiextensions.crossplane.io/v1beta1",
                "kind": "EnvironmentConfig",
                "metadata": {"name": METRICS_CONFIG},
                "data": named,
            }
        ]
    )
    return prometheus


def stop_stack(cluster: Cluster) -> None:
    """What ``start_stack`` started, gone (each step tolerant of a stack half started)."""
    cluster.kubectl("delete", "environmentconfig", METRICS_CONFIG, check=False)
    for name in STACK:
        processes.stop(cluster.run, name)


def start_prometheus(cluster: Cluster, binary: Path, targets: list[str]) -> Prometheus:
    """A Prometheus scraping ``targets`` (host:port) every second, its TSDB in the run directory."""
    return start_prometheus_in(cluster.run, binary, targets)


def start_prometheus_in(run: Path, binary: Path, targets: list[str]) -> Prometheus:
    """``start_prometheus`` without a control plane: its process, log and TSDB in ``run``
    (``processes.stop(run, "prometheus")`` stops it)."""
    directory = run / "prometheus"
    directory.mkdir(parents=True, exist_ok=True)
    config = {
        "global": {"scrape_interval": f"{SCRAPE_SECONDS}s", "evaluation_interval": "1s"},
        "scrape_configs": [
            {"job_name": "engines", "static_configs": [{"targets": targets}]},
        ],
    }
    path = directory / "prometheus.yml"
    path.write_text(yaml.safe_dump(config))
    port = free_port()
    processes.start(
        run,
        "prometheus",
        [
            str(binary),
            f"--config.file={path}",
            f"--storage.tsdb.path={directory / 'data'}",
            f"--web.listen-address=127.0.0.1:{port}",
        ],
    )
    prometheus = Prometheus(f"http://127.0.0.1:{port}")
    processes.wait_until(
        lambda: _http_ok(f"{prometheus.url}/-/ready"), 60, "Prometheus (log: prometheus.log)"
    )
    return prometheus


def _http_ok(url: str) -> bool:
    import urllib.request

    with urllib.request.urlopen(url, timeout=2) as answer:
        return bool(answer.status == 200)


def start_keda(cluster: Cluster, binaries: Path) -> None:
    """KEDA's CRDs, operator and metrics adapter, the adapter serving external metrics."""
    root = build.module_dir("keda", "github.com/kedacore/keda/v2")
    documents = [
        d
        for path in sorted((root / "config" / "crd" / "bases").glob("*.yaml"))
        for d in yaml.safe_load_all(path.read_text())
        if isinstance(d, dict)
    ]
    cluster.apply_crds(documents)
    cluster.apply([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}])
    ca = pki.authority("KEDA")
    certs = cluster.dir / "keda-certs"
    names = tuple(
        f"{service}.{NAMESPACE}.svc{suffix}"
        for service in (ADAPTER_SERVICE, OPERATOR_SERVICE)
        for suffix in ("", ".cluster.local")
    )
    leaf = pki.leaf(
        ca, "keda", dns=("localhost", *names), ips=("127.0.0.1",), server=True, client=True
    )
    leaf.write(certs)
    (certs / "ca.crt").write_bytes(ca.cert)
    grpc = free_port()
    _start_operator(cluster, binaries / "keda-operator", certs, grpc)
    secure = free_port()
    _start_adapter(cluster, binaries / "keda-adapter", certs, grpc, secure)
    cluster.apply(_external_metrics_api(secure, ca.cert))
    processes.wait_until(
        lambda: _available(cluster),
        120,
        f"APIService {EXTERNAL_METRICS} Available (keda-adapter.log)",
    )


def _start_operator(cluster: Cluster, binary: Path, certs: Path, grpc: int) -> None:
    processes.start(
        cluster.run,
        "keda-operator",
        [
            str(binary),
            f"--kubeconfig={cluster.kubeconfig}",
            f"--metrics-bind-address=127.0.0.1:{free_port()}",
            f"--health-probe-bind-address=127.0.0.1:{free_port()}",
            f"--metrics-service-bind-address=127.0.0.1:{grpc}",
            f"--cert-dir={certs}",
            "--enable-cert-rotation=false",
            "--zap-log-level=info",
        ],
        env={
            "WATCH_NAMESPACE": "",
            "POD_NAMESPACE": NAMESPACE,
            "KEDA_CLUSTER_OBJECT_NAMESPACE": NAMESPACE,
            "KUBECONFIG": str(cluster.kubeconfig),
        },
    )


def _start_adapter(cluster: Cluster, binary: Path, certs: Path, grpc: int, secure: int) -> None:
    kubeconfig = str(cluster.kubeconfig)
    processes.start(
        cluster.run,
        "keda-adapter",
        [
            str(binary),
            "--bind-address=127.0.0.1",
            f"--secure-port={secure}",
            f"--cert-dir={certs}",
            f"--tls-cert-file={certs / 'tls.crt'}",
            f"--tls-private-key-file={certs / 'tls.key'}",
            f"--lister-kubeconfig={kubeconfig}",
            f"--authentication-kubeconfig={kubeconfig}",
            f"--authorization-kubeconfig={kubeconfig}",
            f"--port={free_port()}",
            f"--metrics-service-address=127.0.0.1:{grpc}",
        ],
        env={
            "WATCH_NAMESPACE": "",
            "POD_NAMESPACE": NAMESPACE,
            "KEDA_CLUSTER_OBJECT_NAMESPACE": NAMESPACE,
            "KUBECONFIG": kubeconfig,
        },
    )


def _external_metrics_api(port: int, ca: bytes) -> list[dict[str, Any]]:
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": ADAPTER_SERVICE, "namespace": NAMESPACE},
        "spec": {
            "type": "ExternalName",
            "externalName": "localhost",
            "ports": [{"name": "https", "port": port}],
        },
    }
    api = {
        "apiVersion": "apiregistration.k8s.io/v1",
        "kind": "APIService",
        "metadata": {"name": EXTERNAL_METRICS},
        "spec": {
            "group": "external.metrics.k8s.io",
            "version": "v1beta1",
            "groupPriorityMinimum": 100,
            "versionPriority": 100,
            "caBundle": base64.b64encode(ca).decode(),
            "service": {"name": ADAPTER_SERVICE, "namespace": NAMESPACE, "port": port},
        },
    }
    return [service, api]


def _available(cluster: Cluster) -> bool:
    return condition_true(cluster.get("apiservice", EXTERNAL_METRICS), "Available")
