"""Crossplane's package-manager rules the install story depends on, transcribed for the tests.

Naming: when a Configuration's dependency is missing, Crossplane's resolver creates it as
``xpkg.ToDNSLabel(ref.Context().RepositoryStr())`` where ``ref = name.ParseReference(package)``
(crossplane/crossplane ``internal/controller/pkg/resolver/reconciler.go``, ``NewPackage``, the
same in every release from v2.0.0 through v2.3.4 and on main at 2d040d2daf4e;
``ToDNSLabel`` is crossplane/crossplane-runtime ``pkg/xpkg/name.go``, ``ParseReference`` is
google/go-containerregistry ``pkg/name``). So the installed name comes from the repository path
alone: the registry host and the tag play no part.

Versions: package constraints are Masterminds/semver v3 constraints (crossplane-runtime
``pkg/xpkg/lint.go``, ``PackageValidSemver``).
"""

from __future__ import annotations

import re
from pathlib import Path

RELEASES = Path(__file__).resolve().parent / "upstream" / "crossplane-releases"
DOCKER_HUB = "index.docker.io"


def to_dns_label(s: str) -> str:
    """crossplane-runtime ``xpkg.ToDNSLabel``: keep [a-z0-9], turn ``./:-`` into ``-``, 63 max.

    Byte by byte as upstream: separators at the first, 63rd and last position are dropped, the
    scan stops after the 63rd byte, and leading and trailing dashes are trimmed. Upper-case
    letters are dropped, not lowered.
    """
    cut: list[str] = []
    for i, b in enumerate(s):
        if "a" <= b <= "z" or "0" <= b <= "9":
            cut.append(b)
        if b in "./:-" and i not in (0, 62, len(s) - 1):
            cut.append("-")
        if i == 62:
            break
    return "".join(cut).strip("-")


def repository(reference: str) -> str:
    """go-containerregistry ``name.ParseReference(ref).Context().RepositoryStr()``.

    The first path part is the registry host when it holds a ``.`` or ``:`` (Crossplane v2.3
    builds with go-containerregistry v0.21.2; ``localhost`` alone counts from v0.21.7 on);
    otherwise the registry is Docker Hub, whose one-part names live under ``library/``.
    """
    base = reference.split("@", 1)[0]
    head, colon, tag = base.rpartition(":")
    if colon and "/" not in tag:
        base = head
    first, slash, rest = base.partition("/")
    registry, repo = (first, rest) if slash and ("." in first or ":" in first) else ("", base)
    if registry in ("", "docker.io", DOCKER_HUB) and "/" not in repo:
        return f"library/{repo}"
    return repo


def dependency_name(package: str) -> str:
    """The name Crossplane gives the package it installs for a dependency on ``package``."""
    return to_dns_label(repository(package))


_VERSION = r"v?(\d+|[xX*])(\.(\d+|[xX*])){0,2}(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?"
_TERM = re.compile(rf"(=|!=|>|<|>=|=>|<=|=<|~|~>|\^)?{_VERSION}")


def is_constraint(text: str) -> bool:
    """Masterminds/semver v3 constraint syntax: terms joined by ``,`` or spaces, or ``||``."""
    for alternative in text.split("||"):
        squeezed = re.sub(r"(=|!=|>|<|>=|=>|<=|=<|~|~>|\^)\s+", r"\1", alternative.strip())
        terms = [t for t in re.split(r"[,\s]+", squeezed) if t]
        if not terms or not all(_TERM.fullmatch(t) for t in terms):
            return False
    return True


def release_key(tag: str) -> tuple[int, ...]:
    return tuple(int(n) for n in tag.removeprefix("v").split("."))


def crossplane_releases() -> list[tuple[str, list[Path]]]:
    """Each release where Crossplane's XRD or Composition schema changed, with both CRDs then.

    A release folder holds only the CRDs whose schema changed at that release; the others are
    carried from the newest earlier folder (tests/upstream/README.md, "Crossplane releases").
    """
    current: dict[str, Path] = {}
    releases = []
    for folder in sorted(RELEASES.iterdir(), key=lambda p: release_key(p.name)):
        current.update({p.name: p for p in folder.glob("*.yaml")})
        releases.append((folder.name, sorted(current.values())))
    return releases
