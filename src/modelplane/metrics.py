"""`modelplane serve`'s Prometheus metrics: what each call cost, counted where it is known.

Every figure is counted in the serving process, which sees every call: the request's bytes
arrive there, the answer (a worker's, or the response cache's) leaves from there with the
worker's outcome (the composite's kind and the result), and the server itself replaces a
worker and notices a caller giving up. The workers count nothing. So one process-local
registry holds everything, and prometheus_client's multiprocess mode (a file per process under
``PROMETHEUS_MULTIPROC_DIR``, summed at each scrape) is not needed: it would add files per
worker, replaced workers' files to mark dead, and still miss cache answers and cancellations,
which never reach a worker.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterable
from typing import Any, Protocol
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    GCCollector,
    Histogram,
    PlatformCollector,
    ProcessCollector,
    make_wsgi_app,
)
from prometheus_client.exposition import ThreadingWSGIServer

DEFAULT_ADDRESS = "0.0.0.0:8080"
"""Port 8080: Crossplane declares a container port named ``metrics``, 8080, on every package's
pod (``MetricsPortNumber``, internal/controller/pkg/runtime/runtime.go), and serves its own
metrics there (its Helm chart's ``metrics.port``)."""

OTHER_KIND = "other"
"""The ``kind`` label of a composite of a kind no Modelplane definition serves (a Composition
calling this function for another kind): such kinds are not ours to enumerate."""

MAX_SCRAPES = 4
"""Connections the metrics listener serves at once, each on a thread of its own; one more is
closed as soon as it is accepted. Prometheus scrapes a target one request at a time, so a few
cover every scraper a cluster runs, and a thousand idle connections cost no thread (a thread per
connection, prometheus_client's own server, made 1,009 threads of them)."""
READ_TIMEOUT_SECONDS = 10.0
"""How long a connection may wait to send each part of its request: a scraper sends its request
at once (Prometheus' default scrape_timeout is 10 s), an idle connection is closed."""

RESULTS = ("composed", "cached", "fatal", "cancelled", "refused")
"""``refused``: RESOURCE_EXHAUSTED, the requests held were at their limit (serve.Handler)."""
RESTART_REASONS = ("exited", "abandoned")

_SECONDS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 120)
"""From a cached answer (well under a millisecond) to Crossplane's 2-minute reconcile timeout."""
_BYTES = tuple(float(1024 * 4**i) for i in range(10))
"""1 KiB to 256 MiB, four times apart: past the 64 MiB accepted by default and Crossplane's
4 MiB response limit."""


class _Workers(Protocol):
    size: int

    def busy(self) -> int: ...


class Metrics:
    """The function's figures, in a registry of their own (so each server, or test, has its
    own), with the serving process's CPU, memory and garbage collection alongside."""

    def __init__(self, kinds: Iterable[str] | None = None) -> None:
        """``kinds``: the composite kinds served, each its own ``kind`` label; any other is
        counted as ``other``. None labels every kind as it is."""
        self.kinds = frozenset(kinds) if kinds is not None else None
        self.registry = CollectorRegistry()
        for collector in (ProcessCollector, PlatformCollector, GCCollector):
            collector(registry=self.registry)
        by_result = ("kind", "result")
        self.requests = Counter(
            "modelplane_function_requests",
            "RunFunction calls answered, by composite kind and result "
            "(composed, cached, fatal, cancelled, refused).",
            by_result,
            registry=self.registry,
        )
        self.duration = Histogram(
            "modelplane_function_request_duration_seconds",
            "Time from a RunFunction call's arrival to its answer, waiting for a worker "
            "included, by composite kind and result.",
            by_result,
            buckets=_SECONDS,
            registry=self.registry,
        )
        self.request_size = Histogram(
            "modelplane_function_request_size_bytes",
            "Size of each RunFunction request as received, by composite kind.",
            ("kind",),
            buckets=_BYTES,
            registry=self.registry,
        )
        self.response_size = Histogram(
            "modelplane_function_response_size_bytes",
            "Size of each RunFunction response sent, by composite kind.",
            ("kind",),
            buckets=_BYTES,
            registry=self.registry,
        )
        self.restarts = Counter(
            "modelplane_function_worker_restarts",
            "Composing processes replaced, by reason: exited (it died: killed for memory, or "
            "crashed) or abandoned (stopped: its composition ran on past the abandon budget "
            "with no caller waiting).",
            ("reason",),
            registry=self.registry,
        )
        # Every series an alert may watch exists from the start, at 0, rather than appearing
        # with the first such call.
        for kind in sorted(self.kinds or ()):
            for result in RESULTS:
                self.requests.labels(kind, result)
        for reason in RESTART_REASONS:
            self.restarts.labels(reason)
        self.server: MetricsServer | None = None

    def answered(
        self, kind: str, result: str, request_bytes: int, response_bytes: int | None, seconds: float
    ) -> None:
        """One call answered with ``result`` (one of RESULTS) for a composite of ``kind``;
        ``response_bytes`` None when nothing was sent (it was cancelled)."""
        kind = self._kind(kind)
        self.requests.labels(kind, result).inc()
        self.duration.labels(kind, result).observe(seconds)
        self.request_size.labels(kind).observe(request_bytes)
        if response_bytes is not None:
            self.response_size.labels(kind).observe(response_bytes)

    def restarted(self, reason: str) -> None:
        self.restarts.labels(reason).inc()

    def watch(self, workers: _Workers) -> None:
        """Gauges read from the pool at each scrape."""
        Gauge(
            "modelplane_function_workers",
            "Composing processes the server runs (--workers).",
            registry=self.registry,
        ).set_function(lambda: workers.size)
        Gauge(
            "modelplane_function_workers_busy",
            "Composing processes not idle (composing, or being replaced): calls wait for a "
            "worker while it equals modelplane_function_workers.",
            registry=self.registry,
        ).set_function(workers.busy)

    def listen(self, address: str, read_timeout: float = READ_TIMEOUT_SECONDS) -> MetricsServer:
        """Serve the metrics over HTTP at ``/metrics`` (any path answers) on ``address``
        (``host:port``), from a thread of this process, at most ``MAX_SCRAPES`` connections at
        once, each closed once idle for ``read_timeout`` seconds. Raises OSError if it cannot
        bind."""
        host, port = split_address(address)
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        server = type("Server", (BoundedServer,), {"address_family": family[0][0]})
        handler = type("Handler", (_QuietHandler,), {"timeout": read_timeout})
        httpd: WSGIServer = make_server(host, port, make_wsgi_app(self.registry), server, handler)
        thread = threading.Thread(target=httpd.serve_forever, name="metrics", daemon=True)
        thread.start()
        self.server = MetricsServer(httpd, thread)
        return self.server

    def close(self) -> None:
        if self.server is not None:
            self.server.close()
            self.server = None

    def _kind(self, kind: str) -> str:
        # Empty when the server never learned it: a call cancelled before its answer, or a
        # worker that exited composing it.
        if not kind or self.kinds is None or kind in self.kinds:
            return kind
        return OTHER_KIND


class BoundedServer(ThreadingWSGIServer):
    """prometheus_client's server (a thread per connection), serving at most ``slots``
    connections at once: the next is closed when accepted, costing no thread. A scraper whose
    connection is closed retries on its next interval; the function's calls never wait on it."""

    slots = MAX_SCRAPES
    # Connections the kernel queues until accepted (socketserver's 5 left a burst's clients
    # retrying their SYN for seconds): accepting, or closing, each costs next to nothing.
    request_queue_size = 128

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._free = threading.BoundedSemaphore(self.slots)

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._free.acquire(blocking=False):
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._free.release()  # no thread started: nothing else gives the slot back
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._free.release()

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A connection that timed out or went away: nothing to report (socketserver would print
        # a traceback to stderr for each one).
        return


class _QuietHandler(WSGIRequestHandler):
    """Logs nothing per request (prometheus_client's handler neither)."""

    def log_message(self, format: str, *args: Any) -> None:
        return


class MetricsServer:
    """The HTTP server answering scrapes, and the thread it runs on."""

    def __init__(self, httpd: WSGIServer, thread: threading.Thread) -> None:
        self.httpd = httpd
        self.thread = thread

    @property
    def address(self) -> str:
        host, port = self.httpd.server_address[:2]
        name = host.decode() if isinstance(host, bytes) else host
        return join_address(str(name), port)

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(5)


def split_address(address: str) -> tuple[str, int]:
    """``host:port`` (``[v6]:port``; an empty host is every interface) to its parts. Raises
    ValueError for anything else."""
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"{address!r} is not HOST:PORT")
    return host.removeprefix("[").removesuffix("]") or "0.0.0.0", int(port)


def metrics_address(address: str, port: int | None) -> str | None:
    """Where to serve the metrics: ``address`` with ``port`` (if given) in place of its own;
    None when the port is 0 (no metrics). Raises ValueError for an address not HOST:PORT."""
    host, own = split_address(address)
    chosen = own if port is None else port
    if chosen == 0:
        return None
    return join_address(host, chosen)


def join_address(host: str, port: int) -> str:
    """``host:port``, an IPv6 host bracketed: what ``split_address`` reads back."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
