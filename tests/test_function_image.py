"""The function image, built as its Dockerfile says: its entry point answers RunFunction.

No Docker engine runs here, so tests/dockerfile.py replays the Dockerfile's own lines into a
temporary root (the build stage's RUN lines run for real: pip installs uv, uv builds the
environment) and keeps only what the final stage copies; the entry point then starts from that
root and is called over loopback gRPC with the SDK's stub, as Crossplane calls it.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1

from tests.dockerfile import Image, Replay, base_image_env, stages
from tests.listening import on_a_free_port

ROOT = Path(__file__).resolve().parents[1]
DOCKERFILE = ROOT / "package" / "function" / "Dockerfile"


def base_python(where: Path, pip: bool = True) -> Path:
    """A bare Python (with pip, as the python image has), standing in for the base image."""
    options = [] if pip else ["--without-pip"]
    subprocess.run([sys.executable, "-m", "venv", *options, str(where)], check=True)
    return where


@pytest.fixture(scope="module")
def image(tmp_path_factory: pytest.TempPathFactory) -> Image:
    work = tmp_path_factory.mktemp("image")
    env = base_image_env(base_python(work / "python"))
    return Replay(DOCKERFILE, ROOT, work / "root", env).build()


def start(image: Image, *args: str) -> subprocess.Popen[str]:
    """The image's ENTRYPOINT with ``args``, in the environment the image declares and no other."""
    env = {"PATH": image.base_path, "HOME": str(image.root), **image.env}
    command, *rest = image.entrypoint
    found = shutil.which(command, path=env["PATH"])
    assert found, f"{command} is not on the image's PATH {env['PATH']}"
    return subprocess.Popen(
        [found, *rest, *args],
        cwd=image.root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


@pytest.fixture
def served_port(image: Image) -> Iterator[int]:
    procs: list[subprocess.Popen[str]] = []
    try:
        _, port = on_a_free_port(
            lambda port: start(
                image, "--insecure", "--address", f"127.0.0.1:{port}", "--metrics-port", "0"
            ),
            procs,
            timeout=60,
        )
        yield port
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(timeout=20)


def seed_request() -> fnv1.RunFunctionRequest:
    """The request Crossplane sends for the seed ModelReplica once its cluster is fetched."""
    from modelplane import manifests
    from modelplane.compose.registry import default_registry
    from modelplane.render import Renderer

    inputs = [m.obj for m in manifests.load([str(ROOT / "examples" / "replica-seed")])]
    rendered = next(
        r
        for r in Renderer(default_registry(), inputs).render_all()
        if r.composite["kind"] == "ModelReplica"
    )
    assert rendered.request is not None
    rendered.request.meta.tag = "image"
    return rendered.request


def test_the_image_entry_point_answers_run_function_over_loopback(served_port: int) -> None:
    with grpc.insecure_channel(f"127.0.0.1:{served_port}") as channel:
        rsp = grpcv1.FunctionRunnerServiceStub(channel).RunFunction(seed_request(), timeout=30)
    assert rsp.meta.tag == "image"
    assert not [r for r in rsp.results if r.severity == fnv1.SEVERITY_FATAL]
    assert {"workload-qwen3-8b", "inference-pool"} <= set(rsp.desired.resources)


def test_the_image_runs_as_a_numeric_non_root_user(image: Image) -> None:
    assert image.user is not None
    uid, _, gid = image.user.partition(":")
    assert uid.isdigit() and int(uid) != 0
    assert not gid or (gid.isdigit() and int(gid) != 0)


def test_everything_the_final_stage_copies_is_readable_by_any_user(image: Image) -> None:
    for path in image.root.rglob("*"):
        mode = path.lstat().st_mode
        if stat.S_ISLNK(mode):
            continue
        assert mode & stat.S_IROTH, path
        if stat.S_ISDIR(mode) or mode & stat.S_IXUSR:
            assert mode & stat.S_IXOTH, path


def test_the_image_carries_no_build_stage_files(image: Image) -> None:
    assert sorted(p.name for p in image.root.iterdir()) == ["venv"]


def test_the_image_is_glibc_based() -> None:
    # cel-expr-python publishes no musllinux wheels.
    for stage in stages(DOCKERFILE.read_text()):
        assert "alpine" not in stage.base


def test_a_venv_moved_after_it_was_built_does_not_start(tmp_path: Path) -> None:
    """The replay catches the fault the image once had: scripts naming the build's interpreter."""
    dockerfile = tmp_path / "Dockerfile"
    # A script's first line names its venv's interpreter by absolute path, as pip and uv write it.
    dockerfile.write_text(
        "FROM python AS build\n"
        "WORKDIR /src\n"
        "RUN python -m venv --without-pip .venv\n"
        "RUN printf '#!%s/.venv/bin/python\\nprint(1)\\n' \"$(pwd)\" > .venv/bin/probe\n"
        "RUN chmod +x .venv/bin/probe && .venv/bin/probe\n"
        "FROM python\n"
        "COPY --from=build /src/.venv /venv\n"
        "ENV PATH=/venv/bin:$PATH\n"
        'ENTRYPOINT ["probe"]\n'
    )
    env = base_image_env(base_python(tmp_path / "python", pip=False))
    image = Replay(dockerfile, tmp_path, tmp_path / "root", env).build()
    with pytest.raises(FileNotFoundError):
        start(image).wait(timeout=20)


def test_the_replay_refuses_a_run_line_naming_an_absolute_path(tmp_path: Path) -> None:
    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text("FROM python\nRUN touch /etc/marker\n")
    replay = Replay(dockerfile, tmp_path, tmp_path / "root", dict(os.environ))
    with pytest.raises(ValueError, match="ENV or WORKDIR"):
        replay.build()
