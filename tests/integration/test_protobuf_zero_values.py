"""The decoder's zero-value rule (tools/gen_protobuf.py's KEEP_ZERO) against kubectl's Go types.

Go's protobuf writer sends every non-pointer field, zero or not; its JSON writer prints a
zero only for pointers and fields without `omitempty`, and prints a nil list or map
without `omitempty` as null. kubectl's `set env / selector / subject --local -o json`
read a file into the typed Go object and print it back, so an object with every scalar
at its zero value shows which zeros Go prints, and one without its lists which nil lists
it prints: exactly what the decoder must keep, or write as null. A field that vanishes
even when set is one this kubectl does not know (newer than it), and says nothing.
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
    message: str, scalars: dict[str, Any], omit: str = "", depth: int = 0, listed: bool = False
) -> dict[str, Any]:
    """An object of `message` with every field present, scalars taken from `scalars`; `omit`
    leaves out every list and map ("all") or all but lists of messages ("scalar")."""
    out: dict[str, Any] = {}
    for name, label, type_, _ in MESSAGES[message].values():
        if name in ("status", "metadata") or depth > 12:
            continue
        leave_out = omit == "all" or (omit == "scalar" and type_ not in MESSAGES)
        if label != "one" and name != "containers" and leave_out:  # `set env` needs a container
            continue
        if listed and name in MERGE_KEYS and type_ == "string":
            value: Any = "x"
        elif type_ in scalars:
            value = scalars[type_]
        elif type_ in SPECIAL_SAMPLE:
            value = SPECIAL_SAMPLE[type_]
        elif type_ in MESSAGES:
            value = sample(type_, scalars, omit, depth + 1, listed or label != "one")
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


def fields_under(
    message: str, prefix: str = "", depth: int = 0
) -> dict[str, tuple[str, str, bool]]:
    """Every scalar, list and map field under `message`, by path:
    (message.field, "scalar" or "list", whether Go prints it at its zero / when nil)."""
    out: dict[str, tuple[str, str, bool]] = {}
    for name, label, type_, keeps_zero in MESSAGES[message].values():
        if name in ("status", "metadata") or depth > 12:
            continue
        path = f"{prefix}.{name}" if name else prefix
        if label != "one" and name:
            out[path] = (f"{message}.{name}", "list", keeps_zero)
        if label == "repeated":
            path += "[0]"
        elif label == "map":
            path += ".k"
        if type_ in ZERO and label == "one":
            out[path] = (f"{message}.{name}", "scalar", keeps_zero)
        elif type_ in MESSAGES:
            out.update(fields_under(type_, path, depth + 1))
    return out


MISSING = object()


def lookup(obj: Any, path: str) -> Any:
    """The value at `path` (None where JSON has null), or MISSING."""
    for part in path.strip(".").split("."):
        index = None
        if part.endswith("[0]"):
            part, index = part[:-3], 0
        if not isinstance(obj, dict) or part not in obj:
            return MISSING
        obj = obj[part]
        if index is not None:
            if not obj:
                return MISSING
            obj = obj[index]
    return obj


def round_trip(
    tmp_path: Path, kind: str, args: list[str], scalars: dict[str, Any], omit: str = ""
) -> Any:
    (api_version,) = [v for (v, k) in KINDS if k == kind]
    obj = {"apiVersion": api_version, "kind": kind, "metadata": {"name": "probe"}}
    obj.update(sample(KINDS[(api_version, kind)], scalars, omit))
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
        known = round_trip(tmp_path, kind, args, NONZERO)
        zeros = round_trip(tmp_path, kind, args, ZERO)
        without = [round_trip(tmp_path, kind, args, NONZERO, omit) for omit in ("all", "scalar")]
        for path, (field, sort, keeps) in fields_under(KINDS[(api_version, kind)]).items():
            if lookup(known, path) is MISSING:
                continue  # a field this kubectl does not know
            if sort == "scalar":
                zero = lookup(zeros, path)
                if zero not in (MISSING, "", 0, False):
                    continue  # a merge key, which stays set
                prints = zero is not MISSING
            else:
                parent = path.rpartition(".")[0]
                seen = [lookup(o, path) for o in without if lookup(o, parent) is not MISSING]
                if not seen:
                    continue  # never sent without it while its parent was there
                prints = seen[0] is None
            if prints != keeps:
                wrong.append(f"{field} (as {kind}{path}): Go prints it {sort} zero: {prints}")
    assert not wrong, "fix KEEP_ZERO in tools/gen_protobuf.py:\n" + "\n".join(sorted(set(wrong)))
