"""The store's contract (store.py): a write replaces a stored object, never edits one in
place, so what a reader holds, and what is on disk, stay the object at its resourceVersion.

An update builds its object from the stored one (a /status write all but the status, a
main-resource write the status), then admission edits it in place, defaulting included.
That copy once shared the stored spec, metadata or status: a default the stored object
lacked (its CRD gained one) landed in the stored object itself, with no new
resourceVersion, no watch event and nothing written to disk.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from stackwright.localcluster.cluster import Cluster, WriteOptions
from stackwright.localcluster.controllers.crds import resource_types
from stackwright.localcluster.registry import ResourceType
from stackwright.localcluster.store import Store


def _fields(**types: str) -> dict[str, Any]:
    return {"type": "object", "properties": {k: {"type": t} for k, t in types.items()}}


SCHEMA = _fields()
SCHEMA["properties"] = {
    "spec": _fields(engine="string", size="string"),
    "status": _fields(phase="string"),
}
VERSION = {"name": "v1", "served": True, "storage": True, "subresources": {"status": {}}}
CRD: dict[str, Any] = {
    "metadata": {"name": "databases.acme.io"},
    "spec": {
        "group": "acme.io",
        "scope": "Namespaced",
        "names": {"plural": "databases", "kind": "Database"},
        "versions": [{**VERSION, "schema": {"openAPIV3Schema": SCHEMA}}],
    },
}


def _serve(cluster: Cluster, crd: dict[str, Any]) -> ResourceType:
    (rtype,) = resource_types(crd)
    cluster.registry.add(rtype)
    return rtype


def _with_defaults(crd: dict[str, Any], *, status: bool = True) -> dict[str, Any]:
    """The CRD once its schema defaults spec.size (and status.ready)."""
    changed = copy.deepcopy(crd)
    schema = changed["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    schema["properties"]["spec"]["properties"]["size"]["default"] = "small"
    if status:
        schema["properties"]["status"]["properties"]["ready"] = {
            "type": "boolean",
            "default": False,
        }
    return changed


def _ready_database(cluster: Cluster, databases: ResourceType) -> dict[str, Any]:
    """Database default/db, created then given a status: the stored object."""
    body = {
        "apiVersion": "acme.io/v1",
        "kind": "Database",
        "metadata": {"name": "db"},
        "spec": {"engine": "pg"},
    }
    cluster.create(databases, "default", body, WriteOptions())
    ready = {**body, "status": {"phase": "Ready"}}
    return cluster.update(databases, "default", "db", ready, WriteOptions(), "status").obj


def test_a_status_write_that_defaults_the_spec_is_written_and_watched(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    cluster = Cluster(store)
    databases = _serve(cluster, CRD)
    before = copy.deepcopy(_ready_database(cluster, databases))
    assert "size" not in before["spec"]
    databases = _serve(cluster, _with_defaults(CRD, status=False))  # the CRD gains a default
    changes = store.subscribe(databases.key)

    # The same status again, but defaulting now adds to the spec: a write like any other.
    written = cluster.update(databases, "default", "db", before, WriteOptions(), "status").obj
    assert written["spec"] == {"engine": "pg", "size": "small"}
    assert int(written["metadata"]["resourceVersion"]) > int(before["metadata"]["resourceVersion"])
    # as upstream's status strategy: a status write leaves the generation (a controller's
    # observedGeneration stays caught up)
    assert written["metadata"]["generation"] == before["metadata"]["generation"]
    assert changes.queue.get_nowait().obj == written
    store.close()
    assert Store(tmp_path / "s.db").get(databases.key, "default", "db") == written


@pytest.mark.parametrize("subresource", ["", "status"])
def test_what_a_reader_holds_stays_as_it_was_read(subresource: str) -> None:
    # A write to the main resource keeps the stored status; one to /status the stored rest.
    cluster = Cluster(Store(":memory:"))
    databases = _serve(cluster, CRD)
    held = _ready_database(cluster, databases)
    before = copy.deepcopy(held)
    databases = _serve(cluster, _with_defaults(CRD))
    change = {"spec": {"engine": "mysql"}} if not subresource else {"status": {"phase": "Gone"}}
    cluster.update(databases, "default", "db", {**held, **change}, WriteOptions(), subresource)
    assert held == before
