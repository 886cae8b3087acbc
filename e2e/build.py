"""Build the e2e tier's upstream binaries from their Go modules, into a cache outside the clone.

    python -m e2e.build [COMPONENT ...]

Each component is a wrapper module under ``e2e/tools/<component>/`` (its own go.mod: the
components' k8s.io versions differ) whose ``tool`` directives name the main packages. Only
``go build`` through the module proxy is used: no image is pulled, nothing is downloaded from a
release page. A component's binaries land in ``<cache>/bin/<component>-<key>/``, where the key
hashes the wrapper's go.mod and go.sum, the Go version and the link flags, so a new pin builds
anew and an unchanged one is reused. The cache is ``$MODELPLANE_E2E_CACHE`` or
``~/.cache/modelplane-e2e``.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

TOOLS = Path(__file__).parent / "tools"

KUBERNETES_VERSION = "v1.35.4"
CROSSPLANE_VERSION = "v2.3.4"


@dataclass(frozen=True)
class Component:
    """A wrapper module and the binaries it builds (binary name -> Go package)."""

    name: str
    binaries: dict[str, str]
    ldflags: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)

    @property
    def module(self) -> Path:
        return TOOLS / self.name


def _kubernetes_ldflags(version: str) -> tuple[str, ...]:
    major, minor = version.lstrip("v").split(".")[:2]
    stamp = {
        "k8s.io/component-base/version.gitVersion": version,
        "k8s.io/component-base/version.gitMajor": major,
        "k8s.io/component-base/version.gitMinor": minor,
        "k8s.io/component-base/version.gitTreeState": "clean",
        "k8s.io/client-go/pkg/version.gitVersion": version,
        "k8s.io/client-go/pkg/version.gitMajor": major,
        "k8s.io/client-go/pkg/version.gitMinor": minor,
    }
    return tuple(f"-X {k}={v}" for k, v in stamp.items())


COMPONENTS: dict[str, Component] = {
    c.name: c
    for c in (
        Component("etcd", {"etcd": "go.etcd.io/etcd/server/v3"}),
        Component(
            "kubernetes",
            {
                name: f"k8s.io/kubernetes/cmd/{name}"
                for name in (
                    "kube-apiserver",
                    "kube-controller-manager",
                    "kube-scheduler",
                    "kubectl",
                )
            },
            ldflags=_kubernetes_ldflags(KUBERNETES_VERSION),
        ),
        Component(
            "crossplane",
            {"crossplane": "github.com/crossplane/crossplane/v2/cmd/crossplane"},
            # A package's spec.crossplane.version is checked against this stamp: unstamped, every
            # package is "incompatible" (internal/controller/pkg/revision/reconciler.go).
            ldflags=(
                "-X github.com/crossplane/crossplane-runtime/v2/pkg/version.version"
                f"={CROSSPLANE_VERSION}",
            ),
        ),
        Component(
            "provider-kubernetes",
            {
                "provider-kubernetes": (
                    "github.com/crossplane-contrib/provider-kubernetes/cmd/provider"
                )
            },
        ),
        Component("kwok", {"kwok": "sigs.k8s.io/kwok/cmd/kwok"}),
        Component("lws", {"lws-controller": "sigs.k8s.io/lws/cmd"}),
        Component(
            "keda",
            {
                "keda-operator": "github.com/kedacore/keda/v2/cmd/operator",
                "keda-adapter": "github.com/kedacore/keda/v2/cmd/adapter",
            },
        ),
        Component("prometheus", {"prometheus": "github.com/prometheus/prometheus/cmd/prometheus"}),
        Component(
            "provider-http",
            {"provider-http": "github.com/crossplane-contrib/provider-http/cmd/provider"},
        ),
    )
}


def cache_root() -> Path:
    configured = os.environ.get("MODELPLANE_E2E_CACHE")
    return Path(configured) if configured else Path.home() / ".cache" / "modelplane-e2e"


def go_version() -> str:
    return subprocess.run(
        ["go", "env", "GOVERSION"], capture_output=True, text=True, check=True
    ).stdout.strip()


def cache_key(component: Component, go: str) -> str:
    digest = hashlib.sha256()
    for part in ("go.mod", "go.sum"):
        digest.update((component.module / part).read_bytes())
    digest.update(go.encode())
    digest.update("\0".join(component.ldflags).encode())
    digest.update(repr(sorted(component.binaries.items())).encode())
    return digest.hexdigest()[:16]


def binary_dir(component: Component, go: str | None = None) -> Path:
    return cache_root() / "bin" / f"{component.name}-{cache_key(component, go or go_version())}"


def build(component: Component, log: Path | None = None) -> Path:
    """The directory holding the component's binaries, built unless the cache has them."""
    go = go_version()
    target = binary_dir(component, go)
    if all((target / name).is_file() for name in component.binaries):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{component.name}-", dir=target.parent))
    env = {**os.environ, **component.env}
    ldflags = " ".join(("-s", "-w", *component.ldflags))
    try:
        for name, package in component.binaries.items():
            command = ["go", "build", "-trimpath", "-ldflags", ldflags, "-o", str(staging / name)]
            subprocess.run(
                [*command, package],
                cwd=component.module,
                env=env,
                check=True,
                stdout=sys.stderr if log is None else log.open("a"),
                stderr=subprocess.STDOUT,
            )
        if target.exists():
            shutil.rmtree(target)
        staging.rename(target)
    finally:
        if staging.exists():
            shutil.rmtree(staging)
    return target


def module_dir(component: str, module: str) -> Path:
    """Where the Go module cache holds ``module`` at the version the component's wrapper pins
    (its CRDs, stages and manifests are read from there: the files of the pinned release)."""
    cwd = COMPONENTS[component].module
    subprocess.run(["go", "mod", "download", module], cwd=cwd, check=True)
    listed = subprocess.run(
        ["go", "list", "-m", "-f", "{{.Dir}}", module],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    )
    return Path(listed.stdout.strip())


# Built when a test asks for them (the autoscaling loop, the usage summary), not for every
# environment: a cold build of KEDA and Prometheus takes longer than the rest together.
ON_DEMAND = frozenset({"keda", "prometheus", "provider-http"})


def build_all(names: list[str] | None = None) -> dict[str, Path]:
    """Every named component, or every one an environment starts (all but ``ON_DEMAND``)."""
    chosen = (
        [COMPONENTS[n] for n in names]
        if names
        else [c for c in COMPONENTS.values() if c.name not in ON_DEMAND]
    )
    built = {}
    for component in chosen:
        started = time.monotonic()
        cached = all((binary_dir(component) / n).is_file() for n in component.binaries)
        built[component.name] = build(component)
        took = time.monotonic() - started
        print(
            f"{component.name}: {'cached' if cached else f'built in {took:.0f} s'}"
            f" -> {built[component.name]}",
            file=sys.stderr,
        )
    return built


def main(argv: list[str]) -> int:
    unknown = [n for n in argv if n not in COMPONENTS]
    if unknown:
        print(f"e2e.build: unknown component {unknown[0]!r} (one of {', '.join(COMPONENTS)})")
        return 2
    build_all(argv or None)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
