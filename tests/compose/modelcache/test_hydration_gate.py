"""Engines start only once the hydration Job's download is complete, and only the Job writes.

The scripts are the composed ones, run here by ``sh`` with a stand-in ``hf`` on PATH and the
mount path moved into a temporary directory.
"""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest

from modelplane.compose.shared.cache import CACHE_MOUNT_PATH
from tests.compose.modelcache.test_modelcache import cache, cluster, compose, hydrate_container
from tests.compose.modelreplica import support

Obj = dict

CACHE = cache(revision="v1.0")


def hydrate() -> Obj:
    return hydrate_container(compose(CACHE, [cluster("a")]))


def engine_pod() -> Obj:
    replica = support.replica(cache="weights", namespace="ml")
    [pod] = support.pod_specs(support.workload(support.run(replica, cache=CACHE))).values()
    return pod


def moved(text: str, root: Path) -> str:
    return text.replace(CACHE_MOUNT_PATH, str(root))


COMMIT = "0123456789abcdef0123456789abcdef01234567"
REPO_FOLDER = "models--Qwen--Qwen3-8B"


def fake_hf(bin_dir: Path, exit_code: int) -> Path:
    """``hf download --quiet`` as huggingface_hub v0.36.2 behaves (cli/download.py,
    _snapshot_download.py): the snapshot filled under HF_HUB_CACHE, its path the only output."""
    calls = bin_dir / "calls"
    script = bin_dir / "hf"
    # repo_folder_name (file_download.py): models--<org>--<name>.
    repo = '"$HF_HUB_CACHE/models--$(echo "$2" | sed "s|/|--|g")"'
    # A branch or tag also gets refs/<revision> (a commit given as the revision does not).
    script.write_text(
        f'#!/bin/sh\necho "$@" >> {calls}\n[ {exit_code} = 0 ] || exit {exit_code}\n'
        f"mkdir -p {repo}/snapshots/{COMMIT} {repo}/refs\n"
        f'rev=main; [ "$3" = --revision ] && rev="$4"\n'
        f'[ "$rev" = {COMMIT} ] || printf {COMMIT} > {repo}/refs/"$rev"\n'
        f"echo {repo}/snapshots/{COMMIT}\n"
    )
    script.chmod(0o755)
    return calls


def run_job(tmp_path: Path, exit_code: int) -> tuple[subprocess.CompletedProcess[str], Path]:
    container = hydrate()
    root, bin_dir = tmp_path / "models", tmp_path / "bin"
    root.mkdir()
    bin_dir.mkdir()
    calls = fake_hf(bin_dir, exit_code)
    env = {e["name"]: moved(e["value"], root) for e in container["env"] if "value" in e}
    env["PATH"] = f"{bin_dir}:{os.environ['PATH']}"
    argv = [moved(w, root) for w in container["command"]] + container["args"]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=10, check=False)
    assert calls.read_text().split() == ["download", *container["args"], "--quiet"]
    return done, Path(env["MODELPLANE_HYDRATED_MARKER"])


def job_env(tmp_path: Path) -> dict[str, str]:
    return {
        e["name"]: moved(e["value"], tmp_path / "models") for e in hydrate()["env"] if "value" in e
    }


def test_the_job_marks_the_cache_hydrated_once_the_download_succeeded(tmp_path: Path) -> None:
    done, marker = run_job(tmp_path, 0)
    assert done.returncode == 0, done.stderr
    assert marker.is_file()


def test_a_failed_download_fails_the_job_and_leaves_no_mark(tmp_path: Path) -> None:
    done, marker = run_job(tmp_path, 3)
    assert done.returncode != 0
    assert not marker.exists()


def test_engines_wait_for_the_very_file_the_job_writes() -> None:
    [wait] = engine_pod()["initContainers"]
    job_marker = next(
        e["value"] for e in hydrate()["env"] if e["name"] == "MODELPLANE_HYDRATED_MARKER"
    )
    assert wait["command"][-1] == job_marker


def _wait(root: Path) -> subprocess.Popen[str]:
    [wait] = engine_pod()["initContainers"]
    argv = [moved(w, root) for w in wait["command"]]
    # A session of its own: killing its group stops the shell's sleep too, which would
    # otherwise hold stdout open until it ends.
    return subprocess.Popen(argv, stdout=subprocess.PIPE, text=True, start_new_session=True)


def test_the_wait_ends_as_soon_as_the_mark_is_there(tmp_path: Path) -> None:
    [wait] = engine_pod()["initContainers"]
    marker = Path(moved(wait["command"][-1], tmp_path))
    marker.parent.mkdir(parents=True)
    marker.touch()
    assert _wait(tmp_path).wait(timeout=5) == 0


def test_the_wait_holds_the_pod_while_the_mark_is_missing(tmp_path: Path) -> None:
    proc = _wait(tmp_path)
    with pytest.raises(subprocess.TimeoutExpired):
        proc.wait(timeout=1)
    os.killpg(proc.pid, signal.SIGKILL)
    out, _ = proc.communicate()
    assert "waiting for the model cache to be hydrated" in out


def test_only_the_job_mounts_the_cache_writable() -> None:
    pod = engine_pod()
    mounts = [
        m for c in pod["initContainers"] + pod["containers"] for m in c.get("volumeMounts", [])
    ]
    assert all(m.get("readOnly") for m in mounts if m["name"] == "model-cache")
    [volume] = [v for v in pod["volumes"] if v["name"] == "model-cache"]
    assert volume["persistentVolumeClaim"]["readOnly"] is True
    assert not [m for m in hydrate()["volumeMounts"] if m.get("readOnly")]


def serving_message(phase: Obj | None) -> str:
    mc = dict(CACHE)
    if phase is not None:
        mc["status"] = {"clusters": [{"name": "c1", **phase}]}
    replica = support.replica(cache="weights", namespace="ml")
    result = support.run(replica, cache=mc)
    [serving] = [c for c in result.conditions if c.type == "ModelServing"]
    return serving.message


def test_a_replica_waiting_on_its_cache_says_what_the_cache_reports_for_its_cluster() -> None:
    message = serving_message({"phase": "CannotStage", "message": "cannot stage: no RWX class"})
    assert message.endswith(
        "; the pods wait for ModelCache weights on c1: CannotStage: cannot stage: no RWX class"
    )


def test_a_cache_that_reports_nothing_for_the_cluster_is_named_too() -> None:
    assert serving_message(None).endswith(
        "; the pods wait for ModelCache weights, which reports nothing for c1 yet"
    )


def test_a_ready_cache_adds_nothing() -> None:
    assert "ModelCache" not in serving_message({"phase": "Ready"})


def test_the_download_lands_at_its_revision_s_own_path(tmp_path: Path) -> None:
    done, _ = run_job(tmp_path, 0)
    assert done.returncode == 0, done.stderr
    cache = Path(job_env(tmp_path)["HF_HUB_CACHE"])
    assert cache.parent == tmp_path / "models" / "revisions"
    assert (cache / REPO_FOLDER / "snapshots" / COMMIT).is_dir()


def test_the_revision_s_cache_resolves_the_default_revision_to_the_commit_downloaded(
    tmp_path: Path,
) -> None:
    """Offline, huggingface_hub resolves a branch through refs/<branch> to snapshots/<commit>
    (v0.36.2 _snapshot_download.py and file_download.py), and engines ask for main when given
    no revision: refs/main must name the commit this Job downloaded."""
    run_job(tmp_path, 0)
    refs = Path(job_env(tmp_path)["HF_HUB_CACHE"]) / REPO_FOLDER / "refs" / "main"
    assert refs.read_text() == COMMIT


def test_a_revision_already_marked_is_not_downloaded_again(tmp_path: Path) -> None:
    _, marker = run_job(tmp_path, 0)
    container = hydrate()
    env = {**job_env(tmp_path), "PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}"}
    argv = [moved(w, tmp_path / "models") for w in container["command"]] + container["args"]
    again = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=10, check=False)
    assert again.returncode == 0
    assert marker.is_file()
    assert len((tmp_path / "bin" / "calls").read_text().splitlines()) == 1
