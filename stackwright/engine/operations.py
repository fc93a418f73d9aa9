"""The engine's entry points: preview, up, destroy, refresh and import of one stack.

Each takes the stack's state backend, the program's declarations (already run:
a program that fails never gets here) and a provider factory, and reports
through one listener. It takes the stack's lock for everything but a preview,
settles what an interrupted run left pending, then executes (`execute.Run`).

Front ends call these and render the events; they hold no orchestration.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import re
import shlex
import time
from collections.abc import Callable, Coroutine, Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from stackwright import interrupts
from stackwright.engine import policy_gate
from stackwright.engine.adoption import builtin_namespaced, import_disagreement, import_done
from stackwright.engine.clusters import ClusterCheck, check_clusters
from stackwright.engine.declared_schemas import check_before_up
from stackwright.engine.events import (
    Diagnostic,
    Event,
    Listener,
    Log,
    StepStarted,
    Summary,
    plural,
    shown,
)
from stackwright.engine.execute import (
    Options,
    Run,
    declared_metadata,
    record_moves,
    refuse_plan_violations,
)
from stackwright.engine.graph import defined_kind, group_and_kind
from stackwright.engine.policy_gate import PolicyGate, in_force
from stackwright.engine.ports import Journal, ProviderFactory
from stackwright.engine.records import (
    ClusterOf,
    applyset_of,
    by_provider,
    describe,
    from_origin,
    is_kubernetes,
    is_patch,
    mark_of,
    name_refusal,
    patch_field_manager,
    protected,
    provider_urn,
    recorded_closure,
)
from stackwright.engine.rendering import check_rendered
from stackwright.engine.saved_plan import PREVIEW_AGAIN
from stackwright.engine.wiring import (
    APPLYSET_ID_LABEL,
    APPLYSET_PARENT_PREFIX,
    APPLYSET_TOOLING,
    check_marks,
)
from stackwright.errors import StackwrightError, UsageError, located
from stackwright.kubernetes.base import PATCH_FIELD_MANAGER
from stackwright.kubernetes.provider import PROVIDER_TYPE, provider_namespace
from stackwright.model import URN_ANNOTATION, ResourceState, parse_urn
from stackwright.sdk.context import Program, running
from stackwright.sdk.resource import Resource
from stackwright.sdk.spelling import spelling_of
from stackwright.state import (
    Backend,
    DryRunJournal,
    LockHolder,
    LockLost,
    Operation,
    Snapshot,
    require_stack,
)


def _snapshot(backend: Backend, project: str, stack: str) -> Snapshot:
    require_stack(backend, project, stack)
    return backend.load(project, stack)


def _pattern(glob: str) -> re.Pattern[str]:
    """A URN pattern as Pulumi's flags take it: `**` any text, `*` any text within one
    `:`-separated part, `?` one character of it."""
    parts = re.split(r"(\*\*|\*|\?)", glob)
    wild = {"**": ".*", "*": "[^:]*", "?": "[^:]"}
    return re.compile("".join(wild.get(part) or re.escape(part) for part in parts))


def _expanded(options: Options, program: Program | None, snapshot: Snapshot) -> Options:
    """`options` with every URN pattern of its flags replaced by the URNs it matches
    (the program's and the state's; the program's alone for `--replace`)."""
    declared = list(program.by_urn) if program is not None else []
    known = sorted({*declared, *(r.urn for r in snapshot.resources)})

    def expand(flag: str, urns: frozenset[str], among: list[str]) -> frozenset[str]:
        found: set[str] = set()
        for urn in urns:
            if not any(c in urn for c in "*?"):
                found.add(urn)
                continue
            pattern = _pattern(urn)
            matched = [u for u in among if pattern.fullmatch(u)]
            if not matched:
                raise UsageError(
                    f"{flag} {urn} matches no resource of stack {snapshot.stack}: "
                    "`stackwright preview` and `stackwright stack export` show the URNs"
                )
            found.update(matched)
        return frozenset(found)

    excludes = expand("--exclude", options.excludes, known)
    if options.exclude_protected:
        excludes |= {r.urn for r in snapshot.resources if r.protect}
    return dataclasses.replace(
        options,
        targets=expand("--target", options.targets, known),
        excludes=excludes,
        replace=expand("--replace", options.replace, declared),
    )


def _check_marks(program: Program | None) -> None:
    """Refuse, before anything runs (one line naming the resource and its line, exit 2), an
    object whose Stackwright annotations cannot be read (`timeout-seconds: "abc"`): found
    at its apply, it failed that step alone (exit 1) while the rest of the run went on.
    Values only known once applied (Outputs) are checked then."""
    for resource in program.resources if program is not None else ():
        meta = resource.props.get("metadata") if resource.custom else None
        annotations = meta.get("annotations") if isinstance(meta, dict) else None
        if not isinstance(annotations, dict) or not any(
            isinstance(key, str) and key.startswith(MARK_PREFIX) for key in annotations
        ):
            continue
        known = {k: v for k, v in annotations.items() if isinstance(v, str | int | float)}
        try:
            check_marks({"metadata": {"annotations": known}})
        except ValueError as exc:
            raise UsageError(
                located(resource.declared_at, f"{describe(resource.urn)}: {exc}")
            ) from None


def _records_as_run(program: Program, snapshot: Snapshot) -> dict[str, ResourceState]:
    """URN → the record the run gives the program's resource of that URN: a resource renamed
    (an alias, another version of its kind) has its former record (`Run._apply_aliases`)."""
    recorded = {r.urn: r for r in snapshot.resources}
    for urn, (former, _) in record_moves(program.resources, recorded).items():
        recorded[urn] = recorded[former]
    return recorded


def _check_imports(
    program: Program,
    recorded: Mapping[str, ResourceState],
    scope: Callable[[Resource], bool | None],
) -> None:
    """Refuse, before anything runs, an import whose id names no object of its kind (`x/k1`
    for a cluster-scoped kind) or another object than the resource's own
    `metadata.namespace` or `metadata.name` (`import_="team/web"` with `namespace: prod`;
    `import_="web"`, the default namespace's, with `namespace: prod`): the program's value
    won and the object adopted was not the one named. `scope` tells whether a resource's
    kind is namespaced (None: not known, left to the run). Values only known once applied
    (Outputs) are checked at the run's inputs."""
    default = _default_namespaces(program)
    for resource in program.resources:
        if not resource.opts.import_:
            continue
        meta = resource.props.get("metadata")
        meta = meta if isinstance(meta, dict) else {}
        old = recorded.get(resource.urn)
        disagreement = import_disagreement(resource, meta, old, scope(resource), default(resource))
        if disagreement is not None:
            raise UsageError(
                located(
                    resource.declared_at,
                    f"{describe(resource.urn)}: {disagreement}; nothing was changed",
                )
            )


def _known_scopes(program: Program) -> Callable[[Resource], bool | None]:
    """Whether a resource's kind is namespaced, as far as it is known without asking a
    cluster: a built-in kind's, or a custom kind's whose CRD the program declares through
    the same provider (its `spec.scope`); else None."""
    defined: dict[tuple[str, str, str], bool] = {}
    for crd in program.resources:
        served = defined_kind(crd.props) if crd.custom else None
        spec = crd.props.get("spec")
        scope = spec.get("scope") if served is not None and isinstance(spec, dict) else None
        if served is not None and isinstance(scope, str):
            defined[(provider_urn(crd), *served)] = scope != "Cluster"

    def known(resource: Resource) -> bool | None:
        api_version = str(resource.props.get("apiVersion", ""))
        found = builtin_namespaced(api_version, str(resource.props.get("kind", "")))
        if found is None:
            found = defined.get((provider_urn(resource), *group_and_kind(resource.props)))
        return found

    return known


def _check_custom_imports(program: Program, snapshot: Snapshot, providers: ProviderFactory) -> None:
    """`_check_imports` of the imports of custom kinds whose scope only the cluster knows
    (their CRD is not in the program), through the stack's default provider: one discovery
    question per kind, asked only when there is such an import still to do. A kind it does
    not serve is left to the run, which says so; an explicit provider's, to the run too."""
    imports = [
        r
        for r in program.resources
        if r.opts.import_ and r.custom and is_kubernetes(r.resource_type) and not provider_urn(r)
    ]
    if not imports:  # the usual program: no table of scopes to build, nothing asked
        return
    known = _known_scopes(program)
    unknown = [r for r in imports if known(r) is None]
    if not unknown:
        return
    recorded = _records_as_run(program, snapshot)
    asking = {
        (str(r.props.get("apiVersion", "")), str(r.props.get("kind", "")))
        for r in unknown
        if r.opts.import_ and not import_done(r.opts.import_, recorded.get(r.urn))
    }
    if not asking:
        return

    async def ask() -> dict[tuple[str, str], bool]:
        provider = providers(None)
        found: dict[tuple[str, str], bool] = {}
        try:
            for api_version, kind in sorted(asking):
                with contextlib.suppress(Exception):  # not served (yet): the run says so
                    found[api_version, kind] = await provider.namespaced(api_version, kind)
        finally:
            await provider.close()
        return found

    served = interrupts.run(ask())

    def scope(resource: Resource) -> bool | None:
        key = (str(resource.props.get("apiVersion", "")), str(resource.props.get("kind", "")))
        return known(resource) if provider_urn(resource) else served.get(key, known(resource))

    _check_imports(program, recorded, scope)


def _default_namespaces(program: Program) -> Callable[[Resource], str]:
    """The namespace a resource's provider puts objects without one in, as far as the program
    tells it before the run (`provider_namespace`), asked once per provider; "" when only
    another resource's apply will tell it."""
    found: dict[str, str] = {}  # provider URN → its default namespace

    def default(resource: Resource) -> str:
        provider = provider_urn(resource)
        if provider not in found:
            try:
                with running(program):
                    found[provider] = provider_namespace(describe(resource.urn), resource.opts)
            except UsageError:  # known once another resource is applied
                found[provider] = ""
        return found[provider]

    return default


def _check_one_resource_per_object(
    program: Program,
    recorded: Mapping[str, ResourceState],
    released: Mapping[str, tuple[str, ...]],
    cluster_of: Callable[[str], str] = str,
) -> None:
    """Refuse, before anything runs, two resources of the program that name one object
    (same cluster, group, kind, namespace and name; a `metadata.name` given to one that
    another's auto-name already has): each would apply over the other's fields, and the
    preview would show one of them as unchanged. Two Patches of one object that apply as
    one field manager are refused alike: each one's apply would drop the other's fields,
    and a name no object can have (`name_refusal`), whose id would name another.
    `cluster_of` tells the cluster a provider (by URN) reaches where two may reach one
    (`ClusterCheck.cluster_of`); by default each provider's is its own.
    Names only known once applied (Outputs) are left to the run."""
    seen: dict[tuple[str, str, str, str, str, str], Resource] = {}
    default = _default_namespaces(program)
    for resource in program.resources:
        patch = resource.custom and is_patch(resource)
        if not resource.custom or resource.is_read or not (patch or is_kubernetes(resource)):
            continue
        # As the run names it: an import of `team/web` without a namespace is in `team`.
        urn = resource.urn
        named = declared_metadata(resource, recorded.get(urn), released.get(urn, ()))
        if named is None:
            continue
        name, namespace = named["name"], named.get("namespace")
        provider = provider_urn(resource)
        if namespace in (None, ""):
            namespace = default(resource)
        refused = name_refusal(name) if isinstance(name, str) else None
        if refused is not None:
            raise UsageError(
                located(
                    resource.declared_at.of_field("metadata.name"),
                    f"{describe(resource.urn)}"
                    f"{from_origin(resource)}: {refused}; nothing was changed",
                )
            )
        if not name or not isinstance(namespace, str):
            continue
        group, kind = group_and_kind(resource.props)
        old = recorded.get(resource.urn)
        manager = patch_field_manager(resource.urn, resource.props, old) if patch else ""
        key = (cluster_of(provider), group, kind, namespace, name, manager)
        first = seen.setdefault(key, resource)
        if first is not resource:
            where = f"{named['namespace']}/{name}" if named.get("namespace") else name
            if patch:
                raise UsageError(
                    located(
                        resource.declared_at,
                        f"{describe(resource.urn)} applies to {kind} "
                        f"{where} as field manager {manager}, as {describe(first.urn)} "
                        f"({first.declared_at}) does: each one's apply would drop the other's "
                        f"fields; give one of them another {PATCH_FIELD_MANAGER} annotation (or "
                        "none: each Patch has a manager of its own); nothing was changed",
                    )
                )
            raise UsageError(
                located(
                    resource.declared_at,
                    f"{describe(resource.urn)}{from_origin(resource)} names the "
                    f"same {kind} {where} as {describe(first.urn)}{from_origin(first)} "
                    f"({first.declared_at}): each would overwrite the other's fields; "
                    f"{_one_of_them(program, resource, first)}; nothing was changed",
                )
            )


def _one_of_them(program: Program, *resources: Resource) -> str:
    """How to keep one object per name: a program's own resource is renamed or dropped; an
    object of manifests or a chart (the same Namespace in two files) is left out of one of
    them, in a Python program by a transformation that empties it (a YAML program has none:
    by its file or the chart's values). One that imports the object adopts what the other
    declares: another name would disagree with its import id."""
    importing = [r for r in resources if r.opts.import_]
    if importing:
        return (
            f"drop one of them ({describe(importing[0].urn)} imports it: another "
            "metadata.name would not match its import id)"
        )
    if not all(r.origin for r in resources):
        return "give one of them another metadata.name (or drop one)"
    how = (
        "take it out of its file, `yaml` or `objs`, or turn it off in the chart's values"
        if program.runtime == "yaml"
        else "a transformation that empties it, `obj.clear()`, drops it"
    )
    return f"leave it out of one of them ({how}), or declare it once in the program"


def _check_definitions(
    options: Options, program: Program | None, deleted: list[ResourceState]
) -> None:
    """Refuse, before anything runs, a run that deletes a CustomResourceDefinition the
    program dropped while it still declares objects of that kind: the cluster deletes
    every object of a kind with its CRD, so they would be gone while the state and the
    preview said `same` (Pulumi and Argo CD delete them without a word). `deleted`: what
    the up deletes (`_deleted_by_up`)."""
    if program is None or options.kind == "destroy":
        return
    defined = {
        (provider_urn(r), kind)
        for r in program.resources
        if r.custom and (kind := defined_kind(r.props)) is not None
    }
    dropped: dict[tuple[str, tuple[str, str]], ResourceState] = {}
    for state in _objects_deleted(deleted):
        kind = defined_kind(state.inputs) if is_kubernetes(state) else None
        if kind is not None and (state.provider, kind) not in defined:
            dropped[state.provider, kind] = state
    for resource in program.resources if dropped else ():
        if not resource.custom or resource.is_read:
            continue
        kind = group_and_kind(resource.props)
        crd = dropped.get((provider_urn(resource), kind))
        if crd is not None:
            raise UsageError(
                located(
                    resource.declared_at,
                    f"{describe(resource.urn)}: its "
                    f"CustomResourceDefinition {crd.id} ({describe(crd.urn)}) is no longer "
                    "declared, and deleting it would "
                    f"delete every {kind[1]} in the cluster, this one too. Keep the CRD in the "
                    "program, drop its objects as well, or give the CRD "
                    f"`{spelling_of(program.runtime).setting('retain_on_delete', True)}` and run "
                    "`stackwright up` before dropping it",
                )
            )


def _dropped(
    options: Options, program: Program, resources: list[ResourceState]
) -> list[ResourceState]:
    """The recorded resources whose objects an `up` deletes because the program dropped
    them (under any alias): those `--target` / `--exclude` leave it, but the protected
    (whose delete fails), the retained and the read ones (whose objects stay)."""
    return _objects_deleted(_deleted_by_up(options, program, resources))


def _objects_deleted(deleted: list[ResourceState]) -> list[ResourceState]:
    """Of the resources an `up` deletes, those whose objects go: not the protected, the
    retained or the read ones."""
    return [s for s in deleted if not (s.protect or s.retain_on_delete or s.external)]


def _deleted_by_up(
    options: Options, program: Program, resources: list[ResourceState]
) -> list[ResourceState]:
    """The recorded resources an `up` deletes (or tries to) because the program dropped
    them (under any alias, or another version of their kind: the same object), as far as
    `--target` / `--exclude` leave it."""
    kept = _kept(options, resources)
    kept.update(urn for r in program.resources for urn in (r.urn, *r.alias_urns()))
    dropped = [
        state
        for state in resources
        if state.urn not in kept and not (options.targets and state.urn not in options.targets)
    ]
    if not dropped:  # the usual run: no need to match versions
        return dropped
    recorded = {state.urn: state for state in resources}
    moved = {former for former, _ in record_moves(program.resources, recorded).values()}
    return [state for state in dropped if state.urn not in moved]


def _check_protected(
    options: Options, program: Program | None, snapshot: Snapshot, deleted: list[ResourceState]
) -> None:
    """Refuse, before any change, an `up` or `destroy` that would delete a protected
    resource: its delete would fail only after the run had changed or deleted everything
    else (a protected Namespace's objects first), where Pulumi's preview, which its `up
    --yes` and `destroy --yes` run first, stops the whole run. A preview reports it as the
    failed step it would be. `deleted`: what an up deletes (`_deleted_by_up`)."""
    if options.dry_run:
        return
    if options.kind == "destroy":
        doomed = _targeted(snapshot.resources, options)
        other_way = "; `stackwright destroy --exclude-protected` deletes everything else"
    elif options.kind == "up" and program is not None:
        doomed = deleted
        other_way = ""
    else:
        return
    guarded = [state for state in doomed if state.protect and not state.external]
    if guarded:
        more = f" (and {plural(len(guarded) - 1, 'other protected resource')})"
        raise UsageError(
            f"{options.kind} refused: {protected(guarded[0].urn)}"
            f"{more if len(guarded) > 1 else ''}{other_way}; nothing was changed"
        )


def _check_namespaces_kept(
    options: Options, program: Program | None, snapshot: Snapshot, deleted: list[ResourceState]
) -> None:
    """Refuse, before any change, an `up` (or its preview) that would delete a Namespace the
    program dropped while it still declares objects in it: the API server deletes what is
    in a namespace with it, so they would be gone while the state, and every later preview,
    called them unchanged. Only objects through the Namespace's own provider, and names
    known before the run: another provider may reach another cluster."""
    if options.kind != "up" or program is None:
        return
    doomed = {
        (state.provider, state.id): state
        for state in deleted
        if state.inputs.get("kind") == "Namespace"
        and state.inputs.get("apiVersion") == "v1"
        and not (state.retain_on_delete or state.external)
    }
    if not doomed:
        return
    recorded = {r.urn: r for r in snapshot.resources}
    default, namespaced = _default_namespaces(program), _known_scopes(program)
    declared = [
        (resource, named)
        for resource in program.resources
        if resource.custom
        and not resource.is_read
        and is_kubernetes(resource)
        and (
            named := declared_metadata(
                resource,
                recorded.get(resource.urn),
                snapshot.released_names.get(resource.urn, ()),
            )
        )
        is not None
    ]
    for resource, named in declared:  # a Namespace renamed in the program keeps its object
        if resource.props.get("kind") == "Namespace" and resource.props.get("apiVersion") == "v1":
            doomed.pop((provider_urn(resource), str(named.get("name"))), None)
    for resource, named in declared:
        if namespaced(resource) is not True:
            continue
        namespace = named.get("namespace") or default(resource)
        carrier = doomed.get((provider_urn(resource), namespace))
        if carrier is None:
            continue
        raise UsageError(
            located(
                resource.declared_at.of_field("metadata.namespace"),
                f"{describe(resource.urn)} is in namespace {namespace}, which `up` would "
                f"delete: the program no longer declares {carrier.urn}, and the API server "
                "deletes what is in a namespace with it; declare the Namespace again, or move "
                "or remove what the program puts in it (`stackwright state delete "
                f"{shlex.quote(carrier.urn)}` stops managing the Namespace and leaves it in "
                "the cluster); nothing was changed",
            )
        )


#: What Stackwright's own annotations start with (`stackwright.io/timeout-seconds`, …).
MARK_PREFIX = "stackwright.io/"


def _check_targets(options: Options, program: Program | None, snapshot: Snapshot) -> None:
    targets = set(options.targets)
    known = {r.urn for r in snapshot.resources} | (set(program.by_urn) if program else set())
    for flag, urns in (("--target", targets), ("--exclude", options.excludes)):
        for urn in sorted(urns):
            if urn not in known:
                if flag == "--target" and urn in options.replace:
                    flag = "--target-replace"  # as typed (`--target X --replace X` is the same)
                _check_given(flag, urn)
                # Pulumi's flags take URNs; a bare name (`--target web`) matches by pattern.
                by_name = "" if urn.startswith("urn:") else f", or match it by name: '**::{urn}'"
                raise UsageError(
                    f"{flag} {urn} names no resource of stack {snapshot.stack}: "
                    f"`stackwright stack --show-urns` lists the URNs in the state{by_name}"
                )
    both = sorted(targets & options.excludes)
    if both:
        raise UsageError(f"{both[0]} is both a --target and an --exclude: drop one of the two")
    for target in sorted(targets):
        if program is not None and target not in program.by_urn and not options.target_dependents:
            # An up deletes a targeted resource the program dropped; a resource left in the
            # state that still refers to it would make the state unloadable.
            left = sorted(_with_dependents([target], snapshot.resources) - targets)
            if left:
                raise UsageError(
                    f"--target {target} would delete it, but {left[0]} still refers to it in "
                    f"the state: target that resource too (`--target {shlex.quote(left[0])}`), "
                    "or add --target-dependents"
                )
    _check_replace(options, program)


def _check_given(flag: str, urn: str) -> None:
    """Refuse an empty URN (`--target "$URN"` with the variable unset) as such."""
    if not urn:
        raise UsageError(f"{flag} is empty: give the URN of a resource of the stack")


def _check_replace(options: Options, program: Program | None) -> None:
    for urn in sorted(options.replace):
        declared = program.by_urn.get(urn) if program is not None else None
        if declared is None:
            _check_given("--replace", urn)
            raise UsageError(
                f"--replace {urn} names no resource the program declares: "
                "`stackwright preview` lists them (a resource the program dropped is deleted anyway)"
            )
        if not declared.custom or declared.resource_type == PROVIDER_TYPE or declared.is_read:
            what = (
                "a component"
                if not declared.custom
                else "a read (id=) of someone else's object"
                if declared.is_read
                else "a provider"
            )
            raise UsageError(
                f"--replace {urn}: it is {what}, with no object of its own to replace; "
                "name the resources it holds instead"
            )
        if urn in options.excludes:
            raise UsageError(
                f"--replace {urn}: it is also excluded (--exclude); drop one of the two"
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
    violation raises `PolicyViolation` before the lock is taken or the cluster called.
    What the program logged (`sw.log`) is emitted first, and what its callbacks log as
    they run."""

    def log(severity: str, text: str, urn: str) -> None:
        listener(Log(urn, text, severity))

    with (
        program.logging_to(log) if program is not None else contextlib.nullcontext(),
        interrupts.one_loop(),  # the check of the clusters, then the run: one connection
        contextlib.ExitStack() as leaving,
    ):
        snapshot = _snapshot(backend, project, stack)
        _check_planned_state(options, snapshot.version)
        _check_planned_run(options, policy)
        listener = _planning(options, snapshot.version, policy, listener)
        options = _expanded(options, program, snapshot)
        # A program with providers of its own may send objects to one cluster through two of
        # them: each object is known by its cluster, which `check_clusters` reads (no write).
        by_cluster = program is not None and any(
            r.resource_type == PROVIDER_TYPE for r in program.resources
        )
        as_run = _check_input(options, program, snapshot, listener, policy, by_cluster)
        clusters = check_clusters(providers, program, snapshot, options)
        providers = clusters.handing_over(providers)
        leaving.callback(clusters.close)  # the default provider, if the run did not take it
        if program is not None and by_cluster:
            _check_one_resource_per_object(
                program, as_run, snapshot.released_names, clusters.cluster_of
            )
        if program is not None:
            _check_custom_imports(program, snapshot, providers)
            # Before the lock, which writes the history, and before the question an `up`
            # without --yes asks after its preview.
            refuse_plan_violations(snapshot, options, program, providers, clusters)
        started = time.monotonic()
        written = 0
        if options.dry_run:
            summary = interrupts.run(
                _preview(
                    snapshot,
                    options,
                    program,
                    providers,
                    listener,
                    _elsewhere(backend, snapshot),
                    lambda live, urn: manager_of(backend, live, urn),
                    clusters,
                    backend.running(project, stack) if snapshot.pending else None,
                )
            )
        else:
            with backend.begin_operation(
                project, stack, kind=options.kind, message=message
            ) as operation:
                # Taken as the lock was: no other operation came between this check and the run.
                _check_planned_state(options, operation.locked_version)
                if operation.took_over is not None:
                    listener(Diagnostic("", _took_over(operation.took_over), "warning"))
                # Plan against the state as it is now that no other operation can change it:
                # the snapshot above (which served to check the input before locking) unless
                # the state changed since. Loading it again cost ~50 ms for 1,000 resources.
                if operation.locked_version != snapshot.version:
                    snapshot = backend.load(project, stack)
                summary = interrupts.run(
                    _watching_lock(
                        operation,
                        _mutate(
                            backend,
                            operation,
                            snapshot,
                            options,
                            program,
                            providers,
                            listener,
                            clusters,
                        ),
                    )
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


def _planning(
    options: Options, version: int, policy: PolicyGate | None, listener: Listener
) -> Listener:
    """A preview's `listener`, which with `--save-plan` also records each step it shows in
    the plan, against the stack's state `version`, with the rules it ran under."""
    plan = options.save_plan
    if plan is None:
        return listener
    plan.state_version = version
    plan.force_conflicts = options.force
    plan.policy_packs = in_force(policy)

    def recording(event: Event) -> None:
        if isinstance(event, StepStarted):
            plan.record(event.step)
        listener(event)

    return recording


def _check_planned_run(options: Options, policy: PolicyGate | None) -> None:
    """Refuse an `up --plan` (or the preview it runs first) run under other rules than
    its plan's preview: --force-conflicts, or other policy packs or levels."""
    plan = options.plan
    if plan is None:
        return
    difference = plan.run_difference(options.force, in_force(policy))
    if difference is not None:
        raise StackwrightError(f"up refused: {difference}; nothing was changed: {PREVIEW_AGAIN}")


def _check_planned_state(options: Options, version: int) -> None:
    """Refuse an `up --plan` (or the preview it runs first) whose stack's state changed
    since its plan was made (another operation ran, or the state was edited): the plan's
    steps were planned from that state. Checked again as the lock is taken."""
    plan = options.plan
    if plan is not None and plan.state_version != version:
        raise StackwrightError(
            f"up refused: the state of stack {plan.stack} changed since the plan was made "
            f"(state version {plan.state_version} then, {version} now: another operation ran "
            f"or the state was edited); nothing was changed: {PREVIEW_AGAIN}"
        )


def _check_input(
    options: Options,
    program: Program | None,
    snapshot: Snapshot,
    listener: Listener,
    policy: PolicyGate | None,
    by_cluster: bool,
) -> dict[str, ResourceState]:
    """What is checked before the lock is taken or the cluster called: the selection, the
    program's marks and CRDs, what an `up --yes` would refuse half-way, the policy gate
    (raises `PolicyViolation`); the program's notes are emitted as warnings. One resource
    per object, unless `by_cluster` leaves it for once the clusters are known. Returns the
    records as the run gives them (`_records_as_run`)."""
    _check_targets(options, program, snapshot)
    _check_marks(program)
    check_rendered(program)
    as_run: dict[str, ResourceState] = {}
    if program is not None:
        as_run = _records_as_run(program, snapshot)
        _check_imports(program, as_run, _known_scopes(program))
        if not by_cluster:
            _check_one_resource_per_object(program, as_run, snapshot.released_names)
    # What the up deletes, worked out once for the three checks that read it.
    deleted = (
        _deleted_by_up(options, program, snapshot.resources)
        if program is not None and options.kind != "destroy"
        else []
    )
    _check_definitions(options, program, deleted)
    _check_protected(options, program, snapshot, deleted)
    _check_namespaces_kept(options, program, snapshot, deleted)
    if program is not None and options.kind == "up":
        recorded = {r.urn: r for r in snapshot.resources}
        applying = not options.dry_run
        check_before_up(program, recorded, lambda urn: _chosen(options, urn), applying=applying)
    for note in program.notes if program is not None else ():
        listener(Diagnostic("", note, "warning"))
    if policy is not None and program is not None:
        what = "preview" if options.dry_run else options.kind
        policy_gate.check(policy, program, snapshot.stack, listener, what)
    return as_run


def _elsewhere(backend: Backend, snapshot: Snapshot) -> Callable[[str, str], list[str]]:
    """`Run.recorded_elsewhere` for the snapshot's stack."""
    return lambda urn, object_id: backend.recorded_elsewhere(
        snapshot.project, snapshot.stack, urn, object_id
    )


def manager_of(backend: Backend, live: Mapping[str, Any], urn: str) -> str:
    """Why `urn` may not adopt the object `live`, in words with the fix ("" if it may): it
    is a stack's ApplySet parent, a resource of a stack of this backend still holds it (or
    a step of that stack begun and not ended is about it: under way, or left by a crash for
    that stack's next operation to record), or its mark names a stack this backend does not
    have (another backend's, or one `stack rm --force` removed, leaving its objects). A mark
    a `state delete` left (the stack no longer holds that resource) is no owner, nor is text
    Stackwright did not write. Runs only for an object found with another stack's mark."""
    meta = live.get("metadata") or {}
    # An ApplySet parent is a stack's bookkeeping, which the provider keeps; adopting it
    # would let another stack delete or rewrite it.
    tooling = str((meta.get("annotations") or {}).get(APPLYSET_TOOLING, ""))
    if tooling.startswith("stackwright/") and APPLYSET_ID_LABEL in (meta.get("labels") or {}):
        name = str(meta.get("name")).removeprefix(APPLYSET_PARENT_PREFIX)
        project, _, stack = name.rpartition(".")
        return (
            f"it is the ApplySet parent Stackwright keeps for stack {stack} of project "
            f"{project} (how kubectl finds the stack's objects); no program manages it"
        )
    mark = mark_of(live)
    try:
        parts = parse_urn(mark)
    except ValueError:
        return ""
    if mark == urn:
        return ""
    release = f"`stackwright state delete {shlex.quote(mark)}` there keeps the object"
    if not backend.has_stack(parts.project, parts.stack):
        where = f" -n {meta['namespace']}" if meta.get("namespace") else ""
        unmark = f"kubectl annotate {str(live.get('kind', '')).lower()} {meta.get('name')}{where}"
        return (
            f"it is marked as {mark}, of a stack this state backend does not have; remove it "
            f"from that stack first ({release}), or if that stack is gone, drop the mark: "
            f"`{unmark} {URN_ANNOTATION}-`"
        )
    # Read as stored: that stack's secrets are under its own data key, which this one's
    # operation may not hold (another project's stack of the same name has another key).
    document = backend.export(parts.project, parts.stack)
    record = next((r for r in document["resources"] if r["urn"] == mark), None)
    settle = ";"
    if record is None:
        # Not recorded yet, but a step of that stack on it began and has not ended: its
        # operation is making the object now, or a crash left the step for that stack's
        # next operation to settle, which records the object it finds as its own.
        pending = (p["resource"] for p in document["pending"])
        record = next((r for r in pending if r["urn"] == mark), None)
        if record is None:
            return ""
        settle = _settle_first(backend, parts.project, parts.stack)
    # The command as it runs in that project's folder: its stack named, and `--force` for a
    # protected record (what `stackwright import` makes), which `state delete` refuses else.
    force = " --force" if record["protect"] else ""
    release = (
        f"`stackwright state delete {shlex.quote(mark)} --stack {shlex.quote(parts.stack)}"
        f"{force}` there keeps the object"
    )
    return (
        f"stack {parts.stack} of project {parts.project} manages it as {mark}{settle} remove "
        f"it from that stack first ({release})"
    )


def _settle_first(backend: Backend, project: str, stack: str) -> str:
    """What `manager_of` adds for an object a stack's pending step is about: who is making
    it, or what settles the step a crash left (`state delete` refuses until then)."""
    holder = backend.running(project, stack)
    if holder is not None:
        return (
            f": {holder.describe(datetime.now(UTC))} has a step on it under way; wait for "
            "that operation to end, then"
        )
    return (
        ": a step of an earlier operation on it is still pending (interrupted, or its "
        f"answer lost); run `stackwright refresh --stack {shlex.quote(stack)}` there to "
        "settle it, then"
    )


def _took_over(holder: LockHolder) -> str:
    """Whose lock this operation took over, and why it could: what it settles next is
    what that operation left under way."""
    now = datetime.now(UTC)
    why = (
        "its process is gone"
        if holder.expires > now
        else "its lease lapsed, so it is no longer running"
    )
    return f"took over the lock of {holder.describe(now)}: {why}"


def _pending_warning(count: int, holder: LockHolder | None) -> str:
    """What a preview says of the steps it found pending: those of an operation that was
    interrupted, or — a CI job previewing while another deploys — of the one under way."""
    if holder is None:
        return (
            f"{count} step(s) of an interrupted operation are pending; this preview read "
            "their objects from the cluster, and the next `up` settles them the same way"
        )
    return (
        f"{count} step(s) are under way in {holder.describe(datetime.now(UTC))}, which holds "
        "the stack's lock; this preview read their objects from the cluster as they are now, "
        "before that operation ends: preview again once it has"
    )


async def _preview(
    snapshot: Snapshot,
    options: Options,
    program: Program | None,
    providers: ProviderFactory,
    listener: Listener,
    elsewhere: Callable[[str, str], list[str]],
    managed_by: Callable[[Mapping[str, Any], str], str],
    clusters: ClusterCheck,
    holder: LockHolder | None,
) -> Summary:
    if snapshot.pending:
        listener(Diagnostic("", _pending_warning(len(snapshot.pending), holder), "warning"))
        # Plan against the state the next `up` will plan against, recording nothing.
        settled = DryRunJournal(snapshot)
        await _settle(snapshot, options, settled, providers, listener)
        snapshot = settled.snapshot()
    run_ = Run.over(
        snapshot, options, program, None, providers, listener, elsewhere, managed_by, clusters
    )
    try:
        run_.retarget(record=False)
        if options.refresh or options.kind == "refresh":
            await run_.refresh(record=False)
        if options.kind == "destroy":
            await run_.delete_all(_targeted(snapshot.resources, options, clusters.cluster_of))
        elif program is not None:
            await run_.run_program()
            await run_.delete_all(_stale(run_, program, options))
        run_.outcome.outputs = _shown_outputs(run_, snapshot, options)
        if options.kind != "destroy":  # a destroy runs no program
            run_.run_unused_applies()
        return run_.summary(0.0)
    finally:
        await run_.close()


def _shown_outputs(run_: Run, snapshot: Snapshot, options: Options) -> dict[str, Any]:
    """The stack outputs a summary shows, masked as `stack output` shows them: the
    program's, or the recorded ones for a refresh (which runs no program and leaves the
    outputs as they are) and a destroy that keeps resources (which keeps the outputs, as
    Pulumi's targeted destroy does); none after a destroy of everything."""
    if options.kind == "refresh" or _keeps_some(options):
        return _recorded_outputs(snapshot)
    return run_.stack_outputs()[1]


def _recorded_outputs(snapshot: Snapshot) -> dict[str, Any]:
    return {k: shown(v) for k, v in snapshot.outputs.items()}


def _keeps_some(options: Options) -> bool:
    """Whether a destroy leaves resources on purpose (--target, --exclude)."""
    return options.kind == "destroy" and bool(options.targets or options.excludes)


def _stale(run_: Run, program: Program, options: Options) -> list[ResourceState]:
    """What the state holds and the program no longer declares (but what a delete-before-
    replace deleted first), plus replaced objects awaiting deletion."""
    recorded = list(run_.old.values())
    by_cluster = run_.clusters.cluster_of
    gone = [s for s in recorded if s.urn not in program.by_urn]
    if options.targets:
        chosen = (
            _with_dependents(options.targets, recorded, by_cluster)
            if options.target_dependents
            else options.targets
        )
        gone = [s for s in gone if s.urn in chosen]
    kept = {*_kept(options, recorded, by_cluster), *run_.deleted_first}
    return [*run_.replaced, *(s for s in gone if s.urn not in kept)]


def _chosen(options: Options, urn: str) -> bool:
    """Whether a run touches the resource `urn` by its URN (its dependents pulled in by
    `--target-dependents` are not named here: the server answers for them)."""
    return (not options.targets or urn in options.targets) and urn not in options.excludes


def _kept(
    options: Options, resources: list[ResourceState], cluster_of: ClusterOf = by_provider
) -> set[str]:
    """The recorded resources `--exclude` keeps: the excluded ones (and their dependents,
    with `--exclude-dependents`) and what they refer to, which must stay for them (a Patch,
    its object: `cluster_of` as `recorded_closure` takes it)."""
    if not options.excludes:
        return set()
    excluded: Iterable[str] = options.excludes
    if options.exclude_dependents:
        excluded = _with_dependents(excluded, resources, cluster_of)
    return recorded_closure(excluded, resources, upward=True, cluster_of=cluster_of)


def _targeted(
    resources: list[ResourceState], options: Options, cluster_of: ClusterOf = by_provider
) -> list[ResourceState]:
    """What a destroy deletes: everything, or the targets and whatever refers to them
    (a state must never keep a resource whose parent, provider or dependency is gone, nor
    a Patch its object), less what `--exclude` keeps."""
    doomed = (
        _with_dependents(options.targets, resources, cluster_of)
        if options.targets
        else {s.urn for s in resources}
    )
    kept = _kept(options, resources, cluster_of)
    clash = sorted(set(options.targets) & kept)
    if clash:
        raise UsageError(
            f"--target {clash[0]} cannot be deleted: an excluded resource refers to it "
            "(its parent, provider or a dependency); drop that --exclude or this --target"
        )
    return [s for s in resources if s.urn in doomed and s.urn not in kept]


def _with_dependents(
    urns: Iterable[str], resources: list[ResourceState], cluster_of: ClusterOf = by_provider
) -> set[str]:
    """`urns` and the recorded resources that refer to them, directly or not."""
    return recorded_closure(urns, resources, upward=False, cluster_of=cluster_of)


#: How often a running operation checks that its lock is still its own (one read).
LOCK_CHECK_SECONDS = 1.0


async def _watching_lock(operation: Operation, work: Coroutine[Any, Any, Summary]) -> Summary:
    """Run `work`, stopping it once the operation's lock is taken (`stackwright cancel`, or
    a takeover after its lease lapsed): its journal writes would fail anyway, but a
    readiness wait can go on for minutes with nothing to record it. Stopped, its steps
    under way stay pending, as after Ctrl-C, and the LockLost error says why."""
    main = asyncio.current_task()
    assert main is not None
    lost: list[LockLost] = []

    async def watch() -> None:
        while True:
            await asyncio.sleep(LOCK_CHECK_SECONDS)
            try:
                operation.check_held()
            except LockLost as exc:
                lost.append(exc)
                main.cancel()
                return
            except Exception:  # a busy database: the next check tries again
                continue

    watcher = asyncio.create_task(watch())
    try:
        return await work
    except asyncio.CancelledError:
        if not lost:
            raise
        main.uncancel()
        raise lost[0] from None
    finally:
        watcher.cancel()


async def _settle(
    snapshot: Snapshot,
    options: Options,
    journal: Journal,
    providers: ProviderFactory,
    listener: Listener,
) -> None:
    """Settle the steps a crash left pending by reading the cluster, into `journal`: the
    operation's, or a preview's `DryRunJournal`, which records nothing."""
    settle = Run.over(snapshot, options, None, journal, providers, listener)
    try:
        await settle.settle_pending(snapshot.pending)
    finally:
        await settle.close()


async def _mutate(
    backend: Backend,
    operation: Any,
    snapshot: Snapshot,
    options: Options,
    program: Program | None,
    providers: ProviderFactory,
    listener: Listener,
    clusters: ClusterCheck,
) -> Summary:
    # What the stack had before settling: a step a crash left pending may have made or
    # removed an object, and its ApplySet parent is one to remove once the set is empty.
    had = [*snapshot.resources, *(item.resource for item in snapshot.pending)]
    if snapshot.pending:
        await _settle(snapshot, options, operation, providers, listener)
        snapshot = backend.load(snapshot.project, snapshot.stack)
    run_ = Run.over(
        snapshot,
        options,
        program,
        operation,
        providers,
        listener,
        _elsewhere(backend, snapshot),
        lambda live, urn: manager_of(backend, live, urn),
        clusters,
    )
    try:
        current = clusters.identities.get("")
        if current is not None and current != snapshot.default_cluster:
            operation.set_default_cluster(current)  # first recorded, or moved to (--retarget)
        run_.retarget(record=True)
        if options.kind == "refresh":
            await run_.refresh(record=True)
            run_.outcome.outputs = _shown_outputs(run_, snapshot, options)
            return run_.summary(0.0)
        if options.refresh:
            await run_.refresh(record=True)
        if options.kind == "destroy":
            doomed = _targeted(snapshot.resources, options, clusters.cluster_of)
            await run_.warn_crd_deletes(doomed)
            await run_.delete_all(doomed)
            if run_.outcome.failures or _keeps_some(options):
                # What it did not delete keeps the outputs: the summary shows them, as
                # `stack output` does (it showed none).
                run_.outcome.outputs = _recorded_outputs(snapshot)
            else:
                left = left_applysets(run_.stack, snapshot.former_names, had, set())
                if operation.took_over is not None or any(
                    s.custom and is_kubernetes(s) and not s.provider for s in had
                ):
                    # A destroy killed once its last delete had ended left parents the state
                    # no longer places; look for them where the stack's objects were, or
                    # after such a run (not on every destroy of an empty stack).
                    left += await _found_applysets(run_)
                await _remove_applysets(run_, snapshot.former_names, sorted(set(left)))
                operation.set_outputs({})
            return run_.summary(0.0)
        assert program is not None
        await run_.warn_crd_deletes(_dropped(options, program, snapshot.resources))
        await run_.run_program()
        failed = bool(run_.outcome.failures or run_.outcome.not_done)
        await run_.delete_all(_stale(run_, program, options), blocked=failed)
        stored, run_.outcome.outputs = run_.stack_outputs()
        if failed:
            # Nothing recorded: the summary shows the outputs the stack keeps, as `stack
            # output` does (the program's read "(known after apply)" where a step failed).
            run_.outcome.outputs = _recorded_outputs(snapshot)
        elif stored != snapshot.outputs:
            operation.set_outputs(stored)
        outcome = run_.outcome
        if not (outcome.failures or outcome.not_done or options.targets or options.excludes):
            # Only a run that did all the program asks knows which sets it left empty; a
            # provider that moved to another cluster left its sets empty on the former one.
            left = left_applysets(
                run_.stack, snapshot.former_names, had, run_.members, run_.clusters.cluster_of
            )
            left += [(run_.stack, *moved) for moved in run_.former_applysets()]
            await _remove_applysets(run_, snapshot.former_names, sorted(set(left)))
        run_.run_unused_applies()  # last, so that one that raises leaves the rest done
        return run_.summary(0.0)
    finally:
        await run_.close()


def _applysets(states: Iterable[ResourceState]) -> set[tuple[str, str]]:
    """(provider URN, namespace) of each ApplySet the states' objects are members of."""
    return {member for state in states if (member := applyset_of(state)) is not None}


def left_applysets(
    stack: str,
    former_names: Iterable[str],
    before: Iterable[ResourceState],
    after: set[tuple[str, str]],
    cluster_of: Callable[[str], str] = str,
) -> list[tuple[str, str, str]]:
    """The ApplySet parents an `up` that did all it planned leaves with no member, as
    (stack name, provider URN, namespace), given the state it started from and the sets
    its objects are members of now: the stack's own where it had members and has none,
    and each former name's wherever it had members (the `up` marked them all anew).
    A namespace's parent is one object on its cluster, whichever provider reached it
    (`cluster_of`, as `ClusterCheck.cluster_of`): members through another provider of
    that cluster keep it."""
    had = _applysets(before)
    kept = {(cluster_of(provider), namespace) for provider, namespace in after}
    left = [
        (stack, provider, namespace)
        for provider, namespace in had
        if (cluster_of(provider), namespace) not in kept
    ]
    left += [(name, *used) for name in former_names for used in had]
    return sorted(left)


async def _found_applysets(run_: Run) -> list[tuple[str, str, str]]:
    """The parents of the stack the default cluster has, as (stack name, "", namespace):
    a destroy killed once its last delete ended left them with nothing in the state to
    say where they are. Best effort: a stack without a default cluster has none to find."""
    try:
        found = await run_.provider_for("").applyset_namespaces(run_.stack)
    except Exception:
        return []
    return [(run_.stack, "", namespace) for namespace in found]


async def _remove_applysets(
    run_: Run, former_names: tuple[str, ...], parents: list[tuple[str, str, str]]
) -> None:
    """Remove each (stack name, provider URN, namespace) parent; one that cannot be is a
    warning, and a former name keeps being recorded until all its parents are gone."""
    kept: set[str] = set()
    for name, provider, namespace in parents:
        try:
            # Through the provider's former settings when it moved: its sets were there.
            await run_.deleting_provider(provider).remove_applyset(name, namespace)
        except Exception as exc:  # the objects are done with: only the bookkeeping is left
            kept.add(name)
            whose = "" if name == run_.stack else f" of the stack's former name {name}"
            run_.emit(
                Diagnostic(
                    "",
                    f"could not remove the ApplySet parent{whose} in {namespace}: {exc}",
                    "warning",
                )
            )
    remaining = [name for name in former_names if name in kept]
    if len(remaining) < len(former_names):
        assert run_.journal is not None
        run_.journal.set_former_names(remaining)
