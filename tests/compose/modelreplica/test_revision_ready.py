"""A replica says which stamp its status describes (RevisionReady), so its deployment never
reads a status written before a restamp as one written after: every workload object carries the
stamp it was composed for, and the revision is ready only once the cluster is observed running
it, every copy ready. Through the FunctionRunner, the cluster observed as ``render`` simulates
it."""

from __future__ import annotations

import copy
from typing import Any

from modelplane.compose.modelreplica.composer import CLUSTER_REQUIREMENT
from modelplane.compose.shared.replica_revision import Described, described
from modelplane.labels import TEMPLATE_HASH
from modelplane.reasons import ModelReplica
from modelplane.simulate import simulate_observed
from tests.compose.modelreplica.support import example_inputs
from tests.compose.through import Response, run
from tests.fleet.builders import with_condition

Obj = dict[str, Any]
WORKLOAD = "workload-main"


def stamped(stamp: str | None) -> tuple[Obj, list[Obj]]:
    """The seed example's replica, stamped by a deployment with ``stamp`` (None: hand-written),
    and its cluster."""
    inputs = example_inputs("replica-seed")
    replica = copy.deepcopy(inputs.composite)
    if stamp is not None:
        replica["metadata"].setdefault("annotations", {})[TEMPLATE_HASH] = stamp
        replica["metadata"].setdefault("labels", {})["modelplane.ai/deployment"] = "qwen"
    return replica, list(inputs.required["cluster"])


def compose(replica: Obj, cluster: list[Obj], observed: dict[str, Obj] | None = None) -> Response:
    rsp = run(replica, observed or {}, {CLUSTER_REQUIREMENT: cluster})
    assert rsp.fatal is None, rsp.fatal
    return rsp


def workloads(rsp: Response) -> dict[str, Obj]:
    return {
        k: o["spec"]["forProvider"]["manifest"]
        for k, o in rsp.resources.items()
        if o["spec"].get("forProvider", {}).get("manifest", {}).get("kind") == "Deployment"
    }


def test_each_workload_object_carries_the_stamp_and_no_pod_does() -> None:
    replica, cluster = stamped("aaaa")
    mine = workloads(compose(replica, cluster))
    assert mine and all(
        m["metadata"]["annotations"][TEMPLATE_HASH] == "aaaa" for m in mine.values()
    )
    # Pods are what they would be without the mark: it restarts nothing.
    unmarked = copy.deepcopy(replica)
    del unmarked["metadata"]["annotations"][TEMPLATE_HASH]
    plain = workloads(compose(unmarked, cluster))
    assert {k: m["spec"] for k, m in mine.items()} == {k: m["spec"] for k, m in plain.items()}


def test_a_replica_no_deployment_stamped_says_nothing_of_a_revision() -> None:
    rsp = compose(*stamped(None))
    assert ModelReplica.REVISION_READY not in rsp.conditions
    assert all(
        TEMPLATE_HASH not in (m["metadata"].get("annotations") or {})
        for m in workloads(rsp).values()
    )


def test_the_revision_is_ready_once_the_cluster_runs_it_every_copy_ready() -> None:
    replica, cluster = stamped("aaaa")
    first = compose(replica, cluster)
    status, reason, message = first.condition(ModelReplica.REVISION_READY)
    assert (status, reason) == ("False", "Updating")
    assert message.startswith("revision aaaa not ready on ") and "not observed yet" in message
    running = compose(replica, cluster, simulate_observed(first.resources, ready_copies=1))
    status, reason, message = running.condition(ModelReplica.REVISION_READY)
    assert (status, reason) == ("True", "Running")
    assert message.startswith("revision aaaa ready on ")


def test_after_a_restamp_the_old_pods_serve_and_the_new_revision_is_not_ready() -> None:
    # What the deployment reads next: ModelServing True (the pods observed are the old ones),
    # and a revision that says so. Trusting ModelServing alone updated the next replica.
    replica, cluster = stamped("aaaa")
    first = compose(replica, cluster)
    ran = simulate_observed(first.resources, ready_copies=1)
    replica["metadata"]["annotations"][TEMPLATE_HASH] = "bbbb"
    replica["spec"]["engines"][0]["members"][0]["template"]["spec"]["containers"][0]["image"] = (
        "vllm/vllm-openai:next"
    )
    restamped = compose(replica, cluster, ran)
    assert restamped.condition("ModelServing")[0] == "True"
    status, reason, message = restamped.condition(ModelReplica.REVISION_READY)
    assert (status, reason) == ("False", "Updating")
    assert message.startswith("revision bbbb not ready on ") and "runs revision aaaa" in message


def test_a_workload_running_the_stamp_with_copies_not_ready_is_not_ready() -> None:
    replica, cluster = stamped("aaaa")
    first = compose(replica, cluster)
    rsp = compose(replica, cluster, simulate_observed(first.resources, ready_copies=0))
    status, _, message = rsp.condition(ModelReplica.REVISION_READY)
    assert status == "False" and "not ready (copies updating)" in message


def test_the_deployment_reads_back_the_revision_the_status_describes() -> None:
    replica, cluster = stamped("aaaa")
    first = compose(replica, cluster)
    running = compose(replica, cluster, simulate_observed(first.resources, ready_copies=1))
    for rsp, ready in ((first, False), (running, True)):
        status, reason, message = rsp.condition(ModelReplica.REVISION_READY)
        observed = with_condition(replica, ModelReplica.REVISION_READY, status, reason, message)
        assert described(observed) == Described("aaaa", ready)
    assert described(replica) is None
