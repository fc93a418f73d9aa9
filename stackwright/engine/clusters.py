"""Before a run: do the providers still reach the clusters the state's objects are in?

A provider whose settings now name another cluster (a rewritten kubeconfig, the ambient
context switched) would write the objects anew there, or delete them by name there, and
the state would lose track of the ones it records. `check_clusters` refuses such a run
(one line, exit 2) before anything changes, unless `up --retarget` accepts the move.

Which cluster is told by its identity (`ClusterIdentity`: the uid of its `kube-system`
Namespace, one GET per provider), recorded for each provider its objects went through:
the stack's default provider's in the state (`Snapshot.default_cluster`), an explicit
provider's in its record's outputs. A state older than identities falls back to the
checks made before them (the server URL an explicit provider recorded; reading a few of
the default provider's objects by uid). Must never: write anything.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from stackwright import interrupts
from stackwright.engine.ports import Provider, ProviderFactory
from stackwright.engine.records import (
    declared_dependencies,
    is_kubernetes,
    is_patch,
    made_again,
    metadata_of,
    object_ref,
    provider_urn,
    through_kubernetes,
    unknown_paths,
)
from stackwright.errors import ClusterUnreachable, UsageError, located
from stackwright.kubernetes.provider import PROVIDER_TYPE, RENDER_SETTING, is_kubeconfig_path
from stackwright.model import (
    LOCAL_CONTEXT_PREFIX,
    ClusterIdentity,
    ResourceState,
    urn_name,
)
from stackwright.sdk.context import Program
from stackwright.sdk.output import (
    UNKNOWN,
    resolve,
    unwrap_secrets,
)
from stackwright.state import Snapshot

if TYPE_CHECKING:
    from stackwright.engine.execute import Options  # it imports this module
    from stackwright.sdk.resource import Resource

#: A provider's settings that, changed, may name another cluster: its objects are replaced
#: unless both settings reach the same API server (`Provider.cluster`). Not the kubeconfig:
#: new contents are as often new credentials for the same cluster.
CLUSTER_SETTINGS = ("context",)

#: The output of a provider resource that records the API server it reached: its objects
#: are there. Settings reaching another one replace them (the recorded settings still
#: reach the former) or are refused (they do not: a kubeconfig file now says otherwise).
CLUSTER_OUTPUT = "cluster"
#: The outputs that record the identity of that cluster (`ClusterIdentity`): its
#: kube-system uid, which decides; the context, for messages.
CLUSTER_ID_OUTPUT = "clusterId"
CONTEXT_OUTPUT = "context"

#: How many of the objects the state records for the stack's default provider are read
#: to tell that it still reaches their cluster (any one found, the same uid, is enough),
#: when the state records no identity for it (one written before identities were).
_PROBED = 3

#: The name messages give the stack's default provider (no `k8s.Provider`).
DEFAULT_PROVIDER = "default"


@dataclass(frozen=True)
class Moved:
    """A provider that reaches another cluster than the one its objects are recorded in."""

    provider: str  # its URN; "" for the stack's default provider
    #: Where its objects are; None when an older state recorded no identity (the default
    #: provider's objects were then found missing from the cluster it reaches now).
    recorded: ClusterIdentity | None
    current: ClusterIdentity | None
    objects: int
    #: How to switch an explicit provider back (`settings_back`); "" for the default one.
    back: str = ""
    #: Why the program's move of the provider's settings cannot be carried out now: its
    #: former settings, through which its objects are deleted, reach no cluster ("" when
    #: they were not tried, or reach another one).
    unreached: str = ""

    @property
    def name(self) -> str:
        return urn_name(self.provider) if self.provider else DEFAULT_PROVIDER

    def notice(self) -> str:
        """What `up --retarget` does about it, for its preview and its run."""
        former = self.recorded.describe() if self.recorded else "the cluster they were applied to"
        now = self.current.describe() if self.current else "this one"
        return (
            f"provider {self.name} now reaches {now}: --retarget forgets the {self.objects} "
            f"object(s) recorded on {former} and creates them here; they are left on that "
            "cluster, not deleted (it may be unreachable): delete them there yourself if "
            "they should go"
        )


@dataclass
class ClusterCheck:
    """What `check_clusters` found, for the run: each provider's identity (by URN; "" the
    default provider's), asked once per operation, and the providers `--retarget` moves."""

    identities: dict[str, ClusterIdentity] = field(default_factory=dict)
    moved: dict[str, Moved] = field(default_factory=dict)
    #: The uid of the cluster the state records each provider's objects on, where recorded.
    recorded: dict[str, str] = field(default_factory=dict)
    #: The stack's default provider as the check made it, still open (its connection too)
    #: for the first of the run to ask for one (`handing_over`); None once handed over.
    default: Provider | None = None

    def handing_over(self, factory: ProviderFactory) -> ProviderFactory:
        """`factory`, whose first default provider is the check's: whoever asks for it owns
        it (closes it), as one `factory` made. Used in the loop the check ran in
        (`interrupts.one_loop`), which its connection belongs to."""

        def make(settings: Mapping[str, Any] | None) -> Provider:
            if settings is None and self.default is not None:
                made, self.default = self.default, None
                return made
            return factory(settings)

        return make

    def close(self) -> None:
        """Close the default provider if no one took it."""
        made, self.default = self.default, None
        if made is not None:
            interrupts.run(made.close())

    def cluster_of(self, provider: str) -> str:
        """What the cluster `provider` (a URN; "" the default one) reaches is told apart by:
        its identity's uid where known; else, until its step reads it (settings known only
        during the run), the one its objects are recorded on; else the URN itself, which
        stands for a cluster no other provider is known to reach (never a kube-system uid)."""
        identity = self.identities.get(provider)
        if identity is not None:
            return identity.uid
        return self.recorded.get(provider, provider)


def check_clusters(
    factory: ProviderFactory, program: Program | None, snapshot: Snapshot, options: Options
) -> ClusterCheck:
    """Refuse, before anything runs (one line, exit 2), a run whose providers' settings are
    unusable (a kubeconfig that is not there, a context it lacks) or no longer reach the
    cluster the state's objects are in, with no way left to the former one: the objects
    would be written anew elsewhere, or deleted by name there, and the state would lose
    track of the ones it records. `up --retarget` (and its preview) accepts such a move
    instead: the check returns it. Each declared provider whose settings are known before
    the run is made here: bad settings are bad input, not failed steps. The stack's default
    provider is left open for the run (`ClusterCheck.handing_over`, `close`): the caller
    runs the check and the operation in one loop (`interrupts.one_loop`)."""
    found = interrupts.run(_check_clusters(factory, program, snapshot, options))
    refused = [m for m in found.moved.values() if not options.retarget]
    if refused:
        found.close()
        raise UsageError(refusal(refused[0], "preview" if options.dry_run else options.kind))
    return found


async def check_default_provider(
    provider: Provider, snapshot: Snapshot, what: str, *, stop_unreachable: bool = True
) -> ClusterIdentity | None:
    """`check_clusters` for a front end that talks to the stack's default provider itself
    (`import`): refuses (one line, exit 2) when it reaches another cluster than the state's
    objects are in; the identity of the one it reaches, to record, if it has one. Stops
    (exit 1) when that cluster does not answer, unless not `stop_unreachable`."""
    found = ClusterCheck()
    stop = what if stop_unreachable else ""
    await _check_default(provider, snapshot, found, legacy=True, stop=stop)
    if "" in found.moved:
        raise UsageError(refusal(found.moved[""], what))
    return found.identities.get("")


async def check_recorded_cluster(
    factory: ProviderFactory,
    provider: Provider,
    snapshot: Snapshot,
    provider_urn: str,
    what: str,
) -> None:
    """`check_default_provider` for a front end that sends changes through any provider
    of the stack (`provider_urn`, "" the default one; an explicit one made by `factory`
    from its recorded settings): refuses (one line, exit 2) when it reaches another
    cluster than the state records its objects on, where a change would land on another
    object of the same name."""
    if not provider_urn:
        # Its caller says what an unreachable cluster leaves undone.
        await check_default_provider(provider, snapshot, what, stop_unreachable=False)
        return
    old = snapshot.resource(provider_urn)
    if old is None:
        return
    found = ClusterCheck()
    await _check_provider(
        factory, provider, old, old.inputs, snapshot.resources, found, legacy=False, retarget=False
    )
    if provider_urn in found.moved:
        raise UsageError(refusal(found.moved[provider_urn], what))


async def _identity(provider: Provider, *, stop: str = "") -> ClusterIdentity | None:
    """The cluster's identity; None when it cannot be read now (the run says so itself).
    `stop`: the operation, stopped here (one line, exit code 1) when the cluster has never
    answered: each of its steps would fail the same way."""
    identity, unreached = await _identity_or_why(provider)
    if unreached and stop:
        raise ClusterUnreachable(f"{stop}: {unreached}", unreached)
    return identity


async def _identity_or_why(provider: Provider) -> tuple[ClusterIdentity | None, str]:
    """The cluster's identity (None when it may not be read or fails otherwise), and why
    the cluster never answered, if it did not ("" when it did)."""
    try:
        return await provider.identity(), ""
    except UsageError:
        raise  # its settings are unusable: bad input, said now
    except ClusterUnreachable as exc:
        return None, exc.reason
    except Exception:
        return None, ""


def _objects(resources: Sequence[ResourceState], provider: str) -> list[ResourceState]:
    """The objects (and Helm releases) the state records through `provider`."""
    return [s for s in resources if s.custom and through_kubernetes(s) and s.provider == provider]


def recorded_identity(state: ResourceState) -> ClusterIdentity | None:
    """The cluster identity a provider resource's record holds, if any."""
    uid = state.outputs.get(CLUSTER_ID_OUTPUT)
    if not isinstance(uid, str) or not uid:
        return None
    server, context = state.outputs.get(CLUSTER_OUTPUT), state.outputs.get(CONTEXT_OUTPUT)
    return ClusterIdentity(
        uid, server if isinstance(server, str) else "", context if isinstance(context, str) else ""
    )


def provider_outputs(server: str, identity: ClusterIdentity | None) -> dict[str, str]:
    """A provider resource's outputs: the API server it reached, and that cluster's identity."""
    if identity is None:
        return {CLUSTER_OUTPUT: server}
    return {
        CLUSTER_OUTPUT: server,
        CLUSTER_ID_OUTPUT: identity.uid,
        CONTEXT_OUTPUT: identity.context,
    }


async def _check_clusters(
    factory: ProviderFactory, program: Program | None, snapshot: Snapshot, options: Options
) -> ClusterCheck:
    # Without identities, a refresh is the way out (it reads what the cluster now holds),
    # so it is checked for usable settings only; an identity tells for sure.
    legacy = not (options.kind == "refresh" or options.refresh)
    found = ClusterCheck()
    resources = snapshot.resources
    declared = program.resources if program is not None else ()
    recorded = {s.urn: s for s in resources if s.type == PROVIDER_TYPE}
    for urn, state in recorded.items():
        identity = recorded_identity(state)
        if identity is not None:
            found.recorded[urn] = identity.uid
    if snapshot.default_cluster is not None:
        found.recorded[""] = snapshot.default_cluster.uid
    used = {s.provider for s in resources if s.custom and through_kubernetes(s)}
    settings: dict[str, Mapping[str, Any]] = {
        urn: state.inputs for urn, state in recorded.items() if urn in used
    }
    providers = {r.urn: r for r in declared if r.resource_type == PROVIDER_TYPE}
    # Several providers may reach one cluster, where two resources through them naming one
    # object would each apply over the other's: each one's identity tells, read here for a
    # provider with no objects yet too (its step reuses it), so that the run keys objects
    # by cluster (`ClusterCheck.cluster_of`) from its start.
    # (A Patch's provider too: its object may be one another provider's resource makes.)
    reaching = {provider_urn(r) for r in declared if r.custom and (is_kubernetes(r) or is_patch(r))}
    several = len(reaching | used) > 1
    for resource in providers.values():
        inputs, _ = unwrap_secrets(resolve(resource.props, lambda _: UNKNOWN))
        if unknown_paths(inputs) or declared_dependencies(resource):
            # Known, or usable (a kubeconfig file another resource writes), only during
            # the run: checked when it is made (`_provider_step`).
            settings.pop(resource.urn, None)
        else:
            settings[resource.urn] = inputs
    for urn, chosen in settings.items():
        made = _made(factory, chosen, providers.get(urn))
        try:
            old = recorded.get(urn)
            if old is not None and urn in used:
                await _check_provider(
                    factory,
                    made,
                    old,
                    chosen,
                    resources,
                    found,
                    legacy=legacy,
                    retarget=options.retarget,
                )
            # No objects yet, or none recorded on an identity (its step would ask, if it has
            # one left); not a provider that renders files, in no cluster.
            if several and urn not in found.identities:
                identity = None if RENDER_SETTING in chosen else await _identity(made)
                if identity is not None:
                    found.identities[urn] = identity
        finally:
            await made.close()
    if "" in used or any(
        r.custom and (is_kubernetes(r) or is_patch(r)) and not provider_urn(r) for r in declared
    ):
        default = factory(None)  # raises the stack's settings' error; opens no connection
        try:
            # A targeted run may need no object of the default provider's cluster.
            stop = "" if options.targets else ("preview" if options.dry_run else options.kind)
            await _check_default(default, snapshot, found, legacy=legacy and "" in used, stop=stop)
        except BaseException:
            await default.close()
            raise
        found.default = default  # the run's, with its connection (`handing_over`)
    return found


def _made(
    factory: ProviderFactory, chosen: Mapping[str, Any], declared: Resource | None
) -> Provider:
    """A provider resource's provider; its unusable settings are refused at its declaration
    (the error alone named no provider, and offered the stack's settings, which a provider
    resource does not read, as Pulumi's explicit providers do not)."""
    try:
        return factory(chosen)
    except UsageError as exc:
        if declared is None:
            raise
        ambient = (
            ""
            if chosen.get("kubeconfig")
            else (
                " (a provider resource reads none of the stack's kubernetes: settings: give it a "
                "kubeconfig, e.g. the file `stackwright cluster kubeconfig` prints)"
            )
        )
        raise UsageError(
            located(declared.declared_at, f"provider {declared.resource_name}: {exc}{ambient}")
        ) from None


async def _check_provider(
    factory: ProviderFactory,
    made: Provider,
    old: ResourceState,
    chosen: Mapping[str, Any],
    resources: Sequence[ResourceState],
    found: ClusterCheck,
    *,
    legacy: bool,
    retarget: bool,
) -> None:
    """An explicit provider with objects: whether `made` (its settings now) still reaches
    the cluster its record names — by identity, else (none to compare: an older state,
    credentials that may not read kube-system) by the server URL recorded. A move goes
    into `found.moved`; one that no settings can undo without `--retarget` is refused."""
    urn = old.urn
    former_identity = recorded_identity(old)
    current = None if former_identity is None else await _identity(made)
    if former_identity is not None and current is not None:
        found.identities[urn] = current
        if current.uid == former_identity.uid:
            return
        unreached: str | None = ""
        if _settings_changed(old.inputs, chosen):
            through = factory(old.inputs)
            try:
                unreached = await former_reach(through, former_identity)
            finally:
                await through.close()
            if unreached is None:
                return  # the program names another cluster: its objects are replaced there
        objects = len(_objects(resources, urn))
        found.moved[urn] = Moved(
            urn, former_identity, current, objects, settings_back(old, chosen), unreached or ""
        )
        return
    former = old.outputs.get(CLUSTER_OUTPUT)
    if not legacy or former in (None, made.cluster):
        return
    through = factory(old.inputs)  # the settings its objects are deleted through
    await through.close()
    if through.cluster == former:
        return
    if not retarget:
        raise UsageError(unreachable(old, former, made))
    objects = len(_objects(resources, urn))
    found.moved[urn] = Moved(urn, None, await _identity(made), objects, settings_back(old))


async def former_reach(through: Provider, identity: ClusterIdentity) -> str | None:
    """None when `through` (a provider's former settings) reaches the cluster `identity`
    names; else "" when it reaches another, or why it reaches none (`Moved.unreached`)."""
    reached, unreached = await _identity_or_why(through)
    return None if reached is not None and reached.uid == identity.uid else unreached


def _settings_changed(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    return any(old.get(key) != new.get(key) for key in ("kubeconfig", *CLUSTER_SETTINGS))


async def _check_default(
    provider: Provider, snapshot: Snapshot, found: ClusterCheck, *, legacy: bool, stop: str
) -> None:
    """The stack's default provider: its identity against the one the state records; with
    none to compare (an older state, or credentials that may not read kube-system), reading
    a few of its objects tells (`_probe`). `stop`: as `_identity`'s."""
    objects = _objects(snapshot.resources, "")
    recorded = snapshot.default_cluster
    current = await _identity(provider, stop=stop)
    if current is not None:
        found.identities[""] = current
        if recorded is not None:
            if objects and current.uid != recorded.uid:
                found.moved[""] = Moved("", recorded, current, len(objects))
            return
    if legacy:
        pending = {item.resource.urn for item in snapshot.pending}
        if not await _probe(provider, snapshot.resources, pending):
            found.moved[""] = Moved("", None, current, len(objects))


async def _probe(provider: Provider, resources: Sequence[ResourceState], pending: set[str]) -> bool:
    """Whether the default provider, in a state that recorded no identity for it, still
    reaches its objects' cluster: a few of them read, their uid compared with the one
    recorded (one read when it does). Not those a crash left under way (the run settles
    them first) nor objects only read (someone else's to delete)."""
    probed = [
        state
        for state in resources
        if state.custom
        and is_kubernetes(state)
        and not state.provider
        and not state.delete_pending
        and not state.external
        and state.urn not in pending
        and state.deleted_with not in pending  # its carrier's delete may have taken it
        and metadata_of(state.outputs).get("uid")
    ][:_PROBED]

    async def found(state: ResourceState) -> bool:
        try:
            live = await provider.read(*object_ref(state))
        except UsageError:
            raise  # its settings are unusable: bad input, said now
        except Exception:
            return True  # not reachable now: the run says so itself
        return live is not None and not made_again(state, live)

    for state in probed:  # the first found ends it: one read in the usual case
        if await found(state):
            return True
    return not probed


def refusal(moved: Moved, what: str) -> str:
    """One line: which provider, the cluster its objects are on and the one it reaches
    now, and the ways on; `what` names the operation refused."""
    remade = _local_made_anew(moved)
    if remade:
        return f"{what} refused: {remade}"
    now = moved.current.describe() if moved.current else "another cluster"
    if moved.unreached and moved.recorded is not None:
        return (
            f"{what} refused: provider {moved.name}'s settings now reach the cluster at {now}: "
            f"its {moved.objects} object(s) would be replaced there, deleted first from the "
            f"cluster they are on, {moved.recorded.describe()}, which its former settings "
            f"cannot reach: {moved.unreached}; nothing was changed: once it answers, the "
            f"move goes ahead; else {moved.back}, or `stackwright up --retarget` forgets "
            "those objects (left on the former cluster, not deleted) and creates them on "
            "this one"
        )
    if moved.provider:
        back = moved.back
    elif moved.recorded is not None and moved.recorded.context:
        context = moved.recorded.context
        back = (
            f"`kubectl config use-context {context}`, or `stackwright config set "
            f"kubernetes:context {context}` where the stack's config names the context"
        )
        local = context.removeprefix(LOCAL_CONTEXT_PREFIX)
        if local != context:  # a local cluster's: the stack names it by kubernetes:cluster
            back += (
                f", or `stackwright config set kubernetes:cluster {local}` where it names a "
                "local cluster"
            )
    else:
        back = "its kubeconfig's current context, or the stack's kubernetes:context"
    if moved.recorded is None and moved.provider:
        return (
            f"{what} refused: provider {moved.name} applied its objects to another cluster "
            f"than the one its settings reach now ({now}), and what the state records for it "
            f"does too, so the objects cannot be moved: {back}, or `stackwright up "
            "--retarget` forgets them (left on the former cluster, not deleted) and creates "
            "them on this one"
        )
    if moved.recorded is None:
        # No identity recorded: the objects were only found missing, which a deletion
        # (e.g. with a namespace another stack destroyed) explains as well.
        return (
            f"{what} refused: the cluster the stack's default provider reaches ({now}) holds "
            f"none of the {moved.objects} object(s) the state records for it: if its "
            "kubeconfig's current context, or the stack's kubernetes:cluster / "
            "kubernetes:kubeconfig / kubernetes:context, changed since they were applied, "
            "switch back to the cluster they are in; to move the stack to this cluster, "
            "`stackwright up --retarget` forgets them (left where they are, not deleted) and "
            "creates them here; if they were deleted (e.g. with a namespace another stack "
            "destroyed, or with a local cluster deleted and started again), `stackwright "
            "refresh` forgets them, or `stackwright up --refresh` forgets them and makes "
            "them again"
        )
    return (
        f"{what} refused: provider {moved.name} now reaches the cluster at {now}, not the "
        f"one its {moved.objects} object(s) were applied to, {moved.recorded.describe()} "
        f"(kube-system uid {moved.current.uid if moved.current else '?'}, recorded "
        f"{moved.recorded.uid}); nothing was changed: switch back ({back}), or, if the "
        "stack is meant to move, `stackwright up --retarget` shows then forgets those "
        "objects (left on the former cluster, not deleted) and creates them on this one"
    )


def _local_made_anew(moved: Moved) -> str:
    """What to say when a local cluster of the same name is another cluster now (its
    context unchanged): "switch back" to the context in use would be no way on."""
    recorded, current = moved.recorded, moved.current
    if recorded is None or current is None or recorded.context != current.context:
        return ""
    local = recorded.context.removeprefix(LOCAL_CONTEXT_PREFIX)
    if local == recorded.context:
        return ""
    return (
        f"the local cluster {local} is not the one provider {moved.name}'s {moved.objects} "
        f"object(s) were applied to (kube-system uid {current.uid}, recorded {recorded.uid}): "
        "it was deleted and started again since, which took them with it, or "
        "STACKWRIGHT_HOME names another folder than then; nothing was changed: set "
        "STACKWRIGHT_HOME back if it changed, else `stackwright up --retarget` forgets them "
        "and makes them anew on this cluster, or `stackwright stack rm --force "
        "--preserve-config` forgets the stack's records of them"
    )


def unreachable(old: ResourceState, former: str, made: Provider) -> str:
    """Why a provider whose objects are in `former` cannot move them: its recorded settings
    reach another server now too (a kubeconfig file rewritten), and how to go on."""
    return (
        f"provider {urn_name(old.urn)} applied its objects to the cluster at {former}, but its settings "
        f"now reach {made.cluster}, and what the state records for it does too, so "
        f"the objects cannot be moved: {settings_back(old)} (to move them, "
        "then give the provider the new one under another path or inline: they are replaced "
        "there), or run `stackwright refresh` to forget what the new cluster lacks"
    )


def settings_back(old: ResourceState, chosen: Mapping[str, Any] | None = None) -> str:
    """How to give an explicit provider back the settings its recorded objects were
    applied through: the context the program gave it (`chosen`: its settings now) when
    only that changed, else the kubeconfig file it names, else its settings in the
    program."""
    context = old.inputs.get("context")
    if (
        chosen is not None
        and isinstance(context, str)
        and chosen.get("context") != context
        and chosen.get("kubeconfig") == old.inputs.get("kubeconfig")
    ):
        return f"give provider {urn_name(old.urn)} back its context {context!r} in the program"
    kubeconfig = old.inputs.get("kubeconfig")
    if kubeconfig and is_kubeconfig_path(kubeconfig):  # never the contents: credentials
        return f"put the former kubeconfig back in {kubeconfig}"
    return f"give provider {urn_name(old.urn)} back its former kubeconfig / context"
