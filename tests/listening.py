"""A server process started on a free loopback port, and known to listen there itself.

A free port is free only until something binds it: another xdist worker's server can take the
same port first, and a connect then reaches that server while ours fails to bind. So a server
counts as listening only once its own process holds the listening socket, and one that says the
port is taken is started again on another.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PortTakenError(Exception):
    """The free port was taken by another process before the server bound it."""


def listens(pid: int, port: int) -> bool:
    """Whether process ``pid`` holds a listening socket on ``port``."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        with contextlib.suppress(OSError):
            link = os.readlink(fd)
            if link.startswith("socket:["):
                inodes.add(link[len("socket:[") : -1])
    # gRPC listens on 127.0.0.1 through a dual-stack socket: a v4-mapped address in tcp6.
    tables = (Path("/proc/net/tcp"), Path("/proc/net/tcp6"))
    for line in [row for t in tables for row in t.read_text().splitlines()[1:]]:
        fields = line.split()
        local, state, inode = fields[1], fields[3], fields[9]
        if state == "0A" and int(local.rsplit(":", 1)[1], 16) == port and inode in inodes:
            return True
    return False


def wait_listening(proc: subprocess.Popen[str], port: int, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            out = proc.stdout.read() if proc.stdout else ""
            if f"cannot listen on 127.0.0.1:{port}" in out:
                raise PortTakenError(out)
            raise AssertionError(f"server exited early ({proc.returncode}):\n{out}")
        with contextlib.suppress(OSError):
            if listens(proc.pid, port):
                return
        time.sleep(0.05)
    raise AssertionError("server did not start listening")


def on_a_free_port(
    launch: Callable[[int], subprocess.Popen[str]],
    procs: list[subprocess.Popen[str]],
    timeout: float = 20,
) -> tuple[subprocess.Popen[str], int]:
    """``launch(port)`` on a free loopback port until its process listens there itself; every
    process started is appended to ``procs`` for the caller to stop."""
    for _ in range(3):
        port = free_port()
        proc = launch(port)
        procs.append(proc)
        with contextlib.suppress(PortTakenError):
            wait_listening(proc, port, timeout)
            return proc, port
    raise AssertionError("three free ports were taken before the server bound them")
