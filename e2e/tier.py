"""``python -m e2e tier``: the e2e tier as CI runs it, in two shards at once.

One environment runs the tier in about 80 minutes, most of it Crossplane's cadence (a composite
polled every minute, provider-kubernetes every 10 s) rather than CPU, so two environments side
by side take little longer than one. They cannot share a network namespace: provider-kubernetes
v1.2.1 starts controller-runtime's metrics server on ``:8080`` with no flag to move it
(``cmd/provider/main.go`` sets only the health probe address), so each shard runs in a network
namespace of its own (``unshare -n``, loopback up; every process of the tier talks over
loopback only). Where no namespace can be made, the shards run one after the other.

Every component is built (or found cached) first, in the machine's own namespace: a shard's
namespace has loopback only, no module proxy.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from e2e import build

REPOSITORY = Path(__file__).resolve().parents[1]

# The modules of the first shard, about half of the tier's time between them (the examples
# about 23 minutes, the routed rollout 13, the drain 6: docs/design/e2e.md "Figures"); every
# other module, a new one included, runs in the second.
FIRST = (
    "tests/e2e/test_examples.py",
    "tests/e2e/test_rollout_routed.py",
    "tests/e2e/test_drain.py",
)

# Runs a command in a new network namespace with its loopback up. Tried as root first, then
# as an unprivileged user mapped to root in a user namespace of its own.
NAMESPACED = (
    ("unshare", "--net", "--"),
    ("unshare", "--net", "--map-root-user", "--"),
)
LOOPBACK_UP = ("sh", "-c", 'ip link set lo up && exec "$@"', "sh")


@dataclass(frozen=True)
class Shard:
    name: str
    selection: tuple[str, ...]


def shards() -> tuple[Shard, Shard]:
    rest = tuple(f"--ignore={module}" for module in FIRST)
    return Shard("examples", FIRST), Shard("fleet", ("tests/e2e", *rest))


def namespace_prefix() -> tuple[str, ...] | None:
    """The command prefix that runs a shard in a network namespace of its own, or None when
    this machine cannot make one."""
    reason = ""
    for prefix in NAMESPACED:
        probe = subprocess.run(
            [*prefix, *LOOPBACK_UP, "true"], capture_output=True, text=True, check=False
        )
        if probe.returncode == 0:
            return (*prefix, *LOOPBACK_UP)
        reason = probe.stderr.strip()
    print(f"e2e tier: no network namespace here ({reason}); the shards run in turn")
    return None


def pytest_command(shard: Shard, extra: list[str]) -> list[str]:
    return [sys.executable, "-m", "pytest", "-m", "e2e", *shard.selection, *extra]


def _relay(name: str, stream: IO[str]) -> None:
    for line in stream:
        sys.stdout.write(f"[{name}] {line}")
        sys.stdout.flush()


def run_together(prefix: tuple[str, ...], extra: list[str]) -> dict[str, int]:
    """Both shards at once, each line of their output prefixed with the shard's name."""
    running: dict[str, subprocess.Popen[str]] = {}
    relays = []
    for shard in shards():
        process = subprocess.Popen(
            [*prefix, *pytest_command(shard, extra)],
            cwd=REPOSITORY,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            bufsize=1,
            # Out of the terminal's process group: a Ctrl-C reaches the shards once, from here.
            start_new_session=True,
        )
        running[shard.name] = process
        relay = threading.Thread(target=_relay, args=(shard.name, process.stdout), daemon=True)
        relay.start()
        relays.append(relay)
    try:
        codes = {name: process.wait() for name, process in running.items()}
    except BaseException:
        _interrupt(running.values())
        raise
    for relay in relays:
        relay.join()
    return codes


def _interrupt(shards: Collection[subprocess.Popen[str]]) -> None:
    """Stops the shards as Ctrl-C would: each pytest session tears its environment down (its
    fixtures' finalizers stop every process it started); one that does not within
    ``STOP_SECONDS`` is killed."""
    for shard in shards:
        if shard.poll() is None:
            shard.send_signal(signal.SIGINT)
    deadline = time.monotonic() + STOP_SECONDS
    for shard in shards:
        try:
            shard.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            shard.kill()
            shard.wait()


STOP_SECONDS = 120


def run_in_turn(extra: list[str]) -> dict[str, int]:
    codes = {}
    for shard in shards():
        codes[shard.name] = subprocess.call(pytest_command(shard, extra), cwd=REPOSITORY)
    return codes


def main(argv: list[str]) -> int:
    """Runs the tier; ``argv`` goes to each shard's pytest (``-k`` may leave one empty)."""
    started = time.monotonic()
    # A CI runner stops a job with SIGTERM: taken as Ctrl-C, so the shards are stopped in turn.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    build.build_all(list(build.COMPONENTS))
    prefix = namespace_prefix() if os.environ.get("MODELPLANE_E2E_SERIAL") != "1" else None
    codes = run_together(prefix, argv) if prefix else run_in_turn(argv)
    minutes = (time.monotonic() - started) / 60
    summary = ", ".join(f"{name} exited {code}" for name, code in codes.items())
    print(f"e2e tier: {summary}; {minutes:.1f} min in all")
    return exit_code(codes)


NO_TESTS = 5
"""pytest's exit code when a session collected nothing: a shard that ``-k`` empties."""


def exit_code(codes: dict[str, int]) -> int:
    """The tier's exit code: the first failing shard's; a shard that collected nothing fails
    only if every shard did (a selection that names no test at all)."""
    failed = [code for code in codes.values() if code not in (0, NO_TESTS)]
    if failed:
        return failed[0]
    return NO_TESTS if all(code == NO_TESTS for code in codes.values()) else 0
