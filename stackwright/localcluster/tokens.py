"""`POST serviceaccounts/NAME/token`: the TokenRequest `kubectl create token` sends.

As the API server's TokenRequest REST (pkg/registry/core/serviceaccount/storage/token.go):
the service account must exist; `expirationSeconds` defaults to an hour and may not be
under ten minutes; `audiences` default to the API server's own; a `boundObjectRef` names a
Pod, Secret or Node that must exist (and has the uid given, if one is). The answer is the
request with its defaults and a `status` holding the token and its expiry; nothing is
stored.

The token is a JWT with the claims a real one carries (`sub`
`system:serviceaccount:NS:NAME`, `kubernetes.io` service account and bound object), signed
with HMAC-SHA256 under a key derived from the cluster's credential. The server accepts it
as a bearer token while it has not expired, names the API server's audience, and its
service account (same uid) exists, as that account's user
(`system:serviceaccount:NS:NAME`, in `system:serviceaccounts`,
`system:serviceaccounts:NS` and `system:authenticated`), which RBAC then authorizes.

A legacy token (`legacy(...)`, what the token controller puts in a Secret of type
`kubernetes.io/service-account-token`) carries upstream's legacy claims instead (issuer
`kubernetes/serviceaccount`, the account's name and uid, the Secret's name) and no expiry;
as the API server's legacy validator, it authenticates only while its Secret exists, is
not being deleted and still holds that very token, and its account (same uid) exists.

Must never: put the cluster's credential in a token, issue one for a service account that
does not exist, or accept one whose signature, expiry, audience, service account or (for a
legacy token) Secret does not hold.
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import hmac
from typing import Any

import orjson

from stackwright.localcluster import status
from stackwright.localcluster.cluster import Cluster, timestamp
from stackwright.localcluster.rbac import User, service_account_user

#: The API server's audience and issuer, as a kubeadm cluster's.
AUDIENCE = "https://kubernetes.default.svc.cluster.local"
#: The issuer of the tokens kept in Secrets (upstream's serviceaccount.LegacyIssuer).
LEGACY_ISSUER = "kubernetes/serviceaccount"
#: The Secret key holding a legacy token, and the annotations naming its account.
TOKEN_KEY = "token"
ACCOUNT_NAME = "kubernetes.io/service-account.name"
ACCOUNT_UID = "kubernetes.io/service-account.uid"
DEFAULT_SECONDS = 3600
MIN_SECONDS = 600
#: Kinds a token may be bound to → their (group, plural) and whether namespaced.
BINDABLE = {
    "Pod": (("", "pods"), True),
    "Secret": (("", "secrets"), True),
    "Node": (("", "nodes"), False),
}
_SERVICE_ACCOUNTS = ("", "serviceaccounts")
_SECRETS = ("", "secrets")
_HEADER = {"alg": "HS256", "typ": "JWT"}


def signing_key(credential: bytes) -> bytes:
    """The token key: derived from, and never revealing, the cluster's credential."""
    return hashlib.sha256(b"stackwright service account tokens\x00" + credential).digest()


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def issue(cluster: Cluster, key: bytes, namespace: str, name: str, body: Any) -> dict[str, Any]:
    """The TokenRequest `body` for service account `namespace/name`, answered."""
    if not isinstance(body, dict):
        raise status.BadRequest("the body of a TokenRequest must be an object")
    account = cluster.store.get(_SERVICE_ACCOUNTS, namespace, name)
    if account is None:
        raise status.not_found("serviceaccounts", "", name)
    if not isinstance(body.get("spec") or {}, dict):
        raise status.BadRequest("the spec of a TokenRequest must be an object")
    spec = dict(body.get("spec") or {})
    seconds = spec.get("expirationSeconds")
    seconds = DEFAULT_SECONDS if seconds is None else seconds
    if not isinstance(seconds, int) or seconds < MIN_SECONDS:
        duration = "may not specify a duration less than 10 minutes"
        raise _invalid(name, status.invalid("spec.expirationSeconds", seconds, duration))
    audiences = spec.get("audiences") or [AUDIENCE]
    now = cluster.clock()
    expiry = now + datetime.timedelta(seconds=seconds)
    claims: dict[str, Any] = {
        "aud": audiences,
        "exp": int(expiry.timestamp()),
        "iat": int(now.timestamp()),
        "iss": AUDIENCE,
        "nbf": int(now.timestamp()),
        "sub": f"system:serviceaccount:{namespace}:{name}",
        "kubernetes.io": {
            "namespace": namespace,
            "serviceaccount": {"name": name, "uid": account["metadata"]["uid"]},
        },
    }
    bound = spec.get("boundObjectRef")
    if bound is not None and not _is_reference(bound):
        # As the API server's decoder: a BoundObjectReference is an object of strings.
        raise status.BadRequest(
            "spec.boundObjectRef of a TokenRequest must be an object whose apiVersion, kind,"
            " name and uid are strings"
        )
    if bound:
        claims["kubernetes.io"][str(bound.get("kind", "")).lower()] = _bound(
            cluster, namespace, bound
        )
    meta = {k: v for k, v in (body.get("metadata") or {}).items() if k != "namespace"}
    return {
        "kind": "TokenRequest",
        "apiVersion": "authentication.k8s.io/v1",
        "metadata": {
            **meta,
            "name": name,
            "namespace": namespace,
            "creationTimestamp": timestamp(now),
        },
        "spec": {
            **spec,
            "audiences": audiences,
            "expirationSeconds": seconds,
            "boundObjectRef": bound or None,
        },
        "status": {
            "token": _sign(key, claims),
            "expirationTimestamp": timestamp(expiry),
        },
    }


def legacy(key: bytes, account: Any, secret_name: str) -> str:
    """The non-expiring token of Secret `secret_name` for service account `account` (the
    object), with upstream's legacy claims (serviceaccount.LegacyClaims)."""
    meta = account["metadata"]
    namespace, name = meta["namespace"], meta["name"]
    return _sign(
        key,
        {
            "iss": LEGACY_ISSUER,
            "sub": f"system:serviceaccount:{namespace}:{name}",
            "kubernetes.io/serviceaccount/namespace": namespace,
            "kubernetes.io/serviceaccount/secret.name": secret_name,
            "kubernetes.io/serviceaccount/service-account.name": name,
            "kubernetes.io/serviceaccount/service-account.uid": meta["uid"],
        },
    )


def _sign(key: bytes, claims: dict[str, Any]) -> str:
    signed = f"{_b64(orjson.dumps(_HEADER))}.{_b64(orjson.dumps(claims))}"
    return f"{signed}.{_b64(hmac.new(key, signed.encode(), hashlib.sha256).digest())}"


def _is_reference(ref: Any) -> bool:
    fields = ("apiVersion", "kind", "name", "uid")
    return isinstance(ref, dict) and all(isinstance(ref.get(f, ""), str) for f in fields)


def _bound(cluster: Cluster, namespace: str, ref: dict[str, Any]) -> dict[str, str]:
    kind, name, uid = ref.get("kind"), ref.get("name", ""), ref.get("uid", "")
    if kind not in BINDABLE:
        raise _invalid(name, status.not_supported("spec.boundObjectRef.kind", kind, list(BINDABLE)))
    key, namespaced = BINDABLE[kind]
    obj = cluster.store.get(key, namespace if namespaced else "", name)
    if obj is None:
        raise status.not_found(key[1], "", name)
    if uid and obj["metadata"]["uid"] != uid:
        raise status.Conflict(
            f"the UID in the bound object reference ({uid}) does not match the UID in record. The object might have been deleted and then recreated"
        )
    return {"name": name, "uid": obj["metadata"]["uid"]}


def _invalid(name: str, cause: status.Cause) -> status.Invalid:
    return status.invalid_object("TokenRequest", "authentication.k8s.io", name, [cause])


def authenticate(cluster: Cluster, key: bytes, token: str) -> User | None:
    """The service account `token` authenticates, if this cluster issued it, it has not
    expired and the account (same uid) still exists; else None. A legacy token also
    needs its Secret, holding that token and not being deleted.

    Only a token for the API server's own audience is a credential here, as for the API
    server: one issued for another audience (`--audience=vault`) is that audience's.
    """
    parts = token.split(".")
    if len(parts) != 3:
        return None
    expected = hmac.new(key, f"{parts[0]}.{parts[1]}".encode(), hashlib.sha256).digest()
    try:
        if not hmac.compare_digest(_unb64(parts[2]), expected):
            return None
        claims = orjson.loads(_unb64(parts[1]))
        if claims.get("iss") == LEGACY_ISSUER:
            return _legacy_user(cluster, token, claims)
        account = claims["kubernetes.io"]
        namespace, name = account["namespace"], account["serviceaccount"]["name"]
        uid = account["serviceaccount"]["uid"]
        expired = claims["exp"] <= cluster.clock().timestamp()
        audiences = claims["aud"] if isinstance(claims["aud"], list) else [claims["aud"]]
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
    if expired or AUDIENCE not in audiences or _account(cluster, namespace, name, uid) is None:
        return None
    return service_account_user(namespace, name)


def _legacy_user(cluster: Cluster, token: str, claims: dict[str, Any]) -> User | None:
    """As upstream's legacyValidator: the Secret must still exist, not be going away, and
    hold this token; the account must still exist with the uid the token names."""
    namespace = claims["kubernetes.io/serviceaccount/namespace"]
    name = claims["kubernetes.io/serviceaccount/service-account.name"]
    uid = claims["kubernetes.io/serviceaccount/service-account.uid"]
    secret = cluster.store.get(
        _SECRETS, namespace, claims["kubernetes.io/serviceaccount/secret.name"]
    )
    if secret is None or secret["metadata"].get("deletionTimestamp"):
        return None
    held = (secret.get("data") or {}).get(TOKEN_KEY) or ""
    if not hmac.compare_digest(base64.b64decode(held), token.encode()):
        return None
    account = _account(cluster, namespace, name, uid)
    if account is None or account["metadata"].get("deletionTimestamp"):
        return None
    return service_account_user(namespace, name)


def _account(cluster: Cluster, namespace: str, name: str, uid: str) -> dict[str, Any] | None:
    """Service account `namespace/name`, if it exists with `uid`."""
    found = cluster.store.get(_SERVICE_ACCOUNTS, namespace, name)
    return found if found is not None and found["metadata"]["uid"] == uid else None
