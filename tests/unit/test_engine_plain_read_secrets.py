"""A secret configuration value the program reads through a plain getter (`Config.get`,
`require_object`, `get_int`, ...) is sealed wherever the stack records it: a resource's
inputs and outputs, the stack outputs — as a value marked secret is."""

from __future__ import annotations

from engine_stack import Declare, Stack, urn
from engine_stack import stack as stack  # the fixture

import stackwright.kubernetes as k8s
from stackwright.engine.events import StepStarted, shown_changes
from stackwright.engine.records import SecretTexts, secrets_held
from stackwright.sdk.config import Config
from stackwright.sdk.context import Program

CM = "kubernetes:core/v1:ConfigMap"
PASSWORD = "hunter2-xyz"


def reading(password: str) -> Declare:
    def declare(p: Program) -> None:
        p.config = {"shop:db": {"password": password, "host": "db.example"}, "shop:port": "15432"}
        p.secret_keys = frozenset({"shop:db", "shop:port"})
        p.secret_parts = {"shop:db": (password,), "shop:port": ("15432",)}
        cfg = Config()
        db = cfg.require_object("db")
        k8s.core.v1.ConfigMap(
            "c",
            metadata={"name": "c"},
            data={"pw": db["password"], "host": db["host"], "port": str(cfg.get_int("port"))},
        )
        p.export("db", db)
        p.export("port", cfg.get_int("port"))

    return declare


def test_a_secret_read_as_plain_is_recorded_as_one_marked_secret_is(stack: Stack) -> None:
    summary = stack.up(reading(PASSWORD))
    assert summary.ok, summary.failures
    recorded = stack.recorded(urn(CM, "c"))
    assert set(recorded.secret_paths) == {"data.pw", "data.port"}
    assert recorded.outputs["data"]["pw"] == PASSWORD  # decrypted as the state is read
    assert summary.outputs == {
        "db": {"host": "db.example", "password": "[secret]"},
        "port": "[secret]",
    }
    # Read back without the stack's key (an engine test's store has none; the CLI's seals
    # what lies at the secret paths: tests/integration/test_secrets_lifecycle.py).
    assert stack.state().outputs == {
        "db": {"host": "db.example", "password": "[secret]"},
        "port": "[secret]",
    }

    # A new value is a change of a secret: masked in the step's changes.
    stack.preview(reading("rotated-" + PASSWORD))
    (step,) = [e.step for e in stack.of(StepStarted) if e.step.urn == urn(CM, "c")]
    shown = {change.path: (change.old, change.new) for change in shown_changes(step)}
    assert shown == {"data.pw": ("[secret]", "[secret]")}


TEXTS = SecretTexts.of(["hunter2-xyz", "15432"])


def test_secrets_held_finds_equal_texts_parts_numbers_and_keys() -> None:
    value = {
        "metadata": {"name": "hunter2-xyz", "labels": {"a": "hunter2-xyz"}},
        "data": {
            "pw": "hunter2-xyz",
            "url": "pg://app:hunter2-xyz@h",
            "b64": "aHVudGVyMi14eXo=",
            "other": "fine",
            "port": 15432,
            "near": 154321,
            "flag": True,
        },
        "keyed": {"hunter2-xyz": "ok"},
        "list": [1, "hunter2-xyz"],
    }
    assert set(secrets_held(value, TEXTS)) == {
        "metadata.labels.a",  # kept encrypted; the object's id (its name) is left readable
        "data.pw",
        "data.url",
        "data.b64",
        "list[1]",
        "data.port",
        "keyed",
    }
    assert secrets_held(value, TEXTS, pruned=["data", "metadata", "keyed"]) == ["list[1]"]
    assert secrets_held("hunter2-xyz", TEXTS) == [""] and secrets_held(15432, TEXTS) == [""]
    assert secrets_held({"data": {"pw": "hunter2-xyz"}}, SecretTexts()) == []
    assert secrets_held({"data": {"pw": "nothing here"}}, TEXTS) == []
