"""Secret values from outside the program and its configuration, read when the program runs.

    password = sw.secret_from_env("DB_PASSWORD")            # an environment variable
    cert = sw.secret_from_file("/run/secrets/tls.crt")      # a file
    token = sw.secret_from("vault", "kv/data/app#token")    # a registered SecretSource

Each returns a secret Output, so the value is encrypted in state and shown as
[secret]. A vault is one class with a `read(path) -> str` method, registered under
a name with `sw.register_secret_source(name, source)` (in the program, or in a
module it imports). A value that cannot be read is a UsageError naming the source
and the path, raised while the program runs: before any change.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Protocol, runtime_checkable

from stackwright.errors import UsageError
from stackwright.sdk.output import Output


@runtime_checkable
class SecretSource(Protocol):
    """Where secret values live: `read(path)` returns one, or raises (KeyError, OSError, …)."""

    def read(self, path: str) -> str: ...


class EnvironmentSource:
    """Environment variables (`secret_from("env", "NAME")`)."""

    def read(self, path: str) -> str:
        value = os.environ.get(path)
        if value is None:
            raise KeyError(f"the environment variable {path} is not set; export it before running")
        return value


class FileSource:
    """Files (`secret_from("file", "/path")`); one trailing newline is dropped."""

    def read(self, path: str) -> str:
        text = Path(path).expanduser().read_text()
        return text[:-1] if text.endswith("\n") else text


_sources: dict[str, SecretSource] = {"env": EnvironmentSource(), "file": FileSource()}


def register_secret_source(name: str, source: SecretSource) -> None:
    """Make `source` available to `secret_from(name, path)`."""
    if not isinstance(source, SecretSource):
        raise TypeError(f"a secret source needs a read(path) method, got {type(source).__name__}")
    _sources[name] = source


def secret_from(source: str, path: str) -> Output[str]:
    """The secret at `path` in the registered source `source`, as a secret Output."""
    found = _sources.get(source)
    if found is None:
        raise UsageError(
            f"no secret source {source!r} (known: {', '.join(sorted(_sources))}): register it "
            "with `sw.register_secret_source(name, source)` before reading from it"
        )
    try:
        value = found.read(path)
    except (KeyError, OSError, ValueError) as exc:
        reason = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        raise UsageError(f"cannot read secret {path!r} from source {source!r}: {reason}") from None
    return Output.secret(value)


def secret_from_env(name: str) -> Output[str]:
    """The environment variable `name`, as a secret Output."""
    return secret_from("env", name)


def secret_from_file(path: str | os.PathLike[str]) -> Output[str]:
    """The contents of the file at `path` (less one trailing newline), as a secret Output."""
    return secret_from("file", os.fspath(path))
