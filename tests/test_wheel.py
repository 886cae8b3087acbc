"""The built wheel, installed into a fresh environment outside the repository, works on its own."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = "replica-seed"


@dataclass(frozen=True)
class Installed:
    wheel: Path
    bin: Path
    work: Path


def clean_env() -> dict[str, str]:
    """This machine's environment without anything that points at the checkout."""
    dropped = {"VIRTUAL_ENV", "MODELPLANE_APIS", "UV_PROJECT_ENVIRONMENT", "PYTHONPATH"}
    return {k: v for k, v in os.environ.items() if k not in dropped}


def run(*command: str | Path, cwd: Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [str(c) for c in command],
        cwd=cwd,
        env=env or clean_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert done.returncode == 0, (
        f"{' '.join(map(str, command))} exited {done.returncode}:\n{done.stdout}"
    )
    return done.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    uv = shutil.which("uv")
    assert uv, "uv is needed to build the wheel (the README installs it)"
    work = tmp_path_factory.mktemp("wheel")
    # `uv build` makes the sdist and builds the wheel from it: both must carry apis/.
    run(uv, "build", "--out-dir", work / "dist", ROOT, cwd=work)
    [wheel] = (work / "dist").glob("*.whl")
    pins = work / "requirements.txt"
    # The versions uv.lock pins, so the fresh environment is the one the tests ran against.
    export = ("export", "--frozen", "--no-dev", "--no-emit-project", "--no-hashes")
    run(uv, *export, "-o", pins, cwd=ROOT)
    venv = work / "venv"
    run(uv, "venv", "--python", sys.executable, venv, cwd=work)
    run(uv, "pip", "install", "--python", venv / "bin" / "python", "-r", pins, wheel, cwd=work)
    shutil.copytree(ROOT / "examples" / EXAMPLE, work / EXAMPLE)
    return Installed(wheel, venv / "bin", work)


def test_the_wheel_carries_every_file_under_apis_inside_the_package(installed: Installed) -> None:
    with zipfile.ZipFile(installed.wheel) as wheel:
        packaged = {
            name.removeprefix("modelplane/apis/"): wheel.read(name)
            for name in wheel.namelist()
            if name.startswith("modelplane/apis/")
        }
    source = {
        str(p.relative_to(ROOT / "apis")): p.read_bytes()
        for p in sorted((ROOT / "apis").rglob("*"))
        if p.is_file()
    }
    assert packaged == source


def test_an_installed_wheel_finds_its_definitions_inside_itself(installed: Installed) -> None:
    where = run(
        installed.bin / "python",
        "-c",
        "from modelplane.apis import apis_dir; print(apis_dir())",
        cwd=installed.work,
    ).strip()
    assert Path(where).is_relative_to(installed.bin.parent)
    assert Path(where).parts[-2:] == ("modelplane", "apis")


def exit_code(installed: Installed, *args: str) -> int:
    return subprocess.run(
        [str(installed.bin / "modelplane"), *args],
        cwd=installed.work,
        env=clean_env(),
        capture_output=True,
    ).returncode


def test_an_installed_wheel_validates_an_example(installed: Installed) -> None:
    assert exit_code(installed, "validate", EXAMPLE) == 0


def test_an_installed_wheel_refuses_an_invalid_example(installed: Installed) -> None:
    invalid = installed.work / "invalid.yaml"
    replica = yaml.safe_load((installed.work / EXAMPLE / "replica.yaml").read_text())
    del replica["spec"]["engines"]
    invalid.write_text(yaml.safe_dump(replica))
    assert exit_code(installed, "validate", invalid.name) == 1


def test_an_installed_wheel_renders_an_example_as_the_checkout_does(installed: Installed) -> None:
    out = run(installed.bin / "modelplane", "render", EXAMPLE, cwd=installed.work)
    expected = run(sys.executable, "-m", "modelplane", "render", f"examples/{EXAMPLE}", cwd=ROOT)
    assert out == expected
    assert any(d["kind"] == "ModelReplica" for d in yaml.safe_load_all(out) if d)


def test_modelplane_apis_still_overrides_an_installed_wheel(installed: Installed) -> None:
    done = subprocess.run(
        [str(installed.bin / "modelplane"), "render", EXAMPLE],
        cwd=installed.work,
        env={**clean_env(), "MODELPLANE_APIS": str(installed.work / "missing")},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"modelplane render: MODELPLANE_APIS={installed.work / 'missing'} is not a directory"
    ]
