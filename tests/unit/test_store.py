"""The store: persistence across reopen, one resourceVersion counter, bounded watch history."""

from __future__ import annotations

from pathlib import Path

import pytest

from stackwright.localcluster.store import ADDED, DELETED, MODIFIED, Store, TooOld

KEY = ("", "configmaps")


def obj(name: str, rv: int, **data: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default", "resourceVersion": str(rv)},
        "data": data,
    }


def test_writes_survive_reopen_with_their_resource_versions(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    first = obj("a", store.next_resource_version(), v="1")
    store.put(KEY, first, None)
    second = obj("b", store.next_resource_version())
    store.put(KEY, second, None)
    store.close()
    reopened = Store(tmp_path / "s.db")
    assert reopened.resource_version == 3
    assert reopened.get(KEY, "default", "a") == first
    assert [o["metadata"]["name"] for o in reopened.items(KEY)] == ["a", "b"]


def test_watch_history_replays_then_forgets(tmp_path: Path) -> None:
    store = Store(":memory:", history=3)
    start = store.resource_version
    current = None
    for value in "1234":
        new = obj("a", store.next_resource_version(), v=value)
        store.put(KEY, new, current)
        current = new
    # Four changes, three remembered: resuming from `start` would miss the first.
    with pytest.raises(TooOld) as caught:
        store.changes_since(start)
    assert str(caught.value) == f"too old resource version: {start} ({start + 1})"
    replay = store.changes_since(start + 1)
    assert [c.type for c in replay] == [MODIFIED, MODIFIED, MODIFIED]
    gone = dict(
        current,
        metadata={**current["metadata"], "resourceVersion": str(store.next_resource_version())},
    )
    change = store.remove(KEY, gone)
    assert change.type == DELETED and store.get(KEY, "default", "a") is None


def test_reopened_store_cannot_replay_older_changes(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    store.put(KEY, obj("a", store.next_resource_version()), None)
    store.close()
    reopened = Store(tmp_path / "s.db")
    with pytest.raises(TooOld):
        reopened.changes_since(1)
    assert reopened.changes_since(reopened.resource_version) == []


def test_out_of_order_write_is_refused() -> None:
    store = Store(":memory:")
    with pytest.raises(RuntimeError):
        store.put(KEY, obj("a", store.resource_version + 5), None)
    assert store.put(KEY, obj("a", store.next_resource_version()), None).type == ADDED
