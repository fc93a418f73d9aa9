"""The decoder's zero-value rule (tools/gen_protobuf.py's KEEP_ZERO) against kubectl's Go types.

Go's protobuf writer sends every non-pointer field, zero or not; its JSON writer prints a
zero only for pointers and fields without `omitempty`. kubectl's `set env / selector /
subject --local -o json` read a file into the typed Go object and print it back, so an
object with every scalar at its zero value shows which zeros Go prints: exactly the
fields whose zero the decoder must keep. A field that vanishes even when non-zero is one
this kubectl does not know (newer than it), and says nothing.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from stackwright.localcluster.protobuf_schema import KINDS, MESSAGES

pytestmark = pytest.mark.integration

ZERO = {"string": "", "bool": False, "int32": 0, "int64": 0}
NONZERO = {"string": "x", "bool": True, "int32": 1, "int64": 1}
SPECIAL_SAMPLE: dict[str, Any] = {"intorstr": 1, "quantity": "1", "strings": ["x"]}
#: List entries need their strategic-merge key, so these strings stay set in every pass.
MERGE_KEYS = frozenset({"name", "mountPath", "devicePath", "ip", "topologyKey"})

#: (kubectl arguments after the file, kinds): the commands that round-trip a typed object.
ORACLES = [
    (["set", "env", "FOO=bar"], ["Pod", "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet"]),
    (["set", "env", "FOO=bar"], ["Job", "CronJob", "ReplicationController"]),
    (["set", "selector", "a=b"], ["Service"]),
    (["set", "subject", "--user=u"], ["RoleBinding", "ClusterRoleBinding"]),
]


def sample(
    message: str, scalars: dict[str, Any], depth: int = 0, listed: bool = False
) -> dict[str, Any]:
    """An object of `message` with every field present, scalars taken from `scalars`."""
    out: dict[str, Any] = {}
    for name, label, type_, _ in MESSAGES[message].values():
        if name in ("status", "metadata") or depth > 12:
            continue
        if listed and name in MERGE_KEYS and type_ == "string":
            value: Any = "x"
        elif type_ in scalars:
            value = scalars[type_]
        elif type_ in SPECIAL_SAMPLE:
            value = SPECIAL_SAMPLE[type_]
        elif type_ in MESSAGES:
            value = sample(type_, scalars, depth + 1, listed or label != "one")
        else:
            continue  # time, json, bytes: not scalars whose zero is in question
        if not name:
            out.update(value)
        elif label == "repeated":
            out[name] = [value]
        elif label == "map":
            out[name] = {"k": value}
        else:
            out[name] = value
    return out


def scalar_paths(message: str, prefix: str = "", depth: int = 0) -> dict[str, tuple[str, bool]]:
    """Every scalar field under `message`: path → (message.field, whether its zero is kept)."""
    out: dict[str, tuple[str, bool]] = {}
    for name, label, type_, keeps_zero in MESSAGES[message].values():
        if name in ("status", "metadata") or depth > 12:
            continue
        path = f"{prefix}.{name}" if name else prefix
        if label == "repeated":
            path += "[0]"
        elif label == "map":
            path += ".k"
        if type_ in ZERO and label == "one":
            out[path] = (f"{message}.{name}", keeps_zero)
        elif type_ in MESSAGES:
            out.update(scalar_paths(type_, path, depth + 1))
    return out


def lookup(obj: Any, path: str) -> Any:
    """The value at `path`, or None when it is not there."""
    for part in path.strip(".").split("."):
        index = None
        if part.endswith("[0]"):
            part, index = part[:-3], 0
        if not isinstance(obj, dict) or part not in obj:
            return None
        obj = obj[part]
        if index is not None:
            if not obj:
                return None
            obj = obj[index]
    return obj


def round_trip(tmp_path: Path, kind: str, args: list[str], scalars: dict[str, Any]) -> Any:
    (api_version,) = [v for (v, k) in KINDS if k == kind]
    obj = {"apiVersion": api_version, "kind": kind, "metadata": {"name": "probe"}}
    obj.update(sample(KINDS[(api_version, kind)], scalars))
    path = tmp_path / f"{kind}.json"
    path.write_text(json.dumps(obj))
    result = subprocess.run(
        ["kubectl", *args, "--local", "-f", str(path), "-o", "json"],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(result.stdout)


@pytest.mark.parametrize(("args", "kinds"), ORACLES, ids=lambda v: "-".join(v[:2]))
def test_the_zeros_the_decoder_keeps_are_the_ones_go_prints(
    tmp_path: Path, args: list[str], kinds: list[str]
) -> None:
    wrong: list[str] = []
    for kind in kinds:
        (api_version,) = [v for (v, k) in KINDS if k == kind]
        zeros = round_trip(tmp_path, kind, args, ZERO)
        known = round_trip(tmp_path, kind, args, NONZERO)
        for path, (field, keeps) in scalar_paths(KINDS[(api_version, kind)]).items():
            zero = lookup(zeros, path)
            if lookup(known, path) is None or zero not in (None, "", 0, False):
                continue  # unknown to this kubectl, or a merge key that stays set
            if (zero is not None) != keeps:
                wrong.append(f"{field} (as {kind}{path}): Go prints its zero: {not keeps}")
    assert not wrong, "fix KEEP_ZERO in tools/gen_protobuf.py:\n" + "\n".join(sorted(set(wrong)))
