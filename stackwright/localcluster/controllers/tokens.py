"""Legacy service account token Secrets: filled when made, deleted with their account.

As kube-controller-manager's serviceaccount-token controller (tokens_controller.go): a
Secret of type `kubernetes.io/service-account-token` whose
`kubernetes.io/service-account.name` annotation names an existing ServiceAccount gets
`data.token` (a non-expiring legacy token, tokens.legacy), `data.ca.crt` (the cluster's
CA) and `data.namespace`, and the `kubernetes.io/service-account.uid` annotation; a token
already there is kept. One naming an account that does not exist (or no longer has the
uid it names) is deleted, as upstream deletes it; deleting an account deletes its token
Secrets. The API server stops accepting a token once its Secret or account is gone.

Must never: replace a token a Secret already holds, or touch a Secret of another type.
"""

from __future__ import annotations

import base64
import copy
from collections.abc import Hashable
from typing import Any

from stackwright.localcluster import status
from stackwright.localcluster.cluster import Cluster, DeleteOptions, WriteOptions
from stackwright.localcluster.controllers.base import Controller
from stackwright.localcluster.controllers.serviceaccounts import SA_MANAGER
from stackwright.localcluster.store import DELETED, Change
from stackwright.localcluster.tokens import ACCOUNT_NAME, ACCOUNT_UID, TOKEN_KEY, legacy

TOKEN_TYPE = "kubernetes.io/service-account-token"
_SA_KEY = ("", "serviceaccounts")
_SECRET_KEY = ("", "secrets")


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _is_token(secret: Any) -> bool:
    return isinstance(secret, dict) and secret.get("type") == TOKEN_TYPE


def _names(secret: dict[str, Any], account: str, uid: str) -> bool:
    """Whether token Secret `secret` belongs to the account `account` with `uid`
    (IsServiceAccountToken: a Secret not naming a uid belongs to any account of that name)."""
    annotations = secret["metadata"].get("annotations") or {}
    return annotations.get(ACCOUNT_NAME) == account and (annotations.get(ACCOUNT_UID) or uid) == uid


def _name_and_uid(account: dict[str, Any]) -> tuple[str, str]:
    return account["metadata"]["name"], account["metadata"]["uid"]


class TokensController(Controller):
    name = "serviceaccount-token-controller"

    def __init__(self, cluster: Cluster, key: bytes, root_ca: str) -> None:
        super().__init__(cluster)
        self.key = key
        self.root_ca = _b64(root_ca) if root_ca else ""

    def keys_for(self, change: Change) -> list[Hashable]:
        if change.key == _SECRET_KEY and change.type != DELETED and _is_token(change.obj):
            return [("secret", change.namespace, change.name)]
        if change.key == _SA_KEY and change.type == DELETED:
            return [("account", change.namespace, change.name, change.obj["metadata"]["uid"])]
        return []

    def initial_keys(self) -> list[Hashable]:
        return [
            ("secret", s["metadata"]["namespace"], s["metadata"]["name"])
            for s in self.cluster.store.items(_SECRET_KEY)
            if _is_token(s)
        ]

    async def reconcile(self, key: Hashable) -> None:
        assert isinstance(key, tuple)
        try:
            if key[0] == "account":
                _, namespace, name, uid = key
                for secret in self.cluster.store.items(_SECRET_KEY, namespace):
                    if _is_token(secret) and _names(secret, name, uid):
                        self._delete(secret)
            else:
                self._sync(key[1], key[2])
        except (status.Conflict, status.NotFound, status.Forbidden, status.Invalid):
            # Raced with a client or a namespace going away (the next change says what to
            # do), or an immutable Secret that cannot be filled, which upstream gives up on.
            return

    def _sync(self, namespace: str, name: str) -> None:
        cluster = self.cluster
        secret = cluster.store.get(_SECRET_KEY, namespace, name)
        if secret is None or not _is_token(secret) or secret["metadata"].get("deletionTimestamp"):
            return
        annotations = secret["metadata"].get("annotations") or {}
        account = cluster.store.get(_SA_KEY, namespace, annotations.get(ACCOUNT_NAME, ""))
        if account is None or not _names(secret, *_name_and_uid(account)):
            self._delete(secret)
            return
        held = secret.get("data") or {}
        data = dict(held)
        if self.root_ca:
            data["ca.crt"] = self.root_ca
        if not data.get("namespace"):
            data["namespace"] = _b64(namespace)
        if not data.get(TOKEN_KEY):
            data[TOKEN_KEY] = _b64(legacy(self.key, account, name))
        if data == held:
            return
        filled = copy.deepcopy(secret)
        filled["data"] = data
        filled["metadata"]["annotations"] = {
            **annotations,
            ACCOUNT_NAME: account["metadata"]["name"],
            ACCOUNT_UID: account["metadata"]["uid"],
        }
        cluster.update(
            cluster.type_for("", "v1", "secrets"),
            namespace,
            name,
            filled,
            WriteOptions(field_manager=SA_MANAGER),
        )

    def _delete(self, secret: dict[str, Any]) -> None:
        meta = secret["metadata"]
        self.cluster.delete(
            self.cluster.type_for("", "v1", "secrets"),
            meta["namespace"],
            meta["name"],
            DeleteOptions(precondition_uid=meta["uid"]),
        )
