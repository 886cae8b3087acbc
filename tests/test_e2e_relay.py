"""The relay that carries loopback ports into a network namespace of its own (e2e/relay.py),
checked without a control plane: a pair of relays in one namespace, then across one."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from e2e import relay

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


async def _shouting(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """A target that reads its request to the end (the client's half close), then answers it
    upper-cased and closes."""
    request = await reader.read()
    writer.write(request.upper())
    await writer.drain()
    writer.close()


async def _exchange(tmp: Path, port: int, request: bytes | None) -> bytes:
    """What comes back to a client of the inside relay (which sends ``request``, if any, then
    half closes) from ``port`` on the same loopback, through the outside relay's unix socket."""
    path = relay.socket_path(tmp, port)
    outside = await relay.unix_to_tcp(path, port)
    # The inside relay listens on a port of its own here: no namespace, so the target's is taken.
    inside = await relay.tcp_to_unix(0, path)
    try:
        reader, writer = await asyncio.open_connection(
            relay.HOST, inside.sockets[0].getsockname()[1]
        )
        if request is not None:
            writer.write(request)
            await writer.drain()
            writer.write_eof()
        answer = await asyncio.wait_for(reader.read(), 10)
        writer.close()
        return answer
    finally:
        inside.close()
        outside.close()


async def _through_a_pair(tmp: Path, handler: Handler, request: bytes) -> bytes:
    """``request`` sent to the inside relay's port, carried to a target on another port of the
    same loopback through the outside relay's unix socket; what came back."""
    target = await asyncio.start_server(handler, relay.HOST, 0)
    try:
        return await _exchange(tmp, target.sockets[0].getsockname()[1], request)
    finally:
        target.close()


def test_bytes_pass_both_ways_and_the_half_close_is_carried(tmp_path: Path) -> None:
    answer = asyncio.run(_through_a_pair(tmp_path, _shouting, b"hello prometheus"))
    assert answer == b"HELLO PROMETHEUS"


def test_a_large_body_arrives_whole(tmp_path: Path) -> None:
    request = bytes(range(256)) * 40_000  # about 10 MB, many chunks each way
    answer = asyncio.run(_through_a_pair(tmp_path, _shouting, request))
    assert answer == request.upper()


def test_nothing_listening_behind_the_relay_closes_the_clients_connection(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind((relay.HOST, 0))
        port = s.getsockname()[1]  # bound, never listening: a dial is refused
        assert asyncio.run(_exchange(tmp_path, port, None)) == b""


def test_a_socket_path_too_long_for_a_unix_socket_moves_to_tmp(tmp_path: Path) -> None:
    deep = tmp_path / ("d" * 120)
    chosen = relay.short_directory(deep)
    assert chosen != deep and chosen.is_dir()
    assert len(str(relay.socket_path(chosen, 65535))) <= relay.SOCKET_PATH_MAX
    assert relay.short_directory(tmp_path / "short") == tmp_path / "short"


def test_no_namespace_here_is_said_so() -> None:
    with pytest.raises(relay.NoNamespaceError):
        relay.namespaced(["true"], prefixes=(("false",),))


def _namespaced_or_skip(command: list[str]) -> list[str]:
    try:
        return relay.namespaced(command)
    except relay.NoNamespaceError as error:
        pytest.skip(str(error))


def test_a_command_in_its_own_namespace_reaches_a_relayed_port_only(tmp_path: Path) -> None:
    # The target answers on this namespace's loopback; the command, in a namespace of its own,
    # dials the same address and is answered through the relays, and cannot dial another port
    # that listens here but is not relayed.
    with socket.socket() as target, socket.socket() as other:
        for s in (target, other):
            s.bind((relay.HOST, 0))
            s.listen()
        port, unrelayed = target.getsockname()[1], other.getsockname()[1]
        dial = (
            "import socket, sys\n"
            f"s = socket.create_connection(('127.0.0.1', {port}), timeout=10)\n"
            "s.sendall(b'ping'); s.shutdown(socket.SHUT_WR)\n"
            "print(s.recv(100).decode())\n"
            "try:\n"
            f"    socket.create_connection(('127.0.0.1', {unrelayed}), timeout=2)\n"
            "    print('unrelayed reached')\n"
            "except OSError:\n"
            "    print('unrelayed refused')\n"
        )
        command = _namespaced_or_skip(
            [
                sys.executable,
                "-m",
                "e2e.relay",
                "inside",
                str(tmp_path),
                str(port),
                "--",
                sys.executable,
                "-c",
                dial,
            ]
        )
        root = Path(relay.__file__).resolve().parents[1]
        outside = subprocess.Popen(
            [sys.executable, "-m", "e2e.relay", "outside", str(tmp_path), str(port)],
            cwd=root,
        )
        try:
            deadline = time.monotonic() + 10
            while not relay.socket_path(tmp_path, port).is_socket():
                assert time.monotonic() < deadline, "the outside relay never listened"
                time.sleep(0.05)
            child = subprocess.Popen(
                command, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
            )
            conn, _ = target.accept()
            with conn:
                assert conn.recv(100) == b"ping"
                conn.sendall(b"pong")
            out, err = child.communicate(timeout=30)
            assert child.returncode == 0, err
            assert out.splitlines()[-2:] == ["pong", "unrelayed refused"]
        finally:
            outside.terminate()
            outside.wait(timeout=10)
