"""A Kubernetes control plane on loopback: etcd, kube-apiserver, kube-controller-manager and,
for a workload cluster, kube-scheduler; every binary built from its Go module (``e2e.build``).

Two API servers share one etcd, each under its own prefix. Each cluster has its own CA (serving
and client), an admin kubeconfig (``O=system:masters``) that every controller here uses, and a
service-account signing key.
"""

from __future__ import annotations

import base64
import json
import random
import socket
import subprocess
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import yaml

from e2e import pki, processes
from modelplane.kube.objects import dig

SERVICE_RANGE = "10.96.0.0/16"
API_SERVICE_IP = "10.96.0.1"
FRONT_PROXY_CLIENT = "front-proxy-client"


PORTS_FROM = 20000
_handed: set[int] = set()


def free_port() -> int:
    """A loopback port nothing listens on, for a process about to start, never one this run
    handed out before. Below the kernel's ephemeral range: a port from that range (what binding
    port 0 gives) can become the local end of any outgoing connection before its process binds
    it, and a workload cluster's kube-scheduler lost its port so in CI ("bind: address already
    in use")."""
    low = _ephemeral_low()
    for port in random.sample(range(PORTS_FROM, low), low - PORTS_FROM):
        if port in _handed:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        _handed.add(port)
        return port
    raise RuntimeError(f"no free loopback port in [{PORTS_FROM}, {low})")


def _ephemeral_low() -> int:
    """The lowest port of the kernel's ephemeral range (Linux's default 32768)."""
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


@dataclass(frozen=True)
class Binaries:
    etcd: Path
    kubernetes: Path

    def kube(self, name: str) -> str:
        return str(self.kubernetes / name)


def kubeconfig(server: str, ca: bytes, client: pki.Pair, name: str) -> dict[str, Any]:
    def b64(data: bytes) -> str:
        return base64.b64encode(data).decode()

    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {"name": name, "cluster": {"server": server, "certificate-authority-data": b64(ca)}}
        ],
        "users": [
            {
                "name": "admin",
                "user": {
                    "client-certificate-data": b64(client.cert),
                    "client-key-data": b64(client.key),
                },
            }
        ],
        "contexts": [{"name": name, "context": {"cluster": name, "user": "admin"}}],
        "current-context": name,
    }


def start_etcd(run: Path, binaries: Binaries) -> str:
    client, peer = free_port(), free_port()
    data = run / "etcd-data"
    url = f"http://127.0.0.1:{client}"
    processes.start(
        run,
        "etcd",
        [
            str(binaries.etcd),
            "--name=e2e",
            f"--data-dir={data}",
            f"--listen-client-urls={url}",
            f"--advertise-client-urls={url}",
            f"--listen-peer-urls=http://127.0.0.1:{peer}",
            f"--initial-advertise-peer-urls=http://127.0.0.1:{peer}",
            f"--initial-cluster=e2e=http://127.0.0.1:{peer}",
            "--listen-metrics-urls=",
            # A test's data need not survive a crash of the machine: etcd's own flag to skip fsync.
            "--unsafe-no-fsync",
            "--quota-backend-bytes=4294967296",
            "--log-level=warn",
        ],
    )
    processes.wait_until(lambda: _etcd_healthy(url), 60, f"etcd at {url} (log: {run}/etcd.log)")
    return url


def _etcd_healthy(url: str) -> bool:
    import urllib.request

    with urllib.request.urlopen(f"{url}/health", timeout=2) as response:
        return bool(json.loads(response.read()).get("health") == "true")


@dataclass
class Cluster:
    """One API server and its controllers; ``kubeconfig`` is the admin's file."""

    name: str
    run: Path
    port: int
    ca: pki.Pair
    kubectl_binary: Path

    @property
    def dir(self) -> Path:
        return self.run / self.name

    @property
    def server(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    @property
    def kubeconfig(self) -> Path:
        return self.dir / "kubeconfig"

    def kubectl(
        self, *args: str, input: str | None = None, check: bool = True, timeout: float = 120
    ) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(
            [str(self.kubectl_binary), f"--kubeconfig={self.kubeconfig}", *args],
            input=input,
            capture_output=True,
            text=True,
            timeout=max(timeout, _waits(args) + 30),
        )
        if check and result.returncode != 0:
            raise RuntimeError(
                f"kubectl {' '.join(args)} on {self.name}: exit {result.returncode}: "
                f"{result.stderr.strip() or result.stdout.strip()}"
            )
        return result

    def apply(self, manifests: str | list[dict[str, Any]], *flags: str) -> None:
        text = manifests if isinstance(manifests, str) else yaml.safe_dump_all(manifests)
        self.kubectl("apply", "--server-side", "--force-conflicts", *flags, "-f", "-", input=text)

    def get(self, *args: str) -> Any:
        return json.loads(self.kubectl("get", *args, "-o", "json").stdout)

    def apply_crds(self, crds: list[dict[str, Any]], timeout: float = 60) -> None:
        """Applies CRDs and waits until each serves. Not ``kubectl wait``: a CRD just created
        carries ``status.conditions: null`` (apiextensions' CustomResourceDefinitionStatus has
        no omitempty), which kubectl's condition wait reports as an error instead of waiting."""
        self.apply(crds)
        for crd in crds:
            name: str = crd["metadata"]["name"]
            processes.wait_until(
                partial(self.established, name), timeout, f"CRD {name} Established on {self.name}"
            )

    def established(self, crd: str) -> bool:
        return condition_true(self.get("crd", crd), "Established")

    def ready(self) -> bool:
        return self.kubectl("get", "--raw", "/readyz", check=False).stdout.strip() == "ok"


def condition_true(obj: dict[str, Any], type_: str) -> bool:
    """Whether ``obj`` has condition ``type_`` True (none yet, or ``null``, reads as not)."""
    conditions = dig(obj, "status", "conditions") or []
    return any(c["type"] == type_ and c["status"] == "True" for c in conditions)


def _waits(args: tuple[str, ...]) -> float:
    """How long a ``--timeout=<n>s|m`` among kubectl's arguments lets it wait, in seconds."""
    for arg in args:
        if arg.startswith("--timeout="):
            value = arg.partition("=")[2]
            unit = {"s": 1, "m": 60, "h": 3600}.get(value[-1:], 1)
            return float(value.rstrip("smh") or 0) * unit
    return 0.0


def start_cluster(
    run: Path, name: str, binaries: Binaries, etcd: str, *, scheduler: bool
) -> Cluster:
    directory = run / name
    directory.mkdir(parents=True, exist_ok=True)
    ca = pki.authority(f"{name}-ca")
    ca.write(directory, "ca.crt", "ca.key")
    cluster = Cluster(name, run, free_port(), ca, binaries.kubernetes / "kubectl")
    serving = pki.leaf(
        ca,
        "kube-apiserver",
        dns=(
            "localhost",
            "kubernetes",
            "kubernetes.default",
            "kubernetes.default.svc",
            "kubernetes.default.svc.cluster.local",
        ),
        ips=("127.0.0.1", API_SERVICE_IP),
        server=True,
    )
    serving.write(directory, "apiserver.crt", "apiserver.key")
    admin = pki.leaf(ca, "admin", organizations=("system:masters",), client=True)
    cluster.kubeconfig.write_text(yaml.safe_dump(kubeconfig(cluster.server, ca.cert, admin, name)))
    # API aggregation (an extension API server such as KEDA's metrics adapter): the API server
    # proxies to it as front-proxy-client, and the extension trusts the front-proxy CA for that.
    front_proxy = pki.authority(f"{name}-front-proxy-ca")
    front_proxy.write(directory, "front-proxy-ca.crt", "front-proxy-ca.key")
    pki.leaf(front_proxy, FRONT_PROXY_CLIENT, client=True).write(
        directory, "front-proxy-client.crt", "front-proxy-client.key"
    )
    private, public = pki.signing_key()
    (directory / "sa.key").write_bytes(private)
    (directory / "sa.pub").write_bytes(public)
    _start_apiserver(cluster, binaries, etcd)
    _start_controller_manager(cluster, binaries)
    if scheduler:
        _start_scheduler(cluster, binaries)
    return cluster


def _start_apiserver(cluster: Cluster, binaries: Binaries, etcd: str) -> None:
    d = cluster.dir
    processes.start(
        cluster.run,
        f"{cluster.name}-kube-apiserver",
        [
            binaries.kube("kube-apiserver"),
            f"--etcd-servers={etcd}",
            # A cluster started again under a name gets an empty store of its own.
            f"--etcd-prefix=/{cluster.name}-{cluster.port}",
            "--bind-address=127.0.0.1",
            "--advertise-address=127.0.0.1",
            f"--secure-port={cluster.port}",
            f"--tls-cert-file={d / 'apiserver.crt'}",
            f"--tls-private-key-file={d / 'apiserver.key'}",
            f"--client-ca-file={d / 'ca.crt'}",
            f"--service-account-key-file={d / 'sa.pub'}",
            f"--service-account-signing-key-file={d / 'sa.key'}",
            "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
            f"--service-cluster-ip-range={SERVICE_RANGE}",
            "--authorization-mode=Node,RBAC",
            f"--requestheader-client-ca-file={d / 'front-proxy-ca.crt'}",
            f"--requestheader-allowed-names={FRONT_PROXY_CLIENT}",
            "--requestheader-username-headers=X-Remote-User",
            "--requestheader-group-headers=X-Remote-Group",
            "--requestheader-extra-headers-prefix=X-Remote-Extra-",
            f"--proxy-client-cert-file={d / 'front-proxy-client.crt'}",
            f"--proxy-client-key-file={d / 'front-proxy-client.key'}",
            "--allow-privileged=true",
            # The kubernetes Service cannot have a loopback endpoint (Endpoints validation refuses
            # one): do not reconcile it, instead of failing to every few seconds.
            "--endpoint-reconciler-type=none",
            "--profiling=false",
            "--v=1",
        ],
    )
    log = cluster.run / f"{cluster.name}-kube-apiserver.log"
    processes.wait_until(cluster.ready, 120, f"{cluster.name} kube-apiserver (log: {log})")


def _controller_flags(cluster: Cluster) -> list[str]:
    """What the controller-manager and the scheduler share: the admin kubeconfig for the API
    and their own authentication, a loopback port of their own, no leader election."""
    return [
        f"--kubeconfig={cluster.kubeconfig}",
        f"--authentication-kubeconfig={cluster.kubeconfig}",
        f"--authorization-kubeconfig={cluster.kubeconfig}",
        "--bind-address=127.0.0.1",
        f"--secure-port={free_port()}",
        "--leader-elect=false",
    ]


def _start_controller_manager(cluster: Cluster, binaries: Binaries) -> None:
    d = cluster.dir
    processes.start(
        cluster.run,
        f"{cluster.name}-kube-controller-manager",
        [
            binaries.kube("kube-controller-manager"),
            *_controller_flags(cluster),
            f"--service-account-private-key-file={d / 'sa.key'}",
            f"--root-ca-file={d / 'ca.crt'}",
            f"--service-cluster-ip-range={SERVICE_RANGE}",
            "--controllers=*",
            # The HPA controller's default 15 s sync, shortened: the autoscaling loop's test
            # plays a load curve of minutes, and each sync is one reaction of its HPA.
            "--horizontal-pod-autoscaler-sync-period=5s",
            "--v=1",
        ],
    )


def _start_scheduler(cluster: Cluster, binaries: Binaries) -> None:
    processes.start(
        cluster.run,
        f"{cluster.name}-kube-scheduler",
        [
            binaries.kube("kube-scheduler"),
            *_controller_flags(cluster),
            "--v=1",
        ],
    )
