"""`modelplane serve`: run the composition function as Crossplane calls it."""

from __future__ import annotations

import os
import ssl
from typing import Any

import click
from crossplane.function import logging, runtime

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
    runner = FunctionRunner(default_registry())
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
