"""The policy stage of the pipeline: the program's objects checked before any API call.

`check(gate, program, listener)` turns every Kubernetes object the program
declared (Helm-, YAML- and Kustomize-imported children included) and every Patch
(the fields it sets, for the policies that judge Patches) into a policy
subject — its inputs resolved with the Outputs known from inputs (a Namespace's given
name) and every other one unknown, since nothing has been applied yet — runs the stack's packs over them, reports a `PolicyChecked` event,
and raises `PolicyViolation` when a mandatory policy failed or a policy raised:
the operation stops before it plans, locks or calls the cluster. `audit` runs the
same packs over the objects that exist in a live cluster.

Must never: call the cluster or write state before the verdict, or let a value not
known yet fail a policy.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from stackwright.engine.events import Listener, PolicyChecked
from stackwright.engine.records import is_kubernetes, is_patch, patch_body
from stackwright.errors import PolicyViolation, located
from stackwright.kubernetes.provider import PROVIDER_TYPE
from stackwright.policy import Level, Settings
from stackwright.sdk.context import Program
from stackwright.sdk.output import UNKNOWN, StateReader, partly_known, resolve, unwrap_secrets
from stackwright.sdk.resource import Resource

if TYPE_CHECKING:
    from stackwright.policy import PolicyPack, Report, Subject


@dataclass(frozen=True)
class PolicyGate:
    """What to enforce on one stack: its packs, its settings, and the run's overrides."""

    packs: tuple[PolicyPack, ...]
    settings: Settings = field(default_factory=Settings)
    #: `--level`: every enabled policy at this level for the run.
    level: Level | None = None
    #: The kubeconfig context of the stack's default cluster ("" when not known).
    cluster: str = ""
    today: datetime.date | None = None


def in_force(gate: PolicyGate | None) -> dict[str, str]:
    """Each pack `gate` runs → the level it runs at, as a saved plan records them: the stack's
    setting for the pack, else the pack's own; `--policy-level` over it unless disabled."""
    if gate is None:
        return {}
    found: dict[str, str] = {}
    for pack in gate.packs:
        level = gate.settings.packs.get(pack.name) or pack.level
        if level is not Level.DISABLED and gate.level is not None:
            level = gate.level
        found[pack.name] = level.value
    return found


def planned_reader() -> StateReader:
    """Outputs as Pulumi's preview knows them before anything is applied: what a resource's
    own inputs say (a Namespace's given name, so its objects' namespace is known), unknown
    elsewhere (an auto-name, a Service's clusterIP, any status, anything read)."""
    planned: dict[int, Any] = {}

    def read(resource: Resource) -> Any:
        if not resource.custom or resource.is_read:
            return UNKNOWN
        found = planned.get(id(resource))
        if found is None:
            found = planned[id(resource)] = partly_known(resolve(resource.props, read))
            metadata = found.get("metadata")
            if isinstance(metadata, dict) and metadata.get("name") in (None, ""):
                # Auto-named at apply: its name is unknown, not absent, also to a callback
                # given the whole metadata (`m.get("name")`), which runs only once it is known.
                metadata["name"] = UNKNOWN
        return found

    return read


def _provider_settings(resource: Resource) -> Mapping[str, Any] | None:
    """The props of the explicit provider a resource (or an ancestor) names, if any."""
    node: Resource | None = resource
    while node is not None:
        if node.opts.provider is not None:
            props = node.opts.provider.props
            return props if isinstance(props, Mapping) else {}
        node = node.opts.parent
    return None


def subjects(program: Program, gate: PolicyGate) -> list[Subject]:
    """The program's Kubernetes objects and Patches as policy subjects, in declaration
    order, each pointing at the program line that declared it (a ConfigFile's or a chart's
    for their children), as a finding should. A Patch is what it sends: its fields without
    its instructions to Stackwright (`patch_body`)."""
    from stackwright.policy import Subject  # a run with no pack makes none (~3 ms of imports)

    out = []
    read = planned_reader()
    for resource in program.resources:
        if not resource.custom:
            continue
        patch = is_patch(resource)
        if not (patch or is_kubernetes(resource)):
            continue
        if resource.resource_type == PROVIDER_TYPE or resource.is_read:
            continue  # a provider has no object; a read declares none (it is someone else's)
        inputs, _ = unwrap_secrets(resolve(resource.props, read))
        if patch:
            inputs = patch_body(inputs)
        cluster = gate.cluster
        explicit = _provider_settings(resource)
        if explicit is not None:
            context = explicit.get("context")
            cluster = context if isinstance(context, str) else ""
        where = resource.declared_at
        out.append(
            Subject(
                inputs,
                urn=resource.urn,
                type=resource.resource_type,
                cluster=cluster,
                source=where.file if where.line else "",
                line=where.line,
                patch=patch,
            )
        )
    return out


def blocked_message(report: Report, what: str) -> str:
    """One line for a run a mandatory policy (or a failing policy) stopped."""
    blocking = report.blocking
    first = blocking[0]
    more = f" (and {len(blocking) - 1} more)" if len(blocking) > 1 else ""
    about = first.resource
    said = (
        f"{what} blocked by policy: {first.policy.label}: {first.message}{more}; nothing was "
        "changed. Fix the objects, or exempt them with the policy.stackwright.io/exempt "
        "annotation and a policy.stackwright.io/reason"
    )
    # Where the object was declared; a policy that failed names its own line instead.
    if about is not None and about.line and not first.error:
        return located(f"{about.source}:{about.line}", said)
    return said


def check(gate: PolicyGate, program: Program, stack: str, listener: Listener, what: str) -> Report:
    """Evaluate the gate's packs over the program's objects; raise when the run is blocked."""
    # Here, not at the top: a stack with no pack has no gate, and loads no evaluation.
    from stackwright.policy import Report, evaluate

    if not gate.packs:
        return Report()
    report = evaluate(
        subjects(program, gate),
        gate.packs,
        gate.settings,
        stack=stack,
        level=gate.level,
        today=gate.today,
    )
    listener(PolicyChecked(report))
    if report.blocked:
        raise PolicyViolation(blocked_message(report, what))
    return report


#: What `audit` reads from a live cluster: the kinds the built-in packs judge. Objects a
#: controller owns (a Deployment's ReplicaSets and pods) are judged through their owner.
AUDIT_KINDS = (
    ("v1", "Namespace"),
    ("v1", "Pod"),
    ("v1", "Service"),
    ("v1", "ReplicationController"),
    ("apps/v1", "Deployment"),
    ("apps/v1", "StatefulSet"),
    ("apps/v1", "DaemonSet"),
    ("apps/v1", "ReplicaSet"),
    ("batch/v1", "Job"),
    ("batch/v1", "CronJob"),
    ("policy/v1", "PodDisruptionBudget"),
    ("networking.k8s.io/v1", "NetworkPolicy"),
)


def _api_server_own(obj: Mapping[str, Any]) -> bool:
    """Service default/kubernetes, which the API server makes and keeps in every cluster:
    nothing a user could change about it."""
    metadata = obj.get("metadata") or {}
    return (
        obj.get("kind") == "Service"
        and metadata.get("namespace") == "default"
        and metadata.get("name") == "kubernetes"
    )


def _owned(obj: Mapping[str, Any]) -> bool:
    owners = (obj.get("metadata") or {}).get("ownerReferences") or ()
    return any(isinstance(o, Mapping) and o.get("controller") for o in owners)


def audit(
    list_objects: Callable[[Iterable[tuple[str, str]]], list[dict[str, Any]]],
    gate: PolicyGate,
    *,
    namespace: str = "",
) -> Report:
    """The packs over a live cluster's objects (`list_objects` reads them, e.g.
    `wiring.live_objects`), managed by a stack or not."""
    from stackwright.policy import Subject, evaluate

    found = []
    for obj in list_objects(AUDIT_KINDS):
        metadata = obj.get("metadata") or {}
        if _owned(obj) or _api_server_own(obj):
            continue
        if namespace and namespace not in (
            metadata.get("namespace"),
            metadata.get("name") if obj.get("kind") == "Namespace" else None,
        ):
            continue
        urn = (metadata.get("annotations") or {}).get("stackwright.io/urn", "")
        found.append(Subject(obj, urn=str(urn), cluster=gate.cluster))
    return evaluate(found, gate.packs, gate.settings, level=gate.level, today=gate.today)
