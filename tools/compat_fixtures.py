"""Record what a release composes, for tests/compat: each chosen example rendered with one copy
of every workload ready, as the release's own `modelplane render` prints it.

By default it only checks: it renders each example and names every recorded file that differs
(exit 1), rewriting nothing, since a fixture is the record of a release and a later checkout
rewriting it would erase what tests/compat compares against. Record with ``--write``, with the
release installed (or its source first on PYTHONPATH), when cutting a release:

    uv run python tools/compat_fixtures.py --write
"""

from __future__ import annotations

import sys
from pathlib import Path

from click.testing import CliRunner

from modelplane.cli import main

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "compat" / "release"
EXAMPLES = [
    "fleet-gang",
    "fleet-prefill-decode",
    "replica-cache",
    "replica-gang-dynamo",
    "replica-sidecar",
    "service-overflow",
]
"""One of each workload kind (Deployment, LeaderWorkerSet, Grove), disaggregated serving, a model
cache with its claims, a sidecar, and a service's routes across clusters."""


def rendered(name: str) -> str | None:
    """The example as the checkout renders it, or None (its error printed) when it fails."""
    args = ["render", str(ROOT / "examples" / name), "--simulate-ready-copies", "1"]
    out = CliRunner().invoke(main, args)
    if out.exit_code != 0:
        print(out.output, file=sys.stderr)
        return None
    return out.output


def main_(argv: list[str]) -> int:
    write = "--write" in argv
    differ = []
    for name in EXAMPLES:
        text = rendered(name)
        if text is None:
            return 1
        path = OUT / f"{name}.yaml"
        if write:
            OUT.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        elif not path.exists() or path.read_text() != text:
            differ.append(str(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path))
    for path in differ:
        print(f"{path}: this checkout renders it differently (--write records it)")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main_(sys.argv[1:]))
