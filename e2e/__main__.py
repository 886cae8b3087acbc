"""``python -m e2e up | down | status | build | tier``: the e2e environment by hand, and the
whole tier as CI runs it (``e2e.tier``).

The run directory is ``$MODELPLANE_E2E_RUN`` (default ``~/.cache/modelplane-e2e/run``); every
process's log and PID file is there.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from e2e import build, environment, processes, tier


def main(argv: list[str]) -> int:
    command = argv[0] if argv else "status"
    run = environment.run_directory()
    if command == "build":
        return build.main(argv[1:])
    if command == "tier":
        return tier.main(argv[1:])
    if command == "up":
        if run.exists() and not any(processes.running(run).values()):
            shutil.rmtree(run)
        env = environment.up(run)
        print(f"control plane: KUBECONFIG={env.control.kubeconfig}")
        return 0
    if command == "down":
        if (run / environment.STATE).exists():
            environment.attach(run).down()
        else:
            processes.stop_all(run)
        return 0
    if command == "status":
        for name, alive in processes.running(run).items():
            print(f"{name}: {'running' if alive else 'stopped'} (log: {run / name}.log)")
        return 0
    if command == "gateway-standin":
        environment.gateway_standin(Path(argv[1]), argv[2])
        return 0
    usage = "up | down | status | build [COMPONENT ...] | tier [PYTEST ARG ...]"
    print(f"usage: python -m e2e {usage}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
