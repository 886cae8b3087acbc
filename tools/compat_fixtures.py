"""Record what a release composes, for tests/compat: each chosen example rendered with one copy
of every workload ready, as the release's own `modelplane render` prints it.

Run it with the release installed (or its source first on PYTHONPATH) when cutting a release:

    uv run python tools/compat_fixtures.py
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


def main_() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    for name in EXAMPLES:
        args = ["render", str(ROOT / "examples" / name), "--simulate-ready-copies", "1"]
        out = CliRunner().invoke(main, args)
        if out.exit_code != 0:
            print(out.output, file=sys.stderr)
            return 1
        (OUT / f"{name}.yaml").write_text(out.output)
    return 0


if __name__ == "__main__":
    sys.exit(main_())
