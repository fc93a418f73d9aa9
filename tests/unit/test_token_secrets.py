"""Legacy service account token Secrets: filled by the token controller, honoured while they exist.

The controller runs in process over an in-memory store; the tokens it writes are checked
with the API server's own authenticator (tokens.authenticate).
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Awaitable, Callable
from typing import Any

from stackwright.localcluster.cluster import Cluster, DeleteOptions, WriteOptions
from stackwright.localcluster.controllers.tokens import TokensController
from stackwright.localcluster.rbac import service_account_user
from stackwright.localcluster.store import Store
from stackwright.localcluster.tokens import authenticate, issue, signing_key

KEY = signing_key(b"cluster credential")
CA = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
OPTS = WriteOptions(field_manager="test")


def run(scenario: Callable[[Cluster], Awaitable[None]]) -> None:
    async def main() -> None:
        cluster = Cluster(Store(":memory:"))
        namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "app"}}
        cluster.create(cluster.type_for("", "v1", "namespaces"), "", namespace, OPTS)
        task = asyncio.ensure_future(TokensController(cluster, KEY, CA).run())
        try:
            await scenario(cluster)
        finally:
            task.cancel()

    asyncio.run(main())


async def until(check: Callable[[], Any], what: str) -> Any:
    for _ in range(200):
        found = check()
        if found:
            return found
        await asyncio.sleep(0.01)
    raise AssertionError(f"timed out waiting for {what}")


def account(cluster: Cluster, name: str = "deployer") -> dict[str, Any]:
    body = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name}}
    return cluster.create(cluster.type_for("", "v1", "serviceaccounts"), "app", body, OPTS).obj


def token_secret(cluster: Cluster, name: str, account: str = "deployer", **data: str) -> None:
    body = {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "kubernetes.io/service-account-token",
        "metadata": {"name": name, "annotations": {"kubernetes.io/service-account.name": account}},
        "data": {k: base64.b64encode(v.encode()).decode() for k, v in data.items()},
    }
    cluster.create(cluster.type_for("", "v1", "secrets"), "app", body, OPTS)


def secret(cluster: Cluster, name: str) -> dict[str, Any] | None:
    return cluster.store.get(("", "secrets"), "app", name)


def filled(cluster: Cluster, name: str) -> dict[str, str]:
    found = secret(cluster, name)
    data = (found or {}).get("data") or {}
    return {k: base64.b64decode(v).decode() for k, v in data.items()}


def delete(cluster: Cluster, plural: str, name: str) -> None:
    cluster.delete(cluster.type_for("", "v1", plural), "app", name, DeleteOptions())


def test_a_token_secret_is_filled_and_its_token_authenticates_while_it_exists() -> None:
    async def scenario(cluster: Cluster) -> None:
        robot = account(cluster)
        token_secret(cluster, "deployer-token")
        data = await until(lambda: filled(cluster, "deployer-token").get("token") and filled(cluster, "deployer-token"), "the token")  # fmt: skip
        assert data["ca.crt"] == CA and data["namespace"] == "app"
        annotations = (secret(cluster, "deployer-token") or {})["metadata"]["annotations"]
        assert annotations["kubernetes.io/service-account.uid"] == robot["metadata"]["uid"]
        assert authenticate(cluster, KEY, data["token"]) == service_account_user("app", "deployer")
        # A token the Secret does not hold (here: another Secret's) is refused, as is one
        # whose Secret is gone; the account's other credentials are not affected.
        token_secret(cluster, "second")
        second = await until(lambda: filled(cluster, "second").get("token"), "a second token")
        assert second != data["token"]
        delete(cluster, "secrets", "second")
        assert authenticate(cluster, KEY, second) is None
        assert authenticate(cluster, KEY, data["token"]) is not None
        requested = issue(cluster, KEY, "app", "deployer", {"spec": {}})["status"]["token"]
        assert authenticate(cluster, KEY, requested) is not None

    run(scenario)


def test_a_token_already_there_is_kept_and_a_stale_ca_is_replaced() -> None:
    async def scenario(cluster: Cluster) -> None:
        account(cluster)
        token_secret(cluster, "given", token="not-a-jwt", **{"ca.crt": "old"})
        data = await until(lambda: filled(cluster, "given").get("ca.crt") == CA and filled(cluster, "given"), "the CA")  # fmt: skip
        assert data == {"token": "not-a-jwt", "ca.crt": CA, "namespace": "app"}
        assert authenticate(cluster, KEY, "not-a-jwt") is None

    run(scenario)


def test_deleting_the_account_deletes_its_token_secrets_and_voids_their_tokens() -> None:
    async def scenario(cluster: Cluster) -> None:
        account(cluster)
        account(cluster, "other")
        token_secret(cluster, "mine")
        token_secret(cluster, "theirs", account="other")
        token = await until(lambda: filled(cluster, "mine").get("token"), "the token")
        await until(lambda: filled(cluster, "theirs").get("token"), "the other token")
        delete(cluster, "serviceaccounts", "deployer")
        assert authenticate(cluster, KEY, token) is None, "void as soon as its account is gone"
        await until(lambda: secret(cluster, "mine") is None, "the Secret to be deleted")
        assert secret(cluster, "theirs") is not None, "another account's Secret is kept"
        # The same name again is another account: the old token, even put back in a
        # Secret of the new one, names the old uid and stays void.
        account(cluster)
        token_secret(cluster, "mine", token=token)
        await until(lambda: filled(cluster, "mine").get("namespace"), "the Secret to be filled")
        assert filled(cluster, "mine")["token"] == token
        assert authenticate(cluster, KEY, token) is None

    run(scenario)


def test_a_token_secret_naming_no_account_is_deleted_as_upstream_deletes_it() -> None:
    async def scenario(cluster: Cluster) -> None:
        token_secret(cluster, "orphan", account="nobody")
        await until(lambda: secret(cluster, "orphan") is None, "the orphan to be deleted")

    run(scenario)
