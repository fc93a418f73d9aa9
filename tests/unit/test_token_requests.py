"""TokenRequests answered by the local cluster, and the tokens it then authenticates."""

from __future__ import annotations

from typing import Any

import pytest

from stackwright.localcluster import status
from stackwright.localcluster.cluster import Cluster, WriteOptions
from stackwright.localcluster.store import Store
from stackwright.localcluster.tokens import authenticate, issue, signing_key

KEY = signing_key(b"cluster credential")


@pytest.fixture
def cluster() -> Cluster:
    cluster = Cluster(Store(":memory:"))
    account = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "robot"}}
    cluster.create(
        cluster.type_for("", "v1", "serviceaccounts"), "default", account, WriteOptions()
    )
    return cluster


def token(cluster: Cluster, **spec: Any) -> str:
    answer = issue(cluster, KEY, "default", "robot", {"spec": spec})
    return str(answer["status"]["token"])


def test_only_a_token_for_the_api_servers_audience_is_a_credential(cluster: Cluster) -> None:
    assert authenticate(cluster, KEY, token(cluster))
    assert authenticate(cluster, KEY, token(cluster, audiences=["vault", "https://kubernetes.default.svc.cluster.local"]))  # fmt: skip
    assert not authenticate(cluster, KEY, token(cluster, audiences=["vault"]))


@pytest.mark.parametrize(
    "spec",
    [
        {"boundObjectRef": "holder"},
        {"boundObjectRef": ["Pod", "holder"]},
        {"boundObjectRef": {"kind": ["Pod"], "name": "holder"}},
        {"boundObjectRef": {"kind": "Pod", "name": {"n": 1}}},
        "a string",
    ],
)
def test_a_malformed_request_is_a_bad_request(cluster: Cluster, spec: Any) -> None:
    with pytest.raises(status.BadRequest, match="must be an object"):
        issue(cluster, KEY, "default", "robot", {"spec": spec})


def test_an_unbindable_kind_and_a_short_duration_are_invalid(cluster: Cluster) -> None:
    with pytest.raises(status.Invalid, match=r'TokenRequest.authentication.k8s.io "x" is invalid: spec.boundObjectRef.kind: Unsupported value: "Service"'):  # fmt: skip
        issue(cluster, KEY, "default", "robot", {"spec": {"boundObjectRef": {"kind": "Service", "name": "x"}}})  # fmt: skip
    with pytest.raises(status.Invalid, match=r"spec\.expirationSeconds: Invalid value: 60"):
        issue(cluster, KEY, "default", "robot", {"spec": {"expirationSeconds": 60}})
