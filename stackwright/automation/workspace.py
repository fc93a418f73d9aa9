"""A project on disk: `Stackwright.yaml`, its stacks' `Stackwright.<stack>.yaml`, the selected stack.

`Stackwright.yaml` holds the project's name, runtime (`python`), main program
and optional backend URL. `Stackwright.<stack>.yaml` holds that stack's
configuration under `config:`, keys as `<namespace>:<key>`; secret values are
stored as `{secure: <base64>}`, AES-GCM with a key derived (scrypt) from
`STACKWRIGHT_CONFIG_PASSPHRASE` and the salt kept in the same file. The
selected stack lives outside the project, under STACKWRIGHT_HOME, so two
checkouts can select different stacks.

Must never: write a secret in plain text, or leave a half-written file.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from stackwright.errors import UsageError
from stackwright.state import stackwright_home

PROJECT_FILE = "Stackwright.yaml"
PASSPHRASE_ENV = "STACKWRIGHT_CONFIG_PASSPHRASE"
_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,100}$")


def check_name(what: str, name: str) -> str:
    if not _NAME.match(name):
        raise UsageError(
            f"{what} name {name!r} is not valid: use letters, digits, '-', '_' and '.'"
        )
    return name


def _write_atomic(path: Path, text: str) -> None:
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(text)
    os.replace(temporary, path)


def _read_yaml(path: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        raise UsageError(
            f"{where}: not valid YAML ({getattr(exc, 'problem', exc)}); fix the file"
        ) from None
    if not isinstance(data, dict):
        raise UsageError(
            f"{path}: expected a mapping at the top level, found {type(data).__name__}"
        )
    return data


@dataclass(frozen=True)
class Project:
    name: str
    runtime: str
    main: Path
    folder: Path
    backend: str | None = None

    @classmethod
    def load(cls, folder: Path) -> Project:
        path = folder / PROJECT_FILE
        data = _read_yaml(path)
        name = data.get("name")
        if not isinstance(name, str) or not name:
            raise UsageError(f"{path}: `name` is missing; add `name: <project name>`")
        check_name("project", name)
        runtime = data.get("runtime", "python")
        if isinstance(runtime, dict):
            runtime = runtime.get("name", "python")
        if runtime != "python":
            raise UsageError(
                f"{path}: runtime {runtime!r} is not supported yet; use `runtime: python`"
            )
        main = data.get("main", "__main__.py")
        backend = data.get("backend")
        if isinstance(backend, dict):
            backend = backend.get("url")
        return cls(
            name, str(runtime), folder / str(main), folder, str(backend) if backend else None
        )

    def stack_file(self, stack: str) -> Path:
        return self.folder / f"Stackwright.{stack}.yaml"


def find_project(cwd: Path) -> Project:
    """The project whose Stackwright.yaml is in `cwd` or the nearest folder above it."""
    folder = cwd.resolve()
    for candidate in (folder, *folder.parents):
        if (candidate / PROJECT_FILE).exists():
            return Project.load(candidate)
    raise UsageError(
        f"no {PROJECT_FILE} in {folder} or any folder above it: "
        "run `stackwright new kubernetes-python DIR` to make a project, or pass --cwd"
    )


# --- the selected stack ---------------------------------------------------------------------


def _selection_file(project: Project) -> Path:
    digest = hashlib.sha256(str(project.folder).encode()).hexdigest()[:16]
    return stackwright_home() / "workspaces" / f"{project.name}-{digest}.json"


def selected_stack(project: Project, explicit: str | None = None) -> str:
    if explicit:
        return check_name("stack", explicit)
    if os.environ.get("STACKWRIGHT_STACK"):
        return check_name("stack", os.environ["STACKWRIGHT_STACK"])
    path = _selection_file(project)
    if path.exists():
        stack = json.loads(path.read_text()).get("stack")
        if stack:
            return str(stack)
    raise UsageError(
        "no stack is selected: run `stackwright stack init NAME` or `stackwright stack select NAME`"
    )


def select_stack(project: Project, stack: str) -> None:
    path = _selection_file(project)
    path.parent.mkdir(parents=True, exist_ok=True)
    _write_atomic(
        path, json.dumps({"stack": check_name("stack", stack), "project": str(project.folder)})
    )


# --- configuration ----------------------------------------------------------------------------


class StackConfig:
    """One stack's configuration file; secrets encrypted with the passphrase."""

    def __init__(self, project: Project, stack: str) -> None:
        self.project = project
        self.stack = stack
        self.path = project.stack_file(stack)
        self.data = _read_yaml(self.path) if self.path.exists() else {}
        config = self.data.get("config") or {}
        if not isinstance(config, dict):
            raise UsageError(f"{self.path}: `config` must be a mapping of keys to values")
        self.values: dict[str, Any] = config
        self._derived: tuple[str, bytes] | None = None  # (passphrase, key)

    def full_key(self, key: str) -> str:
        return key if ":" in key else f"{self.project.name}:{key}"

    def _key(self) -> bytes:
        """The stack's key, derived once (scrypt is deliberately slow) per passphrase."""
        passphrase = os.environ.get(PASSPHRASE_ENV)
        if passphrase is not None and self._derived is not None and self._derived[0] == passphrase:
            return self._derived[1]
        key = self._derive(passphrase)
        self._derived = (str(passphrase), key)
        return key

    def _derive(self, passphrase: str | None) -> bytes:
        if passphrase is None:
            raise UsageError(
                f"stack {self.stack} has secret configuration: set {PASSPHRASE_ENV} to the passphrase that encrypts it"
            )
        salt_text = self.data.get("encryptionsalt")
        if not salt_text:
            salt_text = base64.b64encode(os.urandom(16)).decode()
            self.data["encryptionsalt"] = salt_text
        salt = base64.b64decode(salt_text)
        # cryptography (~9 ms to import) only for stacks with secret configuration.
        from cryptography.hazmat.primitives.kdf.scrypt import Scrypt

        return Scrypt(salt=salt, length=32, n=2**14, r=8, p=1).derive(passphrase.encode())

    def set(self, key: str, value: Any, *, secret: bool = False) -> None:
        full = self.full_key(key)
        if secret:
            from cryptography.hazmat.primitives.ciphers.aead import AESGCM

            nonce = os.urandom(12)
            sealed = AESGCM(self._key()).encrypt(nonce, json.dumps(value).encode(), full.encode())
            self.values[full] = {"secure": base64.b64encode(nonce + sealed).decode()}
        else:
            self.values[full] = value
        self.save()

    def remove(self, key: str) -> bool:
        found = self.values.pop(self.full_key(key), None) is not None
        self.save()
        return found

    def is_secret(self, key: str) -> bool:
        value = self.values.get(self.full_key(key))
        return isinstance(value, dict) and set(value) == {"secure"}

    def get(self, key: str) -> Any:
        full = self.full_key(key)
        if full not in self.values:
            raise UsageError(f"configuration {full} is not set for stack {self.stack}")
        return self._plain(full, self.values[full])

    def _plain(self, full: str, value: Any) -> Any:
        if isinstance(value, dict) and set(value) == {"secure"}:
            from cryptography.exceptions import InvalidTag
            from cryptography.hazmat.primitives.ciphers.aead import AESGCM

            blob = base64.b64decode(value["secure"])
            try:
                plain = AESGCM(self._key()).decrypt(blob[:12], blob[12:], full.encode())
            except InvalidTag:
                raise UsageError(
                    f"cannot decrypt {full} of stack {self.stack}: {PASSPHRASE_ENV} is not the passphrase it was set with"
                ) from None
            return json.loads(plain)
        return value

    def resolved(self) -> tuple[dict[str, Any], frozenset[str]]:
        """Every value, secrets decrypted, and the set of secret keys."""
        plain = {key: self._plain(key, value) for key, value in self.values.items()}
        secrets = frozenset(k for k in self.values if self.is_secret(k))
        return plain, secrets

    def save(self) -> None:
        self.data["config"] = self.values
        _write_atomic(self.path, yaml.safe_dump(self.data, sort_keys=True))
