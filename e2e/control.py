"""The control plane: Crossplane core out of cluster, provider-kubernetes, and ``modelplane
serve`` as the composition function Crossplane calls over mTLS.

Crossplane v2.3.4 (read at that tag):
- ``core init`` writes the core CRDs from ``CRDS_PATH`` and three TLS Secrets
  (internal/initializer/tls.go); it is run until it succeeds, because its first run races the
  CRDs it has just created (it applies a Lock before they are served).
- Its only admission webhook is ``crossplane-no-usages`` (cluster/webhookconfigurations/
  usage.yaml), which enforces Usages on delete. init would point it at a Service, so init gets
  no webhook files and the harness applies it with a loopback URL instead.
- Functions run on the External package runtime (``--package-runtime External``): no
  Deployment, and nothing sets the revision's ``status.endpoint`` (only the Deployment runtime
  does, internal/controller/pkg/runtime/runtime_function.go), so the harness sets it to
  ``modelplane serve``'s address, as that runtime would set it to its Service.
- The package comes from the xpkg cache, never a registry: for a digest reference the client
  reads ``<cache>/<FriendlyID>.gz`` (gzip of the package.yaml stream) without asking a registry
  (crossplane-runtime v2.3.3 pkg/xpkg/client.go ``CachedClient.Get``).
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from e2e import build, pki, processes, relay
from e2e.kubernetes import Cluster, free_port
from tests.crossplane_packages import to_dns_label

Obj = dict[str, Any]

REPOSITORY = Path(__file__).resolve().parents[1]
NAMESPACE = "crossplane-system"
FUNCTION = "modelplane-function-modelplane"
PACKAGE_SOURCE = "xpkg.modelplane.local/modelplane/function-modelplane"
UPSTREAM_CRDS = REPOSITORY / "tests" / "upstream" / "crds"

# provider-kubernetes' poll: how often it observes a remote object it applied (its default is
# 10m; a platform team lowers it, or turns on watches, to see workloads turn Ready in time).
PROVIDER_POLL = "10s"


def seed_package(cache: Path) -> str:
    """Writes the function's package into the xpkg cache; the digest reference to install."""
    body = (REPOSITORY / "package" / "function" / "crossplane.yaml").read_bytes()
    digest = "sha256:" + hashlib.sha256(body).hexdigest()
    cache.mkdir(parents=True, exist_ok=True)
    # crossplane-runtime's FriendlyID: the cache file's name (pkg/xpkg/name.go).
    friendly = to_dns_label(PACKAGE_SOURCE[:50] + "-" + digest[:12])
    (cache / f"{friendly}.gz").write_bytes(gzip.compress(body))
    return f"{PACKAGE_SOURCE}@{digest}"


def _secret(cluster: Cluster, name: str) -> dict[str, bytes]:
    data = cluster.get("secret", name, "-n", NAMESPACE)["data"]
    return {k: base64.b64decode(v) for k, v in data.items()}


def _write_secret(cluster: Cluster, name: str, directory: Path) -> dict[str, bytes]:
    directory.mkdir(parents=True, exist_ok=True)
    data = _secret(cluster, name)
    for key, value in data.items():
        (directory / key).write_bytes(value)
    return data


def start_crossplane(cluster: Cluster, binary: Path) -> int:
    """Crossplane core on the control cluster; returns its webhook port."""
    d = cluster.dir / "crossplane"
    (d / "no-webhook-files").mkdir(parents=True, exist_ok=True)
    cluster.kubectl("create", "namespace", NAMESPACE)
    webhook_port = free_port()
    module = build.module_dir("crossplane", "github.com/crossplane/crossplane/v2")
    crds = module / "cluster" / "crds"
    env = {
        "KUBECONFIG": str(cluster.kubeconfig),
        "POD_NAMESPACE": NAMESPACE,
        "POD_SERVICE_ACCOUNT": "crossplane",
        "CRDS_PATH": str(crds),
        "WEBHOOK_CONFIGS_PATH": str(d / "no-webhook-files"),
        # Only names the webhook's certificate: DNS:localhost, where the apiserver dials it.
        "WEBHOOK_SERVICE_NAME": "localhost",
        "WEBHOOK_SERVICE_NAMESPACE": NAMESPACE,
        "WEBHOOK_SERVICE_PORT": str(webhook_port),
        "TLS_CA_SECRET_NAME": "crossplane-root-ca",
        "TLS_SERVER_SECRET_NAME": "crossplane-tls-server",
        "TLS_CLIENT_SECRET_NAME": "crossplane-tls-client",
    }
    _init(cluster, binary, env)
    server = _write_secret(cluster, "crossplane-tls-server", d / "tls" / "server")
    _write_secret(cluster, "crossplane-tls-client", d / "tls" / "client")
    cluster.apply([_usage_webhook(webhook_port, server["tls.crt"])])
    processes.start(
        cluster.run,
        "crossplane",
        [
            str(binary),
            "--debug",
            "core",
            "start",
            f"--namespace={NAMESPACE}",
            "--package-runtime=External",
            f"--xpkg-cache-dir={d / 'xpkg-cache'}",
            f"--webhook-port={webhook_port}",
            f"--metrics-port={free_port()}",
            f"--health-probe-port={free_port()}",
            f"--tls-server-certs-dir={d / 'tls' / 'server'}",
            f"--tls-client-certs-dir={d / 'tls' / 'client'}",
        ],
        env={"KUBECONFIG": str(cluster.kubeconfig)},
    )
    return webhook_port


def _init(cluster: Cluster, binary: Path, env: dict[str, str]) -> None:
    log = (cluster.run / "crossplane-init.log").open("ab")
    deadline = time.monotonic() + 120
    while True:
        done = subprocess.run(
            [str(binary), "core", "init"], env={**os.environ, **env}, stdout=log, stderr=log
        )
        if done.returncode == 0:
            return
        if time.monotonic() > deadline:
            raise processes.WaitTimeoutError(
                f"crossplane core init kept failing (log: {cluster.run}/crossplane-init.log)"
            )
        time.sleep(1)


def _usage_webhook(port: int, server_cert: bytes) -> Obj:
    """cluster/webhookconfigurations/usage.yaml of Crossplane v2.3.4, dialled on loopback."""
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": "crossplane-no-usages"},
        "webhooks": [
            {
                "name": "nousages.protection.crossplane.io",
                "admissionReviewVersions": ["v1"],
                "clientConfig": {
                    "url": f"https://localhost:{port}/validate-no-usages",
                    "caBundle": base64.b64encode(server_cert).decode(),
                },
                "failurePolicy": "Fail",
                "sideEffects": "None",
                "objectSelector": {"matchLabels": {"crossplane.io/in-use": "true"}},
                "rules": [
                    {
                        "apiGroups": ["*"],
                        "apiVersions": ["*"],
                        "operations": ["DELETE"],
                        "resources": ["*"],
                    }
                ],
            }
        ],
    }


def start_function(cluster: Cluster) -> str:
    """``modelplane serve`` with a server certificate from Crossplane's CA; its address."""
    d = cluster.dir / "function"
    root = _secret(cluster, "crossplane-root-ca")
    ca = pki.Pair(root["tls.crt"], root["tls.key"])
    pki.leaf(ca, "modelplane-function", ips=("127.0.0.1",), dns=("localhost",), server=True).write(
        d
    )
    (d / "ca.crt").write_bytes(root["tls.crt"])
    address = f"127.0.0.1:{free_port()}"
    processes.start(
        cluster.run,
        "modelplane-serve",
        [
            sys.executable,
            "-m",
            "modelplane",
            "serve",
            f"--address={address}",
            f"--tls-server-certs-dir={d}",
            f"--metrics-address=127.0.0.1:{free_port()}",
        ],
    )
    return address


def install_function(cluster: Cluster, address: str) -> None:
    """The Function from the seeded cache, its active revision pointed at ``address``."""
    reference = seed_package(cluster.dir / "crossplane" / "xpkg-cache")
    cluster.apply(
        [
            {
                "apiVersion": "pkg.crossplane.io/v1",
                "kind": "Function",
                "metadata": {"name": FUNCTION},
                "spec": {"package": reference, "packagePullPolicy": "Never"},
            }
        ]
    )
    processes.wait_until(
        lambda: bool(_current_revision(cluster)), 120, f"Function {FUNCTION} to have a revision"
    )
    revision = _current_revision(cluster)
    # What the Deployment runtime writes for its Service (runtime_function.go), and the TLS
    # Secret it names (the establisher waits for one: revision/establisher.go).
    cluster.kubectl(
        "patch",
        "functionrevision",
        revision,
        "--subresource=status",
        "--type=merge",
        "-p",
        json.dumps(
            {"status": {"endpoint": address, "tlsServerSecretName": "crossplane-tls-server"}}
        ),
    )
    healthy = {
        "type": "RuntimeHealthy",
        "status": "True",
        "reason": "HealthyPackageRevision",
        "lastTransitionTime": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    cluster.kubectl(
        "patch",
        "functionrevision",
        revision,
        "--subresource=status",
        "--type=json",
        "-p",
        json.dumps([{"op": "add", "path": "/status/conditions/-", "value": healthy}]),
    )
    # The revision re-reconciles on a change of its own, and the Function on its revision's.
    cluster.kubectl("annotate", "functionrevision", revision, "e2e.modelplane.ai/endpoint-set=1")


def _current_revision(cluster: Cluster) -> str:
    status = cluster.get("function.pkg.crossplane.io", FUNCTION).get("status") or {}
    return str(status.get("currentRevision") or "")


def install_apis(cluster: Cluster) -> None:
    """The package's XRDs and Compositions (the Configuration's content), applied directly: its
    provider dependencies would need a registry to resolve."""
    documents = []
    for path in sorted((REPOSITORY / "apis").glob("*/*.yaml")):
        documents += [d for d in yaml.safe_load_all(path.read_text()) if isinstance(d, dict)]
    cluster.apply(documents)


def install_provider_crds(cluster: Cluster) -> None:
    """provider-kubernetes' namespaced CRDs (its package/crds at v1.2.1), provider-helm's,
    whose ClusterProviderConfig every InferenceCluster composes, and provider-http's
    ProviderConfig and DisposableRequest, which every ModelService composes where the
    EnvironmentConfig names a Prometheus (its usage summary): Crossplane cannot apply a kind
    whose CRD is missing, even where no provider-http runs."""
    root = build.module_dir(
        "provider-kubernetes", "github.com/crossplane-contrib/provider-kubernetes"
    )
    paths = sorted((root / "package" / "crds").glob("kubernetes.m.crossplane.io_*.yaml"))
    paths += sorted(UPSTREAM_CRDS.glob("helm.m.crossplane.io_*.yaml"))
    paths += sorted(UPSTREAM_CRDS.glob("http.m.crossplane.io_*.yaml"))
    documents = [
        d for path in paths for d in yaml.safe_load_all(path.read_text()) if isinstance(d, dict)
    ]
    cluster.apply_crds(documents)


def start_provider_kubernetes(cluster: Cluster, binary: Path, webhook_ca: pki.Pair) -> None:
    # Its webhook server always starts (cmd/provider/main.go) and needs a certificate, though
    # nothing calls it: only the cluster-scoped Object's conversion would.
    certs = cluster.dir / "provider-kubernetes-certs"
    pki.leaf(webhook_ca, "provider-kubernetes", ips=("127.0.0.1",), server=True).write(certs)
    processes.start(
        cluster.run,
        "provider-kubernetes",
        [
            str(binary),
            "--debug",
            f"--poll={PROVIDER_POLL}",
            f"--health-probe-bind-addr=127.0.0.1:{free_port()}",
        ],
        env={"KUBECONFIG": str(cluster.kubeconfig), "TLS_SERVER_CERTS_DIR": str(certs)},
    )


PROVIDER_HTTP = "provider-http"


def start_provider_http(cluster: Cluster, binary: Path, ports: list[int], poll: str) -> None:
    """provider-http v1.0.14 on the control plane, in a network namespace of its own
    (``e2e.relay``: its metrics server takes ``:8080``, as provider-kubernetes' does), reaching
    the API server and ``ports`` (a Prometheus) through relays at their own addresses.

    First the namespaced CRDs of its package (package/crds at v1.0.14): besides the
    DisposableRequest and ProviderConfig every environment has, the ProviderConfigUsage it
    records for each request it connects (crossplane-runtime's usage tracker) and the
    ClusterProviderConfig, whose controller reads those usages. ``stop_provider_http`` stops it.
    """
    root = build.module_dir(PROVIDER_HTTP, "github.com/crossplane-contrib/provider-http")
    paths = sorted((root / "package" / "crds").glob("http.m.crossplane.io_*.yaml"))
    cluster.apply_crds(
        [d for path in paths for d in yaml.safe_load_all(path.read_text()) if isinstance(d, dict)]
    )
    relay.start(
        cluster.run,
        PROVIDER_HTTP,
        [str(binary), "--debug", f"--poll={poll}"],
        [cluster.port, *ports],
        env={"KUBECONFIG": str(cluster.kubeconfig)},
    )


def stop_provider_http(cluster: Cluster) -> None:
    relay.stop(cluster.run, PROVIDER_HTTP)


def kubeconfig_secret(name: str, kubeconfig: Path) -> Obj:
    """A workload cluster's kubeconfig as an InferenceCluster's secretRef names it."""
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "stringData": {"kubeconfig": kubeconfig.read_text()},
    }
