"""managedFields arithmetic: which fields of an adopted object its creator gives up.

A fieldsV1 trie names a set of paths: each key one step down (`f:name`, a list item by its
merge keys `k:{...}`, by its value `v:...` or its place `i:N`), an empty node a path that is
a member, and `.` inside a node with children that this node is a member too. The API
server writes each key in one canonical form, so two entries of one object name the same
path alike and keys compare as text.

Pure: no I/O. Must never change an entry it is not asked to (other appliers' `Apply`
entries, subresource writers').
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["fields_without", "taken_over"]


def fields_without(fields: Mapping[str, Any], taken: Mapping[str, Any]) -> dict[str, Any]:
    """The fieldsV1 trie naming each path `fields` names and `taken` does not, in the
    server's shape (a member without children is `{}`, one with children holds `.`)."""
    return _children_without(fields, taken)


def _children_without(fields: Mapping[str, Any], taken: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, node in fields.items():
        if key == ".":
            continue  # the enclosing path's own membership: its parent decides
        other = taken.get(key)
        if other is None:
            out[key] = node
            continue
        rest = _children_without(node, other)
        member = _member(node) and not _member(other)
        if rest:
            out[key] = {".": {}, **rest} if member else rest
        elif member:
            out[key] = {}
    return out


def _member(node: Mapping[str, Any]) -> bool:
    return not node or "." in node


def taken_over(entries: Sequence[Mapping[str, Any]], ours: str) -> list[dict[str, Any]] | None:
    """`entries` (an object's managedFields) with what `ours` applies (its `Apply` entries)
    taken out of every other manager's `Update` entry of the main resource, an entry left
    empty dropped, as kubectl's csaupgrade hands its client-side manager's fields to its
    server-side one; None when no such entry shares a field with ours.

    Another applier's `Apply` entry keeps what it shares: it declares those fields, and its
    conflicts with the stack are honest. A subresource's (status, scale) stays too: its
    writer owns those fields through another endpoint."""
    applied = [
        e.get("fieldsV1") or {}
        for e in entries
        if e.get("manager") == ours and e.get("operation") == "Apply" and not e.get("subresource")
    ]
    if not applied:
        return None
    out: list[dict[str, Any]] = []
    changed = False
    for entry in entries:
        if (
            entry.get("manager") == ours
            or entry.get("operation") != "Update"
            or entry.get("subresource")
        ):
            out.append(dict(entry))
            continue
        owned = entry.get("fieldsV1") or {}
        rest = owned
        for mine in applied:  # one entry per apiVersion the stack applied it as
            rest = fields_without(rest, mine)
        if rest == owned:
            out.append(dict(entry))
            continue
        changed = True
        if rest:
            out.append({**entry, "fieldsV1": rest})
    return out if changed else None
