"""Once a cluster's weights are hydrated, through the real FunctionRunner: the Job and the token
copy leave the cluster, the cluster stays Ready whatever becomes of the finished Job, and only
evidence that the weights are gone (a new download, the claim gone) hydrates it again."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

from modelplane.compose.modelcache.composer import CLUSTERS
from modelplane.simulate import simulate_observed
from tests.compose.modelcache.test_modelcache import COMPLETE, cache, cluster, commit_of
from tests.compose.through import Response, reconcile, run

Obj = dict[str, Any]
ROOT = Path(__file__).resolve().parents[3]
AUTH = {"name": "hf"}
REPO = "Qwen/Qwen3-8B"
ON_A = {CLUSTERS: [cluster("a")]}


def kinds(rsp: Response) -> list[str]:
    return sorted(r["spec"]["forProvider"]["manifest"]["kind"] for r in rsp.resources.values())


def job_key(rsp: Response) -> str:
    [key] = [k for k in rsp.resources if k.startswith("hydrate-")]
    return key


def observed(rsp: Response, job: Obj | None = COMPLETE, claim_uid: str = "uid-1") -> dict[str, Obj]:
    """What Crossplane observes of ``rsp``'s objects: the Job with status ``job``, the claim
    bound under ``claim_uid``."""
    out = simulate_observed(copy.deepcopy(rsp.resources), ready_copies=0)
    for key, obj in out.items():
        manifest = obj["status"]["atProvider"]["manifest"]
        if key.startswith("hydrate-") and job is not None:
            manifest["status"] = job
        if key.startswith("claim-"):
            manifest.setdefault("metadata", {})["uid"] = claim_uid
            manifest["status"] = {"phase": "Bound"}
    return out


def with_status(mc: Obj, rsp: Response) -> Obj:
    """The cache as the next reconcile reads it: the status ``rsp`` wrote."""
    return {**mc, "status": {k: v for k, v in rsp.status.items() if k != "summary"}}


def rsp_status(rsp: Response) -> list[Obj]:
    return list(rsp.status["clusters"])


def hydrate(mc: Obj) -> tuple[Response, Obj, dict[str, Obj]]:
    """Runs the cache until its cluster is recorded hydrated: the response that records it,
    the cache with that status and what is observed then."""
    first = reconcile(mc, {}, ON_A)
    seen = observed(first)
    done = reconcile(mc, seen, ON_A)
    return done, with_status(mc, done), seen


def test_a_completed_job_is_recorded_with_its_digest_and_the_claim_it_filled() -> None:
    done, _, _seen = hydrate(cache())
    [entry] = rsp_status(done)
    digest = job_key(done).split("-")[1]
    assert entry == {
        "name": "a",
        "phase": "Ready",
        "hydratedBy": digest,
        "claimUID": "uid-1",
        "revisions": [commit_of("main")],
    }


def test_the_job_stays_until_its_completion_is_recorded() -> None:
    done, _, _ = hydrate(cache(auth=AUTH))
    assert kinds(done) == ["Job", "Namespace", "PersistentVolumeClaim", "Secret"]


def test_once_recorded_the_token_and_the_job_leave_the_cluster() -> None:
    _done, mc, seen = hydrate(cache(auth=AUTH))
    after = reconcile(mc, seen, ON_A)
    assert kinds(after) == ["Namespace", "PersistentVolumeClaim"]
    assert after.condition("Hydrated")[:2] == ("True", "AllClustersReady")


def test_a_cleaned_up_job_leaves_the_cluster_ready_and_is_not_composed_again() -> None:
    _done, mc, seen = hydrate(cache())
    gone = {k: v for k, v in seen.items() if not k.startswith("hydrate-")}
    after = reconcile(mc, gone, ON_A)
    assert [c["phase"] for c in rsp_status(after)] == ["Ready"]
    assert after.condition("Hydrated")[0] == "True"
    assert not [k for k in after.resources if k.startswith("hydrate-")]


def test_the_claim_stays_ready_once_hydrated() -> None:
    _done, mc, seen = hydrate(cache())
    after = reconcile(mc, {k: v for k, v in seen.items() if not k.startswith("hydrate-")}, ON_A)
    [claim] = [k for k in after.resources if k.startswith("claim-")]
    assert after.ready[claim] == "READY_TRUE"


def test_the_hydrated_record_is_kept_on_every_later_reconcile() -> None:
    done, mc, seen = hydrate(cache())
    after = reconcile(mc, seen, ON_A)
    assert rsp_status(after) == rsp_status(done)


def test_a_new_revision_hydrates_again_and_brings_the_token_back() -> None:
    done, mc, seen = hydrate(cache(auth=AUTH))
    moved = copy.deepcopy(mc)
    moved["spec"]["huggingFace"]["revision"] = "v2"
    moved["status"]["resolved"] = {"repo": REPO, "revision": "v2", "commit": commit_of("v2")}
    after = reconcile(moved, {k: v for k, v in seen.items() if not k.startswith("hydrate-")}, ON_A)
    assert kinds(after) == ["Job", "Namespace", "PersistentVolumeClaim", "Secret"]
    assert [c["phase"] for c in rsp_status(after)] == ["Pending"]
    assert job_key(after) != job_key(done)


def test_a_claim_recreated_on_the_cluster_hydrates_again() -> None:
    done, mc, _seen = hydrate(cache(auth=AUTH))
    recreated = observed(done, job=None, claim_uid="uid-2")
    after = reconcile(
        mc, {k: v for k, v in recreated.items() if not k.startswith("hydrate-")}, ON_A
    )
    assert "Job" in kinds(after) and "Secret" in kinds(after)
    assert after.condition("Hydrated")[0] == "False"


def test_a_claim_object_gone_hydrates_again() -> None:
    _done, mc, seen = hydrate(cache())
    after = reconcile(mc, {k: v for k, v in seen.items() if k.startswith("namespace-")}, ON_A)
    assert "Job" in kinds(after)
    assert [c["phase"] for c in rsp_status(after)] == ["Pending"]


def test_a_record_without_the_claim_uid_still_holds_while_the_claim_is_observed() -> None:
    _done, mc, seen = hydrate(cache())
    del mc["status"]["clusters"][0]["claimUID"]
    after = reconcile(mc, seen, ON_A)
    assert "Job" not in kinds(after)
    assert rsp_status(after)[0]["claimUID"] == "uid-1"


# provider-kubernetes, internal/controller/namespaced/object/object.go at b4bd48391ce5
# (the commit tests/upstream vendors the Object CRD from): an Object Crossplane deletes has its
# remote object deleted with spec.forProvider.deletionPropagationPolicy, when its management
# policies allow Delete. So leaving the Job and the token copy out of desired state removes
# them, the Job's pods with it, only while both hold for what is composed.
OBJECT_CRD = ROOT / "tests" / "upstream" / "crds" / "kubernetes.m.crossplane.io_objects.yaml"


def test_the_token_and_job_objects_delete_what_they_carry_when_they_go() -> None:
    first = reconcile(cache(auth=AUTH), {}, ON_A)
    for key in (job_key(first), "token-a"):
        obj = first.resources[key]
        assert obj["spec"].get("managementPolicies", ["*"]) == ["*"]
        assert "deletionPropagationPolicy" not in obj["spec"]["forProvider"]


def test_provider_kubernetes_deletes_remote_objects_in_the_background_by_default() -> None:
    crd = yaml.safe_load(OBJECT_CRD.read_text())
    [version] = [v for v in crd["spec"]["versions"] if v["name"] == "v1alpha1"]
    spec = version["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
    policy = spec["forProvider"]["properties"]["deletionPropagationPolicy"]
    assert policy["default"] == "Background"
    assert spec["managementPolicies"]["default"] == ["*"]


def test_a_hydrated_cluster_that_loses_its_provider_config_stays_hydrated() -> None:
    done, mc, seen = hydrate(cache())
    rsp = run(mc, seen, {CLUSTERS: [cluster("a", provider=False)]})
    [entry] = rsp_status(rsp)
    assert (entry["phase"], entry["hydratedBy"]) == ("Ready", rsp_status(done)[0]["hydratedBy"])
    after = reconcile(with_status(mc, rsp), seen, ON_A)
    assert "Job" not in kinds(after)


def test_until_the_clusters_are_read_the_hydrated_record_is_kept() -> None:
    done, mc, seen = hydrate(cache())
    rsp = run(mc, seen, {})
    assert rsp_status(rsp) == rsp_status(done)


def test_with_no_cluster_listed_the_hydrated_record_is_kept() -> None:
    done, mc, seen = hydrate(cache())
    rsp = run(mc, seen, {CLUSTERS: []})
    assert rsp_status(rsp) == rsp_status(done)


def test_a_hydrated_cluster_missing_from_the_list_stays_hydrated_while_it_is_read_by_name() -> None:
    fleet = [cluster("a"), cluster("b")]
    first = run(cache(), {}, {CLUSTERS: fleet})
    seen = observed(first)
    done = run(cache(), seen, {CLUSTERS: fleet})
    mc = with_status(cache(), done)
    rsp = run(mc, seen, {CLUSTERS: [cluster("b")]})
    entry = next(c for c in rsp_status(rsp) if c["name"] == "a")
    assert (entry["phase"], entry["hydratedBy"]) == ("Ready", rsp_status(done)[0]["hydratedBy"])
