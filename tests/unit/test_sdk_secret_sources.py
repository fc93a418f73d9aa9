"""Secrets from outside the program (`secret_from_*`) and stack references, in a program."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import stackwright as sw
from stackwright.errors import UsageError
from stackwright.model import SecretValue
from stackwright.sdk.context import Program, running
from stackwright.sdk.output import unwrap_secrets


def value_of(output: sw.Output[Any]) -> tuple[Any, list[str]]:
    return unwrap_secrets(output.resolve(lambda resource: None))


def test_secret_from_env_and_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SW_TEST_TOKEN", "from-the-env")
    (tmp_path / "token").write_text("from-the-file\n")
    with running(Program("shop", "dev")):
        env = sw.secret_from_env("SW_TEST_TOKEN")
        file = sw.secret_from_file(tmp_path / "token")
        assert env.is_secret and file.is_secret
        assert value_of(env) == ("from-the-env", [""])
        assert value_of(file) == ("from-the-file", [""])
        with pytest.raises(UsageError, match="SW_TEST_MISSING is not set"):
            sw.secret_from_env("SW_TEST_MISSING")
        with pytest.raises(UsageError, match="cannot read secret"):
            sw.secret_from_file(tmp_path / "nope")


def test_a_registered_vault() -> None:
    class Vault:
        def read(self, path: str) -> str:
            return {"kv/app#token": "t0ken-value"}[path]

    sw.register_secret_source("test-vault", Vault())
    with running(Program("shop", "dev")):
        assert value_of(sw.secret_from("test-vault", "kv/app#token")) == ("t0ken-value", [""])
        with pytest.raises(UsageError, match="cannot read secret 'kv/other'"):
            sw.secret_from("test-vault", "kv/other")
        with pytest.raises(UsageError, match="no secret source 'nowhere'"):
            sw.secret_from("nowhere", "x")
    with pytest.raises(TypeError):
        sw.register_secret_source("broken", object())  # type: ignore[arg-type]


def test_stack_reference_outputs_keep_their_secrecy() -> None:
    outputs = {"namespace": "shop", "kubeconfig": SecretValue("apiVersion: v1"), "n": 3}
    asked: list[str] = []

    def read(name: str) -> dict[str, Any]:
        asked.append(name)
        return outputs

    with running(Program("app", "dev", read_stack=read)):
        ref = sw.StackReference("acme/platform/dev")
        assert asked == ["acme/platform/dev"]
        assert not ref.get_output("namespace").is_secret
        assert value_of(ref.get_output("namespace")) == ("shop", [])
        kubeconfig = ref.require_output("kubeconfig")
        assert kubeconfig.is_secret and value_of(kubeconfig) == ("apiVersion: v1", [""])
        assert ref.outputs.is_secret  # one secret output makes the whole map secret
        assert value_of(ref.get_output("missing"))[0] is None
        with pytest.raises(UsageError, match=r"no output 'missing'.*kubeconfig, n, namespace"):
            ref.require_output("missing")
        assert value_of(ref.get_secret_output("n")) == (3, [""])
    with running(Program("app", "dev")), pytest.raises(UsageError, match="needs the state store"):
        sw.StackReference("platform/dev")


def test_a_missing_stack_reference_output_names_the_program_line() -> None:
    # Pulumi points at the line through a stack trace; here the one line says where.
    stacks = {"platform/dev": {"namespace": "shop"}, "platform/gone": {}}

    def refused(stack: str, output: str) -> str:
        with pytest.raises(UsageError) as caught:
            sw.StackReference(stack).require_output(output)  # the line the message names
        return str(caught.value)

    at = f"{__file__}:{refused.__code__.co_firstlineno + 2}"
    with running(Program("app", "dev", read_stack=stacks.__getitem__)):
        assert refused("platform/dev", "namespac") == (
            f"{at}: stack reference 'platform/dev' has no output 'namespac' (its outputs: "
            "namespace); export it from that stack's program with `sw.export('namespac', ...)` "
            "and run `stackwright up` there"
        )
        # A destroyed stack has no outputs: no export to add, no typo to look for.
        assert refused("platform/gone", "namespace") == (
            f"{at}: stack reference 'platform/gone' has no outputs at all (destroyed, or never "
            "updated), so not 'namespace': run `stackwright up` on that stack first"
        )
