"""Which llm-d endpoint picker images can run what Modelplane writes for them.

Modelplane writes two things a picker binary must understand: the wiring flags it appends
(``picker.wiring_args``) and the EndpointPickerConfig file (its default, or the user's). An
image too old for either crash-loops, and since the gateway's ext_proc filter fails closed,
every request to the replica fails. So a user's picker image is read before anything is
composed:

- an llm-d picker image whose tag names a release older than what it must load is refused,
  naming the field;
- an llm-d picker image whose tag names no release (``latest``, ``main``, a digest alone)
  cannot be judged, and draws a warning;
- an image of any other name is the user's own build, and is not judged.

The releases (github.com/llm-d/llm-d-router, formerly llm-d-inference-scheduler; each tag's
Makefile and .github/workflows/ci-release.yaml name its images): up to v0.8.x the picker image is
``ghcr.io/llm-d/llm-d-inference-scheduler`` and reads only the
``inference.networking.x-k8s.io/v1alpha1`` config group; from v0.9.0 it is
``ghcr.io/llm-d/llm-d-router-endpoint-picker`` and reads ``llm-d.ai/v1alpha1`` too, the group
Modelplane's default configs use. tests/conformance/test_llm_d_router_releases.py holds the
sources.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

Version = tuple[int, int, int]

# The picker image's repository name before and after the project's rename; "-dev" is each
# one's build from a branch (ci-dev.yaml), tagged by the branch, never by a release.
PICKER_NAMES = frozenset(
    {
        "llm-d-router-endpoint-picker",
        "llm-d-router-endpoint-picker-dev",
        "llm-d-inference-scheduler",
        "llm-d-inference-scheduler-dev",
    }
)

# The config group Modelplane's default configs use (compose.shared.endpointpicker).
CONFIG_GROUP = "llm-d.ai"

# A release tag, with any suffix a mirror or a pre-release adds: v0.10.0, v0.9.0-rc.1,
# v0.10.0-patched. A pre-release of X.Y.Z is read as X.Y.Z: v0.9.0-rc.1 already reads the
# llm-d.ai group.
_RELEASE = re.compile(r"v?(\d+)\.(\d+)\.(\d+)(?:[-+.][0-9A-Za-z.+-]*)?")


@dataclass(frozen=True)
class Need:
    """The oldest release that reads something Modelplane writes, and what that is."""

    version: Version
    what: str


# The first release whose picker reads the llm-d.ai config group (apix/config/v1alpha1) with
# every plugin type of Modelplane's default configs registered (cmd/epp/runner/runner.go).
CONFIG_RELEASE: Version = (0, 9, 0)
# --tracing and --metrics-endpoint-auth: from gateway-api-inference-extension v1.1.0's runner,
# which llm-d-inference-scheduler builds on from v0.4.0 (v0.3.x: v1.0.0, without them).
WIRING = Need((0, 4, 0), "the flags Modelplane passes (--tracing, --metrics-endpoint-auth)")
# The release that renamed the picker image.
RENAMED: Version = (0, 9, 0)
# The first release whose picker watches InferenceObjectives of llm-d.ai/v1alpha2
# (pkg/epp/server/controller_config.go, preferred over the legacy group when both are served);
# v0.8.x runs gateway-api-inference-extension v1.5.0's picker, which knows only
# inference.networking.x-k8s.io.
OBJECTIVES_RELEASE: Version = (0, 9, 0)


@dataclass(frozen=True)
class ImageRef:
    """An image reference, split as a container runtime reads it."""

    name: str
    """The last path segment of the repository (``llm-d-router-endpoint-picker``)."""
    tag: str | None
    digest: str | None


def parse(image: str) -> ImageRef:
    rest, _, digest = image.partition("@")
    repository, sep, tag = rest.rpartition(":")
    if not sep or "/" in tag:  # no tag; the colon, if any, was a registry's port
        repository, tag = rest, ""
    return ImageRef(repository.rsplit("/", 1)[-1], tag or None, digest or None)


def release(tag: str | None) -> Version | None:
    """The release a tag names, or None for a tag that names none (``latest``, ``main``)."""
    found = _RELEASE.fullmatch(tag or "")
    if found is None:
        return None
    major, minor, patch = (int(g) for g in found.groups())
    return major, minor, patch


def need(config: Any) -> Need:
    """What the picker must read: the config Modelplane writes (its default when the user gives
    none) when it is of the llm-d.ai group, else at least the wiring flags."""
    if config is None:
        return Need(
            CONFIG_RELEASE, f"Modelplane's default config (apiVersion {CONFIG_GROUP}/v1alpha1)"
        )
    api_version = str(config.get("apiVersion") or "") if isinstance(config, Mapping) else ""
    if api_version.split("/")[0] == CONFIG_GROUP:
        return Need(CONFIG_RELEASE, f"serving.endpointPicker.config (apiVersion {api_version})")
    return WIRING


def too_old(image: str, config: Any) -> str | None:
    """Why an llm-d picker image cannot read what Modelplane writes, or None."""
    ref = parse(image)
    found = release(ref.tag) if ref.name in PICKER_NAMES else None
    needed = need(config)
    if found is None or found >= needed.version:
        return None
    return (
        f"llm-d endpoint picker {ref.tag} cannot read {needed.what}: that needs "
        f"{_tag(needed.version)} or later ({oldest_image(needed.version)} or newer)"
    )


def unknown_release(image: str, config: Any) -> str | None:
    """Why an llm-d picker image cannot be judged, or None (judged, or not an llm-d picker)."""
    ref = parse(image)
    if ref.name not in PICKER_NAMES or release(ref.tag) is not None:
        return None
    shown = f"tag {ref.tag!r}" if ref.tag else "a digest alone" if ref.digest else "no tag: latest"
    needed = need(config)
    return (
        f"{image!r} names no llm-d endpoint picker release ({shown}): Modelplane cannot tell "
        f"whether it reads {needed.what}, which needs {_tag(needed.version)} or later"
    )


def reads_objectives(image: str) -> bool:
    """Whether a picker image may read the llm-d.ai InferenceObjectives Modelplane composes:
    every image but an llm-d picker of a release before ``OBJECTIVES_RELEASE`` (one of no
    readable release, or the user's own build, may; objectives it does not read cost nothing)."""
    ref = parse(image)
    found = release(ref.tag) if ref.name in PICKER_NAMES else None
    return found is None or found >= OBJECTIVES_RELEASE


def oldest_image(version: Version) -> str:
    """The published picker image of a release, under the name it was published with."""
    name = "llm-d-router-endpoint-picker" if version >= RENAMED else "llm-d-inference-scheduler"
    return f"ghcr.io/llm-d/{name}:{_tag(version)}"


def _tag(version: Version) -> str:
    return "v" + ".".join(map(str, version))
