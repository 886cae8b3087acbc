"""The e2e tier: Modelplane on a real control plane (kube-apiserver, Crossplane,
provider-kubernetes, kube-scheduler with DRA, kwok nodes, LeaderWorkerSet), every binary built
from its Go module by ``e2e.build``. ``uv run pytest -m e2e`` runs it; the default run skips it.

One environment serves the session (``e2e.environment.up``); its logs stay in the run directory
the session prints, ``$MODELPLANE_E2E_RUN`` or a fresh one under the e2e cache.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml

from e2e import build, control, environment, pki, workload
from e2e.kubernetes import Cluster

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).parent

EXTERNAL_STACK = (
    "certManager",
    "envoyGateway",
    "envoyAIGateway",
    "inferenceExtension",
    "nodeFeatureDiscovery",
    "nvidiaDRADriver",
    "kaiScheduler",
    "prometheus",
)


E2E_TIMEOUT = 3600
"""Seconds one e2e test may take, its fixtures included: the first one builds the tools (about
12 minutes on a new machine) and brings the control plane up; every wait inside is bounded far
below this, so reaching it means something hung."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("e2e"):
            item.add_marker(pytest.mark.timeout(E2E_TIMEOUT))


def eventually(check: Callable[[], None], timeout: float = 120, interval: float = 1.0) -> None:
    """Runs ``check`` (assertions) until it passes; past ``timeout`` its last failure stands."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            check()
            return
        except (AssertionError, KeyError, ValueError, StopIteration):
            if time.monotonic() >= deadline:
                raise
        time.sleep(interval)


@pytest.fixture(scope="session")
def e2e() -> Iterator[environment.Environment]:
    if os.environ.get("PYTEST_XDIST_WORKER"):
        # Each worker would bring up its own control plane on this machine's two cores.
        pytest.exit("the e2e tier runs one environment: run it without -n (uv run pytest -m e2e)")
    # The PID keeps two sessions started in the same second (the tier's shards) apart.
    run = build.cache_root() / "runs" / f"{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"
    print(f"\ne2e run directory (every process's log): {run}")
    env = environment.up(run)
    try:
        yield env
    finally:
        env.down()


def external(cluster: dict[str, Any]) -> dict[str, Any]:
    """An InferenceCluster as the e2e tier runs it: every stack component, and the gateway,
    marked External (already on the cluster: no Helm runs here, e2e.workload installs their
    CRDs and Gateway)."""
    spec = dict(cluster["spec"])
    gangs = "grove" if spec.get("stack") == "Dynamo" else "leaderWorkerSet"
    spec["servingStack"] = {
        **(spec.get("servingStack") or {}),
        **{c: {"mode": "External"} for c in (*EXTERNAL_STACK, gangs)},
    }
    spec["gateway"] = {**(spec.get("gateway") or {}), "mode": "External"}
    return {**cluster, "spec": spec}


def documents(*paths: Path) -> list[dict[str, Any]]:
    out = []
    for path in paths:
        files = sorted(path.rglob("*.yaml")) if path.is_dir() else [path]
        for f in files:
            out += [d for d in yaml.safe_load_all(f.read_text()) if isinstance(d, dict)]
    return out


def pools_of(cluster: dict[str, Any], classes: dict[str, dict[str, Any]]) -> list[workload.Pool]:
    return [
        workload.Pool(p["name"], int(p.get("nodeCount", 1)), classes[p["className"]])
        for p in cluster["spec"].get("nodePools") or []
    ]


FLEET_LABEL = "e2e.modelplane.ai/fleet"


def guide_cluster(name: str, *, fleet: str | None = None, nodes: int | None = None) -> Any:
    """docs/getting-started/cluster.yaml as cluster ``name`` (its kubeconfig Secret
    ``<name>-kubeconfig``), labelled ``e2e.modelplane.ai/fleet: <fleet or name>`` for a
    deployment's clusterSelector; ``nodes`` L4 nodes in its pool when given."""
    (cluster,) = documents(ROOT / "docs/getting-started/cluster.yaml")
    cluster["metadata"] = {"name": name, "labels": {FLEET_LABEL: fleet or name}}
    cluster["spec"]["cluster"]["existing"]["secretRef"]["name"] = f"{name}-kubeconfig"
    if nodes is not None:
        cluster["spec"]["nodePools"] = [
            {"name": "l4", "className": "nvidia-l4", "nodeCount": nodes}
        ]
    return cluster


def guide_model(
    namespace: str, fleet: str, name: str = "qwen3-8b", replicas: int | None = None
) -> dict[str, Any]:
    """docs/getting-started/model.yaml as ``namespace/name`` on the clusters labelled
    ``e2e.modelplane.ai/fleet: <fleet>``; ``replicas`` of it when given (the guide's two
    otherwise)."""
    (model,) = documents(ROOT / "docs/getting-started/model.yaml")
    model["metadata"] = {"name": name, "namespace": namespace}
    if replicas is not None:
        model["spec"]["replicas"] = replicas
    model["spec"]["template"]["spec"]["clusterSelector"] = {"matchLabels": {FLEET_LABEL: fleet}}
    return model


def tls_secret(name: str, hostname: str, authority: str) -> dict[str, Any]:
    """A server certificate for ``hostname``, signed by a new ``authority``, as the
    kubernetes.io/tls Secret a front gateway's ``tls.secretRef`` names (control plane's
    namespace)."""
    cert = pki.leaf(pki.authority(authority), hostname, dns=(hostname,), server=True)
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "kubernetes.io/tls",
        "metadata": {"name": name, "namespace": control.NAMESPACE},
        "stringData": {"tls.crt": cert.cert.decode(), "tls.key": cert.key.decode()},
    }


def front_door_secret(gateway: str) -> str:
    """The TLS Secret ``guide_front_door`` makes for ``gateway``."""
    return f"{gateway}-tls"


def guide_front_door(
    gateway: str, cluster: str, namespace: str, service: str, selector: dict[str, str]
) -> list[dict[str, Any]]:
    """docs/getting-started/frontdoor.yaml: gateway ``gateway`` on ``cluster`` serving TLS from
    the Secret ``front_door_secret(gateway)`` (first in the list), and the service
    ``namespace/service`` selecting the deployments labelled ``selector``."""
    gw, svc = documents(ROOT / "docs/getting-started/frontdoor.yaml")
    gw["metadata"] = {"name": gateway}
    gw["spec"]["clusterName"] = cluster
    gw["spec"]["tls"] = {"secretRef": {"name": front_door_secret(gateway)}}
    svc["metadata"] = {"name": service, "namespace": namespace}
    svc["spec"]["endpoints"][0]["selector"]["matchLabels"] = selector
    secret = tls_secret(front_door_secret(gateway), gw["spec"]["hostname"], f"e2e-{gateway}")
    return [secret, gw, svc]


def deployment_ready(env: environment.Environment, namespace: str, name: str) -> None:
    env.control.kubectl(
        "-n",
        namespace,
        "wait",
        f"modeldeployment/{name}",
        "--for=condition=Ready",
        "--timeout=600s",
    )


def add_fleet(env: environment.Environment, docs: list[dict[str, Any]]) -> None:
    """A workload cluster per InferenceCluster of ``docs`` (nodes as its pools say), then the
    classes and the clusters, External, on the control plane."""
    classes = {d["metadata"]["name"]: d for d in docs if d["kind"] == "InferenceClass"}
    clusters = [d for d in docs if d["kind"] == "InferenceCluster"]
    for cluster in clusters:
        name = cluster["metadata"]["name"]
        if name not in env.workloads:
            env.add_workload(name, pools_of(cluster, classes))
    env.control.apply(list(classes.values()))
    env.control.apply([external(c) for c in clusters])


def kubectl_wait(cluster: Cluster, line: str, timeout: str = "300s") -> None:
    """A ``kubectl wait`` line as a guide writes it, run against ``cluster`` with a bounded
    timeout; a failure says what was awaited."""
    args: list[str] = []
    words = iter(shlex.split(line)[1:])
    for word in words:
        if word == "--timeout":
            next(words, None)
        elif not word.startswith("--timeout="):
            args.append(word)
    result = cluster.kubectl(*args, f"--timeout={timeout}", check=False, timeout=900)
    assert result.returncode == 0, f"{line}: {result.stderr.strip() or result.stdout.strip()}"


def guarded(env: environment.Environment, cluster: str) -> None:
    """The cluster's replica guard exists: it is composed on the cluster's first reconcile
    after a replica is placed there (the cluster reads its replicas; a placement changes
    nothing it composed), up to Crossplane's poll interval later."""
    usages = env.control.get("clusterusages.protection.crossplane.io")["items"]
    assert any(u["metadata"]["name"].startswith(f"{cluster}-replica-guard") for u in usages)


def namespace(env: environment.Environment, name: str) -> None:
    """The namespace on the control plane, whether an earlier test made it or not."""
    env.control.apply([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}])


def deleted(env: environment.Environment, cluster: str) -> None:
    """Deletes an InferenceCluster; a refusal fails (``eventually`` retries it): its replica
    guard lifts on the cluster's first reconcile after its replicas have gone."""
    done = env.control.kubectl(
        "delete", f"inferencecluster/{cluster}", "--timeout=600s", check=False
    )
    assert done.returncode == 0 or "NotFound" in done.stderr, done.stderr


def retire(env: environment.Environment, spaces: set[str], clusters: set[str]) -> None:
    """Takes what a test module put in the fleet out again, so the next module's deployments
    (the guide's select every cluster) see only their own: the namespaces' ModelDeployments and
    ModelReplicas, then the clusters (once their guards lift) and their workload processes."""
    kinds = "modeldeployments,modelreplicas"

    def removed() -> None:
        # A ModelService's hold on a replica it routes to (a Usage) refuses the replica's delete
        # until the service's own delete has lifted it: the refused ones are asked again.
        for space in spaces:
            done = env.control.kubectl(
                "-n", space, "delete", kinds, "--all", "--wait=false", check=False
            )
            assert done.returncode == 0, done.stderr

    def no_replicas() -> None:
        for space in spaces:
            assert env.control.get("modelreplicas", "-n", space)["items"] == []

    try:
        eventually(removed, timeout=300, interval=5)
        # Kubernetes' garbage collector deletes what the deleted composites composed.
        eventually(no_replicas, timeout=300, interval=2)
        for name in clusters:
            eventually(lambda n=name: deleted(env, n), timeout=300, interval=5)
    finally:
        for name in clusters:
            env.remove_workload(name)


def conditions(cluster: Cluster, *ref: str) -> dict[str, tuple[str, str, str]]:
    status = cluster.get(*ref).get("status") or {}
    return {
        c["type"]: (c["status"], c.get("reason", ""), c.get("message", ""))
        for c in status.get("conditions") or []
    }


def modelplane(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["uv", "run", "modelplane", *args], cwd=ROOT, capture_output=True, text=True, timeout=300
    )


@contextmanager
def sampled(probe: Callable[[], Any], every: float = 1.0) -> Iterator[list[Any]]:
    """Samples ``probe`` every ``every`` seconds in the background while the block runs."""
    samples: list[Any] = []
    stop = threading.Event()

    def loop() -> None:
        while not stop.is_set():
            try:
                samples.append(probe())
            except Exception as error:  # a sample lost to a slow read is not a dip
                samples.append(error)
            stop.wait(every)

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    try:
        yield samples
    finally:
        stop.set()
        thread.join(timeout=30)
