"""The engine's entry points: preview, up, destroy, refresh and import of one stack.

Each takes the stack's state backend, the program's declarations (already run:
a program that fails never gets here) and a provider factory, and reports
through one listener. It takes the stack's lock for everything but a preview,
settles what an interrupted run left pending, then executes (`execute.Run`).

Front ends call these and render the events; they hold no orchestration.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable
from typing import Any

from stackwright.engine import policy_gate
from stackwright.engine.events import Diagnostic, Listener, Summary
from stackwright.engine.execute import Options, Run, is_kubernetes, object_ref
from stackwright.engine.policy_gate import PolicyGate
from stackwright.engine.ports import ProviderFactory
from stackwright.errors import UsageError
from stackwright.model import ResourceState
from stackwright.sdk.context import Program
from stackwright.state import Backend, Snapshot


def _snapshot(backend: Backend, project: str, stack: str) -> Snapshot:
    if not backend.has_stack(project, stack):
        raise UsageError(
            f"stack {stack} does not exist in project {project}: create it with `stackwright stack init {stack}`"
        )
    return backend.load(project, stack)


def _check_targets(targets: Iterable[str], program: Program | None, snapshot: Snapshot) -> None:
    targets = set(targets)
    known = {r.urn for r in snapshot.resources} | (set(program.by_urn) if program else set())
    for target in sorted(targets):
        if target not in known:
            raise UsageError(
                f"--target {target} names no resource of stack {snapshot.stack}: "
                "`stackwright stack export` lists the URNs in the state"
            )
        if program is not None and target not in program.by_urn:
            # An up deletes a targeted resource the program dropped; a resource left in the
            # state that still refers to it would make the state unloadable.
            left = sorted(_with_dependents([target], snapshot.resources) - targets)
            if left:
                raise UsageError(
                    f"--target {target} would delete it, but {left[0]} still refers to it in "
                    f"the state: target that resource too (`--target {left[0]}`)"
                )


def run(
    backend: Backend,
    *,
    project: str,
    stack: str,
    options: Options,
    program: Program | None,
    providers: ProviderFactory,
    listener: Listener,
    message: str = "",
    policy: PolicyGate | None = None,
) -> Summary:
    """Carry out `options.kind` on the stack and return its summary (also emitted last).

    With a `policy` gate, the program's objects are checked first: a blocking
    violation raises `PolicyViolation` before the lock is taken or the cluster called."""
    snapshot = _snapshot(backend, project, stack)
    _check_targets(options.targets, program, snapshot)
    for note in program.notes if program is not None else ():
        listener(Diagnostic("", note, "warning"))
    if policy is not None and program is not None:
        what = "preview" if options.dry_run else options.kind
        policy_gate.check(policy, program, stack, listener, what)
    started = time.monotonic()
    written = 0
    if options.dry_run:
        summary = asyncio.run(_preview(snapshot, options, program, providers, listener))
    else:
        with backend.begin_operation(
            project, stack, kind=options.kind, message=message
        ) as operation:
            # Plan against the state as it is now that no other operation can change it
            # (the snapshot above only served to check the input before locking).
            snapshot = backend.load(project, stack)
            summary = asyncio.run(
                _mutate(backend, operation, snapshot, options, program, providers, listener)
            )
            operation.finish("succeeded" if summary.ok else "failed", counts=summary.counts)
        written = operation.bytes_written
    summary = Summary(
        **{
            **summary.__dict__,
            "elapsed": time.monotonic() - started,
            "state_bytes_written": written,
        }
    )
    listener(summary)
    return summary


async def _preview(
    snapshot: Snapshot,
    options: Options,
    program: Program | None,
    providers: ProviderFactory,
    listener: Listener,
) -> Summary:
    if snapshot.pending:
        listener(
            Diagnostic(
                "",
                f"{len(snapshot.pending)} step(s) of an interrupted operation are pending; "
                "the next `up` settles them by reading the cluster",
                "warning",
            )
        )
    run_ = Run.over(snapshot, options, program, None, providers, listener)
    try:
        if options.refresh or options.kind == "refresh":
            await run_.refresh(record=False)
        if options.kind == "destroy":
            await run_.delete_all(_targeted(snapshot.resources, options))
        elif program is not None:
            await run_.run_program()
            await run_.delete_all(_stale(run_, program, options))
        _, run_.outcome.outputs = run_.stack_outputs()
        return run_.summary(0.0)
    finally:
        await run_.close()


def _stale(run_: Run, program: Program, options: Options) -> list[ResourceState]:
    """What the state holds and the program no longer declares, plus replaced objects awaiting deletion."""
    gone = [s for s in run_.old.values() if s.urn not in program.by_urn]
    if options.targets:
        gone = [s for s in gone if s.urn in options.targets]
    return [*run_.replaced, *gone]


def _targeted(resources: list[ResourceState], options: Options) -> list[ResourceState]:
    """What a destroy deletes: everything, or the targets and whatever refers to them
    (a state must never keep a resource whose parent, provider or dependency is gone)."""
    if not options.targets:
        return list(resources)
    doomed = _with_dependents(options.targets, resources)
    return [s for s in resources if s.urn in doomed]


def _with_dependents(urns: Iterable[str], resources: list[ResourceState]) -> set[str]:
    """`urns` and the recorded resources that refer to them, directly or not."""
    dependents: dict[str, set[str]] = {}
    for state in resources:
        for ref in {state.parent, state.provider, *state.dependencies} - {"", state.urn}:
            dependents.setdefault(ref, set()).add(state.urn)
    found: set[str] = set()
    todo = list(urns)
    while todo:
        urn = todo.pop()
        if urn not in found:
            found.add(urn)
            todo.extend(dependents.get(urn, ()))
    return found


async def _mutate(
    backend: Backend,
    operation: Any,
    snapshot: Snapshot,
    options: Options,
    program: Program | None,
    providers: ProviderFactory,
    listener: Listener,
) -> Summary:
    settle = Run.over(snapshot, options, None, operation, providers, listener)
    try:
        if snapshot.pending:
            await settle.settle_pending(snapshot.pending)
            snapshot = backend.load(snapshot.project, snapshot.stack)
    finally:
        await settle.close()
    run_ = Run.over(snapshot, options, program, operation, providers, listener)
    try:
        if options.kind == "refresh":
            await run_.refresh(record=True)
            return run_.summary(0.0)
        if options.refresh:
            await run_.refresh(record=True)
        if options.kind == "destroy":
            doomed = _targeted(snapshot.resources, options)
            await run_.delete_all(doomed)
            if not run_.outcome.failures and not options.targets:
                await _remove_applysets(run_, doomed)
                operation.set_outputs({})
            return run_.summary(0.0)
        assert program is not None
        await run_.run_program()
        failed = bool(run_.outcome.failures or run_.outcome.not_done)
        await run_.delete_all(_stale(run_, program, options), blocked=failed)
        stored, run_.outcome.outputs = run_.stack_outputs()
        if not failed and stored != snapshot.outputs:
            operation.set_outputs(stored)
        return run_.summary(0.0)
    finally:
        await run_.close()


async def _remove_applysets(run_: Run, states: list[ResourceState]) -> None:
    used: set[tuple[str, str]] = set()
    for state in states:
        if state.custom and is_kubernetes(state):
            namespace = object_ref(state)[2]
            if namespace:
                used.add((state.provider, namespace))
    for provider_urn, namespace in sorted(used):
        try:
            await run_.provider_for(provider_urn).remove_applyset(run_.stack, namespace)
        except Exception as exc:  # the namespace went with the stack: nothing left to remove
            run_.emit(
                Diagnostic(
                    "", f"could not remove the ApplySet parent in {namespace}: {exc}", "warning"
                )
            )
