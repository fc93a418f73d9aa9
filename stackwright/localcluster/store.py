"""The local cluster's object store: every object in memory, every write in SQLite.

Plays the part etcd plays for a kube-apiserver. Reads are served from memory;
each write is committed to SQLite (WAL) before it becomes visible, so a restart
finds every object with the same uid and resourceVersion. One counter numbers
all writes (the cluster-wide resourceVersion), and a bounded log of recent
changes lets watchers resume from a resourceVersion — or learn with 410 that it
is too old, as after an etcd compaction.

The store never interprets objects beyond their identity: validation, defaulting
and merge semantics belong to the API layer above it. Stored objects are treated
as immutable: a write replaces the dict, it never edits one in place, so a
reader may hold on to what it was given.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from stackwright.files import private_file

Obj = dict[str, Any]
#: (group, plural) — every version of a kind shares its objects.
TypeKey = tuple[str, str]
#: (namespace, name); namespace is "" for cluster-scoped objects.
ObjKey = tuple[str, str]

log = logging.getLogger("stackwright.localcluster")

ADDED, MODIFIED, DELETED = "ADDED", "MODIFIED", "DELETED"


@dataclass(frozen=True, slots=True)
class Change:
    """One committed write, as watchers see it."""

    rv: int
    type: str  # ADDED / MODIFIED / DELETED
    key: TypeKey
    namespace: str
    name: str
    obj: Obj
    #: The object before the change (None for ADDED): lets a filtered watch tell
    #: "stopped matching" (sent as DELETED) from "never matched".
    old: Obj | None


class TooOld(Exception):
    """A watch asked to resume before the oldest change still remembered."""

    def __init__(self, requested: int, oldest: int) -> None:
        super().__init__(f"too old resource version: {requested} ({oldest})")
        self.requested = requested
        self.oldest = oldest


class Subscription:
    """A watcher's queue of changes for one type (or every type, when key is None)."""

    def __init__(self, store: Store, key: TypeKey | None) -> None:
        self._store = store
        self.key = key
        self.queue: asyncio.Queue[Change] = asyncio.Queue()

    def offer(self, change: Change) -> None:
        if self.key is None or self.key == change.key:
            self.queue.put_nowait(change)

    def close(self) -> None:
        self._store._subscriptions.discard(self)


_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS objects (
    grp TEXT NOT NULL, resource TEXT NOT NULL, namespace TEXT NOT NULL, name TEXT NOT NULL,
    rv INTEGER NOT NULL, body BLOB NOT NULL,
    PRIMARY KEY (grp, resource, namespace, name)
);
"""


class Store:
    """Objects by type and (namespace, name), persisted to `path` (":memory:" for none)."""

    def __init__(self, path: Path | str, *, history: int = 10_000) -> None:
        if str(path) != ":memory:":
            private_file(path)  # it holds every Secret of the cluster
        self._db = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        # NORMAL in WAL mode survives a process crash (the only crash a local cluster
        # must survive); it skips the fsync per commit that FULL would cost.
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)
        self._objects: dict[TypeKey, dict[ObjKey, Obj]] = {}
        self._log: deque[Change] = deque(maxlen=history)
        self._subscriptions: set[Subscription] = set()
        self._listeners: list[Callable[[Change], None]] = []
        row = self._db.execute("SELECT value FROM meta WHERE key = 'rv'").fetchone()
        self._rv = int(row[0]) if row else 1
        for grp, resource, namespace, name, body in self._db.execute(
            "SELECT grp, resource, namespace, name, body FROM objects"
        ):
            self._objects.setdefault((grp, resource), {})[(namespace, name)] = orjson.loads(body)
        # A watch may resume from `_oldest` or later: changes after it are all in the
        # log. Nothing before this start can be replayed, so an older resourceVersion
        # gets 410, as after a kube-apiserver restart.
        self._oldest = self._rv

    # --- reads -------------------------------------------------------------

    @property
    def resource_version(self) -> int:
        """The resourceVersion of the latest committed write."""
        return self._rv

    def get(self, key: TypeKey, namespace: str, name: str) -> Obj | None:
        return self._objects.get(key, {}).get((namespace, name))

    def items(self, key: TypeKey, namespace: str | None = None) -> list[Obj]:
        """Objects of a type, sorted by (namespace, name); namespace None means all."""
        objects = self._objects.get(key, {})
        if namespace is None:
            return [objects[k] for k in sorted(objects)]
        return [objects[k] for k in sorted(objects) if k[0] == namespace]

    def count(self, key: TypeKey) -> int:
        return len(self._objects.get(key, {}))

    def type_keys(self) -> Iterator[TypeKey]:
        return iter(list(self._objects))

    def changes_since(self, rv: int) -> list[Change]:
        """Remembered changes after `rv`; raises TooOld when some may have been forgotten."""
        if rv < self._oldest:
            raise TooOld(rv, self._oldest)
        return [c for c in self._log if c.rv > rv]

    # --- writes ------------------------------------------------------------

    def next_resource_version(self) -> int:
        """Reserve the resourceVersion the next write will carry."""
        return self._rv + 1

    def put(self, key: TypeKey, obj: Obj, old: Obj | None) -> Change:
        """Commit a create (old None) or an update; `obj` must already carry its new resourceVersion."""
        meta = obj["metadata"]
        namespace, name = meta.get("namespace", ""), meta["name"]
        rv = int(meta["resourceVersion"])
        self._commit(
            "INSERT OR REPLACE INTO objects VALUES (?, ?, ?, ?, ?, ?)",
            (key[0], key[1], namespace, name, rv, orjson.dumps(obj)),
            rv,
        )
        self._objects.setdefault(key, {})[(namespace, name)] = obj
        return self._publish(Change(rv, MODIFIED if old else ADDED, key, namespace, name, obj, old))

    def remove(self, key: TypeKey, obj: Obj) -> Change:
        """Commit a deletion; `obj` is the final state, carrying the deletion's resourceVersion."""
        meta = obj["metadata"]
        namespace, name = meta.get("namespace", ""), meta["name"]
        rv = int(meta["resourceVersion"])
        self._commit(
            "DELETE FROM objects WHERE grp = ? AND resource = ? AND namespace = ? AND name = ?",
            (key[0], key[1], namespace, name),
            rv,
        )
        old = self._objects.get(key, {}).pop((namespace, name), None)
        return self._publish(Change(rv, DELETED, key, namespace, name, obj, old))

    def _commit(self, sql: str, args: tuple[Any, ...], rv: int) -> None:
        if rv != self._rv + 1:
            raise RuntimeError(f"resourceVersion {rv} written out of order (last {self._rv})")
        db = self._db
        db.execute("BEGIN")
        try:
            db.execute(sql, args)
            db.execute("INSERT OR REPLACE INTO meta VALUES ('rv', ?)", (str(rv),))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        self._rv = rv

    def _publish(self, change: Change) -> Change:
        if len(self._log) == self._log.maxlen:
            # The change about to be forgotten can no longer be replayed.
            self._oldest = self._log[0].rv
        self._log.append(change)
        for subscription in list(self._subscriptions):
            subscription.offer(change)
        for listener in list(self._listeners):
            try:
                listener(change)
            except Exception:  # the write is committed; a listener's bug must not undo its reply
                log.exception(
                    "store listener failed on %s %s/%s", change.type, change.namespace, change.name
                )
        return change

    # --- watching ----------------------------------------------------------

    def subscribe(self, key: TypeKey | None) -> Subscription:
        subscription = Subscription(self, key)
        self._subscriptions.add(subscription)
        return subscription

    def add_listener(self, listener: Callable[[Change], None]) -> None:
        """Call `listener` synchronously after every committed change (in-process controllers)."""
        self._listeners.append(listener)

    def close(self) -> None:
        self._db.close()
