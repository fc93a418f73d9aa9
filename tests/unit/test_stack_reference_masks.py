"""What a stack reference's secret output masks in messages and shown values.

From a tour: an output exported secret as a whole (`sw.Output.secret({...})`) made plain
values of the reading stack show as [secret] (a namespace `default`, an engine name
`postgres`). Not a stack-reference slip: the exporting stack declared every string of
that value secret, and each is remembered as a secret the configuration's are (a
secret object read with `require_secret_object` alike): four characters or more masked
wherever they appear, shorter ones only where a message quotes them whole, numbers
never. The way to keep the other parts readable is to export only the secret parts as
secrets, which is what these tests pin.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

import stackwright as sw
from stackwright.errors import forget_secrets, redact, redact_within
from stackwright.model import SecretValue
from stackwright.sdk.context import Program, running

WHOLE = {"namespace": "default", "user": "app", "port": 5432, "token": "s3cr3t-token"}
#: What each kind of value shows as, after the secret is read.
SHOWN = {
    "default": "[secret]",  # a part of the secret, four characters or more: masked
    'user "app" refused': 'user "[secret]" refused',  # a short part, quoted whole
    "app": "app",  # a short part standing alone, as a plain value: shown
    "5432": "5432",  # a number: never masked by its text
    "token s3cr3t-token": "token [secret]",
}


@pytest.fixture(autouse=True)
def forgotten() -> Iterator[None]:
    forget_secrets()
    yield
    forget_secrets()


def shown() -> dict[str, str]:
    return {text: redact(text) for text in SHOWN}


def test_an_output_secret_as_a_whole_masks_its_parts_as_a_secret_config_object_does() -> None:
    read = {"db": SecretValue(WHOLE)}
    with running(Program("app", "dev", read_stack=lambda name: read)):
        sw.StackReference("platform/prod").require_output("db")
    assert shown() == SHOWN
    forget_secrets()
    config = {"app:db": json.dumps(WHOLE)}
    with running(Program("app", "dev", config=config, secret_keys=frozenset(config))):
        sw.Config().require_secret_object("db")
    assert shown() == SHOWN


def test_only_the_secret_parts_of_an_output_mask_plain_values() -> None:
    # `{"namespace": ns, "token": sw.Output.secret(t)}` exported: the namespace stays plain.
    parts: dict[str, Any] = {**WHOLE, "token": SecretValue(WHOLE["token"])}
    read = {"db": parts, "engine": "postgres"}
    with running(Program("app", "dev", read_stack=lambda name: read)):
        ref = sw.StackReference("platform/prod")
        assert ref.require_output("db").is_secret  # a secret inside: secret as a whole
        assert not ref.require_output("engine").is_secret
    assert redact_within({"namespace": "default", "engine": "postgres"}) == {
        "namespace": "default",
        "engine": "postgres",
    }
    assert redact('user "app" refused') == 'user "app" refused'
    assert redact("token s3cr3t-token") == "token [secret]"
