"""Drift: where a live object no longer holds what Stackwright applied, and who changed it.

Only the fields Stackwright set (the recorded inputs) are compared: a field that
other managers own and Stackwright never set — replicas an HPA scales, a
clusterIP the API server assigns, annotations a webhook adds — is not drift.
For a drifted field, the live object's managedFields name the manager that now
owns it (`kubectl-edit`, `kubectl-patch`, a controller).

Pure: takes two objects, returns `DriftedField`s; no I/O.
"""

from __future__ import annotations

import base64
import functools
import json
import re
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from stackwright.engine.events import DriftedField, within

if TYPE_CHECKING:
    from fractions import Fraction

#: Fields of our inputs the API server rewrites or that are identity, not content.
_NOT_CONTENT = frozenset({"apiVersion", "kind", "status"})


def _leaves(
    value: Any, path: tuple[str | int, ...] = ()
) -> Iterator[tuple[tuple[str | int, ...], Any]]:
    if isinstance(value, Mapping) and value:
        for key, item in value.items():
            yield from _leaves(item, (*path, key))
    elif isinstance(value, list) and value and all(isinstance(v, Mapping) for v in value):
        for index, item in enumerate(value):
            yield from _leaves(item, (*path, index))
    else:
        yield path, value


#: The key that names an item of a list of objects, in the order tried: Kubernetes merges
#: such lists by key (containers, env and volumes by name, volumeMounts by mountPath, ports
#: by containerPort / port), and another manager may add items anywhere in them (a sidecar,
#: an env var: a strategic merge patch puts them first). A recorded item is found by its key;
#: one with none of these, by its position.
ITEM_KEYS = ("name", "mountPath", "containerPort", "port", "devicePath", "ip")


def _item(recorded: Mapping[str, Any], live: list[Any], index: int) -> tuple[bool, Any]:
    """The live item that is the recorded one (at `index` in the program's list)."""
    keys = [k for k in ITEM_KEYS if k in recorded]
    if not keys:
        return (True, live[index]) if index < len(live) else (False, None)
    # Every key the item has narrows the match, and one no live item has left is skipped:
    # a port renamed is still found by its number (and renumbered, by its name), so the
    # one field that changed is the drift; two mounts of one volume, by their mountPaths.
    found: list[Any] = []
    for key in keys:
        narrowed = [
            i
            for i in (found or live)
            if isinstance(i, Mapping) and _same(recorded[key], i.get(key))
        ]
        found = narrowed or found
    if "protocol" in recorded or len(found) > 1:  # port 53 TCP and port 53 UDP
        protocol = recorded.get("protocol", "TCP")
        found = [i for i in found if i.get("protocol", "TCP") == protocol]
    return (True, found[0]) if found else (False, None)


def _at(
    obj: Any,
    path: tuple[str | int, ...],
    recorded: Mapping[str, Any],
    trail: list[tuple[list[Any], Any]] | None = None,
) -> tuple[bool, Any]:
    """The live value at the recorded `path`, following list items by their keys; a list
    item not found makes the value the path to that item (`_ItemGone`). Each live list
    passed and the item found in it go to `trail`, if given (for `owner`)."""
    mine: Any = recorded
    for depth, part in enumerate(path):
        if isinstance(part, int):
            if not isinstance(obj, list):
                return False, None
            mine = mine[part]
            items = obj
            present, obj = _item(mine, items, part)
            if not present:
                return False, _ItemGone(path[: depth + 1], mine)
            if trail is not None:
                trail.append((items, obj))
            continue
        if not isinstance(obj, Mapping) or part not in obj:
            return False, None
        obj, mine = obj[part], mine[part]
    return True, obj


class _ItemGone(NamedTuple):
    """A list item of the program's that the live list no longer has."""

    path: tuple[str | int, ...]
    recorded: Any


def _text(path: tuple[str | int, ...]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _same(recorded: Any, live: Any) -> bool:
    if recorded == live:
        return True
    # The API server spells some values its own way: 80 vs "80" in int-or-string fields.
    return (
        isinstance(recorded, (int, float))
        and not isinstance(recorded, bool)
        and str(recorded) == live
    )


#: Maps whose values are quantities (resources' limits and requests, a quota's hard, a
#: LimitRange's bounds, a claim's capacity), and fields that are one (an emptyDir's size).
_QUANTITY_MAPS = frozenset(
    {
        *("limits", "requests", "overhead"),  # a container's, a pod's
        *("hard", "capacity"),  # a ResourceQuota's, a claim's or volume's
        *("min", "max", "default", "defaultRequest", "maxLimitRequestRatio"),  # a LimitRange's
    }
)
_QUANTITY_FIELDS = frozenset({"sizeLimit"})
#: A suffix's power of 10 (decimal SI) or of 2 (binary SI).
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_QUANTITY = re.compile(r"([+-]?(?:\d+\.?\d*|\.\d+))(?:([eE][+-]?\d+)|([a-zA-Z]*))")


def _amount(value: Any) -> Fraction | None:
    """A Kubernetes quantity's amount (`"500m"`, `0.5`, `"1Gi"`, `"1e9"`), or None."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return None
    found = _QUANTITY.fullmatch(str(value).strip())
    if found is None:
        return None
    # fractions (and decimal, ~1.5 ms to import) only once two quantities are compared.
    from fractions import Fraction

    number, exponent, suffix = found.groups()
    if exponent:
        return Fraction(number) * Fraction(10) ** int(exponent[1:])
    suffix = suffix or ""
    if suffix in _DECIMAL:
        return Fraction(number) * Fraction(10) ** _DECIMAL[suffix]
    if suffix in _BINARY:
        return Fraction(number) * Fraction(2) ** _BINARY[suffix]
    return None


def _same_quantity(path: tuple[str | int, ...], recorded: Any, live: Any) -> bool:
    """Whether two spellings of a quantity field are one amount: the API server keeps its
    canonical form (0.5 → "500m", "1024Mi" → "1Gi")."""
    if not (path[-1] in _QUANTITY_FIELDS or (len(path) > 1 and path[-2] in _QUANTITY_MAPS)):
        return False
    amount = _amount(recorded)
    return amount is not None and amount == _amount(live)


def _string_data(live: Mapping[str, Any], key: str | int) -> tuple[bool, Any]:
    """A Secret's `stringData` is write-only: the server keeps it base64-encoded in `data`."""
    data = live.get("data")
    if not isinstance(data, Mapping) or key not in data:
        return False, None
    encoded = data[key]
    if not isinstance(encoded, str):
        return True, encoded
    try:
        return True, base64.b64decode(encoded, validate=True).decode()
    except (ValueError, UnicodeDecodeError):
        return True, encoded


#: One step down a managedFields trie: a field's key (`f:name`), or a list item as
#: (its live position, the live item), named by its merge keys or its position.
_Step = str | tuple[int, Any]


@functools.lru_cache(maxsize=4096)
def _merge_keys(key: str) -> tuple[tuple[str, Any], ...] | None:
    """A list item's merge keys from its fieldsV1 key (`k:{"name":"app"}`), or None.
    Cached: the same few keys (`k:{"name":"main"}`) recur across objects and managers."""
    try:
        keys = json.loads(key[2:])
    except ValueError:
        return None
    return tuple(keys.items()) if isinstance(keys, dict) else None


def _child(node: Mapping[str, Any], step: _Step) -> Any:
    """The fieldsV1 node under `node` for `step`, or None."""
    if isinstance(step, str):
        return node.get(step)
    return next(_item_nodes(node, step), None)


def _item_nodes(node: Mapping[str, Any], step: tuple[int, Any]) -> Iterator[Any]:
    """The fieldsV1 nodes under `node` that name the list item `step`: one, in a manager's
    trie; a union of tries (`fields_union`) may name it twice, by its place (`i:`, from a
    declaration) and by its merge keys (`k:`, from a manager)."""
    index, item = step
    for key, child in node.items():
        if key == f"i:{index}":
            yield child
        elif key.startswith("k:") and isinstance(item, Mapping):
            keys = _merge_keys(key)
            if keys is not None and all(k in item and item[k] == v for k, v in keys):
                yield child
        elif key.startswith("v:") and _set_value(key) == (item,):  # an item of a set (finalizers)
            yield child


@functools.lru_cache(maxsize=4096)
def _set_value(key: str) -> tuple[Any, ...]:
    """A set item's value from its fieldsV1 key (`v:"a"`), as a 1-tuple; () if it is none."""
    try:
        return (json.loads(key[2:]),)
    except ValueError:
        return ()


def _covers(fields: Any, steps: list[_Step]) -> tuple[bool, bool]:
    """(covers `steps` exactly, owns one of their parents whole): an empty node above
    the end is an atomic map or list (tolerations), set as one value."""
    node = fields
    for depth, step in enumerate(steps):
        if not isinstance(node, Mapping):
            return False, False
        if not node and depth:
            return False, True
        node = _child(node, step)
        if node is None:
            return False, False
    return True, False


def _steps(
    live: Mapping[str, Any], path: tuple[str | int, ...], recorded: Mapping[str, Any]
) -> list[_Step] | None:
    """`path` (the program's list positions) as steps down a managedFields trie, each list
    item the live one drift compared with (found through `recorded`); None if one is gone."""
    trail: list[tuple[list[Any], Any]] = []
    if any(isinstance(part, int) for part in path) and not _at(live, path, recorded, trail)[0]:
        return None
    found = iter(trail)
    steps: list[_Step] = []
    for part in path:
        if isinstance(part, int):
            items, item = next(found)
            steps.append((next(i for i, x in enumerate(items) if x is item), item))
        else:
            steps.append(f"f:{part}")
    return steps


def _names_keys(node: Any) -> bool:
    """Whether a fieldsV1 node names keys of a map (`f:app`): one server-side apply merges
    key by key (labels, a ConfigMap's data, a pod template's annotations). An atomic map (a
    Service's selector, a LabelSelector) is one value: every manager's node for it is empty,
    as is a scalar's. So an empty node is a granular map declared empty only where some
    manager names keys of that map; where none does, the value is one, set whole."""
    return isinstance(node, Mapping) and any(key.startswith("f:") for key in node)


def _names_items(node: Any) -> bool:
    """Whether a fieldsV1 node names items of a list (`v:"example.com/x"`, `k:{"name":"A"}`):
    one server-side apply merges item by item (finalizers, a container's env). An atomic list
    (a Role's rules) is one value, and every manager's node for it is empty."""
    return isinstance(node, Mapping) and any(key.startswith(("v:", "k:")) for key in node)


def _keyed_map(
    live: Mapping[str, Any], steps: list[_Step], names: Callable[[Any], bool] = _names_keys
) -> bool:
    """Whether a manager of `live` names keys of the map at `steps` (`_names_keys`), or
    items of the list there (`names=_names_items`)."""
    for entry in (live.get("metadata") or {}).get("managedFields") or ():
        node: Any = entry.get("fieldsV1") or {}
        for step in steps:
            node = _child(node, step) if isinstance(node, Mapping) else None
        if names(node):
            return True
    return False


def owner(
    live: Mapping[str, Any],
    path: tuple[str | int, ...],
    *,
    recorded: Mapping[str, Any],
    ours: str = "stackwright",
) -> str:
    """The field manager (other than `ours`) whose managedFields cover `path`, or "".

    A list item in `path` (the program's position) is the live item drift compared it
    with, found through `recorded`; in fieldsV1 that item is `k:{"name":"app"}` (its merge
    keys) or `i:1`, and a manager owning another item of the list (a sidecar) does not
    own it. A manager that set an atomic parent whole is named only if none owns the
    field itself. Runs per drifted field only.
    """
    steps = _steps(live, path, recorded)
    if steps is None:
        return ""
    meta = live.get("metadata") or {}
    whole = ""
    for entry in meta.get("managedFields") or ():
        manager = str(entry.get("manager", ""))
        if manager == ours:
            continue
        exact, parent = _covers(entry.get("fieldsV1") or {}, steps)
        if exact:
            return manager
        whole = whole or (manager if parent else "")
    return whole


def owned_part(
    live: Any, fields: Mapping[str, Any], managed: Mapping[str, Any] | None = None
) -> Any:
    """The part of `live` that a fieldsV1 trie names (one manager's, or `fields_union`'s),
    with its live values: list items found as `owner` finds them (`k:`, `v:`, `i:`; by each
    key that names one), a field whose node is empty (a value, or an atomic map or list set
    as one) whole.

    But a map whose keys `managed` (every manager's fields, `fields_union`) names one by one
    is granular (`_names_keys`): its empty node declared it empty (`annotations: {}`), and
    the keys others wrote into it since (`kubectl rollout restart`'s) are not part of it."""
    managed = managed or {}
    if not fields:
        return {} if isinstance(live, Mapping) and _names_keys(managed) else live
    if not isinstance(live, (Mapping, list)):
        return live
    if isinstance(live, Mapping):
        return {
            k: owned_part(v, fields[f"f:{k}"], managed.get(f"f:{k}"))
            for k, v in live.items()
            if f"f:{k}" in fields
        }
    out = []
    for index, item in enumerate(live):
        nodes = [*_item_nodes(fields, (index, item))]
        if nodes:
            within = fields_union(*_item_nodes(managed, (index, item)))
            out.append(owned_part(item, fields_union(*nodes), within))
    return out


def fields_union(*tries: Mapping[str, Any]) -> dict[str, Any]:
    """The fieldsV1 trie naming every field any of `tries` names."""
    out: dict[str, Any] = {}
    for trie in tries:
        for key, node in trie.items():
            out[key] = fields_union(out[key], node) if key in out else dict(node)
    return out


def declared_fields_of(declared: Any, live: Any) -> dict[str, Any]:
    """A declaration (kubectl's last-applied configuration) as the fieldsV1 trie it would
    own in `live`: its list items found in the live list as drift finds them (`_item`),
    each named by its live position (`i:`). A list of values is one value."""
    if isinstance(declared, Mapping):
        within = live if isinstance(live, Mapping) else {}
        children = {f"f:{k}": declared_fields_of(v, within.get(k)) for k, v in declared.items()}
        return {".": {}, **children} if children else {}
    if not (declared and isinstance(live, list) and all(isinstance(d, Mapping) for d in declared)):
        return {}
    out: dict[str, Any] = {}
    for index, item in enumerate(declared):
        present, found = _item(item, live, index)
        if present:
            at = next(i for i, x in enumerate(live) if x is found)
            out[f"i:{at}"] = declared_fields_of(item, found)
    return out or {".": {}}  # none of its items is live: none is declared


#: Maps an empty value of which applies no key (see `drifted`), whoever wrote their keys.
_KEYED_MAPS = (("metadata", "labels"), ("metadata", "annotations"))


def _claims_no_key(
    live: Mapping[str, Any],
    path: tuple[str | int, ...],
    recorded: Mapping[str, Any],
    value: Any,
    current: Any,
) -> bool:
    """Whether `value`, an empty map or list recorded at `path`, claims none of the keys or
    items of `current`, the live value there: that is a map or list as well, and granular,
    known (`_KEYED_MAPS`) or as its managers name its keys (`_names_keys`) or items
    (`_names_items`)."""
    if value == [] and isinstance(current, list):
        names = _names_items
    elif value == {} and isinstance(current, Mapping):
        if path in _KEYED_MAPS:
            return True
        names = _names_keys
    else:
        return False
    steps = _steps(live, path, recorded)
    return steps is not None and _keyed_map(live, steps, names)


def removed_by_its_ttl(recorded: Mapping[str, Any]) -> bool:
    """Whether a recorded object no longer in the cluster went as its own spec said: a Job
    recorded complete, with `ttlSecondsAfterFinished`, which the TTL-after-finished
    controller deletes once that time is up. Not drift: it did its work, and creating it
    again would run it again (terraform-provider-kubernetes#2531)."""
    group = str(recorded.get("apiVersion", "")).partition("/")[0]
    ttl = (recorded.get("spec") or {}).get("ttlSecondsAfterFinished")
    if (group, recorded.get("kind")) != ("batch", "Job") or not isinstance(ttl, int):
        return False
    conditions = (recorded.get("status") or {}).get("conditions") or ()
    return any(c.get("type") == "Complete" and c.get("status") == "True" for c in conditions)


#: The drift path of an object someone deleted that finalizers still hold (Terminating).
BEING_DELETED = "metadata.deletionTimestamp"


def drifted(
    recorded: Mapping[str, Any],
    live: Mapping[str, Any],
    *,
    ours: str = "stackwright",
    ignore: tuple[str, ...] = (),
) -> list[DriftedField]:
    """The fields of `recorded` (what was applied) whose live values differ.

    Paths under `ignore` (a resource's ignore_changes) are never drift: the
    program said others may change them.
    """
    out: list[DriftedField] = []
    items_gone: set[tuple[str | int, ...]] = set()
    for path, value in _leaves({k: v for k, v in recorded.items() if k not in _NOT_CONTENT}):
        if not path:
            continue
        text = _text(path)
        if within(text, ignore):
            continue
        present, current = _at(live, path, recorded)
        held_at = path
        if len(path) == 2 and path[0] == "stringData" and recorded.get("kind") == "Secret":
            present, current = _string_data(live, path[1])
            held_at = ("data", path[1])  # where the server keeps it, and who wrote it there
        if present and (_same(value, current) or _same_quantity(path, value, current)):
            continue
        if not present and isinstance(current, _ItemGone):
            # An env var or a port removed by hand is one drifted item, not a field each.
            item_path, item = current
            if item_path not in items_gone:
                items_gone.add(item_path)
                out.append(DriftedField(_text(item_path), item, None, ""))
            continue
        if not present and value in (None, {}, [], ""):
            continue  # an empty value the server drops is not a change
        if present and value == [] and current is None:
            continue  # nor one it returns as null (a Role's `rules: []`, no omitempty)
        if present and value in ({}, []) and _claims_no_key(live, path, recorded, value, current):
            # An empty map of labels or annotations (or any map server-side apply owns key by
            # key: a pod template's annotations, a ConfigMap's data) claims none of its keys:
            # the marks Stackwright adds to `annotations: {}`, or keys another manager adds
            # (`kubectl rollout restart`'s), are not drift. Not any empty map: an atomic one
            # (a NetworkPolicy's `podSelector: {}`, all pods) narrowed by someone is drift.
            # Likewise an empty list merged item by item (`finalizers: []`, a controller's
            # finalizer), not an atomic one (a Role's `rules: []`, a rule added by hand).
            continue
        if not present and path == ("metadata", "namespace"):
            continue  # a cluster-scoped object given one: the server drops it (as kubectl)
        out.append(
            DriftedField(
                text,
                value,
                current if present else None,
                owner(live, held_at, recorded=recorded, ours=ours) if present else "",
            )
        )
    if not _other_managers(live, ours):
        return out  # none but `ours` set a value whole: nothing grew (`_grown` names one)
    for path, value in _whole_values({k: v for k, v in recorded.items() if k not in _NOT_CONTENT}):
        text = _text(path)
        said = [f.path for f in out]
        if within(text, (*ignore, *said)) or any(within(p, (text,)) for p in said):
            continue  # ignored, or drifted already: a key of it changed, or it is in one
        grown = _grown(live, path, recorded, value, ours)
        if grown is not None:
            out.append(grown)
    return out


def _other_managers(live: Mapping[str, Any], ours: str) -> bool:
    """Whether a field manager other than `ours` holds fields of the live object: only one
    can have set a value whole since (most objects have none, and a no-op `up` checks each
    recorded object for drift: the walk below is skipped for them)."""
    entries = (live.get("metadata") or {}).get("managedFields") or ()
    return any(str(entry.get("manager", "")) != ours for entry in entries)


def _whole_values(
    value: Any, path: tuple[str | int, ...] = ()
) -> Iterator[tuple[tuple[str | int, ...], Any]]:
    """The non-empty maps and lists of maps inside `value`, with their paths (as `_leaves`
    walks it)."""
    if isinstance(value, Mapping) and value:
        if path:
            yield path, value
        for key, item in value.items():
            yield from _whole_values(item, (*path, key))
    elif isinstance(value, list) and value and all(isinstance(v, Mapping) for v in value):
        yield path, value
        for index, item in enumerate(value):
            yield from _whole_values(item, (*path, index))


def _grown(
    live: Mapping[str, Any],
    path: tuple[str | int, ...],
    recorded: Mapping[str, Any],
    value: Any,
    ours: str,
) -> DriftedField | None:
    """An atomic map or list the program set (a Service's selector, a LabelSelector, a
    Role's rules) that another manager has set whole since, with a key or an item added: one
    value, so it drifted, though each key and item the program set is still there. A map or
    list merged key by key (labels, a ConfigMap's data, a container's env) is not: keys others
    add to it are theirs. Nor one `ours` still holds whole: its keys the server defaulted
    (an env var's `fieldRef.apiVersion`) came with the program's apply."""
    present, current = _at(live, path, recorded)
    if not present:
        return None
    if isinstance(value, Mapping):
        names = _names_keys
        grown = isinstance(current, Mapping) and bool(current.keys() - value.keys())
    else:
        names = _names_items
        grown = isinstance(current, list) and len(current) > len(value)
    steps = _steps(live, path, recorded) if grown else None
    if steps is None or _keyed_map(live, steps, names):
        return None
    for entry in (live.get("metadata") or {}).get("managedFields") or ():
        if entry.get("manager") == ours and any(_covers(entry.get("fieldsV1") or {}, steps)):
            return None
    manager = owner(live, path, recorded=recorded, ours=ours)
    return DriftedField(_text(path), value, current, manager) if manager else None
