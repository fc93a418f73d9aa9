"""The protobuf request decoder: the envelope, the generated tables, and what it refuses."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from stackwright.localcluster.protobuf import MAGIC, ProtobufError, decode

REPO = Path(__file__).resolve().parents[2]
CAPTURED = REPO / "tests" / "data" / "protobuf"
GENERATOR = REPO / "tools" / "gen_protobuf.py"


def varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def field(number: int, value: bytes | str | int) -> bytes:
    if isinstance(value, int):
        return varint(number << 3) + varint(value)
    data = value.encode() if isinstance(value, str) else value
    return varint(number << 3 | 2) + varint(len(data)) + data


def entry(number: int, key: str, value: bytes | str) -> bytes:
    return field(number, field(1, key) + field(2, value))


def envelope(api_version: str, kind: str, raw: bytes) -> bytes:
    return MAGIC + field(1, field(1, api_version) + field(2, kind)) + field(2, raw)


def test_a_secret_decodes_to_its_json_form() -> None:
    meta = field(1, "creds") + field(3, "shop") + entry(11, "owner", "helm") + field(14, "keep")
    meta += field(8, field(1, 1_700_000_000))
    raw = field(1, meta) + entry(2, "pw", b"\x00\xffsecret") + field(3, "Opaque") + field(5, 1)
    obj = decode(envelope("v1", "Secret", raw))
    assert obj == {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": "creds",
            "namespace": "shop",
            "labels": {"owner": "helm"},
            "finalizers": ["keep"],
            "creationTimestamp": "2023-11-14T22:13:20Z",
        },
        "data": {"pw": "AP9zZWNyZXQ="},
        "type": "Opaque",
        "immutable": True,
    }


def test_delete_options_decode_as_a_typed_client_sends_them() -> None:
    # Helm's uninstall purges its release Secrets with a protobuf DeleteOptions body.
    raw = field(1, 0) + field(2, field(1, "uid-1")) + field(4, "Background") + field(5, "All")
    assert decode(envelope("v1", "DeleteOptions", raw)) == {
        "apiVersion": "v1",
        "kind": "DeleteOptions",
        "gracePeriodSeconds": 0,
        "preconditions": {"uid": "uid-1"},
        "propagationPolicy": "Background",
        "dryRun": ["All"],
    }


def test_unknown_fields_are_skipped() -> None:
    raw = field(1, field(1, "cm") + field(99, "ignored")) + entry(2, "a", "b") + field(42, 7)
    assert decode(envelope("v1", "ConfigMap", raw)) == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "cm"},
        "data": {"a": "b"},
    }


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b'{"kind": "ConfigMap"}', "must start with the bytes"),
        (
            envelope("apiextensions.k8s.io/v1", "CustomResourceDefinition", b""),
            "not CustomResourceDefinition (apiextensions.k8s.io/v1); send JSON",
        ),
        (
            MAGIC + field(1, field(1, "v1") + field(2, "ConfigMap")) + b"\x12\x05ab",
            "truncated field",
        ),
    ],
)
def test_what_it_cannot_read_is_refused(body: bytes, message: str) -> None:
    with pytest.raises(ProtobufError, match=message.replace("(", r"\(").replace(")", r"\)")):
        decode(body)


@pytest.mark.parametrize("name", sorted(p.stem for p in CAPTURED.glob("*.bin")))
def test_kubectls_own_bodies_decode_to_its_dry_run_json(name: str) -> None:
    # The bytes kubectl 1.32 sent (its -v=9 log) for `create deployment --replicas=0`,
    # `create cronjob`, `create service nodeport`, `create ingress` and `create pdb`, and
    # what `--dry-run=client -o json` prints for the same command: Go's JSON of the object.
    # Go sends every non-pointer field, so this checks zeros (replicas: 0 kept, paused:
    # false dropped), IntOrString, embedded structs and nested messages at once.
    want = json.loads((CAPTURED / f"{name}.json").read_text())
    want.pop("status")  # servers write it; the decoder skips it
    assert decode((CAPTURED / f"{name}.bin").read_bytes()) == want


def test_special_types_embedded_fields_and_zeros() -> None:
    time = field(1, 1_700_000_000) + field(2, 123_456_000)
    http_get = field(2, field(1, 1) + field(3, "http"))  # IntOrString as a string
    probe = field(1, field(2, http_get)) + field(2, 0) + field(7, 0)
    resources = entry(1, "cpu", field(1, "250m")) + entry(2, "memory", b"")
    groups = field(4, varint(1000) + varint((1 << 64) - 5))  # packed, one negative
    container = (
        field(1, "app")
        + field(10, probe)
        + field(8, resources)
        + field(16, 0)
        + field(15, field(2, 0) + field(4, 0))  # privileged: false, runAsUser: 0
    )
    spec = field(2, container) + field(14, groups) + field(11, 0) + field(21, 0)
    meta = field(1, "web") + field(8, time) + field(9, b"")
    pod = decode(envelope("v1", "Pod", field(1, meta) + field(2, spec)))
    assert pod == {
        "apiVersion": "v1",
        "kind": "Pod",
        # deletionTimestamp came empty: a zero time, null as in Go's JSON
        "metadata": {
            "name": "web",
            "creationTimestamp": "2023-11-14T22:13:20Z",
            "deletionTimestamp": None,
        },
        "spec": {
            "containers": [
                {
                    "name": "app",
                    # ProbeHandler is embedded; terminationGracePeriodSeconds is a pointer,
                    # initialDelaySeconds is not (and so Go sent its zero without meaning it)
                    "livenessProbe": {
                        "httpGet": {"port": "http"},
                        "terminationGracePeriodSeconds": 0,
                    },
                    "resources": {"limits": {"cpu": "250m"}, "requests": {"memory": "0"}},
                    "securityContext": {"privileged": False, "runAsUser": 0},
                }
            ],
            "securityContext": {"supplementalGroups": [1000, -5]},
            "automountServiceAccountToken": False,
        },
    }


def test_raw_json_maps_of_lists_and_metadata_only_kinds() -> None:
    revision = field(1, field(1, "rev")) + field(2, field(1, b'{"spec": {"replicas": 2}}'))
    assert decode(envelope("apps/v1", "ControllerRevision", revision + field(3, 7)))["data"] == {
        "spec": {"replicas": 2}
    }
    extra = entry(5, "scopes", field(1, "a") + field(1, "b"))
    review = decode(envelope("authorization.k8s.io/v1", "SubjectAccessReview", field(2, extra)))
    assert review["spec"] == {"extra": {"scopes": ["a", "b"]}}
    whoami = decode(envelope("authentication.k8s.io/v1", "SelfSubjectReview", field(1, b"")))
    assert whoami == {
        "apiVersion": "authentication.k8s.io/v1",
        "kind": "SelfSubjectReview",
        "metadata": {},
    }


def test_the_generated_tables_are_current(tmp_path: Path) -> None:
    committed = REPO / "stackwright" / "localcluster" / "protobuf_schema.py"
    out = tmp_path / "protobuf_schema.py"
    subprocess.run([sys.executable, str(GENERATOR), "--out", str(out)], check=True)
    assert out.read_text() == committed.read_text(), "run `python tools/gen_protobuf.py`"
    check = subprocess.run([sys.executable, str(GENERATOR), "--check"], capture_output=True)
    assert check.returncode == 0


def test_the_generator_refuses_proto_text_it_cannot_read() -> None:
    sys.path.insert(0, str(REPO / "tools"))
    try:
        import gen_protobuf
    finally:
        sys.path.remove(str(REPO / "tools"))
    with pytest.raises(gen_protobuf.ProtoError, match=r"Thing: cannot read 'oneof kind \{'"):
        gen_protobuf.parse("package k8s.io.api.x.v1;\nmessage Thing {\n  oneof kind {\n}\n", "x")
    with pytest.raises(gen_protobuf.ProtoError, match="a field number is used twice"):
        gen_protobuf.parse(
            "package k8s.io.api.x.v1;\nmessage Thing {\n  optional string a = 1;\n"
            "  optional string b = 1;\n}\n",
            "x",
        )


def test_a_nil_list_without_omitempty_is_null_as_go_prints_it() -> None:
    # `kubectl create clusterrole --aggregation-rule=…` sends no rules; Go's JSON of that
    # ClusterRole says "rules": null (the field has no omitempty), PolicyRule verbs alike.
    selector = field(1, entry(1, "team", "a"))
    role = decode(envelope("rbac.authorization.k8s.io/v1", "ClusterRole", field(3, selector)))
    assert role["rules"] is None
    assert role["aggregationRule"] == {"clusterRoleSelectors": [{"matchLabels": {"team": "a"}}]}
    rule = decode(envelope("rbac.authorization.k8s.io/v1", "Role", field(2, field(2, ""))))
    assert rule["rules"] == [{"verbs": None, "apiGroups": [""]}]
