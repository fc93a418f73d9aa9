"""Executing a plan: walk the resource graph concurrently, one journaled step per resource.

Each resource waits for what it depends on, then resolves its inputs against the
live objects of those dependencies, plans its step (`plan.plan`) and carries it
out through its provider: the step is journaled before the API call and ended
after it (Pulumi's BeginMutation / End), so a crash at any instant leaves
pending records the next run settles by reading the cluster (`settle_pending`).
Deletes come last, in reverse dependency order. A failed step stops its
dependents; independent work finishes; the summary says what was not done.

A preview walks the same graph with no journal: it asks the API server for a
dry-run apply of each resource whose inputs changed, and makes no write call.

`Run` orchestrates an operation; its collaborators each own one part of it, over the
run's shared pieces (journal, providers, records, events): `settle` (the steps a crash left
pending), `deletes` (what goes, dependents first), `refresh` (reading the records back,
and record rewrites that change no object), `adoption` (whether an object is the stack's
to create or import), `patches` (applying a Patch to an object someone else owns),
`preview` (a preview's dry runs) and `provider_moves` (a provider resource's step, and its
move to another cluster); a step's failure text is `failures`'. Beside them: `records`
(what a recorded resource names, read without I/O), `commits` (the journal's group commit)
and `clusters` (the pre-run check that providers still reach the clusters their objects
are in).

Must never: send a write the journal has not recorded first, or let one
resource's failure escape as anything but a failed step.
"""

from __future__ import annotations

import asyncio
import shlex
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, NoReturn

import orjson

from stackwright.engine import drift as drift_rules
from stackwright.engine.adoption import Adoption
from stackwright.engine.api_versions import Declared, version_change, version_moves
from stackwright.engine.clusters import (
    ClusterCheck,
)
from stackwright.engine.commits import GroupCommit
from stackwright.engine.deletes import Deletes
from stackwright.engine.events import (
    SKIPPED,
    Diagnostic,
    DriftedField,
    Listener,
    StepDone,
    StepProgress,
    StepSkipped,
    StepStarted,
    Summary,
    ignore,
    masked,
    shown,
    within,
)
from stackwright.engine.failures import (
    ADOPTION_INTERRUPTED,
    DeclarationRefused,
    ProtectedReplacement,
    adoption_cut_short,
    callback_failed,
    callback_line,
    failure_text,
)
from stackwright.engine.generated import GENERATORS, is_generated
from stackwright.engine.graph import (
    DependencyCycle,
    Graph,
    Node,
    group_and_kind,
    service_feeders,
    services_fed_later,
)
from stackwright.engine.patches import Patches
from stackwright.engine.plan import (
    ABSENT,
    FieldChange,
    Intent,
    Step,
    option_changes,
    plan,
    recorded_options,
    with_ignored,
)
from stackwright.engine.ports import Journal, Provider, ProviderFactory
from stackwright.engine.preview import Preview
from stackwright.engine.provider_moves import ProviderMoves
from stackwright.engine.records import (
    MIN_SECRET_PART,
    Records,
    SecretTexts,
    another_object,
    applied_fields,
    applyset_of,
    as_applied,
    declared_dependencies,
    describe,
    group_kind,
    is_kubernetes,
    is_patch,
    is_release,
    mark_of,
    metadata_of,
    name_refusal,
    object_key,
    object_ref,
    patch_field_manager,
    patch_instruction_notes,
    provider_urn,
    recorded_closure,
    refused,
    release_spec,
    secret_in_plain_field,
    secret_paths_of,
    secrets_held,
    through_kubernetes,
    uid_of,
    unknown_as_null,
    unknown_paths,
    unwrapped,
    with_outputs,
)
from stackwright.engine.refresh import Refresh
from stackwright.engine.rendering import (
    as_rendered,
    rendered_secret,
    rendering_providers,
    unknown_because_rendered,
    unplaced,
)
from stackwright.engine.rendering import refusal as rendering_refusal
from stackwright.engine.rollouts import (
    DataChanges,
    ObjectKey,
    data_updated,
    notice,
    stale_readers,
)
from stackwright.engine.saved_plan import PREVIEW_AGAIN, SavedPlan, ViolatesPlan, doing
from stackwright.engine.settle import Settlement
from stackwright.engine.shared_work import SharedWork
from stackwright.errors import InputsRejected, StackwrightError, UsageError, located
from stackwright.kubernetes.base import PATCH_FIELD_MANAGER
from stackwright.kubernetes.provider import PROVIDER_TYPE
from stackwright.model import (
    DELETION_PROPAGATION,
    SECRET_SIG,
    STACK_ANNOTATION,
    URN_ANNOTATION,
    Op,
    PendingOperation,
    ResourceState,
    SecretValue,
    Unknown,
    always_secret,
    auto_name,
    deletion_propagation,
    is_sealed,
    outermost,
    transform_at,
    urn_name,
)
from stackwright.sdk.context import Program
from stackwright.sdk.output import (
    PLAIN_LEAVES,
    UNKNOWN,
    Output,
    Partial,
    Secret,
    dependencies_of,
    join_path,
    planned_unknown,
    rearm,
    resolve,
    unrun,
    unwrap_secrets,
)
from stackwright.sdk.resource import (
    ComponentResource,
    CustomTimeouts,
    Resource,
    raised_at,
    remember_secret_fields,
)
from stackwright.sdk.spelling import Spelling, spelling_of
from stackwright.state import Snapshot

#: How many API calls (reads, dry runs, writes) run at once unless `--parallel` says otherwise.
DEFAULT_PARALLEL = 16

_DONE, _FAILED, _SKIPPED = "done", "failed", "skipped"

#: How long a Service still waits for endpoints once every workload of the program that
#: would give it Pods failed or was not done: Pods from before (an update's former ones, a
#: rollout that failed halfway) may still make it ready, which its first look tells.
UNFED_GRACE_SECONDS = 5.0

#: The operations of a plan that remove a resource's record (`_refuse_plan_violations`).
_PLANNED_DELETES = frozenset((Op.DELETE, Op.DELETE_REPLACED, Op.DISCARD))


@dataclass(frozen=True)
class Options:
    kind: str  # up / destroy / refresh
    #: Only these resources and what they depend on (`--target`; see `target_dependents`).
    targets: frozenset[str] = frozenset()
    parallel: int = DEFAULT_PARALLEL
    refresh: bool = False
    #: Take over fields other field managers own (server-side apply force).
    force: bool = False
    #: A preview of `kind`: no write anywhere, dry-run applies only.
    dry_run: bool = False
    #: The targets' dependents too (`--target-dependents`).
    target_dependents: bool = False
    #: Everything but these (`--exclude`; see `exclude_dependents`).
    excludes: frozenset[str] = frozenset()
    #: Nor what depends on the excluded (`--exclude-dependents`).
    exclude_dependents: bool = False
    #: Leave out every protected resource too, and what it needs (`destroy
    #: --exclude-protected`): a destroy of the rest that does not fail on them.
    exclude_protected: bool = False
    #: Replace these even if nothing about them changed (`--replace`).
    replace: frozenset[str] = frozenset()
    #: Accept providers that now reach another cluster than their objects are recorded
    #: in (`up --retarget`): forget those objects, left there, and create them anew.
    retarget: bool = False
    #: A saved plan an `up` takes only the steps of (`up --plan`), each checked as it
    #: begins, the program and the state before the lock (`refuse_plan_violations`); a
    #: preview of that `up` (the one it runs before asking) refuses up front as it would.
    plan: SavedPlan | None = field(default=None, compare=False)
    #: The saved plan a preview fills with its steps (`preview --save-plan`).
    save_plan: SavedPlan | None = field(default=None, compare=False)


@dataclass
class Outcome:
    """What an operation did, for the summary and the automation API."""

    counts: Counter[str] = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)
    #: How many of the failures are bad input (`Summary.rejected`).
    rejected: int = 0
    not_done: list[str] = field(default_factory=list)
    #: How many of `not_done` the selection alone left undone (`Summary.unselected`).
    unselected: int = 0
    outputs: dict[str, Any] = field(default_factory=dict)
    drift: dict[str, list[DriftedField]] = field(default_factory=dict)


# --- small pure helpers ---------------------------------------------------------------


def _protected_replacement(urn: str, step: Step) -> ProtectedReplacement:
    return ProtectedReplacement(
        f"resource {urn} cannot be replaced because it is protected "
        f"({'; '.join(step.replace_reasons)}): remove its `protect` option first, "
        f"or run `stackwright state unprotect {shlex.quote(urn)}`",
        step,
    )


#: How a refusal of a second claim says what the first resource's step does with the object.
_CLAIMED_BY = {Op.CREATE: "creates too", Op.REPLACE: "creates too", Op.IMPORT: "adopts too"}


def _unplanned_op(resource: Resource, old: ResourceState | None) -> Op | None:
    """The operation of a resource's step, as far as the program says it before the step is
    planned: a new resource's is a create (or its import, its read); a recorded one's needs
    its diff (None)."""
    if resource.is_read:
        return Op.READ
    if old is not None and not old.external:
        return None
    kube = resource.custom and is_kubernetes(resource)
    return Op.IMPORT if resource.opts.import_ and kube else Op.CREATE


def named_metadata(
    resource: Resource,
    meta: Mapping[str, Any],
    old: ResourceState | None,
    released: Collection[str] = (),
) -> tuple[dict[str, Any], bool]:
    """The `metadata` a Kubernetes resource's object is applied with, and whether it was
    auto-named: without a `name`, the one it imports, else the one its record `old` holds,
    else `<logical name>-<8 hex digits>`, none of the names `released` (its URN's objects the
    state let go of, left in the cluster); without a `namespace`, the one it imports from, if
    any (else its provider's default, which only its id holds: `Run._object_id`). What a
    run applies (`Run._desired`) and what the check of one resource per object
    (`operations`) compares, so that the two name an object alike."""
    named = dict(meta)
    auto = not named.get("name")
    object_id = resource.opts.import_
    if auto and object_id:
        # The import's id names the object, a name not Stackwright's: kept once it is
        # adopted (a replacement deletes it first and makes it again under that name, as
        # Pulumi's imported resources, which are named, are), and an id other than the
        # record's names the object the resource moves to (Pulumi's import-replacement).
        named["name"] = object_id.rpartition("/")[2]
        auto = False
    elif auto:
        recorded = metadata_of(old.inputs).get("name") if old is not None else None
        named["name"] = (
            str(recorded)
            if recorded
            else auto_name(resource.resource_name, resource.urn, released=released)
        )
    imported_namespace = (object_id or "").rpartition("/")[0]
    if imported_namespace and not named.get("namespace"):
        named["namespace"] = imported_namespace
    return named, auto


def _envelope_in(value: Any, path: str = "") -> str | None:
    """The path of a map in a stack output that reads as a stored secret (`is_sealed`): the
    state would take it for one, and fail to decrypt it, on every later run. None if none."""
    if is_sealed(value):
        return path
    if isinstance(value, dict):
        items: Iterable[tuple[Any, Any]] = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        return None
    for key, item in items:
        found = _envelope_in(item, join_path(path, key))
        if found is not None:
            return found
    return None


def declared_metadata(
    resource: Resource, old: ResourceState | None, released: Collection[str] = ()
) -> dict[str, Any] | None:
    """`named_metadata` of what the program gives, before the run: None when its name or
    namespace is an Output (known only once applied)."""
    meta = resource.props.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    given = meta.get("name"), meta.get("namespace")
    if any(value not in (None, "") and not isinstance(value, str) for value in given):
        return None
    return named_metadata(resource, meta, old, released)[0]


def record_moves(
    resources: Sequence[Resource], old: Mapping[str, ResourceState]
) -> dict[str, tuple[str, str]]:
    """Program URN → (the recorded URN whose record it takes, why): the same object under a
    new URN, by an explicit alias, else by a built-in alias between its kind's versions.
    What a run renames (`Run._apply_aliases`), and so what no `up` deletes."""
    moves: dict[str, tuple[str, str]] = {}
    remaining = dict(old)
    named: set[str] = set()
    for resource in resources:
        aliases = resource.alias_urns()
        named.update(aliases)
        if resource.urn in remaining:
            continue
        alias = next((a for a in aliases if a in remaining), None)
        if alias is not None:
            remaining[resource.urn] = remaining.pop(alias)
            moves[resource.urn] = (alias, "(alias)")
    # Then the built-in aliases between a kind's versions, for what is left: an explicit
    # alias wins over them, and a URN the program declares is no one's former one.
    declared = (  # a generator: a run with nothing left over does not compute it
        Declared(r.urn, provider_urn(r), _static_metadata(r.props))
        for r in resources
        if r.custom and not r.is_read
    )
    reserved = named | {r.urn for r in resources}
    for urn, former in version_moves(declared, remaining, reserved).items():
        moves[urn] = (former, f"({version_change(former, urn)}, same object)")
    return moves


# --- the run ------------------------------------------------------------------------------


class Run:
    """One operation over one stack: settle, plan and execute, emitting events."""

    def __init__(
        self,
        *,
        stack: str,
        options: Options,
        program: Program | None,
        resources: list[ResourceState],
        journal: Journal | None,
        providers: ProviderFactory,
        listener: Listener,
        clock: Callable[[], float] = time.monotonic,
        recorded_elsewhere: Callable[[str, str], list[str]] | None = None,
        managed_by: Callable[[Mapping[str, Any], str], str] | None = None,
        clusters: ClusterCheck | None = None,
        released_names: Mapping[str, tuple[str, ...]] | None = None,
    ) -> None:
        self.stack = stack
        #: URN → the auto-names the state let go of, objects left in the cluster that no new
        #: auto-name of that URN may take (`Snapshot.released_names`).
        self.released_names = released_names or {}
        #: Each provider's cluster identity, as `check_clusters` asked it (at most one GET
        #: per provider and operation), and the providers `--retarget` moves.
        self.clusters = clusters or ClusterCheck()
        #: (URN, object id) → the other stacks that record that object still marked as
        #: this stack's URN (`Backend.recorded_elsewhere`).
        self.recorded_elsewhere = recorded_elsewhere
        #: (live object, URN) → why that resource may not adopt it, or "" (`operations.manager_of`).
        self.managed_by = managed_by
        self.options = options
        self.program = program
        self._read_plain = (0, SecretTexts())
        self.journal = journal
        self.factory = providers
        self.emit = listener
        self.clock = clock
        self.outcome = Outcome()
        self.old = Records(r for r in resources if not r.delete_pending)
        #: Whether each protected Job asked about was deleted by its TTL (`_protected_job_gone`).
        self._jobs_gone: dict[str, bool] = {}
        self.replaced: list[ResourceState] = [r for r in resources if r.delete_pending]
        self.all_old = resources
        self.live: dict[str, Any] = {}
        #: The program's providers that render to files instead of applying: URN → directory.
        self.rendering = rendering_providers(program)
        #: Kinds a rendering provider could not tell the scope of, warned about once.
        self._unplaced: set[tuple[str, str]] = set()
        self.status: dict[str, str] = {}
        self.finished: dict[str, asyncio.Event] = {}
        self.providers: dict[str, Provider] = {}
        self._applysets: dict[tuple[int, str], SharedWork[None]] = {}
        self._group_kinds: dict[tuple[str, str], set[str]] = {}
        self._step = 0
        #: Each resource's step once started, and when: a failure ends that same step.
        self._begun: dict[str, tuple[Step, float]] = {}
        #: Resources replaced delete-first whose old object is gone: a refusal of the new one
        #: is bad input, yet the cluster changed (the `up` is not one that changed nothing).
        self._deleted_first: set[str] = set()
        #: Services whose selected Pods come from a resource that waits for them → that
        #: resource, as its status line names it: their endpoints are not waited for.
        self._fed_later: dict[str, str] = {}
        #: Each Service → the program's workloads whose Pods it selects (`service_feeders`).
        self._feeders: dict[str, tuple[str, ...]] = {}
        #: The journal's begin/end of each step, written in groups (None: no journal given).
        self.commits = (
            GroupCommit(journal, batch=options.parallel > 1) if journal is not None else None
        )
        #: Namespaces a preview would create, which the server cannot dry-run into yet.
        self.previewed_namespaces: set[str] = set()
        #: Providers whose settings a preview cannot know yet (a kubeconfig another
        #: resource produces): their resources are planned without asking a cluster.
        self.unknown_providers: set[str] = set()
        #: ConfigMaps and Secrets whose data this run updates in place, and what of it.
        self._data_updated: dict[ObjectKey, DataChanges] = {}
        #: Providers whose settings now name another cluster: the provider made from their
        #: recorded settings, which still reaches the objects their resources recorded.
        self.former_providers: dict[str, Provider] = {}
        #: Each resource's secret paths, which `read_live` marks as secret in its live state.
        self._secret_paths: dict[str, tuple[str, ...]] = {}
        #: Kinds whose CRD a preview would create (→ whether namespaced): the server cannot
        #: answer for their objects yet (`Preview`).
        self.previewed_kinds: dict[tuple[str, str], bool] = {}
        self.sem = asyncio.Semaphore(max(1, options.parallel))
        #: The objects the program's resources hold after this run's steps (object_key → URN):
        #: an old record naming one of them must not delete it (a rename back to a name whose
        #: old object still awaited deletion, or a name passed from one resource to another).
        self.held: dict[tuple[str, str, str], str] = {}
        #: The same, found by the object alone: (kind.group, namespace/name) → {object_key: URN}.
        self.held_naming: dict[tuple[str, str], dict[tuple[str, str, str], str]] = {}
        #: (provider URN, namespace) of each ApplySet the objects in `held` are members of.
        self.members: set[tuple[str, str]] = set()
        #: Each component's record as this run left it (`record_component_outputs`).
        self._components: dict[str, ResourceState] = {}
        #: Each program resource's URN → the URNs its inputs and `depends_on` name.
        self._declared_of: dict[str, frozenset[str]] = {}
        #: The program's resources `--exclude` keeps this run from touching.
        self.excluded: set[str] = set()
        #: Each resource not done for want of an excluded one not created yet → that one.
        self._behind_excluded: dict[str, str] = {}
        #: Resources the program dropped, deleted early (before the delete-before-replace of
        #: what they depend on) by the task that did it; the run's last deletes skip them.
        self.deleted_first: dict[str, asyncio.Future[set[str]]] = {}
        #: Each object (`claim_key`) → the resource this run creates, replaces or keeps it
        #: for, and its step's operation: a name known only once applied (another's
        #: auto-name, an Output) can still be one the run already gave, which the marks
        #: listed before knew nothing of.
        self._creating: dict[ObjectKey, tuple[str, Op]] = {}
        #: Each resource's recorded object claimed for it before any step (`_claim_kept`),
        #: which its own step gives up when it claims another (a replacement's new name).
        self._kept_claims: dict[str, ObjectKey] = {}
        #: Its collaborators, each over this run's shared pieces.
        self.refreshes = Refresh(self)
        self.deletes = Deletes(self)
        self.adoption = Adoption(self)
        self.patches = Patches(self)
        self.previews = Preview(self)
        self.provider_moves = ProviderMoves(self)

    @classmethod
    def over(
        cls,
        snapshot: Snapshot,
        options: Options,
        program: Program | None,
        journal: Journal | None,
        providers: ProviderFactory,
        listener: Listener,
        recorded_elsewhere: Callable[[str, str], list[str]] | None = None,
        managed_by: Callable[[Mapping[str, Any], str], str] | None = None,
        clusters: ClusterCheck | None = None,
    ) -> Run:
        """A run over a stack's loaded state."""
        return cls(
            stack=snapshot.stack,
            options=options,
            program=program,
            resources=snapshot.resources,
            journal=journal,
            providers=providers,
            listener=listener,
            recorded_elsewhere=recorded_elsewhere,
            managed_by=managed_by,
            clusters=clusters,
            released_names=snapshot.released_names,
        )

    # --- providers ----------------------------------------------------------------------

    def provider_for(self, provider_urn: str) -> Provider:
        found = self.providers.get(provider_urn)
        if found is not None:
            return found
        if provider_urn:
            recorded = self.old.get(provider_urn)
            if recorded is None:
                raise UsageError(
                    f"provider {provider_urn} is neither declared by the program nor in the state"
                )
            made = self.factory(recorded.inputs)
        else:
            made = self.factory(None)
        self.providers[provider_urn] = made
        return made

    def deleting_provider(self, provider_urn: str) -> Provider:
        """The provider that reaches the objects a provider's records name: the one its
        former settings make when it now names another cluster (they are still there)."""
        former = self.former_providers.get(provider_urn)
        return former if former is not None else self.provider_for(provider_urn)

    def former_applysets(self) -> list[tuple[str, str]]:
        """(provider URN, namespace) of each ApplySet whose objects this run deleted from the
        cluster their provider moved off, its parent there left behind; not where another
        of the stack's providers keeps objects in that namespace of that cluster (the same
        parent, whose members they are)."""
        left = []
        for urn, namespace in self.deletes.moved_off:
            former = self.deleting_provider(urn).cluster
            if not any(
                other != urn and ns == namespace and self.provider_for(other).cluster == former
                for other, ns in self.members
            ):
                left.append((urn, namespace))
        return sorted(left)

    def _same_cluster(self, one: str, other: str) -> bool:
        """Whether two providers (by URN; "" the stack's default) reach one cluster; False
        when either cannot be made or named yet (a preview's unknown settings)."""
        if one in self.unknown_providers or other in self.unknown_providers:
            return False
        try:
            found = {self.provider_for(urn).cluster for urn in (one, other)}
        except StackwrightError:  # settings that make no provider (a bad kubeconfig)
            return False
        return len(found) == 1 and "" not in found

    async def close(self) -> None:
        for provider in (*self.providers.values(), *self.former_providers.values()):
            await provider.close()

    def next_step(self) -> int:
        self._step += 1
        return self._step

    # --- settling what a crash left ------------------------------------------------------

    async def settle_pending(self, pending: list[PendingOperation]) -> None:
        """Resolve steps begun and never ended by reading the cluster (`settle`)."""
        await Settlement(self).settle_pending(pending)

    # --- the program's resources ---------------------------------------------------------

    def _declared(self, resource: Resource) -> frozenset[str]:
        """`declared_dependencies`, worked out once per resource (the graph and the
        recorded state both need it)."""
        found = self._declared_of.get(resource.urn)
        if found is None:
            found = self._declared_of[resource.urn] = frozenset(declared_dependencies(resource))
        return found

    def _explicit(self, resource: Resource) -> set[str]:
        deps = set(self._declared(resource))
        if resource.opts.parent is not None:
            deps.add(resource.opts.parent.urn)
        if resource.opts.provider is not None:
            deps.add(resource.opts.provider.urn)
        return deps

    def _named(self, resource: Resource) -> tuple[tuple[str, str, str], str | None] | None:
        """((cluster, kind.group, name), namespace) of the object a resource names in plain
        text, the namespace None when only the run knows it (an Output gives it, or none is
        given); None when an Output gives its name, or it has none (auto-named)."""
        props = resource.props
        meta = props.get("metadata")
        name = meta.get("name") if isinstance(meta, Mapping) else None
        if not isinstance(name, str) or not name:
            return None
        namespace = meta.get("namespace") if isinstance(meta, Mapping) else None
        kind = group_kind(str(props.get("apiVersion", "")), str(props.get("kind", "")))
        known = namespace if isinstance(namespace, str) and namespace else None
        return (self.clusters.cluster_of(provider_urn(resource)), kind, name), known

    def _graph(self, resources: list[Resource]) -> Graph:
        nodes = []
        # (cluster, kind, name) → (namespace, URN) of each object the program names.
        objects: dict[tuple[str, str, str], list[tuple[str | None, str]]] = {}
        patched: dict[str, tuple[tuple[str, str, str], str | None]] = {}  # URN → a Patch's
        for resource in resources:
            patch = resource.custom and is_patch(resource)
            if not (patch or (resource.custom and is_kubernetes(resource))):
                continue
            named = self._named(resource)
            if named is None:
                continue
            if patch:  # never a Kubernetes object of the stack's (`is_kubernetes`)
                patched[resource.urn] = named
            else:
                objects.setdefault(named[0], []).append((named[1], resource.urn))
        for resource in resources:
            static = _static(resource.props) if resource.custom else {}
            explicit = self._explicit(resource)
            patch = resource.custom and is_patch(resource)
            named = patched.get(resource.urn)
            if named is not None:
                # A Patch of an object the program declares changes it once it is made (and
                # again when it is made anew). A namespace only the run knows (an Output, the
                # provider's default) may be the other's: the Patch follows each such one,
                # else it raced the object's create, or its delete-first replacement.
                key, namespace = named
                explicit.update(
                    urn
                    for theirs, urn in objects.get(key, ())
                    if theirs is None or namespace is None or theirs == namespace
                )
            nodes.append(Node(resource.urn, static, frozenset(explicit), patch))
        try:
            return Graph(nodes, program=True)
        except DependencyCycle as cycle:
            declared = {r.urn: r.declared_at for r in resources}
            where = ", ".join(
                f"{describe(urn)} ({declared[urn]})" for urn in dict.fromkeys(cycle.cycle)
            )
            raise UsageError(
                located(declared[cycle.cycle[0]], f"{cycle}; declared: {where}")
            ) from None

    def read_live(self, resource: Resource) -> Any:
        value = self.live.get(resource.urn, UNKNOWN)
        if self.rendering and isinstance(value, dict) and provider_urn(resource) in self.rendering:
            return as_rendered(value)  # what a server would fill stays unknown: none will
        paths = self._secret_paths.get(resource.urn)
        if not paths or not isinstance(value, dict):
            return value
        # What a secret field holds stays secret in what is computed from it (a Secret's
        # `data` read by another resource, a generated password's `result`).
        marked = value
        for path in outermost(paths):  # a preview's partly known object stays one
            marked = transform_at(marked, path, Secret)
        return marked

    async def run_program(self) -> None:
        assert self.program is not None
        resources = self.program.resources
        rearm(self.program.applies)  # a policy check or an earlier run may have run some
        self._apply_aliases(resources)
        self._claim_kept(resources)
        graph = self._graph(resources)
        self._fed_later = {svc: describe(made) for svc, made in services_fed_later(graph).items()}
        self._feeders = service_feeders(graph)
        allowed = self._allowed(graph)
        for resource in resources:
            if resource.custom and is_kubernetes(resource) and not resource.is_read:
                props = resource.props
                self._group_kinds.setdefault((provider_urn(resource), ""), set()).add(
                    group_kind(str(props.get("apiVersion", "")), str(props.get("kind", "")))
                )
        await self._refuse_protected_replacements(resources, allowed)
        by_urn = self.program.by_urn
        self.finished = {urn: asyncio.Event() for urn in graph.order}
        tasks = [
            asyncio.create_task(
                self._resource(
                    by_urn[urn],
                    graph.needs[urn]
                    if allowed is None or urn not in allowed
                    else graph.waits_for(urn, allowed, self.old),
                    allowed is None or urn in allowed,
                )
            )
            for urn in graph.order
        ]
        await asyncio.gather(*tasks)
        if not self.options.dry_run:
            await self._record_component_outputs(
                [r for r in resources if allowed is None or r.urn in allowed]
            )

    async def _refuse_protected_replacements(
        self, resources: list[Resource], allowed: set[str] | None
    ) -> None:
        """Refuse, before any change, an `up` whose program replaces a protected object, as
        `operations._check_protected` refuses one that deletes it: failing that step alone
        let the rest of the run go on — a Service's selector changed with its protected
        Deployment's (an immutable field) selected no Pod, and `up` waited for endpoints
        no Pod would give; a provider's move to another cluster recorded its new settings
        while the object stayed on the former one. Pulumi's `up --yes` runs its preview
        first, which stops it. Known before the run: an object whose provider reaches
        another cluster than its objects are recorded on (`check_clusters` asked it), and a
        replacement planned from inputs that hold no Output, through the default provider
        or one the run has made already. One whose replacement shows only once its inputs
        or its provider's settings are known fails its own step then."""
        if self.options.dry_run:
            return
        moving = {
            provider
            for provider, uid in self.clusters.recorded.items()
            if provider not in self.clusters.moved  # `--retarget` forgets them: no delete
            and provider in self.clusters.identities
            and self.clusters.identities[provider].uid != uid
        }
        made = self.providers.keys() | {""}
        for resource in resources:
            old = self.old.get(resource.urn)
            if (
                old is None
                or not old.protect
                or old.external
                or not resource.custom
                or resource.is_read
                or not (is_kubernetes(resource) or is_patch(resource))
                or (allowed is not None and resource.urn not in allowed)
            ):
                continue
            provider = provider_urn(resource)
            if provider in moving:
                reason = "its provider names another cluster"
                self._refused_before_the_run(
                    resource, Step(Op.REPLACE, resource.urn, old, old, replace_reasons=(reason,))
                )
            if not resource.input_marks.plain or provider not in made:
                continue
            try:
                step = await self._plan_alone(resource, old)
                replaced = step.op is Op.REPLACE and not await self._protected_job_gone(
                    old, provider
                )
            except Exception:  # not plannable now: its own step says why, in the run
                continue
            if replaced:
                self._refused_before_the_run(resource, step)

    def _refuse_plan_violations(self, plan: SavedPlan) -> None:
        """`refuse_plan_violations`, on a run that changes nothing (no journal): the
        program's aliases applied to its records as the run will, and its selection."""
        assert self.program is not None and self.journal is None
        resources = self.program.resources
        self._apply_aliases(resources)
        selected = self.options.targets or self.options.excludes
        # The graph only for a selection: a third of the check's time for the whole stack.
        allowed = self._allowed(self._graph(resources)) if selected else None
        problems: list[str] = []
        for resource in resources:
            urn = resource.urn
            if allowed is not None and urn not in allowed:
                continue
            planned = plan.resources.get(urn)
            if planned is None:
                problems.append(f"{describe(urn)}: the plan has no step for it")
                continue
            if (
                planned.inputs is None
                # Known only as the run applies what it reads: checked as its step begins.
                or resource.input_marks.resources
                or resource.is_read
                or resource.resource_type == PROVIDER_TYPE
                or resource.opts.ignore_changes
                or {Op.REPLACE, Op.IMPORT} & set(planned.ops)
            ):
                continue
            try:
                desired, _ = self._desired(resource, self.old.get(urn))
            except Exception:  # not plannable now: its own step says why, in the run
                continue
            problem = plan.inputs_violation(planned, desired.inputs, desired.secret_paths)
            if problem is not None:
                problems.append(f"{describe(urn)}: {problem}")
        declared = self.program.by_urn
        whole = not (self.options.targets or self.options.excludes)
        for urn, planned in plan.resources.items():
            kept = [op for op in planned.ops if op not in _PLANNED_DELETES]
            if kept and urn not in declared and (whole or urn in self.old):
                problems.append(
                    f"{describe(urn)}: the plan would {doing(kept[0])}, and the program no "
                    "longer declares it"
                )
        if whole:  # what a selection keeps is not deleted: its delete step says, if any
            for urn in self.old:
                ops = plan.resources[urn].ops if urn in plan.resources else ()
                if urn not in declared and not _PLANNED_DELETES & set(ops):
                    problems.append(
                        f"{describe(urn)}: this `up` would delete it, which the plan does not"
                    )
        if problems:
            raise StackwrightError(
                f"up refused: the program no longer matches the plan: {'; '.join(problems)}; "
                f"nothing was changed: {PREVIEW_AGAIN}"
            )

    def check_planned(self, step: Step) -> None:
        """Refuse a step the saved plan (`up --plan`) does not allow, before it changes
        anything: its resource's step fails (its dependents are not done, independent
        work goes on), as Pulumi's "resource violates plan"."""
        plan = self.options.plan
        if plan is None or self.options.dry_run:
            return
        problem = plan.violation(step)
        if problem is not None:
            raise ViolatesPlan(f"violates the plan: {problem}; {PREVIEW_AGAIN}", step)

    def _refused_before_the_run(self, resource: Resource, step: Step) -> NoReturn:
        """`up refused: …`, in the words the preview's failed step says it with."""
        said = f"{describe(resource.urn)}: {_protected_replacement(resource.urn, step)}"
        if resource.origin:  # an imported object: its file and document, as a step's
            said = f"{said} [{resource.origin}]"
        said = located(resource.declared_at, said)
        raise UsageError(f"up refused: {said}; nothing was changed")

    async def _record_component_outputs(self, resources: list[Resource]) -> None:
        """Record what each component registered with `register_outputs` as its outputs,
        once its children are done (Pulumi's RegisterResourceOutputs): resolved, with
        secret parts at its secret paths, which the state store seals as a resource's.
        A component whose outputs are not all known (a child failed) keeps its old ones."""
        changed: list[ResourceState] = []
        for resource in resources:
            record = self._components.get(resource.urn)
            if record is None or not isinstance(resource, ComponentResource):
                continue
            try:
                resolved = resolve(resource.component_outputs, self.read_live)
            except Exception as exc:  # the program's callback: a failed output, not a crash
                said = f"{describe(resource.urn)}: its registered outputs: {failure_text(exc)}"
                self.outcome.failures.append(located(callback_line(exc), said))
                continue
            outputs, secret_paths = unwrap_secrets(resolved)
            if unknown_paths(outputs):
                continue
            paths = (*self._secret_paths.get(resource.urn, ()), *secret_paths)
            recorded = replace(record, outputs=outputs, secret_paths=tuple(dict.fromkeys(paths)))
            if (recorded.outputs, set(recorded.secret_paths)) != (
                record.outputs,
                set(record.secret_paths),
            ):
                changed.append(recorded)
        await asyncio.gather(*(self.record_same(state) for state in changed))

    def _namespace_gone(self, resource: Resource, refusal: InputsRejected) -> str | None:
        """What to say of a refusal for a namespace the cluster lacks that a Namespace of
        the program names, on the resource's cluster, and that this stack made: someone
        deleted it, and the program, which declares it, is right. None for any other."""
        namespace = refusal.missing_namespace
        if namespace is None or self.program is None:
            return None
        cluster = self.clusters.cluster_of(provider_urn(resource))
        for urn in self.old.naming.get((group_kind("v1", "Namespace"), namespace), ()):
            state = self.old[urn]
            if (
                state.custom
                and is_kubernetes(state)
                and urn in self.program.by_urn
                and self.clusters.cluster_of(state.provider) == cluster
            ):
                return (
                    f"namespace {namespace} is not in the cluster, though {describe(state.urn)} "
                    "of this stack made it (deleted outside the stack?): `stackwright up "
                    "--refresh` makes it again"
                )
        return None

    def _allowed(self, graph: Graph) -> set[str] | None:
        """What the program's run may change: None for everything; else what `--target`
        names and what it depends on (and what depends on it, with `--target-dependents`),
        less what `--exclude` names (and what depends on that, with `--exclude-dependents`)."""
        options = self.options
        allowed = None
        if options.targets:
            chosen = set(options.targets)
            if options.target_dependents:  # what the program or the state says depends on them
                recorded = recorded_closure(
                    chosen,
                    list(self.old.values()),
                    upward=False,
                    cluster_of=self.clusters.cluster_of,
                )
                chosen = graph.downstream(chosen | recorded) | chosen
            allowed = graph.upstream(chosen)
        if options.excludes:
            self.excluded = (
                graph.downstream(options.excludes)
                if options.exclude_dependents
                else set(options.excludes)
            )
            allowed = (set(graph.order) if allowed is None else allowed) - self.excluded
        return allowed

    def _apply_aliases(self, resources: list[Resource]) -> None:
        by_urn = {r.urn: r for r in resources}
        for urn, (former, why) in record_moves(resources, self.old).items():
            self._move(by_urn[urn], former, why)

    def _move(self, resource: Resource, former: str, why: str) -> None:
        """Give the record of `former` the resource's URN and type: the same object, renamed."""
        old = self.old.pop(former)
        self.old[resource.urn] = replace(old, urn=resource.urn, type=resource.resource_type)
        if self.journal is not None:
            self.journal.rename(former, resource.urn)
        # A Helm release named by its resource (no `name=`) is another release under the new
        # name: the plan replaces it and says why.
        another = is_release(old) and resource.props.get("name") != old.inputs.get("name")
        outcome = "" if another else ": no replacement"
        self.emit(Diagnostic(resource.urn, f"renamed from {former} {why}{outcome}", "info"))

    def _excluded_root(self, urn: str) -> str | None:
        """The excluded resource, not created yet, that `urn` is (or was not done for)."""
        return urn if urn in self.excluded else self._behind_excluded.get(urn)

    async def _not_done(
        self, resource: Resource, old: ResourceState | None, blocked: list[str]
    ) -> None:
        """Skip a resource's step, saying why: what it needs failed or was not done (the
        first of `blocked`, sorted so that every run names the same), is excluded and not
        created yet, or the refresh could not read it (`blocked` empty)."""
        urn = resource.urn
        self.status[urn] = _SKIPPED
        step = Step(await self._skipped_op(resource, old), urn, old, old)
        if not blocked:
            # Its failure is the refresh's, said once: the step would fail the same
            # way after as many retries, or change an object whose state is unknown.
            reason = "the refresh could not read it"
        elif (root := self._excluded_root(blocked[0])) is not None:
            self._behind_excluded[urn] = root
            # One needing it in turn names the excluded one too, not a failure.
            via = "" if root == blocked[0] else f"{describe(blocked[0])}, which needs "
            reason = (
                f"it needs {via}{describe(root)}, which is excluded and not created yet: "
                "exclude this one too, or add --exclude-dependents"
            )
            self.outcome.unselected += 1  # the command's flags to fix: bad usage
        else:
            reason = f"{describe(blocked[0])} failed or was not done"
        self.skip(step, reason, f"{describe(urn)}: {reason}", blocked[0] if blocked else "")

    def skip(self, step: Step, reason: str, said: str, dependency: str = "") -> None:
        """A step not taken: said in the summary's list (`said`) and counted as `skipped`,
        its event naming the resource it waited for."""
        self.outcome.not_done.append(said)
        self.outcome.counts[SKIPPED] += 1
        self.emit(StepSkipped(step, reason, dependency))

    async def _skipped_op(self, resource: Resource, old: ResourceState | None) -> Op:
        """What a skipped resource's step would have done: a new resource's as the program
        says it (create, import, read); a recorded one's as its plan compares the program's
        inputs with its record, made without the resource it waited for (no dry run, no
        apply). Where even that cannot be made (an input only the failed one would give,
        in an `up`; its provider is what failed, whose cluster is not asked), an update: its
        diff is unknown."""
        known = _unplanned_op(resource, old)
        if known is not None or old is None:
            return known or Op.CREATE
        provider = provider_urn(resource)
        if provider and self.status.get(provider) != _DONE:
            return Op.UPDATE
        try:
            return (await self._plan_alone(resource, old)).op
        except Exception:  # not planned: said as an update, its diff unknown
            return Op.UPDATE

    async def _plan_alone(self, resource: Resource, old: ResourceState) -> Step:
        """The step planning makes of a recorded resource, its inputs against its record,
        before what only its own step adjusts (`_step_to_take`): no dry run, no apply. What
        a skipped step would have done, and a protected replacement known before the run."""
        desired, auto = self._desired(resource, old)
        kube = resource.custom and is_kubernetes(resource)
        if kube or (resource.custom and is_patch(resource)):
            desired = desired.changed(id=await self._object_id(desired))
        return as_applied(plan(self._intent(resource, desired, old, auto), old))

    def _intent(
        self,
        resource: Resource,
        desired: ResourceState,
        old: ResourceState | None,
        auto: bool,
    ) -> Intent:
        """What the program asks of one resource, as its plan compares it with `old`."""
        opts = resource.opts
        return Intent(
            desired,
            ignore_changes=tuple(opts.ignore_changes),
            replace_on_changes=tuple(opts.replace_on_changes),
            spelling=self.spelling,
            delete_before_replace=opts.delete_before_replace,
            auto_named=auto,
            force_replace=resource.urn in self.options.replace,
            # An object, a Patch or a Helm release: each is kept through another provider of
            # its cluster (applied again, upgraded), as an object is.
            same_cluster=(
                resource.custom
                and through_kubernetes(desired)
                and old is not None
                and old.provider != desired.provider
                and self._same_cluster(old.provider, desired.provider)
            ),
        )

    async def _resource(self, resource: Resource, needs: set[str], allowed: bool) -> None:
        urn = resource.urn
        try:
            # One after another, not `gather`: that wraps each wait in a task of its own (a
            # task and its callbacks per object of a 1,000-object `up`), and the resource
            # goes on only once all are set either way. In a fixed order (not the set's,
            # which string hashing changes from run to run): steps that become ready
            # together start in the same order every run.
            for need in sorted(needs):
                await self.finished[need].wait()
            blocked = [d for d in needs if self.status.get(d) != _DONE]
            old = self.old.get(urn)
            if not allowed:
                if old is not None:
                    self.live[urn] = old.outputs
                    self._secret_paths[urn] = old.secret_paths
                    self.status[urn] = _DONE
                else:
                    self.status[urn] = _SKIPPED
                return
            if blocked or urn in self.refreshes.unread:
                await self._not_done(resource, old, sorted(blocked))
                return
            await self._handle(resource, old)
        except Exception as exc:  # one resource's failure is a failed step, never the run's
            self.status[urn] = _FAILED
            error = failure_text(exc)
            rejected = isinstance(exc, (InputsRejected, ProtectedReplacement))
            gone = self._namespace_gone(resource, exc) if isinstance(exc, InputsRejected) else None
            if gone is not None:  # drift, not the program's to fix
                error, rejected = gone, False
            if resource.origin:  # an imported object: say which file and document to fix
                error = f"{error} [{resource.origin}]"
            # Provider errors often start with the object's name ("web: 0/3 ready"), which
            # `describe` has just said when it is the resource's: say it once.
            said = f"{describe(urn)}: {error.removeprefix(f'{resource.resource_name}: ')}"
            if rejected and urn not in self._deleted_first:
                self.outcome.rejected += 1  # and nothing changed for it
            # The program's to fix: where, as its other errors say it (a declaration's line,
            # or the line its callback raised on).
            declared = rejected or isinstance(exc, DeclarationRefused)
            where = resource.declared_at if declared else callback_line(exc)
            if where is not None:
                said = located(where, said)
                # The step's own event and line say it as the summary does: a CI reading
                # only the step's event learns where to fix it.
                error = said
            at_line = where is not None
            self.outcome.failures.append(said)
            begun = self._begun.get(urn)
            if begun is None and isinstance(exc, ProtectedReplacement | ViolatesPlan):
                begun = (exc.step, self.clock())  # refused as it would begin: its line shows it
                self.emit(StepStarted(exc.step))
            if begun is not None:
                step, began = begun
                self.emit(StepDone(step, False, self.clock() - began, error, at_line))
                return
            # It failed before its step began (its inputs, its provider, the cluster).
            old = self.old.get(urn)
            known = _unplanned_op(resource, old)
            if known is None:
                # Recorded, its diff never made: not an update, nor anything else yet (as
                # Pulumi shows a resource whose diff failed: no operation, the error).
                self.emit(Diagnostic(urn, error, "error"))
                return
            step = Step(known, urn, old, None)
            self.emit(StepStarted(step))
            self.emit(StepDone(step, False, 0.0, error, at_line))
        finally:
            self.status.setdefault(urn, _DONE)
            self.finished[urn].set()

    def read_plain(self) -> SecretTexts:
        """The secret configuration values the program read through a plain getter, worked
        out again only when it read another (an apply callback may, after the program ran)."""
        texts = self.program.read_plain if self.program is not None else set()
        if len(texts) != self._read_plain[0]:  # the set only grows
            # As a refresh searches: a short one would seal every "1" or "on" of the stack.
            found = SecretTexts.of(t for t in texts if len(t) >= MIN_SECRET_PART)
            self._read_plain = (len(texts), found)
        return self._read_plain[1]

    def _desired(self, resource: Resource, old: ResourceState | None) -> tuple[ResourceState, bool]:
        """The resource's desired state (inputs resolved, auto-named) and whether it was auto-named."""
        resolved = resolve(resource.props, self.read_live)
        if self.options.dry_run and not resource.input_marks.plain:
            resolved = planned_unknown(resolved)  # what the cluster adds to it comes too
        inputs, given = unwrapped(resource, resolved)
        remember_secret_fields(inputs, resource.opts)  # values Outputs only now gave them
        secret_paths = secret_paths_of(resource, inputs, given)
        rendered = self.rendering.get(provider_urn(resource)) if resource.custom else None
        if rendered is not None:  # a secret known only now (read from another resource)
            secret = rendered_secret(resource, resolved)
            if secret is not None:  # the step's failure leads with its line and name
                provider = urn_name(provider_urn(resource))
                raise DeclarationRefused(rendering_refusal(secret, provider, rendered))
        # Only an Output gives what is not known yet: most objects hold none.
        unknown = [] if resource.input_marks.plain else unknown_paths(inputs)
        if unknown and not self.options.dry_run:
            why = unknown_because_rendered(resource.props, self.rendering)
            raise DeclarationRefused(  # the program's to fix: at the resource's line
                f"input {unknown[0]} is not known: {why}"
                if why
                else f"input {unknown[0]} is not known even after its dependencies were "
                "applied: an Output it reads names a field the live object does not have"
            )
        auto = False
        propagation = None
        if resource.custom and is_patch(resource):
            plain_only = secret_in_plain_field(given, inputs)
            if plain_only is not None:  # a secret known only now: refused at its line
                raise DeclarationRefused(plain_only)
            inputs = _with_field_manager(inputs, patch_field_manager(resource.urn, inputs, old))
        elif resource.custom and is_kubernetes(resource):
            propagation = _declared_propagation(inputs)
            plain_only = secret_in_plain_field(given, inputs)
            if plain_only is not None:  # a secret known only now: refused at its line
                raise DeclarationRefused(plain_only)
            released = self.released_names.get(resource.urn, ())
            meta, auto = named_metadata(resource, metadata_of(inputs), old, released)
            inputs = {**inputs, "metadata": meta}
        secret_paths += secrets_held(inputs, self.read_plain(), secret_paths)
        opts = resource.opts
        state = ResourceState(
            urn=resource.urn,
            type=resource.resource_type,
            inputs=inputs,
            parent=opts.parent.urn if opts.parent is not None else "",
            dependencies=tuple(sorted(self._declared(resource))),
            provider=provider_urn(resource),
            custom=resource.custom,
            protect=bool(opts.protect),  # merged: its own or its parent's
            retain_on_delete=opts.retain_on_delete,
            deleted_with=opts.deleted_with.urn if opts.deleted_with is not None else "",
            secret_paths=tuple(secret_paths),
            ignore_changes=tuple(opts.ignore_changes),
            delete_timeout=_delete_seconds(opts.custom_timeouts),
            deletion_propagation=propagation,
        )
        return state, auto

    async def _handle(self, resource: Resource, old: ResourceState | None) -> None:
        urn = resource.urn
        if resource.is_read:
            await self._read(resource, old)
            return
        if old is not None and old.external:
            # Only read until now: managing it starts as a create (which refuses an object
            # that is not the stack's, unless the program imports it), as in Pulumi.
            old = None
        if resource.origin:
            self.adoption.from_manifests.add(urn)
        desired, auto = self._desired(resource, old)
        generated = GENERATORS[desired.type][1] if is_generated(desired.type) else ()
        self._secret_paths[urn] = (*desired.secret_paths, *generated)
        kube = resource.custom and is_kubernetes(resource)
        release = resource.custom and is_release(resource.resource_type)
        patch = resource.custom and is_patch(resource)
        if kube or patch:
            desired = desired.changed(id=await self._object_id(desired))
            if resource.opts.import_:
                self.adoption.check_import_id(resource, desired, old)
        elif release:
            provider = self.provider_for(desired.provider)
            namespace = desired.inputs.get("namespace") or provider.default_namespace
            desired = replace(desired, id=f"{namespace}/{desired.inputs.get('name')}")
        intent = self._intent(resource, desired, old, auto)
        step, force = await self._step_to_take(
            resource, as_applied(plan(intent, old)), old, desired, auto, kube
        )
        if patch and step.op is Op.REPLACE:
            # Another object (or kind): the old Patch gives its fields up first, so that its
            # manager's fields are never the new object's and the old one's at once.
            step = replace(step, delete_before_replace=True)
        if patch and step.op is Op.SAME and old is not None and old.init_errors:
            step = await self._applied_again(step, old)
        elif patch and step.op is Op.SAME and (anew := self._object_made_anew(desired, old)):
            self.emit(Diagnostic(urn, anew, "info"))
            step = replace(step, op=Op.UPDATE)
        self.check_planned(step)  # final now: its operation and what it sends
        # Its object is its alone: a create or a replacement onto the one another resource
        # makes or keeps would apply over that one's fields.
        claimed = step.new if kube and step.new is not None and self._placed(step.new) else None
        if step.op is Op.SAME:
            assert old is not None
            if claimed is not None:
                self._claim(claimed, step.op)
            recorded = self._state_only_change(step, old)
            if recorded is not None and not self.options.dry_run:
                await self.record_same(recorded)
            self._kept(resource, old, recorded, kube, release)
            self.emit(StepStarted(step))
            return
        started = self.clock()
        self._begun[urn] = (step, started)
        self.emit(StepStarted(step))
        if claimed is not None:
            self._claim(claimed, step.op)
        note = _hook_note(step.new.inputs if step.new is not None else {})
        if note:
            self.emit(Diagnostic(urn, note, "info"))
        if self.options.dry_run:
            if step.op is Op.REPLACE and step.old is not None:
                old_as_said = _as_program_says(step.old, step.new) if step.new else step.old
                await self.deletes.preview_replaced(
                    old_as_said, kube and step.delete_before_replace
                )
            await self.previews.preview(step, kube, force)
            if (kube or release) and step.new is not None:
                self._hold(step.new, urn)  # as `up` will: a delete of its object keeps it
        elif release:
            await self._execute_release(step, resource.opts.custom_timeouts)
            assert step.new is not None
            self._hold(step.new, urn)
        elif not (kube or patch):
            self._record_only(step)
        else:
            await self._execute(step, force, resource.opts.custom_timeouts)
            assert step.new is not None
            if kube:
                self._hold(step.new, urn)
        self.status[urn] = _DONE
        self.outcome.counts[step.op.value] += 1
        self.emit(StepDone(step, True, self.clock() - started))

    async def _step_to_take(
        self,
        resource: Resource,
        step: Step,
        old: ResourceState | None,
        desired: ResourceState,
        auto: bool,
        kube: bool,
    ) -> tuple[Step, bool]:
        """The planned step as this run takes it, and whether it forces the fields it applies.
        Planning compares inputs alone; what only the run knows adjusts the step here, or
        refuses it: where the object is now and under which name, an import, protection,
        drift, its marks, whether it was ready last time, the cluster its provider reaches."""
        urn, opts = resource.urn, resource.opts
        # A Patch too: it changes the object its provider's new namespace holds, and gives
        # its fields up on the one it changed before (its replacement deletes first).
        moves = kube or (resource.custom and is_patch(resource))
        if moves and old is not None and step.op in (Op.SAME, Op.UPDATE):
            step = self._moved(step, old)
        if kube and old is not None and step.op is Op.UPDATE:
            step = await self._removed_by_its_ttl(step, old)
        if step.op is Op.REPLACE and not opts.delete_before_replace:
            step = await self._created_first(step, resource, auto, kube)
        if old is None and opts.import_ and kube:
            step = replace(step, op=Op.IMPORT)
        if (
            step.op is Op.REPLACE
            and old is not None
            and old.protect
            and not await self._protected_job_gone(old, desired.provider)
        ):
            raise _protected_replacement(urn, step)
        force = self.options.force or bool(opts.force)
        if step.op is Op.SAME or step.op is Op.UPDATE:
            taking_back = self._taking_back_drift(step, old, opts.ignore_changes, kube)
            if taking_back is not None:
                # Putting the cluster back means taking the drifted fields back.
                step, force = taking_back, True
        if step.op is Op.UPDATE and not step.changes and old is not None and step.new is not None:
            notes = option_changes(old, step.new, self.spelling)
            if notes:
                self.emit(Diagnostic(urn, f"only its options change: {'; '.join(notes)}", "info"))
        if step.op is Op.UPDATE and old is not None and is_patch(desired):
            notes = patch_instruction_notes(old, desired)
            if notes:
                self.emit(Diagnostic(urn, "; ".join(notes), "info"))
        if step.op is Op.SAME and kube and old is not None:
            step = await self._applied_again(step, old)
        # Last: an update made of a same step above (drift taken back, marks) sends its
        # ignored fields as the object has them too.
        if (
            (step.op is Op.IMPORT or (step.op is Op.UPDATE and opts.ignore_changes))
            and (kube or is_patch(desired))  # a Patch's ignored fields: as the object has them
            and desired.provider not in self.unknown_providers
        ):
            step = await self._from_live(step, tuple(opts.ignore_changes))
        if resource.resource_type == PROVIDER_TYPE:
            if self.options.dry_run and unknown_paths(desired.inputs):
                self.unknown_providers.add(urn)
            else:
                step = await self.provider_moves.provider_step(step, old)
        if (
            kube
            and old is not None
            and desired.provider in self.former_providers
            and step.op in (Op.SAME, Op.UPDATE)
        ):
            # Its provider reaches another cluster now: as in Pulumi, the object is replaced
            # there, and deleted first through the provider's former settings.
            step = replace(
                step,
                op=Op.REPLACE,
                replace_reasons=(*step.replace_reasons, "its provider names another cluster"),
                delete_before_replace=True,
            )
        if kube:
            self._warn_of_stale_environment(step)
        return step, force

    async def _created_first(self, step: Step, resource: Resource, auto: bool, kube: bool) -> Step:
        """A replacement whose new object can be created before the old one is deleted:
        one under another name already, or one Stackwright named (it gets a fresh name)."""
        if step.new and step.old and step.new.id != step.old.id:
            step = replace(step, delete_before_replace=False)
        if not auto:
            return step
        assert step.new is not None
        was = metadata_of(step.new.inputs).get("name", "")
        released = self.released_names.get(resource.urn, ())
        now = auto_name(resource.resource_name, resource.urn, was, released)
        renamed = {
            **step.new.inputs,
            "metadata": {**metadata_of(step.new.inputs), "name": now},
        }
        new = replace(step.new, inputs=renamed)
        if kube:
            new = replace(new, id=await self._object_id(new))
        # The new name is part of what changes (and known already: a preview shows it).
        named = FieldChange("metadata.name", was, now, ("metadata", "name"))
        changes = (named, *(c for c in step.changes if c.path != "metadata.name"))
        return replace(step, new=new, changes=changes, delete_before_replace=False)

    def _taking_back_drift(
        self, step: Step, old: ResourceState | None, ignore: Sequence[str], kube: bool
    ) -> Step | None:
        """The same or update step made to take back what drifted in the cluster (found by
        this run's refresh, or recorded by an earlier one), or None when nothing did."""
        drifted = [
            f
            for f in self.outcome.drift.get(step.urn, ())
            # A delete under way is nothing an apply takes back: the object goes once its
            # finalizers let it, and the next `up --refresh` makes it again.
            if not within(f.path, ignore) and f.path != drift_rules.BEING_DELETED
        ]
        if not drifted and old is not None and (kube or is_patch(old)) and old.outputs:
            # A refresh may have recorded a live object that drifted from what was applied.
            drifted = drift_rules.drifted(applied_fields(old), old.outputs, ignore=tuple(ignore))
        if not drifted:
            return None
        if step.op is Op.SAME:
            return replace(step, op=Op.UPDATE, changes=tuple(_taking_back(f) for f in drifted))
        # The update sends the drifted fields too: it takes them back in the same way.
        changed = {change.path for change in step.changes}
        taken = [_taking_back(f) for f in drifted if f.path not in changed]
        return replace(step, changes=(*step.changes, *taken))

    async def _applied_again(self, step: Step, old: ResourceState) -> Step:
        """A same step that applies its object after all, saying why: the object's marks are
        not this resource's, or it was not ready after the last update."""
        urn = step.urn
        if not is_patch(old) and self._marked_elsewhere(old):  # a Patch marks nothing
            if await self._gone_by_its_ttl(old, old.provider):
                return await self._marked_in_the_record(step, old)
            # Renamed (an alias), moved between stacks or its stack renamed: the object still
            # carries the old marks, which would let another stack claim it.
            why = "carries an older URN or stack" if mark_of(old.outputs) else "lost its marks"
            self.emit(Diagnostic(urn, f"its object {why}: marking it", "info"))
            return replace(step, op=Op.UPDATE)
        taker = None if is_patch(old) else await self._taken_by(old)
        if taker is not None:
            self.emit(
                Diagnostic(
                    urn,
                    f"its object carries the fields and marks of {describe(taker)}, which a run "
                    "cut short gave it to: applying it again",
                    "info",
                )
            )
            return replace(step, op=Op.UPDATE)
        dry_run = self.options.dry_run  # a preview applies and waits for nothing
        if adoption_cut_short(old):
            again = "`up` applies it again" if dry_run else "applying it again"
            self.emit(Diagnostic(urn, f"{ADOPTION_INTERRUPTED}: {again}", "info"))
            return replace(step, op=Op.UPDATE)
        if old.init_errors:
            # It never became ready last time: apply it again and wait (as Pulumi retries
            # a resource with initialization errors).
            again = "`up` waits for it again" if dry_run else "waiting again"
            self.emit(
                Diagnostic(
                    urn,
                    f"was not ready after the last update ({old.init_errors[0]}); {again}",
                    "info",
                )
            )
            return replace(step, op=Op.UPDATE)
        return step

    async def _taken_by(self, old: ResourceState) -> str | None:
        """The resource of this stack that took the object `old` records (another record of
        it, the same uid) when a run passing it on from one resource to another was cut
        short before the giver's record went: the object carries the taker's marks and
        fields, and a program back to the giver found its record the same. Read only when
        another record names the object, to tell which one's it is now."""
        uid = uid_of(old.outputs)
        if not uid:
            return None
        others = {
            urn
            for urn in self.old.naming.get(object_key(old)[1:], ())
            if urn != old.urn
            and not is_patch(self.old[urn])
            and uid_of(self.old[urn].outputs) == uid
        }
        if not others:
            return None
        live = await self.read_object(self.provider_for(old.provider), old)
        if live is None or uid_of(live) != uid or mark_of(live) not in others:
            return None
        return mark_of(live)

    def _state_only_change(self, step: Step, old: ResourceState) -> ResourceState | None:
        """What a same step changes in the state alone, said (new dependencies or options,
        the same object: no API call, and a later destroy orders by the new dependencies);
        None when nothing."""
        recorded = recorded_options(step)
        if recorded is not None:
            recording = "; ".join(option_changes(old, recorded, self.spelling))
            self.emit(
                Diagnostic(
                    step.urn,
                    f"no change to its object; recorded in the state only: {recording}",
                    "info",
                )
            )
        return recorded

    def _kept(
        self,
        resource: Resource,
        old: ResourceState,
        recorded: ResourceState | None,
        kube: bool,
        release: bool,
    ) -> None:
        """A resource whose object stays as it is: dependents read what its record says of
        the live object (its inputs when none was recorded), and the run holds the object."""
        urn = resource.urn
        if not resource.custom:
            self._components[urn] = recorded or old
        self.live[urn] = old.outputs if old.outputs or not kube else old.inputs
        if kube or release:
            self._hold(old, urn)
        self.outcome.counts["same"] += 1
        self.status[urn] = _DONE

    def _moved(self, step: Step, old: ResourceState) -> Step:
        """An object that names no namespace of its own is in its provider's: that provider's
        namespace changed, it is another object (as in Pulumi: created there, the old one
        deleted), else the state would keep the former id and leave the object behind (a
        Patch's: the object there never patched, the former one keeping its fields)."""
        assert step.new is not None
        if not old.id or step.new.id == old.id or old.provider in self.unknown_providers:
            return step
        # The namespaces alone: an auto-named object's replacement gets a new name too.
        former, now = old.id.partition("/")[0], step.new.id.partition("/")[0]
        reason = f"its provider's namespace changed ({former} → {now})"
        return replace(step, op=Op.REPLACE, replace_reasons=(*step.replace_reasons, reason))

    async def _removed_by_its_ttl(self, step: Step, old: ResourceState) -> Step:
        """An update of a Job that finished and that its `ttlSecondsAfterFinished` deleted
        (kept as done by a refresh): the apply would create a new Job, which runs again, so
        it is a replacement, said as one. A Job still there is updated in place."""
        new = step.new
        assert new is not None
        if not await self._gone_by_its_ttl(old, new.provider):
            return step
        reason = "the Job finished and its ttlSecondsAfterFinished deleted it: a new one runs again"
        return replace(
            step,
            op=Op.REPLACE,
            replace_reasons=(*step.replace_reasons, reason),
            delete_before_replace=True,
        )

    async def _gone_by_its_ttl(self, old: ResourceState, provider: str) -> bool:
        """Whether `old` records a Job that finished and that its `ttlSecondsAfterFinished`
        deleted (one read, only for such a record; False when its provider is not known yet)."""
        if not drift_rules.removed_by_its_ttl(old.outputs) or provider in self.unknown_providers:
            return False
        api_version, kind, namespace, name = object_ref(old)
        async with self.sem:
            live = await self.provider_for(provider).read(api_version, kind, namespace, name)
        return live is None

    async def _protected_job_gone(self, old: ResourceState, provider: str) -> bool:
        """A protected Job its TTL deleted is replaced all the same: `protect` refuses a
        delete, and there is none, only the new Job to create (which runs). Asked once a
        run (`_refuse_protected_replacements` asks before the resource's step does)."""
        known = self._jobs_gone.get(old.urn)
        if known is not None:
            return known
        gone = self._jobs_gone[old.urn] = await self._gone_by_its_ttl(old, provider)
        if not gone:
            return False
        self.emit(
            Diagnostic(
                old.urn,
                "protected, but its ttlSecondsAfterFinished deleted the finished Job already: "
                "nothing is deleted, the new Job is created",
                "info",
            )
        )
        return True

    async def _marked_in_the_record(self, step: Step, old: ResourceState) -> Step:
        """A same step of a Job its TTL deleted whose record carries an older URN or stack
        (renamed, moved): no object to mark (an apply would create the Job again, and run
        it), so the record alone takes this resource's marks, and the step stays the same."""
        meta = metadata_of(old.outputs)
        annotations = {
            **(meta.get("annotations") or {}),
            URN_ANNOTATION: old.urn,
            STACK_ANNOTATION: self.stack,
        }
        outputs = {**old.outputs, "metadata": {**meta, "annotations": annotations}}
        self.emit(
            Diagnostic(
                step.urn,
                "its Job finished and its ttlSecondsAfterFinished deleted it: nothing to mark",
                "info",
            )
        )
        if not self.options.dry_run:
            await self.record_same(replace(old, outputs=outputs))
        return step

    def _marked_elsewhere(self, old: ResourceState) -> bool:
        """Whether the recorded live object names another URN or stack than this one, or
        none: its marks were removed by hand (a refresh recorded it so), and it would pass
        for no stack's object, free for another to adopt."""
        if not metadata_of(old.outputs):
            return False  # no live object recorded
        urn = mark_of(old.outputs)
        stack = (metadata_of(old.outputs).get("annotations") or {}).get(STACK_ANNOTATION)
        return urn != old.urn or stack != self.stack

    async def _object_id(self, state: ResourceState) -> str:
        meta = metadata_of(state.inputs)
        name = str(meta.get("name", ""))
        refused = name_refusal(name)  # a name only known now: the checks before the run saw none
        if refused is not None:
            raise UsageError(refused)
        if state.provider in self.unknown_providers:
            return f"{meta['namespace']}/{name}" if meta.get("namespace") else name
        provider = self.provider_for(state.provider)
        scope = self.previewed_kinds.get(group_and_kind(state.inputs))
        if scope is not None:
            namespaced = scope  # a kind whose CRD this preview would create
        else:
            api_version, kind = str(state.inputs.get("apiVersion")), str(state.inputs.get("kind"))
            try:
                namespaced = await provider.namespaced(api_version, kind)
            except UsageError as exc:
                if state.provider not in self.rendering:
                    raise
                # A kind a rendering provider cannot place (no CRD rendered with it, no
                # cluster asked): written as the program gives it, as Pulumi does.
                namespaced = bool(meta.get("namespace"))
                if (api_version, kind) not in self._unplaced:
                    self._unplaced.add((api_version, kind))
                    self.emit(Diagnostic(state.urn, unplaced(str(exc)), "warning"))
        if not namespaced:
            return name
        return f"{meta.get('namespace') or provider.default_namespace}/{name}"

    # --- reads ------------------------------------------------------------------------

    async def _read(self, resource: Resource, old: ResourceState | None) -> None:
        """A resource declared with `id=` (Pulumi's `get`): GET its object through its
        provider, in a preview too; its outputs are the live object. Nothing is written to
        the cluster: no apply, no marks, no ApplySet membership, and the state records it
        as external, so that dropping it only forgets it."""
        urn = resource.urn
        api_version = str(resource.props.get("apiVersion", ""))
        kind = str(resource.props.get("kind", ""))
        given = str(resource.opts.id)
        namespace, _, name = given.rpartition("/")
        provider_ref = provider_urn(resource)
        ahead = provider_ref in self.unknown_providers or (
            self.options.dry_run
            and (
                namespace in self.previewed_namespaces
                or (api_version.rpartition("/")[0], kind) in self.previewed_kinds
            )
        )  # a preview cannot read what its provider, namespace or kind only come to be
        opts = resource.opts
        new = ResourceState(
            urn=urn,
            type=resource.resource_type,
            id=given,
            parent=opts.parent.urn if opts.parent is not None else "",
            dependencies=tuple(sorted(self._declared(resource))),
            provider=provider_ref,
            secret_paths=(*always_secret(resource.props), *opts.additional_secret_outputs),
            external=True,
        )
        step = Step(Op.READ, urn, old, new)
        started = self.clock()
        self._begun[urn] = (step, started)  # a failure from here on ends this step
        self.emit(StepStarted(step))
        self.check_planned(step)
        if old is not None and not old.external:
            raise UsageError(
                f"this stack manages it, so it cannot become a read of {given}: give the "
                "read another name (the managed object is then deleted "
                f"unless {self.spelling.name('retain_on_delete')}), or run `stackwright state delete '{urn}'` first "
                "to stop managing it and keep the object"
            )
        object_id = given
        if not ahead:
            provider = self.provider_for(provider_ref)
            namespaced = await provider.namespaced(api_version, kind)
            if not namespaced and namespace:
                raise UsageError(
                    f"{kind} is cluster-scoped: read it with {self.spelling.read(name)}, not "
                    f"{self.spelling.value(given)}"
                )
            if namespaced and not namespace:
                namespace = provider.default_namespace
            object_id = f"{namespace}/{name}" if namespace else name
        metadata = {"name": name, **({"namespace": namespace} if namespace else {})}
        identity = {"apiVersion": api_version, "kind": kind, "metadata": metadata}
        new = replace(new, id=object_id, inputs=identity)
        step = replace(step, new=new)
        self._begun[urn] = (step, started)
        self._secret_paths[urn] = new.secret_paths
        if ahead:
            self.live[urn] = Partial({**new.inputs, "metadata": Partial(metadata)})
        else:
            async with self.sem:
                live = await provider.read(api_version, kind, namespace or None, name)
            if live is None:
                manage = (
                    "put `properties:` in place of `get:`"
                    if self.spelling.yaml
                    else "declare it with its fields in place of `.get(…)` / id="
                )
                raise UsageError(
                    f"{kind} {object_id} does not exist: a read ({self.spelling.read(given)}) only "
                    f"reads an existing object; create it first, or {manage} to have this stack "
                    "manage it"
                )
            recorded = with_outputs(new, live)
            self._secret_paths[urn] = recorded.secret_paths
            self.live[urn] = recorded.outputs
            if not self.options.dry_run and recorded != old:
                # Recorded for outputs and `stack`; no write-ahead needed (nothing is sent),
                # and an object read as it was recorded journals nothing.
                assert self.commits is not None
                number = self.next_step()
                await self.commits.begin(number, Op.READ, recorded)
                await self.commits.end(number, recorded)
        self.status[urn] = _DONE
        self.outcome.counts[Op.READ.value] += 1
        self.emit(StepDone(step, True, self.clock() - started))

    # --- up -----------------------------------------------------------------------------

    def _record_only(self, step: Step) -> None:
        """Components and provider resources: nothing in a cluster, only the state."""
        new = step.new
        assert new is not None
        number = self.next_step()
        assert self.journal is not None
        if is_generated(new.type):
            generate, secret = GENERATORS[new.type]
            # New inputs (or `--replace`), a new value; an option-only update keeps the old one.
            kept = (
                step.old.outputs
                if step.old is not None and not step.changes and step.op is not Op.REPLACE
                else None
            )
            new = replace(
                new,
                outputs=kept or generate(new.inputs),
                secret_paths=tuple(dict.fromkeys((*new.secret_paths, *secret))),
            )
        self.journal.begin(number, step.op if step.op is not Op.REPLACE else Op.UPDATE, new)
        self.journal.end(number, new)
        if not new.custom:
            self._components[step.urn] = new
        self.live[step.urn] = new.outputs if is_generated(new.type) else new.inputs

    async def record_same(self, recorded: ResourceState) -> None:
        """Journal a same step's new options: its record rewritten, nothing sent anywhere."""
        assert self.commits is not None
        number = self.next_step()
        await self.commits.begin(number, Op.SAME, recorded)
        await self.commits.end(number, recorded)

    async def _execute(self, step: Step, force: bool, timeouts: Any) -> None:
        new = step.new
        assert new is not None and self.journal is not None
        provider = self.provider_for(new.provider)
        timeout = _wait_seconds(step.op, timeouts)
        if step.op is Op.IMPORT:
            await self.adoption.check_importable(provider, new)
        target = None
        if is_patch(new):  # every apply of one: an apply alone would create it. Read before
            # a renamed Patch gives its fields up on its former object: a missing one is
            # refused with nothing changed.
            target = await self.patches.check_target(provider, new)
        referring: dict[str, ResourceState] = {}  # what referred to a resource deleted first
        left: dict[str, Any] | None = None  # another object the delete first left in place
        if step.op is Op.REPLACE and step.delete_before_replace:
            assert step.old is not None
            self.deletes.refuse_deleting_protected_within(step.old)
            if not is_patch(new) and new.provider not in self.rendering:
                await self.previews.check_replacement(provider, step)
            await self.deletes.delete_dropped_dependents(step.old)
            # Its record goes with its object; what still refers to it stops doing so first,
            # so that a replacement the server refuses leaves a state that loads.
            referring = self.refreshes.forget_gone({step.old.urn: step.old}, record=True)
            old = _as_program_says(step.old, new)

            async def when_gone() -> None:  # the objects in it went too: created anew
                self.deletes.forget_held(old, "replaced (deleted first)")

            left = await self.deletes.delete_object(
                old, Op.DELETE_REPLACED, when_gone=when_gone, reusing_name=True
            )
            self._deleted_first.add(step.urn)
            journal_op = Op.CREATE
        elif step.op is Op.REPLACE:
            journal_op = Op.CREATE_REPLACEMENT
            assert step.old is not None
            step = replace(step, old=await self._replaced_later(step.old, new))
        else:
            journal_op = step.op
        if (step.op is Op.CREATE or left is not None) and not is_patch(new):
            await self.adoption.check_free(provider, new)
        # The provider names the object in its status lines; the display names the resource.
        prefix = f"{metadata_of(new.inputs).get('name')}: "
        number = self.next_step()
        assert self.commits is not None
        await self.commits.begin(number, journal_op, new)
        # An import, or the apply that finishes one a crash cut short.
        adopting = step.op is Op.IMPORT or (step.old is not None and adoption_cut_short(step.old))
        try:
            live = await self._apply(provider, new, force, target, adopting=adopting)
            if step.op is Op.UPDATE and step.old is not None and _manager_changed(step.old, new):
                # The fields the former manager owns would be held for good: given up now
                # that the new one owns them too, within the step (a crash re-runs both).
                await self.deletes.relinquish(step.old)
        except BaseException as exc:
            self.failed_write(number, exc)
            raise
        try:
            ready = provider.await_ready(
                live,
                timeout=timeout,
                on_status=lambda message: self.emit(
                    StepProgress(step.urn, message.removeprefix(prefix))
                ),
                fed_later=self._fed_later.get(step.urn, ""),
            )
            feeders = self._feeders.get(step.urn)
            live = await (self._while_fed(ready, feeders) if feeders else ready)
        except BaseException as exc:
            # The object exists: the state must know it even though it never became ready,
            # and the next `up` must wait for it again.
            failed = replace(with_outputs(new, live), init_errors=(failure_text(exc),))
            self.journal.end(number, failed)
            self.commits.abandon()
            self.live[step.urn] = failed.outputs
            raise
        recorded = with_outputs(new, live)
        await self.commits.end(number, recorded)
        self.live[step.urn] = recorded.outputs
        self.refreshes.refer_again(referring)
        if new.inputs.get("kind") == "Namespace" and step.op is Op.CREATE and is_kubernetes(new):
            self.adoption.new_namespaces.add((new.provider, new.id))
        if step.op is Op.REPLACE and not step.delete_before_replace:
            assert step.old is not None
            self.replaced.append(replace(step.old, delete_pending=True))

    async def _while_fed(
        self, ready: Awaitable[dict[str, Any]], feeders: tuple[str, ...]
    ) -> dict[str, Any]:
        """A Service's wait for its endpoints, ended once every workload of the program whose
        Pods it selects failed or was not done and no endpoint came within the grace: it
        would otherwise wait out its whole timeout (ten minutes) for Pods no one makes."""
        waiting = asyncio.ensure_future(ready)

        async def unfed() -> bool:
            for feeder in feeders:
                await self.finished[feeder].wait()
            return all(self.status.get(feeder) != _DONE for feeder in feeders)

        given_up = asyncio.ensure_future(unfed())
        try:
            await asyncio.wait({waiting, given_up}, return_when=asyncio.FIRST_COMPLETED)
            if not waiting.done() and given_up.result():
                await asyncio.wait({waiting}, timeout=UNFED_GRACE_SECONDS)
                if not waiting.done():
                    makers = ", ".join(describe(feeder) for feeder in feeders)
                    raise StackwrightError(
                        f"no ready endpoints, and none are coming: the Pods it selects would "
                        f"come from {makers}, which failed or was not done"
                    )
            return await waiting
        finally:
            given_up.cancel()
            waiting.cancel()

    async def _replaced_later(self, old: ResourceState, new: ResourceState) -> ResourceState:
        """`old`, whose object is deleted after its replacement `new` is made, with the delete
        timeout and propagation the program says now. Its record says so too, before the
        replacement demotes it: a delete this run does not get to (another step failed, a
        crash) waits as long, and leaves or takes what the object owns as the program said."""
        doomed = _as_program_says(old, new)
        if doomed == old:
            return old
        await self.record_same(doomed)
        return doomed

    def failed_write(self, number: int, exc: BaseException) -> None:
        assert self.journal is not None and self.commits is not None
        self.commits.abandon()  # its end is never written through the batch
        if refused(exc):
            self.journal.fail_step(number)

    def line_of(self, urn: str) -> str:
        """` (app.py:5)`: where the program declared another resource a refusal names beside
        the refused one (whose own line leads its failure); empty when it declares none."""
        declared = self.program.by_urn.get(urn) if self.program is not None else None
        return f" ({declared.declared_at})" if declared is not None else ""

    @property
    def spelling(self) -> Spelling:
        """How the program's language spells options, for the messages that name one."""
        return spelling_of(self.program.runtime if self.program is not None else None)

    async def _from_live(self, step: Step, ignore: tuple[str, ...]) -> Step:
        """An import or update sends its `ignore_changes` fields as the object has them:
        another manager may own them now (an HPA's replicas, `kubectl scale`), and sending
        the program's or the recorded value would conflict with it or undo its change. An
        import_ takes them from the object it adopts, as Pulumi's does.

        An import's changes are what it changes in the object it adopts: the program's
        fields whose live values differ (none when the program declares the object as it
        is), not every field as an addition, which would hide the one that changes."""
        new = step.new
        assert new is not None
        live = await self.read_object(self.provider_for(new.provider), new)
        if live is None:
            return step  # not there: the import says so; an update makes it again
        inputs = with_ignored(new.inputs, live, ignore)
        changes = step.changes
        if step.op is Op.IMPORT:
            changes = tuple(_taking_back(f) for f in drift_rules.drifted(inputs, live))
        return replace(step, new=replace(new, inputs=inputs), changes=changes)

    async def _execute_release(self, step: Step, timeouts: CustomTimeouts | None) -> None:
        """Install or upgrade a Helm release through Helm, journaled like an object's apply,
        waiting as long as `custom_timeouts.create` / `.update` say (else the release's own
        `timeout`)."""
        new = step.new
        assert new is not None and self.journal is not None and self.commits is not None
        provider = self.provider_for(new.provider)
        old = step.old
        moved = old is not None and old.id != new.id  # another name or namespace
        if step.op is Op.REPLACE and old is not None and not moved:
            # As long as the program says now, as an object's replacement.
            await self.deletes.delete_object(
                replace(old, delete_timeout=new.delete_timeout), Op.DELETE_REPLACED
            )
            journal_op = Op.CREATE
        elif step.op is Op.REPLACE or moved:
            journal_op = Op.CREATE_REPLACEMENT
            if old is not None:
                old = await self._replaced_later(old, new)
        else:
            journal_op = step.op
        number = self.next_step()
        await self.commits.begin(number, journal_op, new)
        try:
            async with self.sem:
                live = await provider.release_apply(
                    release_spec(new), timeout=_wait_seconds(step.op, timeouts)
                )
        except BaseException as exc:
            self.failed_write(number, exc)
            raise
        await self.commits.end(number, with_outputs(new, live))
        self.live[step.urn] = live
        if journal_op is Op.CREATE_REPLACEMENT and old is not None:
            self.replaced.append(replace(old, delete_pending=True))

    async def read_object(self, provider: Provider, state: ResourceState) -> dict[str, Any] | None:
        """The live object a state names (None: there is none), read within the run's bound."""
        async with self.sem:
            return await provider.read(*object_ref(state))

    async def _apply(
        self,
        provider: Provider,
        state: ResourceState,
        force: bool,
        target: dict[str, Any] | None = None,
        *,
        adopting: bool = False,
    ) -> dict[str, Any]:
        """`state`'s object applied; a Patch's to `target`, its object as just read.
        `adopting`: the stack adopts the object (`Provider.apply`)."""
        if is_patch(state):  # no marks, no ApplySet: the object is not the stack's
            live = await self.patches.patched(provider, provider.apply, state, read=target)
            assert live is not None  # refused when not there
            return live
        namespace = state.id.rpartition("/")[0] or None
        if namespace is not None:
            await self.ensure_applyset(provider, state.provider, namespace)
        body = provider.stamp(state.inputs, stack=self.stack, urn=state.urn, namespace=namespace)
        async with self.sem:
            return await provider.apply(
                body, force=force, warn=self.warner(state.urn), adopting=adopting
            )

    def warner(self, urn: str) -> Callable[[str], None]:
        """What the API server warns of while applying a resource, as that resource's warning."""
        return lambda text: self.emit(Diagnostic(urn, f"the API server warns: {text}", "warning"))

    async def ensure_applyset(self, provider: Provider, provider_urn: str, namespace: str) -> None:
        """The stack's ApplySet parent in `namespace`, made once per run before its first
        member is applied; a preview only checks that nothing else has its name."""
        key = (id(provider), namespace)
        parent = self._applysets.get(key)
        if parent is None:
            kinds = self._group_kinds.get((provider_urn, ""), set())
            parent = SharedWork(
                provider.check_applyset(self.stack, namespace)
                if self.options.dry_run
                else provider.ensure_applyset(self.stack, namespace, kinds)
            )
            self._applysets[key] = parent
        await parent.result()

    # --- claims: which resource holds each object ------------------------------------

    def _hold(self, state: ResourceState, urn: str) -> None:
        """`urn` holds the object `state` records after this run."""
        key = object_key(state)
        self.held[key] = urn
        self.held_naming.setdefault(key[1:], {})[key] = urn
        member = applyset_of(state)
        if member is not None:
            self.members.add(member)

    def held_after(self, state: ResourceState) -> str | None:
        """The resource of the program that holds the object of `state` after this run,
        through its provider or another reaching that object's cluster."""
        return self.held.get(object_key(state)) or self._held_through_another(state)

    def _held_through_another(self, state: ResourceState) -> str | None:
        """The resource that holds the object of `state` after this run through another
        provider reaching the cluster that object is in: two records of one object, which a
        run before objects were known by cluster left (the live object marked as either).
        Not for a provider moved off that cluster: its objects are on the former one."""
        if state.provider in self.former_providers or state.provider in self.clusters.moved:
            return None
        cluster = self.clusters.cluster_of(state.provider)
        for key, urn in self.held_naming.get(object_key(state)[1:], {}).items():
            if key[0] != state.provider and self.clusters.cluster_of(key[0]) == cluster:
                return urn
        return None

    def _placed(self, state: ResourceState) -> bool:
        """Whether the object's name and namespace are known (a preview's may not be yet)."""
        if not self.options.dry_run:
            return True
        meta = metadata_of(state.inputs)
        names = {key: meta.get(key) for key in ("name", "namespace")}
        return state.provider not in self.unknown_providers and not unknown_paths(names)

    def _claim_kept(self, resources: list[Resource]) -> None:
        """Claim for each resource of the program the recorded object it keeps, before any
        step: where the program still names it so (a plain name, or its recorded auto-name)
        through a provider reaching the same cluster (the same provider, or another one for
        that cluster). A step of another resource onto it is then refused whichever runs
        first: a create before the keeper's step would apply over it (its
        marks, one of the stack's resources', pass `Adoption.check_free`), and one onto the object
        of a resource `--target` / `--exclude` leaves alone would take it for good. A name
        given by an Output is left to the keeper's own step, unless it is protected (its
        object is its whatever the program names: a step onto it was taken, and the keeper's
        own replacement refused, two records of one object); a Patch co-owns its object, a
        read owns none, and what the program dropped is deleted (its name free to take)."""
        for resource in resources:
            old = self.old.get(resource.urn)
            if old is None or old.external or resource.is_read or not resource.custom:
                continue
            if not is_kubernetes(resource):  # a Patch (is_kubernetes says no), a release
                continue
            named = declared_metadata(resource, old)  # recorded: its name is the record's
            namespace, _, name = old.id.rpartition("/")
            # No namespace given: the provider's default, which its record holds.
            named_so = (
                named is not None
                and named["name"] == name
                and named.get("namespace") in (None, "", namespace)
            )
            # A protected one keeps it under any name, its replacement refused (a Job its
            # TTL deleted, replaced all the same, gives it up at its step).
            if not (named_so or old.protect):
                continue
            key = self.claim_key(old)
            props = resource.props
            kind = group_kind(str(props.get("apiVersion", "")), str(props.get("kind", "")))
            cluster = self.clusters.cluster_of(provider_urn(resource))
            if key[:2] != (cluster, kind):  # another cluster, or kind
                continue
            claim = (resource.urn, Op.SAME)
            if self._creating.setdefault(key, claim) == claim:
                self._kept_claims[resource.urn] = key

    def claim_key(self, state: ResourceState) -> ObjectKey:
        """`object_key` with the cluster its provider reaches for the provider, where known:
        two providers may reach one cluster (the stack's default one and an explicit one for
        the same context), and then one object through both."""
        provider, kind, object_id = object_key(state)
        return self.clusters.cluster_of(provider), kind, object_id

    def _claim(self, new: ResourceState, op: Op) -> None:
        """Refuse a step onto an object another resource of this run creates, replaces or
        keeps: each would apply over the other's fields. (Names the program gives as plain
        text are refused before the run; this is for a name only an applied resource tells.)"""
        key = self.claim_key(new)
        first, first_op = self._creating.setdefault(key, (new.urn, op))
        if first == new.urn:
            self._creating[key] = (new.urn, op)  # what its step does with it, said so
            kept = self._kept_claims.pop(new.urn, key)
            if kept != key:  # its recorded object, given up: a replacement's new name
                del self._creating[kept]
            return
        kind = object_ref(new)[1]
        verb = _CLAIMED_BY.get(first_op, "holds")
        raise DeclarationRefused(
            f"{kind} {new.id} is the object {describe(first)} {verb}{self.line_of(first)}: "
            "each would overwrite the other's fields; give one of them another metadata.name"
        )

    def _object_made_anew(self, desired: ResourceState, old: ResourceState | None) -> str:
        """Why an unchanged Patch is applied again, "" for none: its object was made again
        under its name, holding none of its fields — by another resource of this run (a
        replacement that deletes first), or since the Patch was applied, in a run it was left
        out of (`--target`, `--exclude`, a kill before its step: the records' uids tell it,
        so a no-op still reads nothing)."""
        if self._made_anew(desired):
            return "its object was made anew: applying it again"
        if old is None or not self._made_anew_since(old):
            return ""
        kind = desired.inputs.get("kind") or "object"
        again = "`up` applies it again" if self.options.dry_run else "applying it again"
        return f"its {kind} was made anew since it was applied: {again}"

    def _made_anew(self, state: ResourceState) -> bool:
        """Whether another resource of this run creates or replaces the object `state` names."""
        made = self._creating.get(self.claim_key(state))
        return made is not None and made[0] != state.urn and made[1] in (Op.CREATE, Op.REPLACE)

    def _made_anew_since(self, patch: ResourceState) -> bool:
        """Whether the object a Patch's record names is held by a resource of the stack
        whose record (or this run's step) tells another object than the one the Patch was
        applied to (the outputs of each hold the object's uid). An object no resource of the
        stack holds is not compared: nothing but a read would tell its uid now."""
        held = self._creating.get(self.claim_key(patch))
        return held is not None and another_object(patch.outputs, self.live.get(held[0]))

    # --- deletes --------------------------------------------------------------------------

    async def delete_all(self, states: list[ResourceState], *, blocked: bool = False) -> set[str]:
        """Delete `states` in reverse dependency order; returns the URNs not deleted."""
        return await self.deletes.delete_all(states, blocked=blocked)

    async def warn_crd_deletes(self, states: Iterable[ResourceState]) -> None:
        """Warn, before a run changes anything, what deleting each CRD among `states` takes."""
        await self.deletes.warn_crd_deletes(states)

    # --- refresh ------------------------------------------------------------------------------

    def retarget(self, *, record: bool) -> None:
        """`--retarget`: forget the objects of each provider moved to another cluster."""
        self.refreshes.retarget(record=record)

    async def refresh(self, *, record: bool) -> None:
        """Read every object; report drift; with `record`, write what was read to the state."""
        await self.refreshes.refresh(record=record)

    # --- outputs --------------------------------------------------------------------------------

    def stack_outputs(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """(stored, shown): the program's exports resolved; secret parts are SecretValues
        in what is stored (the state store seals them) and [secret] in what is shown."""
        if self.program is None:
            return {}, {}
        stored: dict[str, Any] = {}
        for name, value in self.program.exports.items():
            try:
                plain, secret_paths = unwrap_secrets(resolve(value, self.read_live))
            except Exception as exc:  # the program's callback: a failed output, not a crash
                # Where the program's callback raised, as `run_unused_applies` says it.
                where = raised_at(exc)
                why = callback_failed(exc) if where else failure_text(exc)
                self.outcome.failures.append(located(where, f"stack output {name}: {why}"))
                continue
            try:  # found now, not when the state cannot record it after everything applied
                orjson.dumps(plain, default=unknown_as_null)
            except orjson.JSONEncodeError as exc:
                self.outcome.failures.append(
                    f"stack output {name}: {exc}; export JSON values (dicts, lists, strings, "
                    "numbers, booleans, None)"
                )
                continue
            envelope = _envelope_in(plain)
            if envelope is not None:
                where = f"{envelope} is a map" if envelope else "it is a map"
                self.outcome.failures.append(
                    f"stack output {name}: {where} whose only key is {SECRET_SIG}, which is how "
                    "the state stores a secret; add another key, or name it otherwise"
                )
                continue
            if self.rendering and unknown_paths(plain):
                why = unknown_because_rendered(value, self.rendering)
                if why:
                    self.emit(Diagnostic("", f"stack output {name} is not known: {why}", "warning"))
                if not self.options.dry_run:  # recorded as null: no value will ever come
                    plain = orjson.loads(orjson.dumps(plain, default=unknown_as_null))
            secret_paths += secrets_held(plain, self.read_plain(), secret_paths)
            stored[name] = masked(plain, secret_paths, SecretValue)
        return stored, {k: shown(v) for k, v in stored.items()}

    def _warn_of_stale_environment(self, step: Step) -> None:
        """Note a ConfigMap or Secret whose data this run changes in place; warn on a workload
        that reads one into its environment and that this run does not roll
        (`rollouts`): its pods keep the former values, where Pulumi would have rolled them."""
        updated = data_updated(step)
        if updated is not None:
            self._data_updated[updated[0]] = updated[1]
        stale = stale_readers(step, self._data_updated)
        if stale:
            self.emit(Diagnostic(step.urn, notice(stale, self.spelling), "warning"))

    def run_unused_applies(self) -> None:
        """Run the program's apply callbacks nothing made run (one that prints or logs, its
        result unused), as Pulumi runs every apply once its inputs are known: with what this
        run left (in a preview, only those whose inputs are known), not over a resource that
        failed or was not done. One that raises fails the run, with the line it raised at.
        Not after a failure: a callback that raised then (feeding an output, say) would run
        again here and say it twice, and Pulumi stops a program at its first error."""
        if self.program is None or self.outcome.failures:
            return
        for output in unrun(self.program.applies):
            if any(self.status.get(r.urn) != _DONE for r in dependencies_of(output)):
                continue
            try:
                output.resolve(self.read_live)
            except Exception as exc:  # the program's callback: a failed run, not a crash
                self.outcome.failures.append(located(raised_at(exc), callback_failed(exc)))

    def summary(self, elapsed: float) -> Summary:
        outcome = self.outcome
        return Summary(
            kind="preview"
            if self.options.dry_run and self.options.kind == "up"
            else self.options.kind,
            ok=not outcome.failures and not outcome.not_done,
            counts=dict(outcome.counts),
            outputs=outcome.outputs,
            elapsed=elapsed,
            failures=list(outcome.failures),
            rejected=outcome.rejected,
            dry_run=self.options.dry_run,
            not_done=list(outcome.not_done),
            unselected=outcome.unselected,
        )


def refuse_plan_violations(
    snapshot: Snapshot,
    options: Options,
    program: Program,
    providers: ProviderFactory,
    clusters: ClusterCheck,
) -> None:
    """Refuse an `up --plan` whose program no longer matches its plan before the stack is
    locked, so that nothing at all changes, the state's history included (Pulumi applies a
    plan in batches and fails at its first mismatch; what is known before the run here
    stops it whole): a resource the plan does not have, one it plans that the program no
    longer declares, a delete it does not plan, and an input the plan knew that the
    program now gives another value — one it gives through an Output too, a secret
    config value's, unless that Output reads another resource. What shows only once such
    an Output is known (or once the run adjusts a step: a replacement's new name, an
    import's or `ignore_changes`' fields read from the object) fails its own step
    (`Run.check_planned`). Plans nothing, writes nothing, calls no cluster."""
    if options.plan is None:
        return
    # Its inputs resolved as the `up` resolves them, also for the preview `up` runs first.
    checking = replace(options, dry_run=False)
    quiet = Run.over(snapshot, checking, program, None, providers, ignore, clusters=clusters)
    quiet._refuse_plan_violations(options.plan)


def _taking_back(drifted: DriftedField) -> FieldChange:
    """The change that puts a drifted field back: an addition where the field (or the list
    item) is gone from the live object."""
    return FieldChange(
        drifted.path, ABSENT if drifted.live is None else drifted.live, drifted.recorded
    )


#: Helm hook phases and where a chart's hook objects run relative to its other objects
#: (stackwright/kubernetes/helm.py orders them with depends_on; this only says so).
_HOOK_PLACES = {
    "pre-install": "before the chart's other objects",
    "pre-upgrade": "before the chart's other objects",
    "post-install": "after the chart's other objects",
    "post-upgrade": "after the chart's other objects",
}


def _wait_seconds(op: Op, timeouts: CustomTimeouts | None) -> float | None:
    """How long a create or an update may wait for readiness: `custom_timeouts.create` (an
    import or a replacement makes its object too) or `.update`; None: the provider's own."""
    if timeouts is None:
        return None
    chosen = timeouts.create if op in (Op.CREATE, Op.IMPORT, Op.REPLACE) else timeouts.update
    return None if chosen is None else float(chosen)


def _delete_seconds(timeouts: CustomTimeouts | None) -> float | None:
    """`custom_timeouts.delete`, which the SDK made seconds when the resource was declared."""
    return None if timeouts is None or timeouts.delete is None else float(timeouts.delete)


def _declared_propagation(inputs: Mapping[str, Any]) -> str | None:
    """The policy the object's `stackwright.io/deletion-propagation` annotation names (None:
    none, or a value a preview cannot know yet); a value it does not name is the program's
    mistake, refused with the line that declared the resource (`DeclarationRefused`)."""
    annotations = metadata_of(inputs).get("annotations")
    if isinstance(annotations, Mapping) and isinstance(
        annotations.get(DELETION_PROPAGATION), Unknown
    ):
        return None
    try:
        return deletion_propagation(inputs)
    except ValueError as exc:
        raise DeclarationRefused(str(exc)) from None


def _as_program_says(old: ResourceState, new: ResourceState) -> ResourceState:
    """A replaced object's record with how the program says now to delete it (how long to
    wait, what becomes of what it owns): a program that adds `orphan` along with the
    change that replaces a StatefulSet keeps its Pods in that same run."""
    return replace(
        old,
        delete_timeout=new.delete_timeout,
        deletion_propagation=new.deletion_propagation,
        retain_on_delete=new.retain_on_delete,  # a renamed Patch's fields kept on the old object
    )


def _hook_note(obj: Mapping[str, Any]) -> str:
    """A line for the display when an object is a Helm hook: when it runs, and what is ignored."""
    annotations = metadata_of(obj).get("annotations") or {}
    hooks = [h.strip() for h in str(annotations.get("helm.sh/hook", "")).split(",") if h.strip()]
    places = sorted({_HOOK_PLACES[h] for h in hooks if h in _HOOK_PLACES})
    if not places:
        return ""
    note = f"Helm hook ({', '.join(hooks)}): applied {' and '.join(places)}"
    if annotations.get("helm.sh/hook-delete-policy"):
        note += "; its delete policy is not applied, it stays as an ordinary object"
    return note


def _static_metadata(props: Mapping[str, Any]) -> Mapping[str, Any]:
    """An object's metadata with what is not known yet as "" (all of it, when unknown)."""
    metadata = _static(props.get("metadata", {}))
    return metadata if isinstance(metadata, dict) else {"name": "", "namespace": ""}


def _static(value: Any) -> Any:
    """A structure with Outputs replaced by their shape, else "" (for ordering rules that
    only read names)."""
    cls = type(value)
    if cls in PLAIN_LEAVES:
        return value
    # Exact types first, as `resolve` does: the Mapping ABC check is several times slower,
    # and props are dicts and lists.
    if cls is dict:
        return {k: _static(v) for k, v in value.items()}
    if cls is list:
        return [_static(v) for v in value]
    if isinstance(value, Output):
        return "" if value.shape is None else _static(value.shape)
    if isinstance(value, Mapping):
        return {k: _static(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_static(v) for v in value]
    return value


def _manager_changed(old: ResourceState, new: ResourceState) -> bool:
    """Whether a Patch's field manager is another than the one it applied as before (its
    annotation changed)."""
    return is_patch(new) and patch_field_manager(old.urn, old.inputs, None) != (
        patch_field_manager(new.urn, new.inputs, None)
    )


def _with_field_manager(inputs: Mapping[str, Any], manager: str) -> dict[str, Any]:
    """A Patch's inputs with the field manager it applies as written in, so that the state
    records it (and a preview shows it) from its first apply on."""
    meta = metadata_of(inputs)
    annotations = {**(meta.get("annotations") or {}), PATCH_FIELD_MANAGER: manager}
    return {**inputs, "metadata": {**meta, "annotations": annotations}}
