"""The state store: stacks, their locks, the write-ahead journal of each operation, history.

The layer below the engine. A stack's state is the list of resources the last
operations left, the steps an operation began and did not end (what a crash
left), and its outputs. The engine takes a stack's lock with `begin_operation`,
journals each step before and after it touches the cluster, and settles pending
steps on the next run; front ends list, export, import and edit stacks.

It imports only `stackwright.model`, `stackwright.errors`, the standard library
and orjson; it never talks to a cluster and never decides what a step should be.

    backend = open_backend()                        # $STACKWRIGHT_HOME/state.db
    with backend.begin_operation("web", "dev", kind="up") as op:
        op.begin(1, Op.CREATE, desired)             # before the API call
        op.end(1, live)                             # after it
"""

from stackwright.state._backend import Backend, Operation, require_stack
from stackwright.state._dry_run import DryRunJournal
from stackwright.state._open import SCHEMES, backend_url, open_backend, stackwright_home
from stackwright.state._records import HistoryEntry, LockHolder, Snapshot, StackSummary
from stackwright.state._saved import version_spans
from stackwright.state._secrets import Encrypter, PlaintextEncrypter
from stackwright.state._sqlite import SQLiteBackend, SQLiteOperation
from stackwright.state.errors import LockLost, StateCorrupt

__all__ = [
    "SCHEMES",
    "Backend",
    "DryRunJournal",
    "Encrypter",
    "HistoryEntry",
    "LockHolder",
    "LockLost",
    "Operation",
    "PlaintextEncrypter",
    "SQLiteBackend",
    "SQLiteOperation",
    "Snapshot",
    "StackSummary",
    "StateCorrupt",
    "backend_url",
    "open_backend",
    "require_stack",
    "stackwright_home",
    "version_spans",
]
