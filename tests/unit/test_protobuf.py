"""The protobuf request decoder: the envelope, the schemas, and what it refuses."""

from __future__ import annotations

import pytest

from stackwright.localcluster.protobuf import MAGIC, ProtobufError, decode


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
        (envelope("apps/v1", "Deployment", b""), "not Deployment (apps/v1)"),
        (
            MAGIC + field(1, field(1, "v1") + field(2, "ConfigMap")) + b"\x12\x05ab",
            "truncated field",
        ),
    ],
)
def test_what_it_cannot_read_is_refused(body: bytes, message: str) -> None:
    with pytest.raises(ProtobufError, match=message.replace("(", r"\(").replace(")", r"\)")):
        decode(body)
