"""`modelplane serve`: run the composition function as Crossplane calls it.

One process speaks gRPC; ``--workers`` processes (default: the CPUs available) compose. The
server never decodes a request: it reads the tag off the wire, answers a repeat from its
response cache, and otherwise hands the bytes to an idle worker, which decodes, admits,
composes and encodes. So the event loop never composes: a slow composite holds one worker,
never the server, and SIGTERM is heard whatever is running.

Why processes behind one listener rather than a listener per process (``SO_REUSEPORT``, the
pattern of gRPC Python's multiprocessing example): the kernel spreads *connections* across
such listeners, and Crossplane sends every call to a Function pod over one HTTP/2 connection
(grpc-go, round robin across the Service's endpoints, one subchannel per endpoint), so all of
its traffic would reach one process. Threads would not help either: composing is Python code,
one at a time under the GIL. A composition whose caller gives up (deadline or cancel) finishes
in its worker and is cached for the retry (``Handler``); a worker stopped because such a
composition ran past ``ABANDONED_SECONDS``, or because the server is stopping, is replaced by a
freshly spawned one (fork after gRPC has started threads is unsafe).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import math
import multiprocessing
import os
import pickle
import signal
import socket
import ssl
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
import grpc
import structlog
from crossplane.function import logging, runtime
from grpc_reflection.v1alpha import reflection

from modelplane.compose.admission import Admission
from modelplane.composer import Registry
from modelplane.function import (
    CACHE_BYTES,
    MIB,
    FunctionRunner,
    Outcome,
    content_key,
    fatal_bytes,
    log_request,
    peek_tag,
)
from modelplane.kube.lru import Lru
from modelplane.metrics import Metrics, metrics_address

_TLS_FILES = ("tls.crt", "tls.key", "ca.crt")
REGISTRY = "modelplane.compose.registry:default_registry"
"""Where workers find the registry of composers (``module:function``)."""
GRACE_SECONDS = 5
"""How long SIGTERM waits for calls in flight before stopping them (Kubernetes waits 30 s)."""
DEFAULT_RECV_MIB = 64
"""A 1,000-cluster fleet's ModelDeployment request (every cluster and its 4,000 replicas) is
about 12 MiB; Crossplane sends up to 2 GiB (grpc-go's default client send limit)."""
DEFAULT_SEND_MIB = 4
"""Crossplane receives at most 4 MiB (grpc-go's default client receive limit, which its
function runner does not raise): a larger response would fail there, so it is a Fatal here."""
DEFAULT_INFLIGHT_MIB = 64
"""The requests the server holds at once, composing or waiting for a worker, summed: one of the
largest accepted, or several smaller. A worker composing a request grows by 10 to 17 times its
size (a 63 MiB one took a worker from 39 to 1,085 MiB), so this bounds the workers' memory
together, not each worker's; a request alone is always taken (docs/design/security.md)."""
DEFAULT_CONCURRENT_RPCS = 32
"""Calls the server takes at once (gRPC's ``maximum_concurrent_rpcs``, and each connection's
HTTP/2 MAX_CONCURRENT_STREAMS): gRPC reads a call's message whole before any handler sees it,
so this times the message limit bounds what arriving calls hold. Past it a connection's client
waits for a stream (grpc-go, Crossplane's, queues the call), and a call on another connection
is refused RESOURCE_EXHAUSTED before its message is read."""
ABANDONED_SECONDS = 10
"""How long a composition nobody waits for any more may run on: long enough for any real one
(a 1,000-cluster fleet composes in about a second) to finish and be cached for the retry;
past it, its worker is stopped and replaced."""
_STARTUP_SECONDS = 120
_SERVICES = (
    "apiextensions.fn.proto.v1.FunctionRunnerService",
    "apiextensions.fn.proto.v1beta1.FunctionRunnerService",
)


def serve(
    *,
    address: str,
    tls_certs_dir: str | None,
    insecure: bool,
    debug: bool,
    max_recv_message_size: int = DEFAULT_RECV_MIB,
    max_send_message_size: int | None = DEFAULT_SEND_MIB,
    workers: int | None = None,
    registry: str = REGISTRY,
    metrics_address: str = "",
    metrics_port: int | None = None,
    max_inflight_size: int | None = None,
    max_concurrent_rpcs: int = DEFAULT_CONCURRENT_RPCS,
    abandoned_seconds: float = ABANDONED_SECONDS,
) -> None:
    """Serve until SIGTERM; message sizes in MiB; ``workers`` defaults to the CPUs available;
    ``registry`` names the function building the composers (``module:function``); metrics are
    served on ``metrics_address`` (``host:port``, its port replaced by ``metrics_port``), none
    when it is empty or its port 0; ``max_inflight_size`` (MiB, default the larger of
    DEFAULT_INFLIGHT_MIB and ``max_recv_message_size``) and ``max_concurrent_rpcs`` bound the
    requests held at once; a composition nobody has waited for in ``abandoned_seconds`` has its
    worker replaced."""
    configure_logging(debug)
    metrics_at = _checked_metrics_address(metrics_address, metrics_port)
    if insecure and tls_certs_dir:
        # Either would be a choice; both is a mistake that served plaintext with a log line.
        raise click.UsageError(
            f"--insecure and --tls-server-certs-dir {tls_certs_dir} (or TLS_SERVER_CERTS_DIR) "
            "are both set: drop --insecure to serve mutual TLS, or unset the directory to "
            "serve plaintext"
        )
    creds = None if insecure else runtime.load_credentials(_checked_certs_dir(tls_certs_dir))
    send = max_send_message_size or DEFAULT_SEND_MIB
    options = [
        # gRPC binds with SO_REUSEPORT by default: a second server on the same address would
        # start and silently take a share of the calls. Refuse to bind an address in use.
        ("grpc.so_reuseport", 0),
        ("grpc.max_receive_message_length", max_recv_message_size * MIB),
        # The worker answers a response past the limit with a Fatal naming it; this only
        # leaves room for that message's own framing.
        ("grpc.max_send_message_length", send * MIB + MIB),
        # A client's calls past the limit wait in the client, holding nothing here.
        ("grpc.max_concurrent_streams", max_concurrent_rpcs),
    ]
    inflight = max_inflight_size or max(DEFAULT_INFLIGHT_MIB, max_recv_message_size)
    limits = Limits(inflight * MIB, max_concurrent_rpcs, abandoned_seconds)
    # Compiled here, before the first workers are forked, so they start with it compiled (and
    # a missing apis/ is reported once, here).
    metrics = Metrics(d.kind for d in _compiled_admission().definitions())
    pool = Pool(workers or available_cpus(), registry, send * MIB, debug, metrics)
    pool.fork()
    try:
        # After the fork: the metrics server's thread and socket are the server's alone.
        _listen_metrics(metrics, metrics_at, pool)
        asyncio.run(_serve(pool, address, creds, insecure, options, limits))
    except WorkerError as e:
        raise click.ClickException(str(e)) from None
    finally:
        metrics.close()


def _checked_metrics_address(address: str, port: int | None) -> str | None:
    if not address:
        return None
    try:
        return metrics_address(address, port)
    except ValueError as e:
        raise click.UsageError(f"--metrics-address: {e}") from None


def _listen_metrics(metrics: Metrics, address: str | None, pool: Pool) -> None:
    metrics.watch(pool)
    if address is None:
        return
    try:
        metrics.listen(address)
    except OSError as e:
        pool.close()
        why = e.strerror or str(e)
        raise click.ClickException(f"--metrics-address {address}: cannot listen: {why}") from None


async def _serve(
    pool: Pool,
    address: str,
    creds: grpc.ServerCredentials | None,
    insecure: bool,
    options: list[tuple[str, Any]],
    limits: Limits,
) -> None:
    log = logging.get_logger().bind()
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        await pool.start()
        server = grpc.aio.server(options=options, maximum_concurrent_rpcs=limits.calls)
        handle = Handler(
            pool, log, abandoned_seconds=limits.abandoned, max_inflight=limits.inflight
        )
        handlers = {
            "RunFunction": grpc.unary_unary_rpc_method_handler(
                handle.run, request_deserializer=None, response_serializer=None
            )
        }
        for service in _SERVICES:
            server.add_generic_rpc_handlers(
                (grpc.method_handlers_generic_handler(service, handlers),)
            )
        reflection.enable_server_reflection(runtime.SERVICE_NAMES, server)
        try:
            if creds is not None:
                server.add_secure_port(address, creds)
            if insecure:
                server.add_insecure_port(address)
        except RuntimeError as e:
            raise click.ClickException(
                f"cannot listen on {address} ({e}): another process, a second modelplane "
                "serve perhaps, holds it"
            ) from None
        await server.start()
        served = pool.metrics.server.address if pool.metrics.server else ""
        log.info(
            "serving",
            address=address,
            tls=not insecure,
            workers=pool.size,
            metrics=served,
            max_inflight_mib=limits.inflight / MIB,
            max_concurrent_rpcs=limits.calls,
        )
        await stop.wait()
        log.info("stopping", grace_seconds=GRACE_SECONDS)
        stopping = asyncio.create_task(server.stop(GRACE_SECONDS))
        # Calls still composing near the end of the grace period have their workers stopped,
        # so each answers (Fatal: nothing is applied) before gRPC would cancel it.
        await asyncio.wait({stopping}, timeout=GRACE_SECONDS - 1)
        pool.close()
        await stopping
    finally:
        pool.close()


@dataclass(frozen=True)
class Limits:
    inflight: int
    """Bytes of requests held at once (``Handler.max_inflight``)."""
    calls: int
    """Calls taken at once (``DEFAULT_CONCURRENT_RPCS``)."""
    abandoned: float = ABANDONED_SECONDS
    """How long a composition nobody waits for may run on (``ABANDONED_SECONDS``)."""


class Handler:
    """RunFunction on the wire: a cached answer, or a worker's.

    A composition is shared by every call with the same key (Crossplane retries a call it
    gave up on with the same tag), and outlives a caller that gives up: once a worker has it,
    it finishes and its answer is cached for the retry, rather than the worker being killed
    (a respawn costs a second of CPU, and callers with short deadlines on large requests would
    spend every worker on respawns). One nobody waits for that has no worker yet never starts.

    The requests held, composing or waiting for a worker, sum to at most ``max_inflight``
    bytes (one alone is always taken): a request past it is refused RESOURCE_EXHAUSTED on
    arrival, rather than queued to hold its bytes (and, composing, 10 to 17 times them) until
    its caller gives up. A repeat answered from the cache holds nothing and is never refused.
    """

    def __init__(
        self,
        pool: Pool,
        log: Any,
        cache_bytes: int = CACHE_BYTES,
        abandoned_seconds: float = ABANDONED_SECONDS,
        max_inflight: int = DEFAULT_INFLIGHT_MIB * MIB,
    ) -> None:
        self.pool = pool
        self.log = log
        self.metrics = pool.metrics  # one set of figures: the pool counts its workers' too
        self.cache: Lru[tuple[bytes, str, str]] = Lru(cache_bytes)
        self.abandoned_seconds = abandoned_seconds
        self.composing: dict[bytes | str, Composition] = {}
        self.max_inflight = max_inflight
        self.inflight = 0
        """Bytes of the requests held: each composition's, and each call joining one."""

    async def run(self, raw: bytes, context: grpc.aio.ServicerContext | None) -> bytes:
        start = time.perf_counter()
        tag = peek_tag(raw)
        # By content, never by tag: Crossplane sends each iteration of required resources
        # under the first iteration's tag (function.request_key says where). Hashing a large
        # request off the loop keeps it answering others meanwhile (hashlib lets go of the GIL).
        key = content_key(raw) if len(raw) < MIB else await asyncio.to_thread(content_key, raw)
        hit = self.cache.get(key)
        if hit is not None:
            rsp, kind, name = hit
            self._answered(tag, Outcome(kind, name, "cached"), start, len(raw), len(rsp))
            return rsp
        if not self.fits(len(raw)):
            return await self._refuse(tag, len(raw), start, context)
        job = self.composing.get(key)
        joined = 0
        if job is None:
            job = self.composing[key] = Composition(self, key, raw, tag)
        else:
            joined = len(raw)  # its own copy of the bytes, held until it is answered
            self.inflight += joined
        try:
            rsp, outcome = await job.wait()
        except asyncio.CancelledError:
            # The caller gave up or the server is stopping. Returning ends the call quietly
            # (its answer goes nowhere); the composition goes on for the retry.
            why = "cancelled: the caller gave up or the function is stopping"
            outcome = Outcome(result="cancelled", message=why)
            self._answered(tag, outcome, start, len(raw), None)
            return fatal_bytes(tag, why, self.pool.max_response)
        finally:
            self.inflight -= joined
        self._answered(tag, outcome, start, len(raw), len(rsp))
        return rsp

    def fits(self, size: int) -> bool:
        """Whether a request of ``size`` bytes may be held now."""
        return self.inflight == 0 or self.inflight + size <= self.max_inflight

    async def _refuse(
        self, tag: str, size: int, start: float, context: grpc.aio.ServicerContext | None
    ) -> bytes:
        why = (
            f"the function holds {self.inflight / MIB:.1f} MiB of requests, composing or "
            f"waiting for a worker; this one's {size / MIB:.1f} MiB would take it past the "
            f"{self.max_inflight / MIB:g} MiB it may hold (--max-inflight-size): retry later"
        )
        self._answered(tag, Outcome(result="refused", message=why), start, size, None)
        if context is not None:
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, why)
        # In process (tests, benches) there is no status to set: a Fatal says the same.
        return fatal_bytes(tag, why, self.pool.max_response)

    def _answered(
        self, tag: str, outcome: Outcome, start: float, received: int, sent: int | None
    ) -> None:
        seconds = time.perf_counter() - start
        log_request(self.log, tag, outcome, seconds)
        self.metrics.answered(outcome.kind, outcome.result, received, sent, seconds)


class Composition:
    """One request composing, and the callers waiting for it."""

    def __init__(self, handler: Handler, key: bytes | str, raw: bytes, tag: str) -> None:
        self.handler = handler
        self.key = key
        self.size = len(raw)
        handler.inflight += self.size  # until it is done: its bytes are held until then
        self.waiters = 0
        self.worker: Worker | None = None
        self._abandoned: asyncio.TimerHandle | None = None
        self.task = asyncio.get_running_loop().create_task(self._compose(raw, tag))
        self.task.add_done_callback(self._done)

    async def wait(self) -> tuple[bytes, Outcome]:
        self.waiters += 1
        if self._abandoned is not None:
            self._abandoned.cancel()
            self._abandoned = None
        try:
            return await asyncio.shield(self.task)
        except asyncio.CancelledError:
            if not self.task.done():
                self._left()
            raise
        finally:
            self.waiters -= 1

    def _left(self) -> None:
        if self.waiters > 1:
            return  # others still wait for it
        if self.worker is None:
            self.task.cancel()  # it never started: nothing is lost by not starting it
            return
        loop = asyncio.get_running_loop()
        self._abandoned = loop.call_later(self.handler.abandoned_seconds, self._stop)

    def _stop(self) -> None:
        if self.worker is not None and not self.task.done():
            self.worker.stop()  # its call reads end-of-file: Fatal, the worker replaced

    async def _compose(self, raw: bytes, tag: str) -> tuple[bytes, Outcome]:
        pool = self.handler.pool
        self.worker = await pool.acquire()
        rsp, outcome = await pool.call(self.worker, raw, tag)
        if outcome.result != "fatal":
            self.handler.cache.put(self.key, (rsp, outcome.kind, outcome.name), len(rsp))
        return rsp, outcome

    def _done(self, _: asyncio.Task[tuple[bytes, Outcome]]) -> None:
        self.handler.inflight -= self.size
        if self._abandoned is not None:
            self._abandoned.cancel()
        if self.handler.composing.get(self.key) is self:
            del self.handler.composing[self.key]


class WorkerError(RuntimeError):
    pass


# On the socket to a worker: a request is its length (8 bytes) then its bytes; an answer is the
# response's length (8), the pickled Outcome's (4), the Outcome, then the response.
_READY = b"ready"
_CHUNK = 128 * 1024
"""What of a request is written to a worker at a time: less than a socket pair's buffer."""


class Worker:
    """One composing process and the socket to it, read and written by the event loop."""

    def __init__(
        self,
        registry: str,
        max_response: int,
        debug: bool,
        method: str,
        siblings: tuple[int, ...] = (),
    ) -> None:
        """``siblings``: the server's ends of the other workers' sockets, which a forked
        worker inherits."""
        ctx: Any = multiprocessing.get_context(method)
        self.sock, theirs = socket.socketpair()
        # A forked worker inherits every descriptor of the server, this socket's server end and
        # its siblings' among them: held open there, none would ever read end-of-file, and a
        # worker whose server was killed would wait for requests forever.
        inherited = (*siblings, self.sock.fileno()) if method == "fork" else ()
        self.process = ctx.Process(
            target=work,
            args=(theirs, registry, max_response, debug, inherited),
            name="modelplane-worker",
            daemon=True,
        )
        self.process.start()
        theirs.close()
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self.stopped = False
        """Whether the server stopped it (rather than it exiting by itself)."""

    async def ready(self) -> None:
        """Wait until the worker has loaded its composers and definitions."""
        self._reader, self._writer = await asyncio.open_connection(sock=self.sock)
        # drain() waits for an empty buffer, so each chunk of a request goes to the socket
        # as it is, never copied into the transport's buffer first.
        self._writer.transport.set_write_buffer_limits(0)
        try:
            said = await asyncio.wait_for(self._reader.readexactly(len(_READY)), _STARTUP_SECONDS)
        except (TimeoutError, asyncio.IncompleteReadError, OSError):
            said = b""
        if said != _READY:
            raise WorkerError(f"a worker did not start (exit code {self.process.exitcode})")

    async def call(self, raw: bytes) -> tuple[bytes, Outcome]:
        assert self._reader is not None and self._writer is not None
        # One write, one wake-up of the worker; a large request (a fleet's runs to tens of MiB)
        # in chunks the socket takes whole, rather than joined and copied into a buffer.
        view = memoryview(raw)
        self._writer.writelines((len(raw).to_bytes(8, "big"), view[:_CHUNK]))
        for start in range(_CHUNK, len(raw), _CHUNK):
            await self._writer.drain()
            self._writer.write(view[start : start + _CHUNK])
        await self._writer.drain()
        head = await self._reader.readexactly(12)
        size, meta = int.from_bytes(head[:8], "big"), int.from_bytes(head[8:], "big")
        outcome: Outcome = pickle.loads(await self._reader.readexactly(meta))
        return await self._reader.readexactly(size), outcome

    def stop(self) -> None:
        self.stopped = True
        if self.process.is_alive():
            self.process.kill()
        self.process.join(5)
        if self._writer is not None:
            self._writer.close()
        else:
            self.sock.close()


class Pool:
    """Worker processes, each composing one request at a time; callers wait for an idle one."""

    def __init__(
        self,
        size: int,
        registry: str,
        max_response: int,
        debug: bool,
        metrics: Metrics | None = None,
    ) -> None:
        self.size = size
        self.max_response = max_response
        self.metrics = metrics or Metrics()
        self._new = lambda method: Worker(
            registry, max_response, debug, method, tuple(w.sock.fileno() for w in self._workers)
        )
        self._workers: set[Worker] = set()
        self._idle: asyncio.Queue[Worker] = asyncio.Queue()
        self._closed = False
        self._replacing: set[asyncio.Task[None]] = set()
        self._started: list[Worker] = []

    def fork(self) -> None:
        """Start the first workers as copies of this process, which has everything loaded:
        only before any thread runs here (gRPC's), where forking is safe."""
        method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
        for _ in range(self.size):
            worker = self._new(method)
            self._started.append(worker)
            self._workers.add(worker)

    async def start(self) -> None:
        started, self._started = self._started or [self._new("spawn") for _ in range(self.size)], []
        self._workers.update(started)
        await asyncio.gather(*(w.ready() for w in started))
        for w in started:
            self._idle.put_nowait(w)

    def busy(self) -> int:
        """Workers not idle: composing, starting or being replaced."""
        return self.size - self._idle.qsize()

    async def acquire(self) -> Worker:
        """An idle worker, once there is one."""
        return await self._idle.get()

    async def call(self, worker: Worker, raw: bytes, tag: str) -> tuple[bytes, Outcome]:
        """``worker``'s answer to ``raw``; the worker is idle again afterwards (or replaced)."""
        try:
            answer = await worker.call(raw)
        except asyncio.CancelledError:
            # Only the event loop shutting down cancels a composition under way: stop it too.
            self._replace(worker)
            raise
        except (asyncio.IncompleteReadError, OSError):
            if self._closed:
                why = "the function stopped (SIGTERM) before this composition finished"
            else:
                code = worker.process.exitcode
                why = f"the worker composing this request exited (exit code {code}); replaced"
            self._replace(worker)
            return fatal_bytes(tag, why, self.max_response), Outcome(result="fatal", message=why)
        self._idle.put_nowait(worker)
        return answer

    def _replace(self, worker: Worker) -> None:
        # Stopped by the server here only when its composition was abandoned.
        reason = "abandoned" if worker.stopped else "exited"
        worker.stop()
        self._workers.discard(worker)
        if not self._closed:
            self.metrics.restarted(reason)
            task = asyncio.get_running_loop().create_task(self._start_one())
            self._replacing.add(task)
            task.add_done_callback(self._replacing.discard)

    async def _start_one(self) -> None:
        while not self._closed:
            # Threads run here now: a replacement starts a fresh interpreter.
            worker = self._new("spawn")
            self._workers.add(worker)
            try:
                await worker.ready()
            except WorkerError:
                worker.stop()
                self._workers.discard(worker)
                await asyncio.sleep(1)
                continue
            if self._closed:
                worker.stop()
            else:
                self._idle.put_nowait(worker)
            return

    def close(self) -> None:
        """Stop every worker, busy or not: calls in flight answer Fatal."""
        if self._closed:
            return
        self._closed = True
        for task in self._replacing:
            task.cancel()
        for worker in list(self._workers):
            worker.stop()
        self._workers.clear()


def work(
    sock: socket.socket,
    registry: str,
    max_response: int,
    debug: bool,
    inherited: tuple[int, ...] = (),
) -> None:
    """A worker's life: load the composers and definitions, then answer requests until the
    socket closes (the server stopped it, or died). ``inherited``: the server's descriptors a
    forked worker must not hold."""
    for fd in inherited:
        with contextlib.suppress(OSError):
            os.close(fd)
    # Ctrl-C reaches the whole process group; the server stops its workers itself.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    configure_logging(debug)
    runner = FunctionRunner(
        load_registry(registry)(), cache_size=0, admission=_compiled_admission()
    )
    sock.sendall(_READY)
    while True:
        head = _receive(sock, 8)
        raw = _receive(sock, int.from_bytes(head, "big")) if head is not None else None
        if raw is None:
            return
        rsp, outcome = runner.handle_bytes(raw, max_response)
        meta = pickle.dumps(outcome)
        head = len(rsp).to_bytes(8, "big") + len(meta).to_bytes(4, "big")
        sock.sendall(b"".join((head, meta, rsp)))  # one write, one wake-up of the server


def _receive(sock: socket.socket, size: int) -> bytes | None:
    """Exactly ``size`` bytes, or None when the socket closed first."""
    buf = bytearray(size)
    view = memoryview(buf)
    got = 0
    while got < size:
        n = sock.recv_into(view[got:])
        if n == 0:
            return None
        got += n
    return bytes(buf)


def _compiled_admission() -> Admission:
    """The shipped definitions' admission, every served schema compiled."""
    admission = Admission.default()
    for definition in admission.definitions():
        definition.compile()
    return admission


def load_registry(path: str) -> Callable[[], Registry]:
    """``module:function`` to the function that builds the registry."""
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


def available_cpus() -> int:
    """The CPUs this process may use: its affinity, capped by a cgroup CPU quota (a
    container's CPU limit, which the affinity does not show)."""
    count = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    quota = _cgroup_quota()
    return max(1, min(count or 1, math.ceil(quota) if quota else count or 1))


def _cgroup_quota() -> float | None:
    """CPUs' worth of time per period the cgroup allows (v2, else v1); None when unlimited."""
    with contextlib.suppress(OSError, ValueError):
        quota, period = Path("/sys/fs/cgroup/cpu.max").read_text().split()
        return None if quota == "max" else int(quota) / int(period)
    with contextlib.suppress(OSError, ValueError):
        v1 = Path("/sys/fs/cgroup/cpu")
        quota_us = int((v1 / "cpu.cfs_quota_us").read_text())
        return None if quota_us < 0 else quota_us / int((v1 / "cpu.cfs_period_us").read_text())
    return None


def configure_logging(debug: bool) -> None:
    """JSON lines, at every level, unless standard output is a terminal (then text for a
    person). The SDK's production format (``ts``, ``level``, ``msg``) without its call-site
    fields, which inspect the stack on every line; loggers are resolved once."""
    tty = sys.stdout.isatty()
    renderer: Any = structlog.dev.ConsoleRenderer() if tty else structlog.processors.JSONRenderer()
    structlog.configure(
        processors=[
            structlog.stdlib.add_log_level,
            structlog.processors.dict_tracebacks,
            structlog.processors.TimeStamper(key="ts"),
            structlog.processors.EventRenamer(to="msg"),
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(10 if debug else 20),
        logger_factory=structlog.PrintLoggerFactory(sys.stdout),
        cache_logger_on_first_use=True,
    )


def _checked_certs_dir(certs_dir: str | None) -> str:
    # Crossplane mounts mTLS certificates; without them, refuse rather than serve in the clear.
    if not certs_dir:
        raise click.UsageError(
            "no TLS certificates: set --tls-server-certs-dir (or TLS_SERVER_CERTS_DIR) "
            "to a directory holding tls.crt, tls.key and ca.crt, or pass --insecure"
        )
    missing = [f for f in _TLS_FILES if not os.path.isfile(os.path.join(certs_dir, f))]
    if missing:
        raise click.UsageError(f"--tls-server-certs-dir {certs_dir}: missing {', '.join(missing)}")
    _check_pem(certs_dir)
    return certs_dir


class CertificateError(click.ClickException):
    """A certificate file gRPC could not use: one line naming the file, exit 2 (unreadable)."""

    exit_code = 2

    def show(self, file: Any = None) -> None:
        click.echo(f"modelplane serve: {self.message}", err=True)


def _check_pem(certs_dir: str) -> None:
    # gRPC refuses bad PEM only when binding, with a log line that names no file and a
    # traceback: load each file first with the ssl module, which says which one is at fault.
    crt, key, ca = (os.path.join(certs_dir, f) for f in _TLS_FILES)
    for path, what in ((ca, "CA certificate"), (crt, "certificate")):
        try:
            ssl.create_default_context().load_verify_locations(cafile=path)
        except ssl.SSLError as e:
            raise CertificateError(f"{path}: not a PEM {what} ({_why(e)})") from None
        except OSError as e:
            raise CertificateError(f"{path}: cannot read: {e.strerror or e}") from None
    try:
        ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER).load_cert_chain(crt, key)
    except ssl.SSLError as e:
        raise CertificateError(
            f"{key}: not a PEM private key matching {os.path.basename(crt)} ({_why(e)})"
        ) from None
    except OSError as e:
        raise CertificateError(f"{key}: cannot read: {e.strerror or e}") from None


def _why(e: ssl.SSLError) -> str:
    return str(e.reason).replace("_", " ").lower() if e.reason else "unreadable PEM"
