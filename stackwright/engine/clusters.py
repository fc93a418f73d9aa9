"""Before a run: do the providers still reach the clusters the state's objects are in?

A provider whose settings now name another cluster (a rewritten kubeconfig, the ambient
context switched) would write the objects anew there, or delete them by name there, and
the state would lose track of the ones it records. `check_clusters` refuses such a run
(one line, exit 2) before anything changes. Must never: write anything.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from stackwright.engine.ports import Provider, ProviderFactory
from stackwright.engine.records import (
    declared_dependencies,
    describe,
    is_kubernetes,
    is_release,
    made_again,
    metadata_of,
    object_ref,
    provider_urn,
    unknown_paths,
)
from stackwright.errors import UsageError
from stackwright.kubernetes.provider import PROVIDER_TYPE
from stackwright.model import (
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

#: A provider's settings that, changed, may name another cluster: its objects are replaced
#: unless both settings reach the same API server (`Provider.cluster`). Not the kubeconfig:
#: new contents are as often new credentials for the same cluster.
CLUSTER_SETTINGS = ("context",)

#: The output of a provider resource that records the API server it reached: its objects
#: are there. Settings reaching another one replace them (the recorded settings still
#: reach the former) or are refused (they do not: a kubeconfig file now says otherwise).
CLUSTER_OUTPUT = "cluster"

#: How many of the objects the state records for the stack's default provider are read
#: to tell that it still reaches their cluster (any one found, the same uid, is enough).
_PROBED = 3


def check_clusters(
    factory: ProviderFactory, program: Program | None, snapshot: Snapshot, options: Options
) -> None:
    """Refuse, before anything runs (one line, exit 2), a run whose providers' settings are
    unusable (a kubeconfig that is not there, a context it lacks) or no longer reach the
    cluster the state's objects are in, with no way left to the former one: the objects
    would be written anew elsewhere, or deleted by name there, and the state would lose
    track of the ones it records. A refresh is the way out (it reads what the cluster now
    holds), so a refresh is checked for usable settings only. Each declared provider whose
    settings are known before the run is made here: bad settings are bad input, not
    failed steps."""
    moved = not (options.kind == "refresh" or options.refresh)
    asyncio.run(_check_clusters(factory, program, snapshot, moved=moved))


async def _check_clusters(
    factory: ProviderFactory, program: Program | None, snapshot: Snapshot, *, moved: bool
) -> None:
    resources = snapshot.resources
    declared = program.resources if program is not None else ()
    recorded = {s.urn: s for s in resources if s.type == PROVIDER_TYPE}
    used = {s.provider for s in resources if s.custom and (is_kubernetes(s) or is_release(s))}
    settings: dict[str, Mapping[str, Any]] = {
        urn: state.inputs for urn, state in recorded.items() if urn in used
    }
    for resource in declared:
        if resource.resource_type == PROVIDER_TYPE:
            inputs, _ = unwrap_secrets(resolve(resource.props, lambda _: UNKNOWN))
            if unknown_paths(inputs) or declared_dependencies(resource):
                # Known, or usable (a kubeconfig file another resource writes), only during
                # the run: checked when it is made (`_provider_step`).
                settings.pop(resource.urn, None)
            else:
                settings[resource.urn] = inputs
    for urn, chosen in settings.items():
        made = factory(chosen)
        try:
            old = recorded.get(urn)
            former = old.outputs.get(CLUSTER_OUTPUT) if old is not None else None
            if not moved or urn not in used or former in (None, made.cluster):
                continue
            assert old is not None
            through = factory(old.inputs)  # the settings its objects are deleted through
            await through.close()
            if through.cluster != former:
                raise UsageError(unreachable(old, former, made))
        finally:
            await made.close()
    if "" in used or any(
        r.custom and is_kubernetes(r.resource_type) and not provider_urn(r) for r in declared
    ):
        default = factory(None)  # raises the stack's settings' error; opens no connection
        if moved and "" in used:
            pending = {item.resource.urn for item in snapshot.pending}
            await _check_default_cluster(default, resources, pending)
        else:
            await default.close()


async def _check_default_cluster(
    provider: Provider, resources: Sequence[ResourceState], pending: set[str]
) -> None:
    """The stack's default provider (ambient kubeconfig, `kubernetes:kubeconfig` /
    `kubernetes:context`) records no settings of its own: whether it still reaches the
    cluster its objects were applied to is told by reading a few of them (one read when it
    does), their uid compared with the one recorded. Not those a crash left under way (the
    run settles them first) nor objects only read (someone else's to delete)."""
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

    try:
        for state in probed:  # the first found ends it: one read in the usual case
            if await found(state):
                return
    finally:
        await provider.close()
    if probed:
        example = ", ".join(describe(s.urn) for s in probed)
        raise UsageError(
            f"the cluster the stack's default provider reaches ({provider.cluster}) holds none "
            f"of the objects the state records for it ({example}): if its kubeconfig's current "
            "context, or the stack's kubernetes:cluster / kubernetes:kubeconfig / "
            "kubernetes:context, changed since they were applied, switch back to the cluster "
            "they are in; to go on without them (deleted, e.g. with a namespace another stack "
            "destroyed, left in the other cluster, or gone with a local cluster deleted and "
            "started again), run `stackwright refresh` to forget them, or `stackwright up "
            "--refresh` to forget them and make them again here"
        )


def unreachable(old: ResourceState, former: str, made: Provider) -> str:
    """Why a provider whose objects are in `former` cannot move them: its recorded settings
    reach another server now too (a kubeconfig file rewritten), and how to go on."""
    kubeconfig = old.inputs.get("kubeconfig")
    path = isinstance(kubeconfig, str) and kubeconfig and "\n" not in kubeconfig
    back = f"in {kubeconfig}" if path else "in its settings"
    return (
        f"provider {urn_name(old.urn)} applied its objects to the cluster at {former}, but its settings "
        f"now reach {made.cluster}, and what the state records for it does too, so "
        f"the objects cannot be moved: put the former kubeconfig back {back} (to move them, "
        "then give the provider the new one under another path or inline: they are replaced "
        "there), or run `stackwright refresh` to forget what the new cluster lacks"
    )
