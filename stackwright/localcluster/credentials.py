"""A local cluster's TLS certificates, bearer token, client CA and kubeconfigs.

Made once, at a cluster's first start, under its data folder; kept across
restarts so that a kubeconfig handed out earlier keeps working. The client CA
(kube-apiserver's `--client-ca-file`) signs the certificates of the users
`user_kubeconfig` hands out: subject CN the user, O its groups. A cluster made
before it existed gets it at its next start. Private keys and the token are
written with mode 0600 and never printed.
"""

from __future__ import annotations

import base64
import datetime
import ipaddress
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.types import CertificatePublicKeyTypes
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from stackwright.files import private_folder, write_private


@dataclass(frozen=True)
class Credentials:
    ca_cert: Path
    server_cert: Path
    server_key: Path
    token_file: Path
    #: Signs (and the server verifies) client certificates; not the serving CA.
    client_ca_cert: Path
    client_ca_key: Path

    @property
    def token(self) -> str:
        return self.token_file.read_text().strip()


_YEAR = datetime.timedelta(days=365)
#: Certificates start this long before they are made, against clock skew (certificate.Backdate).
_BACKDATE = datetime.timedelta(minutes=5)


def ensure_credentials(folder: Path) -> Credentials:
    """The cluster's CA, serving certificate, token and client CA, each made on first use."""
    creds = Credentials(
        ca_cert=folder / "ca.crt",
        server_cert=folder / "server.crt",
        server_key=folder / "server.key",
        token_file=folder / "token",
        client_ca_cert=folder / "client-ca.crt",
        client_ca_key=folder / "client-ca.key",
    )
    private_folder(folder)
    if not all(
        p.exists() for p in (creds.ca_cert, creds.server_cert, creds.server_key, creds.token_file)
    ):
        _make_serving_credentials(creds)
    if not (creds.client_ca_cert.exists() and creds.client_ca_key.exists()):
        # Apart from the serving CA, whose key is not kept: a cluster made before client
        # certificates existed gets this one at its next start, its server certificate
        # and token untouched.
        key, cert = _new_ca("stackwright-client-ca", datetime.datetime.now(datetime.UTC))
        write_private(creds.client_ca_key, _pem_key(key))
        creds.client_ca_cert.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return creds


def _new_ca(
    common_name: str, now: datetime.datetime
) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + 10 * _YEAR)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True, content_commitment=False, key_encipherment=False,
                data_encipherment=False, key_agreement=False, key_cert_sign=True,
                crl_sign=True, encipher_only=False, decipher_only=False,
            ),
            critical=True,
        )
        .sign(key, hashes.SHA256())
    )  # fmt: skip
    return key, cert


def _pem_key(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def _make_serving_credentials(creds: Credentials) -> None:
    now = datetime.datetime.now(datetime.UTC)
    ca_key, ca = _new_ca("stackwright-local-ca", now)
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kube-apiserver")]))
        .issuer_name(ca.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + 10 * _YEAR)
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
    write_private(creds.server_key, _pem_key(key))
    write_private(creds.token_file, secrets.token_urlsafe(32).encode() + b"\n")


def load_client_ca(creds: Credentials) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    """The client CA's certificate and key: what signs client certificates."""
    ca_key = serialization.load_pem_private_key(creds.client_ca_key.read_bytes(), password=None)
    assert isinstance(ca_key, ec.EllipticCurvePrivateKey)
    return x509.load_pem_x509_certificate(creds.client_ca_cert.read_bytes()), ca_key


def client_certificate(
    creds: Credentials,
    user: str,
    groups: Sequence[str] = (),
    *,
    now: datetime.datetime | None = None,
    lifetime: datetime.timedelta = _YEAR,
) -> tuple[bytes, bytes]:
    """(certificate, key) in PEM for `user` in `groups`, signed by the client CA: what
    kube-apiserver's x509 authenticator reads as user CN, groups O (kubeadm's and k3s's
    client certificates). `now` and `lifetime` set its validity (a test makes an expired one)."""
    subject = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, g) for g in groups]
    subject.append(x509.NameAttribute(NameOID.COMMON_NAME, user))
    key = ec.generate_private_key(ec.SECP256R1())
    start = now or datetime.datetime.now(datetime.UTC)
    cert = sign_client_certificate(creds, x509.Name(subject), key.public_key(), start, lifetime)
    return cert.public_bytes(serialization.Encoding.PEM), _pem_key(key)


def sign_client_certificate(
    creds: Credentials,
    subject: x509.Name,
    public_key: CertificatePublicKeyTypes,
    start: datetime.datetime,
    lifetime: datetime.timedelta,
    key_usage: x509.KeyUsage | None = None,
) -> x509.Certificate:
    """A client certificate (`clientAuth`, no CA) for `subject`'s key, signed by the client CA,
    valid from five minutes before `start` (against clock skew, as upstream's signer
    backdates) to `start + lifetime`: what `client_certificate` and the CSR signer issue."""
    ca, ca_key = load_client_ca(creds)
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(ca.subject)
        .public_key(public_key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(start - _BACKDATE)
        .not_valid_after(start + lifetime)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
    )
    if key_usage is not None:
        builder = builder.add_extension(key_usage, critical=True)
    return builder.sign(ca_key, hashes.SHA256())


def write_kubeconfig(path: Path, *, name: str, port: int, creds: Credentials) -> None:
    """A kubeconfig with one context, `stackwright-<name>`, carrying the CA and the token."""
    _write_config(path, f"stackwright-{name}", port, creds, {"token": creds.token})


def write_user_kubeconfig(
    path: Path, *, name: str, port: int, creds: Credentials, user: str, groups: Sequence[str]
) -> str:
    """A kubeconfig whose credential is a client certificate for `user` in `groups`;
    returns its context, `stackwright-<name>-<user>`."""
    cert, key = client_certificate(creds, user, groups)
    context = f"stackwright-{name}-{user}"
    credential = {
        "client-certificate-data": base64.b64encode(cert).decode(),
        "client-key-data": base64.b64encode(key).decode(),
    }
    _write_config(path, context, port, creds, credential)
    return context


def _write_config(
    path: Path, context: str, port: int, creds: Credentials, credential: dict[str, str]
) -> None:
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
        "users": [{"name": context, "user": credential}],
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
