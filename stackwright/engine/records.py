"""What the state records of a resource, read without I/O: which cluster object it is
and in which ApplySet, the graph of recorded resources, how messages name it, and which
places of its live object hold its secrets.

Must never: call a provider or write anything (the engine's steps do that).
"""

from __future__ import annotations

import base64
import hashlib
import re
import shlex
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import chain
from typing import Any

import orjson

from stackwright.engine.events import within
from stackwright.engine.graph import Graph, Node
from stackwright.engine.plan import Step, change_keys, diff
from stackwright.errors import ClusterUnreachable
from stackwright.kubernetes.base import PATCH_FIELD_MANAGER, PATCH_FORCE, PATCH_SUFFIX
from stackwright.kubernetes.provider import RELEASE_TYPE
from stackwright.model import (
    URN_ANNOTATION,
    Op,
    PendingOperation,
    ResourceState,
    always_secret,
)
from stackwright.sdk.output import (
    PLAIN_LEAVES,
    UNKNOWN,
    Partial,
    PathKey,
    Secret,
    join_path,
    unwrap_secrets,
)
from stackwright.sdk.resource import Resource


def protected(urn: str) -> str:
    """Why a protected resource's delete fails, and the ways out (Pulumi's two). Most often
    the program no longer declares it, so unprotecting it in the state comes first."""
    return (
        f"resource {urn} cannot be deleted because it is protected: run `stackwright state "
        f"unprotect {shlex.quote(urn)}` first (or, if the program still declares it, remove "
        "its `protect` option and run `stackwright up`)"
    )


def is_kubernetes(declared: ResourceState | Resource | str) -> bool:
    """An object the provider applies and the stack owns (a `helm.Release` is not: Helm owns
    it; nor is a Patch: the object is someone else's, the stack owns some of its fields)."""
    if isinstance(declared, str):
        return declared.startswith("kubernetes:") and declared != RELEASE_TYPE
    type_ = declared.type if isinstance(declared, ResourceState) else declared.resource_type
    if not type_.startswith("kubernetes:") or type_ == RELEASE_TYPE:
        return False
    # Asked ~9 times a resource a run: `is_patch` only for a type that may name one.
    return not (type_.endswith(PATCH_SUFFIX) and is_patch(declared))


def is_patch(declared: ResourceState | Resource) -> bool:
    """A Patch resource (`kubernetes:core/v1:ConfigMapPatch`, Pulumi's): fields of an
    existing object, applied under a field manager of its own, the object never claimed.
    Told by its type token naming its object's kind with `Patch` after it, so that a CRD's
    own kind that ends in `Patch` is still an object."""
    if isinstance(declared, ResourceState):
        type_, obj = declared.type, declared.inputs
    else:
        type_, obj = declared.resource_type, declared.props
    if not type_.endswith(PATCH_SUFFIX):  # most resources: asked many times a run
        return False
    kind = obj.get("kind") if isinstance(obj, Mapping) else None
    return (
        isinstance(kind, str)
        and type_.startswith("kubernetes:")
        and type_.endswith(f":{kind}{PATCH_SUFFIX}")
    )


def patch_field_manager(urn: str, inputs: Mapping[str, Any], old: ResourceState | None) -> str:
    """The field manager a Patch applies as: its annotation's, else the one its record holds
    (stable across runs and renames), else `stackwright-patch-<10 hex digits of its URN>`,
    so that two Patches of one object each own their own fields."""
    given = (metadata_of(inputs).get("annotations") or {}).get(PATCH_FIELD_MANAGER)
    if isinstance(given, str) and given:
        return given
    if old is not None:
        recorded = (metadata_of(old.inputs).get("annotations") or {}).get(PATCH_FIELD_MANAGER)
        if isinstance(recorded, str) and recorded:
            return recorded
    return f"stackwright-patch-{hashlib.sha256(urn.encode()).hexdigest()[:10]}"


def patch_body(inputs: Mapping[str, Any]) -> dict[str, Any]:
    """What a Patch sends: its inputs without the `stackwright.io/patch-*` annotations, which
    are instructions to Stackwright (two Patches of one object naming their own managers
    would otherwise conflict over that annotation)."""
    meta = metadata_of(inputs)
    given = meta.get("annotations") or {}
    if not isinstance(given, Mapping):  # not known yet (the policy gate's preview)
        return {**inputs, "metadata": meta}
    annotations = {k: v for k, v in given.items() if k not in (PATCH_FIELD_MANAGER, PATCH_FORCE)}
    meta = {k: v for k, v in meta.items() if k != "annotations"}
    if annotations:
        meta["annotations"] = annotations
    return {**inputs, "metadata": meta}


def applied_fields(state: ResourceState) -> dict[str, Any]:
    """What a state's object was applied with, which its live object is compared with for
    drift: its inputs, a Patch's without its instructions (`patch_body`)."""
    return patch_body(state.inputs) if is_patch(state) else state.inputs


def as_applied(step: Step) -> Step:
    """A Patch's step with the changes of what it applies (`patch_body`): its field manager
    and `patch-force`, recorded in its inputs, are instructions no object carries, so no
    diff shows them as the object's fields (`patch_instruction_notes` says a change of them)."""
    old, new = step.old, step.new
    if not any(s is not None and is_patch(s) for s in (old, new)):
        return step
    before = applied_fields(old) if old is not None and step.op is not Op.CREATE else {}
    after = applied_fields(new) if new is not None else {}
    return replace(step, changes=tuple(diff(before, after)))


def patch_instruction_notes(old: ResourceState, new: ResourceState) -> list[str]:
    """What changes in how a Patch applies, as the Patch's own info: its field manager
    (the former one's fields are given up once the new one holds them) and its forcing."""
    notes = []
    before = patch_field_manager(old.urn, old.inputs, None)
    after = patch_field_manager(new.urn, new.inputs, None)
    if before != after:
        notes.append(f"applies as field manager {after} (was {before})")
    if patch_forced(old.inputs) != patch_forced(new.inputs):
        notes.append(
            f"{'forces' if patch_forced(new.inputs) else 'no longer forces'} conflicting fields"
        )
    return notes


def patch_forced(inputs: Mapping[str, Any]) -> bool:
    return (metadata_of(inputs).get("annotations") or {}).get(PATCH_FORCE) == "true"


def relinquishing_body(state: ResourceState) -> dict[str, Any]:
    """The empty patch that gives up every field a Patch's manager owns: the object's
    apiVersion, kind, name and namespace, nothing else."""
    meta = metadata_of(state.inputs)
    kept = {k: meta[k] for k in ("name", "namespace") if meta.get(k)}
    return {
        "apiVersion": state.inputs.get("apiVersion"),
        "kind": state.inputs.get("kind"),
        "metadata": kept,
    }


def through_kubernetes(state: ResourceState) -> bool:
    """What a Kubernetes provider keeps for the stack: an object, a Helm release or a Patch
    (`is_kubernetes`, `is_release`, `is_patch`: their type tokens all start `kubernetes:`)."""
    return state.type.startswith("kubernetes:")


def is_release(state_or_type: ResourceState | str) -> bool:
    """A Helm release (`helm.Release`): installed, upgraded and uninstalled through Helm."""
    type_ = state_or_type if isinstance(state_or_type, str) else state_or_type.type
    return type_ == RELEASE_TYPE


def release_spec(state: ResourceState) -> dict[str, Any]:
    """A release's inputs with the namespace its id records (`<namespace>/<release name>`)."""
    namespace, _, name = state.id.rpartition("/")
    return {**state.inputs, "namespace": namespace, "name": name}


def object_ref(state: ResourceState) -> tuple[str, str, str | None, str]:
    """(apiVersion, kind, namespace or None, name) of the object a state records."""
    inputs = state.inputs
    namespace, _, name = state.id.rpartition("/")
    return str(inputs.get("apiVersion", "")), str(inputs.get("kind", "")), namespace or None, name


def applyset_of(state: ResourceState) -> tuple[str, str] | None:
    """(provider URN, namespace) of the ApplySet a state's object is a member of; None for
    a cluster-scoped object, a Helm release (Helm owns it), an object only read or a
    resource with no object."""
    if not (state.custom and is_kubernetes(state)) or state.external:
        return None
    namespace = object_ref(state)[2]
    return (state.provider, namespace) if namespace else None


def object_key(state: ResourceState) -> tuple[str, str, str]:
    """(provider URN, kind.group, namespace/name): which cluster object a state records."""
    api_version = str(state.inputs.get("apiVersion", ""))
    return state.provider, group_kind(api_version, str(state.inputs.get("kind", ""))), state.id


class Records(dict[str, ResourceState]):
    """A run's recorded resources by URN, also found by the object each records (kind.group,
    namespace/name, whatever its provider): a delete asks which other records name its
    object, once per delete, which a scan of every record made quadratic in a destroy."""

    def __init__(self, states: Iterable[ResourceState] = ()) -> None:
        super().__init__()
        self.naming: dict[tuple[str, str], set[str]] = {}
        for state in states:
            self[state.urn] = state

    def __setitem__(self, urn: str, state: ResourceState) -> None:
        if urn in self:
            self._forget(urn)
        super().__setitem__(urn, state)
        self.naming.setdefault(object_key(state)[1:], set()).add(urn)

    def __delitem__(self, urn: str) -> None:
        self._forget(urn)
        super().__delitem__(urn)

    def pop(self, urn: str, *default: Any) -> Any:
        if urn in self:
            self._forget(urn)
        return super().pop(urn, *default)

    def _forget(self, urn: str) -> None:
        self.naming[object_key(self[urn])[1:]].discard(urn)


def metadata_of(obj: Mapping[str, Any]) -> dict[str, Any]:
    meta = obj.get("metadata")
    return dict(meta) if isinstance(meta, Mapping) else {}


#: Why an object being deleted is not adopted: it would go all the same once its
#: finalizers let it, and the printed program would then make it anew, not keep it.
IMPORT_OF_ONE_BEING_DELETED = "once it is gone, declare it without importing it to make it anew"


def being_deleted(live: Mapping[str, Any]) -> str:
    """How a live object someone deleted that finalizers still hold (Terminating) is said,
    or "" when it is not being deleted."""
    meta = metadata_of(live)
    since = meta.get("deletionTimestamp")
    if not since:
        return ""
    held = ", ".join(meta.get("finalizers") or ()) or "nothing named"
    return f"is being deleted (since {since}), held by finalizers: {held}"


def unknown_as_null(value: Any) -> None:
    """orjson's `default=` for a preview's value not known until applied: it serializes as
    null (absent); any other value that is not JSON is refused as orjson refuses it."""
    if value is UNKNOWN:
        return None
    raise TypeError(f"Type is not JSON serializable: {type(value).__name__}")


def unknown_paths(value: Any, path: str = "") -> list[str]:
    if value is UNKNOWN:
        return [path or "(the whole value)"]
    if type(value) in PLAIN_LEAVES:
        return []
    if isinstance(value, Secret):
        return unknown_paths(value.value, path)
    if isinstance(value, Mapping):
        return [
            p for k, v in value.items() for p in unknown_paths(v, f"{path}.{k}" if path else str(k))
        ]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in unknown_paths(v, f"{path}[{i}]")]
    return []


def unwrapped(resource: Resource, resolved: Any) -> tuple[Any, list[str]]:
    """`unwrap_secrets` of `resource`'s resolved inputs. Most objects hold no Output and no
    `Secret` (their marks, worked out once a run, say so): nothing to strip then, and no
    second walk of every object's inputs before each `preview` and `up`."""
    if resource.input_marks.plain:
        return resolved, []
    return unwrap_secrets(resolved)


#: The fields of an object that the API server shows to anyone who may list such objects,
#: and that Stackwright cannot keep encrypted: the name (with the namespace) is the
#: object's id, recorded in plain and shown on every line about it; labels are matched
#: by selectors, shown by `kubectl get --show-labels` and copied to the objects a
#: controller makes. A secret there would be in plain text wherever it is shown.
_LABELS_WHY = (
    "labels are shown by `kubectl get --show-labels`, matched by selectors and copied "
    "to the objects controllers make"
)
NEVER_SECRET = {
    "metadata.name": "the name is the object's id, shown in every line about it",
    "metadata.generateName": "the name is the object's id, shown in every line about it",
    "metadata.namespace": "the namespace is part of the object's id, shown in every line about it",
    "metadata.labels": _LABELS_WHY,
}
#: Maps anywhere in an object whose entries are shown in plain as labels are: the labels of
#: a pod template (`spec.template.metadata.labels`, a CronJob's under `jobTemplate`) are
#: copied to every pod it makes, and a selector (`matchLabels`, a Service's `selector`)
#: holds the labels it matches, shown by `kubectl describe` and `kubectl get -o wide`.
_SELECTOR_WHY = (
    "a selector is shown by `kubectl describe` and `kubectl get -o wide`, as are the "
    "labels it matches"
)


def secret_paths_of(resource: Resource, inputs: Mapping[str, Any], found: list[str]) -> list[str]:
    """Every secret path of `resource` whose resolved inputs are `inputs`: those its Outputs
    gave (`found`), those of its kind (a Secret's `data`), those its options add."""
    return [*found, *always_secret(inputs), *resource.opts.additional_secret_outputs]


def secret_in_plain_field(
    secret_paths: Iterable[str], inputs: Mapping[str, Any] | None = None
) -> str | None:
    """Why a secret cannot be where the program put it (an object's name, namespace or
    labels; any label map or selector in `inputs`), as a message; None when every secret
    is in a field that can hold one. `secret_paths` are where the program's secret values
    went: a field `additional_secret_outputs` marks (a whole `spec`, selectors and all) is
    kept encrypted in the state, not refused, as Pulumi keeps it."""
    paths = tuple(secret_paths)
    if not paths:  # most objects: checked once per resource of every up and preview
        return None
    places = [*NEVER_SECRET.items()]
    if inputs:
        # Where the secrets lie (each path and every path above it), and what lies below.
        spine = {p[: m.start()] for p in paths for m in _SEGMENT_END.finditer(p)} | set(paths)
        below = tuple(f"{p}{mark}" for p in paths for mark in ".[")
        places += _label_maps(inputs, "", spine, below)
    for field, why in places:
        inside = [p for p in paths if within(p, (field,))]
        if within(field, paths) or inside:
            return (
                f"{inside[0] if inside else field} holds a secret, but {why}, in plain text: "
                "keep the value in a Secret or an annotation (kept encrypted), or use one "
                "that need not be secret"
            )
    return None


_SEGMENT_END = re.compile(r"[.\[]")


def _label_maps(
    value: Any, path: str, spine: set[str], below: tuple[str, ...]
) -> Iterator[tuple[str, str]]:
    """(path, why) of each label map or selector below `path`, looked for only on the way
    to a secret (`spine`) and inside one (`below`): most of an object is never walked."""
    if isinstance(value, Mapping):
        items: Iterable[tuple[str | int, Any]] = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        return
    in_metadata = path.endswith(".metadata")  # a template's: the object's own are above
    for key, item in items:
        at = join_path(path, key)
        if at not in spine and not at.startswith(below):
            continue
        if isinstance(item, Mapping):
            if key == "labels" and in_metadata:
                yield at, _LABELS_WHY
                continue
            if key == "matchLabels" or (
                key == "selector" and not any(isinstance(v, Mapping | list) for v in item.values())
            ):
                yield at, _SELECTOR_WHY
                continue
        yield from _label_maps(item, at, spine, below)


#: The shortest secret value searched for inside longer texts of a live object.
MIN_SECRET_PART = 4


@dataclass(frozen=True)
class SecretTexts:
    """Secret values to look for in live objects, with the parts of them searched inside
    longer texts, worked out once for all the objects a refresh reads."""

    values: frozenset[str] = frozenset()
    parts: frozenset[str] = frozenset()
    #: Both as a JSON text spells them (`_may_hold`): encoded once, not once per object.
    escaped: tuple[bytes, ...] = ()

    @classmethod
    def of(cls, values: Iterable[str]) -> SecretTexts:
        values = frozenset(values)
        parts = _searched_parts(values)
        return cls(values, parts, _escaped(values | parts))


def _searched_parts(values: Iterable[str]) -> frozenset[str]:
    """What is searched for inside longer texts (kubectl's last-applied annotation, a
    status message quoting an image name made from a secret): each value as itself or
    base64-encoded (or decoded, when it is base64); short values only whole, or every
    text holding "a" would be secret."""
    parts = {v for v in values if len(v) >= MIN_SECRET_PART}
    return frozenset(
        parts | {base64.b64encode(v.encode()).decode() for v in parts} | _decoded(parts)
    )


def with_outputs(
    state: ResourceState, live: dict[str, Any], others: SecretTexts = SecretTexts()
) -> ResourceState:
    """`state` with `live` as its outputs. A secret value found at another place of the live
    object — a list the cluster or a webhook reordered, a field a controller copied it to —
    makes that place a secret path too: secret paths are positions, values are what must
    never be stored or shown in plain text. `others`: more secret values to look for (a
    refresh looks for every resource's, as anyone may have copied one into any object)."""
    state = state.changed(outputs=live_outputs(state, live))
    texts, names = _secrets_given(state)
    values = texts | others.values
    if not values and not names:
        return state
    paths = state.secret_paths
    # `others`' parts come worked out: a refresh of 1,000 objects base64-encoded (and
    # tried to decode) every secret of the stack once per object.
    own = _searched_parts(texts)
    parts = own | others.parts
    if not _may_hold(live, paths, chain(others.escaped, _escaped((*texts, *own, *names)))):
        return state

    # A secret used as a map key (`data` made from a secret, ...) is a key of the live
    # object and of its managedFields (`f:<key>`): the map holding it is secret, and so
    # are the managedFields naming it. Their values need not be searched: they are names.
    leaves, found_keys = _texts(live, pruned=paths, skip="metadata.managedFields")
    keys = [_map_key(path, key) for path, key in found_keys]
    holds = _holder([*(text for _, text in leaves), *(key for _, key in keys)], values, parts)
    if holds is None and not any(key in names for _, key in keys):
        return state
    holds = holds or _holds_none
    found = [p for p, text in leaves if holds(text)]
    for path, key in keys:
        if (key in names or holds(key)) and path not in found:
            found.append(path)
    if not found:
        return state
    return state.changed(secret_paths=(*state.secret_paths, *found))


#: An object's id, which every line about it shows and the engine reads without the
#: stack's key: never sealed for holding a secret text (`secrets_held`), as the cluster
#: shows it to anyone who may list the objects anyway.
_ID_FIELDS = ("metadata.name", "metadata.generateName", "metadata.namespace")


def secrets_held(value: Any, texts: SecretTexts, pruned: Iterable[str] = ()) -> list[str]:
    """Where `value` (a resource's inputs, a stack output) holds one of `texts` outside the
    paths `pruned` (its secret paths): a text equal to one or holding a part of one, a
    number whose text is one, a map with one as a key; "" when `value` itself does. For
    a secret configuration value the program read through a plain getter (`Config.get`):
    what it put where the stack records it is sealed there as a value marked secret is.
    Free when `texts` is empty (no secret configuration read so), one search of the
    value's JSON when none is in it."""
    if not texts.values:
        return []
    if type(value) in (int, float):
        return [""] if str(value) in texts.values else []
    if isinstance(value, str):
        return [""] if _holder([value], texts.values, texts.parts) else []
    if not isinstance(value, dict | list):
        return []
    pruned = (*pruned, *_ID_FIELDS)
    if isinstance(value, dict) and not _may_hold(value, pruned, texts.escaped):
        return []
    numbers: list[tuple[str, str]] = []
    leaves, keys = _texts(value, pruned=pruned, numbers=numbers)
    # A number only as a whole: every 8080 holds no secret 80.
    found = [path for path, number in numbers if number in texts.values]
    holds = _holder(
        [*(text for _, text in leaves), *(key for _, key in keys)], texts.values, texts.parts
    )
    if holds is not None:
        found += [path for path, text in leaves if holds(text)]
        found += [path for path, key in keys if holds(key) and path not in found]
    return found


def _holder(
    texts: list[str], values: Iterable[str], parts: Iterable[str]
) -> Callable[[str], bool] | None:
    """Whether a text of `texts` is one of `values` or holds one of `parts`; None when none
    does. One pass over all the texts first: most objects hold none of them."""
    every = "\0".join(texts)
    present = [part for part in parts if part in every]
    whole = {v for v in values if v in every}
    if not present and not whole:
        return None
    return lambda text: text in whole or any(part in text for part in present)


def _holds_none(text: str) -> bool:
    return False


def _escaped(texts: Iterable[str]) -> tuple[bytes, ...]:
    """Each text as it reads inside a JSON string, for `_may_hold`."""
    return tuple(orjson.dumps(text)[1:-1] for text in texts)


def _may_hold(live: dict[str, Any], pruned: Iterable[str], needles: Iterable[bytes]) -> bool:
    """Whether any of `needles` (`_escaped`) may be in a text or key of `live` outside
    `pruned` (secret paths): one search of its JSON, less its pruned top-level fields, in
    C, before the walk that says where. Most objects hold no secret value outside its own
    place (a Secret's `data`), and the walk of every field and managedField costs ~40 µs
    an object. Never False where the walk finds one: JSON escapes each character on its
    own, so an escaped needle is in the escaped text of any text or key that holds it."""
    pruned = frozenset(pruned)
    rest = {key: value for key, value in live.items() if join_path("", key) not in pruned}
    try:
        text = orjson.dumps(rest)
    except TypeError:  # not JSON (a preview's unknown): the walk decides
        return True
    return any(needle in text for needle in needles)


def _map_key(path: str, key: str) -> tuple[str, str]:
    """(where a key sits, the key): a key of managedFields (`f:<name>`, `k:<json>`,
    `v:<json>`) as the name it stands for, at `metadata.managedFields` as a whole."""
    if not path.startswith("metadata.managedFields"):
        return path, key
    key = key[2:] if key[1:2] == ":" else key
    key = key[1:-1] if key.startswith('"') and key.endswith('"') else key
    return "metadata.managedFields", key


def mark_of(obj: Mapping[str, Any]) -> str:
    """The URN an object is marked with, "" if none."""
    return str((metadata_of(obj).get("annotations") or {}).get(URN_ANNOTATION, ""))


def live_outputs(state: ResourceState, live: dict[str, Any]) -> dict[str, Any]:
    """What a resource's outputs hold of its live object: the object, and for a Secret the
    `stringData` the program gave (write-only: the server keeps only `data`), so an
    Output reading it gets the value (secret), as Pulumi's does."""
    given = state.inputs.get("stringData")
    if given is None or "stringData" in live or not _is_secret_kind(state.inputs):
        return live
    return {**live, "stringData": given}


#: What any write of an object changes, whichever fields it sets (the server's counters and
#: field ownership), and its status, which its controllers change after it.
_WRITTEN_ANEW = ("resourceVersion", "generation", "managedFields")


def unchanged_by(step: Step) -> Partial:
    """What a preview knows of an update's object when the server's dry run of it failed
    (another manager owns a field it sets): the object the state records, less what the
    update would change, which stays unknown: its changes' fields (and any it adds), the
    object's resourceVersion, generation and managedFields, and its status."""
    old = step.old
    assert old is not None
    recorded = old.outputs or old.inputs
    meta = {k: v for k, v in metadata_of(recorded).items() if k not in _WRITTEN_ANEW}
    known: Any = {**{k: v for k, v in recorded.items() if k != "status"}, "metadata": Partial(meta)}
    for change in step.changes:
        known = unknown_at(known, change_keys(change))
    return Partial(known)


def unknown_at(value: Any, keys: Sequence[PathKey]) -> Any:
    """`value` with what lies at `keys` unknown, also a key its map lacks at the end of
    `keys` (a field a change adds). A key missing on the way (a path whose dotted key cannot
    be told from nested ones) leaves the whole map unknown, as does an index past a list's
    end."""
    if not keys:
        return UNKNOWN
    key, rest = keys[0], keys[1:]
    if isinstance(value, dict) and isinstance(key, str) and (key in value or not rest):
        changed = {**value, key: unknown_at(value.get(key), rest)}
        return Partial(changed) if isinstance(value, Partial) else changed
    if isinstance(value, list) and isinstance(key, int) and key < len(value):
        return [*value[:key], unknown_at(value[key], rest), *value[key + 1 :]]
    return UNKNOWN


def _is_secret_kind(obj: Mapping[str, Any]) -> bool:
    return obj.get("kind") == "Secret" and obj.get("apiVersion") == "v1"


def secret_texts(state: ResourceState) -> frozenset[str]:
    """The texts at a state's secret paths of its inputs (what it must never show); of its
    outputs for an object only read, whose inputs name it and hold nothing else."""
    return _secrets_given(state)[0]


def _secrets_given(state: ResourceState) -> tuple[frozenset[str], frozenset[str]]:
    """`secret_texts`, and the keys of the maps at the secret paths (`data` made whole from
    a secret may be keyed by it) but for a Secret's data, whose keys name its values
    (`kubectl describe` shows them), from one walk of what the state was given. The keys
    are looked for only as keys of the live object and in the managedFields naming them:
    as texts, common keys ("token", "url") would make every field that says the same
    word secret, the object's own name included."""
    paths = state.secret_paths
    if not paths:
        return frozenset(), frozenset()
    given = state.outputs if state.external else state.inputs
    leaves, keys = _texts(given, under=paths)
    names = ("data", "stringData") if _is_secret_kind(given) else ()
    return (
        frozenset(text for _, text in leaves),
        frozenset(key for path, key in keys if path not in names),
    )


def _decoded(values: set[str]) -> set[str]:
    """The texts the base64 values among `values` encode (a Secret's data, which kubectl's
    last-applied annotation may hold as plain stringData)."""
    found = set()
    for value in values:
        try:
            text = base64.b64decode(value, validate=True).decode()
        except (ValueError, UnicodeDecodeError):
            continue
        if len(text) >= MIN_SECRET_PART:
            found.add(text)
    return found


def _texts(
    value: Any,
    *,
    pruned: Iterable[str] = (),
    under: Iterable[str] | None = None,
    skip: str = "",
    numbers: list[tuple[str, str]] | None = None,
) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """In one walk of a structure: (path, text) of its string leaves, and (path of the map,
    key) of the string keys of its maps; with `numbers`, (path, text) of its number
    leaves added to it. Nothing under the paths `pruned` names; with
    `under`, only what lies under those paths (a map's keys when the map does); no leaf,
    only keys, under `skip`. Paths are matched as the walk spells them (`join_path`), top
    down, so a set lookup per node does what `within` does."""
    leaves: list[tuple[str, str]] = []
    keys: list[tuple[str, str]] = []
    pruned, wanted = frozenset(pruned), frozenset(under or ())

    def walk(node: dict[Any, Any] | list[Any], path: str, inside: bool, skipped: bool) -> None:
        mapping = isinstance(node, dict)
        for key, item in node.items() if isinstance(node, dict) else enumerate(node):
            inner = join_path(path, key)
            if inner in pruned:
                continue
            if inside and mapping and isinstance(key, str):
                keys.append((path, key))
            now = inside or inner in wanted
            if isinstance(item, str):
                if now and not skipped:
                    leaves.append((inner, item))
            elif isinstance(item, dict | list):
                walk(item, inner, now, skipped or inner == skip)
            elif numbers is not None and now and not skipped and type(item) in (int, float):
                numbers.append((inner, str(item)))  # not a flag: `type`, as bool is an int

    if isinstance(value, dict | list):
        walk(value, "", under is None or "" in wanted, False)
    return leaves, keys


#: Which cluster a provider (by URN) reaches, as a run tells it (`ClusterCheck.cluster_of`).
ClusterOf = Callable[[str], str]


def by_provider(provider: str) -> str:
    """Each provider (by URN) a cluster of its own, where no run says which it reaches."""
    return provider


def recorded_graph(
    states: Sequence[ResourceState], cluster_of: ClusterOf = by_provider
) -> tuple[Graph, list[str], dict[str, list[str]]]:
    """The graph of recorded resources — their parents, providers and dependencies, and
    Kubernetes' own rules over their inputs (a namespace before what is in it, ...) —,
    each state's key in it, `URN#index` (a URN is recorded twice while a replaced
    object awaits deletion), and the keys of each URN. `cluster_of` tells which cluster a
    provider (by URN) reaches (`ClusterCheck.cluster_of`, in a run)."""
    keys = [f"{s.urn}#{i}" for i, s in enumerate(states)]
    by_urn: dict[str, list[str]] = {}
    for key, state in zip(keys, states, strict=True):
        by_urn.setdefault(state.urn, []).append(key)

    def on_cluster(state: ResourceState) -> tuple[str, str, str]:
        _, kind, name = object_key(state)
        return cluster_of(state.provider), kind, name

    # A Patch of an object the stack holds came after it (as `Run._graph` orders them, by
    # cluster: the two may go through two providers of it): it gives its fields up before
    # the object goes.
    objects = {
        on_cluster(s): k for k, s in zip(keys, states, strict=True) if s.custom and is_kubernetes(s)
    }
    nodes = []
    for key, state in zip(keys, states, strict=True):
        refs = {*state.dependencies, state.parent, state.provider} - {""}
        explicit = {k for ref in refs for k in by_urn.get(ref, ()) if k != key}
        patch = state.custom and is_patch(state)
        patched = objects.get(on_cluster(state)) if patch else None
        if patched is not None:
            explicit.add(patched)
        nodes.append(Node(key, state.inputs if state.custom else {}, frozenset(explicit), patch))
    return Graph(nodes), keys, by_urn


def recorded_closure(
    urns: Iterable[str],
    states: Sequence[ResourceState],
    *,
    upward: bool,
    cluster_of: ClusterOf = by_provider,
) -> set[str]:
    """`urns` and the recorded resources they need (`upward`: parents, providers,
    dependencies, and what Kubernetes' rules put first, such as their namespace), or
    that need them, directly or not."""
    graph, _, by_urn = recorded_graph(states, cluster_of)
    start = [key for urn in urns for key in by_urn.get(urn, ())]
    found = graph.upstream(start) if upward else graph.downstream(start)
    return {key.rpartition("#")[0] for key in found} | set(urns)


@dataclass(frozen=True)
class Edge:
    """`dependent` is applied after `dependency` (and deleted before it), because of `why`:
    "parent", "provider", "declared" (an Output it reads or `depends_on`), or the name of
    the Kubernetes rule that orders them (`namespace-first`, ...)."""

    dependent: str
    dependency: str
    why: str


def recorded_edges(states: Sequence[ResourceState]) -> list[Edge]:
    """Every ordering edge between recorded resources, as `up` and `destroy` follow them
    (`stack graph`); one per pair of URNs, in the order the resources were recorded."""
    graph, keys, _ = recorded_graph(states)
    edges: dict[tuple[str, str], Edge] = {}
    for key, state in zip(keys, states, strict=True):
        for needed in sorted(graph.needs[key]):
            dependency = needed.rpartition("#")[0]
            if dependency == state.urn or (state.urn, dependency) in edges:
                continue
            why = graph.why(key, needed)
            if why == "declared" and dependency == state.parent:
                why = "parent"
            elif why == "declared" and dependency == state.provider:
                why = "provider"
            edges[state.urn, dependency] = Edge(state.urn, dependency, why)
    return list(edges.values())


def refused(exc: BaseException) -> bool:
    """Whether a write that raised was refused by the server (a 4xx answer), or never sent
    to a cluster that could not be reached (refused connections, or a read before it that
    failed so), so nothing changed and its journaled step can be dropped: kept, it would
    stop every later run, on any cluster, until that one is back. After anything else — a
    timeout, a reset connection, a 5xx after the retries, Ctrl-C — the write may have
    landed: the step stays pending and the next run settles it by reading the cluster, as
    after a crash, so an object made then is neither forgotten nor left marked as the
    stack's."""
    if isinstance(exc, ClusterUnreachable) and not exc.sent:
        return True
    status = getattr(exc, "status", None)
    return isinstance(status, int) and 400 <= status < 500


def describe(urn: str) -> str:
    """A resource as messages name it: its type and logical name."""
    parts = urn.split("::")
    return f"{parts[-2].rsplit('$', 1)[-1]} {parts[-1]}" if len(parts) >= 4 else urn


def name_refusal(name: str) -> str | None:
    """Why no object can be named `name`, told before its id (`namespace/name`) is read back
    wrong: a '/', which no Kubernetes name holds (a name is part of the object's URL), made
    `a/b` in `default` read as `b` in a namespace `default/a`. None for any other name, which
    the server (or a rendering provider) judges."""
    if "/" not in name:
        return None
    return (
        f"its metadata.name {name!r} holds a '/', which no Kubernetes name may (a name is part "
        "of the object's URL): give it a name of lowercase letters, digits, '-' and '.'"
    )


def from_origin(resource: Resource) -> str:
    """` (from app.yaml (document 2))` for an object a manifest or chart gave; else ""."""
    return f" (from {resource.origin})" if resource.origin else ""


def made_again(state: ResourceState, live: Mapping[str, Any]) -> bool:
    """Whether the object under a resource's name is another than the one recorded (another
    uid) and not marked as this resource: the recorded one was deleted and someone made
    one again by hand. One that carries the resource's mark (applied again from a copy,
    restored from a backup) is still its object."""
    return another_object(state.outputs, live) and mark_of(live) != state.urn


def another_object(recorded: Any, found: Any) -> bool:
    """Whether two copies of an object under one name are of two objects: both tell its uid
    and the uids differ. One that tells none (a record written before uids were kept, a
    preview's object not made yet) is not said to be another."""
    before, now = uid_of(recorded), uid_of(found)
    return bool(before and now) and before != now


def uid_of(obj: Any) -> str:
    """The uid an object (or a record's copy of it) tells; "" for none or an unknown one."""
    uid = metadata_of(obj).get("uid") if isinstance(obj, Mapping) else None
    return uid if isinstance(uid, str) else ""


def replaced_since(
    item: PendingOperation, before: ResourceState | None, live: Mapping[str, Any]
) -> bool:
    """Whether the object of a step a crash left pending is another than the one recorded
    (another uid under that name): a delete that landed, then someone else's create.

    An update's step holds the desired state (no uid): the uid is the state's before it. A
    create's object has no uid recorded yet: it is told by its URN's mark instead."""
    if item.op in (Op.CREATE, Op.CREATE_REPLACEMENT):
        return False
    recorded = item.resource.outputs
    if not uid_of(recorded) and before is not None:
        recorded = before.outputs
    return another_object(recorded, live)


def group_kind(api_version: str, kind: str) -> str:
    group = api_version.rpartition("/")[0]
    return f"{kind}.{group}" if group else kind


# --- declared resources ------------------------------------------------------------------


def declared_dependencies(resource: Resource) -> set[str]:
    """The URNs `resource` names through its inputs' Outputs and `depends_on`.

    As in Pulumi, depending on a component is depending on everything under it: a
    component is done at once, its children are what take time. The resource itself and
    what it holds are left out, so a child naming its own component is no cycle.
    """
    deps = {r.urn for r in resource.input_marks.resources}
    if not resource.opts.depends_on:
        return deps
    own = {id(r) for r in _subtree(resource)}
    for named in resource.opts.depends_on:
        deps.update(r.urn for r in _subtree(named) if id(r) not in own)
    return deps


def _subtree(resource: Resource) -> list[Resource]:
    """`resource` and its children, theirs, and so on."""
    found, pending = [], [resource]
    while pending:
        item = pending.pop()
        found.append(item)
        pending.extend(item.children)
    return found


def provider_urn(resource: Resource) -> str:
    """The URN of the provider a resource uses: its own, else its nearest parent's; "" for
    the stack's default provider."""
    provider = resource.opts.provider
    parent = resource.opts.parent
    while provider is None and parent is not None:
        provider = parent.opts.provider
        parent = parent.opts.parent
    return provider.urn if provider is not None else ""
