"""What the state store hands back: stack summaries, lock holders, snapshots, history.

Immutable values with no I/O and no knowledge of how a backend stores them, so
every backend (SQLite now, PostgreSQL and S3 later) returns the same types and
the front ends can render them without importing a backend.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final

from stackwright.model import ClusterIdentity, PendingOperation, ResourceState

#: Results `Operation.finish` accepts.
FINISH_RESULTS: Final = ("succeeded", "failed", "cancelled")
#: Results only the store writes: an operation still running (or whose process died
#: and nobody has taken its lock over yet), and one whose lock was taken over after
#: its lease lapsed.
IN_PROGRESS: Final = "in-progress"
INTERRUPTED: Final = "interrupted"


def timestamp(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, UTC)


def format_age(seconds: float) -> str:
    """`12s`, `3m05s`, `2h07m`: short enough for a one-line message."""
    seconds = max(0, int(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


def operation_phrase(kind: str) -> str:
    """The operation named as a user typed it, with its article: an `up`, a `destroy`."""
    article = "an" if kind[:1].lower() in "aeiou" else "a"
    return f"{article} `{kind}`"


@dataclass(frozen=True)
class LockHolder:
    """The operation holding a stack's lock, and until when its lease runs."""

    operation_id: int
    kind: str
    owner: str
    host: str
    pid: int
    started: datetime
    expires: datetime

    def describe(self, now: datetime) -> str:
        """Who holds the lock, for a message: an `up` started 12s ago by alice on host h (pid 4242)."""
        age = format_age((now - self.started).total_seconds())
        return (
            f"{operation_phrase(self.kind)} started {age} ago by {self.owner} "
            f"on host {self.host} (pid {self.pid})"
        )


@dataclass(frozen=True)
class StackSummary:
    """One line of `stackwright stack ls`."""

    project: str
    name: str
    #: When its last operation that changes resources (`UPDATE_KINDS`) ended (began, while
    #: under way); None when none has run on it yet.
    last_update: datetime | None
    resource_count: int
    #: The holder of a live lock; None when the stack is free (or its lease lapsed).
    lock: LockHolder | None = None

    @property
    def locked(self) -> bool:
        return self.lock is not None


@dataclass(frozen=True)
class Snapshot:
    """A stack's state as the engine plans against it.

    `resources` are in an order where every resource comes after its parent,
    provider and dependencies (the order their steps ended in, repaired by a stable
    topological sort when a step left a dependency behind); an old object awaiting
    deletion after a replacement comes before its successor. `pending` are the steps
    begun and never ended, in the order they were begun: what a crash left for the
    engine to settle by reading the cluster (`Operation.resolve_pending`).
    """

    project: str
    stack: str
    resources: list[ResourceState]
    pending: list[PendingOperation]
    outputs: dict[str, Any]
    #: Grows with every change to the stack's state; equal versions mean equal states.
    version: int
    #: The payload bytes of the rows this snapshot was read from, counted as
    #: `Operation.bytes_written` counts them, so the two can be compared.
    stored_bytes: int = 0
    #: The names the stack had before `stack rename`, oldest first: its objects may still
    #: be members of those names' ApplySets until an `up` marks them anew.
    former_names: tuple[str, ...] = ()
    #: The cluster the stack's default provider (no `k8s.Provider`) last talked to; None
    #: before any operation recorded one (a state older than identities). An explicit
    #: provider's is in its own record's outputs.
    default_cluster: ClusterIdentity | None = None
    #: URN → the auto-names the state let go of for it, oldest first: objects left in the
    #: cluster by a retained delete or `state delete`, which no later auto-name of that URN
    #: may take (`model.auto_name`). Kept after the URN is declared again, so a third
    #: object avoids both earlier ones.
    released_names: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def resource(self, urn: str) -> ResourceState | None:
        """The live (not replaced) resource with this URN, if any."""
        for state in self.resources:
            if state.urn == urn and not state.delete_pending:
                return state
        return None


#: The history kind of `stack import` (the state replaced by an exported document), not
#: `import`, which is objects adopted (`stackwright import`, `import_=`).
STATE_IMPORT: Final = "stack import"

#: The history kinds of operations that change resources, which `stack ls` shows as LAST
#: UPDATE (Pulumi's: its last update, refresh, destroy or import), unlike edits of the
#: state (`stack rename`, `state delete`, `stack import`, …), which `stack history` lists.
UPDATE_KINDS: Final = ("up", "destroy", "refresh", "import")


@dataclass(frozen=True)
class HistoryEntry:
    """One operation in `stackwright stack history`."""

    #: Its number within the stack: 1 for the stack's first operation.
    id: int
    #: An operation (`up`, `destroy`, `refresh`, `import`: objects adopted, as Pulumi's
    #: `import`), or an edit of the state named by its command (`stack import`: the state
    #: replaced by a document; `stack rename`, `state delete`, …).
    kind: str
    start: datetime
    end: datetime | None
    #: "succeeded", "failed", "cancelled", "interrupted" (its process died and another
    #: operation took over the lock) or "in-progress".
    result: str
    counts: dict[str, int] = field(default_factory=dict)
    message: str = ""
    owner: str = ""
    host: str = ""
    #: Whether the state this operation left was saved, for `stack export --version`: not
    #: while it runs, nor for one recorded before Stackwright saved them (schema version 2).
    exportable: bool = False

    @property
    def running(self) -> bool:
        """Whether it is still under way (as its lock's holder last said)."""
        return self.result == IN_PROGRESS
