"""`modelplane serve`: run the composition function as Crossplane calls it."""

from __future__ import annotations

import os

import click
from crossplane.function import logging, runtime

from modelplane.compose.admission import Admission
from modelplane.compose.registry import default_registry
from modelplane.function import FunctionRunner

_TLS_FILES = ("tls.crt", "tls.key", "ca.crt")


def serve(
    *,
    address: str,
    tls_certs_dir: str | None,
    insecure: bool,
    debug: bool,
    max_recv_message_size: int,
    max_send_message_size: int | None,
) -> None:
    logging.configure(level=logging.Level.DEBUG if debug else logging.Level.INFO)
    creds = None if insecure else runtime.load_credentials(_checked_certs_dir(tls_certs_dir))
    send = max_send_message_size or max_recv_message_size
    options = [
        ("grpc.max_receive_message_length", max_recv_message_size * 1024 * 1024),
        ("grpc.max_send_message_length", send * 1024 * 1024),
    ]
    runner = FunctionRunner(default_registry(), admission=Admission.default())
    logging.get_logger().info(
        "serving", address=address, tls=not insecure, kinds=runner.registry.kinds()
    )
    runtime.serve(runner, address, creds=creds, insecure=insecure, options=options)


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
    return certs_dir
