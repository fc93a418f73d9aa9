"""The state each operation left, kept so that `stack export --version N` can print it.

A saved state is the `stack export` document of the stack as the operation behind its
history entry N left it, compressed with zlib. It is made in that operation's last
transaction from the rows as they are stored (`pack`): secrets stay sealed exactly as
`stack export` writes them, and no row is decoded, so saving costs one read of the
stack's rows and a compression, never a `load`. Reading one back (`unpack`) checks and
orders it as `load` does a stack's rows.

Pure: no I/O, no knowledge of tables; a saved state must never hold an opened secret.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Final

import orjson

from stackwright.model import ClusterIdentity
from stackwright.state import _document
from stackwright.state._codec import Invalid, pending_from_dict, resource_from_dict
from stackwright.state._integrity import check_and_order
from stackwright.state._records import Snapshot

#: zlib's fastest level: a 1,010-object state (1.5 MB of JSON) compresses to about a tenth
#: either way, and level 1 takes a few ms where the default took several times that.
LEVEL: Final = 1


def pack(
    *,
    project: str,
    stack: str,
    resources: Iterable[tuple[bytes, bool]],
    pending: Iterable[tuple[str, bytes]],
    outputs: bytes,
    former_names: Sequence[str],
    default_cluster: ClusterIdentity | None,
    released_names: Mapping[str, Sequence[str]],
) -> bytes:
    """The compressed document of a stack whose rows are `resources` ((payload, awaiting
    deletion) in stored order), `pending` ((op, payload) in the order begun) and `outputs`.

    The payloads are joined as they are: a resource row leaves `deletePending` to its
    column, so it is put back into the payload of a row awaiting deletion.
    """
    head = {"version": _document.version_for(released_names), "project": project, "stack": stack}
    parts = [orjson.dumps(head)[:-1], b',"resources":[']
    parts.append(
        b",".join(
            blob[:-1] + b',"deletePending":true}' if delete_pending else blob
            for blob, delete_pending in resources
        )
    )
    parts.append(b'],"pending":[')
    parts.append(
        b",".join(
            b'{"op":' + orjson.dumps(op) + b',"resource":' + blob + b"}" for op, blob in pending
        )
    )
    parts += [b'],"outputs":', outputs]
    if former_names:
        parts += [b',"formerNames":', orjson.dumps(list(former_names))]
    if default_cluster is not None:
        parts += [b',"defaultCluster":', orjson.dumps(default_cluster.to_dict())]
    if released_names:
        released = {urn: list(names) for urn, names in released_names.items()}
        parts += [b',"releasedNames":', orjson.dumps(released)]
    parts.append(b"}")
    return zlib.compress(b"".join(parts), LEVEL)


def unpack(blob: bytes, version: int) -> Snapshot:
    """The saved state in `blob` (secrets sealed as stored), checked and in dependency
    order, as the project and stack it was saved under; `version` is the stack's state
    version it was saved at. Raises Invalid saying what is damaged."""
    try:
        document = orjson.loads(zlib.decompress(blob))
    except (zlib.error, orjson.JSONDecodeError) as error:
        raise Invalid(f"it cannot be read ({error})") from None
    if not isinstance(document, dict) or document.get("version") not in _document.READS:
        raise Invalid("it is not a state document")
    project, stack = document.get("project"), document.get("stack")
    if not isinstance(project, str) or not isinstance(stack, str):
        raise Invalid("it names no project and stack")
    resources = [
        resource_from_dict(item, f"resources[{i}]", project=project, stack=stack)
        for i, item in enumerate(_list(document, "resources"))
    ]
    pending = [
        pending_from_dict(item, f"pending[{i}]", project=project, stack=stack)
        for i, item in enumerate(_list(document, "pending"))
    ]
    outputs = document.get("outputs")
    former = document.get("formerNames", [])
    if not isinstance(outputs, dict) or not isinstance(former, list):
        raise Invalid("its outputs or former names are not what a state holds")
    try:
        cluster = (
            ClusterIdentity.from_dict(document["defaultCluster"])
            if "defaultCluster" in document
            else None
        )
    except ValueError as error:
        raise Invalid(f"its 'defaultCluster' {error}") from None
    released = _document.released_from(
        document.get("releasedNames", {}), project=project, stack=stack
    )
    return Snapshot(
        project=project,
        stack=stack,
        resources=check_and_order(resources, pending),
        pending=pending,
        outputs=outputs,
        version=version,
        former_names=tuple(str(name) for name in former),
        default_cluster=cluster,
        released_names=released,
    )


def _list(document: dict[str, object], key: str) -> list[object]:
    value = document.get(key)
    if not isinstance(value, list):
        raise Invalid(f"its {key!r} is not a list")
    return value


def version_spans(numbers: Iterable[int]) -> str:
    """`1-3, 5, 8-9`: version numbers as a message can list them, however many there are."""
    runs: list[list[int]] = []
    for number in sorted(set(numbers)):
        if runs and number == runs[-1][1] + 1:
            runs[-1][1] = number
        else:
            runs.append([number, number])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)
