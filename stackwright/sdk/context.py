"""The running program: what it declared, its stack outputs and its configuration.

A `Program` is installed for the duration of one program run (by the engine);
resource constructors, `export` and `Config` find it through `current_program()`, and
`sw.log` / `sw.is_dry_run` through `run_of_program()`, also from an apply callback.
Running a program twice gives two independent `Program`s, so tests and the
automation API can run programs side by side in one process (one at a time per
thread).

Must never: apply anything — a program run only declares.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from stackwright.errors import UsageError, located
from stackwright.model import make_urn

if TYPE_CHECKING:
    from stackwright.sdk.output import Output
    from stackwright.sdk.resource import Resource

_local = threading.local()


@dataclass
class Program:
    project: str
    stack: str
    #: The stack's configuration, keys as `project:key` or `namespace:key`; secrets decrypted.
    config: Mapping[str, Any] = field(default_factory=dict)
    secret_keys: frozenset[str] = frozenset()
    #: The plain values of each secret key's secret parts (`config set --secret --path
    #: db.password` makes only `password` of `db` secret); a secret key missing here is
    #: secret whole.
    secret_parts: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)
    #: The texts of the secret configuration parts a plain getter (`Config.get`,
    #: `get_object`, ...) handed out: the engine seals them wherever the stack records them.
    read_plain: set[str] = field(default_factory=set)
    resources: list[Resource] = field(default_factory=list)
    by_urn: dict[str, Resource] = field(default_factory=dict)
    exports: dict[str, Any] = field(default_factory=dict)
    #: The program's language (the project's `runtime`): `python` or `yaml`, whose messages
    #: spell an option as the program does (`resource_prefix`, `resourcePrefix`).
    runtime: Literal["python", "yaml"] = "python"
    #: Warnings about how the program is written, shown before the operation's steps.
    notes: list[str] = field(default_factory=list)
    #: `register_resource_transform`'s transforms, applied to each resource declared after.
    transforms: list[Callable[[Any], Any]] = field(default_factory=list)
    #: Every Output `apply` made while the program ran, in order: the engine runs the ones
    #: nothing made run (a callback that prints or logs), as Pulumi runs every apply.
    applies: list[Output[Any]] = field(default_factory=list)
    #: The run is a preview (`sw.is_dry_run()`): `preview`, the preview before `up`, a
    #: policy check; False only for the program run of an `up` that applies.
    dry_run: bool = True
    #: `sw.log`'s messages as (severity, message, URN or "" for the stack) until the engine
    #: takes them (`logging_to`), which then hands it each one as it is logged.
    logged: list[tuple[str, str, str]] = field(default_factory=list)
    _log_sink: Callable[[str, str, str], None] | None = None

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    #: Another stack's outputs by its name (`org/project/stack`, `project/stack`, `stack`),
    #: secret parts as `model.SecretValue`; installed by the automation layer, which owns
    #: the state store (the SDK never reads state itself).
    read_stack: Callable[[str], Mapping[str, Any]] | None = None

    #: The namespace a Kubernetes provider puts objects without one in, given its plain
    #: settings (`kubeconfig`, `context`, `namespace`; None for the stack's default
    #: provider), read from its kubeconfig without connecting; None when that cannot be
    #: read. Installed by the automation layer, which may read kubeconfigs (the SDK may not).
    provider_namespace: Callable[[Mapping[str, Any] | None], str | None] | None = None

    def register(self, resource: Resource) -> str:
        urn = make_urn(
            self.stack,
            self.project,
            resource.resource_type,
            resource.resource_name,
            resource.parent_types(),
        )
        parent = resource.opts.parent
        if parent is not None and self.by_urn.get(getattr(parent, "_urn", "")) is not parent:
            raise UsageError(
                f"the parent of {resource.resource_type} {resource.resource_name!r} at "
                f"{resource.declared_at} was not declared in this program run: "
                "declare the parent first, in the same program"
            )
        existing = self.by_urn.get(urn)
        if existing is not None:
            # Objects of two manifests or charts are named by their kind and name: the
            # components' `resource_prefix` tells them apart.
            prefix = "resourcePrefix" if self.runtime == "yaml" else "resource_prefix"
            how = (
                f"give one of their components a {prefix}"
                if existing.origin and resource.origin
                else "give one of them another name"
            )
            raise UsageError(
                located(
                    resource.declared_at,
                    f"duplicate resource URN {urn}: {existing.declared_at} declares it "
                    f"already; {how}",
                )
            )
        self.by_urn[urn] = resource
        self.resources.append(resource)
        return urn

    def export(self, name: str, value: Any) -> None:
        self.exports[name] = value

    def log(self, severity: str, message: str, urn: str = "") -> None:
        if self._log_sink is None:
            self.logged.append((severity, message, urn))
        else:
            self._log_sink(severity, message, urn)

    def log_to(self, sink: Callable[[str, str, str], None] | None) -> None:
        """Hand `sink` the messages logged so far, and each later one as it is logged (None:
        keep them again, for the next sink)."""
        if sink is not None:
            for entry in self.logged:
                sink(*entry)
            self.logged.clear()
        self._log_sink = sink

    @contextlib.contextmanager
    def logging_to(self, sink: Callable[[str, str, str], None]) -> Iterator[None]:
        """`log_to(sink)` while the block runs (an operation, whose callbacks log)."""
        self.log_to(sink)
        try:
            yield
        finally:
            self.log_to(None)


#: The note an apply callback's error carries, by which the engine tells it from its own
#: and names the program's line it was raised at (`output.from_callback`).
CALLBACK_NOTE = "raised by an apply callback of the program"


def current_program() -> Program:
    program: Program | None = getattr(_local, "program", None)
    if program is None and getattr(_local, "callback", False):
        # Pulumi allows this, but then no preview shows the resource; here the program has
        # finished declaring before any callback runs.
        refused = UsageError(
            "nothing can be declared inside an apply callback (a resource, a Config, a stack "
            "output): callbacks run after the program has finished; declare it in the program "
            "and pass the Output as its input (e.g. data={'name': other.metadata['name']})"
        )
        refused.add_note(CALLBACK_NOTE)  # the callback's doing: told at its line
        raise refused
    if program is None:
        raise UsageError(
            "resources can only be declared while Stackwright runs a program "
            "(run it with `stackwright preview` or `stackwright up`)"
        )
    return program


@contextlib.contextmanager
def running(program: Program) -> Iterator[Program]:
    """Install `program` as the current one while a program runs."""
    previous = getattr(_local, "program", None)
    _local.program = program
    try:
        yield program
    finally:
        _local.program = previous


def record_apply(output: Output[Any]) -> None:
    """Record an Output `apply` made with the running program (none outside a run: a
    callback's own applies are consumed by it, or by nothing that could run them)."""
    program: Program | None = getattr(_local, "program", None)
    if program is not None:
        program.applies.append(output)


def run_of_program() -> Program | None:
    """The program run that is declaring, or whose apply callback is running (None outside
    both): what `sw.log` and `sw.is_dry_run` report to, which a callback may call."""
    program: Program | None = getattr(_local, "program", None)
    return program if program is not None else getattr(_local, "callback_of", None)


@contextlib.contextmanager
def callback(program: Program | None = None) -> Iterator[None]:
    """While an apply callback (made while `program` ran) runs, so that declaring from it is
    refused saying why, and `run_of_program` finds the run it belongs to."""
    previous = getattr(_local, "callback", False), getattr(_local, "callback_of", None)
    _local.callback = True
    _local.callback_of = program
    try:
        yield
    finally:
        _local.callback, _local.callback_of = previous


def is_dry_run() -> bool:
    """Whether the program runs for a preview (Pulumi's `runtime.is_dry_run`): True in
    `preview` (and the preview `up` shows before asking), False when `up` applies it."""
    program = run_of_program()
    if program is None:
        raise UsageError(
            "sw.is_dry_run() answers only while Stackwright runs a program "
            "(run it with `stackwright preview` or `stackwright up`)"
        )
    return program.dry_run


def get_stack() -> str:
    """The name of the stack the program runs for (Pulumi's `get_stack`)."""
    return current_program().stack


def get_project() -> str:
    """The name of the program's project (Pulumi's `get_project`)."""
    return current_program().project


def export(name: str, value: Any) -> None:
    """A stack output: shown after `up`, read with `stackwright stack output NAME`.

    A resource in it stands for its live object (a component for what it registered with
    `register_outputs`), as Pulumi exports a resource's outputs."""
    current_program().export(name, _exported(value))


def _exported(value: Any) -> Any:
    from stackwright.sdk.resource import ComponentResource, Resource

    if isinstance(value, ComponentResource):
        return _exported(value.component_outputs)
    if isinstance(value, Resource):
        return value.output()
    if isinstance(value, Mapping):
        return {k: _exported(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_exported(v) for v in value]
    return value
