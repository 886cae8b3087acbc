"""huggingface_hub v0.36.2 (what the vLLM v0.23.0 image pulls: transformers 4 requires
huggingface_hub below 1.0): how an engine running offline finds a model in ``HF_HUB_CACHE``,
checked against the files the composed hydration Job leaves on the claim."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.compose.modelcache.test_hydration_gate import COMMIT, REPO_FOLDER, job_env, run_job

DEFAULT_REVISION = "main"
"""src/huggingface_hub/constants.py: DEFAULT_REVISION."""
COMMIT_HASH = re.compile(r"^[0-9a-f]{40}$")
"""src/huggingface_hub/file_download.py: REGEX_COMMIT_HASH."""


class LocalEntryNotFoundError(Exception):
    """What huggingface_hub raises offline when the snapshot is not on disk: the engine fails
    to start rather than downloading."""


def offline_snapshot(cache: Path, repo_folder: str, revision: str | None) -> Path:
    """src/huggingface_hub/_snapshot_download.py, the offline branch of snapshot_download (the
    call vLLM makes with ``local_files_only=HF_HUB_OFFLINE`` and its ``revision``, None unless
    given): None is DEFAULT_REVISION; a commit hash names its snapshot; a branch or tag is read
    from refs/<revision>; the snapshot folder must exist."""
    revision = revision or DEFAULT_REVISION
    storage = cache / repo_folder
    commit = revision if COMMIT_HASH.match(revision) else None
    ref = storage / "refs" / revision
    if commit is None and ref.is_file():
        commit = ref.read_text()
    if commit is None or not (storage / "snapshots" / commit).is_dir():
        raise LocalEntryNotFoundError(revision)
    return storage / "snapshots" / commit


def hydrated(tmp_path: Path) -> Path:
    done, _ = run_job(tmp_path, 0)
    assert done.returncode == 0, done.stderr
    return Path(job_env(tmp_path)["HF_HUB_CACHE"])


def test_an_engine_given_no_revision_reads_the_snapshot_the_job_downloaded(tmp_path: Path) -> None:
    cache = hydrated(tmp_path)
    assert offline_snapshot(cache, REPO_FOLDER, None) == cache / REPO_FOLDER / "snapshots" / COMMIT


def test_an_engine_given_the_commit_reads_the_same_snapshot(tmp_path: Path) -> None:
    cache = hydrated(tmp_path)
    assert offline_snapshot(cache, REPO_FOLDER, COMMIT).name == COMMIT


def test_an_engine_given_the_branch_s_name_fails_offline_as_the_job_downloads_its_commit(
    tmp_path: Path,
) -> None:
    cache = hydrated(tmp_path)
    with pytest.raises(LocalEntryNotFoundError):
        offline_snapshot(cache, REPO_FOLDER, "v1.0")


def test_an_engine_given_another_revision_fails_instead_of_downloading(tmp_path: Path) -> None:
    cache = hydrated(tmp_path)
    with pytest.raises(LocalEntryNotFoundError):
        offline_snapshot(cache, REPO_FOLDER, "v2.0")


def test_another_revision_s_path_holds_nothing_of_this_one(tmp_path: Path) -> None:
    cache = hydrated(tmp_path)
    with pytest.raises(LocalEntryNotFoundError):
        offline_snapshot(cache.parent / "v2-0-other", REPO_FOLDER, None)
