"""The ModelCache composition: per selected cluster, the claim a replica mounts and a Job that
fills it where the engines read; per-cluster phases that tell the truth; nothing downloaded is
thrown away by a transient fault."""

from __future__ import annotations

import copy
import hashlib
import re
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml
from click.testing import CliRunner
from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from modelplane import cli
from modelplane.compose.modelcache.composer import (
    CLUSTERS,
    DEPLOYMENTS,
    HYDRATE_IMAGE,
    REPLICAS,
    compose_model_cache,
)
from modelplane.compose.registry import default_registry
from modelplane.compose.shared.cache import cache_claim_name
from modelplane.composer import Inputs, Result
from modelplane.function import FunctionRunner
from modelplane.simulate import simulate_observed
from modelplane.structs import dict_to_struct, struct_to_dict
from tests.compose.modelreplica import support
from tests.compose.results import resources as resources
from tests.upstream_crds import upstream

Obj = dict[str, Any]

ROOT = Path(__file__).resolve().parents[3]
DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")


def cache(
    name: str = "weights",
    *,
    namespace: str = "ml",
    selector: dict[str, str] | None = None,
    revision: str | None = None,
    auth: Obj | None = None,
    size: int = 20,
    resolved: bool = True,
) -> Obj:
    """``resolved``: the status records the commit of ``revision`` (main when None), as once
    the resolve step ran (test_modelcache_resolve.py)."""
    hf: Obj = {"repo": "Qwen/Qwen3-8B", "sizeGiB": size}
    if revision is not None:
        hf["revision"] = revision
    if auth is not None:
        hf["authSecret"] = auth
    spec: Obj = {"source": "HuggingFace", "huggingFace": hf}
    if selector is not None:
        spec["clusterSelector"] = {"matchLabels": selector}
    out = {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelCache",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }
    if resolved:
        ref = revision or "main"
        out["status"] = {
            "resolved": {"repo": hf["repo"], "revision": ref, "commit": commit_of(ref)}
        }
    return out


def commit_of(revision: str) -> str:
    """The commit a branch or tag stands for on the Hub in these tests."""
    return hashlib.sha1(revision.encode()).hexdigest()


def cluster(
    name: str,
    labels: dict[str, str] | None = None,
    *,
    provider: bool = True,
    storage_class: str | None = "filestore-rwx",
) -> Obj:
    status: Obj = {}
    if provider:
        status["providerConfigRef"] = {"name": f"pc-{name}"}
    if storage_class is not None:
        status["cache"] = {"storageClassName": storage_class}
    return {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "InferenceCluster",
        "metadata": {"name": name, "labels": labels or {}},
        "spec": {"stack": "Standard"},
        "status": status,
    }


def compose(mc: Obj, clusters: list[Obj], observed: dict[str, Obj] | None = None) -> Result:
    return compose_model_cache(
        Inputs(composite=mc, required={CLUSTERS: clusters}, observed=observed or {})
    )


def manifests(result: Result, kind: str) -> dict[str, Obj]:
    """The remote manifests of one kind, by the cluster whose ClusterProviderConfig applies them."""
    out = {}
    for obj in resources(result).values():
        manifest = obj["spec"]["forProvider"]["manifest"]
        if manifest["kind"] == kind:
            out[obj["spec"]["providerConfigRef"]["name"].removeprefix("pc-")] = manifest
    return out


def job(result: Result, on: str = "a") -> Obj:
    return manifests(result, "Job")[on]


def hydrate_container(result: Result, on: str = "a") -> Obj:
    [container] = job(result, on)["spec"]["template"]["spec"]["containers"]
    return container


def env(container: Obj) -> dict[str, Obj]:
    return {e["name"]: e for e in container.get("env", [])}


def cluster_status(result: Result) -> list[Obj]:
    return list(result.status["clusters"])


def hydrated(result: Result) -> tuple[str, str]:
    [c] = [c for c in result.conditions if c.type == "Hydrated"]
    return c.status, c.reason


def observed_job(result: Result, on: str, status: Obj | None) -> dict[str, Obj]:
    """Every composed Object as observed, the Job on ``on`` with ``status`` (None: not observed)."""
    observed = simulate_observed(resources(result), ready_copies=0)
    key = next(k for k in observed if k.startswith("hydrate-") and k.endswith(f"-{on}"))
    if status is None:
        del observed[key]
    else:
        observed[key]["status"]["atProvider"]["manifest"]["status"] = status
    return observed


# --- what is composed ---------------------------------------------------------------------------


def test_each_selected_cluster_gets_a_namespace_a_claim_and_a_hydration_job() -> None:
    result = compose(cache(), [cluster("a"), cluster("b")])
    kinds = sorted(
        (o["spec"]["providerConfigRef"]["name"], o["spec"]["forProvider"]["manifest"]["kind"])
        for o in resources(result).values()
    )
    assert kinds == [
        ("pc-a", "Job"),
        ("pc-a", "Namespace"),
        ("pc-a", "PersistentVolumeClaim"),
        ("pc-b", "Job"),
        ("pc-b", "Namespace"),
        ("pc-b", "PersistentVolumeClaim"),
    ]


def test_every_object_applies_through_the_clusters_cluster_provider_config() -> None:
    for obj in resources(compose(cache(), [cluster("a")])).values():
        assert obj["apiVersion"] == "kubernetes.m.crossplane.io/v1alpha1"
        assert obj["metadata"]["namespace"] == "ml"
        assert obj["spec"]["providerConfigRef"] == {"kind": "ClusterProviderConfig", "name": "pc-a"}


def test_the_remote_namespace_is_never_deleted() -> None:
    [ns] = [
        o
        for o in resources(compose(cache(), [cluster("a")])).values()
        if o["spec"]["forProvider"]["manifest"]["kind"] == "Namespace"
    ]
    assert "Delete" not in ns["spec"]["managementPolicies"]
    assert ns["spec"]["forProvider"]["manifest"]["metadata"]["name"] == "ml"


def test_the_claim_has_the_name_a_replica_mounting_the_cache_uses() -> None:
    replica = support.run(
        support.replica(cache="weights", namespace="ml"),
        cache=support.model_cache("weights", "ml"),
    )
    [pod] = support.pod_specs(support.workload(replica)).values()
    [mounted] = [v for v in pod["volumes"] if "persistentVolumeClaim" in v]
    claim = manifests(compose(cache("weights"), [cluster("a")]), "PersistentVolumeClaim")["a"]
    assert claim["metadata"] == {
        "name": cache_claim_name("weights"),
        "namespace": "ml",
        "labels": {"app.kubernetes.io/managed-by": "modelplane"},
    }
    assert mounted["persistentVolumeClaim"]["claimName"] == claim["metadata"]["name"]


def test_the_claim_is_read_write_many_and_requests_the_size_in_gibibytes() -> None:
    claim = manifests(compose(cache(size=35), [cluster("a")]), "PersistentVolumeClaim")["a"]
    assert claim["spec"]["accessModes"] == ["ReadWriteMany"]
    assert claim["spec"]["resources"] == {"requests": {"storage": "35Gi"}}


def test_the_claim_uses_the_rwx_storage_class_the_cluster_publishes() -> None:
    result = compose(cache(), [cluster("a", storage_class="efs-sc")])
    claim = manifests(result, "PersistentVolumeClaim")["a"]
    assert claim["spec"]["storageClassName"] == "efs-sc"


def test_an_existing_clusters_spec_names_the_class_before_its_status_mirrors_it() -> None:
    ic = cluster("a", storage_class=None)
    ic["spec"]["cluster"] = {
        "source": "Existing",
        "existing": {"secretRef": {"name": "kc"}, "cache": {"storageClassName": "efs-sc"}},
    }
    claim = manifests(compose(cache(), [ic]), "PersistentVolumeClaim")["a"]
    assert claim["spec"]["storageClassName"] == "efs-sc"


def test_a_cluster_naming_no_rwx_class_is_reported_as_unable_to_stage_and_gets_nothing() -> None:
    result = compose(cache(), [cluster("a", storage_class=None), cluster("b")])
    assert sorted(manifests(result, "PersistentVolumeClaim")) == ["b"]
    assert not [k for k in result.resources if k.endswith("-a")]
    [a] = [c for c in result.status["clusters"] if c["name"] == "a"]
    assert a == {
        "name": "a",
        "phase": "CannotStage",
        "message": "cannot stage: the cluster names no ReadWriteMany storage class "
        "(spec.cluster.existing.cache.storageClassName)",
        "revisions": [],
    }
    hydrated = next(c for c in result.conditions if c.type == "Hydrated")
    assert (hydrated.status, hydrated.reason) == ("False", "NoStorageClass")


def test_a_cluster_that_stops_naming_its_class_keeps_what_was_staged() -> None:
    first = compose(cache(), [cluster("a")])
    observed = {k: d.resource for k, d in first.resources.items()}
    again = compose(cache(), [cluster("a", storage_class=None)], observed)
    assert set(again.resources) == set(observed)


def test_the_job_downloads_into_the_claim_where_the_engines_read() -> None:
    replica = support.run(
        support.replica(cache="weights", namespace="ml"),
        cache=cache(),
    )
    [pod] = support.pod_specs(support.workload(replica)).values()
    engine = support.container(pod)
    result = compose(cache(), [cluster("a")])
    container = hydrate_container(result)
    volumes = job(result)["spec"]["template"]["spec"]["volumes"]
    [claim_volume] = [v for v in volumes if "persistentVolumeClaim" in v]
    [mount] = [m for m in container["volumeMounts"] if m["name"] == claim_volume["name"]]
    [engine_mount] = [m for m in engine["volumeMounts"] if m["mountPath"] == mount["mountPath"]]
    assert claim_volume["persistentVolumeClaim"]["claimName"] == cache_claim_name("weights")
    assert engine_mount["mountPath"] == mount["mountPath"]
    assert env(container)["HF_HUB_CACHE"] == env(engine)["HF_HUB_CACHE"]


@pytest.mark.parametrize(
    ("revision", "args"),
    [
        (None, ["Qwen/Qwen3-8B", "--revision", commit_of("main")]),
        ("v1.0", ["Qwen/Qwen3-8B", "--revision", commit_of("v1.0")]),
    ],
)
def test_the_job_runs_the_hugging_face_cli_on_the_repo_at_its_revision(
    revision: str | None, args: list[str]
) -> None:
    container = hydrate_container(compose(cache(revision=revision), [cluster("a")]))
    assert (container["image"], container["command"][:2], container["args"]) == (
        HYDRATE_IMAGE,
        ["sh", "-c"],
        args,
    )


def test_the_job_retries_a_bounded_number_of_times_as_a_non_root_user() -> None:
    spec = job(compose(cache(), [cluster("a")]))["spec"]
    pod = spec["template"]["spec"]
    [container] = pod["containers"]
    assert spec["backoffLimit"] == 3
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["runAsUser"] != 0
    assert container["securityContext"]["allowPrivilegeEscalation"] is False


def test_without_an_auth_secret_no_token_is_composed_or_read() -> None:
    result = compose(cache(), [cluster("a")])
    assert manifests(result, "Secret") == {}
    assert "HF_TOKEN" not in env(hydrate_container(result))


def test_an_auth_secret_is_copied_by_reference_and_read_as_hf_token() -> None:
    result = compose(cache(auth={"name": "hf", "key": "token"}), [cluster("a")])
    [token] = [
        o
        for o in resources(result).values()
        if o["spec"]["forProvider"]["manifest"]["kind"] == "Secret"
    ]
    secret = token["spec"]["forProvider"]["manifest"]
    assert "data" not in secret  # the token itself never appears in a composed manifest
    assert token["spec"]["references"] == [
        {
            "patchesFrom": {
                "apiVersion": "v1",
                "kind": "Secret",
                "name": "hf",
                "namespace": "ml",
                "fieldPath": "data[token]",
            },
            "toFieldPath": "data[HF_TOKEN]",
        }
    ]
    ref = env(hydrate_container(result))["HF_TOKEN"]["valueFrom"]["secretKeyRef"]
    assert ref == {"name": secret["metadata"]["name"], "key": "HF_TOKEN"}


def test_an_auth_secret_without_a_key_reads_the_default_key() -> None:
    result = compose(cache(auth={"name": "hf"}), [cluster("a")])
    [token] = [o for o in resources(result).values() if "references" in o["spec"]]
    assert token["spec"]["references"][0]["patchesFrom"]["fieldPath"] == "data[HF_TOKEN]"


def test_a_changed_revision_is_a_new_job_under_a_new_key() -> None:
    before = {k for k in compose(cache(revision="a1"), [cluster("a")]).resources if "hydrate" in k}
    after = {k for k in compose(cache(revision="b2"), [cluster("a")]).resources if "hydrate" in k}
    names = [job(compose(cache(revision=r), [cluster("a")]))["metadata"]["name"] for r in "ab"]
    assert before.isdisjoint(after)
    assert names[0] != names[1]


def test_a_changed_size_resizes_the_claim_and_keeps_the_job() -> None:
    small, large = (compose(cache(size=s), [cluster("a")]) for s in (10, 20))
    assert set(small.resources) == set(large.resources)
    assert job(small) == job(large)


def test_the_job_and_claim_are_ready_only_once_complete_and_bound() -> None:
    result = compose(cache(), [cluster("a")])
    for copies, job_ready in ((0, "False"), (1, "True")):
        observed = simulate_observed(resources(result), ready_copies=copies)
        again = compose(cache(), [cluster("a")], observed)
        readiness = {
            o.resource["spec"]["forProvider"]["manifest"]["kind"]: o.ready
            for o in again.resources.values()
        }
        assert readiness == {
            "Namespace": "True",
            "PersistentVolumeClaim": "True",
            "Job": job_ready,
        }


# --- validation and names -----------------------------------------------------------------------

LONG = "c" * 60 + ".example.com"
SAMPLES = [
    compose(cache(), [cluster("a", storage_class="efs")]),
    compose(
        cache("x" * 63, revision="main", auth={"name": "hf"}),
        [cluster(LONG), cluster(LONG + "x")],
    ),
]


@pytest.mark.parametrize("result", SAMPLES)
def test_every_remote_manifest_validates_against_the_kubernetes_schemas(result: Result) -> None:
    for obj in resources(result).values():
        kubernetes_validate.validate(obj["spec"]["forProvider"]["manifest"], "1.34", strict=True)


@pytest.mark.parametrize("result", SAMPLES)
def test_every_object_is_admitted_by_the_provider_kubernetes_crd(result: Result) -> None:
    admission = upstream()
    for key, obj in resources(result).items():
        assert [str(e) for e in admission.admit(obj).errors] == [], key


def test_names_are_dns_labels_distinct_per_cluster_even_for_long_names() -> None:
    objects = resources(SAMPLES[1]).values()
    names = [o["metadata"]["name"] for o in objects]
    remote = {
        (o["spec"]["providerConfigRef"]["name"], o["spec"]["forProvider"]["manifest"]["kind"])
        for o in objects
    }
    assert all(DNS_LABEL.fullmatch(n) for n in names)
    assert len(set(names)) == len(names) == len(remote)
    for obj in objects:
        assert DNS_LABEL.fullmatch(obj["spec"]["forProvider"]["manifest"]["metadata"]["name"])


# --- selection ----------------------------------------------------------------------------------

FLEET = [
    cluster("east", {"region": "us", "tier": "gpu"}),
    cluster("west", {"region": "us"}),
    cluster("eu", {"region": "eu", "tier": "gpu"}),
]


@pytest.mark.parametrize(
    ("selector", "selected"),
    [
        (None, ["east", "eu", "west"]),
        ({}, ["east", "eu", "west"]),
        ({"region": "us"}, ["east", "west"]),
        ({"region": "us", "tier": "gpu"}, ["east"]),
        ({"region": "ap"}, []),
    ],
)
def test_the_selector_picks_the_clusters_whose_labels_all_match(
    selector: dict[str, str] | None, selected: list[str]
) -> None:
    result = compose(cache(selector=selector), FLEET)
    assert sorted(manifests(result, "PersistentVolumeClaim")) == selected
    assert [c["name"] for c in cluster_status(result)] == selected


def test_no_selected_cluster_is_not_hydrated() -> None:
    result = compose(cache(selector={"region": "ap"}), FLEET)
    assert hydrated(result) == ("False", "NoMatchingCluster")
    assert result.status["summary"] == {"ready": "0/0"}


# --- phases -------------------------------------------------------------------------------------

COMPLETE = {"conditions": [{"type": "Complete", "status": "True"}], "succeeded": 1}
FAILED = {
    "conditions": [
        {"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded", "message": "3 tries"}
    ]
}


@pytest.mark.parametrize(
    ("status", "phase", "message"),
    [
        (None, "Pending", "the hydration Job is not observed yet"),
        ({}, "Hydrating", "the hydration Job is downloading the weights"),
        ({"active": 1}, "Hydrating", "the hydration Job is downloading the weights"),
        (COMPLETE, "Ready", None),
        (FAILED, "Failed", "the hydration Job failed: BackoffLimitExceeded: 3 tries"),
    ],
)
def test_a_clusters_phase_follows_its_hydration_job(
    status: Obj | None, phase: str, message: str | None
) -> None:
    first = compose(cache(), [cluster("a")])
    result = compose(cache(), [cluster("a")], observed_job(first, "a", status))
    [entry] = cluster_status(result)
    assert (entry["phase"], entry.get("message")) == (phase, message)


def test_the_summary_counts_ready_clusters_and_hydrated_waits_for_all() -> None:
    clusters = [cluster("a"), cluster("b"), cluster("c")]
    first = compose(cache(), clusters)
    observed = simulate_observed(resources(first), ready_copies=1)
    key = next(k for k in observed if k.startswith("hydrate-") and k.endswith("-c"))
    observed[key]["status"]["atProvider"]["manifest"]["status"] = {"active": 1}
    result = compose(cache(), clusters, observed)
    assert result.status["summary"] == {"ready": "2/3"}
    assert hydrated(result) == ("False", "Hydrating")


def test_every_cluster_ready_is_hydrated() -> None:
    clusters = [cluster("a"), cluster("b")]
    observed = simulate_observed(resources(compose(cache(), clusters)), ready_copies=1)
    result = compose(cache(), clusters, observed)
    assert result.status["summary"] == {"ready": "2/2"}
    assert hydrated(result) == ("True", "AllClustersReady")


def test_a_failed_cluster_makes_hydration_failed() -> None:
    first = compose(cache(), [cluster("a"), cluster("b")])
    result = compose(cache(), [cluster("a"), cluster("b")], observed_job(first, "b", FAILED))
    assert hydrated(result) == ("False", "HydrationFailed")


# --- faults and fleet changes -------------------------------------------------------------------


def test_a_cluster_without_a_provider_config_is_pending_and_says_so() -> None:
    result = compose(cache(), [cluster("a", provider=False)])
    assert cluster_status(result) == [
        {
            "name": "a",
            "phase": "Pending",
            "message": "the cluster publishes no status.providerConfigRef yet",
            "revisions": [],
        }
    ]
    assert result.resources == {}


def test_a_cluster_losing_its_provider_config_keeps_its_observed_objects() -> None:
    first = compose(cache(), [cluster("a"), cluster("b")])
    observed = simulate_observed(resources(first), ready_copies=1)
    result = compose(cache(), [cluster("a"), cluster("b", provider=False)], observed)
    assert set(result.resources) == set(observed)
    kept = {k: d for k, d in result.resources.items() if k.endswith("-b")}
    for key, desired in kept.items():
        assert desired.resource["spec"] == first.resources[key].resource["spec"]
        assert "status" not in desired.resource
    assert [c["phase"] for c in cluster_status(result)] == ["Ready", "Pending"]


@pytest.mark.parametrize(
    "fleet",
    [[cluster("a", {"t": "x"})], [cluster("a", {"t": "x"}), cluster("b", {"t": "y"})]],
    ids=["deleted", "relabelled"],
)
def test_a_cluster_gone_or_no_longer_selected_loses_its_objects(fleet: list[Obj]) -> None:
    both = [cluster("a", {"t": "x"}), cluster("b", {"t": "x"})]
    observed = simulate_observed(resources(compose(cache(selector={"t": "x"}), both)), 1)
    # A cluster missing from the list is asked for by name; nothing back is its deletion. The
    # replicas are read: none mounts the claim (test_selector_readers.py: while one does).
    required = {CLUSTERS: fleet, "cluster/b": [], DEPLOYMENTS: [], REPLICAS: []}
    result = compose_model_cache(
        Inputs(composite=cache(selector={"t": "x"}), required=required, observed=observed)
    )
    assert sorted(manifests(result, "PersistentVolumeClaim")) == ["a"]
    assert not [k for k in result.resources if k.endswith("-b")]


def test_until_the_clusters_are_read_every_observed_object_is_kept() -> None:
    observed = simulate_observed(resources(compose(cache(), [cluster("a")])), 1)
    result = compose_model_cache(Inputs(composite=cache(), observed=observed))
    assert set(result.resources) == set(observed)
    assert [(c.type, c.status, c.reason) for c in result.conditions] == [
        ("Hydrated", "Unknown", "WaitingForFleet")
    ]
    assert result.requirements[CLUSTERS].kind == "InferenceCluster"


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda s: s.update(source="S3"), "spec.source"),
        (lambda s: s.pop("huggingFace"), "spec.huggingFace"),
        (lambda s: s["huggingFace"].pop("repo"), "spec.huggingFace.repo"),
        (lambda s: s["huggingFace"].update(sizeGiB=0), "spec.huggingFace.sizeGiB"),
        (lambda s: s["huggingFace"].update(authSecret={}), "spec.huggingFace.authSecret.name"),
        (lambda s: s.update(clusterSelector={"matchLabels": []}), "spec.clusterSelector"),
        (lambda s: s.update(clusterSelector=["region"]), "spec.clusterSelector"),
    ],
)
def test_a_malformed_cache_fails_naming_the_field(mutate: Any, field: str) -> None:
    mc = cache()
    mutate(mc["spec"])
    result = compose(mc, [cluster("a")])
    assert result.fatal is not None and field in result.fatal
    assert result.resources == {}


# --- through the function and render ------------------------------------------------------------


def request(mc: Obj, clusters: list[Obj] | None) -> fnv1.RunFunctionRequest:
    req = fnv1.RunFunctionRequest()
    req.observed.composite.resource.CopyFrom(dict_to_struct(mc))
    if clusters is not None:
        resources = req.required_resources[CLUSTERS]  # present even when it matched nothing
        for obj in clusters:
            resources.items.add().resource.CopyFrom(dict_to_struct(obj))
    return req


def test_through_run_function_the_clusters_are_required_first() -> None:
    rsp = FunctionRunner(default_registry()).run(request(cache(), None))
    selector = rsp.requirements.resources[CLUSTERS]
    assert (selector.api_version, selector.kind) == ("modelplane.ai/v1alpha1", "InferenceCluster")
    assert len(rsp.desired.resources) == 0


def test_through_run_function_each_selected_cluster_is_composed() -> None:
    rsp = FunctionRunner(default_registry()).run(request(cache(), FLEET))
    claims = [
        struct_to_dict(r.resource)["spec"]["forProvider"]["manifest"]
        for r in rsp.desired.resources.values()
    ]
    assert sum(1 for m in claims if m["kind"] == "PersistentVolumeClaim") == 3
    assert not [r for r in rsp.results if r.severity == fnv1.SEVERITY_FATAL]


def test_the_same_inputs_give_byte_identical_responses() -> None:
    req = request(cache(auth={"name": "hf"}), list(reversed(FLEET)))
    first = FunctionRunner(default_registry()).run(req)
    second = FunctionRunner(default_registry()).run(copy.deepcopy(req))
    assert first.SerializeToString(deterministic=True) == second.SerializeToString(
        deterministic=True
    )


def test_the_cache_example_renders_ready_once_a_copy_can_run() -> None:
    example = str(ROOT / "examples" / "replica-cache")
    for copies, status in (("0", "False"), ("1", "True")):
        out = CliRunner().invoke(cli.main, ["render", example, "--simulate-ready-copies", copies])
        assert out.exit_code == 0, out.output
        [mc] = [d for d in yaml.safe_load_all(out.output) if d["kind"] == "ModelCache"]
        assert {c["type"]: c["status"] for c in mc["status"]["conditions"]}["Hydrated"] == status
