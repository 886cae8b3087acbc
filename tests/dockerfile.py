"""Reading a Dockerfile and replaying its build without Docker, into a temporary root.

No container engine runs here, so a test builds the image's filesystem the way the Dockerfile
says, with every absolute path of the Dockerfile moved under one root directory: each stage is
built at that root (WORKDIR, COPY, ENV and RUN as written), then moved aside when the next stage
starts, exactly as a stage's filesystem is gone from the image except for what a later stage
copies out of it with ``COPY --from``. What is left at the root when the last stage ends is the
image. A RUN line naming an absolute path could not be moved under the root, so it is refused,
and so is a RUN in the final stage (it would run as the replaying user, not as the image's).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

_VARIABLE = re.compile(r"\$(?:\{(\w+)\}|(\w+))")


@dataclass(frozen=True)
class Instruction:
    keyword: str
    arguments: str


@dataclass
class Stage:
    base: str
    name: str | None
    instructions: list[Instruction] = field(default_factory=list)


@dataclass
class Image:
    """What the replay leaves: the root, what the final stage declares, the base image's PATH."""

    root: Path
    env: dict[str, str]
    base_path: str
    user: str | None
    entrypoint: list[str]


def instructions(text: str) -> list[Instruction]:
    """The Dockerfile's instructions, comments dropped and continued lines joined."""
    found: list[Instruction] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if line.startswith("#"):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line = pending + line
        pending = ""
        keyword, _, arguments = line.partition(" ")
        found.append(Instruction(keyword.upper(), arguments.strip()))
    return found


def stages(text: str) -> list[Stage]:
    parsed: list[Stage] = []
    for instruction in instructions(text):
        if instruction.keyword == "FROM":
            words = instruction.arguments.split()
            name = words[2] if len(words) == 3 and words[1].upper() == "AS" else None
            parsed.append(Stage(words[0], name))
        else:
            parsed[-1].instructions.append(instruction)
    return parsed


def env_pairs(arguments: str) -> list[tuple[str, str]]:
    words = shlex.split(arguments)
    if words and "=" not in words[0]:
        return [(words[0], " ".join(words[1:]))]
    return [tuple(w.split("=", 1)) for w in words]  # type: ignore[misc]


def copy_arguments(arguments: str) -> tuple[str | None, list[str], str]:
    words = shlex.split(arguments)
    source_stage = None
    while words and words[0].startswith("--"):
        flag = words.pop(0)
        if flag.startswith("--from="):
            source_stage = flag.removeprefix("--from=")
        else:
            raise ValueError(f"COPY {flag}: not replayed")
    return source_stage, words[:-1], words[-1]


class Replay:
    """Builds the Dockerfile's stages under ``root``; ``base_env`` stands in for the base image."""

    def __init__(self, dockerfile: Path, context: Path, root: Path, base_env: dict[str, str]):
        self.stages = stages(dockerfile.read_text())
        self.context = context
        self.root = root
        self.base_env = base_env

    def inside(self, path: str) -> Path:
        return self.root / path.lstrip("/")

    def build(self) -> Image:
        finished: dict[str, Path] = {}
        image: Image | None = None
        for index, stage in enumerate(self.stages):
            if stage.base in finished or stage.base != self.stages[0].base:
                raise ValueError(f"FROM {stage.base}: the replay stands one base image in")
            last = index == len(self.stages) - 1
            self.root.mkdir(mode=0o755)
            image = self._stage(stage, finished, last)
            if not last:
                aside = self.root.with_name(f"{self.root.name}.stage{index}")
                self.root.rename(aside)
                finished[stage.name or str(index)] = aside
        for aside in finished.values():
            shutil.rmtree(aside)
        assert image is not None
        return image

    def _stage(self, stage: Stage, finished: dict[str, Path], last: bool) -> Image:
        env = dict(self.base_env)
        declared: list[str] = []
        workdir = "/"
        user: str | None = None
        entrypoint: list[str] = []
        for instruction in stage.instructions:
            keyword, arguments = instruction.keyword, instruction.arguments
            if keyword == "ENV":
                for key, value in env_pairs(arguments):
                    env[key] = self._env_value(value, env)
                    declared.append(key)
            elif keyword == "WORKDIR":
                workdir = arguments if arguments.startswith("/") else f"{workdir}/{arguments}"
                self.inside(workdir).mkdir(parents=True, exist_ok=True)
            elif keyword == "COPY":
                self._copy(arguments, workdir, finished)
            elif keyword == "RUN":
                self._run(arguments, workdir, env, last)
            elif keyword == "USER":
                user = arguments
            elif keyword == "ENTRYPOINT":
                entrypoint = json.loads(arguments)
            elif keyword not in ("EXPOSE", "LABEL"):
                raise ValueError(f"{keyword}: not replayed")
        return Image(
            self.root,
            {key: env[key] for key in declared},
            self.base_env.get("PATH", ""),
            user,
            entrypoint,
        )

    def _env_value(self, value: str, env: dict[str, str]) -> str:
        # A PATH-like value: absolute paths the Dockerfile names move under the root; variables
        # expand to what the stage has (the base image's PATH is already a path on this machine).
        parts = []
        for part in value.split(":"):
            if part.startswith("/"):
                parts.append(str(self.inside(part)))
            else:
                parts.append(_VARIABLE.sub(lambda m: env.get(m[1] or m[2], ""), part))
        return ":".join(parts)

    def _copy(self, arguments: str, workdir: str, finished: dict[str, Path]) -> None:
        source_stage, sources, dest = copy_arguments(arguments)
        target = self.inside(dest if dest.startswith("/") else f"{workdir}/{dest}")
        for source in sources:
            origin = (
                finished[source_stage] / source.lstrip("/")
                if source_stage is not None
                else self.context / source
            )
            if origin.is_dir():
                shutil.copytree(origin, target, symlinks=True, dirs_exist_ok=True)
            elif dest.endswith("/") or len(sources) > 1:
                target.mkdir(parents=True, exist_ok=True)
                shutil.copy2(origin, target / origin.name)
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(origin, target)

    def _run(self, command: str, workdir: str, env: dict[str, str], last: bool) -> None:
        if re.search(r"(^|[\s=])/", command):
            raise ValueError(f"RUN {command}: name paths through ENV or WORKDIR, not in RUN")
        if last:
            raise ValueError(f"RUN {command}: the final stage is copied, never run")
        done = subprocess.run(
            ["/bin/sh", "-c", command],
            cwd=self.inside(workdir),
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        if done.returncode != 0:
            raise AssertionError(f"RUN {command} exited {done.returncode}:\n{done.stdout}")


def base_image_env(python_root: Path) -> dict[str, str]:
    """This machine's environment (its registries and certificates), with ``python_root`` first.

    Virtual environments on this machine's PATH (the project's own, where the tests run) are left
    out: the image's entry point must be found in the image, not beside it.
    """
    dropped = {"VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "UV_PROJECT_ENVIRONMENT", "UV_PYTHON"}
    env = {k: v for k, v in os.environ.items() if k not in dropped}
    system = [
        entry
        for entry in os.environ.get("PATH", "").split(os.pathsep)
        if entry and not (Path(entry).parent / "pyvenv.cfg").exists()
    ]
    env["PATH"] = os.pathsep.join([str(python_root / "bin"), *system])
    return env
