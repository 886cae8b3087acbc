"""Processes of the e2e tier: each started in its own session, recorded by PID, logged to a file.

A run directory holds ``<name>.pid`` and ``<name>.log`` for every process, so ``down`` stops
exactly what ``up`` started (by PID, its whole process group), even from another Python process,
and a failed run leaves every log behind.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path


class WaitTimeoutError(Exception):
    """A bounded wait ran out; the message says what was awaited and where to look."""


def start(
    run: Path,
    name: str,
    argv: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> int:
    log = (run / f"{name}.log").open("ab")
    log.write(f"\n==> {' '.join(argv)}\n".encode())
    log.flush()
    process = subprocess.Popen(
        list(argv),
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
        env={**os.environ, **(env or {})},
        cwd=cwd,
        start_new_session=True,
    )
    log.close()
    (run / f"{name}.pid").write_text(str(process.pid))
    return process.pid


def alive(pid: int) -> bool:
    try:
        waited, _ = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        waited = 0
    if waited == pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return _state(pid) != "Z"


def _state(pid: int) -> str:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    return stat.rsplit(")", 1)[-1].split()[0]


def pid_of(run: Path, name: str) -> int | None:
    path = run / f"{name}.pid"
    return int(path.read_text()) if path.is_file() else None


def running(run: Path) -> dict[str, bool]:
    """Every process the run directory records, and whether it still runs."""
    result = {}
    for path in sorted(run.glob("*.pid")):
        result[path.stem] = alive(int(path.read_text()))
    return result


def stop(run: Path, name: str, grace: float = 10.0) -> None:
    """SIGTERM the process group, SIGKILL what is left after ``grace`` seconds."""
    pid = pid_of(run, name)
    if pid is None:
        return
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(pid, sig)
        except ProcessLookupError:
            break
        deadline = time.monotonic() + grace
        while alive(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        if not alive(pid):
            break
    (run / f"{name}.pid").unlink(missing_ok=True)


def stop_all(run: Path, order: Sequence[str] = ()) -> None:
    """Stops the named processes first, in order, then any other the run directory records."""
    for name in order:
        stop(run, name)
    for path in sorted(run.glob("*.pid")):
        stop(run, path.stem)


def wait_until(check: Callable[[], bool], timeout: float, what: str, interval: float = 0.5) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            if check():
                return
        except Exception:  # a probe that fails is a probe that is not ready yet
            pass
        if time.monotonic() >= deadline:
            raise WaitTimeoutError(f"gave up after {timeout:.0f} s waiting for {what}")
        time.sleep(interval)
