"""Loopback ports carried into a network namespace of its own, through unix sockets.

provider-http cannot share a network namespace with provider-kubernetes: both are
controller-runtime managers that start its metrics server on ``:8080``, with no flag to move
it. provider-http v1.0.14 ``cmd/provider/main.go`` passes ``ctrl.Options`` without ``Metrics``
(and has no metrics flag), and controller-runtime v0.21.0 ``pkg/metrics/server/server.go``
defaults an empty ``BindAddress`` to ``DefaultBindAddress = ":8080"``. So it runs in a network
namespace of its own (``unshare --net``, loopback up), where ``:8080`` is free.

What it must reach there (the control plane's kube-apiserver, the fleet-wide Prometheus) listens
on the parent namespace's loopback. A unix socket named by a path is found through the file
system, which both namespaces share, so each port is carried by a pair of relays:

- ``outside`` (parent namespace): accepts on ``<dir>/<port>.sock`` and dials ``127.0.0.1:<port>``;
- ``inside`` (the child namespace): accepts on ``127.0.0.1:<port>`` and dials
  ``<dir>/<port>.sock``, then runs the command it was given, in that namespace.

The child dials the same address as the parent would, so a kubeconfig, a TLS server name and a
URL in a composed object stay as they are; bytes pass unchanged both ways, each direction's end
of stream passed on as a half close.

    python -m e2e.relay outside DIR PORT...
    python -m e2e.relay inside DIR PORT... -- COMMAND...
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import subprocess
import sys
import tempfile
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path

from e2e import processes

HOST = "127.0.0.1"
CHUNK = 1 << 16
SOCKET_PATH_MAX = 107
"""The longest path a unix socket may be bound at (``sun_path`` is 108 bytes, NUL included)."""

# Runs a command in a new network namespace with its loopback up, as root or as an unprivileged
# user mapped to root (e2e.tier's shards are made the same way).
NAMESPACED = (
    ("unshare", "--net", "--"),
    ("unshare", "--net", "--map-root-user", "--"),
)
LOOPBACK_UP = ("sh", "-c", 'ip link set lo up && exec "$@"', "sh")

Dial = Callable[[], Awaitable[tuple[asyncio.StreamReader, asyncio.StreamWriter]]]


def socket_path(directory: Path, port: int) -> Path:
    return directory / f"{port}.sock"


async def _pump(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, source: asyncio.StreamWriter
) -> None:
    """Copies ``reader`` to ``writer`` until end of stream, then half-closes ``writer`` (the
    other direction may still be answering). A connection lost on either side closes both, so
    the other direction ends too."""
    try:
        while data := await reader.read(CHUNK):
            writer.write(data)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
    except (ConnectionError, OSError):
        writer.close()
        source.close()


async def _close(writer: asyncio.StreamWriter) -> None:
    writer.close()
    with contextlib.suppress(ConnectionError, OSError):
        await writer.wait_closed()


def _joiner(dial: Dial) -> Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]:
    """A connection handler that dials the far end and copies both ways until both end."""

    async def join(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            far_reader, far_writer = await dial()
        except OSError:
            await _close(writer)  # nothing there: the client sees its connection closed
            return
        try:
            await asyncio.gather(
                _pump(reader, far_writer, writer), _pump(far_reader, writer, far_writer)
            )
        finally:
            await _close(far_writer)
            await _close(writer)

    return join


async def unix_to_tcp(path: Path, port: int, host: str = HOST) -> asyncio.Server:
    """Accepts on the unix socket ``path``; each connection is joined to ``host:port``."""
    path.unlink(missing_ok=True)
    return await asyncio.start_unix_server(
        _joiner(lambda: asyncio.open_connection(host, port)), path=str(path)
    )


async def tcp_to_unix(port: int, path: Path, host: str = HOST) -> asyncio.Server:
    """Accepts on ``host:port``; each connection is joined to the unix socket ``path``."""
    return await asyncio.start_server(
        _joiner(lambda: asyncio.open_unix_connection(str(path))), host, port
    )


async def _until_stopped() -> None:
    stopped = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stopped.set)
    await stopped.wait()


async def outside(directory: Path, ports: Sequence[int]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    servers = [await unix_to_tcp(socket_path(directory, p), p) for p in ports]
    print(f"relay outside: {', '.join(str(socket_path(directory, p)) for p in ports)}", flush=True)
    try:
        await _until_stopped()
    finally:
        for server in servers:
            server.close()


async def inside(directory: Path, ports: Sequence[int], command: Sequence[str]) -> int:
    """Listens on each port, then runs ``command`` until it exits (its exit code); SIGTERM and
    SIGINT are passed on to it."""
    servers = [await tcp_to_unix(p, socket_path(directory, p)) for p in ports]
    print(f"relay inside: 127.0.0.1:{', '.join(map(str, ports))}", flush=True)
    child = await asyncio.create_subprocess_exec(*command)
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, child.send_signal, sig)
    try:
        return await child.wait()
    finally:
        for server in servers:
            server.close()


def namespaced(command: Sequence[str], prefixes: Sequence[Sequence[str]] = NAMESPACED) -> list[str]:
    """``command`` run in a network namespace of its own with its loopback up, by the first
    prefix that can make one here; ``NoNamespaceError`` when none can."""
    reasons = []
    for prefix in prefixes:
        probe = subprocess.run(
            [*prefix, *LOOPBACK_UP, "true"], capture_output=True, text=True, check=False
        )
        if probe.returncode == 0:
            return [*prefix, *LOOPBACK_UP, *command]
        reasons.append(probe.stderr.strip())
    raise NoNamespaceError(f"no network namespace can be made here: {'; '.join(reasons)}")


class NoNamespaceError(RuntimeError):
    """This machine cannot make a network namespace (no ``unshare``, or not permitted)."""


def short_directory(preferred: Path) -> Path:
    """``preferred`` when a socket of any port fits under it, else a fresh directory in /tmp."""
    if len(str(socket_path(preferred, 65535))) <= SOCKET_PATH_MAX:
        preferred.mkdir(parents=True, exist_ok=True)
        return preferred
    return Path(tempfile.mkdtemp(prefix="e2e-relay-"))


REPOSITORY = Path(__file__).resolve().parents[1]


def start(
    run: Path,
    name: str,
    command: Sequence[str],
    ports: Sequence[int],
    env: Mapping[str, str] | None = None,
) -> None:
    """``command`` as process ``name`` of the run, in a network namespace of its own that
    reaches ``ports`` of this one's loopback; the outside relay is process ``<name>-relay``.
    Both log to the run directory; ``stop`` stops both."""
    directory = short_directory(run / f"{name}-relay")
    numbers = [str(p) for p in ports]
    python = {"PYTHONPATH": str(REPOSITORY)}
    processes.start(
        run,
        f"{name}-relay",
        [sys.executable, "-m", "e2e.relay", "outside", str(directory), *numbers],
        env=python,
    )
    processes.wait_until(
        lambda: all(socket_path(directory, p).is_socket() for p in ports),
        30,
        f"the relay's sockets in {directory} (log: {run}/{name}-relay.log)",
        interval=0.1,
    )
    relayed = [sys.executable, "-m", "e2e.relay", "inside", str(directory), *numbers, "--"]
    processes.start(run, name, namespaced([*relayed, *command]), env={**(env or {}), **python})


def stop(run: Path, name: str) -> None:
    """What ``start`` started, gone: the command and its inside relay, then the outside one."""
    processes.stop(run, name)
    processes.stop(run, f"{name}-relay")


def main(argv: list[str]) -> int:
    usage = "usage: python -m e2e.relay outside DIR PORT... | inside DIR PORT... -- COMMAND..."
    if len(argv) < 3 or argv[0] not in ("outside", "inside"):
        print(usage, file=sys.stderr)
        return 2
    mode, directory = argv[0], Path(argv[1])
    rest = argv[2:]
    split = rest.index("--") if "--" in rest else len(rest)
    ports, command = [int(p) for p in rest[:split]], rest[split + 1 :]
    if mode == "outside":
        asyncio.run(outside(directory, ports))
        return 0
    if not command:
        print(usage, file=sys.stderr)
        return 2
    return asyncio.run(inside(directory, ports, command))


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
