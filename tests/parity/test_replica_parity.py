"""ModelReplica behaviours the public implementation's backend tests assert, checked on ours
(docs/design/parity.md lists them, each beside the test that proves it)."""

from __future__ import annotations

import pytest

from tests.compose.modelreplica.support import (
    cluster,
    container,
    engine,
    engine_container,
    leader,
    manifests,
    pod_specs,
    replica,
    run,
    standalone,
    worker,
    workload,
)

STACKS = ["Standard", "Dynamo"]
POD_IP = {"name": "VLLM_HOST_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}


@pytest.mark.parametrize("stack", STACKS)
def test_a_pod_field_env_of_a_gang_engine_passes_through(stack: str) -> None:
    lead = leader(containers=[engine_container(env=[POD_IP])])
    result = run(replica(engine("main", lead, worker())), on=cluster(stack=stack))
    env = container(pod_specs(workload(result))["leader"])["env"]
    assert env[-1] == POD_IP


@pytest.mark.parametrize("stack", STACKS)
def test_a_worker_without_metadata_gets_only_modelplanes_labels_and_no_annotations(
    stack: str,
) -> None:
    result = run(replica(engine("main", leader(), worker())), on=cluster(stack=stack))
    manifest = workload(result)
    if stack == "Standard":
        meta = manifest["spec"]["leaderWorkerTemplate"]["workerTemplate"]["metadata"]
    else:
        cliques = manifest["spec"]["template"]["cliques"]
        meta = next(c for c in cliques if c["labels"].get("modelplane.ai/role") == "Worker")
    # Modelplane's own labels, the engine type it tells the picker, and the gang scheduler's queue.
    managed = ("modelplane.ai/", "app.kubernetes.io/", "llm-d.ai/engine-type", "kai.scheduler/")
    assert all(k.startswith(managed) for k in meta["labels"])
    assert "annotations" not in meta


def test_claim_templates_are_ready_once_created() -> None:
    result = run(replica())
    templates = [
        d.resource
        for k, d in result.resources.items()
        if d.resource["spec"]["forProvider"]["manifest"]["kind"] == "ResourceClaimTemplate"
    ]
    assert templates
    assert {t["spec"]["readiness"]["policy"] for t in templates} == {"SuccessfulCreate"}


def test_several_device_requests_are_one_claim_on_the_engine_container() -> None:
    devices = [
        {"name": "gpu", "deviceClassName": "gpu.nvidia.com", "count": 8},
        {"name": "nic", "deviceClassName": "nic.example.com", "count": 8},
    ]
    result = run(replica(engine("main", standalone(devices=devices))))
    pod = pod_specs(workload(result))["standalone"]
    [claim] = pod["resourceClaims"]
    assert container(pod)["resources"]["claims"] == [{"name": claim["name"]}]
    [template] = [m for m in manifests(result).values() if m["kind"] == "ResourceClaimTemplate"]
    assert [r["name"] for r in template["spec"]["spec"]["devices"]["requests"]] == ["gpu", "nic"]


@pytest.mark.parametrize("copies", [1, 2])
def test_one_copy_or_many_is_fronted_by_a_pool_and_a_picker(copies: int) -> None:
    kinds = {m["kind"] for m in manifests(run(replica(engine("main", copies=copies)))).values()}
    assert {"InferencePool", "HTTPRoute", "Deployment", "Service"} <= kinds


def test_a_leaderworkerset_in_unified_serving_is_fronted_by_a_pool() -> None:
    result = run(replica(engine("main", leader(), worker())), on=cluster(stack="Standard"))
    kinds = [m["kind"] for m in manifests(result).values()]
    assert "LeaderWorkerSet" in kinds and "InferencePool" in kinds
