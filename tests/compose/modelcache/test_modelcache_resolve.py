"""The resolve Pod of a ModelCache on a branch or tag: what it runs, what it ends with, and how its
observed status is read back. The Hub library is huggingface_hub v0.36.2, what the vLLM v0.23.0
image ships (src/huggingface_hub/hf_api.py: ``HfApi.model_info(repo_id, *, revision=None, ...,
expand=None, token=None)``, ``ModelInfo.sha`` the commit the revision names)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from modelplane.compose.modelcache.composer import HYDRATE_IMAGE, RESOLVE
from modelplane.compose.modelcache.resolve import TERMINATION_LOG, observed
from modelplane.compose.shared.cache import RESOLVE_ANNOTATION
from modelplane.composer import Result
from modelplane.simulate import simulate_observed
from tests.compose.modelcache.test_modelcache import (
    cache,
    cluster,
    commit_of,
    compose,
    env,
    manifests,
)
from tests.compose.results import resources

Obj = dict[str, Any]
SHA = "0123456789abcdef0123456789abcdef01234567"

# The same keyword-only signature as v0.36.2, so a call it would reject fails here too.
FAKE_HUB = f'''
import json, os
class ModelInfo:
    def __init__(self, sha):
        self.sha = sha
class HfApi:
    def model_info(self, repo_id, *, revision=None, timeout=None, securityStatus=None,
                   files_metadata=False, expand=None, token=None):
        with open(os.environ["ASKED"], "w") as f:
            json.dump({{"repo": repo_id, "revision": revision, "expand": expand}}, f)
        return ModelInfo("{SHA}")
'''


def pod(mc: Obj | None = None) -> Obj:
    return manifests(compose(mc or cache(resolved=False), [cluster("a"), cluster("b")]), "Pod")


def container(mc: Obj | None = None) -> Obj:
    [only] = pod(mc)["a"]["spec"]["containers"]
    return dict(only)


def test_the_pod_runs_on_the_first_cluster_only() -> None:
    assert list(pod()) == ["a"]


def test_the_pod_asks_the_hub_for_the_revision_s_commit_and_ends_with_it(tmp_path: Path) -> None:
    hub = tmp_path / "lib" / "huggingface_hub"
    hub.mkdir(parents=True)
    (hub / "__init__.py").write_text(FAKE_HUB)
    log = tmp_path / "termination-log"
    spec = container(cache(revision="v1.0", resolved=False))
    command, flag, script = spec["command"]
    done = subprocess.run(
        [sys.executable, flag, script.replace(TERMINATION_LOG, str(log)), *spec["args"]],
        env={"PYTHONPATH": str(tmp_path / "lib"), "ASKED": str(tmp_path / "asked")},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert command == "python3"
    assert log.read_text() == SHA
    assert (tmp_path / "asked").read_text() == (
        '{"repo": "Qwen/Qwen3-8B", "revision": "v1.0", "expand": ["sha"]}'
    )


def test_the_pod_runs_the_hydration_image_with_the_token_and_no_claim() -> None:
    mc = cache(resolved=False, auth={"name": "hf"})
    spec = manifests(compose(mc, [cluster("a")]), "Pod")["a"]["spec"]
    [only] = spec["containers"]
    assert only["image"] == HYDRATE_IMAGE
    assert env(only)["HF_TOKEN"]["valueFrom"]["secretKeyRef"]["key"] == "HF_TOKEN"
    assert "HF_HUB_CACHE" not in env(only)
    assert [v["name"] for v in spec["volumes"]] == ["scratch"]
    assert spec["restartPolicy"] == "OnFailure"
    assert only["securityContext"]["readOnlyRootFilesystem"] is True


def test_the_token_is_copied_only_where_the_pod_runs() -> None:
    mc = cache(resolved=False, auth={"name": "hf"})
    assert list(manifests(compose(mc, [cluster("a"), cluster("b")]), "Secret")) == ["a"]


def test_a_cache_already_resolved_composes_no_pod() -> None:
    assert pod(cache()) == {}


def _pod_status(status: Obj) -> Obj:
    return {"status": {"atProvider": {"manifest": {"status": status}}}}


def test_the_commit_is_read_from_the_terminated_container_s_message() -> None:
    state = {"state": {"terminated": {"exitCode": 0, "message": SHA + "\n"}}}
    assert observed(_pod_status({"containerStatuses": [state]})) == (SHA, "")


def test_a_message_that_is_not_a_commit_is_no_commit() -> None:
    state = {"state": {"terminated": {"exitCode": 0, "message": "main"}}}
    assert observed(_pod_status({"containerStatuses": [state]}))[0] is None


def test_a_failed_attempt_says_why_while_the_kubelet_retries() -> None:
    failed = {"exitCode": 1, "message": "RevisionNotFoundError: Invalid rev id: v9"}
    state = {
        "state": {"waiting": {"reason": "CrashLoopBackOff"}},
        "lastState": {"terminated": failed},
    }
    assert observed(_pod_status({"containerStatuses": [state]})) == (
        None,
        "the resolve Pod failed, retrying: RevisionNotFoundError: Invalid rev id: v9",
    )


def test_a_resolving_cluster_says_so_in_its_phase() -> None:
    result = compose(cache(resolved=False), [cluster("a"), cluster("b")])
    phases = {c["name"]: c["message"] for c in result.status["clusters"]}
    assert phases == {
        "a": "resolving revision main to a commit here: the resolve Pod is not observed yet",
        "b": "waiting for revision main to be resolved on a",
    }
    assert all(k.split("-")[0] != "hydrate" for k in result.resources)
    assert [k for k in result.resources if k.startswith(f"{RESOLVE}-")]


def test_a_commit_given_is_published_as_its_own_resolution() -> None:
    mc = cache(revision=SHA)
    mc["status"]["resolved"] = {"revision": "main", "commit": commit_of("main")}  # from before
    result = compose(mc, [cluster("a")])
    assert result.status["resolved"] == {"repo": "Qwen/Qwen3-8B", "revision": SHA, "commit": SHA}
    assert manifests(result, "Pod") == {}


def test_a_resolve_pod_already_running_stays_on_its_cluster() -> None:
    mc = cache(resolved=False)
    seen = simulate_observed(resources(compose(mc, [cluster("b")])), 0)
    again = compose(mc, [cluster("a"), cluster("b")], seen)
    assert list(manifests(again, "Pod")) == ["b"]


def test_asking_again_is_a_new_pod_that_an_old_one_cannot_answer() -> None:
    mc = cache(resolved=False)
    before = compose(mc, [cluster("a")])
    mc["metadata"]["annotations"] = {RESOLVE_ANNOTATION: "again"}
    after = compose(mc, [cluster("a")], simulate_observed(resources(before), 1))
    assert resolve_keys(after) != resolve_keys(before)
    assert [k for k in after.resources if k.startswith("hydrate-")] == []


def resolve_keys(result: Result) -> list[str]:
    return [k for k in result.resources if k.startswith(f"{RESOLVE}-")]
