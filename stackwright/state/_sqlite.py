"""The SQLite state backend: the default store, one file shared by every `stackwright` process.

Tables (schema version 3; an older store, which has no `snapshots` (1) or `released` (2),
is moved on open):

    meta       key → value                      the schema version; per stack, its secrets
                                                provider, its former names and the cluster
                                                its default provider talked to
    stacks     id, project, name, created, updated, version, outputs
    locks      stack_id → operation_id (NULL when free), kind, owner, host, pid, started, expires
    resources  rid, stack_id, urn, delete_pending, cluster_id, seq, data
    pending    id, stack_id, operation_id, step, op, urn, data
    history    id, stack_id, kind, message, owner, host, pid, started, ended, result, counts
    snapshots  history_id, stack_id, version, data    the state each operation left (`_saved`)
    released   stack_id, urn, name                    auto-names let go of with their objects
                                                      left in the cluster (`Snapshot.released_names`)

A journaled step is two small transactions: `begin` inserts a `pending` row;
`end` deletes it and upserts or deletes one `resources` row (moving it last in
`seq`), so work grows with the steps taken, never with the size of the stack.
Every transaction is `BEGIN IMMEDIATE` (writers queue on SQLite's write lock with
a busy timeout instead of failing on an upgrade) and starts by checking that the
operation still holds its stack's lock (fencing).

Durability: WAL with `synchronous=NORMAL` by default. A commit is then in the WAL
file (the OS page cache) before `begin` returns, so it survives the engine being
killed at any instant; what NORMAL gives up is the last commits before a power
loss or kernel crash (the database stays consistent). `file://PATH?synchronous=full`
fsyncs every commit for power-loss durability; measured on the 2-core CI machine
(`benchmarks/state_journal.py`) it halves journal throughput: 1,600-1,900 against
3,300-4,200 begin+end steps a second.

This module must never decide what a step means (`_journal` does) or how a lock
message reads (`_records` does), and never holds a transaction open across a call
to the cluster: each method is one transaction.
"""

from __future__ import annotations

import contextlib
import difflib
import getpass
import os
import shlex
import socket
import sqlite3
import threading
import time
import weakref
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from types import TracebackType
from typing import Any, Final, Self

import orjson

from stackwright.errors import StackLocked, StackwrightError, UsageError
from stackwright.files import private_file
from stackwright.model import (
    URN_ANNOTATION,
    ClusterIdentity,
    Op,
    PendingOperation,
    ResourceState,
    name_problem,
    parse_urn,
    released_auto_name,
)
from stackwright.processes import gone
from stackwright.state import _document, _saved
from stackwright.state._codec import (
    Invalid,
    decode_resource,
    encode_json,
    encode_resource,
    op_named,
)
from stackwright.state._integrity import check_and_order, references
from stackwright.state._journal import Demote, Effect, Put, Release, Remove, counted, effects
from stackwright.state._lease import LeaseKeeper
from stackwright.state._records import (
    FINISH_RESULTS,
    IN_PROGRESS,
    INTERRUPTED,
    STATE_IMPORT,
    UPDATE_KINDS,
    HistoryEntry,
    LockHolder,
    Snapshot,
    StackSummary,
    timestamp,
)
from stackwright.state._secrets import Encrypter, PlaintextEncrypter
from stackwright.state.errors import LockLost, StateCorrupt

SCHEMA_VERSION: Final = 3

_TABLES: Final = (
    "meta",
    "stacks",
    "locks",
    "resources",
    "pending",
    "history",
    "snapshots",
    "released",
)

#: The statements that move a store of each older schema version to the next. Version 2
#: added the state each operation left; a version-1 store's history has none saved.
#: Version 3 added the auto-names let go of; an older store let go of none it knew.
_MIGRATIONS: Final[dict[int, tuple[str, ...]]] = {
    1: (
        # One row per history entry that has ended; `data` is NULL when the stack's state
        # version did not move since an earlier entry whose row holds it (a no-op `up`
        # saves no second copy). The index finds that row, and a stack's rows to remove.
        """CREATE TABLE IF NOT EXISTS snapshots (
            history_id INTEGER PRIMARY KEY,
            stack_id INTEGER NOT NULL,
            version INTEGER NOT NULL,
            data BLOB)""",
        "CREATE INDEX IF NOT EXISTS snapshots_version ON snapshots (stack_id, version)",
    ),
    2: (
        # A row per name a retained delete or `state delete` let go of; rare, so the key is
        # its only index, and a release written twice (a settled step) stays one row.
        """CREATE TABLE IF NOT EXISTS released (
            stack_id INTEGER NOT NULL,
            urn TEXT NOT NULL,
            name TEXT NOT NULL,
            PRIMARY KEY (stack_id, urn, name))""",
    ),
}

_SCHEMA: Final = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE IF NOT EXISTS stacks (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        project TEXT NOT NULL,
        name TEXT NOT NULL,
        created REAL NOT NULL,
        updated REAL NOT NULL,
        version INTEGER NOT NULL,
        outputs BLOB NOT NULL,
        UNIQUE (project, name))""",
    # One row per stack, created with it; operation_id is NULL while the stack is
    # free. Taking the lock is a compare-and-set on operation_id, which is also the
    # fencing token every journal write checks (history ids are never reused).
    """CREATE TABLE IF NOT EXISTS locks (
        stack_id INTEGER PRIMARY KEY,
        operation_id INTEGER,
        kind TEXT, owner TEXT, host TEXT, pid INTEGER, started REAL, expires REAL)""",
    # delete_pending and cluster_id are columns (not only payload) so a row can be
    # found, and an old object demoted after its replacement, without decoding.
    # One index only: a commit appends every page it touched to the WAL, so each
    # index costs every step a page (measured: 3 indexes on resources and 2 on
    # pending made a step 1.5x slower). Uniqueness of live URNs is kept by `_apply`
    # (an upsert inside the fenced transaction) and checked by `load`; order is
    # sorted from `seq` at load; pending holds only steps in flight, so it is scanned.
    """CREATE TABLE IF NOT EXISTS resources (
        rid INTEGER PRIMARY KEY,
        stack_id INTEGER NOT NULL,
        urn TEXT NOT NULL,
        delete_pending INTEGER NOT NULL,
        cluster_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        data BLOB NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS resources_urn ON resources (stack_id, urn, delete_pending, cluster_id)",
    """CREATE TABLE IF NOT EXISTS pending (
        id INTEGER PRIMARY KEY,
        stack_id INTEGER NOT NULL,
        operation_id INTEGER NOT NULL,
        step INTEGER NOT NULL,
        op TEXT NOT NULL,
        urn TEXT NOT NULL,
        data BLOB NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS history (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        stack_id INTEGER NOT NULL,
        kind TEXT NOT NULL,
        message TEXT NOT NULL,
        owner TEXT NOT NULL,
        host TEXT NOT NULL,
        pid INTEGER NOT NULL,
        started REAL NOT NULL,
        ended REAL,
        result TEXT NOT NULL,
        counts BLOB NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS history_stack ON history (stack_id, id)",
    *_MIGRATIONS[1],
    *_MIGRATIONS[2],
)

_FIX: Final = "the state was edited or damaged — restore it with `stackwright stack import`"
#: Bytes counted for an integer or real column.
_NUMBER: Final = 8
_SYNCHRONOUS: Final = ("normal", "full")
_RELEASE: Final = (
    "UPDATE locks SET operation_id = NULL, kind = NULL, owner = NULL, host = NULL, pid = NULL, "
    "started = NULL, expires = NULL WHERE stack_id = ?"
)
#: The operation id of pending steps restored by `import_` (real operations start at 1).
_IMPORTED: Final = 0
#: A stack's history entries numbered within it (1, 2, 3 …, as Pulumi's update versions),
#: not by the table's id that every stack of the store shares: `stack history`'s numbers.
_NUMBERED: Final = (
    "SELECT ROW_NUMBER() OVER (ORDER BY id) AS version, * FROM history WHERE stack_id = ?"
)


def _utf8(text: str) -> int:
    return len(text.encode())


def _resource_row_bytes(urn: str, cluster_id: str, blob: bytes) -> int:
    # stack_id, delete_pending, seq + the text and payload.
    return _utf8(urn) + _utf8(cluster_id) + len(blob) + 3 * _NUMBER


def _pending_row_bytes(op: str, urn: str, blob: bytes) -> int:
    # stack_id, operation_id, step + the text and payload.
    return _utf8(op) + _utf8(urn) + len(blob) + 3 * _NUMBER


def _translate(error: sqlite3.Error, path: str, busy_timeout: float) -> StackwrightError:
    """SQLite's error in the words of a user who never saw the database."""
    text = str(error)
    if "locked" in text or "busy" in text:
        return StackwrightError(
            f"the state store {path} is busy: another process kept it locked for more "
            f"than {busy_timeout:g}s; try again"
        )
    if "malformed" in text or "not a database" in text or "corrupt" in text:
        return StateCorrupt(
            f"the state store {path} is damaged (SQLite: {text}); move it aside and restore "
            "each stack with `stackwright stack import` from an export"
        )
    if "readonly" in text or "unable to open" in text:
        return StackwrightError(
            f"cannot write the state store {path} ({text}); check its permissions"
        )
    return StackwrightError(f"the state store {path} failed: {text}")


def _user() -> str:
    """Who runs the operation, as a lock's holder and the history name it; in a CI job, with
    the job's address (every runner is `runner` or `root` on a host that is gone by the time
    someone reads "locked by", so the user alone tells nobody which job to look at)."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        # A container user with no passwd entry.
        user = f"uid {os.getuid()}"
    job = ci_job_url(os.environ)
    return f"{user} (CI job {job})" if job else user


def ci_job_url(env: Mapping[str, str]) -> str:
    """The address of the CI job running this process, from the variables its CI system sets
    in every job; "" when none does."""
    if env.get("GITHUB_RUN_ID") and env.get("GITHUB_REPOSITORY"):
        server = env.get("GITHUB_SERVER_URL") or "https://github.com"
        return f"{server}/{env['GITHUB_REPOSITORY']}/actions/runs/{env['GITHUB_RUN_ID']}"
    if env.get("SYSTEM_COLLECTIONURI") and env.get("BUILD_BUILDID"):  # Azure Pipelines
        collection, project = env["SYSTEM_COLLECTIONURI"], env.get("SYSTEM_TEAMPROJECT", "")
        return f"{collection}{project}/_build/results?buildId={env['BUILD_BUILDID']}"
    if env.get("BITBUCKET_GIT_HTTP_ORIGIN") and env.get("BITBUCKET_BUILD_NUMBER"):
        origin, number = env["BITBUCKET_GIT_HTTP_ORIGIN"], env["BITBUCKET_BUILD_NUMBER"]
        return f"{origin}/addon/pipelines/home#!/results/{number}"
    for name in _CI_JOB_URLS:
        if env.get(name):
            return env[name]
    return ""


#: Variables holding the job's address whole: GitLab CI, Buildkite, CircleCI, Travis CI,
#: Jenkins (last: its name is the most generic).
_CI_JOB_URLS: Final = (
    "CI_JOB_URL",
    "BUILDKITE_BUILD_URL",
    "CIRCLE_BUILD_URL",
    "TRAVIS_BUILD_WEB_URL",
    "BUILD_URL",
)


class _Connection:
    """One SQLite connection, serialized by a mutex, with one-transaction helpers.

    Connections are never shared between an operation, its lease keeper and the
    backend, so a long load cannot delay a renewal.
    """

    def __init__(self, path: str, *, synchronous: str, busy_timeout: float) -> None:
        self.path = path
        self.busy_timeout = busy_timeout
        self.mutex = threading.RLock()
        try:
            if path != ":memory:" and not path.startswith("file:"):
                private_file(path)  # what the state records of the cluster is the owner's
            self.db = sqlite3.connect(
                path, timeout=busy_timeout, isolation_level=None, check_same_thread=False
            )
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute(f"PRAGMA synchronous={synchronous.upper()}")
        except sqlite3.Error as error:
            raise _translate(error, path, busy_timeout) from error

    @contextlib.contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        with self.mutex, self._translated():
            self.db.execute("BEGIN IMMEDIATE")
            try:
                yield self.db
                self.db.execute("COMMIT")
            except BaseException:
                if self.db.in_transaction:
                    self.db.execute("ROLLBACK")
                raise

    @contextlib.contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        # A deferred transaction: every SELECT inside sees the same snapshot.
        with self.mutex, self._translated():
            self.db.execute("BEGIN")
            try:
                yield self.db
            finally:
                if self.db.in_transaction:
                    self.db.execute("COMMIT")

    @contextlib.contextmanager
    def _translated(self) -> Iterator[None]:
        try:
            yield
        except sqlite3.Error as error:
            raise _translate(error, self.path, self.busy_timeout) from error

    def close(self) -> None:
        with self.mutex:
            self.db.close()


def _validate_name(what: str, name: str) -> None:
    problem = name_problem(what, name)
    if problem:
        raise UsageError(problem)


#: The columns of a held lock, with the type each must have.
_LOCK_COLUMNS: Final = (
    ("operation_id", int),
    ("kind", str),
    ("owner", str),
    ("host", str),
    ("pid", int),
    ("started", float),
    ("expires", float),
)
#: The times a message can show (datetime's years 1970 to 9999).
_LAST_TIME: Final = 253402300800.0


def _holder(db: sqlite3.Connection, stack_id: int, row: Sequence[Any]) -> LockHolder:
    """The holder a held lock row names; StateCorrupt naming the column an edit broke
    (`cancel` clears such a row without reading it)."""
    for (column, kind), value in zip(_LOCK_COLUMNS, row, strict=True):
        fits = isinstance(value, kind) or (kind is float and isinstance(value, int))
        if not fits or (kind is float and not 0 <= value < _LAST_TIME):
            (stack,) = db.execute("SELECT name FROM stacks WHERE id = ?", (stack_id,)).fetchone()
            raise StateCorrupt(
                f"the lock of stack {stack} is damaged ({column} is {value!r}); the state store "
                "was edited — run `stackwright cancel` to clear it"
            )
    operation_id, kind_, owner, host, pid, started, expires = row
    return LockHolder(operation_id, kind_, owner, host, pid, timestamp(started), timestamp(expires))


def _read_holder(db: sqlite3.Connection, stack_id: int) -> LockHolder | None:
    row = db.execute(
        "SELECT operation_id, kind, owner, host, pid, started, expires FROM locks WHERE stack_id = ?",
        (stack_id,),
    ).fetchone()
    if row is None or row[0] is None:
        return None
    return _holder(db, stack_id, row)


def _unless_held(
    db: sqlite3.Connection, stack_id: int, stack: str, now: float
) -> LockHolder | None:
    """The stack's lock holder, None when free; StackLocked while that holder may still be
    running (a lapsed or dead one is returned, for the caller to take over)."""
    holder = _read_holder(db, stack_id)
    if holder is not None and _alive(holder, now):
        raise StackLocked(_locked_message(stack, holder, now))
    return holder


def _locked_message(stack: str, holder: LockHolder, now: float) -> str:
    return (
        f"stack {stack} is locked by {holder.describe(timestamp(now))}; wait for it to finish, "
        "or run `stackwright cancel` if it is no longer running"
    )


def _alive(holder: LockHolder | None, now: float) -> bool:
    """Whether `holder`'s operation may still be running: its lease not lapsed, nor its
    process gone from this host (`_died_here`). If not, the lock is free to take."""
    return holder is not None and holder.expires.timestamp() > now and not _died_here(holder)


def _died_here(holder: LockHolder) -> bool:
    """Whether the holder ran on this host and its process is gone (killed, crashed).

    Its lease would lapse on its own; a process on the same host can tell at once,
    so `up` after a kill -9 need not wait for the lease or a `cancel`. A pid reused
    by another process only makes the holder look alive: never a wrong takeover.
    """
    if holder.host != socket.gethostname() or holder.pid == os.getpid():
        return False
    return gone(holder.pid)


def _migrate(db: sqlite3.Connection) -> None:
    """Move a store of an older schema version to this one in the caller's transaction,
    each version's statements in turn. A version with none (this one, a newer one, a
    damaged value) is left as it is, for `_check_schema` to judge."""
    row = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    if row is None or not str(row[0]).isdigit() or int(row[0]) not in _MIGRATIONS:
        return
    version = int(row[0])
    while version in _MIGRATIONS:
        for statement in _MIGRATIONS[version]:
            db.execute(statement)
        version += 1
    db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(version),))


def _mark_interrupted(db: sqlite3.Connection, stack_id: int, operation_id: int, now: float) -> None:
    """Close the history entry of an operation whose lock is taken over, saving the state
    it left: nothing can change that state between its end and this transaction."""
    closed = db.execute(
        "UPDATE history SET result = ?, ended = ? WHERE id = ? AND result = ?",
        (INTERRUPTED, now, operation_id, IN_PROGRESS),
    )
    if closed.rowcount:
        _save_state(db, stack_id, operation_id)


def _save_state(db: sqlite3.Connection, stack_id: int, history_id: int) -> int:
    """Save the stack's state as it now is under its history entry `history_id`, in the
    caller's transaction (the one that ends that entry); the bytes of the copy written."""
    project, stack, version, outputs = db.execute(
        "SELECT project, name, version, outputs FROM stacks WHERE id = ?", (stack_id,)
    ).fetchone()
    same = db.execute(
        "SELECT 1 FROM snapshots WHERE stack_id = ? AND version = ? AND data IS NOT NULL LIMIT 1",
        (stack_id, version),
    ).fetchone()
    blob = None
    if same is None:
        resources = db.execute(
            "SELECT data, delete_pending FROM resources WHERE stack_id = ? ORDER BY seq, rid",
            (stack_id,),
        ).fetchall()
        pending = db.execute(
            "SELECT op, data FROM pending WHERE stack_id = ? ORDER BY id", (stack_id,)
        ).fetchall()
        blob = _saved.pack(
            project=project,
            stack=stack,
            resources=resources,
            pending=pending,
            outputs=outputs,
            former_names=_read_former(db, project, stack),
            default_cluster=_read_default_cluster(db, project, stack),
            released_names=_read_released(db, stack_id),
        )
    db.execute(
        "INSERT OR REPLACE INTO snapshots (history_id, stack_id, version, data) VALUES (?, ?, ?, ?)",
        (history_id, stack_id, version, blob),
    )
    # Counted as the history row is not: a row that only points at an earlier copy is the
    # history's bookkeeping, so an operation that changed nothing still writes no payload.
    return len(blob) if blob is not None else 0


@dataclass
class _Begun:
    op: Op
    resource: ResourceState
    row: int


@dataclass(frozen=True)
class _Row:
    rid: int
    state: ResourceState


class SQLiteBackend:
    """The `Backend` on one SQLite file; safe to use from several threads and processes.

    `clock` (wall-clock seconds) times leases and history; tests pass a fake one.
    `encrypter` is the secrets seam (see `_secrets`).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        synchronous: str = "normal",
        busy_timeout: float = 10.0,
        clock: Callable[[], float] = time.time,
        encrypter: Encrypter | None = None,
    ) -> None:
        if synchronous.lower() not in _SYNCHRONOUS:
            raise UsageError(
                f"synchronous={synchronous!r} is not a SQLite state store option: use normal or full"
            )
        self.path = Path(path)
        self._synchronous = synchronous.lower()
        self._busy_timeout = busy_timeout
        self._clock = clock
        self._encrypter: Encrypter = encrypter or PlaintextEncrypter()
        self._conn = self._connect()
        self._init_schema()

    # --- plumbing ----------------------------------------------------------

    @property
    def url(self) -> str:
        suffix = "?synchronous=full" if self._synchronous == "full" else ""
        return f"file://{self.path}{suffix}"

    def _connect(self) -> _Connection:
        return _Connection(
            str(self.path), synchronous=self._synchronous, busy_timeout=self._busy_timeout
        )

    def _init_schema(self) -> None:
        with self._conn.write() as db:
            tables = {
                row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            }
            if not tables & set(_TABLES):
                if tables - {"sqlite_sequence"}:
                    raise UsageError(
                        f"{self.path} is a SQLite database but not a Stackwright state store; "
                        "point the backend URL at another file"
                    )
                for statement in _SCHEMA:
                    db.execute(statement)
                db.execute(
                    "INSERT INTO meta (key, value) VALUES ('schema_version', ?)",
                    (str(SCHEMA_VERSION),),
                )
            elif "meta" in tables:
                _migrate(db)
        with self._conn.read() as db:
            self._check_schema(db)

    def _check_schema(self, db: sqlite3.Connection) -> None:
        tables = {
            row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        }
        missing = [table for table in _TABLES if table not in tables]
        if missing:
            raise StateCorrupt(
                f"the state store {self.path} has no table {missing[0]!r}; it was edited or damaged — "
                "move it aside and restore each stack with `stackwright stack import`"
            )
        row = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        version = row[0] if row else None
        if version is None or not str(version).isdigit():
            raise StateCorrupt(
                f"the state store {self.path} records no schema version (found {version!r}); "
                "it was edited or damaged — move it aside and restore each stack with "
                "`stackwright stack import`"
            )
        if int(version) > SCHEMA_VERSION:
            raise StackwrightError(
                f"the state store {self.path} has schema version {version}, written by a newer "
                f"Stackwright; this one reads version {SCHEMA_VERSION}: upgrade Stackwright"
            )
        if int(version) < min(_MIGRATIONS):
            raise StateCorrupt(
                f"the state store {self.path} has schema version {version}, which no Stackwright "
                f"wrote (the first is {min(_MIGRATIONS)}); it was edited or damaged"
            )
        if int(version) < SCHEMA_VERSION:
            # Moved on open (`_migrate`): the file was put back from a copy while this ran.
            raise StackwrightError(
                f"the state store {self.path} has schema version {version}, older than this "
                f"Stackwright's {SCHEMA_VERSION} (it was replaced while the command ran); "
                "run the command again to upgrade it"
            )

    def _stack_id(self, db: sqlite3.Connection, project: str, stack: str) -> int:
        row = db.execute(
            "SELECT id FROM stacks WHERE project = ? AND name = ?", (project, stack)
        ).fetchone()
        if row is not None:
            return int(row[0])
        names = [
            r[0]
            for r in db.execute(
                "SELECT name FROM stacks WHERE project = ? ORDER BY name", (project,)
            )
        ]
        known = f" (its stacks: {', '.join(names)})" if names else ""
        raise UsageError(
            f"no stack {stack} in project {project}{known}; create it with `stackwright stack init {stack}`"
        )

    def _insert_stack(self, db: sqlite3.Connection, project: str, stack: str) -> int:
        _validate_name("project", project)
        _validate_name("stack", stack)
        now = self._clock()
        cursor = db.execute(
            "INSERT INTO stacks (project, name, created, updated, version, outputs) VALUES (?, ?, ?, ?, 0, ?)",
            (project, stack, now, now, b"{}"),
        )
        stack_id = cursor.lastrowid
        assert stack_id is not None
        db.execute("INSERT INTO locks (stack_id) VALUES (?)", (stack_id,))
        return stack_id

    def _history_row(
        self,
        db: sqlite3.Connection,
        stack_id: int,
        kind: str,
        message: str,
        *,
        result: str,
        ended: float | None,
        started: float | None = None,
    ) -> int:
        now = self._clock() if started is None else started
        cursor = db.execute(
            "INSERT INTO history (stack_id, kind, message, owner, host, pid, started, ended, result, counts) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                stack_id,
                kind,
                message,
                _user(),
                socket.gethostname(),
                os.getpid(),
                now,
                ended,
                result,
                b"{}",
            ),
        )
        assert cursor.lastrowid is not None
        return cursor.lastrowid

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- stacks ------------------------------------------------------------

    def create_stack(self, project: str, stack: str) -> None:
        with self._conn.write() as db:
            if _stack_exists(db, project, stack):
                raise UsageError(
                    f"stack {stack} already exists in project {project}; "
                    f"select it with `stackwright stack select {stack}`"
                )
            self._insert_stack(db, project, stack)

    def has_stack(self, project: str, stack: str) -> bool:
        with self._conn.read() as db:
            row = db.execute(
                "SELECT 1 FROM stacks WHERE project = ? AND name = ?", (project, stack)
            ).fetchone()
        return row is not None

    def list_stacks(self, project: str) -> list[StackSummary]:
        now = self._clock()
        with self._conn.read() as db:
            # An `import` that adopted nothing and succeeded is a `stack import` recorded
            # before that had its kind (`_history_kind`): an edit of the state.
            kinds = ", ".join("?" for _ in UPDATE_KINDS)
            rows = db.execute(
                "SELECT s.name, "
                "(SELECT max(coalesce(h.ended, h.started)) FROM history h WHERE h.stack_id = s.id "
                f"AND h.kind IN ({kinds}) AND NOT (h.kind = 'import' AND h.result = 'succeeded' "
                "AND CAST(h.counts AS TEXT) = '{}')), "
                "(SELECT count(*) FROM resources r WHERE r.stack_id = s.id), s.id, "
                "l.operation_id, l.kind, l.owner, l.host, l.pid, l.started, l.expires "
                "FROM stacks s LEFT JOIN locks l ON l.stack_id = s.id "
                "WHERE s.project = ? ORDER BY s.name",
                (*UPDATE_KINDS, project),
            ).fetchall()
            summaries = []
            for name, updated, count, stack_id, *lock in rows:
                holder = _holder(db, stack_id, lock) if lock[0] is not None else None
                live = holder if _alive(holder, now) else None
                # A stack no operation has changed has not been updated (Pulumi's "n/a").
                last = timestamp(updated) if updated is not None else None
                summaries.append(StackSummary(project, name, last, count, live))
        return summaries

    def remove_stack(self, project: str, stack: str, *, force: bool = False) -> None:
        with self._conn.write() as db:
            stack_id = self._stack_id(db, project, stack)
            _unless_held(db, stack_id, stack, self._clock())
            (resources,) = db.execute(
                "SELECT count(*) FROM resources WHERE stack_id = ?", (stack_id,)
            ).fetchone()
            (pending,) = db.execute(
                "SELECT count(*) FROM pending WHERE stack_id = ?", (stack_id,)
            ).fetchone()
            if (resources or pending) and not force:
                what = f"{resources} resource{'s' if resources != 1 else ''}"
                if pending:
                    what += f" and {pending} pending step{'s' if pending != 1 else ''}"
                raise UsageError(
                    f"stack {stack} still records {what}; run `stackwright destroy` to delete them "
                    f"first, or `stackwright stack rm {stack} --force` to remove the stack anyway "
                    "and leave its objects in the cluster"
                )
            for table in ("resources", "pending", "history", "snapshots", "locks", "released"):
                db.execute(f"DELETE FROM {table} WHERE stack_id = ?", (stack_id,))
            db.execute("DELETE FROM stacks WHERE id = ?", (stack_id,))
            db.execute("DELETE FROM meta WHERE key = ?", (_secrets_key(project, stack),))
            _write_former(db, project, stack, ())
            _write_default_cluster(db, project, stack, None)

    def rename_stack(self, project: str, stack: str, new_name: str) -> None:
        """Rename a stack: its row, the stack part of every URN in it, its secrets provider.

        The old name joins the stack's former names: its objects are still marked as
        members of the old name's ApplySets until the next `up` marks them anew and
        removes those parents."""
        _validate_name("stack", new_name)
        with self._edit(project, [stack], "stack rename", f"{stack} → {new_name}") as (
            db,
            (stack_id,),
            _,
        ):
            if _stack_exists(db, project, new_name):
                raise UsageError(
                    f"cannot rename stack {stack} to {new_name}: project {project} already has "
                    f"a stack {new_name}; remove it or pick another name"
                )
            for row in self._rows(db, project, stack, stack_id):
                state = _rewritten(
                    row.state,
                    {row.state.urn: _restacked(row.state.urn, new_name)},
                    src_stack=stack,
                    dst_stack=new_name,
                )
                db.execute(
                    "UPDATE resources SET urn = ?, data = ? WHERE rid = ?",
                    (state.urn, encode_resource(state), row.rid),
                )
            for pending_id, op, urn, blob in db.execute(
                "SELECT id, op, urn, data FROM pending WHERE stack_id = ?", (stack_id,)
            ).fetchall():
                try:
                    held = self._decode_pending(project, stack, op, urn, blob).resource
                except Invalid as invalid:
                    raise StateCorrupt(
                        f"state of stack {stack}: {invalid.problem}; {_FIX}"
                    ) from None
                state = _rewritten(
                    held, {urn: _restacked(urn, new_name)}, src_stack=stack, dst_stack=new_name
                )
                db.execute(
                    "UPDATE pending SET urn = ?, data = ? WHERE id = ?",
                    (state.urn, encode_resource(state, keep_delete_pending=True), pending_id),
                )
            for urn, name in _released_rows(db, stack_id):
                db.execute(
                    "UPDATE released SET urn = ? WHERE stack_id = ? AND urn = ? AND name = ?",
                    (_restacked(urn, new_name), stack_id, urn, name),
                )
            db.execute("UPDATE stacks SET name = ? WHERE id = ?", (new_name, stack_id))
            db.execute(
                "UPDATE meta SET key = ? WHERE key = ?",
                (_secrets_key(project, new_name), _secrets_key(project, stack)),
            )
            _write_default_cluster(db, project, new_name, _read_default_cluster(db, project, stack))
            _write_default_cluster(db, project, stack, None)
            former = [*_read_former(db, project, stack), stack]
            _write_former(db, project, stack, ())
            _write_former(
                db, project, new_name, [n for n in dict.fromkeys(former) if n != new_name]
            )

    # --- locking -----------------------------------------------------------

    def begin_operation(
        self, project: str, stack: str, *, kind: str, message: str = "", lease_seconds: float = 30.0
    ) -> SQLiteOperation:
        if lease_seconds <= 0:
            raise ValueError(f"lease_seconds must be positive, got {lease_seconds}")
        conn = self._connect()
        try:
            with conn.write() as db:
                stack_id = self._stack_id(db, project, stack)
                # A lock row lost to an edit of the file is made anew: it only says who
                # holds the stack, and without it no operation could ever take the lock.
                db.execute("INSERT OR IGNORE INTO locks (stack_id) VALUES (?)", (stack_id,))
                now = self._clock()
                holder = _unless_held(db, stack_id, stack, now)
                operation_id = self._history_row(
                    db, stack_id, kind, message, result=IN_PROGRESS, ended=None
                )
                # Compare-and-set on the holder observed above: exactly one of several
                # racers can move the lock from that holder (or from free) to itself.
                # SQLite's write lock already serializes this transaction; the compare
                # is what keeps the protocol correct on backends without one.
                taken = db.execute(
                    "UPDATE locks SET operation_id = ?, kind = ?, owner = ?, host = ?, pid = ?, "
                    "started = ?, expires = ? WHERE stack_id = ? AND operation_id IS ?",
                    (
                        operation_id,
                        kind,
                        _user(),
                        socket.gethostname(),
                        os.getpid(),
                        now,
                        now + lease_seconds,
                        stack_id,
                        holder.operation_id if holder else None,
                    ),
                )
                if taken.rowcount != 1:
                    raise StackLocked(
                        f"stack {stack} was locked by another operation at the same moment; try again"
                    )
                if holder is not None:
                    _mark_interrupted(db, stack_id, holder.operation_id, now)
                (version,) = db.execute(
                    "SELECT version FROM stacks WHERE id = ?", (stack_id,)
                ).fetchone()
        except BaseException:
            conn.close()
            raise
        return SQLiteOperation(
            backend=self,
            conn=conn,
            stack_id=stack_id,
            project=project,
            stack=stack,
            kind=kind,
            operation_id=operation_id,
            lease_seconds=lease_seconds,
            took_over=holder,
            version=version,
        )

    def running(self, project: str, stack: str) -> LockHolder | None:
        with self._conn.read() as db:
            holder = _read_holder(db, self._stack_id(db, project, stack))
        return holder if _alive(holder, self._clock()) else None

    def cancel(self, project: str, stack: str) -> bool:
        with self._conn.write() as db:
            stack_id = self._stack_id(db, project, stack)
            # Only the holder's id is read: a lock row an edit damaged is cleared too.
            row = db.execute(
                "SELECT operation_id FROM locks WHERE stack_id = ?", (stack_id,)
            ).fetchone()
            if row is None or row[0] is None:
                return False
            db.execute(_RELEASE, (stack_id,))
            closed = db.execute(
                "UPDATE history SET result = 'cancelled', ended = ? WHERE id = ? AND result = ?",
                (self._clock(), row[0], IN_PROGRESS),
            )
            if closed.rowcount:
                # The state the cancelled operation left: fenced, it writes nothing more.
                _save_state(db, stack_id, row[0])
            return True

    # --- reading -----------------------------------------------------------

    def load(self, project: str, stack: str) -> Snapshot:
        return self._load(project, stack, unseal=True)

    def _load(self, project: str, stack: str, *, unseal: bool) -> Snapshot:
        """The stack's state; with `unseal` False, secrets stay as stored (ciphertext)."""
        with self._conn.read() as db:
            self._check_schema(db)
            self._quick_check(db)
            stack_id = self._stack_id(db, project, stack)
            version, outputs_blob = db.execute(
                "SELECT version, outputs FROM stacks WHERE id = ?", (stack_id,)
            ).fetchone()
            rows = db.execute(
                "SELECT rid, urn, delete_pending, cluster_id, data FROM resources "
                "WHERE stack_id = ? ORDER BY seq, rid",
                (stack_id,),
            ).fetchall()
            pending_rows = db.execute(
                "SELECT op, urn, data FROM pending WHERE stack_id = ? ORDER BY id", (stack_id,)
            ).fetchall()
            former = _read_former(db, project, stack)
            cluster = _read_default_cluster(db, project, stack)
            released = _read_released(db, stack_id)
        try:
            resources = [self._decode_row(project, stack, *row[1:]) for row in rows]
            pending = [self._decode_pending(project, stack, *row) for row in pending_rows]
            outputs = self._decode_outputs(outputs_blob)
            ordered = check_and_order(resources, pending)
        except Invalid as invalid:
            raise StateCorrupt(f"state of stack {stack}: {invalid.problem}; {_FIX}") from None
        stored = sum(_resource_row_bytes(row[1], row[3], row[4]) for row in rows)
        stored += sum(_pending_row_bytes(*row) for row in pending_rows) + len(outputs_blob)
        if not unseal:
            return Snapshot(
                project,
                stack,
                ordered,
                pending,
                outputs,
                version,
                stored,
                former,
                cluster,
                released,
            )
        opened = self._encrypter.unseal
        return Snapshot(
            project=project,
            stack=stack,
            resources=[opened(stack, state) for state in ordered],
            pending=[PendingOperation(p.op, opened(stack, p.resource)) for p in pending],
            outputs=self._encrypter.unseal_outputs(stack, outputs),
            version=version,
            stored_bytes=stored,
            former_names=former,
            default_cluster=cluster,
            released_names=released,
        )

    def _quick_check(self, db: sqlite3.Connection) -> None:
        """SQLite's own check of its pages and indexes (not of our rows: `load` does that)."""
        report = "\n".join(row[0] for row in db.execute("PRAGMA quick_check"))
        if report == "ok":
            return
        problems = [line for line in report.splitlines() if line and not line.startswith("***")]
        first = problems[0] if problems else report
        more = f", and {len(problems) - 1} more" if len(problems) > 1 else ""
        raise StateCorrupt(
            f"the state store {self.path} failed SQLite's integrity check ({first}{more}); "
            "move it aside and restore each stack with `stackwright stack import` from an export"
        )

    def _decode_row(
        self, project: str, stack: str, urn: str, delete_pending: int, cluster_id: str, blob: bytes
    ) -> ResourceState:
        where = f"the row of resource {urn}"
        state = decode_resource(
            blob, where, project=project, stack=stack, delete_pending=bool(delete_pending)
        )
        if state.urn != urn:
            raise Invalid(f"{where} holds the state of {state.urn}")
        if state.id != cluster_id:
            raise Invalid(
                f"{where} says its object is {state.id!r} but is filed under {cluster_id!r}"
            )
        return state

    def _decode_pending(
        self, project: str, stack: str, op: str, urn: str, blob: bytes
    ) -> PendingOperation:
        where = f"the pending {op} of {urn}"
        state = decode_resource(blob, where, project=project, stack=stack)
        if state.urn != urn:
            raise Invalid(f"{where} holds the state of {state.urn}")
        try:
            return PendingOperation(op_named(op), state)
        except Invalid as invalid:
            raise Invalid(f"{where}: {invalid.problem}") from None

    @staticmethod
    def _decode_outputs(blob: bytes) -> dict[str, Any]:
        try:
            outputs = orjson.loads(blob)
        except orjson.JSONDecodeError as error:
            raise Invalid(f"the stack's outputs are not JSON ({error})") from None
        if not isinstance(outputs, dict):
            raise Invalid("the stack's outputs are not a JSON object")
        return outputs

    def history(self, project: str, stack: str, *, limit: int | None = None) -> list[HistoryEntry]:
        with self._conn.read() as db:
            stack_id = self._stack_id(db, project, stack)
            # Numbered within the stack (1, 2, 3 …, as Pulumi's update versions), not by
            # the table's id that every stack of the store shares.
            rows = db.execute(
                "SELECT h.version, h.id, kind, started, ended, result, counts, message, owner, "
                f"host, s.history_id IS NOT NULL FROM ({_NUMBERED}) h "
                "LEFT JOIN snapshots s ON s.history_id = h.id ORDER BY h.version DESC LIMIT ?",
                (stack_id, -1 if limit is None else limit),
            ).fetchall()
            holder = _read_holder(db, stack_id)
        # An operation killed on this host (kill -9) is not "in progress" however long it
        # takes the next one to take its lock over and record it so.
        dead = holder.operation_id if holder is not None and _died_here(holder) else None
        entries = []
        for (
            version,
            row_id,
            kind,
            started,
            ended,
            result,
            blob,
            message,
            owner,
            host,
            saved,
        ) in rows:
            counts = _history_counts(stack, version, blob)
            entries.append(
                HistoryEntry(
                    id=version,
                    kind=_history_kind(kind, result, counts),
                    start=timestamp(started),
                    end=timestamp(ended) if ended is not None else None,
                    result=INTERRUPTED if row_id == dead and result == IN_PROGRESS else result,
                    counts=counts,
                    message=message,
                    owner=owner,
                    host=host,
                    exportable=bool(saved),
                )
            )
        return entries

    def recorded_elsewhere(self, project: str, stack: str, urn: str, object_id: str) -> list[str]:
        # Asked only for an object marked as this stack's that its state does not hold, so
        # a scan of the rows filed under that cluster id is cheap enough.
        with self._conn.read() as db:
            rows = db.execute(
                "SELECT s.name, r.urn, r.delete_pending, r.cluster_id, r.data FROM resources r "
                "JOIN stacks s ON s.id = r.stack_id WHERE s.project = ? AND s.name != ? "
                "AND r.cluster_id = ? ORDER BY s.name",
                (project, stack, object_id),
            ).fetchall()
        holders = []
        for name, *row in rows:
            try:
                state = self._decode_row(project, name, *row)
            except Invalid:
                continue  # its stack's own load says what is wrong with it
            if state.external:
                continue  # read there (its outputs show the marks of whoever manages it)
            annotations = (state.outputs.get("metadata") or {}).get("annotations") or {}
            if annotations.get(URN_ANNOTATION) == urn:
                holders.append(name)
        return list(dict.fromkeys(holders))

    def export(self, project: str, stack: str, *, version: int | None = None) -> dict[str, Any]:
        # Secrets leave as they are stored: sealed, readable only with the stack's key.
        if version is None:
            return _document.build(self._load(project, stack, unseal=False))
        return _document.build(self._saved_state(project, stack, version))

    def _saved_state(self, project: str, stack: str, number: int) -> Snapshot:
        """The state the operation of history entry `number` left, as stack `stack` of today
        (it may have been renamed since); UsageError naming the versions that have one."""
        with self._conn.read() as db:
            stack_id = self._stack_id(db, project, stack)
            numbered = db.execute(
                f"SELECT h.version, h.id, s.version, s.data IS NOT NULL FROM ({_NUMBERED}) h "
                "LEFT JOIN snapshots s ON s.history_id = h.id ORDER BY h.version",
                (stack_id,),
            ).fetchall()
            entry = next((row for row in numbered if row[0] == number), None)
            blob = None
            if entry is not None and entry[2] is not None:
                # Saved under this entry, or under the first with the same state version.
                (blob,) = db.execute(
                    "SELECT data FROM snapshots WHERE stack_id = ? AND version = ? "
                    "AND data IS NOT NULL ORDER BY history_id LIMIT 1",
                    (stack_id, entry[2]),
                ).fetchone() or (None,)
            former = _read_former(db, project, stack)
        saved = [row[0] for row in numbered if row[2] is not None]
        if entry is None or blob is None:
            raise UsageError(_no_saved_state(stack, number, [row[0] for row in numbered], saved))
        try:
            state = _saved.unpack(blob, entry[2])
        except Invalid as invalid:
            others = [n for n in saved if n != number]
            instead = (
                f"export another version ({_saved.version_spans(others)})"
                if others
                else "no other version of it is saved"
            )
            raise StateCorrupt(
                f"the saved state of version {number} of stack {stack} is damaged: "
                f"{invalid.problem}; {instead}"
            ) from None
        if state.stack == stack:
            return state
        # Saved before `stack rename`: its URNs become this stack's, and the old name joins
        # the former names, whose ApplySet parents the next `up` removes.
        restacked = {
            r.urn: _restacked(r.urn, stack)
            for r in [*state.resources, *(p.resource for p in state.pending)]
        }

        def moved(resource: ResourceState) -> ResourceState:
            return _rewritten(resource, restacked, src_stack=state.stack, dst_stack=stack)

        return replace(
            state,
            stack=stack,
            resources=[moved(r) for r in state.resources],
            pending=[PendingOperation(p.op, moved(p.resource)) for p in state.pending],
            former_names=tuple(
                name
                for name in dict.fromkeys([*state.former_names, state.stack, *former])
                if name != stack
            ),
            released_names={
                _restacked(urn, stack): names for urn, names in state.released_names.items()
            },
        )

    # --- the stack's secrets provider ------------------------------------------

    def secrets_provider(self, project: str, stack: str) -> dict[str, Any] | None:
        with self._conn.read() as db:
            row = db.execute(
                "SELECT value FROM meta WHERE key = ?", (_secrets_key(project, stack),)
            ).fetchone()
        if row is None:
            return None
        fields = _meta_json(_secrets_key(project, stack), row[0])
        if not isinstance(fields, dict):
            raise StateCorrupt(
                f"the state's {_secrets_key(project, stack)!r} is not a JSON object; {_FIX}"
            )
        return fields

    def set_secrets_provider(self, project: str, stack: str, fields: Mapping[str, Any]) -> None:
        with self._conn.write() as db:
            self._stack_id(db, project, stack)
            db.execute(
                "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                (_secrets_key(project, stack), orjson.dumps(dict(fields)).decode()),
            )

    # --- edits -------------------------------------------------------------

    @contextlib.contextmanager
    def _edit(
        self,
        project: str,
        stacks: Sequence[str],
        kind: str,
        message: str = "",
        *,
        create: bool = False,
    ) -> Iterator[tuple[sqlite3.Connection, list[int], list[int]]]:
        """One transaction that holds the stacks' locks for its length (it finds them
        free, or takes over a lapsed lease) and records itself in their histories.

        Yields the connection, the stacks' ids and, per stack, the first sequence
        number the edit may give a row; the stack's version then moves past every
        sequence number the edit used.
        """
        with self._conn.write() as db:
            now = self._clock()
            ids = []
            for stack in stacks:
                exists = db.execute(
                    "SELECT id FROM stacks WHERE project = ? AND name = ?", (project, stack)
                ).fetchone()
                stack_id = self._insert_stack(db, project, stack) if create and not exists else None
                stack_id = stack_id or self._stack_id(db, project, stack)
                holder = _unless_held(db, stack_id, stack, now)
                if holder is not None:
                    _mark_interrupted(db, stack_id, holder.operation_id, now)
                    db.execute(_RELEASE, (stack_id,))
                ids.append(stack_id)
            versions = [
                db.execute("SELECT version FROM stacks WHERE id = ?", (stack_id,)).fetchone()[0] + 1
                for stack_id in ids
            ]
            yield db, ids, versions
            for stack_id, version in zip(ids, versions, strict=True):
                history_id = self._history_row(
                    db,
                    stack_id,
                    kind,
                    message,
                    result="succeeded",
                    ended=self._clock(),
                    started=now,
                )
                db.execute(
                    "UPDATE stacks SET updated = ?, version = max(?, "
                    "(SELECT coalesce(max(seq), 0) FROM resources WHERE stack_id = ?)) WHERE id = ?",
                    (self._clock(), version, stack_id, stack_id),
                )
                _save_state(db, stack_id, history_id)

    def _rows(self, db: sqlite3.Connection, project: str, stack: str, stack_id: int) -> list[_Row]:
        rows = db.execute(
            "SELECT rid, urn, delete_pending, cluster_id, data FROM resources WHERE stack_id = ? ORDER BY seq, rid",
            (stack_id,),
        ).fetchall()
        try:
            return [_Row(row[0], self._decode_row(project, stack, *row[1:])) for row in rows]
        except Invalid as invalid:
            raise StateCorrupt(f"state of stack {stack}: {invalid.problem}; {_FIX}") from None

    def _no_resource(self, stack: str, urn: str, rows: Sequence[_Row]) -> UsageError:
        urns = sorted({row.state.urn for row in rows})
        # `state unprotect web`, as kubectl names objects: the URNs of the resources so named.
        named = [u for u in urns if u.rpartition("::")[2] == urn]
        close = named or difflib.get_close_matches(urn, urns, n=1)
        if len(close) > 1:
            hint = f"; resources named {urn}: {', '.join(close)}; pass one's URN"
        elif close:
            hint = f"; did you mean {close[0]}?"
        else:
            hint = "; `stackwright stack --show-urns` lists the URNs in the state"
        return UsageError(f"no resource {urn} in stack {stack}{hint}")

    def import_(self, project: str, stack: str, document: Any, *, message: str = "") -> None:
        parsed = _document.parse(document, project=project, stack=stack)
        resources, pending, outputs = parsed.resources, parsed.pending, parsed.outputs
        # Every secret must open with this stack's key: a document sealed under another
        # (an export of a stack since removed and made anew) would leave a stack no
        # command can load.
        for state in [*resources, *(item.resource for item in pending)]:
            self._encrypter.unseal(stack, state)
        self._encrypter.unseal_outputs(stack, outputs)
        outputs_blob = encode_json(
            self._encrypter.seal_outputs(stack, outputs), "the document's outputs"
        )
        with self._edit(project, [stack], STATE_IMPORT, message, create=True) as (
            db,
            (stack_id,),
            (seq,),
        ):
            db.execute("DELETE FROM resources WHERE stack_id = ?", (stack_id,))
            db.execute("DELETE FROM pending WHERE stack_id = ?", (stack_id,))
            db.execute("DELETE FROM released WHERE stack_id = ?", (stack_id,))
            for urn, names in parsed.released_names.items():
                for name in names:
                    _release(db, stack_id, urn, name)
            for offset, state in enumerate(resources):
                self._insert_row(db, stack, stack_id, state, seq + offset)
            for step, item in enumerate(pending):
                blob = encode_resource(
                    self._encrypter.seal(stack, item.resource), keep_delete_pending=True
                )
                db.execute(
                    "INSERT INTO pending (stack_id, operation_id, step, op, urn, data) VALUES (?, ?, ?, ?, ?, ?)",
                    (stack_id, _IMPORTED, step, item.op.value, item.resource.urn, blob),
                )
            db.execute("UPDATE stacks SET outputs = ? WHERE id = ?", (outputs_blob, stack_id))
            _write_former(db, project, stack, parsed.former_names)
            _write_default_cluster(db, project, stack, parsed.default_cluster)

    def _insert_row(
        self, db: sqlite3.Connection, stack: str, stack_id: int, state: ResourceState, seq: int
    ) -> int:
        blob = encode_resource(self._encrypter.seal(stack, state))
        db.execute(
            "INSERT INTO resources (stack_id, urn, delete_pending, cluster_id, seq, data) VALUES (?, ?, ?, ?, ?, ?)",
            (stack_id, state.urn, int(state.delete_pending), state.id, seq, blob),
        )
        return _resource_row_bytes(state.urn, state.id, blob)

    def delete_resource(
        self,
        project: str,
        stack: str,
        urn: str,
        *,
        force: bool = False,
        target_dependents: bool = False,
        dry_run: bool = False,
    ) -> list[str]:
        if dry_run:
            with self._conn.read() as db:
                stack_id = self._stack_id(db, project, stack)
                _unless_held(db, stack_id, stack, self._clock())
                rows = self._rows(db, project, stack, stack_id)
                return self._forgettable(db, stack, stack_id, rows, urn, force, target_dependents)
        with self._edit(project, [stack], "state delete", urn) as (db, (stack_id,), _):
            rows = self._rows(db, project, stack, stack_id)
            doomed = self._forgettable(db, stack, stack_id, rows, urn, force, target_dependents)
            for row in rows:
                if row.state.urn in doomed:
                    db.execute("DELETE FROM resources WHERE rid = ?", (row.rid,))
                    # Its object stays in the cluster: a later create of the URN gets a new
                    # auto-name instead of taking that one for its own.
                    name = released_auto_name(row.state)
                    if name is not None:
                        _release(db, stack_id, row.state.urn, name)
            return doomed

    def _forgettable(
        self,
        db: sqlite3.Connection,
        stack: str,
        stack_id: int,
        rows: Sequence[_Row],
        urn: str,
        force: bool,
        target_dependents: bool,
    ) -> list[str]:
        """The URNs `delete_resource` forgets, in the state's order, every check made; a
        UsageError for what it refuses (no such resource, protected, referred to, pending)."""
        if not any(row.state.urn == urn for row in rows):
            raise self._no_resource(stack, urn, rows)
        doomed = {urn}
        if target_dependents:
            grew = True
            while grew:
                more = {
                    row.state.urn
                    for row in rows
                    if row.state.urn not in doomed
                    and any(ref in doomed for ref, _ in references(row.state))
                }
                doomed |= more
                grew = bool(more)
        protected = sorted(
            {row.state.urn for row in rows if row.state.urn in doomed and row.state.protect}
        )
        if protected and not force:
            if protected == [urn]:
                raise UsageError(
                    f"resource {urn} cannot be deleted because it is protected: run "
                    f"`stackwright state unprotect {shlex.quote(urn)}` first (or, if the "
                    "program still declares it, remove its `protect` option and run "
                    "`stackwright up`), or pass --force to delete it anyway"
                )
            raise UsageError(
                f"resources {', '.join(protected)} cannot be deleted because they are protected; "
                "unprotect them with `stackwright state unprotect URN`, or pass --force to delete them anyway"
            )
        said = {"has parent": "its child", "uses provider": "uses it as its provider"}
        dependents = [
            f"{row.state.urn} ({said.get(how, f'{how} it')})"
            for row in rows
            if row.state.urn not in doomed
            for ref, how in references(row.state)
            if ref in doomed
        ]
        if dependents:
            raise UsageError(
                f"resource {urn} cannot be deleted because other resources refer to it: "
                f"{', '.join(dict.fromkeys(dependents))}; delete them first, or pass "
                "--target-dependents to delete them with it"
            )
        # Settling a pending step records its resource again, and an `up` whose program
        # no longer declares it would then delete the object this promised to leave.
        _check_settled(db, stack, stack_id, doomed, "delete {urn} from the state")
        return list(dict.fromkeys(row.state.urn for row in rows if row.state.urn in doomed))

    def unprotect(self, project: str, stack: str, urns: Sequence[str] | None) -> list[str]:
        message = "all resources" if urns is None else ", ".join(urns)
        with self._edit(project, [stack], "state unprotect", message) as (db, (stack_id,), _):
            rows = self._rows(db, project, stack, stack_id)
            for urn in urns or ():
                if not any(row.state.urn == urn for row in rows):
                    raise self._no_resource(stack, urn, rows)
            named = None if urns is None else set(urns)
            cleared = []
            for row in rows:
                if row.state.protect and (named is None or row.state.urn in named):
                    unprotected = self._encrypter.seal(stack, replace(row.state, protect=False))
                    db.execute(
                        "UPDATE resources SET data = ? WHERE rid = ?",
                        (encode_resource(unprotected), row.rid),
                    )
                    cleared.append(row.state.urn)
            return list(dict.fromkeys(cleared))

    def rename_resource(self, project: str, stack: str, urn: str, new_name: str) -> str:
        with self._edit(project, [stack], "state rename", f"{urn} → {new_name}") as (
            db,
            (stack_id,),
            _,
        ):
            rows = self._rows(db, project, stack, stack_id)
            if not any(row.state.urn == urn for row in rows):
                raise self._no_resource(stack, urn, rows)
            new_urn = _renamed(urn, new_name)
            if any(row.state.urn == new_urn for row in rows):
                raise UsageError(
                    f"cannot rename {urn}: stack {stack} already has a resource {new_urn}"
                )
            _rewrite_urns(self, db, project, stack, stack_id, {urn: new_urn})
            return new_urn

    def move_resource(
        self, project: str, src_stack: str, dst_stack: str, urns: Sequence[str]
    ) -> list[str]:
        if src_stack == dst_stack:
            raise UsageError(
                f"cannot move resources from stack {src_stack} to itself; name another stack"
            )
        message = f"{', '.join(urns)} from {src_stack} to {dst_stack}"
        with self._edit(project, [src_stack, dst_stack], "state move", message) as (db, ids, seqs):
            src_id, dst_id = ids
            rows = self._rows(db, project, src_stack, src_id)
            for urn in urns:
                if not any(row.state.urn == urn for row in rows):
                    raise self._no_resource(src_stack, urn, rows)
            moving = set(urns)
            grew = True
            while grew:  # children move with their parents
                more = {row.state.urn for row in rows if row.state.parent in moving} - moving
                moving |= more
                grew = bool(more)
            _check_move(src_stack, rows, moving)
            _check_settled(db, src_stack, src_id, moving, "move {urn}")
            mapping = {urn: _restacked(urn, dst_stack) for urn in moving}
            existing = self._rows(db, project, dst_stack, dst_id)
            taken = sorted({row.state.urn for row in existing} & set(mapping.values()))
            if taken:
                raise UsageError(
                    f"cannot move to stack {dst_stack}: it already has a resource {taken[0]}"
                )
            moved = []
            for offset, row in enumerate(r for r in rows if r.state.urn in moving):
                # Secrets leave under the source stack's key and arrive under the target's.
                plain = self._encrypter.unseal(src_stack, row.state)
                state = _rewritten(plain, mapping, src_stack=src_stack, dst_stack=dst_stack)
                db.execute("DELETE FROM resources WHERE rid = ?", (row.rid,))
                self._insert_row(db, dst_stack, dst_id, state, seqs[1] + offset)
                moved.append(state.urn)
            return list(dict.fromkeys(moved))


def _stack_exists(db: sqlite3.Connection, project: str, stack: str) -> bool:
    found = db.execute(
        "SELECT 1 FROM stacks WHERE project = ? AND name = ?", (project, stack)
    ).fetchone()
    return found is not None


def _secrets_key(project: str, stack: str) -> str:
    """The `meta` key of a stack's secrets provider (how its data key is wrapped, never the key)."""
    return f"secrets:{project}/{stack}"


def _former_key(project: str, stack: str) -> str:
    """The `meta` key of the names a stack had before `stack rename`, whose ApplySet parents
    the next `up` removes (kept beside the row, not in it: no schema change for one list)."""
    return f"former-names:{project}/{stack}"


def _read_former(db: sqlite3.Connection, project: str, stack: str) -> tuple[str, ...]:
    key = _former_key(project, stack)
    row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    if row is None:
        return ()
    names = _meta_json(key, row[0])
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise StateCorrupt(f"the state's {key!r} is not a list of stack names; {_FIX}")
    return tuple(names)


def _release(db: sqlite3.Connection, stack_id: int, urn: str, name: str) -> None:
    db.execute(
        "INSERT OR IGNORE INTO released (stack_id, urn, name) VALUES (?, ?, ?)",
        (stack_id, urn, name),
    )


def _released_rows(db: sqlite3.Connection, stack_id: int) -> list[tuple[str, str]]:
    """(URN, name) of each auto-name a stack let go of, in the order it let them go."""
    return db.execute(
        "SELECT urn, name FROM released WHERE stack_id = ? ORDER BY rowid", (stack_id,)
    ).fetchall()


def _read_released(db: sqlite3.Connection, stack_id: int) -> dict[str, tuple[str, ...]]:
    released: dict[str, tuple[str, ...]] = {}
    for urn, name in _released_rows(db, stack_id):
        released[urn] = (*released.get(urn, ()), name)
    return released


def _cluster_key(project: str, stack: str) -> str:
    """The `meta` key of the cluster the stack's default provider last talked to."""
    return f"default-cluster:{project}/{stack}"


def _read_default_cluster(
    db: sqlite3.Connection, project: str, stack: str
) -> ClusterIdentity | None:
    key = _cluster_key(project, stack)
    row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    if row is None:
        return None
    try:
        return ClusterIdentity.from_dict(_meta_json(key, row[0]))
    except ValueError as error:
        raise StateCorrupt(f"the state's {key!r} {error}; {_FIX}") from None


def _write_default_cluster(
    db: sqlite3.Connection, project: str, stack: str, identity: ClusterIdentity | None
) -> None:
    key = _cluster_key(project, stack)
    if identity is None:
        db.execute("DELETE FROM meta WHERE key = ?", (key,))
    else:
        db.execute(
            "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
            (key, orjson.dumps(identity.to_dict()).decode()),
        )


def _meta_json(key: str, value: str) -> Any:
    """A `meta` value decoded; StateCorrupt naming the key when an edit left it unreadable."""
    try:
        return orjson.loads(value)
    except orjson.JSONDecodeError as error:
        raise StateCorrupt(f"the state's {key!r} is not JSON ({error}); {_FIX}") from None


def _no_saved_state(stack: str, number: int, versions: Sequence[int], saved: Sequence[int]) -> str:
    """Why `stack export --version number` has nothing to print, naming what it can print."""
    can = (
        f"versions that can be exported: {_saved.version_spans(saved)}"
        if saved
        else "none of its versions can be exported yet"
    )
    lists = "(`stackwright stack history` lists them)"
    if number not in versions:
        if not versions:
            return f"stack {stack} has no version {number}: no operation has run on it yet"
        known = f"its versions are {_saved.version_spans(versions)}"
        return f"stack {stack} has no version {number}: {known}" + (
            f" {lists}" if list(saved) == list(versions) else f"; {can} {lists}"
        )
    return (
        f"version {number} of stack {stack} has no saved state (its operation is still running, "
        f"or was recorded before Stackwright saved each version's state); {can}"
    )


def _history_kind(kind: str, result: str, counts: Mapping[str, int]) -> str:
    """The kind of a history row as this version records it: a `stack import` recorded
    before it had its own kind was `import`, as an adoption of objects is. An adoption that
    succeeded counts the objects it adopted; a state import, the CLI's (`stack import from
    FILE`) or a script's (`Workspace.import_state`, any message), counts none."""
    if kind == "import" and result == "succeeded" and not counts:
        return STATE_IMPORT
    return kind


def _history_counts(stack: str, operation_id: int, blob: bytes) -> dict[str, int]:
    why = ""
    try:
        counts = orjson.loads(blob)
    except orjson.JSONDecodeError as error:
        counts, why = None, f" ({error})"
    if not isinstance(counts, dict):
        raise StateCorrupt(
            f"the history of stack {stack} is damaged: operation {operation_id} has counts "
            f"that are not a JSON object{why}; the state store was edited"
        )
    return counts


def _write_former(db: sqlite3.Connection, project: str, stack: str, names: Sequence[str]) -> None:
    key = _former_key(project, stack)
    if names:
        db.execute(
            "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
            (key, orjson.dumps(list(names)).decode()),
        )
    else:
        db.execute("DELETE FROM meta WHERE key = ?", (key,))


def _renamed(urn: str, new_name: str) -> str:
    if not new_name:
        raise UsageError("the new name must not be empty")
    parts = parse_urn(urn)
    return f"urn:sw:{parts.stack}::{parts.project}::{parts.qualified_type}::{new_name}"


def _restacked(urn: str, stack: str) -> str:
    parts = parse_urn(urn)
    return f"urn:sw:{stack}::{parts.project}::{parts.qualified_type}::{parts.name}"


def _rewritten(
    state: ResourceState, mapping: Mapping[str, str], *, src_stack: str = "", dst_stack: str = ""
) -> ResourceState:
    def new(ref: str) -> str:
        if ref in mapping:
            return mapping[ref]
        if src_stack and ref and parse_urn(ref).stack == src_stack:
            # The stack's implicit root resource, as a parent (`_check_move` allowed only that).
            return _restacked(ref, dst_stack)
        return ref

    urn = mapping.get(state.urn, state.urn)
    return replace(
        state,
        urn=urn,
        # An alias may change the type (a component's, or a kind's API version): the row's
        # type follows its URN's.
        type=parse_urn(urn).type if urn != state.urn else state.type,
        parent=new(state.parent),
        provider=new(state.provider),
        dependencies=tuple(new(ref) for ref in state.dependencies),
    )


def _check_settled(
    db: sqlite3.Connection, stack: str, stack_id: int, urns: set[str], doing: str
) -> None:
    """Refuse an edit of resources that have steps a crash left pending (`doing` says what
    the edit would do, with `{urn}`): the next run settles those by reading the cluster."""
    pending = db.execute("SELECT urn FROM pending WHERE stack_id = ?", (stack_id,)).fetchall()
    stuck = sorted({urn for (urn,) in pending if urn in urns})
    if stuck:
        raise UsageError(
            f"cannot {doing.format(urn=stuck[0])}: stack {stack} has a pending step on it that "
            f"a crash left; run `stackwright refresh` on stack {stack} first"
        )


def _check_move(src_stack: str, rows: Sequence[_Row], moving: set[str]) -> None:
    """Refuse a move that would leave a reference across stacks, saying which to add."""
    stored = {row.state.urn for row in rows}
    for row in rows:
        state = row.state
        for ref, how in references(state):
            if state.urn in moving and ref not in moving and ref in stored:
                raise UsageError(
                    f"cannot move {state.urn}: it {how} {ref}, which would stay in stack "
                    f"{src_stack}; move {ref} too"
                )
            if state.urn not in moving and ref in moving:
                raise UsageError(
                    f"cannot move {ref}: {state.urn} {how} it and would stay in stack "
                    f"{src_stack}; move {state.urn} too"
                )


def _rewrite_urns(
    backend: SQLiteBackend,
    db: sqlite3.Connection,
    project: str,
    stack: str,
    stack_id: int,
    mapping: Mapping[str, str],
) -> int:
    """Rename URNs in one stack's rows and pending steps, and every reference to them;
    the payload bytes written."""
    written = 0
    for row in backend._rows(db, project, stack, stack_id):
        state = row.state
        if state.urn in mapping or any(ref in mapping for ref, _ in references(state)):
            blob = encode_resource(backend._encrypter.seal(stack, _rewritten(state, mapping)))
            new_urn = mapping.get(state.urn, state.urn)
            db.execute(
                "UPDATE resources SET urn = ?, data = ? WHERE rid = ?", (new_urn, blob, row.rid)
            )
            written += _utf8(new_urn) + len(blob)
    for pending_id, op, urn, blob in db.execute(
        "SELECT id, op, urn, data FROM pending WHERE stack_id = ?", (stack_id,)
    ).fetchall():
        try:
            pending = backend._decode_pending(project, stack, op, urn, blob)
        except Invalid as invalid:
            raise StateCorrupt(f"state of stack {stack}: {invalid.problem}; {_FIX}") from None
        state = pending.resource
        if state.urn in mapping or any(ref in mapping for ref, _ in references(state)):
            new_blob = encode_resource(_rewritten(state, mapping), keep_delete_pending=True)
            new_urn = mapping.get(state.urn, state.urn)
            db.execute(
                "UPDATE pending SET urn = ?, data = ? WHERE id = ?", (new_urn, new_blob, pending_id)
            )
            written += _utf8(new_urn) + len(new_blob)
    return written


def _apply(
    db: sqlite3.Connection,
    encrypter: Encrypter,
    stack: str,
    stack_id: int,
    changes: Sequence[Effect],
    seq: int,
) -> int:
    """Carry out a step's effects on the resource rows; the payload bytes written."""
    written = 0
    for change in changes:
        if isinstance(change, Release):
            _release(db, stack_id, change.urn, change.name)
            written += _utf8(change.urn) + _utf8(change.name) + _NUMBER
            continue
        if isinstance(change, Demote):
            db.execute(
                "UPDATE resources SET delete_pending = 1 WHERE stack_id = ? AND urn = ? AND delete_pending = 0",
                (stack_id, change.urn),
            )
            written += _NUMBER
            continue
        target = change.target
        where = "stack_id = ? AND urn = ? AND delete_pending = ?"
        args: tuple[Any, ...] = (stack_id, target.urn, int(target.delete_pending))
        if target.delete_pending:
            where += " AND cluster_id = ?"
            args += (target.cluster_id,)
        if isinstance(change, Remove):
            db.execute(f"DELETE FROM resources WHERE {where}", args)
            continue
        assert isinstance(change, Put)
        state = change.state
        if state.delete_pending != target.delete_pending:  # replace() costs ~9 µs a step
            state = replace(state, delete_pending=target.delete_pending)
        blob = encode_resource(encrypter.seal(stack, state))
        updated = db.execute(
            f"UPDATE resources SET cluster_id = ?, seq = ?, data = ? WHERE {where}",
            (state.id, seq, blob, *args),
        )
        if updated.rowcount:
            written += _utf8(state.id) + len(blob) + _NUMBER
        else:
            db.execute(
                "INSERT INTO resources (stack_id, urn, delete_pending, cluster_id, seq, data) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (stack_id, state.urn, int(state.delete_pending), state.id, seq, blob),
            )
            written += _resource_row_bytes(state.urn, state.id, blob)
    return written


class SQLiteOperation:
    """An `Operation` on the SQLite backend: its own connection, its lease keeper, its journal.

    Thread-safe: the engine may journal steps from several threads; each call is one
    transaction on this operation's connection, serialized by its mutex.
    """

    def __init__(
        self,
        *,
        backend: SQLiteBackend,
        conn: _Connection,
        stack_id: int,
        project: str,
        stack: str,
        kind: str,
        operation_id: int,
        lease_seconds: float,
        took_over: LockHolder | None,
        version: int,
    ) -> None:
        self._backend = backend
        self._conn = conn
        self._stack_id = stack_id
        self._project = project
        self._stack = stack
        self._kind = kind
        self._id = operation_id
        self._lease = lease_seconds
        self._took_over = took_over
        self._locked_version = self._version = version
        self._encrypter = backend._encrypter
        self._clock = backend._clock
        self._steps: dict[int, _Begun] = {}
        self._tally: Counter[str] = Counter()
        self._bytes = 0
        self._finished = False
        self._lost: LockLost | None = None
        # The keeper writes on its own connection, so a renewal never waits behind
        # this operation's mutex (a journal write in another thread). It holds the
        # operation weakly: an operation dropped without `finish` (a bug, in a
        # long-lived process such as the operator) stops being renewed, and its lock
        # lapses like a dead process's instead of being held until the process exits.
        self._keeper_conn = backend._connect()
        renew = weakref.WeakMethod(self._renew)
        self._keeper = LeaseKeeper(
            lambda: (method := renew()) is not None and method(),
            lease_seconds / 3,
            name=f"stackwright-lease-{stack}-{operation_id}",
        )

    # --- identity ----------------------------------------------------------

    @property
    def id(self) -> int:
        return self._id

    @property
    def project(self) -> str:
        return self._project

    @property
    def stack(self) -> str:
        return self._stack

    @property
    def kind(self) -> str:
        return self._kind

    @property
    def took_over(self) -> LockHolder | None:
        return self._took_over

    @property
    def locked_version(self) -> int:
        return self._locked_version

    @property
    def bytes_written(self) -> int:
        return self._bytes

    @property
    def finished(self) -> bool:
        return self._finished

    # --- the lock ----------------------------------------------------------

    def _renew(self) -> bool:
        with self._keeper_conn.write() as db:
            renewed = db.execute(
                "UPDATE locks SET expires = ? WHERE stack_id = ? AND operation_id = ?",
                (self._clock() + self._lease, self._stack_id, self._id),
            )
        if renewed.rowcount != 1:
            return False
        with self._conn.mutex:
            self._bytes += _NUMBER
        return True

    def check_held(self) -> None:
        self._check_open()
        with self._conn.read() as db:
            self._held_version(db)

    def _fence(self, db: sqlite3.Connection) -> int:
        """The stack's next version, after checking (in this transaction) the lock is ours."""
        self._version = max(self._version, self._held_version(db)) + 1
        return self._version

    def _held_version(self, db: sqlite3.Connection) -> int:
        """The stack's version while its lock is this operation's; else LockLost (kept, so
        every later write raises it too)."""
        if self._lost is not None:
            raise self._lost
        row = db.execute(
            "SELECT l.operation_id, s.version FROM stacks s JOIN locks l ON l.stack_id = s.id WHERE s.id = ?",
            (self._stack_id,),
        ).fetchone()
        if row is not None and row[0] == self._id:
            return int(row[1])
        message, taken_over = self._lost_message(db, row)
        self._lost = LockLost(message, taken_over=taken_over)
        raise self._lost

    def _lost_message(self, db: sqlite3.Connection, row: Sequence[Any] | None) -> tuple[str, bool]:
        """Why the lock is gone, and whether another operation took it over."""
        this = f"this `{self._kind}`"
        after = "; nothing more was recorded, and the next operation settles its pending steps"
        if row is None:
            return f"stack {self._stack} was removed while {this} ran{after}", False
        try:
            holder = _read_holder(db, self._stack_id)
        except StateCorrupt:
            return f"the lock of stack {self._stack} was damaged while {this} ran{after}", False
        cancelled = (
            f"{this} on stack {self._stack} was cancelled (`stackwright cancel` cleared its lock)"
        )
        if holder is None:
            return f"{cancelled}{after}", False
        (result,) = db.execute(
            "SELECT result FROM history WHERE id = ?", (self._id,)
        ).fetchone() or (None,)
        if result == "cancelled":
            now = timestamp(self._clock())
            return f"{cancelled}, and {holder.describe(now)} has taken the lock since{after}", False
        return (
            f"{this} on stack {self._stack} lost its lock to {holder.describe(timestamp(self._clock()))}, "
            f"which took it over after this operation's lease lapsed{after}",
            True,
        )

    def _touch(self, db: sqlite3.Connection, version: int) -> None:
        db.execute(
            "UPDATE stacks SET version = ?, updated = ? WHERE id = ?",
            (version, self._clock(), self._stack_id),
        )
        self._bytes += 2 * _NUMBER

    def _check_open(self) -> None:
        if self._finished:
            raise ValueError(
                f"the `{self._kind}` operation on stack {self._stack} already finished"
            )

    # --- the journal -------------------------------------------------------

    def begin(self, step: int, op: Op, resource: ResourceState) -> None:
        self.begin_many(((step, op, resource),))

    def begin_many(self, steps: Sequence[tuple[int, Op, ResourceState]]) -> None:
        """`begin` of several steps in one transaction: all are recorded, or none.

        Group commit: a commit rewrites whole pages of the WAL, so a transaction per
        step made a 1,000-object `up` write ~38 MB for a 1.4 MB state; the engine
        hands over the steps that begin (or end) together at once (under 10 MB).
        """
        self._check_open()
        if not steps:
            return
        rows = [
            (
                step,
                op,
                resource,
                encode_resource(
                    self._encrypter.seal(self._stack, resource), keep_delete_pending=True
                ),
            )
            for step, op, resource in steps
        ]
        begun: dict[int, _Begun] = {}
        written = 0
        with self._conn.write() as db:
            for step, _, resource, _ in rows:
                if step in self._steps or step in begun:
                    first = self._steps[step] if step in self._steps else begun[step]
                    raise ValueError(f"step {step} was already begun (for {first.resource.urn})")
                begun[step] = _Begun(Op.CREATE, resource, 0)  # a placeholder: duplicates
            version = self._fence(db)
            for step, op, resource, blob in rows:
                cursor = db.execute(
                    "INSERT INTO pending (stack_id, operation_id, step, op, urn, data) VALUES (?, ?, ?, ?, ?, ?)",
                    (self._stack_id, self._id, step, op.value, resource.urn, blob),
                )
                assert cursor.lastrowid is not None
                begun[step] = _Begun(op, resource, cursor.lastrowid)
                written += _pending_row_bytes(op.value, resource.urn, blob)
            self._touch(db, version)
        self._steps.update(begun)
        self._bytes += written

    def end(self, step: int, result: ResourceState | None) -> None:
        self.end_many(((step, result),))

    def end_many(self, steps: Sequence[tuple[int, ResourceState | None]]) -> None:
        """`end` of several steps in one transaction (group commit, as `begin_many`).

        Each step's resource row gets its own sequence number, in the order given, so
        the stack's resources stay in the order their steps ended.
        """
        self._check_open()
        if not steps:
            return
        ended: list[tuple[int, _Begun, ResourceState | None]] = []
        seen: set[int] = set()
        for step, result in steps:
            begun = self._steps.get(step)
            if begun is None or step in seen:
                raise ValueError(f"step {step} was never begun, or already ended")
            seen.add(step)
            ended.append((step, begun, result))
        written = 0
        with self._conn.write() as db:
            version = self._fence(db)
            for offset, (_, begun, result) in enumerate(ended):
                changes = effects(begun.op, begun.resource, result)
                db.execute("DELETE FROM pending WHERE id = ?", (begun.row,))
                written += _apply(
                    db, self._encrypter, self._stack, self._stack_id, changes, version + offset
                )
            version += len(ended) - 1
            self._version = version
            self._touch(db, version)
        self._bytes += written
        for step, begun, result in ended:
            del self._steps[step]
            if counted(begun.op, result):
                self._tally[begun.op.value] += 1

    def fail_step(self, step: int) -> None:
        self._check_open()
        with self._conn.write() as db:
            begun = self._steps.get(step)
            if begun is None:
                raise ValueError(f"step {step} was never begun, or already ended")
            version = self._fence(db)
            db.execute("DELETE FROM pending WHERE id = ?", (begun.row,))
            self._touch(db, version)
            del self._steps[step]

    def resolve_pending(self, pending: PendingOperation, result: ResourceState | None) -> None:
        self._check_open()
        changes = effects(pending.op, pending.resource, result)
        with self._conn.write() as db:
            version = self._fence(db)
            rows = db.execute(
                "SELECT id, op, urn, data FROM pending WHERE stack_id = ? AND urn = ? AND op = ? ORDER BY id",
                (self._stack_id, pending.resource.urn, pending.op.value),
            ).fetchall()
            found = None
            for pending_id, op, urn, blob in rows:
                try:
                    recorded = self._backend._decode_pending(
                        self._project, self._stack, op, urn, blob
                    )
                except Invalid:
                    continue
                if (
                    replace(
                        recorded, resource=self._encrypter.unseal(self._stack, recorded.resource)
                    )
                    == pending
                ):
                    found = pending_id
                    break
            if found is None:
                raise ValueError(
                    f"no pending {pending.op.value} of {pending.resource.urn} is recorded in stack "
                    f"{self._stack}; was it resolved already?"
                )
            db.execute("DELETE FROM pending WHERE id = ?", (found,))
            self._bytes += _apply(
                db, self._encrypter, self._stack, self._stack_id, changes, version
            )
            self._touch(db, version)

    def rename(self, urn: str, new_urn: str) -> None:
        self._check_open()
        parts = parse_urn(new_urn)
        if (parts.stack, parts.project) != (self._stack, self._project):
            raise ValueError(
                f"{new_urn} is not a URN of stack {self._stack} of project {self._project}"
            )
        with self._conn.write() as db:
            version = self._fence(db)
            self._bytes += _rewrite_urns(
                self._backend, db, self._project, self._stack, self._stack_id, {urn: new_urn}
            )
            self._touch(db, version)

    def set_outputs(self, outputs: Mapping[str, Any]) -> None:
        self._check_open()
        blob = encode_json(
            self._encrypter.seal_outputs(self._stack, outputs),
            f"the outputs of stack {self._stack}",
        )
        with self._conn.write() as db:
            version = self._fence(db)
            db.execute("UPDATE stacks SET outputs = ? WHERE id = ?", (blob, self._stack_id))
            self._touch(db, version)
            self._bytes += len(blob)

    def set_former_names(self, names: Sequence[str]) -> None:
        self._check_open()
        with self._conn.write() as db:
            version = self._fence(db)
            _write_former(db, self._project, self._stack, names)
            self._touch(db, version)

    def set_default_cluster(self, identity: ClusterIdentity) -> None:
        self._check_open()
        with self._conn.write() as db:
            version = self._fence(db)
            _write_default_cluster(db, self._project, self._stack, identity)
            self._touch(db, version)

    # --- finishing ---------------------------------------------------------

    def finish(self, result: str = "succeeded", counts: Mapping[str, int] | None = None) -> None:
        self._check_open()
        if result not in FINISH_RESULTS:
            raise ValueError(
                f"an operation finishes as one of {', '.join(FINISH_RESULTS)}, not {result!r}"
            )
        counts_blob = orjson.dumps(dict(self._tally if counts is None else counts))
        self._keeper.stop(self._backend._busy_timeout + 1)
        try:
            with self._conn.write() as db:
                now = self._clock()
                # A cancel or a takeover already closed this entry; it keeps what they said,
                # and the state they saved.
                closed = db.execute(
                    "UPDATE history SET ended = ?, result = ?, counts = ? WHERE id = ? AND result = ?",
                    (now, result, counts_blob, self._id, IN_PROGRESS),
                )
                if closed.rowcount:
                    self._bytes += _save_state(db, self._stack_id, self._id)
                db.execute(f"{_RELEASE} AND operation_id = ?", (self._stack_id, self._id))
        finally:
            self._finished = True
            self._conn.close()
            self._keeper_conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._finished:
            return
        if exc_type is None:
            self.finish("succeeded")
        elif issubclass(exc_type, KeyboardInterrupt) or _cancelled(exc_type):
            self.finish("cancelled")
        else:
            self.finish("failed")


def _cancelled(exc_type: type[BaseException]) -> bool:
    """Whether an operation ended as asyncio cancels one. asyncio is imported here, when an
    operation failed: the commands that only read the store (`stack ls`) are spared ~15 ms."""
    import asyncio

    return issubclass(exc_type, asyncio.CancelledError)
