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
from collections.abc import Iterator, Mapping
from typing import Any

from stackwright.engine.events import DriftedField, within

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


def _at(obj: Any, path: tuple[str | int, ...]) -> tuple[bool, Any]:
    for part in path:
        if isinstance(part, int):
            if not isinstance(obj, list) or part >= len(obj):
                return False, None
        elif not isinstance(obj, Mapping) or part not in obj:
            return False, None
        obj = obj[part]
    return True, obj


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


def _string_data(live: Mapping[str, Any], key: str | int) -> tuple[bool, Any]:
    """A Secret's `stringData` is write-only: the server keeps it base64-encoded in `data`."""
    present, encoded = _at(live, ("data", key))
    if not present or not isinstance(encoded, str):
        return present, encoded
    try:
        return True, base64.b64decode(encoded, validate=True).decode()
    except (ValueError, UnicodeDecodeError):
        return True, encoded


def owner(
    live: Mapping[str, Any], path: tuple[str | int, ...], *, ours: str = "stackwright"
) -> str:
    """The field manager (other than `ours`) whose managedFields cover `path`, or ""."""
    meta = live.get("metadata") or {}
    for entry in meta.get("managedFields") or ():
        manager = str(entry.get("manager", ""))
        if manager == ours:
            continue
        fields = entry.get("fieldsV1") or {}
        node: Any = fields
        covered = True
        for part in path:
            if isinstance(part, int) or not isinstance(node, Mapping):
                # list items are keyed by their merge keys (k:{...}); owning the list entry is enough
                break
            key = f"f:{part}"
            if key not in node:
                covered = False
                break
            node = node[key]
        if covered:
            return manager
    return ""


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
    for path, value in _leaves({k: v for k, v in recorded.items() if k not in _NOT_CONTENT}):
        if not path:
            continue
        text = _text(path)
        if within(text, ignore):
            continue
        present, current = _at(live, path)
        held_at = path
        if len(path) == 2 and path[0] == "stringData" and recorded.get("kind") == "Secret":
            present, current = _string_data(live, path[1])
            held_at = ("data", path[1])  # where the server keeps it, and who wrote it there
        if present and _same(value, current):
            continue
        if not present and value in (None, {}, [], ""):
            continue  # an empty value the server drops is not a change
        out.append(
            DriftedField(
                text,
                value,
                current if present else None,
                owner(live, held_at, ours=ours) if present else "",
            )
        )
    return out
