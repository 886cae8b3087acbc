"""The whole e2e environment: one etcd, a control-plane cluster with Crossplane, provider-kubernetes
and the function, and workload clusters added per InferenceCluster.

``up`` writes ``environment.json`` into the run directory, so another process (a test session, or
``python -m e2e status``) can attach to what is running, and ``down`` stops every recorded PID.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from e2e import build, control, kubernetes, pki, processes, standins, workload
from e2e.kubernetes import Cluster

Obj = dict[str, Any]

# Where the Gateways of a workload cluster say their proxy listens (documentation range,
# RFC 5737: nothing is ever dialled there; no proxy runs in the e2e tier).
GATEWAY_ADDRESS = "192.0.2.10"
STATE = "environment.json"
WORKLOAD_PROCESSES = (
    "gateway-standin",
    "lws",
    "kwok",
    "kube-scheduler",
    "kube-controller-manager",
    "kube-apiserver",
)


def default_run() -> Path:
    return build.cache_root() / "run"


@dataclass
class Environment:
    run: Path
    binaries: dict[str, Path]
    etcd: str
    webhook_ca: pki.Pair
    control: Cluster
    function_address: str
    workloads: dict[str, Cluster] = field(default_factory=dict)

    def binary(self, component: str, name: str) -> Path:
        return self.binaries[component] / name

    def save(self) -> None:
        state = {
            "binaries": {k: str(v) for k, v in self.binaries.items()},
            "etcd": self.etcd,
            "webhook_ca": [self.webhook_ca.cert.decode(), self.webhook_ca.key.decode()],
            "function_address": self.function_address,
            "clusters": {
                c.name: {"port": c.port, "ca": c.ca.cert.decode()}
                for c in (self.control, *self.workloads.values())
            },
        }
        (self.run / STATE).write_text(json.dumps(state, indent=1))

    def add_workload(self, name: str, pools: list[workload.Pool]) -> Cluster:
        """A workload cluster named ``name`` (its kubeconfig in the control plane's Secret
        ``<name>-kubeconfig``), its pools' nodes, LWS, an External stack and its Gateway."""
        kube = kubernetes.Binaries(self.binary("etcd", "etcd"), self.binaries["kubernetes"])
        cluster = kubernetes.start_cluster(self.run, name, kube, self.etcd, scheduler=True)
        self.workloads[name] = cluster
        self.save()
        workload.start_kwok(cluster, self.binary("kwok", "kwok"))
        workload.install_external_stack(cluster)
        workload.start_lws(cluster, self.binary("lws", "lws-controller"), self.webhook_ca)
        workload.add_pools(cluster, pools)
        workload.install_gateway(cluster)
        processes.start(
            self.run,
            f"{name}-gateway-standin",
            [
                sys.executable,
                "-m",
                "e2e",
                "gateway-standin",
                str(cluster.kubeconfig),
                GATEWAY_ADDRESS,
            ],
            env={"PYTHONPATH": str(control.REPOSITORY)},
        )
        self.control.apply([control.kubeconfig_secret(f"{name}-kubeconfig", cluster.kubeconfig)])
        return cluster

    def remove_workload(self, name: str) -> None:
        """Stops a workload cluster's processes and drops its kubeconfig Secret; its etcd data
        stays under a prefix no later cluster of that name reuses."""
        for process in WORKLOAD_PROCESSES:
            processes.stop(self.run, f"{name}-{process}")
        self.workloads.pop(name, None)
        self.control.kubectl(
            "-n", control.NAMESPACE, "delete", "secret", f"{name}-kubeconfig", "--ignore-not-found"
        )
        self.save()

    def down(self) -> None:
        processes.stop_all(self.run, order=("crossplane", "provider-kubernetes"))


def up(run: Path) -> Environment:
    run.mkdir(parents=True, exist_ok=True)
    if any(processes.running(run).values()):
        raise RuntimeError(f"{run} already has running processes: `python -m e2e down` first")
    binaries = build.build_all()
    kube = kubernetes.Binaries(binaries["etcd"] / "etcd", binaries["kubernetes"])
    etcd = kubernetes.start_etcd(run, kube)
    webhook_ca = pki.authority("e2e-webhooks")
    control_plane = kubernetes.start_cluster(run, "control", kube, etcd, scheduler=False)
    control.start_crossplane(control_plane, binaries["crossplane"] / "crossplane")
    control.install_provider_crds(control_plane)
    control.start_provider_kubernetes(
        control_plane, binaries["provider-kubernetes"] / "provider-kubernetes", webhook_ca
    )
    address = control.start_function(control_plane)
    env = Environment(run, binaries, etcd, webhook_ca, control_plane, address)
    env.save()
    control.install_function(control_plane, address)
    control.install_apis(control_plane)
    return env


def attach(run: Path) -> Environment:
    """The environment a previous ``up`` left running in ``run``."""
    state = json.loads((run / STATE).read_text())
    binaries = {k: Path(v) for k, v in state["binaries"].items()}
    kubectl = binaries["kubernetes"] / "kubectl"

    def cluster(name: str) -> Cluster:
        c = state["clusters"][name]
        return Cluster(name, run, c["port"], pki.Pair(c["ca"].encode(), b""), kubectl)

    ca = state["webhook_ca"]
    env = Environment(
        run,
        binaries,
        state["etcd"],
        pki.Pair(ca[0].encode(), ca[1].encode()),
        cluster("control"),
        state["function_address"],
    )
    env.workloads = {n: cluster(n) for n in state["clusters"] if n != "control"}
    return env


def run_directory() -> Path:
    configured = os.environ.get("MODELPLANE_E2E_RUN")
    return Path(configured) if configured else default_run()


def gateway_standin(kubeconfig: Path, address: str) -> None:
    """Programs every Gateway of an Envoy Gateway class on one cluster, until stopped."""
    import time

    # A Cluster's kubeconfig is <run>/<name>/kubeconfig: name and run are read back from it.
    cluster = Cluster(
        kubeconfig.parent.name, kubeconfig.parent.parent, 0, pki.Pair(b"", b""), _kubectl()
    )
    while True:
        try:
            standins.program_gateways(cluster, address)
        except Exception as error:  # the API server may be stopping: report and retry
            print(f"gateway stand-in: {error}", flush=True)
        time.sleep(2)


def _kubectl() -> Path:
    return build.binary_dir(build.COMPONENTS["kubernetes"]) / "kubectl"
