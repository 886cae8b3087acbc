"""`modelplane serve` as Crossplane runs it: a real process on a real loopback gRPC port."""

from __future__ import annotations

import contextlib
import datetime
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from modelplane.serve import GRACE_SECONDS
from modelplane.structs import dict_to_struct
from tests.holding import HOLD
from tests.listening import free_port, on_a_free_port

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
COMPOSITE = {
    "apiVersion": "example.org/v1",
    "kind": "Bucket",
    "metadata": {"name": "b"},
}


def start(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "modelplane", "serve", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        # No metrics unless asked (port 0): servers run side by side here, and 8080 is one port.
        env={**os.environ, "METRICS_ADDRESS": "127.0.0.1:0", **(env or {})},
    )


@pytest.fixture
def stop() -> Iterator[list[subprocess.Popen[str]]]:
    procs: list[subprocess.Popen[str]] = []
    yield procs
    for p in procs:
        if p.poll() is None:
            p.kill()
        p.wait(timeout=10)


def listening(
    stop: list[subprocess.Popen[str]], *args: str, env: dict[str, str] | None = None
) -> tuple[subprocess.Popen[str], int]:
    """`modelplane serve *args` on a free loopback port, listening, and stopped after the test."""
    return on_a_free_port(
        lambda port: start(*args, "--address", f"127.0.0.1:{port}", env=env), stop
    )


def request() -> fnv1.RunFunctionRequest:
    req = fnv1.RunFunctionRequest(meta=fnv1.RequestMeta(tag="loopback"))
    req.observed.composite.resource.CopyFrom(dict_to_struct(COMPOSITE))
    return req


def call(channel: grpc.Channel) -> fnv1.RunFunctionResponse:
    stub = grpcv1.FunctionRunnerServiceStub(channel)
    return stub.RunFunction(request(), timeout=10)


def seed_request() -> fnv1.RunFunctionRequest:
    """The request Crossplane sends for the seed example once its cluster has been fetched."""
    from modelplane import manifests
    from modelplane.compose.registry import default_registry
    from modelplane.render import Renderer

    inputs = [m.obj for m in manifests.load([str(EXAMPLES / "replica-seed")])]
    rendered = next(
        r
        for r in Renderer(default_registry(), inputs).render_all()
        if r.composite["kind"] == "ModelReplica"
    )
    assert rendered.request is not None
    rendered.request.meta.tag = "seed"
    return rendered.request


def test_insecure_server_composes_a_model_replica(stop):
    _, port = listening(stop, "--insecure")
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        rsp = grpcv1.FunctionRunnerServiceStub(channel).RunFunction(seed_request(), timeout=10)
    assert rsp.meta.tag == "seed"
    assert not [r for r in rsp.results if r.severity == fnv1.SEVERITY_FATAL]
    assert {"namespace", "workload-qwen3-8b", "inference-pool", "http-route"} <= set(
        rsp.desired.resources
    )
    kinds = {r.resource["kind"] for r in rsp.desired.resources.values()}
    assert kinds == {"Object"}
    assert [c.type for c in rsp.conditions] == ["ModelServing"]


def test_insecure_server_answers_an_unknown_kind_with_a_fatal_result(stop):
    _, port = listening(stop, "--insecure")
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        rsp = call(channel)
    assert rsp.meta.tag == "loopback"
    assert [r.severity for r in rsp.results] == [fnv1.SEVERITY_FATAL]
    assert rsp.results[0].message.startswith("no composer for Bucket")


def log_lines(proc: subprocess.Popen[str]) -> list[dict]:
    """Stop the server and read back every line it logged, each a JSON object."""
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=30)
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def test_sigterm_stops_the_server_gracefully(stop):
    proc, _ = listening(stop, "--insecure")
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=15) == 0


def test_server_logs_are_json_lines_carrying_the_request_tag(stop):
    proc, port = listening(stop, "--insecure")
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        call(channel)
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=15)
    lines = [line for line in out.splitlines() if '"tag"' in line]
    assert lines, out
    assert '"tag": "loopback"' in lines[0] or '"tag":"loopback"' in lines[0]


def test_each_request_is_logged_at_info_with_its_tag_kind_name_result_and_duration(stop):
    proc, port = listening(stop, "--insecure")
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        grpcv1.FunctionRunnerServiceStub(channel).RunFunction(seed_request(), timeout=30)
    lines = log_lines(proc)
    [line] = [x for x in lines if x.get("tag") == "seed"]
    assert line["level"] == "info"
    assert (line["kind"], line["name"], line["result"]) == (
        "ModelReplica",
        "qwen3-8b-eks-l4-0",
        "composed",
    )
    assert line["duration_ms"] > 0


def test_logs_are_json_lines_at_debug_level_too(stop):
    proc, port = listening(stop, "--insecure", "--debug")
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        call(channel)
    assert [x["msg"] for x in log_lines(proc) if x.get("tag") == "loopback"] == ["RunFunction"]


def test_a_repeated_request_is_answered_from_the_cache_and_logged_so(stop):
    proc, port = listening(stop, "--insecure")
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = grpcv1.FunctionRunnerServiceStub(channel)
        first = stub.RunFunction(seed_request(), timeout=30)
        again = stub.RunFunction(seed_request(), timeout=30)
    assert again == first
    results = [x["result"] for x in log_lines(proc) if x.get("tag") == "seed"]
    assert results == ["composed", "cached"]


def test_the_workers_option_starts_that_many_composing_processes(stop):
    proc, _ = listening(stop, "--insecure", "--workers", "3")
    [serving] = [x for x in log_lines(proc) if x.get("msg") == "serving"]
    assert serving["workers"] == 3


def test_server_refuses_to_start_without_certificates(stop):
    proc = start("--address", f"127.0.0.1:{free_port()}", env={"TLS_SERVER_CERTS_DIR": ""})
    stop.append(proc)
    out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 2
    assert "no TLS certificates" in out
    assert "Traceback" not in out


def test_server_refuses_insecure_together_with_a_certificates_dir(stop, tmp_path):
    proc = start(
        "--address",
        f"127.0.0.1:{free_port()}",
        "--insecure",
        "--tls-server-certs-dir",
        str(tmp_path),
    )
    stop.append(proc)
    out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 2
    assert "--insecure and --tls-server-certs-dir" in out


def test_a_second_server_on_an_address_in_use_refuses_to_start(stop):
    _, port = listening(stop, "--insecure")
    second = start("--insecure", "--address", f"127.0.0.1:{port}")
    stop.append(second)
    out, _ = second.communicate(timeout=60)
    assert second.returncode == 1, out
    assert f"cannot listen on 127.0.0.1:{port}" in out
    assert "Traceback" not in out


def test_server_refuses_a_certificates_dir_missing_files(stop, tmp_path):
    proc = start("--address", f"127.0.0.1:{free_port()}", "--tls-server-certs-dir", str(tmp_path))
    stop.append(proc)
    out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 2
    assert "missing tls.crt, tls.key, ca.crt" in out


# --- mTLS -----------------------------------------------------------------------------------


def _key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _cert(
    subject: str,
    key: ec.EllipticCurvePrivateKey,
    issuer: tuple[x509.Certificate, ec.EllipticCurvePrivateKey] | None = None,
    *,
    ca: bool = False,
) -> x509.Certificate:
    now = datetime.datetime.now(datetime.UTC)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)])
    issuer_name, signing_key = (issuer[0].subject, issuer[1]) if issuer else (name, key)
    builder = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(issuer_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=1))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if not ca:
        builder = builder.add_extension(
            x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False
        )
    return builder.sign(signing_key, hashes.SHA256())


def _pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes | Path]:
    ca_key = _key()
    ca = _cert("modelplane-test-ca", ca_key, ca=True)
    server_key, client_key = _key(), _key()
    server = _cert("localhost", server_key, (ca, ca_key))
    client = _cert("crossplane", client_key, (ca, ca_key))
    certs = tmp_path_factory.mktemp("certs")
    (certs / "tls.crt").write_bytes(_pem(server))
    (certs / "tls.key").write_bytes(_key_pem(server_key))
    (certs / "ca.crt").write_bytes(_pem(ca))
    return {
        "dir": certs,
        "ca": _pem(ca),
        "client_crt": _pem(client),
        "client_key": _key_pem(client_key),
    }


def _tls_channel(port: int, pki: dict, *, with_client_cert: bool) -> grpc.Channel:
    creds = grpc.ssl_channel_credentials(
        root_certificates=pki["ca"],
        private_key=pki["client_key"] if with_client_cert else None,
        certificate_chain=pki["client_crt"] if with_client_cert else None,
    )
    return grpc.secure_channel(
        f"localhost:{port}", creds, options=[("grpc.ssl_target_name_override", "localhost")]
    )


def test_tls_server_answers_a_client_with_a_certificate(stop, pki):
    _, port = listening(stop, env={"TLS_SERVER_CERTS_DIR": str(pki["dir"])})
    with _tls_channel(port, pki, with_client_cert=True) as channel:
        rsp = call(channel)
    assert rsp.meta.tag == "loopback"


def test_tls_server_refuses_a_client_without_a_certificate(stop, pki):
    _, port = listening(stop, "--tls-server-certs-dir", str(pki["dir"]))
    with (
        _tls_channel(port, pki, with_client_cert=False) as channel,
        pytest.raises(grpc.RpcError) as refused,
    ):
        call(channel)
    assert refused.value.code() == grpc.StatusCode.UNAVAILABLE


def test_tls_server_refuses_a_plaintext_client(stop, pki):
    _, port = listening(stop, "--tls-server-certs-dir", str(pki["dir"]))
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel, pytest.raises(grpc.RpcError):
        call(channel)


def test_the_legacy_v1beta1_service_answers_too(stop):
    from crossplane.function.proto.v1beta1 import run_function_pb2 as fnv1beta1
    from crossplane.function.proto.v1beta1 import run_function_pb2_grpc as grpcv1beta1

    _, port = listening(stop, "--insecure")
    req = fnv1beta1.RunFunctionRequest.FromString(seed_request().SerializeToString())
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        rsp = grpcv1beta1.FunctionRunnerServiceStub(channel).RunFunction(req, timeout=10)
    assert rsp.meta.tag == "seed"
    assert "inference-pool" in rsp.desired.resources


# --- limits, concurrency and shutdown ----------------------------------------------------------


def serving_held(
    stop: list[subprocess.Popen[str]], workers: int, metrics: int = 0, **limits: float
) -> tuple[subprocess.Popen[str], int]:
    """`serve` whose ModelReplica composer holds any replica annotated to wait
    (``tests/holding.py``), on a free loopback port; metrics on port ``metrics`` (0: none);
    ``limits``: serve's keyword arguments bounding what it holds."""
    extra = "".join(f", {k}={v!r}" for k, v in limits.items())

    def launch(port: int) -> subprocess.Popen[str]:
        code = (
            "from modelplane.serve import serve; "
            f"serve(address='127.0.0.1:{port}', tls_certs_dir=None, insecure=True, debug=False, "
            f"max_recv_message_size=64, max_send_message_size=None, workers={workers}, "
            f"registry='tests.holding:registry', metrics_address='127.0.0.1:{metrics}'{extra})"
        )
        return subprocess.Popen(
            [sys.executable, "-c", code],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            cwd=Path(__file__).resolve().parents[1],
        )

    return on_a_free_port(launch, stop, timeout=60)


def held_request(hold: Path, tag: str) -> fnv1.RunFunctionRequest:
    """The seed request, held by the composer until ``hold`` exists."""
    req = seed_request()
    req.meta.tag = tag
    meta = req.observed.composite.resource.fields["metadata"].struct_value
    meta.fields["annotations"].struct_value.update({HOLD: str(hold)})
    return req


def started(hold: Path) -> int:
    """Wait until a worker holds the composition; its pid."""
    marker = hold.with_name(hold.name + ".started")
    deadline = time.monotonic() + 60
    while not marker.exists():
        assert time.monotonic() < deadline, "the held composition never started"
        time.sleep(0.01)
    return int(marker.read_text())


def test_a_slow_composite_does_not_delay_a_fast_one(stop, tmp_path):
    _, port = serving_held(stop, workers=2)
    hold = tmp_path / "release"
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = grpcv1.FunctionRunnerServiceStub(channel)
        slow = stub.RunFunction.future(held_request(hold, "slow"), timeout=120)
        started(hold)
        fast = stub.RunFunction(seed_request(), timeout=60)
        assert fast.meta.tag == "seed"
        assert not slow.done()  # the fast one was answered while the slow one still composed
        hold.write_text("go")
        assert slow.result().meta.tag == "slow"


def test_sigterm_stops_the_server_within_its_grace_period_whatever_is_running(stop, tmp_path):
    proc, port = serving_held(stop, workers=1)
    hold = tmp_path / "never"
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = grpcv1.FunctionRunnerServiceStub(channel)
        call = stub.RunFunction.future(held_request(hold, "held"), timeout=120)
        worker = started(hold)
        proc.send_signal(signal.SIGTERM)
        # The grace period is 5 s; the margin is for a loaded machine, not for the server.
        assert proc.wait(timeout=GRACE_SECONDS + 10) == 0
        rsp = call.result()
    assert [r.message for r in rsp.results] == [
        "the function stopped (SIGTERM) before this composition finished"
    ]
    with pytest.raises(ProcessLookupError):
        os.kill(worker, 0)


def test_a_composition_abandoned_past_its_budget_frees_its_worker(stop, tmp_path):
    _, port = serving_held(stop, workers=1, abandoned_seconds=2)
    hold = tmp_path / "never"
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = grpcv1.FunctionRunnerServiceStub(channel)
        with pytest.raises(grpc.RpcError) as gave_up:
            stub.RunFunction(held_request(hold, "held"), timeout=3)
        assert gave_up.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
        # The only worker holds a composition that never ends: once nobody has waited for it
        # for abandoned_seconds it is stopped, and the next call is answered by a replacement.
        assert stub.RunFunction(seed_request(), timeout=120).meta.tag == "seed"
    with pytest.raises(ProcessLookupError):
        os.kill(started(hold), 0)


def workers_of(server: int) -> set[int]:
    """The pids of the server's worker processes."""
    out = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                if int(fields[1]) == server:
                    out.add(int(entry.name))
    return out


def test_a_cancelled_composition_finishes_in_its_worker_and_answers_the_retry(stop, tmp_path):
    proc, port = serving_held(stop, workers=1)
    hold = tmp_path / "release"
    before = workers_of(proc.pid)
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = grpcv1.FunctionRunnerServiceStub(channel)
        with pytest.raises(grpc.RpcError) as gave_up:
            stub.RunFunction(held_request(hold, "held"), timeout=1)
        assert gave_up.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
        worker = started(hold)
        marker = hold.with_name(hold.name + ".started").stat().st_ino
        hold.write_text("go")
        # The retry (same tag) is answered by the composition its cancelled call started
        # (joined while it runs, or from the cache once it is done), and so is the next.
        assert stub.RunFunction(held_request(hold, "held"), timeout=60).meta.tag == "held"
        assert stub.RunFunction(held_request(hold, "held"), timeout=60).meta.tag == "held"
    # One composition, in the same worker: nothing was composed twice or killed.
    assert hold.with_name(hold.name + ".started").stat().st_ino == marker
    os.kill(worker, 0)
    assert workers_of(proc.pid) == before
    results = [line.get("result") for line in log_lines(proc) if line.get("tag") == "held"]
    # The cancelled call may log after the retry that joined its composition: order aside,
    # one call was cancelled, one was answered by the composition, the last from the cache.
    answered = [r for r in results if r != "cancelled"]
    assert results.count("cancelled") == 1 and len(results) == 3, results
    assert answered[0] in ("composed", "cached") and answered[1] == "cached", results


def test_callers_giving_up_on_a_long_composition_cost_no_worker(stop, tmp_path):
    proc, port = serving_held(stop, workers=2)
    hold = tmp_path / "release"
    before = workers_of(proc.pid)
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = grpcv1.FunctionRunnerServiceStub(channel)
        for _ in range(20):  # two callers' worth of retries with short deadlines
            with pytest.raises(grpc.RpcError):
                stub.RunFunction(held_request(hold, "held"), timeout=0.15)
        # The other worker answers meanwhile, as quickly as ever.
        t0 = time.monotonic()
        assert stub.RunFunction(seed_request(), timeout=60).meta.tag == "seed"
        assert time.monotonic() - t0 < 5
        hold.write_text("go")
        assert stub.RunFunction(held_request(hold, "held"), timeout=60).meta.tag == "held"
    assert workers_of(proc.pid) == before


def fleet_request(clusters: int, per_cluster: int) -> fnv1.RunFunctionRequest:
    """A ModelDeployment scaling up on a fleet of ``clusters`` one-pool clusters, each already
    running ``per_cluster`` replicas of other deployments: every one of them required."""
    from modelplane.compose.modeldeployment.composer import CLASSES, CLUSTERS, REPLICAS
    from tests.fleet.builders import (
        deployment,
        engine,
        inference_class,
        inference_cluster,
        member,
        placed_member,
        placed_replica,
        with_condition,
    )

    h100 = inference_class("h100")
    fleet = [
        inference_cluster(f"cluster-{i:04d}", {"h100": ("h100", 8)}, classes=[h100])
        for i in range(clusters)
    ]
    engines = [engine("main", placed_member("h100", 4, member()["template"]))]
    running = [
        with_condition(
            placed_replica(f"other-{k}", "team-b", c["metadata"]["name"], 0, engines),
            "ModelServing",
            "True",
            "Serving",
        )
        for c in fleet
        for k in range(per_cluster)
    ]
    req = fnv1.RunFunctionRequest(meta=fnv1.RequestMeta(tag="fleet"))
    md = deployment("qwen", engine("main", member(gpus=2)), replicas=3, namespace="team-a")
    req.observed.composite.resource.CopyFrom(dict_to_struct(md))
    for name, objs in ((CLUSTERS, fleet), (CLASSES, [h100]), (REPLICAS, running)):
        items = req.required_resources[name].items
        for obj in objs:
            items.add().resource.CopyFrom(dict_to_struct(obj))
    return req


def test_a_fleet_sized_request_is_answered_over_loopback(stop):
    req = fleet_request(clusters=1000, per_cluster=4)
    assert req.ByteSize() > 4 * 1024 * 1024  # past gRPC's default limit, which refused it
    _, port = listening(stop, "--insecure")
    with grpc.insecure_channel(
        f"127.0.0.1:{port}", options=[("grpc.max_send_message_length", 64 * 1024 * 1024)]
    ) as channel:
        rsp = grpcv1.FunctionRunnerServiceStub(channel).RunFunction(req, timeout=120)
    assert not [r.message for r in rsp.results if r.severity == fnv1.SEVERITY_FATAL]
    assert sum(1 for k in rsp.desired.resources if k.startswith("replica-")) == 3


def nested(depth: int) -> dict:
    value: dict = {"leaf": True}
    for _ in range(depth - 1):
        value = {"deeper": value}
    return value


def test_a_composite_nested_past_protobufs_limit_gets_a_fatal_result_naming_it(stop):
    req = seed_request()
    req.meta.tag = "deep"
    spec = req.observed.composite.resource.fields["spec"].struct_value
    spec.fields["engines"].list_value.values[0].struct_value.update({"extra": nested(40)})
    _, port = listening(stop, "--insecure")
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        rsp = grpcv1.FunctionRunnerServiceStub(channel).RunFunction(req, timeout=60)
    assert rsp.meta.tag == "deep"
    assert [r.severity for r in rsp.results] == [fnv1.SEVERITY_FATAL]
    assert "nests deeper than protobuf's limit of 100 messages" in rsp.results[0].message


def test_many_large_requests_keep_the_servers_response_cache_within_its_bytes():
    # Each request carries a megabyte argument into its response; the budget holds three.
    import asyncio

    import structlog

    from modelplane.function import MIB
    from modelplane.serve import REGISTRY, Handler, Pool

    budget = 3 * MIB + MIB // 2

    def big(i: int) -> bytes:
        req = seed_request()
        req.meta.tag = f"big-{i}"
        spec = req.observed.composite.resource.fields["spec"].struct_value
        member = spec.fields["engines"].list_value.values[0].struct_value.fields["members"]
        template = member.list_value.values[0].struct_value.fields["template"].struct_value
        engine = template.fields["spec"].struct_value.fields["containers"].list_value.values[0]
        engine.struct_value.fields["args"].list_value.values.add().string_value = f"{i}" + (
            "x" * MIB
        )
        return req.SerializeToString()

    async def serve_many() -> Handler:
        pool = Pool(1, REGISTRY, 4 * MIB, debug=False)
        try:
            await pool.start()
            handler = Handler(pool, structlog.get_logger(), cache_bytes=budget)
            for i in range(12):
                rsp = fnv1.RunFunctionResponse.FromString(await handler.run(big(i), None))
                assert not [r.message for r in rsp.results], rsp.results
            return handler
        finally:
            pool.close()

    handler = asyncio.run(serve_many())
    assert handler.cache.size <= budget
    assert 1 <= len(handler.cache) <= 3


def exited(pid: int) -> bool:
    """Whether the process is gone (or a zombie no one reaps: it runs nothing)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().rsplit(")", 1)[1].split()[0] == "Z"


def test_workers_exit_when_the_server_is_killed(stop, tmp_path):
    proc, port = serving_held(stop, workers=2)
    holds = [tmp_path / "first", tmp_path / "second"]
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = grpcv1.FunctionRunnerServiceStub(channel)
        calls = [stub.RunFunction.future(held_request(h, h.name), timeout=120) for h in holds]
        workers = [started(h) for h in holds]
        proc.kill()  # as the kernel's OOM killer would: no chance to stop its workers
        proc.wait(timeout=10)
        for hold in holds:
            hold.write_text("go")
        for call in calls:
            with pytest.raises(grpc.RpcError):
                call.result()
    deadline = time.monotonic() + 30
    while not all(exited(pid) for pid in workers):
        assert time.monotonic() < deadline, "a worker outlived its server"
        time.sleep(0.05)


def test_a_tag_too_large_to_echo_gets_a_fatal_result_not_resource_exhausted(stop):
    req = seed_request()
    req.meta.tag = "t" * (30 << 20)
    _, port = listening(stop, "--insecure")
    with grpc.insecure_channel(
        f"127.0.0.1:{port}", options=[("grpc.max_send_message_length", 64 << 20)]
    ) as channel:
        rsp = grpcv1.FunctionRunnerServiceStub(channel).RunFunction(req, timeout=120)
    [result] = rsp.results
    assert result.severity == fnv1.SEVERITY_FATAL
    assert "the request's tag, 30.0 MiB, is not echoed" in result.message


# --- what the server holds at once -------------------------------------------------------------


def padded(req: fnv1.RunFunctionRequest, size: int) -> fnv1.RunFunctionRequest:
    """``req`` carrying ``size`` more bytes, in its context (carried through, read by nothing)."""
    req.context.update({"modelplane.test/padding": "x" * size})
    return req


def own_channel(port: int) -> grpc.Channel:
    """A channel on a connection of its own (channels to one target otherwise share one)."""
    return grpc.insecure_channel(
        f"127.0.0.1:{port}", options=[("grpc.use_local_subchannel_pool", 1)]
    )


def test_a_request_past_the_bytes_held_is_refused_at_once_while_small_ones_go_on(stop, tmp_path):
    # Unbounded, twelve 48 MiB requests queued behind two workers took the server past 1 GiB
    # and an ordinary call behind them timed out. Now what the server holds is bounded (here
    # 1 MiB): a request past it is refused RESOURCE_EXHAUSTED on arrival, not queued.
    proc, port = serving_held(stop, workers=2, max_inflight_size=1)
    hold = tmp_path / "release"
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = grpcv1.FunctionRunnerServiceStub(channel)
        held = stub.RunFunction.future(padded(held_request(hold, "big-0"), 600_000), timeout=120)
        try:
            started(hold)
            with pytest.raises(grpc.RpcError) as refused:
                stub.RunFunction(padded(seed_request(), 600_000), timeout=120)
            assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert "past the 1 MiB it may hold (--max-inflight-size)" in refused.value.details()
            # An ordinary call fits beside the held one, and the other worker answers it.
            assert stub.RunFunction(seed_request(), timeout=120).meta.tag == "seed"
        finally:
            hold.write_text("go")
        assert held.result().meta.tag == "big-0"
    refusals = [x for x in log_lines(proc) if x.get("result") == "refused"]
    assert len(refusals) == 1


def test_calls_past_the_concurrency_limit_on_another_connection_are_refused(stop, tmp_path):
    _, port = serving_held(stop, workers=1, max_concurrent_rpcs=1)
    hold = tmp_path / "release"
    with own_channel(port) as first, own_channel(port) as second:
        stub = grpcv1.FunctionRunnerServiceStub(first)
        held = stub.RunFunction.future(held_request(hold, "held"), timeout=120)
        try:
            started(hold)
            # The same connection's next call waits in its client for a stream of its own.
            queued = stub.RunFunction.future(seed_request(), timeout=120)
            with pytest.raises(grpc.RpcError) as refused:
                grpcv1.FunctionRunnerServiceStub(second).RunFunction(seed_request(), timeout=60)
            assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert not queued.done()
        finally:
            hold.write_text("go")
        assert held.result().meta.tag == "held"
        assert queued.result().meta.tag == "seed"
