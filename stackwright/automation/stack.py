"""Operations on one stack of a project, as the CLI (and later the operator) call them.

`Workspace.open(cwd, stack)` finds the project, the selected stack, its
configuration and its state backend; `preview`, `up`, `destroy`, `refresh` and
`import_object` run the program (when the operation needs it) and hand over to
the engine. The stack's default cluster comes from its configuration:
`kubernetes:cluster` names a Stackwright local cluster (started when it is not
running), else `kubernetes:kubeconfig` / `kubernetes:context` /
`kubernetes:namespace`, else kubectl's own defaults.

Secrets: the backend is opened with a `StateEncrypter` under the stack's data key
(`secrets`), and an operation unlocks that key before anything else, so a missing
or wrong passphrase is an error before any change. The program reads other stacks
through `read_stack` (stack references). A stack tagged `env=<name>` refuses a
cluster context that `stackwright:environments` maps to another environment when
either of them is `production`, before any change.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from stackwright import interrupts
from stackwright.automation.secrets import StateEncrypter
from stackwright.automation.stored import StoredStack
from stackwright.engine import operations, saved_plan
from stackwright.engine.adoption import import_id_problem
from stackwright.engine.clusters import check_default_provider, check_recorded_cluster
from stackwright.engine.drift import declared_fields_of, fields_union, owned_part
from stackwright.engine.events import (
    Diagnostic,
    Guarded,
    Listener,
    Log,
    Summary,
    expecting_no_changes,
    ignore,
    masking,
)
from stackwright.engine.execute import DEFAULT_PARALLEL, Options
from stackwright.engine.policy_gate import PolicyGate
from stackwright.engine.ports import Provider
from stackwright.engine.program import run_program
from stackwright.engine.records import (
    IMPORT_OF_ONE_BEING_DELETED,
    being_deleted,
    is_kubernetes,
    is_patch,
    is_release,
    mark_of,
    object_ref,
    patch_field_manager,
    refused,
)
from stackwright.engine.saved_plan import PlanOptions, SavedPlan
from stackwright.engine.wiring import (
    UNMARK_COMMAND,
    cluster_context,
    default_namespace,
    kubernetes_providers,
)
from stackwright.errors import StackwrightError, UsageError
from stackwright.kubernetes.base import (
    PATCH_SUFFIX,
    TypeToken,
    builtin_module,
    builtin_type_token,
    parse_type_token,
    patched_token,
)
from stackwright.kubernetes.groups import MODULES
from stackwright.kubernetes.provider import MANIFEST_PARENTS, PROVIDER_TYPE, RENDER_SETTING
from stackwright.lazy import lazy_exports
from stackwright.model import (
    CONFIG_SETTINGS,
    LOCAL_CONTEXT_PREFIX,
    STACK_ANNOTATION,
    URN_ANNOTATION,
    Op,
    ResourceState,
    make_urn,
    parse_urn,
)
from stackwright.policy import Level, Settings
from stackwright.sdk.context import Program
from stackwright.sdk.output import dependencies_of, resolve, unwrap_secrets
from stackwright.sdk.spelling import spelling_of
from stackwright.state import Backend, Operation, Snapshot

if TYPE_CHECKING:
    from stackwright.automation.adopted import Imported, ImportEntry, ImportRequest

PRODUCTION = "production"
ENVIRONMENTS_KEY = "stackwright:environments"


class OtherEnvironment(UsageError):
    """A cluster context of another environment refused (`Workspace.check_context`)."""


@dataclass(frozen=True)
class Selection:
    """Which resources an operation may touch, and which it must replace (Pulumi's flags).

    `targets`: only these and what they depend on (`target_dependents`: and what depends
    on them); `excludes`: everything but these (`exclude_dependents`: nor what depends on
    them); `replace`: replace these even if unchanged (with targets, they are targets too).
    """

    targets: tuple[str, ...] = ()
    target_dependents: bool = False
    excludes: tuple[str, ...] = ()
    exclude_dependents: bool = False
    replace: tuple[str, ...] = ()
    #: Every protected resource is excluded too (`destroy --exclude-protected`).
    exclude_protected: bool = False

    def options(self, kind: str, parallel: int, **more: Any) -> Options:
        targets = frozenset(self.targets)
        if targets:
            targets |= frozenset(self.replace)
        return Options(
            kind,
            targets,
            parallel,
            target_dependents=self.target_dependents,
            excludes=frozenset(self.excludes),
            exclude_dependents=self.exclude_dependents,
            exclude_protected=self.exclude_protected,
            replace=frozenset(self.replace),
            **more,
        )


def plan_options(select: Selection, refresh: bool, retarget: bool) -> PlanOptions:
    """The options of an operation as a saved plan records them."""
    return PlanOptions(
        targets=tuple(sorted(select.targets)),
        target_dependents=select.target_dependents,
        excludes=tuple(sorted(select.excludes)),
        exclude_dependents=select.exclude_dependents,
        replace=tuple(sorted(select.replace)),
        refresh=refresh,
        retarget=retarget,
    )


def planned_selection(
    plan: SavedPlan, select: Selection, refresh: bool, retarget: bool
) -> tuple[Selection, bool, bool]:
    """The selection, `refresh` and `retarget` of an `up` that applies `plan`: the plan's
    (an `up --plan` given none of its own takes them, as Terraform's apply of a plan file
    does), or the same given again; other ones are refused (UsageError): its steps were
    planned with these."""
    given = plan_options(select, refresh, retarget)
    if given != PlanOptions() and given != plan.options:
        flag = given.differing(plan.options)
        raise UsageError(
            f"{flag} differs from the options the plan was made with ({plan.options.said()}): "
            "leave the options off to apply the plan as it was previewed, or preview again "
            "with these and --save-plan"
        )
    planned = plan.options
    chosen = Selection(
        targets=planned.targets,
        target_dependents=planned.target_dependents,
        excludes=planned.excludes,
        exclude_dependents=planned.exclude_dependents,
        replace=planned.replace,
        exclude_protected=select.exclude_protected,
    )
    return chosen, planned.refresh, planned.retarget


class _PlanSecrets:
    """A saved plan's secret inputs sealed (and opened) as the stack's state seals them,
    under its data key: a plan file holds no secret in plain text. One per plan."""

    def __init__(self, workspace: StoredStack) -> None:
        self.stack = workspace.stack
        self.encrypter = StateEncrypter(workspace.config.data_key, stack=workspace.stack)

    def seal(self, state: ResourceState) -> ResourceState:
        return self.encrypter.seal(self.stack, state)

    def unseal(self, state: ResourceState) -> ResourceState:
        return self.encrypter.unseal(self.stack, state)


def _set_environment(context: str, environment: str) -> str:
    """The command that maps `context` to `environment`, by the bracket form a context name
    with dots in it (`prod.eu-west-1`) needs."""
    path = f"{ENVIRONMENTS_KEY}[{json.dumps(context)}]"
    return shlex.join(["stackwright", "config", "set", "--path", path, environment])


@dataclass
class Workspace(StoredStack):
    """One stack of a project and its state store, open until `close()` (or the end of a
    `with` block), and the operations on it: a script that opens many, or whose operations
    fail, holds no connection or file handle of one it is done with."""

    def __post_init__(self) -> None:
        super().__post_init__()
        #: `resolved_config` and the stored values it was resolved from.
        self._resolved: tuple[str, tuple[dict[str, Any], frozenset[str]]] | None = None
        #: `provider_namespace` by settings: reading a kubeconfig takes ~20 ms (its TLS set-up).
        self._namespaces: dict[str, str | None] = {}

    def resolved_config(self) -> tuple[dict[str, Any], frozenset[str]]:
        """The stack's configuration with secrets decrypted, resolved again only when its
        stored values changed: a script's `ws.config.set` (or `remove`) between two
        operations of one workspace is what the next operation's program reads."""
        self.config.refresh()  # the CLI or another workspace may have written the file
        stored = json.dumps(self.config.values, default=repr)
        if self._resolved is None or self._resolved[0] != stored:
            self.config.check_settings()
            self._resolved = (stored, self.config.resolved())
        return self._resolved[1]

    # --- environments ----------------------------------------------------------------

    def _environments(self) -> Mapping[str, Any]:
        """`stackwright:environments`: the environment of each mapped cluster context. Read
        alone (a stack without it needs no secrets key here: `state delete` in a CI job)."""
        self.config.refresh()  # the CLI may have mapped a context since (as resolved_config)
        values = self.config.values
        mapping = (self.config.get(ENVIRONMENTS_KEY) if ENVIRONMENTS_KEY in values else {}) or {}
        if not isinstance(mapping, dict):
            raise UsageError(
                f"configuration {ENVIRONMENTS_KEY} must map context names to environments: "
                f"set it with `{_set_environment('CONTEXT', 'ENV')}`"
            )
        for context, environment in mapping.items():
            if not isinstance(environment, str):  # its text equals no `env` tag: never matched
                raise UsageError(
                    f"{self.config.path.name}: {ENVIRONMENTS_KEY} maps context {context!r} to "
                    f"{json.dumps(environment)}, which is no environment name: give a name "
                    f"such as {PRODUCTION}, with `{_set_environment(context, PRODUCTION)}`"
                )
        return mapping

    def check_context(self, context: str) -> None:
        """Refuse a cluster context of another environment when either is production. A
        stack with no `env` tag is no production stack: a production context refuses it (as
        the built-in policy `production-separation` does), where before it went unchecked."""
        stack_env = self.config.tags.get("env")
        context_env = self._environments().get(context)
        if context_env is None or str(context_env) == stack_env:
            return
        if not stack_env and str(context_env) == PRODUCTION:
            raise OtherEnvironment(
                f"stack {self.stack} has no env tag but cluster context {context!r} belongs "
                f"to environment {PRODUCTION} ({ENVIRONMENTS_KEY}); only a stack tagged "
                f"env={PRODUCTION} reaches it: tag the stack with `stackwright stack tag set "
                f"env {PRODUCTION}` if it is production, or point it at a context of its own "
                "environment"
            )
        if stack_env and PRODUCTION in (stack_env, str(context_env)):
            raise OtherEnvironment(
                f"stack {self.stack} is tagged env={stack_env} but cluster context {context!r} "
                f"belongs to environment {context_env} ({ENVIRONMENTS_KEY}); production and "
                "other environments are kept apart: point the stack at a context of its own "
                "environment, or change the stack's tag with `stackwright stack tag set env ENV`"
            )

    def _check_environments(self, program: Program | None, listener: Listener | None) -> None:
        """Every context the operation would use that is known before it starts: the
        stack's default one and those of providers declared with plain settings."""
        if not self._environments():
            return
        # Read without starting a local cluster: the provider, once made, is checked again.
        candidates = [self.provider_settings(listener, start=False)]
        for resource in program.resources if program is not None else ():
            if (
                resource.resource_type == PROVIDER_TYPE
                and not dependencies_of(resource.props)
                and RENDER_SETTING not in resource.props  # writes files: no context
            ):
                settings, _ = unwrap_secrets(resolve(resource.props, _no_state))
                candidates.append(settings)
        for index, settings in enumerate(candidates):
            context = cluster_context(
                settings, default=index == 0, root=self.project.program_folder
            )
            if context is not None:
                self.check_context(context)

    # --- the default cluster ---------------------------------------------------------

    def provider_settings(
        self, listener: Listener | None = None, *, start: bool = True
    ) -> dict[str, Any]:
        """The stack's default provider's settings; the local cluster it names is started
        unless `start` is False (its kubeconfig is then named whether it exists or not)."""
        values, _ = self.resolved_config()
        local = values.get("kubernetes:cluster")
        settings: dict[str, Any] = {}
        if local:  # imported for a stack on a local cluster only (~1.5 ms of other runs)
            from stackwright.localcluster import lifecycle

        if local and not start:
            settings["kubeconfig"] = str(lifecycle.cluster_dir(str(local)) / "kubeconfig")
            settings["context"] = f"{LOCAL_CONTEXT_PREFIX}{local}"
        elif local:
            info, started = lifecycle.start(str(local))
            if started and listener is not None:
                # It outlives the command (the next one finds it running): say how it stops,
                # or a CI job leaves a server behind.
                stop = shlex.join(["stackwright", "cluster", "stop", "--name", info.name])
                listener(
                    Diagnostic(
                        "",
                        f"started the local cluster {info.name} at {info.server}; it keeps "
                        f"running after this command (`{stop}` stops it)",
                        "info",
                    )
                )
            settings["kubeconfig"] = str(info.kubeconfig)
            settings["context"] = f"{LOCAL_CONTEXT_PREFIX}{info.name}"
        for key in CONFIG_SETTINGS[
            "kubernetes"
        ]:  # `cluster` named the kubeconfig and context above
            if key != "cluster" and values.get(f"kubernetes:{key}") is not None:
                settings[key] = values[f"kubernetes:{key}"]
        return settings

    # --- policy ---------------------------------------------------------------------------

    def policy_gate(
        self,
        pack_dirs: tuple[str, ...] = (),
        level: Level | None = None,
        listener: Listener | None = None,
    ) -> PolicyGate | None:
        """The packs the stack enforces (`policy:packs`, `policy:pack-dirs` relative to the
        project, and `--policy-pack` directories) with its settings; None when there are none
        (a warning to `listener` if a level was asked for: it would silently enforce nothing)."""
        values, _ = self.resolved_config()
        settings = Settings.from_config(
            values,
            str(self.config.path.name),
            default_namespace=str(values.get("kubernetes:namespace") or "default"),
        )
        directories = [
            *settings.pack_directories(self.project.folder, str(self.config.path.name)),
            *pack_dirs,
        ]
        if not settings.packs and not directories:
            if level is not None and listener is not None:
                listener(
                    Diagnostic(
                        "",
                        f"policy level {level.value} asked for, but stack {self.stack} runs no "
                        "policy pack, so no policy is checked: name one in its config "
                        "(`stackwright config set policy:packs "
                        "kubernetes-best-practices=mandatory`) or pass --policy-pack DIR",
                    )
                )
            return None
        from stackwright.policy import select_packs  # loaded for a stack with packs only

        packs = select_packs(settings.packs, directories)
        return PolicyGate(tuple(packs), settings, level, cluster=_cluster(values))

    # --- running the program ----------------------------------------------------------

    def run_program(
        self, *, dry_run: bool = True, log: Callable[[str, str, str], None] | None = None
    ) -> Program:
        values, secret_keys = self.resolved_config()
        # From the program's folder, wherever the command was run in the project.
        with contextlib.chdir(self.project.program_folder):
            return run_program(
                self.project.main,
                project=self.project.name,
                stack=self.stack,
                config=values,
                secret_keys=secret_keys,
                secret_parts=self.config.secret_parts(values),
                read_stack=self.read_stack,
                provider_namespace=self.provider_namespace,
                dry_run=dry_run,
                log=log,
            )

    def provider_namespace(self, settings: Mapping[str, Any] | None) -> str | None:
        """Where a provider with these plain settings (None: the stack's default one) puts
        objects without a namespace, read from the kubeconfig without connecting or
        starting a local cluster; None when the kubeconfig cannot be read."""
        key = repr(sorted(settings.items())) if settings is not None else ""
        if key not in self._namespaces:
            self._namespaces[key] = default_namespace(
                self.provider_settings(start=False) if settings is None else settings,
                self.project.program_folder,
            )
        return self._namespaces[key]

    def _run(
        self,
        options: Options,
        listener: Listener | None,
        *,
        program: bool,
        message: str = "",
        policy: PolicyGate | None = None,
    ) -> Summary:
        # A script may log its events: no secret in them; and a listener that raises is
        # told once the operation is over, not in the middle of its steps. None is no
        # listener (Pulumi's `on_event=None`), not one that fails each event after the
        # operation has applied everything.
        guarded = Guarded(masking(listener or ignore))
        self.require_stack()
        self.unlock()

        def log(severity: str, message: str, urn: str) -> None:
            guarded(Log(urn, message, severity))  # said as the program runs, if it fails

        declared = self.run_program(dry_run=options.dry_run, log=log) if program else None
        self._check_environments(declared, guarded)
        try:
            summary = operations.run(
                self.backend,
                project=self.project.name,
                stack=self.stack,
                options=options,
                program=declared,
                providers=kubernetes_providers(
                    # Not before the default provider is needed: a program whose providers
                    # all render to files starts no local cluster.
                    functools.cache(lambda: self.provider_settings(guarded)),
                    project=self.project.name,
                    check_context=self.check_context,
                    root=self.project.program_folder,
                    spelling=spelling_of(self.project.runtime),
                ),
                listener=guarded,
                message=message,
                policy=policy,
            )
        finally:
            self.record_provider()  # a key first made during the run (to seal a secret)
        if guarded.error is not None:
            raise guarded.error
        return summary

    def preview(
        self,
        listener: Listener | None = None,
        *,
        refresh: bool = False,
        select: Selection = Selection(),
        parallel: int = DEFAULT_PARALLEL,
        policy_packs: tuple[str, ...] = (),
        policy_level: Level | None = None,
        retarget: bool = False,
        expect_no_changes: bool = False,
        force: bool = False,
        save_plan: str | Path | None = None,
        plan: SavedPlan | None = None,
    ) -> Summary:
        """What `up` would do. `retarget`: as `up`'s, shown (the objects it forgets).
        `expect_no_changes` (with `refresh`: a drift gate) raises `StackwrightError` (exit
        code 1) after the summary when anything would change. `force`: as `up`'s, the
        server's dry runs take over fields other managers own (what `up --force-conflicts`
        would do, rather than the conflict it avoids). `save_plan`: write the plan to that
        file (`saved_plan`), for `up(plan=…)` to apply exactly it; a failed preview writes
        none. `plan`: the saved plan the `up` previewed will apply, which this preview
        refuses up front as that `up` would (a changed state, program or rules)."""
        recording = (
            SavedPlan(self.project.name, self.stack, -1, plan_options(select, refresh, retarget))
            if save_plan is not None
            else None
        )
        options = select.options(
            "up",
            parallel,
            refresh=refresh,
            dry_run=True,
            retarget=retarget,
            force=force,
            plan=plan,
            save_plan=recording,
        )
        listener = expecting_no_changes(listener, expect_no_changes)
        gate = self.policy_gate(policy_packs, policy_level, listener)
        summary = self._run(options, listener, program=True, policy=gate)
        if recording is not None and save_plan is not None and summary.ok:
            saved_plan.write(Path(save_plan), recording, seal=_PlanSecrets(self).seal)
            self.record_provider()  # a key first made to seal a secret of the plan
        if expect_no_changes:
            expect_no_changes_in(summary, "the preview shows changes")
        return summary

    def read_plan(self, path: str | Path) -> SavedPlan:
        """The plan `preview(save_plan=path)` saved for this stack; UsageError (one line)
        when the file is missing, not a plan, newer, or another project's or stack's."""
        return saved_plan.read(
            Path(path),
            project=self.project.name,
            stack=self.stack,
            unseal=_PlanSecrets(self).unseal,
        )

    def up(
        self,
        listener: Listener | None = None,
        *,
        refresh: bool = False,
        select: Selection = Selection(),
        parallel: int = DEFAULT_PARALLEL,
        force: bool = False,
        message: str = "",
        policy_packs: tuple[str, ...] = (),
        policy_level: Level | None = None,
        retarget: bool = False,
        expect_no_changes: bool = False,
        plan: str | Path | SavedPlan | None = None,
    ) -> Summary:
        """Apply the program. `retarget`: a provider that now reaches another cluster than
        the one its objects are recorded in is moved there: those objects are forgotten
        (left on the former cluster, not deleted) and created anew (else: refused).
        `expect_no_changes` previews first (its events and summary go to `listener` too) and
        raises `StackwrightError` (exit code 1), changing nothing, when the preview shows a
        change, as `stackwright up --expect-no-changes` does. `plan`: a saved plan (or its
        file) whose steps alone this `up` takes, with the options it was made with
        (`planned_selection`); a stack whose state changed since, other rules than its
        preview's (`force`, policy packs), or a program that no longer matches it, is
        refused before any change."""
        saved = self.read_plan(plan) if isinstance(plan, str | Path) else plan
        if saved is not None:
            select, refresh, retarget = planned_selection(saved, select, refresh, retarget)
        gated = expecting_no_changes(listener, expect_no_changes)
        if expect_no_changes:
            planned = self.preview(
                gated,
                refresh=refresh,
                select=select,
                parallel=parallel,
                policy_packs=policy_packs,
                policy_level=policy_level,
                retarget=retarget,
                force=force,
                plan=saved,
            )
            if not planned.ok:
                return planned
            expect_no_changes_in(planned, "the preview shows changes; nothing was changed")
        options = select.options(
            "up", parallel, refresh=refresh, force=force, retarget=retarget, plan=saved
        )
        # A preview said already what the gate has to say of its packs.
        gate = self.policy_gate(policy_packs, policy_level, None if expect_no_changes else listener)
        summary = self._run(options, gated, program=True, message=message, policy=gate)
        if expect_no_changes:  # the cluster or the state changed since the preview
            expect_no_changes_in(
                summary, "the update changed the stack after a preview without changes"
            )
        return summary

    def destroy(
        self,
        listener: Listener | None = None,
        *,
        select: Selection = Selection(),
        parallel: int = DEFAULT_PARALLEL,
        preview: bool = False,
    ) -> Summary:
        options = select.options("destroy", parallel, dry_run=preview)
        return self._run(options, listener, program=False)

    def refresh(
        self,
        listener: Listener | None = None,
        *,
        select: Selection = Selection(),
        preview: bool = False,
        parallel: int = DEFAULT_PARALLEL,
        expect_no_changes: bool = False,
    ) -> Summary:
        """Read the stack's objects (only `select`'s targets, none of its excludes).
        `expect_no_changes` reads them first without recording, and raises
        `StackwrightError` (exit code 1), recording nothing, when any drifted or is gone."""
        if expect_no_changes:
            options = select.options("refresh", parallel, dry_run=True)
            read = self._run(options, expecting_no_changes(listener, True), program=False)
            expect_no_drift_in(read)
            if not read.ok or preview:
                return read
        options = select.options("refresh", parallel, dry_run=preview)
        return self._run(options, listener, program=False)

    # --- forgetting a resource -----------------------------------------------------------

    def forget(
        self,
        urn: str,
        *,
        force: bool = False,
        target_dependents: bool = False,
        keep_marks: bool = False,
        failed: MarksRemain | None = None,
        listener: Listener | None = None,
    ) -> Forgotten:
        """`state delete`: forget a resource (with `target_dependents`, what refers to it),
        its object left in the cluster as it is but for the stack's marks.

        Every check comes first (no such resource, protected, referred to, pending, the
        stack locked); then the marks — the managed-by label, the stack and URN annotations,
        ApplySet membership — come off each forgotten object, removed by the stack's field
        manager so that its managed fields no longer claim them, and then the state forgets
        them. Left marked, an object still counts as the stack's: kubectl lists it in the
        stack's ApplySet (whose parent a destroy then cannot remove), and an `up` whose
        program declares it again takes it back as its own instead of refusing it as an
        object that exists. An object no longer marked as the resource (deleted and made
        again by another tool or stack since) is not the stack's: its labels stay. A Patch's
        fields and a Helm release stay as they are (`kept` says so). Raises MarksRemain,
        nothing forgotten, when the cluster cannot take the marks off: every patch is sent
        as a dry run first, so a refusal leaves every object as it was; one refused after
        others were taken off (the cluster changed in between) leaves those recorded, and
        read back so (a targeted refresh), so that the next `up` marks them again.
        `keep_marks` forgets without touching the cluster (`failed`: the attempt that could
        not, which knows the objects whose marks came off and those that keep them).
        `listener` hears of a local cluster started for it."""
        project, stack = self.project.name, self.stack
        urns = self.backend.delete_resource(
            project, stack, urn, force=force, target_dependents=target_dependents, dry_run=True
        )
        states = [s for s in self.state().resources if s.urn in urns and not s.delete_pending]
        marked = [s for s in states if s.custom and is_kubernetes(s) and not s.external]
        if marked and not keep_marks and self._cluster_named():
            self._check_environments(None, None)  # taking marks off is a change there
        done: list[str] = []
        try:
            if marked and not keep_marks:
                done = interrupts.run(self._unmark(marked, listener))
        except MarksRemain as remain:
            if not remain.unmarked:
                raise
            why = self._record_unmarked(remain.unmarked)
            raise MarksRemain(remain.reason, remain.left_marked, remain.unmarked, why) from (
                remain.__cause__
            )
        removed = self.backend.delete_resource(
            project, stack, urn, force=force, target_dependents=target_dependents
        )
        kept = [note for s in states if (note := _left_as_it_is(s))]
        if keep_marks:
            left = failed.left_marked if failed else {s.urn: _unmark_command(s) for s in marked}
            return Forgotten(
                removed,
                [u for u in failed.unmarked if u in removed] if failed else [],
                kept,
                {u: command for u, command in left.items() if u in removed},
            )
        return Forgotten(removed, done, kept, {})

    def _record_unmarked(self, urns: Sequence[str]) -> str:
        """Read back the objects a failed `forget` took the marks off (a refresh of those
        alone): the state, which still holds them, then records them unmarked, and the next
        `up` marks them again. Why they could not be read back ("" when they were)."""
        try:
            self.refresh(select=Selection(targets=tuple(urns)))
        except StackwrightError as exc:
            return str(exc)
        return ""

    def _cluster_named(self) -> bool:
        """Whether the stack's configuration, which names its cluster, can be read: when it
        cannot (a CI job without the passphrase), no change can reach that cluster, and
        `_unmark` says so (MarksRemain) for a stack with environments as for one without."""
        try:
            self.resolved_config()
        except StackwrightError:
            return False
        return True

    async def _unmark(
        self, states: Sequence[ResourceState], listener: Listener | None
    ) -> list[str]:
        """Take the stack's marks off the objects `states` record, each through the provider
        that made it, and only off one Stackwright marked as no other resource's: an object
        deleted and made again since by another tool (Helm's, its `managed-by` label its
        own) or by another stack is theirs. The URNs whose objects it unmarked;
        MarksRemain when a cluster does not take them: refused as a dry run, nothing was
        changed; refused for real, `unmarked` says which objects were changed already."""
        providers: dict[str, Provider] = {}
        unmarked: list[str] = []
        state = states[0]
        pending = list(states)  # those that may still carry the marks, if this fails
        try:
            # The stack's configuration names its cluster, and reading it may need the
            # stack's key (a CI job without the passphrase): one not at hand is a cluster
            # out of reach, not the end of a command that forgets.
            factory = kubernetes_providers(
                self.provider_settings(listener),
                project=self.project.name,
                check_context=self.check_context,
                root=self.project.program_folder,
            )
            # An explicit provider's settings may hold secrets: read decrypted.
            recorded = self.backend.load(self.project.name, self.stack)
            for state in states:
                if state.provider not in providers:
                    made = recorded.resource(state.provider) if state.provider else None
                    providers[state.provider] = factory(made.inputs if made else None)
                    # A context switched to another cluster reaches another object of
                    # that name, maybe marked alike (the app deployed there too).
                    await check_recorded_cluster(
                        factory, providers[state.provider], recorded, state.provider, "state delete"
                    )
                provider = providers[state.provider]
                live = await provider.read(*object_ref(state))
                # Marked as the resource, or with a mark no resource holds any more (a
                # `state move` or `state rename` not yet applied): not another's. Every
                # object is read before any patch is tried, so a refusal names as left
                # marked only those found marked, never one not yet read.
                if (
                    not live
                    or not mark_of(live)
                    or operations.manager_of(self.backend, live, state.urn)
                ):  # gone, or not the stack's: no marks of its own to leave on it
                    pending.remove(state)
            for state in pending:
                # A dry run first (dryRun=All), every object's before any is changed: a
                # patch the server refuses (RBAC that lets the stack read a kind but not
                # patch it, an admission policy) leaves them all as they were.
                await providers[state.provider].unmark(*object_ref(state), dry_run=True)
            for state in pending:
                await providers[state.provider].unmark(*object_ref(state))
                unmarked.append(state.urn)
        except OtherEnvironment:
            raise  # an explicit provider's context, refused as the default one's: no change yet
        except StackwrightError as exc:  # no key, no kubeconfig, no answer, refused
            left = {s.urn: _unmark_command(s) for s in pending if s.urn not in unmarked}
            raise MarksRemain(
                f"cannot take stack {self.stack}'s marks off {state.type} {state.id}: {exc}",
                left,
                unmarked,
            ) from exc
        finally:
            for each in providers.values():
                await each.close()
        return unmarked

    # --- adopting an object --------------------------------------------------------------

    def import_object(
        self,
        type_token: str,
        name: str,
        object_id: str,
        *,
        protect: bool = True,
        preview: bool = False,
    ) -> tuple[str, str]:
        """Adopt an existing object into the state; returns (its URN, Python code declaring it).

        Protected unless told otherwise, as `pulumi import` does: until the program declares
        it, an `up` would otherwise delete an object that was never the stack's to make.
        With `preview`, the object is read and every check made, and nothing is changed."""
        from stackwright.automation.adopted import ImportEntry

        entry = ImportEntry(type_token, name, object_id)
        (done,) = self.import_objects([entry], protect=protect, preview=preview)
        return done.urn, object_code(self.project.runtime, done, protect=protect)

    def import_objects(
        self, entries: Sequence[ImportEntry], *, protect: bool = True, preview: bool = False
    ) -> list[Imported]:
        """Adopt existing objects into the state in one operation (one lock, one history
        entry of kind `import`), each journaled as a step before it is marked as the
        stack's; `program_code` prints the program that declares them all.

        Every entry is read and checked first; any problem (a malformed entry, the same
        object or URN twice, one already in the stack, no such object, another stack's)
        refuses them all before anything changes, naming each bad entry by its `where`.
        With `preview`, only those checks."""
        # A YAML program's `resources:` is keyed by the name alone, so one name is one object.
        requests = _import_requests(
            self.stack, self.project.name, entries, one_per_name=self.project.runtime == "yaml"
        )
        self._check_environments(None, None)  # adopting marks the objects: a change there
        factory = kubernetes_providers(
            self.provider_settings(), project=self.project.name, root=self.project.program_folder
        )

        async def adopt(operation: Operation | None) -> list[Imported]:
            provider = factory(None)
            try:
                snapshot = self.backend.load(self.project.name, self.stack)
                identity = await check_default_provider(provider, snapshot, "import")
                checked = await self._read_importable(provider, snapshot, requests)
                if operation is None:  # the checks: what would be recorded, nothing written
                    return _one_key_each(
                        [
                            request.imported(live, declared_fields(live), protect)
                            for request, live in checked
                        ]
                    )
                if identity is not None and identity != snapshot.default_cluster:
                    operation.set_default_cluster(identity)
                # The stack's ApplySet parent in each namespace, once, listing every kind
                # the import adds there, before the first of its members is marked.
                applysets: dict[str, set[str]] = {}
                for request, live in checked:
                    ns = (live.get("metadata") or {}).get("namespace")
                    if ns:
                        applysets.setdefault(ns, set()).add(request.group_kind)
                return [
                    await self._adopt(provider, operation, step, request, live, protect, applysets)
                    for step, (request, live) in enumerate(checked, 1)
                ]
            finally:
                await provider.close()

        # Every check first, writing nothing: bad input (no such object, an ID that names
        # none, another stack's) is refused without leaving a failed import in the history.
        done = interrupts.run(adopt(None))
        if not preview:
            with self.backend.begin_operation(
                self.project.name, self.stack, kind="import"
            ) as operation:
                done = interrupts.run(adopt(operation))
        return done

    def _check_manifest_parent(self, snapshot: Snapshot, parent: str) -> None:
        """`import --parent`'s parent is a resource of the stack whose manifests declare
        children (a ConfigFile's, ConfigGroup's, Directory's, Chart's); else a UsageError.
        Any other parent's children the program writes, and adopts with its import option."""
        declaring = snapshot.resource(parent)
        if declaring is None:
            raise UsageError(
                f"--parent {parent} is no resource of stack {self.stack}: give the URN "
                "of the ConfigFile, ConfigGroup or Chart that declares the object, as "
                "`stackwright up` names it (an up records it even when the object exists)"
            )
        if declaring.type not in MANIFEST_PARENTS:
            adopt = spelling_of(self.project.runtime).options("import_", "ID")
            raise UsageError(
                f"--parent {parent} is a {declaring.type}, whose children the program "
                f"declares itself: adopt the object where it is declared, with {adopt}; "
                "--parent names the ConfigFile, ConfigGroup, Directory or Chart whose "
                "manifests declare it"
            )

    async def _read_importable(
        self, provider: Provider, snapshot: Snapshot, requests: Sequence[ImportRequest]
    ) -> list[tuple[ImportRequest, dict[str, Any]]]:
        """Each request with its live object, every one checked (not in the stack yet, exists,
        no other stack's resource manages it); else one UsageError naming each bad one."""

        async def read(request: ImportRequest) -> dict[str, Any]:
            if snapshot.resource(request.urn) is not None:
                raise UsageError(
                    f"{request.urn} is already in stack {self.stack}: pick another name, or "
                    "remove it first"
                )
            if request.entry.parent:
                self._check_manifest_parent(snapshot, request.entry.parent)
                _check_child_name(request.entry, request.kind)
            object_id = request.entry.object_id
            live = await _read_importable(provider, request.entry.type_token, object_id)
            _check_unmanaged(self.backend, live, object_id, request.urn)
            return live

        found = await asyncio.gather(*(read(r) for r in requests), return_exceptions=True)
        problems: list[tuple[ImportEntry, UsageError]] = []
        checked: list[tuple[ImportRequest, dict[str, Any]]] = []
        # By the object read: two ids may name one (a name alone is the default namespace's).
        objects: dict[tuple[str, str], ImportEntry] = {}
        for request, result in zip(requests, found, strict=True):
            if isinstance(result, UsageError):
                problems.append((request.entry, result))
            elif isinstance(result, BaseException):
                raise result
            else:
                same = _same_object(objects, request, request.id_of(result))
                if same is not None:
                    problems.append((request.entry, same))
                else:
                    checked.append((request, result))
        _refuse(problems)
        return checked

    async def _adopt(
        self,
        provider: Provider,
        operation: Operation,
        step: int,
        request: ImportRequest,
        live: dict[str, Any],
        protect: bool,
        applysets: dict[str, set[str]],
    ) -> Imported:
        """Mark one checked object as the stack's and record it, as step `step`."""
        # What the printed code declares: computed once, journaled, applied and recorded.
        declared = declared_fields(live)
        # Journaled before the object is marked as the stack's: were the run to stop
        # mid-apply, the next one finds the step pending and reads the object.
        operation.begin(step, Op.IMPORT, request.imported(live, declared, protect).state)
        # Stackwright takes over the fields its owners declared (what the printed
        # code declares, `declared_fields`), with its labels and annotations; values
        # stay as they are, so no other manager's field conflicts. An apply of less
        # (the identity alone) would drop whatever Stackwright's field manager
        # applied to it before.
        # A member of the stack's ApplySet in its namespace, as what `up` applies
        # is (the parent first, listing its kind, as the KEP orders it).
        ns = (live.get("metadata") or {}).get("namespace") or None
        if ns is not None and ns in applysets:
            await provider.ensure_applyset(self.stack, ns, applysets.pop(ns))
        marks = provider.stamp(declared, stack=self.stack, urn=request.urn, namespace=ns)
        try:
            done = request.imported(await provider.apply(marks, adopting=True), declared, protect)
        except BaseException as exc:
            if refused(exc):
                operation.fail_step(step)
            raise
        operation.end(step, done.state)
        return done


@dataclass(frozen=True)
class Forgotten:
    """What `Workspace.forget` did: the URNs it forgot, those whose objects it took the
    marks off, a note for each that left something in the cluster on purpose (a Patch's
    fields, a Helm release), and, when it forgot without touching the cluster, each object
    left marked with the kubectl commands that take the marks off (by URN)."""

    removed: list[str]
    unmarked: list[str]
    kept: list[str]
    left_marked: dict[str, str]

    @property
    def unmark_commands(self) -> list[str]:
        return list(self.left_marked.values())


class MarksRemain(StackwrightError):
    """The cluster did not take a forgotten object's marks off (unreachable, refused):
    nothing was forgotten. `left_marked`: each object that may still carry them, by URN,
    with the kubectl commands that take them off by hand; `unmarked`: the objects whose
    marks a refusal after others' came off had taken off already (still recorded; read
    back so, the next `up` marks them again)."""

    def __init__(
        self,
        reason: str,
        left_marked: Mapping[str, str],
        unmarked: Sequence[str] = (),
        unread: str = "",
    ) -> None:
        """`unread`: why the objects in `unmarked` could not be read back into the state
        (then a plain `up` would not mark them again; `up --refresh` does)."""
        self.reason = reason
        self.left_marked = dict(left_marked)
        self.unmarked = list(unmarked)
        taken = ", ".join(self.unmarked)
        if not unmarked:
            super().__init__(reason)
        elif unread:
            super().__init__(
                f"{reason}; the marks came off {taken} already, which the stack still records "
                f"(reading them back failed: {unread}): `stackwright up --refresh` marks them "
                "again"
            )
        else:
            super().__init__(
                f"{reason}; the marks came off {taken} already, which the stack still "
                "records: the next `stackwright up` marks them again"
            )


def _left_as_it_is(state: ResourceState) -> str:
    """Why a forgotten resource leaves more than an unmarked object behind, if it does."""
    if state.custom and is_patch(state):
        manager = patch_field_manager(state.urn, state.inputs, state)
        return (
            f"{state.urn}: the fields this Patch applied stay on {state.id}, owned by field "
            f"manager {manager}"
        )
    if state.custom and is_release(state):
        namespace, _, name = state.id.rpartition("/")
        return (
            f"{state.urn}: Helm release {state.id} stays installed (`helm uninstall {name} "
            f"-n {namespace}` removes it)"
        )
    return ""


def _unmark_command(state: ResourceState) -> str:
    return UNMARK_COMMAND(*object_ref(state))


def _import_requests(
    stack: str, project: str, entries: Sequence[ImportEntry], *, one_per_name: bool
) -> list[ImportRequest]:
    """Each entry's object and URN, or one UsageError naming every entry that is malformed
    or names an object or a URN (with `one_per_name`, a name) an earlier entry does. Ids
    that differ and name one object (`web`, the default namespace's, and `default/web`)
    are found once it is read (`Workspace._read_importable`)."""
    from stackwright.automation.adopted import ImportRequest

    problems: list[tuple[ImportEntry, UsageError]] = []
    requests: list[ImportRequest] = []
    objects: dict[tuple[str, str], ImportEntry] = {}
    names: dict[str, ImportEntry] = {}  # by URN, or with `one_per_name` by name
    for entry in entries:
        try:
            api_version, kind, name = _import_address(entry.type_token, entry.name, entry.object_id)
            parent_types = _parent_types(entry)
        except UsageError as exc:
            problems.append((entry, exc))
            continue
        urn = make_urn(stack, project, entry.type_token, entry.name, parent_types)
        request = ImportRequest(entry, urn, api_version, kind, name)
        if (same := _same_object(objects, request, entry.object_id)) is not None:
            problems.append((entry, same))
        elif (taken := entry.name if one_per_name else urn) in names:
            said = f"name {taken!r}" if one_per_name else taken
            other = names[taken].where
            problems.append((entry, UsageError(f"{said} is {other}'s too: give one another name")))
        else:
            names[taken] = entry
            requests.append(request)
    _refuse(problems)
    return requests


def _parent_types(entry: ImportEntry) -> tuple[str, ...]:
    """The type prefix the URN of `entry` has under its parent (its parent's own types), or
    a UsageError when that is no URN of this stack's."""
    if not entry.parent:
        return ()
    try:
        parts = parse_urn(entry.parent)
    except ValueError as exc:
        raise UsageError(f"--parent: {exc}") from None
    return tuple(parts.qualified_type.split("$"))


def _check_child_name(entry: ImportEntry, kind: str) -> None:
    """`entry`, an object of `kind` adopted under its parent, is named as the parent's
    manifests name it (the name `up` declares it by, maybe after a resourcePrefix); else a
    UsageError: under another name, the next `up` would not know it."""
    # The components' module, loaded lazily: only an import under a parent needs it.
    from stackwright.kubernetes.yaml import child_name

    namespace, _, name = entry.object_id.rpartition("/")
    # A manifest without a namespace names its object without one, whichever it goes to.
    names = {child_name(kind, name, namespace, None), child_name(kind, name, None, None)}
    if not any(entry.name == each or entry.name.endswith(f"-{each}") for each in names):
        named = child_name(kind, name, namespace, None)
        raise UsageError(
            f"import {entry.type_token}: NAME {entry.name!r} is not what the manifests of "
            f"{entry.parent} name {entry.object_id}: {named} (or PREFIX-{named} with a "
            "resourcePrefix), as `stackwright up` says"
        )


def _same_object(
    seen: dict[tuple[str, str], ImportEntry], request: ImportRequest, object_id: str
) -> UsageError | None:
    """Why `request` may not adopt the object `object_id` names, when an earlier entry of
    `seen` (by kind and id, where each entry is added) adopts it already; else None."""
    first = seen.setdefault((request.group_kind, object_id), request.entry)
    if first is request.entry:
        return None
    return UsageError(f"{request.kind} {object_id} is {first.where}'s too")


def _one_key_each(imported: list[Imported]) -> list[Imported]:
    """`imported`, refused when two of its secret values would be read from one configuration
    key (`<name>-<item>`: Secret `db` item `a-b` and Secret `db-a` item `b`), as the printed
    program reads each."""
    readers: dict[str, Imported] = {}
    problems: list[tuple[ImportEntry, UsageError]] = []
    for done in imported:
        _, keys = _code_fields(done.entry.name, done.state.inputs, done.state.secret_paths)
        for key, _what in keys:
            first = readers.setdefault(key, done)
            if first is not done:
                said = first.entry.where or first.entry.name
                problems.append(
                    (
                        done.entry,
                        UsageError(
                            f"its secret value would be read from configuration key {key!r}, "
                            f"as one of {said}'s is: import it under another name"
                        ),
                    )
                )
    _refuse(problems)
    return imported


def _refuse(problems: Sequence[tuple[ImportEntry, UsageError]]) -> None:
    """One UsageError saying what is wrong with each entry, where it is (one line, however
    many there are), when any is."""
    if not problems:
        return
    if len(problems) == 1 and not problems[0][0].where:  # the command line's one object
        raise problems[0][1]
    said = "; ".join(
        f"{entry.where}: {exc}" if entry.where else str(exc) for entry, exc in problems
    )
    raise UsageError(f"{said} (nothing was imported)") from problems[0][1]


def expect_no_changes_in(summary: Summary, what: str) -> None:
    """`--expect-no-changes`: raise (exit code 1) when `summary` counts any change. A
    refresh's counts (`in-sync`, `drifted`, `deleted-outside`) are what it read, not
    changes: drift the update would undo is counted by its own step."""
    changes = summary.changes()
    if summary.ok and changes:
        listed = ", ".join(f"{n} to {op}" for op, n in sorted(changes.items()))
        # An error, not a bare exit: with --json it is also the last event line, so a CI
        # script reading the events sees why the run failed after an ok summary.
        raise StackwrightError(f"--expect-no-changes: {what} ({listed})")


def expect_no_drift_in(summary: Summary) -> None:
    """`refresh --expect-no-changes`: raise (exit code 1) when the refresh found objects
    changed or deleted outside the stack (a CI drift gate, as Pulumi's flag)."""
    found = summary.changes()
    if summary.ok and found:
        listed = ", ".join(f"{n} {what}" for what, n in found.items())
        raise StackwrightError(
            f"--expect-no-changes: the refresh finds drift ({listed}); nothing was recorded"
        )


def _import_address(type_token: str, name: str, object_id: str) -> tuple[str, str, str]:
    """(apiVersion, kind, name) of the object `import` adopts, or one line saying what is
    wrong with the NAME or ID given."""
    parsed = _split_type(type_token)
    if not name or "::" in name:
        raise UsageError(
            f"import {type_token}: NAME {name!r} is not a resource name: give the logical "
            "name the program will declare it under, e.g. `web`"
        )
    unnamed = import_id_problem(object_id)
    if unnamed is not None:
        raise UsageError(f"import {type_token}: ID {object_id!r} names no object: {unnamed}")
    return parsed.api_version, parsed.kind, object_id.rpartition("/")[2]


async def _read_importable(provider: Provider, type_token: str, object_id: str) -> dict[str, Any]:
    """The live object `import` adopts (of the type `type_token`, which `_split_type`
    passed), or one line saying why there is none."""
    parsed = _split_type(type_token)
    api_version, kind = parsed.api_version, parsed.kind
    namespace, _, name = object_id.rpartition("/")
    try:  # a misspelt kind would read as no object: say which it is
        namespaced = await provider.namespaced(api_version, kind)
    except StackwrightError as exc:
        # `WidgetPatch` is the token of a Patch of Widget (CustomObjectPatch's) unless the
        # cluster serves a kind of that name: discovery tells which, as the token cannot.
        patched = TypeToken(parsed.group_version, kind.removesuffix(PATCH_SUFFIX))
        if patched.kind != kind and await _serves(provider, patched):
            raise _patch_refused(type_token, patched) from exc
        raise UsageError(f"cannot import {object_id}: {exc}") from exc
    if namespace and not namespaced:
        # The server ignores the namespace of a cluster-scoped read: `x/default` would adopt
        # Namespace `default` under an ID that names no object.
        raise UsageError(
            f"cannot import {object_id}: {kind} is cluster-scoped, so its ID is its name "
            f"alone: `{name}`"
        )
    live: dict[str, Any] | None = await provider.read(api_version, kind, namespace or None, name)
    if live is None:
        raise UsageError(f"cannot import {object_id}: no {kind} of that name exists in the cluster")
    said = being_deleted(live)
    if said:
        raise UsageError(f"cannot import {object_id}: it {said}; {IMPORT_OF_ONE_BEING_DELETED}")
    return live


#: Directories of the project's own policy packs, relative to the project folder.


def _cluster(values: dict[str, Any]) -> str:
    """The kubeconfig context of the stack's default cluster, as its configuration names it."""
    if values.get("kubernetes:cluster"):
        return f"{LOCAL_CONTEXT_PREFIX}{values['kubernetes:cluster']}"
    return str(values.get("kubernetes:context") or "")


def _no_state(resource: Any) -> Any:
    raise AssertionError(f"a provider's plain settings read no state ({resource})")


def _split_type(type_token: str) -> TypeToken:
    parsed = parse_type_token(type_token)
    # The URN keeps the token as given, so it must be the spelling a program declares
    # (`core/v1`, never the bare `v1` a YAML program may write).
    if parsed is None or "/" not in parsed.group_version:
        example = (
            builtin_type_token(type_token.rpartition(":")[2]) or "kubernetes:apps/v1:Deployment"
        )
        raise UsageError(
            f"type {type_token!r} is not a Kubernetes type token: write it as {example}"
        )
    known = parse_type_token(builtin_type_token(parsed.kind) or "")
    if known is not None and parsed.group not in MODULES and MODULES[known.group] == parsed.group:
        # The Python module's name (`k8s.rbac.v1`), not the API group a type token names;
        # the cluster, asked, would only say it serves no such group.
        module = builtin_module(known.group, parsed.version)
        served = module is not None and known.kind in module.__all__
        version = parsed.version if served else known.version
        raise UsageError(
            f"type {type_token!r} names no API group of the kind: write it as "
            f"kubernetes:{known.group}/{version}:{known.kind}"
        )
    patched = patched_token(parsed)
    if patched is not None:  # fields of an object, not one to adopt
        raise _patch_refused(type_token, patched)
    return parsed


def _patch_refused(type_token: str, patched: TypeToken) -> UsageError:
    """Why a Patch's type, of the kind `patched`, is not imported: importing adopts a whole
    object, and a Patch has none (Pulumi refuses it too)."""
    kind = f"kubernetes:{patched.group_version}:{patched.kind}"
    return UsageError(
        f"type {type_token!r} is a Patch, which has no object of its own to import: import "
        f"the object as {kind}, or declare the Patch in the program"
    )


async def _serves(provider: Provider, parsed: TypeToken) -> bool:
    """Whether the cluster serves the kind of `parsed`, as discovery says."""
    try:
        await provider.namespaced(parsed.api_version, parsed.kind)
    except StackwrightError:
        return False
    return True


#: Metadata the API server or other tools maintain: never part of what a program declares.
_SERVER_METADATA = (
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "managedFields",
    "selfLink",
    "ownerReferences",
    "finalizers",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
)
#: Metadata that means something only when the object is created: it has its name now,
#: which a program declares instead (`generateName: web-` made `web-x7k2p`).
_CREATE_ONLY_METADATA = ("generateName",)
#: kubectl's record of what a client-side `kubectl apply` declared.
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
_TOOL_ANNOTATIONS = (
    LAST_APPLIED,
    STACK_ANNOTATION,
    URN_ANNOTATION,
    "deployment.kubernetes.io/revision",
)


def _tool_mark(field: str, key: str) -> bool:
    """Whether a label or annotation key is a tool's mark (Stackwright's, an ApplySet's,
    kubectl's, the Deployment controller's), never declared."""
    if field == "labels":
        return key.startswith("applyset.kubernetes.io/") or key == "app.kubernetes.io/managed-by"
    return key in _TOOL_ANNOTATIONS


def _check_unmanaged(backend: Backend, live: dict[str, Any], object_id: str, urn: str) -> None:
    """Refuse an object another resource of a stack manages (both would own its fields),
    as `operations.manager_of` tells it; the engine refuses the same for `import_`."""
    refused = operations.manager_of(backend, live, urn)
    if refused:
        raise UsageError(f"cannot import {object_id}: {refused}")


def declared_fields(live: dict[str, Any]) -> dict[str, Any]:
    """The part of a live object a program would declare: the fields its owners declared
    (`_owned_fields`) with their live values, its name and namespace, and of its labels and
    annotations the keys its owners declared; no status, no server metadata (nor
    `generateName`: the object has its name), no tool's marks.

    A key a controller added (another manager's) is left out: declared, `up` would take it
    over and write back a stale value. An object only `Update` managers wrote
    (`_owned_fields` is None) is kept whole, but for its labels and annotations: the keys its
    creator's entry or a hand edit names (`_created_fields`); with no managedFields at all,
    every key but the tools' own."""
    owned = _owned_fields(live)
    # managedFields never name apiVersion and kind: they are the object's identity.
    identity = {k: live[k] for k in ("apiVersion", "kind") if k in live}
    # Every manager's fields tell a granular map declared empty from an atomic one (whole).
    managers = (live.get("metadata") or {}).get("managedFields") or ()
    managed = fields_union(*(m.get("fieldsV1") or {} for m in managers))
    out = {**identity, **(live if owned is None else owned_part(live, owned, managed))}
    out.pop("status", None)
    out = _without_nulls(out)
    meta = {
        k: v
        for k, v in (out.get("metadata") or {}).items()
        if k not in (*_SERVER_METADATA, *_CREATE_ONLY_METADATA, "labels", "annotations")
    }
    whole = live.get("metadata") or {}
    meta.update({k: whole[k] for k in ("name", "namespace") if k in whole})
    # Key by key, as the owners' fieldsV1 name them (`f:metadata: f:labels: f:app`): an
    # empty node (the last-applied `annotations: {}`) declares no key, not all of them.
    keyed = owned if owned is not None else _created_fields(live)
    owned_meta = None if keyed is None else keyed.get("f:metadata") or {}
    for which in ("labels", "annotations"):
        keys = None if owned_meta is None else owned_meta.get(f"f:{which}") or {}
        kept = {
            k: v
            for k, v in (whole.get(which) or {}).items()
            if (keys is None or f"f:{k}" in keys) and not _tool_mark(which, k)
        }
        if kept:
            meta[which] = kept
    out["metadata"] = meta
    return out


def _without_nulls(fields: dict[str, Any]) -> dict[str, Any]:
    """`fields` without the ones whose value is null, at any depth: the API server's way of
    saying a field has no value (a Role made without rules reads back `rules: null`, a pod
    template's `creationTimestamp: null`). Declared, the printed code would hold
    `rules=None`, and applying that would say nothing the object does not say already."""

    def kept(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: kept(v) for k, v in value.items() if v is not None}
        if isinstance(value, list):
            return [kept(v) for v in value]
        return value

    return {k: kept(v) for k, v in fields.items() if v is not None}


#: The field manager whose applies `import` makes and `up` makes after it.
_OURS = "stackwright"


#: kubectl's field managers for changing an object in place: an `Update` entry of one names
#: only the fields the change set (unlike `kubectl create`'s, the whole object as stored).
#: Plain `kubectl` is its commands that name no manager of their own (`kubectl scale`).
#: Not `kubectl-rollout`: `rollout restart` stamps the pod template with the time, which a
#: program declaring it would set again on every new object.
_KUBECTL_EDITS = frozenset(
    {
        "kubectl",
        "kubectl-edit",
        "kubectl-patch",
        "kubectl-set",
        "kubectl-scale",
        "kubectl-replace",
        "kubectl-annotate",
        "kubectl-label",
    }
)


def _owned_fields(live: dict[str, Any]) -> dict[str, Any] | None:
    """The fieldsV1 trie of what the object's owners declared, or None for all of it.

    In this order: client-side `kubectl apply`'s last-applied annotation (exactly what was
    declared; ignored when it does not parse or names another object); else the union of
    the `Apply` managedFields entries (server-side appliers: kubectl --server-side, Helm 4,
    Argo CD, Flux). Stackwright's own apply entry, left by a stack that held the object,
    is always part of it: an apply of less would drop those fields. So are the fields a
    user changed by hand after (`kubectl edit`, `patch`, `set`, `scale`: `_KUBECTL_EDITS`),
    which the last-applied annotation does not learn: the printed program keeps them.

    Only `Update` managers (`kubectl create`, Helm 3): None. The API server records an
    Update manager's fields from the object as stored, server defaults included
    (`kubectl create` owns `revisionHistoryLimit` and `terminationMessagePath`), so its
    entries cannot tell what was declared; the whole object is.
    """
    declaring = _declaring_entries(live)
    entries = [e for e in declaring if e.get("operation") == "Apply"]
    ours = [e.get("fieldsV1") or {} for e in entries if e.get("manager") == _OURS]
    edits = _hand_edits(declaring)
    declared = _last_applied(live)
    if declared is not None:
        tries = [declared_fields_of(declared, live), *ours, *edits]
    elif entries:
        tries = [*(e.get("fieldsV1") or {} for e in entries), *edits]
    else:
        return None
    owned = fields_union(*tries)
    if live.get("kind") == "Secret" and "f:stringData" in owned:
        # Written as stringData, kept by the server as data (the same keys).
        owned = fields_union(owned, {"f:data": owned.pop("f:stringData")})
    return owned


def _declaring_entries(live: dict[str, Any]) -> list[dict[str, Any]]:
    """The object's managedFields entries that may declare something: not a status
    subresource's (a controller applying or updating its status declared nothing)."""
    managed = (live.get("metadata") or {}).get("managedFields") or ()
    return [e for e in managed if e.get("subresource") != "status"]


def _hand_edits(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The fieldsV1 of the entries of kubectl's commands that change an object in place."""
    return [
        e.get("fieldsV1") or {}
        for e in entries
        if e.get("operation") == "Update" and e.get("manager") in _KUBECTL_EDITS
    ]


def _created_fields(live: dict[str, Any]) -> dict[str, Any] | None:
    """For an object only `Update` managers wrote: the fieldsV1 of its creator's entry, of
    kubectl's hand edits (`_KUBECTL_EDITS`) and of the label and annotation keys no entry
    names (`_unnamed_keys`), whose labels and annotations it declares; None without
    managedFields (nothing tells one manager's key from another's).

    The creator is the Update manager that wrote most of the object outside its metadata,
    its spec or data (`kubectl create`'s `kubectl-create`, Helm 3's `helm`), ties broken by
    the earliest `time`, then by the most fields named in all: a manager that only labelled
    it since (`kubectl label --field-manager=policy-agent`, the Deployment controller's
    revision) names none of it. A key such a manager set, or set again since, is its own:
    declared, `up` would take it over and write back a stale value.

    A creator may have left no entry (entries rewritten by a client, or every field it
    wrote taken over since): then a key no entry names, or a spec no entry names, is its
    mark. Its keys are those no entry names, and no other manager stands in for it."""
    declaring = _declaring_entries(live)
    updates = [e for e in declaring if e.get("operation") == "Update"]
    if not updates:
        return None
    unnamed = _unnamed_keys(live)
    creator = None if unnamed else _creator(live, updates)
    made = [] if creator is None else [creator.get("fieldsV1") or {}]
    return fields_union(*made, *_hand_edits(declaring), unnamed)


def _creator(live: dict[str, Any], updates: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The Update entry of the manager that made the object (`_created_fields`), or None
    when none can be: the object has more than metadata and no entry names any of it."""

    def rank(entry: dict[str, Any]) -> tuple[int, str, int]:
        named = entry.get("fieldsV1") or {}
        fields = {k: v for k, v in named.items() if k != "f:metadata"}
        # "~": after any time. Within one second (all the server keeps, and it then lists
        # managers by name) the creator's entry names more: its keys and their map (`.`).
        return -_leaves(fields), str(entry.get("time") or "~"), -_leaves(named)

    # A subresource's writer (`scale`) changed an object that was there.
    made = [e for e in updates if not e.get("subresource")]
    creator = min(made, key=rank, default=None)
    content = any(k not in ("apiVersion", "kind", "metadata", "status") for k in live)
    if creator is None or (content and rank(creator)[0] == 0):
        return None
    return creator


def _unnamed_keys(live: dict[str, Any]) -> dict[str, Any]:
    """The fieldsV1 of the object's label and annotation keys that no managedFields entry
    names (tools' marks aside): their writer left no entry."""
    managed = (live.get("metadata") or {}).get("managedFields") or ()
    named = fields_union(*(m.get("fieldsV1") or {} for m in managed)).get("f:metadata") or {}
    meta = live.get("metadata") or {}
    unnamed: dict[str, Any] = {}
    for which in ("labels", "annotations"):
        owned = named.get(f"f:{which}") or {}
        found: dict[str, Any] = {
            f"f:{k}": {}
            for k in meta.get(which) or {}
            if f"f:{k}" not in owned and not _tool_mark(which, k)
        }
        if found:
            unnamed[f"f:{which}"] = found
    return {"f:metadata": unnamed} if unnamed else {}


def _leaves(fields: Mapping[str, Any]) -> int:
    """How many fields a fieldsV1 trie names (its leaves)."""
    return sum(_leaves(v) if isinstance(v, Mapping) and v else 1 for v in fields.values())


def _last_applied(live: dict[str, Any]) -> dict[str, Any] | None:
    """What client-side `kubectl apply` declared of `live`, or None: no annotation, one
    that does not parse, or one that names another object."""
    meta = live.get("metadata") or {}
    text = (meta.get("annotations") or {}).get(LAST_APPLIED)
    try:
        declared = json.loads(text) if isinstance(text, str) else None
    except ValueError:
        return None
    if not isinstance(declared, dict):
        return None
    named = declared.get("metadata")
    named = named if isinstance(named, dict) else {}
    if declared.get("kind") != live.get("kind") or named.get("name") != meta.get("name"):
        return None
    if named.get("namespace") not in (None, meta.get("namespace")):
        return None
    return declared


def _secret_fields(secret_paths: tuple[str, ...]) -> set[str]:
    """The secret top-level fields; a Secret's `data` printed as `stringData` stays secret."""
    return {*secret_paths, *(("stringData",) if "data" in secret_paths else ())}


def _code_fields(
    name: str, inputs: dict[str, Any], secret_paths: tuple[str, ...]
) -> tuple[list[tuple[str, Any, bool]], list[tuple[str, str]]]:
    """What printed code declares of an imported object: its fields (not apiVersion and
    kind) as (field, value, secret?), a secret field's value mapping each item to the
    configuration key (`<name>-<item>`) it is read from; and those keys, each with what
    its value is, for the note that says how to set them."""
    fields: list[tuple[str, Any, bool]] = []
    keys: list[tuple[str, str]] = []  # (config key, what its value is)
    secret = _secret_fields(secret_paths)
    from stackwright.automation.adopted import as_string_data

    for key, value in as_string_data(inputs).items():
        if key in ("apiVersion", "kind"):
            continue
        if key in secret and isinstance(value, dict):
            # stringData's values are plain text; data's (binary) are base64.
            what = "base64 value" if key == "data" else "plain value"
            config = {item: f"{name}-{item}" for item in value}
            keys.extend((k, what) for k in config.values())
            fields.append((key, config, True))
        else:
            fields.append((key, value, False))
    return fields, keys


def _secrets_note(keys: list[tuple[str, str]]) -> str:
    how = "\n".join(f"#   stackwright config set --secret {k} -- <{what}>" for k, what in keys)
    return "# Secret values are not printed: set each in the stack's configuration first:\n" + how


def python_code(
    type_token: str,
    name: str,
    inputs: dict[str, Any],
    secret_paths: tuple[str, ...] = (),
    *,
    protect: bool = False,
) -> str:
    """The Python statement that declares an imported object (with `protect` when the import
    protected it). A secret field's values are not printed: each is read from the stack's
    configuration (`<name>-<key>`), which the comment above the statement says how to set."""
    statement, keys = _python_statement(type_token, name, inputs, secret_paths, protect=protect)
    if not keys:
        return statement
    return f"{_secrets_note(keys)}\ncfg = sw.Config()\n{statement}"


def _python_statement(
    type_token: str,
    name: str,
    inputs: dict[str, Any],
    secret_paths: tuple[str, ...],
    *,
    protect: bool,
) -> tuple[str, list[tuple[str, str]]]:
    """`python_code`'s statement alone, and the configuration keys it reads (`cfg`)."""
    parsed = _split_type(type_token)
    group, version, kind = parsed.group, parsed.version, parsed.kind
    args = [repr(name)]
    module = builtin_module(group, version)
    if module is not None and kind in module.__all__:
        constructor = f"k8s.{MODULES[group]}.{version}.{kind}"
    else:  # a CRD's kind, or one newer than the generated classes: the class for any kind
        constructor = "k8s.apiextensions.CustomResource"
        args += [f"api_version={parsed.api_version!r}", f"kind={kind!r}"]
    import pprint  # as `import` prints code, not as every operation starts

    fields, keys = _code_fields(name, inputs, secret_paths)
    for key, value, secret in fields:
        snake = "".join(f"_{c.lower()}" if c.isupper() else c for c in key)
        if secret:
            entries = [f"{item!r}: cfg.require_secret({k!r})" for item, k in value.items()]
            args.append(f"{snake}={{" + ", ".join(entries) + "}")
        else:
            shown = pprint.pformat(value, width=92 - len(snake), sort_dicts=False)
            # Continuation lines line up under the argument's first.
            args.append(f"{snake}=" + shown.replace("\n", "\n" + " " * (5 + len(snake))))
    if protect:
        args.append("opts=sw.ResourceOptions(protect=True)")
    return f"{constructor}(\n    " + ",\n    ".join(args) + ",\n)", keys


def yaml_code(
    type_token: str,
    name: str,
    inputs: dict[str, Any],
    secret_paths: tuple[str, ...] = (),
    *,
    protect: bool = False,
) -> str:
    """The entry of a YAML program's `resources:` that declares an imported object (with
    `protect` as `python_code`); a secret field's values are read from configuration, as
    `python_code` does."""
    entry, keys = _yaml_entry(type_token, name, inputs, secret_paths, protect=protect)
    text = yaml.safe_dump(entry, sort_keys=False, default_flow_style=False, width=92)
    if not keys:
        return text.rstrip("\n")
    declared = ", ".join(f"{k}: {{type: string, secret: true}}" for k, _ in keys)
    note = f"{_secrets_note(keys)}\n# and declare them under `config:` ({declared})"
    return f"{note}\n{text.rstrip()}"


def _yaml_entry(
    type_token: str,
    name: str,
    inputs: dict[str, Any],
    secret_paths: tuple[str, ...],
    *,
    protect: bool,
) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """`yaml_code`'s entry alone, and the configuration keys it reads."""
    fields, keys = _code_fields(name, inputs, secret_paths)
    properties = {
        key: {item: f"${{{k}}}" for item, k in value.items()} if secret else value
        for key, value, secret in fields
    }
    body: dict[str, Any] = {"type": type_token, "properties": properties}
    if protect:
        body["options"] = {"protect": True}
    return {name: body}, keys


def object_code(runtime: str, done: Imported, *, protect: bool) -> str:
    """The code that declares one imported object: `python_code`'s, or in a YAML project
    (`runtime` `yaml`) `yaml_code`'s."""
    code = yaml_code if runtime == "yaml" else python_code
    entry, state = done.entry, done.state
    return code(entry.type_token, entry.name, state.inputs, state.secret_paths, protect=protect)


#: Kinds a printed program declares before the others, each with why. The engine orders
#: what depends on what whatever the order; the program reads as the cluster is built.
_DECLARED_FIRST: tuple[tuple[tuple[str, str], str], ...] = (
    (("", "Namespace"), "the objects of a namespace are made in it"),
    (("apiextensions.k8s.io", "CustomResourceDefinition"), "its CRD defines a custom kind"),
)


def _declared_rank(done: Imported) -> int:
    parsed = _split_type(done.entry.type_token)
    first = [group_kind for group_kind, _ in _DECLARED_FIRST]
    key = (parsed.group, parsed.kind)
    return first.index(key) if key in first else len(first)


def program_code(runtime: str, imported: Sequence[Imported], *, protect: bool) -> str:
    """One program declaring every imported object (with `protect` as `python_code`),
    Namespaces and CRDs first, the others in the order imported: in Python the imports
    once, then one note listing every secret's configuration keys and one `cfg`; in YAML
    (`runtime` `yaml`) that note, one `config:` declaring those keys, one `resources:`."""
    write: Callable[..., tuple[Any, list[tuple[str, str]]]] = (
        _yaml_entry if runtime == "yaml" else _python_statement
    )
    parts: list[Any] = []
    keys: list[tuple[str, str]] = []
    for done in sorted(imported, key=_declared_rank):
        entry, state = done.entry, done.state
        part, more = write(
            entry.type_token, entry.name, state.inputs, state.secret_paths, protect=protect
        )
        parts.append(part)
        keys += more
    if runtime == "yaml":
        program: dict[str, Any] = {}
        if keys:
            program["config"] = {k: {"type": "string", "secret": True} for k, _ in keys}
        program["resources"] = {name: body for part in parts for name, body in part.items()}
        text = yaml.safe_dump(program, sort_keys=False, default_flow_style=False, width=92)
        return f"{_secrets_note(keys)}\n{text}" if keys else text
    head = "import stackwright as sw\nimport stackwright.kubernetes as k8s\n"
    if keys:
        head += f"\n{_secrets_note(keys)}\ncfg = sw.Config()\n"
    return head + "\n" + "\n".join(parts) + "\n"


if not TYPE_CHECKING:  # as they were here; imported when first used (`adopted`)
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {name: "stackwright.automation.adopted" for name in ("ImportEntry", "Imported")},
    )

__all__ = [
    "ImportEntry",
    "Imported",
    "Workspace",
    "declared_fields",
    "object_code",
    "object_ref",
    "program_code",
    "python_code",
    "yaml_code",
]
