"""The warning a CRD's delete carries (`engine.crd_deletes`), against the fake cluster:
how many objects of its kind exist, where, and which are not the stack's; a count past
the one LIST's limit; and an unknown count when the kind cannot be listed."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from stackwright.engine import crd_deletes
from stackwright.engine.testing import FakeCluster
from stackwright.model import URN_ANNOTATION, ResourceState

CRD_URN = "urn:sw:dev::shop::kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition::dbs"
CRD = ResourceState(
    urn=CRD_URN,
    type="kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition",
    id="databases.acme.io",
    inputs={
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "databases.acme.io"},
        "spec": {
            "group": "acme.io",
            "scope": "Namespaced",
            "names": {"plural": "databases", "kind": "Database"},
            "versions": [
                {"name": "v1beta1", "served": True, "storage": False},
                {"name": "v1", "served": True, "storage": True},
            ],
        },
    },
)


def _database(cluster: FakeCluster, namespace: str, name: str, urn: str = "") -> None:
    annotations = {URN_ANNOTATION: urn} if urn else {}
    cluster.put(
        {
            "apiVersion": "acme.io/v1",
            "kind": "Database",
            "metadata": {"name": name, "namespace": namespace, "annotations": annotations},
        }
    )


def _cluster() -> FakeCluster:
    cluster = FakeCluster()
    cluster.served["acme.io", "Database"] = True
    _database(cluster, "shop", "mine", "urn:sw:dev::shop::kubernetes:acme.io/v1:Database::mine")
    # Another stack of the project, and the same stack name of another project.
    _database(cluster, "shop", "main", "urn:sw:prod::shop::kubernetes:acme.io/v1:Database::m")
    _database(cluster, "billing", "db", "urn:sw:dev::billing::kubernetes:acme.io/v1:Database::d")
    _database(cluster, "billing", "by-hand")
    _database(cluster, "ops", "old")
    return cluster


def _message(cluster: FakeCluster) -> Any:
    diagnostic = asyncio.run(crd_deletes.census(cluster, CRD))
    assert diagnostic is not None and diagnostic.urn == CRD_URN
    return diagnostic


def test_counts_the_objects_of_the_kind_and_names_those_not_the_stacks() -> None:
    cluster = _cluster()
    diagnostic = _message(cluster)
    assert diagnostic.severity == "warning"
    assert diagnostic.message == (
        "deleting CRD databases.acme.io deletes every Database in the cluster: 5 objects in "
        "3 namespaces, 4 of them not this stack's (shop/main, billing/db, billing/by-hand, …)"
    )
    assert [c for c in cluster.calls if c.method == "list"] == cluster.calls[-1:]  # one LIST


def test_only_the_stacks_own_or_none_is_information() -> None:
    cluster = FakeCluster()
    cluster.served["acme.io", "Database"] = True
    assert _message(cluster).severity == "info"
    assert _message(cluster).message.endswith("in the cluster: there are none now")
    _database(cluster, "shop", "mine", "urn:sw:dev::shop::kubernetes:acme.io/v1:Database::mine")
    diagnostic = _message(cluster)
    assert diagnostic.severity == "info"
    assert diagnostic.message.endswith(": 1 object in 1 namespace, all this stack's")


def test_one_bounded_list_counts_past_its_page(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(crd_deletes, "LIST_LIMIT", 2)
    assert _message(_cluster()).message.endswith(
        "in the cluster: 5 objects; the first 2 listed are in 1 namespace, "
        "1 of them not this stack's (shop/main)"
    )


def test_a_kind_that_cannot_be_listed_makes_the_count_unknown() -> None:
    diagnostic = _message(FakeCluster())  # the kind is not served
    assert diagnostic.severity == "warning"
    assert diagnostic.message.startswith(
        "deleting CRD databases.acme.io deletes every Database in the cluster; how many "
        "exist is unknown: listing them failed: the server doesn't have a resource type Database"
    )
