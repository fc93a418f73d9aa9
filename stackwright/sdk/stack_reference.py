"""`StackReference`: another stack's outputs, read by a program, as Outputs.

    platform = sw.StackReference("acme/platform/prod")    # or "platform/prod", or "prod"
    kubeconfig = platform.require_output("kubeconfig")   # secret there, secret here

The outputs are read once, when the reference is made, through the reader the
automation layer installs in the running `Program` (the SDK never opens the state
store). A missing stack is an error at once; a missing output is one from
`require_output` — both while the program runs, so before any change.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stackwright.errors import UsageError, located, remember_secret
from stackwright.model import SecretValue, map_secrets
from stackwright.sdk.context import current_program
from stackwright.sdk.output import Output
from stackwright.sdk.resource import _declared_at


def _output(value: Any) -> Output[Any]:
    """An Output of an output's value: secret when any part of it was."""
    found: list[SecretValue] = []

    def unwrap(secret: SecretValue) -> Any:
        found.append(secret)
        remember_secret(secret.value)  # only the secret parts: the rest may be shown
        return secret.value

    plain = map_secrets(value, unwrap)
    return Output(lambda read: plain, secret=True) if found else Output.from_input(plain)


class StackReference:
    """The outputs of stack `name`: `org/project/stack`, `project/stack`, or `stack` (this project)."""

    def __init__(self, name: str) -> None:
        program = current_program()
        if program.read_stack is None:
            raise UsageError(
                f"StackReference({name!r}) needs the state store: run the program with "
                "`stackwright preview` or `stackwright up`"
            )
        self.name = name
        self._outputs: Mapping[str, Any] = program.read_stack(name)

    @property
    def outputs(self) -> Output[dict[str, Any]]:
        """All the stack's outputs, as one Output (secret when any of them is)."""
        return _output(dict(self._outputs))

    def get_output(self, name: str) -> Output[Any]:
        """The output `name` (an Output of None when the stack has no such output)."""
        return _output(self._outputs.get(name))

    def require_output(self, name: str) -> Output[Any]:
        """The output `name`; a UsageError naming the outputs there are when it is missing."""
        if name not in self._outputs:
            where = _declared_at()
            if not self._outputs:  # destroyed, or never updated: no typo to look for
                raise UsageError(
                    located(
                        where,
                        f"stack reference {self.name!r} has no outputs at all (destroyed, "
                        f"or never updated), so not {name!r}: run `stackwright up` on that stack first",
                    )
                )
            known = ", ".join(sorted(self._outputs))
            raise UsageError(
                located(
                    where,
                    f"stack reference {self.name!r} has no output {name!r} (its outputs: "
                    f"{known}); export it from that stack's program with `sw.export({name!r}, ...)` "
                    "and run `stackwright up` there",
                )
            )
        return _output(self._outputs[name])

    def get_secret_output(self, name: str) -> Output[Any]:
        """The output `name`, kept secret whether or not it was a secret there."""
        return Output.secret(self.get_output(name))
