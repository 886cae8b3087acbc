"""Certificates and keys for the loopback clusters: one CA per cluster, serving and client leaves.

Everything is generated per run into the run directory, never committed: the API servers' serving
certificates, the admin client certificate (``O=system:masters``), the service-account signing
key, and the webhook servers' certificates.
"""

from __future__ import annotations

import datetime
import ipaddress
import warnings
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

LIFETIME = datetime.timedelta(days=7)


@dataclass(frozen=True)
class Pair:
    """A certificate and its key, PEM-encoded."""

    cert: bytes
    key: bytes

    def write(self, directory: Path, cert: str = "tls.crt", key: str = "tls.key") -> None:
        directory.mkdir(parents=True, exist_ok=True)
        (directory / cert).write_bytes(self.cert)
        (directory / key).write_bytes(self.key)
        (directory / key).chmod(0o600)


def _key_pem(key: ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def _name(common_name: str, organizations: tuple[str, ...] = ()) -> x509.Name:
    attributes = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in organizations]
    return x509.Name([*attributes, x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _window() -> tuple[datetime.datetime, datetime.datetime]:
    now = datetime.datetime.now(datetime.UTC)
    return now - datetime.timedelta(hours=1), now + LIFETIME


def authority(common_name: str) -> Pair:
    key = ec.generate_private_key(ec.SECP256R1())
    not_before, not_after = _window()
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name(common_name))
        .issuer_name(_name(common_name))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(not_before)
        .not_valid_after(not_after)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                key_encipherment=False,
                content_commitment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .sign(key, hashes.SHA256())
    )
    return Pair(cert.public_bytes(serialization.Encoding.PEM), _key_pem(key))


def leaf(
    ca: Pair,
    common_name: str,
    *,
    organizations: tuple[str, ...] = (),
    dns: tuple[str, ...] = (),
    ips: tuple[str, ...] = (),
    server: bool = False,
    client: bool = False,
) -> Pair:
    """A leaf signed by ``ca`` (its key read from PEM, EC or RSA alike)."""
    issuer_key = serialization.load_pem_private_key(ca.key, password=None)
    issuer = x509.load_pem_x509_certificate(ca.cert)
    with warnings.catch_warnings():
        # Crossplane's CA names its country "Earth" (internal/initializer/cert_generator.go),
        # which cryptography reads with a warning: the name is copied as it is.
        warnings.simplefilter("ignore", UserWarning)
        issuer_name = issuer.subject
    key = ec.generate_private_key(ec.SECP256R1())
    usages = [ExtendedKeyUsageOID.SERVER_AUTH] * server + [ExtendedKeyUsageOID.CLIENT_AUTH] * client
    not_before, not_after = _window()
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(common_name, organizations))
        .issuer_name(issuer_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(not_before)
        .not_valid_after(not_after)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage(usages), critical=False)
    )
    names: list[x509.GeneralName] = [x509.DNSName(d) for d in dns]
    names += [x509.IPAddress(ipaddress.ip_address(i)) for i in ips]
    if names:
        builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
    assert isinstance(issuer_key, ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey)
    cert = builder.sign(issuer_key, hashes.SHA256())
    return Pair(cert.public_bytes(serialization.Encoding.PEM), _key_pem(key))


def signing_key() -> tuple[bytes, bytes]:
    """An RSA key pair (private, public PEM) for service-account tokens."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    public = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return _key_pem(key), public
