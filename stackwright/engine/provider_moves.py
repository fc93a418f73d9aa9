"""A provider resource's step: its provider made, the API server it reaches recorded, and a
move of its settings to another cluster either kept through the provider its recorded
settings make (`Run.former_providers`: its objects are replaced, deleted through that one)
or refused (settings known only now that reach neither cluster; a protected object that
the move would replace).

Must never: let a provider move to another cluster while its objects' former cluster is
out of reach, or replace a protected object by moving it.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from stackwright.engine.clusters import (
    CLUSTER_OUTPUT,
    CLUSTER_SETTINGS,
    Moved,
    former_reach,
    provider_outputs,
    recorded_identity,
    refusal,
    settings_back,
    unreachable,
)
from stackwright.engine.failures import DeclarationRefused, ProtectedReplacement
from stackwright.engine.plan import Step
from stackwright.errors import UsageError
from stackwright.model import ClusterIdentity, Op, ResourceState, urn_name

if TYPE_CHECKING:
    from stackwright.engine.execute import Run


class ProviderMoves:
    """A run's steps of provider resources, and the clusters they move between."""

    def __init__(self, run: Run) -> None:
        self.run = run

    async def provider_step(self, step: Step, old: ResourceState | None) -> Step:
        """Make a provider resource's provider; record the API server it reaches, and when
        that is another than the recorded one, keep the provider its recorded settings make
        (`former_providers`): its objects are replaced, deleted through it."""
        urn, new = step.urn, step.new
        assert new is not None
        try:
            made = self.run.factory(new.inputs)
        except UsageError as exc:
            # Settings known only now (an Output) that no provider can be made of: bad
            # input at the provider's declaration, as the check before the run says it.
            raise DeclarationRefused(str(exc)) from None
        self.run.providers[urn] = made
        identity = self.run.clusters.identities.get(urn)
        if identity is None and not self.run.options.dry_run:
            # Not asked before the run (no objects yet, or settings known only now): its
            # record gets the identity of the cluster its objects go to.
            identity = await made.identity()
            if identity is not None:
                self.run.clusters.identities[urn] = identity
        outputs = provider_outputs(made.cluster, identity)
        step = replace(step, new=replace(new, outputs=outputs))
        if old is None:
            return step
        former_identity = recorded_identity(old)
        if former_identity is not None and identity is not None:
            # The identities decide: `check_clusters` let another cluster through only when
            # the former settings still reach the recorded one (replaced there) or when
            # `--retarget` forgot the objects (nothing left to replace).
            if identity.uid != former_identity.uid and urn not in self.run.clusters.moved:
                await self._keep_former(old, former_identity, identity)
                self._refuse_moving_protected(step)
            return await self._record_provider(step, old, outputs)
        recorded = old.outputs.get(CLUSTER_OUTPUT)
        if recorded is None and not any(
            old.inputs.get(key) != new.inputs.get(key) for key in CLUSTER_SETTINGS
        ):
            recorded = made.cluster  # recorded before clusters were: as before, unmoved
        if recorded != made.cluster:
            former = self.run.factory(old.inputs)
            if former.cluster == made.cluster:  # another context name for the same cluster
                await former.close()
            elif recorded is None or former.cluster == recorded:
                self.run.former_providers[urn] = former
            else:  # settings known only now (an Output) that `check_clusters` could not read
                await former.close()
                raise UsageError(unreachable(old, recorded, made))
        self._refuse_moving_protected(step)
        return await self._record_provider(step, old, outputs)

    def _refuse_moving_protected(self, step: Step) -> None:
        """Refuse a provider's step that moves it to another cluster while it holds a
        protected object, which the move would replace (delete from the former cluster):
        its record and everything through it stay as they are. `up` refuses this before
        the run where `check_clusters` knew the move (`Run._refuse_protected_replacements`);
        here, settings known only now: bad input, as a protected replacement is."""
        provider = step.urn
        if provider not in self.run.former_providers:
            return
        held = sorted(r.urn for r in self.run.old.values() if r.provider == provider and r.protect)
        if held:
            raise ProtectedReplacement(
                f"provider {urn_name(provider)} now reaches another cluster, where its objects "
                f"would be replaced, and resource {held[0]} is protected: remove its `protect` "
                f"option first, or run `stackwright state unprotect {shlex.quote(held[0])}`",
                step,
            )

    async def _keep_former(
        self, old: ResourceState, recorded: ClusterIdentity, now: ClusterIdentity
    ) -> None:
        """A provider now reaching cluster `now`: keep the provider its recorded settings
        make, through which its objects on `recorded` are deleted (they are replaced);
        refuse (its step fails) when those settings no longer reach it either: settings
        known only now (an Output), which `check_clusters` could not read."""
        former = self.run.factory(old.inputs)
        try:
            unreached = await former_reach(former, recorded)
        except BaseException:
            await former.close()
            raise
        if unreached is not None:
            await former.close()
            objects = sum(1 for r in self.run.old.values() if r.provider == old.urn)
            moved = Moved(old.urn, recorded, now, objects, settings_back(old), unreached)
            raise UsageError(refusal(moved, "up"))
        self.run.former_providers[old.urn] = former

    async def _record_provider(
        self, step: Step, old: ResourceState, outputs: Mapping[str, Any]
    ) -> Step:
        if step.op is Op.SAME and old.outputs != outputs and not self.run.options.dry_run:
            # The same settings, the server they reach or its identity not recorded yet
            # (an older state), or another cluster `--retarget` accepted.
            old = replace(old, outputs=dict(outputs))
            await self.run.record_same(old)
            step = replace(step, old=old)
        return step
