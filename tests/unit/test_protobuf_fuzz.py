"""The protobuf decoder on bodies no client would send: it refuses them, and only so.

Whatever the bytes, `decode` returns an object or raises ProtobufError (which the server
answers with 415); never another exception (a 500 with a traceback) and never a large
allocation from a length or a number the body merely claims.
"""

from __future__ import annotations

import random
import tracemalloc
from pathlib import Path

import pytest
from test_protobuf import envelope, field

from stackwright.localcluster.protobuf import ProtobufError, decode

CAPTURED = Path(__file__).resolve().parents[1] / "data" / "protobuf"


def meta(*fields: bytes) -> bytes:
    return field(1, b"".join(fields))  # a ConfigMap whose ObjectMeta holds these fields


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (meta(field(1, 2**20)), "field 1 has wire type 0, its type needs 2"),  # name: a varint
        (meta(field(7, b"\x01")), "field 7 has wire type 2, its type needs 0"),  # generation
        (meta(field(1, b"\xff\xfe")), "cannot be read: 'utf-8' codec"),  # name not UTF-8
        (meta(field(8, field(1, 2**62))), "cannot be read"),  # creationTimestamp: year 10^11
        (meta(field(8, field(1, b"x"))), "field 1 has wire type 2, its type needs 0"),
        (meta(field(11, 5)), "field 11 has wire type 0, its type needs 2"),  # labels entry
        (meta(field(11, field(2, 5))), "field 2 has wire type 0, its type needs 2"),
        (meta(field(14, 5)), "field 14 has wire type 0, its type needs 2"),  # finalizers
        (field(2, b"\x0a\x01k\x10\x05"), "field 2 has wire type 0, its type needs 2"),  # data
        (meta() + b"\x19\x00\x00", "truncated field"),  # a fixed64 cut short
    ],
)
def test_a_value_of_the_wrong_type_is_refused(raw: bytes, message: str) -> None:
    with pytest.raises(ProtobufError, match=message):
        decode(envelope("v1", "ConfigMap", raw))


def test_mutated_kubectl_bodies_raise_only_protobuf_errors() -> None:
    bodies = [path.read_bytes() for path in sorted(CAPTURED.glob("*.bin"))]
    rng = random.Random(20261125)
    refused = 0
    tracemalloc.start()
    try:
        for _ in range(3000):
            body = bytearray(rng.choice(bodies))
            for _ in range(rng.randint(1, 4)):
                at = rng.randrange(len(body))
                choice = rng.random()
                if choice < 0.5:
                    body[at] = rng.randrange(256)
                elif choice < 0.7:
                    body[at:at] = rng.randbytes(rng.randint(1, 6))
                elif choice < 0.85:
                    del body[at : at + rng.randint(1, 8)]
                else:
                    body[at] ^= 1 << rng.randrange(3)  # another wire type, same field
            try:
                decode(bytes(body))
            except ProtobufError:
                refused += 1
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 16 * 2**20
    assert refused > 1000  # the mutations reach the checks, not only the envelope's
