"""A step's field changes as a person reads them: a changed list told item by item.

The plan compares lists of one length index by index and gives one change for a list
whose length changed; both read badly when an entry is added to or removed from an env
list or a container's ports (the whole list on one line, or every later entry shown as
renamed). Here a list of objects is paired by the key Kubernetes merges it by (drift's
`ITEM_KEYS`: `env[name=B]`, `volumeMounts[mountPath=/data]`), and any other list by
what stayed equal (`+ args[2]: "-v"`).

Secrets are masked item by item: an item's secret paths are translated from its place
on each side to the item, so an entry that moved is masked where it is, and a plain
neighbour is never masked by the secret's old position. Must never show a secret: a
list that is secret as a whole is shown as the plan's one change, masked.

Pure, for displays only: the plan's changes (and `--json`'s `changes`) are left as they are.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterator, Mapping
from typing import Any

from stackwright.engine.drift import ITEM_KEYS
from stackwright.engine.events import shown_change, within
from stackwright.engine.plan import ABSENT, FieldChange, Step, change_keys, diff, lookup
from stackwright.model import paths_below
from stackwright.sdk.output import PathKey, join_path

__all__ = ["readable_changes"]

Keys = tuple[PathKey, ...]


def readable_changes(step: Step) -> list[FieldChange]:
    """The step's field changes, secrets masked and unknowns spelled out, with each list
    whose items moved or whose length changed told item by item."""
    olds = list(step.old.secret_paths) if step.old else []
    news = list(step.new.secret_paths) if step.new else []
    old = step.old.inputs if step.old else ABSENT
    new = step.new.inputs if step.new else ABSENT
    return [
        told
        for change in _regrouped(list(step.changes), old, new)
        for told in _told(change, olds, news, "")
    ]


def _regrouped(changes: list[FieldChange], old: Any, new: Any) -> list[FieldChange]:
    """`changes` of `old` into `new` with the per-index changes of each keyed list whose
    items do not line up (an entry removed and another added, the length the same: they
    would read as renames) made one change of the whole list, in the place of its first."""
    lists = _shifted_lists(changes, old, new)
    if not lists:
        return changes
    out: list[FieldChange] = []
    told: set[Keys] = set()
    for change in changes:
        keys = change_keys(change)
        at = next((p for p in lists if keys[: len(p)] == p and len(keys) > len(p)), None)
        if at is None:
            out.append(change)
        elif at not in told:
            told.add(at)
            out.append(FieldChange(_path(at), lookup(old, at), lookup(new, at)))
    return out


def _shifted_lists(changes: list[FieldChange], old: Any, new: Any) -> list[Keys]:
    found: list[Keys] = []
    for change in changes:
        keys = change_keys(change)
        if len(keys) < 2 or not isinstance(keys[-2], int) or keys[-1] not in ITEM_KEYS:
            continue
        at = keys[:-2]
        before, after = lookup(old, at), lookup(new, at)
        lists = isinstance(before, list) and isinstance(after, list)
        if lists and _item_key(before, after) == keys[-1]:
            found.append(at)
    # An outer list told by item tells what changed in the lists within it too.
    return [p for p in found if not any(p[: len(o)] == o and p != o for o in found)]


def _path(keys: Keys) -> str:
    path = ""
    for key in keys:
        path = join_path(path, key if isinstance(key, str | int) else str(key))
    return path


def _told(
    change: FieldChange, olds: list[str], news: list[str], shown_at: str
) -> Iterator[FieldChange]:
    """`change` (its path in the frame of the secret paths `olds` and `news`, which
    `shown_at` names for a person) masked, a changed list item by item."""
    items = _items(change, olds, news)
    if items is None:
        masked = shown_change(change, [*olds, *news])
        yield FieldChange(_join(shown_at, masked.path), masked.old, masked.new)
        return
    for name, part, old_secrets, new_secrets in items:
        yield from _told(part, old_secrets, new_secrets, _join(shown_at, name))


def _join(head: str, path: str) -> str:
    if not head or not path:
        return head or path
    return head + path if path.startswith("[") else f"{head}.{path}"


#: One item of a changed list: how it is named (`env[name=B]`), its change in its own
#: frame, and the secret paths of its old and of its new self, from the item.
_Item = tuple[str, FieldChange, list[str], list[str]]


def _items(change: FieldChange, olds: list[str], news: list[str]) -> list[_Item] | None:
    old, new = change.old, change.new
    if not (isinstance(old, list) and isinstance(new, list)):
        return None
    if change.path and within(change.path, [*olds, *news]):
        return None  # the list is in a secret
    old_below = paths_below(olds, change.path) if change.path else olds
    new_below = paths_below(news, change.path) if change.path else news
    if "" in old_below or "" in new_below:
        return None  # the list is one secret
    key = _item_key(old, new)

    def item(name: str, i: int | None, j: int | None) -> _Item:
        before = old[i] if i is not None else ABSENT
        after = new[j] if j is not None else ABSENT
        return (
            f"{change.path}{name}",
            FieldChange("", before, after),
            paths_below(old_below, f"[{i}]") if i is not None else [],
            paths_below(new_below, f"[{j}]") if j is not None else [],
        )

    out: list[_Item] = []
    if key is not None:

        def named(i: int | None, j: int | None, value: Any) -> str:
            # By its place where its key is secret on a side (or the whole entry is): the
            # label would show it.
            hidden = [
                *(paths_below(old_below, f"[{i}]") if i is not None else ()),
                *(paths_below(new_below, f"[{j}]") if j is not None else ()),
            ]
            if "" in hidden or within(key, hidden):
                return f"[{j if j is not None else i}]"
            return f"[{key}={value}]"

        after = {entry[key]: j for j, entry in enumerate(new)}
        before = {entry[key] for entry in old}
        for i, entry in enumerate(old):
            j = after.get(entry[key])
            out += _changed(item(named(i, j, entry[key]), i, j))
        out += [
            item(named(None, j, entry[key]), None, j)
            for j, entry in enumerate(new)
            if entry[key] not in before
        ]
        return out
    # No key: what stayed equal pairs the rest, as a line diff does (one opcode list).
    matcher = difflib.SequenceMatcher(None, _spelled(old), _spelled(new), autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if tag == "replace" and i2 - i1 == j2 - j1:  # changed in place: told field by field
            for i, j in zip(range(i1, i2), range(j1, j2), strict=True):
                pair = item(f"[{j}]", i, j)
                # Only its place makes them one: a secret on one side masks itself alone.
                out += (
                    [item(f"[{i}]", i, None), item(f"[{j}]", None, j)]
                    if pair[2] or pair[3]
                    else _changed(pair)
                )
            continue
        out += [item(f"[{i}]", i, None) for i in range(i1, i2)]
        out += [item(f"[{j}]", None, j) for j in range(j1, j2)]
    return out


def _changed(pair: _Item) -> list[_Item]:
    """An item on both sides, split into its field changes (none if it is the same)."""
    name, change, old_secrets, new_secrets = pair
    if change.kind != "update" or "" in old_secrets or "" in new_secrets:
        return [pair]  # added, removed, or one secret: told (and masked) whole
    parts = _regrouped(diff(change.old, change.new), change.old, change.new)
    return [(name, part, old_secrets, new_secrets) for part in parts]


def _spelled(items: list[Any]) -> list[str]:
    return [json.dumps(item, sort_keys=True, default=repr) for item in items]


def _item_key(old: list[Any], new: list[Any]) -> str | None:
    """The merge key that names every item of both lists once on each side (a scalar), in
    drift's order: name, mountPath, containerPort, port, … (two mounts of one volume share
    a name, not a mountPath)."""
    items = [*old, *new]
    if not items or not all(isinstance(item, Mapping) for item in items):
        return None
    for key in ITEM_KEYS:
        if all(type(item.get(key)) in (str, int) for item in items) and all(
            len({item[key] for item in side}) == len(side) for side in (old, new)
        ):
            return key
    return None
