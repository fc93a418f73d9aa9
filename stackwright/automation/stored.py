"""A stack as it is stored: its project, configuration and state store, without the engine.

`StoredStack.open(cwd, stack)` finds the project, the selected stack, its configuration
and its state backend; it reads and edits what is stored (outputs, state, history, the
state as a document, the data key's provider), which is all the CLI's light commands
(`config get`, `stack output`, `stack history`, `stack tag`) do. The operations that run
the engine are `Workspace`'s (`stackwright.automation.stack`), a StoredStack too.

Must never import the engine, the providers or the programming model: a light command
would pay for them (~0.1 s of imports) at every start.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

from stackwright.automation.secrets import (
    MaskingKey,
    StateEncrypter,
    Where,
    map_envelopes,
    reveal_document,
    seal_document,
    unwrap,
)
from stackwright.automation.workspace import (
    Project,
    StackConfig,
    check_name,
    find_project,
    select_stack,
    selected_stack,
)
from stackwright.errors import UsageError
from stackwright.model import SECRET_TEXT, is_sealed, map_secrets
from stackwright.state import (
    Backend,
    HistoryEntry,
    Snapshot,
    backend_url,
    open_backend,
    require_stack,
)


@dataclass
class StoredStack:
    """One stack of a project and its state store, open until `close()` (or the end of a
    `with` block): a script that opens many, or whose operations fail, holds no connection
    or file handle of one it is done with. What it reads and edits is stored; running the
    program or the engine is `Workspace`'s."""

    project: Project
    stack: str
    _backend: Backend
    config: StackConfig = field(default=None)  # type: ignore[assignment]
    _closed: bool = field(default=False, init=False)

    @property
    def backend(self) -> Backend:
        """The stack's state store; after `close()` a use says so, on one line (not the
        store's own "Cannot operate on a closed database")."""
        if self._closed:
            raise UsageError(
                f"the workspace of stack {self.stack} (project {self.project.name}) was "
                "closed: use it inside its `with` block, or open it again with "
                "`Workspace.open` or `Workspace.create_or_select`"
            )
        return self._backend

    def __post_init__(self) -> None:
        if self.config is None:
            self.config = StackConfig(self.project, self.stack)

    @classmethod
    def open(cls, cwd: Path, stack: str | None = None) -> Self:
        project = find_project(cwd)
        name = selected_stack(project, stack)
        config = StackConfig(project, name)
        encrypter = StateEncrypter(
            config.data_key,
            stack=name,
            others=lambda other: StackConfig(project, other).data_key(),  # `state move`
        )
        backend = open_backend(backend_url_of(project), encrypter=encrypter)
        try:
            if not config.has_key() and backend.has_stack(project.name, name):
                config.restore_provider(backend.secrets_provider(project.name, name))
        except BaseException:
            backend.close()
            raise
        return cls(project, name, backend, config)

    def close(self) -> None:
        """Close the stack's state store; closing again does nothing. An operation already
        finished has released its lock and closed its own connections."""
        self._closed = True
        self._backend.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @classmethod
    def create(
        cls,
        cwd: Path,
        stack: str,
        *,
        secrets_provider: str | None = None,
        copy_config_from: str | None = None,
    ) -> Self:
        """Create stack `stack` of the project at `cwd` and select it (`stack init`): an
        existing one, or a stack to copy from that has no stack file, is refused first."""
        project = find_project(cwd)
        with contextlib.closing(open_backend(backend_url_of(project))) as backend:
            if backend.has_stack(project.name, stack):
                backend.create_stack(project.name, stack)  # raises the "already exists" error
            config = StackConfig(project, check_name("stack", stack))
            source = StackConfig(project, copy_config_from) if copy_config_from else None
            if source is not None and not source.path.exists():
                raise UsageError(
                    f"cannot copy configuration from stack {copy_config_from}: {source.path} "
                    "does not exist"
                )
            # A data key is made when the stack first needs one (a secret set or stored),
            # unless a provider is asked for: a stack without secrets leaves its stack file
            # as it was.
            if secrets_provider is not None:
                config.adopt_provider(secrets_provider)
            if source is not None:
                config.copy_values_from(source)
            if config.data or config.values or config.path.exists():
                config.save()
            backend.create_stack(project.name, stack)
            if config.has_key():
                backend.set_secrets_provider(project.name, stack, config.provider_fields())
        select_stack(project, stack)
        return cls.open(cwd, stack)

    @classmethod
    def create_or_select(cls, cwd: Path, stack: str) -> Self:
        """The stack, selected; created first when the state store does not have it (as
        Pulumi's `create_or_select_stack`)."""
        project = find_project(cwd)
        with contextlib.closing(open_backend(backend_url_of(project))) as backend:
            exists = backend.has_stack(project.name, stack)
        if not exists:
            return cls.create(cwd, stack)
        select_stack(project, stack)
        return cls.open(cwd, stack)

    def outputs(self, *, show_secrets: bool = False) -> dict[str, Any]:
        """The stack's outputs as its last operation left them: secret ones as [secret]
        (read without unlocking the stack's key, so a CI job needs no passphrase for
        `service_ip`), or decrypted with `show_secrets`."""
        if show_secrets:
            outputs = self.backend.load(self.project.name, self.stack).outputs
            return dict(map_secrets(outputs, lambda secret: secret.value))
        exported = self.backend.export(self.project.name, self.stack)["outputs"]
        return dict(map_envelopes(exported, is_sealed, lambda _: SECRET_TEXT))

    def state(self, *, show_secrets: bool = False) -> Snapshot:
        """The stack's recorded state: secrets decrypted with `show_secrets`, else [secret]
        and read without unlocking the stack's key, as `outputs` is (a CI job checking a
        stack's resources or pending steps needs no passphrase)."""
        if show_secrets:
            return self.backend.load(self.project.name, self.stack)
        # The workspace's own store (refused once closed, as every use), read through a
        # connection of its own that masks instead of decrypting.
        masking = StateEncrypter(lambda: MaskingKey(self.stack))
        with contextlib.closing(open_backend(self.backend.url, encrypter=masking)) as backend:
            return backend.load(self.project.name, self.stack)

    def require_stack(self) -> None:
        """Refuse a stack the state store does not have (a typo in --stack), before its
        stack file, or a key file, is written."""
        require_stack(self.backend, self.project.name, self.stack)

    # --- secrets ---------------------------------------------------------------------

    def unlock(self) -> None:
        """Unwrap the stack's data key now (a wrong passphrase stops the command before any
        change), and record how it is wrapped in the state store, where stack references
        from other projects find it. A stack without one gets it when it first needs it."""
        if self.config.has_key() or self.config.holds_secrets():
            self.config.data_key()
        self.record_provider()

    def record_provider(self) -> None:
        """Record in the state store how the stack's data key is wrapped (never the key)."""
        if not self.config.has_key():
            return
        fields = self.config.provider_fields()
        if self.backend.secrets_provider(self.project.name, self.stack) != fields:
            self.backend.set_secrets_provider(self.project.name, self.stack, fields)

    def read_stack(self, name: str) -> dict[str, Any]:
        """Another stack's outputs (secrets decrypted as SecretValues), for StackReference."""
        parts = name.split("/")
        if len(parts) > 3 or not all(parts):
            raise UsageError(
                f"stack reference {name!r} is not valid: write org/project/stack, project/stack or stack"
            )
        project = parts[-2] if len(parts) >= 2 else self.project.name
        stack = parts[-1]
        if (project, stack) == (self.project.name, self.stack):
            raise UsageError(
                f"stack reference {name!r} names this stack itself; name another stack"
            )
        if not self.backend.has_stack(project, stack):
            # A renamed stack leaves references to its old name: the names there are tell.
            there = sorted(s.name for s in self.backend.list_stacks(project))
            known = (
                f" (it has: {', '.join(there)}); name one of those"
                if there
                else ", nor any other of that project; check the project's name"
            )
            raise UsageError(
                f"stack reference {name!r}: the state backend {self.backend.url} has no stack "
                f"{stack} of project {project}{known}, or create it and run `stackwright up` "
                "there first"
            )
        if project == self.project.name and self.project.stack_file(stack).exists():
            fields = StackConfig(self.project, stack).provider_fields()
            where = Where(project, stack, self.project.folder)
        else:
            fields = self.backend.secrets_provider(project, stack) or {}
            where = Where(project, stack)
        encrypter = StateEncrypter(lambda: unwrap(fields, where, os.environ))
        try:
            return encrypter.unseal_outputs(stack, self.backend.export(project, stack)["outputs"])
        except UsageError as exc:  # its key, not this stack's: say which stack it is
            raise UsageError(f"stack reference {name!r}: {exc}") from exc

    def cancel(self) -> bool:
        """Release the stack's lock at once, as `stackwright cancel` (Pulumi's `stack.cancel`);
        an operation still running on it stops within a second. Whether one was held."""
        return self.backend.cancel(self.project.name, self.stack)

    def history(self, *, limit: int | None = None) -> list[HistoryEntry]:
        """The stack's operations, newest first (`stack history`)."""
        return self.backend.history(self.project.name, self.stack, limit=limit)

    # --- the state as a document -----------------------------------------------------------

    def export_state(
        self, *, show_secrets: bool = False, version: int | None = None
    ) -> dict[str, Any]:
        """The stack's state as a versioned JSON document: secrets sealed as stored, or with
        `show_secrets` decrypted (`{"@plaintext": value}`), as `pulumi stack export
        --show-secrets` writes them; with `version`, the state that history entry's
        operation left (`pulumi stack export --version`)."""
        document = self.backend.export(self.project.name, self.stack, version=version)
        if show_secrets:
            document = reveal_document(document, self.config.data_key)
        return document

    def import_state(self, document: Any, *, message: str = "") -> None:
        """Replace the stack's state with an exported document, its plain secrets (from
        `export_state(show_secrets=True)`) encrypted under this stack's key first, so that
        no plain value reaches the state store."""
        sealed = seal_document(document, self.config.data_key)
        self.backend.import_(self.project.name, self.stack, sealed, message=message)
        self.record_provider()  # how a key made to seal them is wrapped


def backend_url_of(project: Project) -> str:
    """The state store of the project's stacks: STACKWRIGHT_BACKEND_URL, else the project's,
    else the default (`state.backend_url`)."""
    return backend_url(project.backend)
