"""Hostile and broken input on the command line: each gets one clear line and exit 2 (or 1 for
an object that reads but is invalid), never a traceback, a stall or a misleading message."""

from __future__ import annotations

import datetime
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner, Result
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from modelplane import exits
from modelplane.cli import main

COMMANDS = ["render", "validate", "explain"]


def invoke(*args: str | Path, stdin: str | bytes | None = None) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args], input=stdin)


def one_line(result: Result) -> str:
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    [line] = result.stderr.splitlines()
    return line


def bomb() -> str:
    """A ModelReplica whose spec holds a billion laughs (9 levels of 9 aliases)."""
    levels = ["  l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    levels += [f"  l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]" for i in range(1, 10)]
    return (
        "apiVersion: modelplane.ai/v1alpha1\nkind: ModelReplica\n"
        "metadata: {name: laughs, namespace: ml-team}\nspec:\n" + "\n".join(levels) + "\n"
    )


@pytest.mark.parametrize("command", COMMANDS)
def test_a_yaml_bomb_is_refused_with_a_clear_error(tmp_path: Path, command: str) -> None:
    path = tmp_path / "bomb.yaml"
    path.write_text(bomb())
    result = invoke(command, path)
    assert result.exit_code == exits.UNREADABLE
    assert one_line(result).startswith(
        f"modelplane {command}: {path}:1: not valid YAML: document contains excessive aliasing"
    )


@pytest.mark.parametrize("command", COMMANDS)
def test_a_file_that_is_not_utf8_is_one_clear_error(tmp_path: Path, command: str) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes(b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: caf\xe9}\n")
    result = invoke(command, path)
    assert result.exit_code == exits.UNREADABLE
    assert one_line(result) == (
        f"modelplane {command}: {path}:3: not UTF-8 text: byte 0xe9 at offset 51 is not text "
        "(manifests are YAML or JSON in UTF-8)"
    )


@pytest.mark.parametrize("command", COMMANDS)
def test_binary_standard_input_is_one_clear_error(command: str) -> None:
    png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10"
    result = invoke(command, "-", stdin=png)
    assert result.exit_code == exits.UNREADABLE
    assert one_line(result) == (
        f"modelplane {command}: <stdin>:1: not UTF-8 text: byte 0x89 at offset 0 is not text "
        "(manifests are YAML or JSON in UTF-8)"
    )


@pytest.mark.parametrize("command", COMMANDS)
def test_a_nul_byte_in_text_is_one_clear_error(command: str) -> None:
    result = invoke(command, "-", stdin=b"apiVersion: v1\nkind: \x00\n")
    assert result.exit_code == exits.UNREADABLE
    assert one_line(result) == (
        f"modelplane {command}: <stdin>:2: not valid YAML: character #x0000 is not allowed: "
        "control characters are not allowed"
    )


@pytest.mark.parametrize("command", COMMANDS)
def test_invalid_yaml_exits_two_in_every_command(tmp_path: Path, command: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("kind: [unclosed\n")
    assert invoke(command, path).exit_code == exits.UNREADABLE


def test_render_of_a_composite_without_metadata_says_its_name_is_required(
    tmp_path: Path,
) -> None:
    path = tmp_path / "md.yaml"
    path.write_text(
        yaml.safe_dump(
            {"apiVersion": "modelplane.ai/v1alpha1", "kind": "ModelDeployment", "spec": {}}
        )
    )
    result = invoke("render", path)
    assert result.exit_code == exits.INVALID
    assert one_line(result) == (
        f"modelplane render: {path}:1: ModelDeployment: metadata.name: Required value: "
        "name is required"
    )


def test_explain_of_a_deployment_without_metadata_says_its_name_is_required(
    tmp_path: Path,
) -> None:
    path = tmp_path / "md.yaml"
    path.write_text("apiVersion: modelplane.ai/v1alpha1\nkind: ModelDeployment\nspec: {}\n")
    result = invoke("explain", path)
    assert result.exit_code == exits.INVALID
    assert "metadata.name: Required value: name is required" in one_line(result)


# --- serve and its certificates --------------------------------------------------------------


def certificates(tmp_path: Path) -> Path:
    """A self-signed server certificate that is its own CA: enough for loading, not serving."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(1)
        .not_valid_before(now)
        .not_valid_after(now + datetime.timedelta(hours=1))
        .sign(key, hashes.SHA256())
    )
    pem = cert.public_bytes(serialization.Encoding.PEM)
    certs = tmp_path / "certs"
    certs.mkdir()
    (certs / "tls.crt").write_bytes(pem)
    (certs / "ca.crt").write_bytes(pem)
    (certs / "tls.key").write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return certs


def serve(certs: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "modelplane", "serve", "--tls-server-certs-dir", str(certs)],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "ADDRESS": "127.0.0.1:0"},
    )


@pytest.mark.parametrize(
    ("corrupt", "message"),
    [
        ("ca.crt", "not a PEM CA certificate ("),
        ("tls.crt", "not a PEM certificate ("),
        ("tls.key", "not a PEM private key matching tls.crt"),
    ],
)
def test_serve_with_a_corrupt_certificate_exits_with_one_line_naming_the_file(
    tmp_path: Path, corrupt: str, message: str
) -> None:
    certs = certificates(tmp_path)
    (certs / corrupt).write_text("-----BEGIN GARBAGE-----\nnot base64\n")
    done = serve(certs)
    assert done.returncode == exits.UNREADABLE
    assert "Traceback" not in done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith(f"modelplane serve: {certs / corrupt}: {message}")


def test_serve_with_a_key_of_another_certificate_names_the_key(tmp_path: Path) -> None:
    certs = certificates(tmp_path)
    (tmp_path / "other").mkdir()
    other = certificates(tmp_path / "other")
    shutil.copy(other / "tls.key", certs / "tls.key")
    done = serve(certs)
    assert done.returncode == exits.UNREADABLE
    assert done.stderr.splitlines() == [
        f"modelplane serve: {certs / 'tls.key'}: not a PEM private key matching tls.crt "
        "(key values mismatch)"
    ]


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["render", "--bogus"], "modelplane render: No such option '--bogus'."),
        (["bogus"], "modelplane: No such command 'bogus'."),
        (["validate"], "modelplane validate: give PATHS to validate, or --definitions"),
    ],
)
def test_a_usage_error_is_one_line_in_the_common_format(args: list[str], said: str) -> None:
    result = invoke(*args)
    assert result.exit_code == exits.UNREADABLE
    assert one_line(result).startswith(said)
    assert "--help" in one_line(result)
