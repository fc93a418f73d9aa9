"""A local cluster's TLS certificates, bearer token and kubeconfig.

Made once, at a cluster's first start, under its data folder; kept across
restarts so that a kubeconfig handed out earlier keeps working. The private key
and the token are written with mode 0600 and never printed.
"""

from __future__ import annotations

import datetime
import ipaddress
import secrets
from dataclasses import dataclass
from pathlib import Path

import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from stackwright.files import private_folder, write_private


@dataclass(frozen=True)
class Credentials:
    ca_cert: Path
    server_cert: Path
    server_key: Path
    token_file: Path

    @property
    def token(self) -> str:
        return self.token_file.read_text().strip()


def ensure_credentials(folder: Path) -> Credentials:
    """The cluster's CA, serving certificate and token, made on first use."""
    creds = Credentials(
        ca_cert=folder / "ca.crt",
        server_cert=folder / "server.crt",
        server_key=folder / "server.key",
        token_file=folder / "token",
    )
    if all(
        p.exists() for p in (creds.ca_cert, creds.server_cert, creds.server_key, creds.token_file)
    ):
        return creds
    private_folder(folder)
    now = datetime.datetime.now(datetime.UTC)
    ten_years = datetime.timedelta(days=3650)

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "stackwright-local-ca")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + ten_years)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True, content_commitment=False, key_encipherment=False,
                data_encipherment=False, key_agreement=False, key_cert_sign=True,
                crl_sign=True, encipher_only=False, decipher_only=False,
            ),
            critical=True,
        )
        .sign(ca_key, hashes.SHA256())
    )  # fmt: skip

    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kube-apiserver")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + ten_years)
        .add_extension(
            x509.SubjectAlternativeName(
                [
                    x509.DNSName("localhost"),
                    x509.DNSName("kubernetes"),
                    x509.DNSName("kubernetes.default.svc"),
                    x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
                ]
            ),
            critical=False,
        )
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )

    creds.ca_cert.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    creds.server_cert.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    write_private(
        creds.server_key,
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ),
    )
    write_private(creds.token_file, secrets.token_urlsafe(32).encode() + b"\n")
    return creds


def write_kubeconfig(path: Path, *, name: str, port: int, creds: Credentials) -> None:
    """A kubeconfig with one context, `stackwright-<name>`, carrying the CA and the token."""
    import base64

    context = f"stackwright-{name}"
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": context,
                "cluster": {
                    "server": f"https://127.0.0.1:{port}",
                    "certificate-authority-data": base64.b64encode(
                        creds.ca_cert.read_bytes()
                    ).decode(),
                },
            }
        ],
        "users": [{"name": context, "user": {"token": creds.token}}],
        "contexts": [
            {
                "name": context,
                "context": {"cluster": context, "user": context, "namespace": "default"},
            }
        ],
        "current-context": context,
        "preferences": {},
    }
    write_private(path, yaml.safe_dump(config, sort_keys=False).encode())
