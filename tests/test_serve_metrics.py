"""`modelplane serve`'s Prometheus metrics, read back over HTTP from a running server after real
RunFunction calls over loopback gRPC."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import threading
import time
import urllib.request
from collections.abc import Iterator

import grpc
import pytest
import structlog
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1
from prometheus_client.parser import text_string_to_metric_families

from modelplane.metrics import Metrics
from tests.listening import free_port
from tests.test_serve import (
    fleet_request,
    held_request,
    listening,
    log_lines,
    request,
    seed_request,
    serving_held,
    started,
    stop,  # noqa: F401  (the fixture)
)

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def scrape(port: int) -> Samples:
    """Every sample the metrics endpoint serves, keyed by name and labels."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as rsp:
        text = rsp.read().decode()
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def labelled(**labels: str) -> frozenset[tuple[str, str]]:
    return frozenset(labels.items())


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples[(name, labelled(**labels))]


def serving_held_with_metrics(
    procs: list[subprocess.Popen[str]], workers: int
) -> tuple[subprocess.Popen[str], int, int]:
    """`serve` with the holding registry (tests/holding.py), its gRPC and metrics ports."""
    metrics = free_port()
    proc, port = serving_held(procs, workers, metrics)
    return proc, port, metrics


class Served:
    """What the calls sent and got back, and the metrics scraped after them."""

    def __init__(self) -> None:
        self.seed = seed_request().SerializeToString()
        self.fleet = fleet_request(clusters=2, per_cluster=1).SerializeToString()
        self.bucket = request().SerializeToString()
        self.answers: dict[str, bytes] = {}
        self.samples: Samples = {}
        self.metrics_port = 0


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """One server, two workers: a ModelReplica composed then answered from the cache, a
    ModelDeployment composed, a kind no definition serves (Fatal), and a held ModelReplica
    whose caller gives up (cancelled); then a scrape."""
    procs: list[subprocess.Popen[str]] = []
    out = Served()
    hold = tmp_path_factory.mktemp("held") / "release"
    try:
        _, port, metrics = serving_held_with_metrics(procs, workers=2)
        out.metrics_port = metrics
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            run = channel.unary_unary(
                "/apiextensions.fn.proto.v1.FunctionRunnerService/RunFunction",
                request_serializer=None,
                response_deserializer=None,
            )
            out.answers["seed"] = run(out.seed, timeout=60)
            out.answers["seed again"] = run(out.seed, timeout=60)
            out.answers["fleet"] = run(out.fleet, timeout=60)
            out.answers["bucket"] = run(out.bucket, timeout=60)
            with pytest.raises(grpc.RpcError) as gave_up:
                grpcv1.FunctionRunnerServiceStub(channel).RunFunction(
                    held_request(hold, "held"), timeout=1
                )
            assert gave_up.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
            started(hold)
            hold.write_text("go")
        # The server hears of the cancellation a moment after the caller gives up.
        cancelled = ("modelplane_function_requests_total", labelled(kind="", result="cancelled"))
        deadline = time.monotonic() + 30
        while cancelled not in (samples := scrape(metrics)):
            assert time.monotonic() < deadline, "the cancelled call was never counted"
            time.sleep(0.1)
        out.samples = samples
        yield out
    finally:
        for p in procs:
            p.kill()
            p.wait(timeout=10)


def test_each_call_is_counted_by_composite_kind_and_result(served: Served) -> None:
    s = served.samples
    requests = "modelplane_function_requests_total"
    assert value(s, requests, kind="ModelReplica", result="composed") == 1
    assert value(s, requests, kind="ModelReplica", result="cached") == 1
    assert value(s, requests, kind="ModelDeployment", result="composed") == 1
    # A kind no Modelplane definition serves is counted as other, not under its own name.
    assert value(s, requests, kind="other", result="fatal") == 1
    assert not [k for k in s if ("kind", "Bucket") in k[1]]


def test_a_fatal_result_is_counted_as_fatal(served: Served) -> None:
    rsp = fnv1.RunFunctionResponse.FromString(served.answers["bucket"])
    assert [r.severity for r in rsp.results] == [fnv1.SEVERITY_FATAL]
    total = sum(
        v
        for (name, labels), v in served.samples.items()
        if name == "modelplane_function_requests_total" and ("result", "fatal") in labels
    )
    assert total == 1


def test_an_answer_from_the_response_cache_is_counted_as_cached(served: Served) -> None:
    assert served.answers["seed again"] == served.answers["seed"]
    cached = value(
        served.samples, "modelplane_function_requests_total", kind="ModelReplica", result="cached"
    )
    assert cached == 1


def test_a_call_whose_caller_gave_up_is_counted_as_cancelled(served: Served) -> None:
    # The server never learned its kind: the caller left before the worker answered.
    s = served.samples
    assert value(s, "modelplane_function_requests_total", kind="", result="cancelled") == 1
    assert (
        value(s, "modelplane_function_request_duration_seconds_count", kind="", result="cancelled")
        == 1
    )


def test_durations_are_a_histogram_per_kind_and_result(served: Served) -> None:
    s = served.samples
    name = "modelplane_function_request_duration_seconds"
    composed = {"kind": "ModelReplica", "result": "composed"}
    assert value(s, f"{name}_count", **composed) == 1
    assert value(s, f"{name}_sum", **composed) > 0
    buckets = sorted(
        (float(dict(labels)["le"]), v)
        for (n, labels), v in s.items()
        if n == f"{name}_bucket" and {*composed.items()} <= labels
    )
    assert buckets[-1] == (float("inf"), 1)
    counts = [v for _, v in buckets]
    assert counts == sorted(counts)  # cumulative
    assert value(s, f"{name}_count", kind="ModelDeployment", result="composed") == 1


def test_request_and_response_bytes_are_the_sizes_on_the_wire(served: Served) -> None:
    s = served.samples
    replica = {"kind": "ModelReplica"}
    assert value(s, "modelplane_function_request_size_bytes_count", **replica) == 2
    assert value(s, "modelplane_function_request_size_bytes_sum", **replica) == 2 * len(served.seed)
    assert value(s, "modelplane_function_response_size_bytes_sum", **replica) == 2 * len(
        served.answers["seed"]
    )
    deployment = {"kind": "ModelDeployment"}
    assert value(s, "modelplane_function_request_size_bytes_sum", **deployment) == len(served.fleet)
    assert value(s, "modelplane_function_response_size_bytes_sum", **deployment) == len(
        served.answers["fleet"]
    )


def test_a_cancelled_call_has_its_request_counted_and_no_response(served: Served) -> None:
    s = served.samples
    assert value(s, "modelplane_function_request_size_bytes_count", kind="") == 1
    assert ("modelplane_function_response_size_bytes_count", labelled(kind="")) not in s


def test_the_workers_and_how_many_are_busy_are_gauges(served: Served) -> None:
    assert value(served.samples, "modelplane_function_workers") == 2
    # The held composition was released: its worker is idle again once it has answered.
    deadline = time.monotonic() + 30
    while value(scrape(served.metrics_port), "modelplane_function_workers_busy") != 0:
        assert time.monotonic() < deadline, "a worker stayed busy"
        time.sleep(0.1)


def test_every_kind_served_and_restart_reason_is_a_series_from_the_start(served: Served) -> None:
    s = served.samples
    for kind in ("InferenceCluster", "InferenceGateway", "ModelService", "ModelCache"):
        for result in ("composed", "cached", "fatal", "cancelled"):
            assert value(s, "modelplane_function_requests_total", kind=kind, result=result) == 0
    assert value(s, "modelplane_function_worker_restarts_total", reason="abandoned") == 0


def test_the_serving_processs_own_cpu_and_memory_are_exported(served: Served) -> None:
    assert value(served.samples, "process_resident_memory_bytes") > 0


def test_a_worker_that_dies_composing_is_counted_as_a_restart(stop, tmp_path) -> None:  # noqa: F811
    _, port, metrics = serving_held_with_metrics(stop, workers=1)
    hold = tmp_path / "never"
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = grpcv1.FunctionRunnerServiceStub(channel)
        call = stub.RunFunction.future(held_request(hold, "held"), timeout=120)
        worker = started(hold)
        assert value(scrape(metrics), "modelplane_function_workers_busy") == 1
        os.kill(worker, signal.SIGKILL)  # as the kernel's OOM killer would
        [result] = call.result().results
        assert result.severity == fnv1.SEVERITY_FATAL
        # The replacement answers the next call.
        assert stub.RunFunction(seed_request(), timeout=120).meta.tag == "seed"
    s = scrape(metrics)
    assert value(s, "modelplane_function_worker_restarts_total", reason="exited") == 1
    assert value(s, "modelplane_function_worker_restarts_total", reason="abandoned") == 0
    assert value(s, "modelplane_function_requests_total", kind="", result="fatal") == 1


def test_a_worker_stopped_for_an_abandoned_composition_is_counted_so(tmp_path) -> None:
    from modelplane.function import MIB
    from modelplane.serve import Handler, Pool

    hold = tmp_path / "never"
    metrics = Metrics()

    async def abandon() -> None:
        pool = Pool(1, "tests.holding:registry", 4 * MIB, debug=False, metrics=metrics)
        try:
            await pool.start()
            handler = Handler(pool, structlog.get_logger(), abandoned_seconds=0.2)
            held = held_request(hold, "held").SerializeToString()
            # The caller gives up (its call is answered into the void, as over gRPC).
            gave_up = await asyncio.wait_for(handler.run(held, None), timeout=1)
            [result] = fnv1.RunFunctionResponse.FromString(gave_up).results
            assert result.message.startswith("cancelled")
            # Nobody waits for it now: past abandoned_seconds its worker is stopped, replaced,
            # and the replacement answers.
            rsp = await asyncio.wait_for(handler.run(seed_request().SerializeToString(), None), 60)
            assert fnv1.RunFunctionResponse.FromString(rsp).meta.tag == "seed"
        finally:
            pool.close()

    asyncio.run(abandon())
    restarts = "modelplane_function_worker_restarts_total"
    assert metrics.registry.get_sample_value(restarts, {"reason": "abandoned"}) == 1
    assert metrics.registry.get_sample_value(restarts, {"reason": "exited"}) == 0


def test_the_serving_log_line_names_where_metrics_are_served(stop) -> None:  # noqa: F811
    metrics = free_port()
    proc, _ = listening(stop, "--insecure", "--metrics-address", f"127.0.0.1:{metrics}")
    assert scrape(metrics)[("modelplane_function_workers", frozenset())] >= 1
    [serving] = [x for x in log_lines(proc) if x.get("msg") == "serving"]
    assert serving["metrics"] == f"127.0.0.1:{metrics}"


def test_metrics_port_replaces_the_port_of_the_metrics_address(stop) -> None:  # noqa: F811
    metrics = free_port()
    proc, _ = listening(
        stop, "--insecure", "--metrics-address", "127.0.0.1:1", "--metrics-port", str(metrics)
    )
    assert ("modelplane_function_workers", frozenset()) in scrape(metrics)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=15) == 0


def test_metrics_port_zero_serves_no_metrics(stop) -> None:  # noqa: F811
    metrics = free_port()
    proc, _ = listening(
        stop, "--insecure", "--metrics-address", f"127.0.0.1:{metrics}", "--metrics-port", "0"
    )
    with socket.socket() as s:
        assert s.connect_ex(("127.0.0.1", metrics)) != 0
    [serving] = [x for x in log_lines(proc) if x.get("msg") == "serving"]
    assert serving["metrics"] == ""


def test_a_metrics_port_in_use_is_refused_naming_it(stop) -> None:  # noqa: F811
    from tests.test_serve import start

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        address = f"127.0.0.1:{taken.getsockname()[1]}"
        proc = start(
            "--insecure", "--address", f"127.0.0.1:{free_port()}", "--metrics-address", address
        )
        stop.append(proc)
        out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 1
    assert f"--metrics-address {address}: cannot listen: Address already in use" in out
    assert "Traceback" not in out


def test_a_metrics_address_that_is_not_host_and_port_is_a_usage_error(stop) -> None:  # noqa: F811
    from tests.test_serve import start

    proc = start("--insecure", "--metrics-address", "localhost")
    stop.append(proc)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 2
    assert "--metrics-address: 'localhost' is not HOST:PORT" in out


def closed_by_peer(conn: socket.socket) -> bool:
    """Whether the server closed ``conn`` (end of file or reset), without waiting."""
    conn.setblocking(False)
    try:
        return conn.recv(1) == b""
    except BlockingIOError:
        return False
    except ConnectionError:
        return True


def test_idle_connections_to_the_metrics_port_cost_no_thread_each() -> None:
    # prometheus_client's server gave each connection a thread that waited for a request with
    # no timeout: 1,000 idle connections held 1,009 threads. Past the few it serves at once,
    # a connection is closed as soon as it is accepted.
    from modelplane.metrics import MAX_SCRAPES

    metrics = Metrics()
    server = metrics.listen("127.0.0.1:0")
    host, port = server.address.rsplit(":", 1)
    before = threading.active_count()
    conns = [socket.create_connection((host, int(port)), timeout=10) for _ in range(200)]
    try:
        deadline = time.monotonic() + 60
        while sum(closed_by_peer(c) for c in conns) < len(conns) - MAX_SCRAPES:
            assert time.monotonic() < deadline, "idle connections were held, not closed"
            time.sleep(0.05)
        assert threading.active_count() - before <= MAX_SCRAPES
    finally:
        for c in conns:
            c.close()
        metrics.close()


def test_an_idle_metrics_connection_is_closed_and_scrapes_are_served_again() -> None:
    metrics = Metrics()
    server = metrics.listen("127.0.0.1:0", read_timeout=0.5)
    host, port = server.address.rsplit(":", 1)
    idle = [socket.create_connection((host, int(port)), timeout=10) for _ in range(20)]
    try:
        # Every slot held by an idle connection is given back once it times out, so a scrape
        # is answered again (a scraper retries on its next interval).
        deadline = time.monotonic() + 60
        while True:
            try:
                assert ("modelplane_function_requests_total", frozenset()) not in scrape(int(port))
                break
            except OSError:
                assert time.monotonic() < deadline, "no scrape was answered"
                time.sleep(0.2)
        for conn in idle:
            assert conn.recv(1) == b""  # closed by the server (the client timeout is 10 s)
    finally:
        for c in idle:
            c.close()
        metrics.close()
