"""CertificateSigningRequests, as kube-apiserver's CSR strategies and kube-controller-manager's
`kubernetes.io/kube-apiserver-client` signer treat them.

At create the requester's identity replaces whatever `spec.username` / `groups` / `uid` /
`extra` the body carried, and the status starts empty (nobody creates a pre-approved
request). The `approval` subresource changes only `status.conditions`; `status` cannot add
or drop an Approved or Denied condition; the main resource changes neither spec nor status.
An approved request for the kube-apiserver-client signer is signed with the cluster's client
CA, the CA the server authenticates client certificates with, so the "create a user with a
CSR" flow ends in a working credential. As kube-apiserver's default CertificateSubjectRestriction
admission plugin, nobody (the administrator included) may ask that signer for a certificate in
the `system:masters` group: such a certificate would hold every permission, past RBAC.
As its CertificateApproval and CertificateSigning plugins, deciding a request (`approval`) takes
`approve`, and writing its certificate (`status`) takes `sign`, on the request's signer
(`signers` in certificates.k8s.io), beyond RBAC's `update` on the subresource.

Must never: sign a request that is not approved, is denied or failed, or names another
signer (those wait for a signer the cluster does not run, as on a real cluster).
"""

from __future__ import annotations

import base64
import binascii
import copy
import datetime
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.x509.oid import NameOID

from stackwright.localcluster import rbac
from stackwright.localcluster.credentials import Credentials, sign_client_certificate

Obj = dict[str, Any]

CSR_TYPE = ("certificates.k8s.io", "certificatesigningrequests")
CLIENT_SIGNER = "kubernetes.io/kube-apiserver-client"
#: kube-controller-manager's --cluster-signing-duration default.
_SIGNING_DURATION = datetime.timedelta(days=365)
_CLIENT_USAGES = frozenset({"client auth", "digital signature", "key encipherment"})
_DECISIONS = ("Approved", "Denied")


def request_error(request: str) -> str:
    """Why `spec.request` (base64 of a PEM CSR) is not a signed certificate request; "" if it is."""
    try:
        pem = base64.b64decode(request, validate=True)
    except (binascii.Error, ValueError):
        return ""  # the decoder reports malformed base64 before validation runs
    if b"-----BEGIN CERTIFICATE REQUEST-----" not in pem:
        return "PEM block type must be CERTIFICATE REQUEST"
    try:
        parsed = x509.load_pem_x509_csr(pem)
    except ValueError as exc:
        return f"x509: {exc}"
    return "" if parsed.is_signature_valid else "x509: invalid signature on certificate request"


def admit(
    store: Any, csr: Obj, old: Obj | None, subresource: str, user: Any, requester: Any
) -> None:
    """The CSR admission a write passes before validation: `user` is who writes (None: the
    cluster's controllers), `requester` the same unless it is privileged (RBAC's store)."""
    if old is None:
        _restrict_subject(csr)
        prepare_create(csr, user)
    elif requester is None:
        return
    elif subresource == "approval":
        _confirm_signer_verb(store, requester, "approve", csr)
    elif subresource == "status":
        certificate = (csr.get("status") or {}).get("certificate")
        if certificate != (old.get("status") or {}).get("certificate"):
            _confirm_signer_verb(store, requester, "sign", old)


def _confirm_signer_verb(store: Any, user: Any, verb: str, csr: Obj) -> None:
    """CertificateApproval / CertificateSigning: `verb` on the request's signer, granted by
    name (`signers` in certificates.k8s.io) or by its domain's wildcard (`example.com/*`)."""
    signer = str((csr.get("spec") or {}).get("signerName", ""))
    for name in (signer, signer.split("/")[0] + "/*"):
        attrs = rbac.Attributes(user, verb, True, "", CSR_TYPE[0], "*", "signers", "", name)
        if rbac.authorize(store, attrs).allowed:
            return
    raise rbac.forbidden_status(
        CSR_TYPE[1], CSR_TYPE[0], csr["metadata"].get("name", ""),
        f'user not permitted to {verb} requests with signerName "{signer}"',
    )  # fmt: skip


def _restrict_subject(csr: Obj) -> None:
    """CertificateSubjectRestriction: no kube-apiserver-client request for system:masters."""
    spec = csr.get("spec") or {}
    if spec.get("signerName") != CLIENT_SIGNER:
        return
    try:
        request = x509.load_pem_x509_csr(base64.b64decode(spec.get("request", ""), validate=True))
    except (binascii.Error, ValueError):
        return  # validation reports a request that does not parse
    groups = request.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)
    if any(g.value == rbac.MASTERS for g in groups):
        raise rbac.forbidden_status(
            CSR_TYPE[1], CSR_TYPE[0], (csr.get("metadata") or {}).get("name", ""),
            f"use of {CLIENT_SIGNER} signer with {rbac.MASTERS} group is not allowed",
        )  # fmt: skip


def prepare_create(csr: Obj, user: Any) -> None:
    """PrepareForCreate: the spec's identity is the requester's; the status starts empty."""
    spec = csr.setdefault("spec", {})
    for key in ("username", "uid", "groups", "extra"):
        spec.pop(key, None)
    if user is not None:
        spec["username"] = user.name
        if user.uid:
            spec["uid"] = user.uid
        if user.groups:
            spec["groups"] = list(user.groups)
        if user.extra:
            spec["extra"] = {k: list(v) for k, v in user.extra.items()}
    csr["status"] = {}


def confine_update(old: Obj, new: Obj, subresource: str, now: str) -> Obj:
    """What each CSR update strategy keeps from the stored request."""
    merged = copy.deepcopy(old)
    merged["metadata"] = new["metadata"]
    if subresource == "":
        return merged  # spec is immutable and status has its own subresources
    status = dict(new.get("status") or {})
    if subresource == "approval":
        # Only the conditions change; the certificate stays whatever the signer wrote.
        status = {**(old.get("status") or {}), "conditions": status.get("conditions") or []}
    else:
        kept = [c for c in _conditions(old.get("status")) if c.get("type") in _DECISIONS]
        others = [c for c in _conditions(status) if c.get("type") not in _DECISIONS]
        status["conditions"] = kept + others
    if not status.get("conditions"):
        status.pop("conditions", None)
    _stamp_conditions(status, old, now)
    merged["status"] = status
    return merged


def _conditions(status: Obj | None) -> list[Obj]:
    return [c for c in (status or {}).get("conditions") or [] if isinstance(c, dict)]


def _stamp_conditions(status: Obj, old: Obj, now: str) -> None:
    """populateConditionTimestamps: an unset lastUpdateTime is now; an unset
    lastTransitionTime is the old condition's of the same type and status, else now."""
    before = _conditions(old.get("status"))
    for condition in status.get("conditions") or []:
        condition.setdefault("status", "True")
        if not condition.get("lastUpdateTime"):
            condition["lastUpdateTime"] = now
        if not condition.get("lastTransitionTime"):
            condition["lastTransitionTime"] = next(
                (
                    c["lastTransitionTime"]
                    for c in before
                    if c.get("type") == condition.get("type")
                    and c.get("status") == condition.get("status")
                    and c.get("lastTransitionTime")
                ),
                now,
            )


def wants_signing(csr: Obj) -> bool:
    """An approved, undecided-otherwise, unsigned request for the client signer."""
    types = {c.get("type") for c in _conditions(csr.get("status"))}
    return (
        (csr.get("spec") or {}).get("signerName") == CLIENT_SIGNER
        and "Approved" in types
        and not types & {"Denied", "Failed"}
        and not (csr.get("status") or {}).get("certificate")
    )


def sign(csr: Obj, creds: Credentials, now: datetime.datetime) -> tuple[str, str]:
    """The signer's verdict: ("certificate", base64 PEM) or ("Failed", why)."""
    spec = csr.get("spec") or {}
    usages = set(spec.get("usages") or [])
    if not usages <= _CLIENT_USAGES or "client auth" not in usages:
        return "Failed", (
            f"invalid usage for client certificate: {sorted(usages - _CLIENT_USAGES) or ['client auth missing']}"
        )
    request = x509.load_pem_x509_csr(base64.b64decode(spec.get("request", "")))
    lifetime = _SIGNING_DURATION
    if spec.get("expirationSeconds"):
        lifetime = min(lifetime, datetime.timedelta(seconds=int(spec["expirationSeconds"])))
    key_usage = None
    if usages & {"digital signature", "key encipherment"}:
        key_usage = x509.KeyUsage(
            digital_signature="digital signature" in usages, content_commitment=False,
            key_encipherment="key encipherment" in usages, data_encipherment=False,
            key_agreement=False, key_cert_sign=False, crl_sign=False,
            encipher_only=False, decipher_only=False,
        )  # fmt: skip
    cert = sign_client_certificate(
        creds, request.subject, request.public_key(), now, lifetime, key_usage
    )
    pem = cert.public_bytes(serialization.Encoding.PEM)
    return "certificate", base64.b64encode(pem).decode()
