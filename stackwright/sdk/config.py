"""`Config`: a program's view of its stack's configuration.

Keys are namespaced like Pulumi's: `Config()` reads `<project>:<key>`,
`Config("kubernetes")` reads `kubernetes:<key>`. Secret values come back as
secret Outputs from `require_secret` / `get_secret`, so they stay secret in
everything computed from them. A bad value is a `UsageError` that names the key
and says how to set it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any, TypeVar

from stackwright.errors import UsageError, located, redact, remember_secret
from stackwright.model import unknown_setting
from stackwright.sdk.context import current_program
from stackwright.sdk.output import Output

T = TypeVar("T")

_TRUE = frozenset({"true", "1", "yes", "on"})
_FALSE = frozenset({"false", "0", "no", "off"})


class ConfigurationError(UsageError):
    """A configuration value the program reads that the stack lacks or holds in another type:
    bad input, said at the program's line that reads it (the runner knows that line)."""


class MissingConfiguration(ConfigurationError):
    """A `require` of a key the stack's configuration lacks (`key`: its full name), so that a
    caller running the program without a stack (`policy check`) can say how to give one."""

    def __init__(self, message: str, key: str) -> None:
        super().__init__(message)
        self.key = key


class Config:
    def __init__(self, namespace: str | None = None) -> None:
        self._program = current_program()
        self.namespace = namespace or self._program.project

    @property
    def name(self) -> str:
        """The namespace, as Pulumi's `Config.name` calls it."""
        return self.namespace

    def full_key(self, key: str) -> str:
        """`key` as the stack's configuration names it: `<namespace>:<key>`."""
        return f"{self.namespace}:{key}"

    def _raw(self, key: str, *, as_secret: bool = False) -> Any:
        if ":" in key:
            # `config ls` shows `shop:replicas`; read as a key it is `shop:shop:replicas`,
            # which no stack can hold, so it read None without a word.
            namespace, _, name = key.rpartition(":")
            raise ConfigurationError(
                f"configuration key {key!r} names its namespace: read it with "
                f"sw.Config({namespace!r}).get({name!r}) (Config() reads {self.namespace}:NAME)"
            )
        full = self.full_key(key)
        refused = unknown_setting(full, self._program.project)
        if refused:  # `Config("kubernetes").get("clustr")` would read None
            from stackwright.sdk.resource import _declared_at  # only to say where

            raise UsageError(located(_declared_at(), f"{refused.rstrip('; ')}"))
        value = self._program.config.get(full)
        if value is not None and not as_secret and full in self._program.secret_keys:
            # As Pulumi does: the plain value is handed out, with a warning. Messages still
            # show it as [secret], and the engine seals its secret parts wherever the stack
            # records them (a resource's fields, a stack output); what the program makes of
            # them (hashed, cut short) it cannot recognise.
            parts = self._program.secret_parts.get(full, (value,))
            remember_secret(parts)
            self._program.read_plain.update(texts_of(parts))
            self._program.note(
                f"configuration {full} is a secret, but the program reads it as a plain value "
                "(Config.get / require / get_int …): the stack keeps the value itself "
                "encrypted, not what the program computes from it; read it with "
                "get_secret / require_secret"
            )
        return value

    def _cli_key(self, key: str) -> str:
        # `stackwright config set KEY` puts an unqualified key in the project's namespace.
        return key if self.namespace == self._program.project else self.full_key(key)

    def _set_command(self, key: str, value: str, *, secret: bool = False) -> str:
        # A secret is set as one again, so the command shown never stores it in plain text.
        flag = " --secret" if secret or self.full_key(key) in self._program.secret_keys else ""
        return f"`stackwright config set{flag} {self._cli_key(key)} {value}`"

    def _missing(self, key: str, *, secret: bool = False) -> UsageError:
        return MissingConfiguration(
            f"missing required configuration {self.full_key(key)} for stack {self._program.stack}: "
            f"set it with {self._set_command(key, 'VALUE', secret=secret)}",
            self.full_key(key),
        )

    def _bad(self, key: str, value: Any, expected: str, example: str) -> ConfigurationError:
        # A value read as a secret (`get_secret_int`, a YAML program's `secret: true`) though
        # stored plain was remembered as one: it is not shown, and is set as one again.
        # As the stack file and `config get` show it (true, {"a": 1}), not Python's True.
        shown = repr(value) if isinstance(value, str) else json.dumps(value, default=str)
        secret = self.full_key(key) in self._program.secret_keys or redact(shown) != shown
        shown = "[secret]" if secret else shown
        return ConfigurationError(
            f"configuration {self.full_key(key)} must be {expected} (got {shown}); "
            f"set it with {self._set_command(key, example, secret=secret)}"
        )

    # --- strings ---------------------------------------------------------------------

    def get(self, key: str, default: str | None = None) -> str | None:
        return self._text(key, default)

    def _text(self, key: str, default: str | None = None, *, as_secret: bool = False) -> str | None:
        value = self._raw(key, as_secret=as_secret)
        if value is None:
            return default
        # Structured values (from `config set --path` or a YAML stack file) read as JSON.
        return value if isinstance(value, str) else json.dumps(value)

    def require(self, key: str) -> str:
        value = self.get(key)
        if value is None:
            raise self._missing(key)
        return value

    # --- numbers and flags -----------------------------------------------------------

    def get_int(self, key: str, default: int | None = None) -> int | None:
        value = self._raw(key)
        return default if value is None else self._int(key, value)

    def _int(self, key: str, value: Any) -> int:
        if isinstance(value, bool):
            raise self._bad(key, value, "an integer", "3")
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, int):
            return value
        if isinstance(value, str):
            try:
                return int(value.strip())
            except ValueError:
                pass
        raise self._bad(key, value, "an integer", "3")

    def require_int(self, key: str) -> int:
        value = self.get_int(key)
        if value is None:
            raise self._missing(key)
        return value

    def get_float(self, key: str, default: float | None = None) -> float | None:
        value = self._raw(key)
        return default if value is None else self._float(key, value)

    def _float(self, key: str, value: Any) -> float:
        if not isinstance(value, bool) and isinstance(value, (int, float, str)):
            try:
                number = float(value)
            except ValueError:
                pass
            else:
                if math.isfinite(number):
                    return number
        raise self._bad(key, value, "a number", "0.5")

    def require_float(self, key: str) -> float:
        value = self.get_float(key)
        if value is None:
            raise self._missing(key)
        return value

    def get_bool(self, key: str, default: bool | None = None) -> bool | None:
        value = self._raw(key)
        return default if value is None else self._bool(key, value)

    def _bool(self, key: str, value: Any) -> bool:
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
        raise self._bad(key, value, "true or false", "true")

    def require_bool(self, key: str) -> bool:
        value = self.get_bool(key)
        if value is None:
            raise self._missing(key)
        return value

    # --- structured values -----------------------------------------------------------

    def get_object(self, key: str, default: Any = None) -> Any:
        value = self._raw(key)
        return default if value is None else self._object(key, value)

    def _object(self, key: str, value: Any) -> Any:
        if isinstance(value, str):
            try:
                return json.loads(value)
            except json.JSONDecodeError:
                raise self._bad(key, value, "JSON", """'{"a": 1}'""") from None
        return value

    def require_object(self, key: str) -> Any:
        value = self.get_object(key)
        if value is None:
            raise self._missing(key)
        return value

    # --- secrets ---------------------------------------------------------------------

    def get_secret(self, key: str, default: str | None = None) -> Output[str] | None:
        value = self._text(key, default, as_secret=True)
        return None if value is None else Output.secret(value)

    def require_secret(self, key: str) -> Output[str]:
        value = self._text(key, as_secret=True)
        if value is None:
            raise self._missing(key, secret=True)
        return Output.secret(value)

    # Typed secrets, as Pulumi's `get_secret_int`, `require_secret_object`, …: the value is
    # read and checked as its plain getter does, and comes back as a secret Output; so does
    # a default given for a key that is not set.

    def _secret(
        self, key: str, parse: Callable[[str, Any], T], default: T | None = None
    ) -> Output[T] | None:
        value = self._raw(key, as_secret=True)
        if value is None:
            return None if default is None else Output.secret(default)
        remember_secret(value)  # before it is parsed: a value not of its type is not shown
        return Output.secret(parse(key, value))

    def _required_secret(self, key: str, parse: Callable[[str, Any], T]) -> Output[T]:
        found = self._secret(key, parse)
        if found is None:
            raise self._missing(key, secret=True)
        return found

    def get_secret_int(self, key: str, default: int | None = None) -> Output[int] | None:
        return self._secret(key, self._int, default)

    def require_secret_int(self, key: str) -> Output[int]:
        return self._required_secret(key, self._int)

    def get_secret_float(self, key: str, default: float | None = None) -> Output[float] | None:
        return self._secret(key, self._float, default)

    def require_secret_float(self, key: str) -> Output[float]:
        return self._required_secret(key, self._float)

    def get_secret_bool(self, key: str, default: bool | None = None) -> Output[bool] | None:
        return self._secret(key, self._bool, default)

    def require_secret_bool(self, key: str) -> Output[bool]:
        return self._required_secret(key, self._bool)

    def get_secret_object(self, key: str, default: Any | None = None) -> Output[Any] | None:
        return self._secret(key, self._object, default)

    def require_secret_object(self, key: str) -> Output[Any]:
        return self._required_secret(key, self._object)


def texts_of(value: Any) -> list[str]:
    """The texts of the leaves of a configuration value: a number as the program may give
    it in a field (`get_int` of `"5432"`), as its text; never a flag (every `true` is not
    a secret)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for item in value.values() for text in texts_of(item)]
    if isinstance(value, list | tuple):
        return [text for item in value for text in texts_of(item)]
    if isinstance(value, int | float) and not isinstance(value, bool):
        return [str(value)]
    return []
