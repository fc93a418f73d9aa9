"""Planning: compare a resource's desired object with its recorded state, decide the step.

Pure functions, no I/O: given what the program wants and what the state says, a
`Step` with one `Op` (create, update, replace, delete, same; discard for a record
of an object only read) and the field-level
changes that explain it. Which field changes force a replacement is data
(`IMMUTABLE`), each with the reason the API server gives.

A change's `path` is dotted with list indices in brackets, keys as they are
(`spec.template.spec.containers[0].image`, `data.tls.crt`), the form secret paths
take too; its `keys` say exactly which keys. Paths in rules and options may quote a
key that holds dots (`metadata.annotations["kubectl.kubernetes.io/restartedAt"]`),
or leave it unquoted, and use `[*]` for any index.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from stackwright.engine.graph import group_and_kind
from stackwright.kubernetes.provider import RELEASE_TYPE
from stackwright.model import Op, ResourceState, urn_name
from stackwright.sdk.output import ANY_INDEX, UNKNOWN, PathKey, join_path, parse_path
from stackwright.sdk.spelling import PYTHON, Spelling


@dataclass(frozen=True)
class Immutable:
    """A field the API server refuses to change on update (so the object is replaced),
    except under the `unless` paths, which it does let change."""

    path: str
    reason: str
    unless: tuple[str, ...] = ()

    @property
    def line(self) -> str:
        """The replace reason it gives: the field, then why."""
        return f"{self.path}: {self.reason}"


_STATEFULSET_MUTABLE = (
    "spec.replicas", "spec.ordinals", "spec.template", "spec.updateStrategy",
    "spec.persistentVolumeClaimRetentionPolicy", "spec.minReadySeconds",
)  # fmt: skip
_POD_MUTABLE = (
    "spec.containers[*].image", "spec.initContainers[*].image", "spec.containers[*].resources",
    "spec.activeDeadlineSeconds", "spec.tolerations", "spec.terminationGracePeriodSeconds",
    "spec.schedulingGates",
)  # fmt: skip
_PV_SOURCES = (
    "gcePersistentDisk", "awsElasticBlockStore", "hostPath", "glusterfs", "nfs", "rbd", "quobyte",
    "cinder", "cephfs", "fc", "flocker", "flexVolume", "azureFile", "vsphereVolume",
    "photonPersistentDisk", "portworxVolume", "azureDisk", "scaleIO", "local", "storageos", "csi",
    "iscsi",
)  # fmt: skip

#: (apiVersion group, kind) → fields whose change the API server refuses on update, so
#: the object must be replaced (kube-apiserver's ValidateXUpdate functions).
IMMUTABLE: dict[tuple[str, str], tuple[Immutable, ...]] = {
    ("apps", "Deployment"): (Immutable("spec.selector", "a Deployment's selector is immutable"),),
    ("apps", "ReplicaSet"): (Immutable("spec.selector", "a ReplicaSet's selector is immutable"),),
    ("apps", "DaemonSet"): (Immutable("spec.selector", "a DaemonSet's selector is immutable"),),
    ("apps", "StatefulSet"): (
        Immutable(
            "spec",
            "a StatefulSet's spec is immutable except replicas, ordinals, template, updateStrategy, "
            "persistentVolumeClaimRetentionPolicy and minReadySeconds",
            _STATEFULSET_MUTABLE,
        ),
    ),
    ("apps", "ControllerRevision"): (
        Immutable("data", "a ControllerRevision's data is immutable"),
    ),
    ("batch", "Job"): (
        Immutable("spec.template", "a Job's pod template is immutable"),
        Immutable("spec.selector", "a Job's selector is immutable"),
        Immutable("spec.completionMode", "a Job's completionMode is immutable"),
        Immutable("spec.podFailurePolicy", "a Job's podFailurePolicy is immutable"),
        Immutable("spec.backoffLimitPerIndex", "a Job's backoffLimitPerIndex is immutable"),
        Immutable("spec.successPolicy", "a Job's successPolicy is immutable"),
        Immutable("spec.managedBy", "a Job's managedBy is immutable"),
    ),
    ("", "Service"): (
        Immutable("spec.clusterIP", "a Service's clusterIP cannot change once set"),
        Immutable("spec.clusterIPs", "a Service's clusterIPs cannot change once set"),
    ),
    ("", "PersistentVolumeClaim"): (
        Immutable(
            "spec",
            "a claim's spec is immutable except its storage request and volumeAttributesClassName",
            ("spec.resources.requests", "spec.volumeAttributesClassName"),
        ),
    ),
    ("", "PersistentVolume"): (
        *(Immutable(f"spec.{s}", "a volume's source is immutable") for s in _PV_SOURCES),
        Immutable("spec.volumeMode", "a volume's volumeMode is immutable"),
    ),
    ("", "Secret"): (Immutable("type", "a Secret's type is immutable"),),
    ("", "Pod"): (
        Immutable(
            "spec",
            "a Pod's spec is immutable except container images and resources, "
            "activeDeadlineSeconds, tolerations and terminationGracePeriodSeconds",
            _POD_MUTABLE,
        ),
    ),
    ("rbac.authorization.k8s.io", "RoleBinding"): (
        Immutable("roleRef", "a RoleBinding's roleRef is immutable"),
    ),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"): (
        Immutable("roleRef", "a ClusterRoleBinding's roleRef is immutable"),
    ),
    ("storage.k8s.io", "StorageClass"): (
        Immutable("provisioner", "a StorageClass's provisioner is immutable"),
        Immutable("parameters", "a StorageClass's parameters are immutable"),
        Immutable("reclaimPolicy", "a StorageClass's reclaimPolicy is immutable"),
        Immutable("volumeBindingMode", "a StorageClass's volumeBindingMode is immutable"),
    ),
    ("networking.k8s.io", "IngressClass"): (
        Immutable("spec.controller", "an IngressClass's controller is immutable"),
    ),
    ("discovery.k8s.io", "EndpointSlice"): (
        Immutable("addressType", "an EndpointSlice's addressType is immutable"),
    ),
    ("scheduling.k8s.io", "PriorityClass"): (
        Immutable("value", "a PriorityClass's value is immutable"),
        Immutable("preemptionPolicy", "a PriorityClass's preemptionPolicy is immutable"),
    ),
    ("apiextensions.k8s.io", "CustomResourceDefinition"): (
        Immutable("spec.group", "a CRD's group is immutable"),
        Immutable("spec.scope", "a CRD's scope is immutable once it is established"),
        Immutable("spec.names.plural", "a CRD's plural name is immutable"),
        Immutable("spec.names.kind", "a CRD's kind is immutable once it is established"),
    ),
}

#: Changing any of these names another object: always a replacement.
IDENTITY = (
    Immutable("metadata.name", "the name identifies the object"),
    Immutable("metadata.namespace", "the namespace identifies the object"),
)

#: ConfigMaps and Secrets recorded with `immutable: true`: their data cannot change, nor
#: can they become mutable again.
_SEALED = {
    ("", "ConfigMap"): (
        Immutable("data", "the ConfigMap is immutable (immutable: true)"),
        Immutable("binaryData", "the ConfigMap is immutable (immutable: true)"),
        Immutable("immutable", "an immutable ConfigMap cannot be made mutable"),
    ),
    ("", "Secret"): (
        Immutable("data", "the Secret is immutable (immutable: true)"),
        Immutable("stringData", "the Secret is immutable (immutable: true)"),
        Immutable("immutable", "an immutable Secret cannot be made mutable"),
    ),
}


@dataclass(frozen=True)
class FieldChange:
    path: str
    old: Any
    new: Any
    #: The keys and indices `path` spells (filled in by `diff`; a key may hold dots).
    keys: tuple[str | int, ...] = field(default=(), compare=False, repr=False)

    @property
    def kind(self) -> str:
        if self.old is _ABSENT:
            return "add"
        if self.new is _ABSENT:
            return "delete"
        return "update"


class _Absent:
    def __repr__(self) -> str:
        return "(absent)"


#: The `old` of an added field and the `new` of a removed one.
ABSENT: Any = _Absent()
_ABSENT = ABSENT


@dataclass(frozen=True)
class Step:
    """One operation on one resource; `old` is its recorded state, `new` the desired state."""

    op: Op
    urn: str
    old: ResourceState | None
    new: ResourceState | None
    changes: tuple[FieldChange, ...] = ()
    replace_reasons: tuple[str, ...] = ()
    delete_before_replace: bool = False
    #: The changed field paths that force the replacement: what the server may refuse to
    #: change in place (a delete-first replacement's check), and nothing else it refuses.
    forcing: tuple[str, ...] = ()

    @property
    def type(self) -> str:
        state = self.new or self.old
        return state.type if state else ""


@dataclass(frozen=True)
class Intent:
    """What the program asks for one resource, with the options planning needs."""

    state: ResourceState  # inputs = the desired object; outputs empty
    ignore_changes: Sequence[str] = ()
    replace_on_changes: Sequence[str] = ()
    #: How the program's language spells options, for the reason a replacement gives.
    spelling: Spelling = PYTHON
    delete_before_replace: bool = False
    auto_named: bool = False
    #: Replace even without a change that needs it (`--replace`).
    force_replace: bool = False
    #: Its provider changed, and the new one reaches the cluster the old one did: the
    #: object stays (an update through the new provider), nothing is replaced.
    same_cluster: bool = False
    extra: Mapping[str, Any] = field(default_factory=dict)


# --- diff -----------------------------------------------------------------------------


def diff(old: Any, new: Any, path: str = "") -> list[FieldChange]:
    """Field-level differences between two JSON-like values.

    Maps are compared key by key (old keys first, then added ones), lists of the same
    length item by item, anything else as a whole; an UNKNOWN new value is always a
    change, since it may turn out different.
    """
    changes: list[FieldChange] = []
    _diff(old, new, path, (), changes)
    return changes


def _diff(
    old: Any, new: Any, path: str, keys: tuple[str | int, ...], out: list[FieldChange]
) -> None:
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        for key in old:
            if key not in new:
                out.append(FieldChange(join_path(path, key), old[key], _ABSENT, (*keys, key)))
            else:
                _diff(old[key], new[key], join_path(path, key), (*keys, key), out)
        for key in new:
            if key not in old:
                out.append(FieldChange(join_path(path, key), _ABSENT, new[key], (*keys, key)))
    elif isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for index, (a, b) in enumerate(zip(old, new, strict=True)):
            _diff(a, b, join_path(path, index), (*keys, index), out)
    elif new is UNKNOWN or not _same_leaf(old, new):
        out.append(FieldChange(path, old, new, keys))


def _same_leaf(old: Any, new: Any) -> bool:
    # JSON tells `true` from `1`; Python's == does not.
    return bool(old == new) and isinstance(old, bool) == isinstance(new, bool)


# --- paths ------------------------------------------------------------------------------


def _keys(path: str) -> tuple[PathKey, ...]:
    return parse_path(path) if path else ()


def _split(keys: Sequence[PathKey]) -> tuple[PathKey, ...]:
    """Keys with dotted keys split at their dots, so that `data["tls.crt"]`, `data.tls.crt`
    and the keys ("data", "tls.crt") compare alike."""
    return tuple(
        part for key in keys for part in (key.split(".") if isinstance(key, str) else (key,))
    )


def change_keys(change: FieldChange) -> tuple[PathKey, ...]:
    """The keys and indices a change is at: its `keys`, else its path's parts (a change made
    outside `diff`, whose path cannot tell a dotted key from nested ones)."""
    if change.keys or not change.path:
        return change.keys
    try:
        return parse_path(change.path)
    except ValueError:
        return (change.path,)


def _under(keys: Sequence[PathKey], pattern: Sequence[PathKey]) -> bool:
    """Whether `keys` is `pattern` or inside it (`[*]` in the pattern matches any index);
    both split at dots."""
    if len(keys) < len(pattern):
        return False
    return all(
        p == k or (p is ANY_INDEX and isinstance(k, int))
        for k, p in zip(keys, pattern, strict=False)
    )


def _has(obj: Any, key: PathKey) -> bool:
    if isinstance(key, str):
        return isinstance(obj, Mapping) and key in obj
    return isinstance(key, int) and isinstance(obj, list) and -len(obj) <= key < len(obj)


def lookup(obj: Any, keys: Sequence[PathKey]) -> Any:
    """The value at `keys` in `obj`, or ABSENT where there is none."""
    for key in keys:
        if not _has(obj, key):
            return _ABSENT
        obj = obj[key]
    return obj


def _expand(obj: Any, pattern: Sequence[PathKey]) -> list[tuple[str | int, ...]]:
    """The concrete keys in `obj` that a user's `pattern` names: `[*]` over each index
    present, and unquoted names joined again where `obj` has a key holding dots
    (`data.tls.crt` → "data", "tls.crt")."""
    if not pattern:
        return [()]
    head = pattern[0]
    if isinstance(head, str) and isinstance(obj, Mapping) and head not in obj:
        # The longest run of names that, joined by dots, is a key of `obj`.
        for end in range(len(pattern), 1, -1):
            names = pattern[:end]
            if all(isinstance(n, str) for n in names) and ".".join(map(str, names)) in obj:
                pattern = (".".join(map(str, names)), *pattern[end:])
                head = pattern[0]
                break
    rest = pattern[1:]
    if isinstance(head, (str, int)):
        if not rest:
            return [(head,)]
        return [(head, *tail) for tail in _expand(lookup(obj, (head,)), rest)]
    if not isinstance(obj, list):
        return []
    return [(i, *tail) for i, item in enumerate(obj) for tail in _expand(item, rest)]


def _store(obj: dict[str, Any], keys: Sequence[str | int], value: Any) -> None:
    """Set (or, for ABSENT, remove) the value at `keys`, making the maps on the way."""
    target: Any = obj
    for key, next_key in itertools.pairwise(keys):
        if isinstance(key, str) and isinstance(target, dict) and not _has(target, key):
            if value is _ABSENT or not isinstance(next_key, str):
                return  # nothing to remove; or a list item that is not there to set
            target[key] = {}
        if not _has(target, key) or not isinstance(target[key], (dict, list)):
            return
        target = target[key]
    last = keys[-1]
    if value is not _ABSENT and (
        (isinstance(target, dict) and isinstance(last, str)) or _has(target, last)
    ):
        target[last] = value
    elif value is _ABSENT and isinstance(target, dict):
        # (A list item cannot be removed without moving the others: the desired one stays.)
        target.pop(last, None)


def _copy(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def with_ignored(
    desired: Mapping[str, Any], old: Mapping[str, Any], ignore: Sequence[str]
) -> dict[str, Any]:
    """The desired object with `ignore_changes` paths kept at their recorded values
    (removed where the record has none), as Pulumi's `ignoreChanges` does."""
    result: dict[str, Any] = _copy(desired)
    for path in ignore:
        pattern = _keys(path)
        concrete = dict.fromkeys([*_expand(result, pattern), *_expand(old, pattern)])
        for keys in concrete:
            _store(result, keys, _copy(lookup(old, keys)))
    return result


def _ignored_id(id_: str, old: ResourceState, ignore: Sequence[str]) -> str:
    """An object's id as its inputs name it once `ignore` keeps recorded values: an ignored
    name (or namespace) is the recorded object's, which the step applies to and keeps."""
    if not (id_ and old.id and isinstance(old.inputs.get("metadata"), Mapping)):
        return id_
    parts = dict(zip(("namespace", "name"), id_.rpartition("/")[::2], strict=True))
    recorded = dict(zip(("namespace", "name"), old.id.rpartition("/")[::2], strict=True))
    for key in parts:
        if any(_under(("metadata", key), _split(_keys(path))) for path in ignore):
            parts[key] = recorded[key]
    return f"{parts['namespace']}/{parts['name']}" if parts["namespace"] else parts["name"]


# --- replacement ----------------------------------------------------------------------------


def _touches(change: FieldChange, rule: Immutable) -> bool:
    """Whether `change` alters the field `rule` names (and not only what `unless` allows)."""
    keys, field_keys = _split(change_keys(change)), _split(_keys(rule.path))
    if _under(keys, field_keys):
        return not any(_under(keys, _split(_keys(allowed))) for allowed in rule.unless)
    if _under(field_keys, keys):
        # The change is to a whole map or list holding the field: look at the field itself.
        rest = field_keys[len(keys) :]
        if any(k is ANY_INDEX for k in rest):
            return True
        old, new = (lookup(v, _expand(v, rest)[0]) for v in (change.old, change.new))
        return bool(old != new)
    return False


def forcing_rules(
    changes: Sequence[FieldChange],
    obj: Mapping[str, Any],
    replace_on_changes: Sequence[str],
    old: Mapping[str, Any] | None = None,
    spelling: Spelling = PYTHON,
) -> list[Immutable]:
    """The rules these changes to `obj` (recorded as `old`) break: each a field whose change
    needs a replacement, and why."""
    group_kind = group_and_kind(obj)
    rules = [
        *IDENTITY,
        *IMMUTABLE.get(group_kind, ()),
        *(_SEALED.get(group_kind, ()) if old is not None and old.get("immutable") is True else ()),
        *(
            Immutable(p, f"{spelling.name('replace_on_changes')} lists it")
            for p in replace_on_changes
        ),
    ]
    return [rule for rule in rules if any(_touches(change, rule) for change in changes)]


def _forcing_paths(changes: Sequence[FieldChange], rules: Sequence[Immutable]) -> tuple[str, ...]:
    """Where `changes` break `rules`: each changed field under a rule's path (a StatefulSet's
    `spec.volumeClaimTemplates`, not all of its `spec`, whose replicas may change), or the
    rule's path where a change replaces a whole map or list holding it."""
    paths = [
        _written(keys) if _under(_split(keys := change_keys(change)), _split(_keys(rule.path)))
        else rule.path
        for rule in rules
        for change in changes
        if _touches(change, rule)
    ]  # fmt: skip
    return tuple(dict.fromkeys(paths))


#: A key a path may write bare; any other is quoted (`data["route: main"]`).
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def _written(keys: Sequence[PathKey]) -> str:
    """The path of `keys` as a rule or an option writes it, which reads back as those keys."""
    path = ""
    for key in keys:
        if not isinstance(key, str):
            path += f"[{key}]"
        elif _BARE_KEY.fullmatch(key):
            path = join_path(path, key)
        else:
            path += f"[{json.dumps(key)}]"
    return path


# --- the step ---------------------------------------------------------------------------


#: The replace reason of a resource named by `--replace`.
FORCED_REPLACE = "asked for by --replace"


def provider_changed(old: str, new: str) -> str:
    """The replace reason of a resource moved from provider `old` to `new` (URNs; "" the
    stack's default): which two, as Pulumi's diff shows `[provider: … => …]`."""

    def named(urn: str) -> str:
        return urn_name(urn) if urn else "default"

    return f"its provider changed ({named(old)} → {named(new)}; another cluster, perhaps)"


def plan(intent: Intent, old: ResourceState | None) -> Step:
    """The step that takes `old` (None: not in the state) to what `intent` asks."""
    desired = intent.state
    urn = desired.urn
    if old is None or old.delete_pending:
        return Step(Op.CREATE, urn, None, desired, tuple(diff({}, desired.inputs)))
    if intent.ignore_changes:
        desired = replace(
            desired,
            inputs=with_ignored(desired.inputs, old.inputs, intent.ignore_changes),
            id=_ignored_id(desired.id, old, intent.ignore_changes),
        )
    changes = diff(old.inputs, desired.inputs)
    if not changes and old.provider == desired.provider and not intent.force_replace:
        # Options only the state keeps (dependencies, protect, …) change nothing in the
        # cluster: as in Pulumi, a same step, which records them (`recorded_options`).
        return Step(Op.SAME, urn, old, desired)
    # A namespace written out that the object was in anyway (the provider's default) names
    # the same object, as its id says: no replacement (Pulumi takes "" as "default" too).
    same_object = bool(old.id) and old.id == desired.id
    renaming = [c for c in changes if not same_object or c.path != "metadata.namespace"]
    rules = forcing_rules(
        renaming, desired.inputs, intent.replace_on_changes, old.inputs, intent.spelling
    )
    reasons = [rule.line for rule in rules]
    if intent.force_replace:
        reasons.append(FORCED_REPLACE)
    # A component has no object to leave behind: its provider only passes to its children,
    # whose own steps say whether they move.
    moved = desired.custom and old.provider != desired.provider and not intent.same_cluster
    if moved:
        # Another provider may be another cluster: applying through it alone would leave
        # the old object behind, untracked (Pulumi replaces too).
        reasons.append(provider_changed(old.provider, desired.provider))
    # A release's name is its resource's, so an alias rename renames it too.
    another_release = desired.type == RELEASE_TYPE and old.id != desired.id and bool(old.id)
    if another_release:
        reasons.append(
            f"another Helm release: {old.id} → {desired.id} (Helm knows a release by its "
            "namespace and name)"
        )
    if reasons:
        # Create-before-delete needs the two objects to coexist: an auto-named object gets
        # a new name, and a change of name or namespace makes another object anyway.
        renamed = another_release or any(
            _touches(change, rule) for change in changes for rule in IDENTITY
        )
        return Step(
            Op.REPLACE, urn, old, desired, tuple(changes), tuple(reasons),
            # Delete first when moved: both providers may reach one cluster, where the
            # create would be the old object and the delete would then remove it.
            delete_before_replace=intent.delete_before_replace
            or moved
            or not (intent.auto_named or renamed),
            forcing=_forcing_paths(renaming, rules),
        )  # fmt: skip
    return Step(Op.UPDATE, urn, old, desired, tuple(changes))


#: The options only the state keeps: no object carries them, so a change of these alone
#: is recorded without an API call (another provider is a replacement: see `plan`).
STATE_OPTIONS = (
    *("protect", "retain_on_delete", "deleted_with", "parent", "dependencies"),
    "ignore_changes",  # what a refresh, which runs no program, leaves out of drift
    "delete_timeout",  # how long a delete without the program (destroy, removal) waits
    # What that delete does to what the object owns. The object carries it too (its
    # annotation), so a change is an update; recorded here when only the record lacks it
    # (written by a Stackwright that did not read the annotation).
    "deletion_propagation",
)


def recorded_options(step: Step) -> ResourceState | None:
    """For a same step whose state-only options changed, its recorded state with the new
    options (the object and its outputs as they were); else None: nothing to record. Secret
    paths the program adds (`additional_secret_outputs`) are recorded too, so that the
    state encrypts what they name from now on."""
    if step.op is not Op.SAME or step.old is None or step.new is None:
        return None
    old, new = step.old, step.new
    added = _added_secrets(old, new)
    if _state_options(old) == _state_options(new) and not added:
        return None
    return replace(
        old,
        secret_paths=(*old.secret_paths, *added),
        **{option: getattr(new, option) for option in STATE_OPTIONS},
    )


def _seconds_text(seconds: float | None) -> str:
    return "(default)" if seconds is None else f"{seconds:g}s"


def _added_secrets(old: ResourceState, new: ResourceState) -> tuple[str, ...]:
    """The secret paths `new` has that `old` does not (a found one `old` has stays)."""
    return tuple(p for p in dict.fromkeys(new.secret_paths) if p not in old.secret_paths)


def _state_options(state: ResourceState) -> tuple[Any, ...]:
    # Dependencies are compared as a set: their order says nothing.
    return (
        state.protect,
        state.retain_on_delete,
        state.deleted_with,
        state.parent,
        frozenset(state.dependencies),
        frozenset(state.ignore_changes),
        state.delete_timeout,
        state.deletion_propagation,
    )


def option_changes(
    old: ResourceState, new: ResourceState, spelling: Spelling = PYTHON
) -> list[str]:
    """What differs in a resource's options (no field of its object), each as a note naming
    the option as the program's language (`spelling`) does: why an update with no field
    change happens, or what a same step records."""

    def named(urn: str, default: str = "(none)") -> str:
        return urn_name(urn) if urn else default

    notes = [
        f"{spelling.name(option)} {spelling.value(getattr(old, option))} → "
        f"{spelling.value(getattr(new, option))}"
        for option in ("protect", "retain_on_delete")
        if getattr(old, option) != getattr(new, option)
    ]
    if old.deleted_with != new.deleted_with:
        notes.append(
            f"{spelling.name('deleted_with')} {named(old.deleted_with)} → {named(new.deleted_with)}"
        )
    if set(old.ignore_changes) != set(new.ignore_changes):
        notes.append(
            f"{spelling.name('ignore_changes')} {list(old.ignore_changes)} → "
            f"{list(new.ignore_changes)}"
        )
    if old.delete_timeout != new.delete_timeout:
        notes.append(
            f"{spelling.name('custom_timeouts.delete')} {_seconds_text(old.delete_timeout)} → "
            f"{_seconds_text(new.delete_timeout)}"
        )
    if old.deletion_propagation != new.deletion_propagation:
        notes.append(
            f"deletion propagation {old.deletion_propagation or '(default)'} → "
            f"{new.deletion_propagation or '(default)'}"
        )
    added = _added_secrets(old, new)
    if added:
        notes.append(f"secret now: {', '.join(added)}")
    if old.parent != new.parent:
        notes.append(f"parent {named(old.parent)} → {named(new.parent)}")
    if old.provider != new.provider:
        notes.append(
            f"provider {named(old.provider, 'default')} → {named(new.provider, 'default')}"
        )
    before, after = set(old.dependencies), set(new.dependencies)
    if after - before:
        notes.append(f"now depends on {', '.join(sorted(map(named, after - before)))}")
    if before - after:
        notes.append(f"no longer depends on {', '.join(sorted(map(named, before - after)))}")
    return notes


def plan_delete(old: ResourceState) -> Step:
    if old.external:  # read, not managed: only the record goes (Pulumi's discard)
        return Step(Op.DISCARD, old.urn, old, None)
    return Step(Op.DELETE, old.urn, old, None, tuple(diff(old.inputs, {})))
