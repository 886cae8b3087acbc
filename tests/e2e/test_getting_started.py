"""docs/getting-started.md on a real control plane: its class, cluster (stack External, see
conftest.external) and first model, waited for with the guide's own ``kubectl wait`` lines; the
workload cluster then runs what the replicas composed, scheduled and DRA-allocated for real."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator

import pytest

from e2e.environment import Environment
from e2e.workload import POOL_LABEL
from modelplane.compose.modelreplica.objectives import SERVED_ANNOTATION
from modelplane.compose.modelreplica.picker import COMPONENT as PICKER
from modelplane.compose.shared.frontdoor import PRIORITY_VALUES
from tests.docs.test_getting_started import commands
from tests.e2e.conftest import (
    ROOT,
    add_fleet,
    documents,
    kubectl_wait,
    modelplane,
    namespace,
    retire,
)
from tests.networkpolicy import matches

pytestmark = pytest.mark.e2e

GUIDE = ROOT / "docs" / "getting-started"
COMPONENT_LABEL = "modelplane.ai/component"


def waits(prefix: str) -> list[str]:
    return [c for c in commands() if c.startswith("kubectl") and " wait " in c and prefix in c]


@pytest.fixture(scope="module")
def served(e2e: Environment) -> Iterator[Environment]:
    try:
        add_fleet(e2e, documents(GUIDE / "classes.yaml", GUIDE / "cluster.yaml"))
        for line in waits("inferencecluster/gpu-1"):
            kubectl_wait(e2e.control, line)
        namespace(e2e, "ml-team")
        applied = time.monotonic()
        e2e.control.apply((GUIDE / "model.yaml").read_text())
        for line in waits("modeldeployment/qwen3-8b"):
            kubectl_wait(e2e.control, line, timeout="600s")
        print(f"\ngetting-started: model applied to Ready in {time.monotonic() - applied:.0f} s")
        yield e2e
    finally:
        # Also when the setup failed: what it added must not stay in later modules' fleet.
        retire(e2e, {"ml-team"}, {"gpu-1"})


def test_the_guide_waits_for_the_cluster_and_the_model(served: Environment) -> None:
    assert len(waits("inferencecluster/gpu-1")) == 4
    assert len(waits("modeldeployment/qwen3-8b")) == 3


def test_every_replica_serves(served: Environment) -> None:
    replicas = served.control.get("modelreplicas", "-n", "ml-team")["items"]
    assert len(replicas) == 2
    for replica in replicas:
        ref = f"modelreplica/{replica['metadata']['name']}"
        served.control.kubectl(
            "-n", "ml-team", "wait", ref, "--for=condition=ModelServing", "--timeout=120s"
        )


def test_engine_pods_run_on_the_pools_nodes_with_claims_from_the_drivers_slices(
    served: Environment,
) -> None:
    cluster = served.workloads["gpu-1"]
    nodes = {n["metadata"]["name"] for n in cluster.get("nodes", "-l", f"{POOL_LABEL}=l4")["items"]}
    claims = cluster.get("resourceclaims", "-n", "ml-team")["items"]
    assert len(claims) == 2
    allocated = set()
    for claim in claims:
        (result,) = claim["status"]["allocation"]["devices"]["results"]
        assert result["driver"] == "gpu.nvidia.com"
        assert result["pool"] in nodes  # the stand-in driver's pool is its node
        allocated.add((result["pool"], result["device"]))
        assert claim["status"].get("reservedFor"), claim["metadata"]["name"]
    assert len(allocated) == 2  # two replicas, two distinct GPUs
    engines = [
        p for p in cluster.get("pods", "-n", "ml-team")["items"] if p["spec"].get("resourceClaims")
    ]
    assert len(engines) == 2
    for pod in engines:
        assert pod["spec"]["nodeName"] in nodes
        assert pod["status"]["phase"] == "Running"


def test_pools_and_routes_are_admitted_and_accepted_by_the_gateway(served: Environment) -> None:
    cluster = served.workloads["gpu-1"]
    pools = cluster.get("inferencepools.inference.networking.k8s.io", "-n", "ml-team")["items"]
    routes = cluster.get("httproutes.gateway.networking.k8s.io", "-n", "ml-team")["items"]
    assert len(pools) == len(routes) == 2
    for route in routes:
        (parent,) = route["status"]["parents"]
        accepted = {c["type"]: c["status"] for c in parent["conditions"]}
        assert accepted == {"Accepted": "True", "ResolvedRefs": "True"}


def test_every_pool_has_an_admitted_objective_for_each_priority(served: Environment) -> None:
    # The fleet hop names one objective per value (compose/modelreplica/objectives.py); the
    # real API server admits them against llm-d-router v0.10.0's CRD, as an External
    # inference extension's owner installs it (e2e.workload.EXTERNAL_STACK_CRDS).
    cluster = served.workloads["gpu-1"]
    pools = cluster.get("inferencepools.inference.networking.k8s.io", "-n", "ml-team")["items"]
    objectives = cluster.get("inferenceobjectives.llm-d.ai", "-n", "ml-team")["items"]
    by_pool: dict[str, set[int]] = {}
    for o in objectives:
        by_pool.setdefault(o["spec"]["poolRef"]["name"], set()).add(o["spec"]["priority"])
    assert len(pools) == 2
    assert by_pool == {p["metadata"]["name"]: set(PRIORITY_VALUES) for p in pools}


def test_each_picker_starts_marked_served_and_never_rolls_for_it(served: Environment) -> None:
    # Placed behind StackReady, a new picker is marked from its first apply: the mark that
    # restarts a picker started before its objectives (compose/modelreplica/objectives.py)
    # restarts no new one. Generation 1: its spec never changed after it was created.
    cluster = served.workloads["gpu-1"]
    deployments = cluster.get("deployments.apps", "-n", "ml-team")["items"]
    pickers = [
        d
        for d in deployments
        if d["spec"]["template"]["metadata"]["labels"].get(COMPONENT_LABEL) == PICKER
    ]
    assert len(pickers) == 2
    for picker in pickers:
        annotations = picker["spec"]["template"]["metadata"]["annotations"]
        assert annotations.get(SERVED_ANNOTATION) == "true", picker["metadata"]["name"]
        assert picker["metadata"]["generation"] == 1, picker["metadata"]["name"]


def test_explain_places_the_replicas_where_they_run(served: Environment) -> None:
    out = modelplane("explain", str(GUIDE), "-o", "json")
    assert out.returncode == 0, out.stderr
    (deployment,) = json.loads(out.stdout)["deployments"]
    explained = {
        (p["cluster"], p["engines"][0]["members"][0]["pool"]) for p in deployment["placements"]
    }
    running = {
        (r["spec"]["clusterName"], r["spec"]["engines"][0]["members"][0]["nodePoolName"])
        for r in served.control.get("modelreplicas", "-n", "ml-team")["items"]
    }
    assert explained == running == {("gpu-1", "l4")}


def test_the_deployment_is_ready_for_kubectl_get(served: Environment) -> None:
    out = served.control.kubectl("-n", "ml-team", "get", "modeldeployments").stdout
    header, row = out.splitlines()[:2]
    columns = table_row(header, row)
    assert (columns["DESIRED"], columns["PLACED"], columns["SERVING"]) == ("2", "2", "2")
    assert columns["READY"] == "True"
    assert columns["AUTOSCALING"] == ""  # a manual deployment: the column stays blank


def table_row(header: str, row: str) -> dict[str, str]:
    """A ``kubectl get`` row by column, cut where the header's columns start: a column a
    composite leaves blank (AUTOSCALING on a manual deployment) is empty, not skipped."""
    starts = [m.start() for m in re.finditer(r"\S+", header)]
    ends = [*starts[1:], None]
    return {header[s:e].strip(): row[s:e].strip() for s, e in zip(starts, ends, strict=True)}


def test_the_replicas_network_policies_are_admitted_and_select_their_own_pods(
    served: Environment,
) -> None:
    """The API server admits every composed NetworkPolicy (no CNI enforces them here: what they
    admit is tests/conformance/test_network_policy.py's), and each selects its own replica's
    pods as the workload controllers labelled them, and no other replica's."""
    cluster = served.workloads["gpu-1"]
    policies = cluster.get("networkpolicies.networking.k8s.io", "-n", "ml-team")["items"]
    pods = cluster.get("pods", "-n", "ml-team")["items"]
    replicas = {
        r["metadata"]["name"] for r in served.control.get("modelreplicas", "-n", "ml-team")["items"]
    }
    assert len(policies) == 2 * len(replicas) == 4
    for policy in policies:
        assert policy["spec"]["policyTypes"] == ["Ingress"]
        selected = [
            p for p in pods if matches(policy["spec"]["podSelector"], p["metadata"]["labels"])
        ]
        owners = {p["metadata"]["labels"]["modelplane.ai/replica"] for p in selected}
        assert owners <= {policy["metadata"]["labels"]["modelplane.ai/replica"]}, policy["metadata"]
    engines = [p for p in pods if p["spec"].get("resourceClaims")]
    pickers = [p for p in pods if COMPONENT_LABEL in p["metadata"]["labels"]]
    assert len(engines) == 2
    for pod, suffix in [*((e, "-engines") for e in engines), *((p, "-epp") for p in pickers)]:
        selecting = [
            p["metadata"]["name"]
            for p in policies
            if matches(p["spec"]["podSelector"], pod["metadata"]["labels"])
        ]
        assert len(selecting) == 1 and selecting[0].endswith(suffix), selecting
