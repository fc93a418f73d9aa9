"""A project on disk: `Stackwright.yaml`, its stacks' `Stackwright.<stack>.yaml`, the selected stack.

`Stackwright.yaml` holds the project's name, runtime (`python`, or `yaml`: a YAML program, in the same file unless `main` names one), main program
and optional backend URL. `Stackwright.<stack>.yaml` holds that stack's
configuration under `config:`, keys as `<namespace>:<key>` and values of any
YAML type; secret values are stored as `{secure: <base64>}`, AES-256-GCM under
the stack's data key, which the same file keeps wrapped by its secrets provider
(`secretsprovider`, `encryptionsalt`, `encryptedkey`: see `secrets`). It also
holds the stack's `tags:`. The selected stack lives outside the project, under
STACKWRIGHT_HOME, so two checkouts can select different stacks.

Must never: write a secret in plain text, or leave a half-written file.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import re
import shlex
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from stackwright.automation import secrets
from stackwright.automation.secrets import PASSPHRASE_ENV, DataKey, Where
from stackwright.errors import (
    UsageError,
    located,
    no_such_day,
    not_utf8,
    not_valid_yaml,
    shown_path,
    yaml_slip,
)
from stackwright.lazy import lazy_module
from stackwright.model import bad_setting_value, name_problem, pulumi_setting, unknown_setting
from stackwright.state import stackwright_home

if TYPE_CHECKING:
    import yaml
else:  # loaded as a project's files are first read (~14 ms): `--version`, `--help` read none
    yaml = lazy_module("yaml")

PROJECT_FILE = "Stackwright.yaml"
#: The keys of Stackwright.yaml (a YAML program in it adds its own sections, which its parser
#: checks); Pulumi.yaml's others (`template`, `plugins`, …) have no meaning here.
PROJECT_KEYS = ("name", "runtime", "description", "main", "backend")
STACK_KEYS = ("config", "tags", *secrets.FIELDS)


def check_name(what: str, name: str) -> str:
    """`name` if it can be a `what`'s name, checked before anything is written: the state
    store refuses the others, and a stack file made first was left behind."""
    problem = name_problem(what, name)
    if problem:
        # Pulumi users write `org/project/dev`, as its CI examples do.
        last = name.rsplit("/", 1)[-1]
        pulumi = what == "stack" and "/" in name and not name_problem(what, last)
        hint = (
            f" (a stack is named within its project, without Pulumi's org/project/: {last})"
            if pulumi
            else ""
        )
        raise UsageError(f"{problem}{hint}")
    return name


def _write_atomic(path: Path, text: str) -> None:
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)


def _identity(path: Path) -> tuple[int, int, int] | None:
    """Which version of a file is there (each atomic write makes a new inode), None if none."""
    try:
        found = path.stat()
    except FileNotFoundError:
        return None
    return found.st_ino, found.st_mtime_ns, found.st_size


def _read_yaml(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
        data = yaml.safe_load(text) or {}
    except UnicodeDecodeError as exc:
        raise not_utf8(shown_path(path), exc) from None
    except yaml.YAMLError as exc:
        fix = "" if yaml_slip(exc, text) else "; fix the file"  # a slip says its own fix
        raise UsageError(f"{not_valid_yaml(path, exc, text)}{fix}") from None
    except ValueError as exc:  # a date that is no day, which PyYAML constructs as it reads
        raise UsageError(no_such_day(path, exc, text)) from None
    if not isinstance(data, dict):
        raise UsageError(
            located(path, f"expected a mapping at the top level, found {type(data).__name__}")
        )
    return data


@dataclass(frozen=True)
class Project:
    name: str
    runtime: str
    main: Path
    folder: Path
    backend: str | None = None

    @property
    def program_folder(self) -> Path:
        """Where the program runs, its relative paths (a ConfigFile's, a chart's) from
        there: the folder `main` names, or the one its file is in (the project's by
        default), as Pulumi runs a program from its `main`'s folder."""
        return self.main if self.main.is_dir() else self.main.parent

    @classmethod
    def load(cls, folder: Path) -> Project:
        path = folder / PROJECT_FILE
        data = _read_yaml(path)
        name = data.get("name")
        if not isinstance(name, str) or not name:
            slip = difflib.get_close_matches("name", [str(key) for key in data], n=1)
            misspelt = f" (in place of {slip[0]!r}?)" if slip and slip[0] != "name" else ""
            raise UsageError(
                located(path, f"`name` is missing; add `name: <project name>`{misspelt}")
            )
        check_name("project", name)
        runtime = data.get("runtime", "python")
        if isinstance(runtime, dict):
            runtime = runtime.get("name", "python")
        if runtime not in ("python", "yaml"):
            raise UsageError(
                located(
                    path,
                    f"runtime {runtime!r} is not supported; use `runtime: python` or "
                    "`runtime: yaml`",
                )
            )
        # A YAML program is in Stackwright.yaml itself unless `main` names another file.
        main = data.get("main", "__main__.py" if runtime == "python" else PROJECT_FILE)
        if runtime == "yaml" and (folder / str(main)).is_dir():
            main = Path(str(main)) / "Main.yaml"  # as Pulumi YAML: a folder's program is Main.yaml
        if not (runtime == "yaml" and main == PROJECT_FILE):
            _check_keys(path, data)
        backend = data.get("backend")
        if isinstance(backend, dict):
            backend = backend.get("url")
        return cls(
            name, str(runtime), folder / str(main), folder, str(backend) if backend else None
        )

    def stack_file(self, stack: str) -> Path:
        return self.folder / f"Stackwright.{stack}.yaml"

    def declared_secrets(self) -> frozenset[str]:
        """The keys a YAML program's `config:` declares `secret: true`, in full
        (`shop:token`): a plain value for one is refused, as Pulumi refuses it."""
        if self.runtime != "yaml":
            return frozenset()
        try:
            config = _read_yaml(self.main).get("config")
        except (UsageError, OSError):  # the program's own run says what is wrong with it
            return frozenset()
        if not isinstance(config, dict):
            return frozenset()
        return frozenset(
            str(name) if ":" in str(name) else f"{self.name}:{name}"
            for name, spec in config.items()
            if isinstance(spec, dict) and spec.get("secret")
        )

    def stack_files(self) -> list[str]:
        """The names of the stack files in the project's folder, sorted."""
        return sorted(p.name for p in self.folder.glob("Stackwright.*.yaml"))


def _check_keys(path: Path, data: Mapping[str, Any], known: tuple[str, ...] = PROJECT_KEYS) -> None:
    """Refuse a key Stackwright.yaml (or a stack file, of `known` keys) does not have: a
    misspelt `main` or `runtime` would otherwise run the default silently, a misspelt
    `config:` run the stack with no configuration."""
    unknown = sorted(str(key) for key in data if key not in known)
    if unknown:
        close = difflib.get_close_matches(unknown[0], known, n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        what = "a project file" if known == PROJECT_KEYS else "a stack file"
        raise UsageError(
            located(path, f"unknown key {unknown[0]!r}; {hint}{what} has {', '.join(known)}")
        )


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
        try:
            return check_name("stack", os.environ["STACKWRIGHT_STACK"])
        except UsageError as error:  # said where it came from: no --stack was typed
            raise UsageError(f"STACKWRIGHT_STACK: {error}") from None
    path = _selection_file(project)
    if path.exists():
        stack = json.loads(path.read_text()).get("stack")
        if stack:
            return str(stack)
    # A CI runner starts with no selection (it lives in STACKWRIGHT_HOME, not the checkout):
    # name the stacks the checkout has files for, and the ways that need no `select` step.
    names = [f.removeprefix("Stackwright.").removesuffix(".yaml") for f in project.stack_files()]
    here = f" (this folder has the stack files of {', '.join(names)})" if names else ""
    raise UsageError(
        "no stack is selected: pass --stack NAME (or set STACKWRIGHT_STACK), or run "
        f"`stackwright stack select NAME`{here} or `stackwright stack init NAME`"
    )


def select_stack(project: Project, stack: str) -> None:
    path = _selection_file(project)
    path.parent.mkdir(parents=True, exist_ok=True)
    _write_atomic(
        path, json.dumps({"stack": check_name("stack", stack), "project": str(project.folder)})
    )


def unselect_stack(project: Project, stack: str) -> None:
    """Forget the selection when it names `stack` (removed): what comes next then says no
    stack is selected, not that the removed one does not exist."""
    path = _selection_file(project)
    if path.exists() and json.loads(path.read_text()).get("stack") == stack:
        path.unlink()


# --- configuration ----------------------------------------------------------------------------

#: One step of a `--path` key: a mapping key or a list index.
PathKey = str | int
_PATH_TOKEN = re.compile(r'\.?([^.\[\]"]+)|\[(\d+)\]|\["((?:[^"\\]|\\.)*)"\]')


def parse_key(key: str, project: str, *, path: bool) -> tuple[str, tuple[PathKey, ...]]:
    """(`namespace:top`, the path below it): `app:db.port` → ("app:db", ("port",)) with
    `path`, `app:hosts[0]` → ("app:hosts", (0,)); a key without a namespace is the project's.
    Refuses a key that is not `[namespace:]name` with non-empty parts (`a:b:c`, `:x`, `x:`)."""
    full = key if ":" in key else f"{project}:{key}"
    namespace, _, rest = full.partition(":")
    if not path:
        _check_key(key, namespace, rest, project)
        return full, ()
    steps: list[PathKey] = []
    at = 0
    while at < len(rest):
        match = _PATH_TOKEN.match(rest, at)
        if match is None or match.end() == at:
            raise UsageError(
                f"configuration path {key!r} is not valid at {rest[at:]!r}: write keys "
                'as a.b, list items as a[0], keys holding dots as a["b.c"]'
            )
        name, index, quoted = match.groups()
        steps.append(int(index) if index is not None else (quoted if quoted is not None else name))
        at = match.end()
    if not steps or not isinstance(steps[0], str):
        _check_key(key, namespace, rest, project)  # `x:` is a malformed key, not a bad path
        raise UsageError(f"configuration path {key!r} must start with a key name")
    _check_key(key, namespace, steps[0], project)
    return f"{namespace}:{steps[0]}", tuple(steps[1:])


def _check_key(key: str, namespace: str, name: str, project: str) -> None:
    if not namespace or not name or ":" in name:
        raise UsageError(
            f"configuration key {key!r} is not valid: write NAME or NAMESPACE:NAME, each part "
            f"non-empty and without ':' (e.g. replicas, {project}:replicas, kubernetes:kubeconfig)"
        )


def _is_secure(value: Any) -> bool:
    return isinstance(value, dict) and set(value) == {"secure"}


def _holds_secure(value: Any) -> bool:
    if _is_secure(value):
        return True
    if isinstance(value, dict):
        return any(_holds_secure(v) for v in value.values())
    if isinstance(value, list):
        return any(_holds_secure(v) for v in value)
    return False


def _set_in(container: Any, steps: tuple[PathKey, ...], value: Any, where: str) -> Any:
    """`container` with `value` at `steps`, making mappings and lists on the way."""
    if not steps:
        return value
    head, rest = steps[0], steps[1:]
    if isinstance(head, int):
        items = list(container) if isinstance(container, list) else []
        if container is not None and not isinstance(container, list):
            raise UsageError(f"configuration {where} is not a list: cannot set item [{head}]")
        if head > len(items):
            raise UsageError(
                f"configuration {where}[{head}]: the list has {len(items)} items; set [{len(items)}] first"
            )
        if head == len(items):
            items.append(None)
        items[head] = _set_in(items[head], rest, value, f"{where}[{head}]")
        return items
    if container is not None and not isinstance(container, dict):
        raise UsageError(f"configuration {where} is not a mapping: cannot set key {head!r}")
    out = dict(container or {})
    out[head] = _set_in(out.get(head), rest, value, f"{where}.{head}")
    return out


def _get_in(container: Any, steps: tuple[PathKey, ...]) -> tuple[bool, Any]:
    for step in steps:
        in_list = isinstance(step, int) and isinstance(container, list) and step < len(container)
        if not in_list and not (isinstance(container, dict) and step in container):
            return False, None
        container = container[step]
    return True, container


def _remove_in(container: Any, steps: tuple[PathKey, ...]) -> bool:
    found, parent = _get_in(container, steps[:-1])
    last = steps[-1]
    if found and isinstance(last, int) and isinstance(parent, list) and last < len(parent):
        del parent[last]
        return True
    if found and isinstance(last, str) and isinstance(parent, dict) and last in parent:
        del parent[last]
        return True
    return False


class StackConfig:
    """One stack's file: configuration (secrets under the stack's data key) and tags."""

    def __init__(
        self, project: Project, stack: str, environ: Mapping[str, str] | None = None
    ) -> None:
        self.project = project
        self.stack = stack
        self.path = project.stack_file(stack)
        self.environ: Mapping[str, str] = os.environ if environ is None else environ
        self._key: DataKey | None = None
        # The state store may seal from its commit thread while the engine runs: two first
        # uses at once must not make two keys.
        self._key_lock = threading.RLock()
        self._holding = False  # inside `together()`: changes saved at its end
        self._read()

    @contextmanager
    def together(self) -> Iterator[None]:
        """Changes made inside are saved once at the end, or, when one of them is refused,
        none is (`config set-all` / `rm-all`, as Pulumi's: all or nothing). The file is not
        read again inside; written meanwhile by another command, none is saved either."""
        self.refresh()
        self._holding = True
        try:
            yield
            if _identity(self.path) != self._seen:
                raise UsageError(
                    f"{self.path} changed while these configuration changes were made (another "
                    "command wrote it): none of them was saved; make them again"
                )
        except BaseException:
            self._holding = False
            self._reread()  # drop what was changed here, a data key made here with it
            raise
        self._holding = False
        self.save()

    def _read(self) -> None:
        """Take the file as it is on disk now (no file: empty)."""
        self._seen = _identity(self.path)
        self.data = _read_yaml(self.path) if self._seen is not None else {}
        _check_keys(self.path, self.data, STACK_KEYS)
        config = self.data.get("config") or {}
        if not isinstance(config, dict):
            raise UsageError(located(self.path, "`config` must be a mapping of keys to values"))
        for key in config:
            # A key without its namespace is read by no program (`Config().get("x")` reads
            # `shop:x`), and one YAML reads as a number or date failed with a traceback.
            if not isinstance(key, str) or not re.fullmatch(r"[^:]+:[^:]+", key):
                name = str(key) if ":" not in str(key) else "NAME"
                raise UsageError(
                    located(
                        self.path,
                        f"configuration key {str(key)!r} is not NAMESPACE:NAME: write it as "
                        f"'{self.project.name}:{name}' (the project's) or 'NAMESPACE:{name}'",
                    )
                )
        self.values: dict[str, Any] = config

    def refresh(self) -> None:
        """Read the file again if something else wrote it since this object last read or
        wrote it — the CLI's `config set` while a script holds a Workspace, another
        workspace — so a change made here keeps theirs instead of writing back a stale
        copy, and a read sees theirs (Pulumi's Automation API asks its CLI each time). A
        secrets provider changed there drops the data key unwrapped here. Not inside
        `together()`: its changes would go."""
        if self._holding or _identity(self.path) == self._seen:
            return
        self._reread()

    def _reread(self) -> None:
        with self._key_lock:
            before = self.provider_fields()
            self._read()
            if self.provider_fields() != before:
                self._key = None

    @property
    def where(self) -> Where:
        return Where(self.project.name, self.stack, self.project.folder)

    def full_key(self, key: str) -> str:
        return parse_key(key, self.project.name, path=False)[0]

    # --- the data key --------------------------------------------------------------

    def provider_fields(self) -> dict[str, Any]:
        return {k: self.data[k] for k in secrets.FIELDS if k in self.data}

    def has_key(self) -> bool:
        return "encryptedkey" in self.data

    def holds_secrets(self) -> bool:
        """Whether any configuration value is (or holds) an encrypted secret."""
        return _holds_secure(self.values)

    def data_key(self) -> DataKey:
        """The stack's data key: unwrapped once per command, made (and saved) on first use;
        a stack file of the older format (values under the passphrase's own key) is
        re-encrypted under a new data key."""
        with self._key_lock:
            return self._data_key()

    def _data_key(self) -> DataKey:
        if self._key is not None:
            return self._key
        if self.has_key():
            self._key = secrets.unwrap(self.provider_fields(), self.where, self.environ)
        elif self.data.get("encryptionsalt") and _holds_secure(self.values):
            self._key = self._migrate()
        else:
            self._key = self._make_key(secrets.choose_provider(None, self.environ))
            self.save()
        return self._key

    def _make_key(self, fields: dict[str, Any]) -> DataKey:
        key = os.urandom(32)
        wrapper = secrets.wrapping_key(fields, self.where, self.environ, create=True)
        for name in secrets.FIELDS:
            self.data.pop(name, None)
        self.data.update(fields, encryptedkey=secrets.wrap(key, wrapper))
        return DataKey(key, self.stack)

    def _migrate(self) -> DataKey:
        """Values encrypted directly under the passphrase's key (before data keys) are
        decrypted with it and encrypted again under a new data key, wrapped by the same
        passphrase."""
        passphrase = self.environ.get(PASSPHRASE_ENV)
        if not passphrase:
            raise UsageError(
                f"stack {self.stack} has secret configuration: set {PASSPHRASE_ENV} to the "
                "passphrase that encrypts it"
            )
        old = DataKey(secrets.scrypt_key(passphrase, str(self.data["encryptionsalt"])), self.stack)
        plain = {
            k: self._decrypt_tree(k, v, old) for k, v in self.values.items() if _holds_secure(v)
        }
        fields = {
            "secretsprovider": "passphrase",
            "encryptionsalt": str(self.data["encryptionsalt"]),
        }
        key = os.urandom(32)
        self.data.update(
            fields,
            encryptedkey=secrets.wrap(
                key, secrets.wrapping_key(fields, self.where, {PASSPHRASE_ENV: passphrase})
            ),
        )
        new = DataKey(key, self.stack)
        for full, value in plain.items():
            self.values[full] = self._encrypt_tree(
                full, value, self._secure_paths(self.values[full]), new
            )
        self.save()
        return new

    def restore_provider(self, recorded: Mapping[str, Any] | None) -> bool:
        """Put back the provider fields the state store recorded when the stack file has
        lost them (rewritten, regenerated): a new data key could not read the state's
        secrets. Whether anything was restored."""
        if self.has_key() or not recorded or "encryptedkey" not in recorded:
            return False
        if self.data.get("encryptionsalt") and _holds_secure(self.values):
            return False  # an older file: its values are under the passphrase's own key
        for name in secrets.FIELDS:
            self.data.pop(name, None)
        self.data.update({k: recorded[k] for k in secrets.FIELDS if k in recorded})
        self.save()
        return True

    def adopt_provider(self, spec: str | None) -> None:
        """Give a stack without secrets yet a new data key under provider `spec` (None:
        the one the environment suggests)."""
        self.refresh()
        if _holds_secure(self.values):
            raise UsageError(
                f"stack {self.stack} already has secrets: use `stackwright stack "
                "change-secrets-provider` to change how they are kept"
            )
        self._key = self._make_key(secrets.choose_provider(spec, self.environ))

    def copy_values_from(
        self, other: StackConfig, key: str | None = None, *, path: bool = False
    ) -> None:
        """Every value of `other` (or the one at `key`), its secrets encrypted again under
        this stack's key (made only if a secret is copied)."""
        self.refresh()
        other._unlocked()
        if key is None:
            copies: list[tuple[str, tuple[PathKey, ...], Any]] = [
                (full, (), value) for full, value in other.values.items()
            ]
        else:
            top, steps = parse_key(key, self.project.name, path=path)
            found, value = _get_in(other.values, (top, *steps))
            if not found:
                shown = key if path else top
                raise UsageError(f"configuration {shown} is not set for stack {other.stack}")
            if steps and _is_secure(self.values.get(top)):
                raise UsageError(
                    f"configuration {top} is a secret as a whole in stack {self.stack}: "
                    "copy it without --path"
                )
            copies = [(top, steps, value)]
        for top, steps, value in copies:
            paths = self._secure_paths(value)
            plain = other._decrypt_tree(top, value)
            sealed = self._encrypt_tree(top, plain, paths, self.data_key()) if paths else plain
            self.values[top] = (
                _set_in(self.values.get(top), steps, sealed, top) if steps else sealed
            )

    def forget(self) -> None:
        """Delete the stack file, and set aside the key file a `local` provider made for it:
        the same project and stack name on another backend (another checkout) finds the key
        under the same name, so deleting it could lose that stack's secrets for good."""
        key = self.where.local_key_file()
        if self.data.get("secretsprovider") == "local" and key.exists():
            removed = key.parent / "removed"
            removed.mkdir(mode=0o700, exist_ok=True)
            stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
            key.rename(removed / f"{key.stem}.{stamp}.key")
        self.path.unlink(missing_ok=True)

    def move_to(self, stack: str) -> None:
        """Rename the stack file (and a `local` provider's key file) for stack `stack`."""
        new_where = Where(self.project.name, stack, self.project.folder)
        if self.data.get("secretsprovider") == "local" and self.where.local_key_file().exists():
            self.where.local_key_file().rename(new_where.local_key_file())
        if self.path.exists():
            self.path.rename(self.project.stack_file(stack))
        self.stack, self.path = stack, self.project.stack_file(stack)

    def change_secrets_provider(self, spec: str, *, passphrase: str | None = None) -> str:
        """Wrap the stack's data key under another provider (or a new passphrase); the
        ciphertexts stay as they are. Returns the provider's name."""
        self.refresh()
        fields = secrets.choose_provider(spec, self.environ)
        if self.has_key():
            self.data_key()  # a wrong current passphrase stops here, before a new key file
        wrapper = secrets.wrapping_key(
            fields, self.where, self.environ, new=True, create=True, passphrase=passphrase
        )
        key = self.data_key()  # a stack without one gets it once the new provider works
        for name in secrets.FIELDS:
            self.data.pop(name, None)
        self.data.update(fields, encryptedkey=secrets.wrap(key.key, wrapper))
        self.save()
        return str(fields["secretsprovider"])

    # --- values ----------------------------------------------------------------------

    def _seal(self, full: str, value: Any, key: DataKey) -> dict[str, str]:
        return {"secure": key.encrypt(value, full.encode())}

    def _decrypt_tree(self, full: str, value: Any, key: DataKey | None = None) -> Any:
        if _is_secure(value):
            return (key or self.data_key()).decrypt(
                str(value["secure"]), full.encode(), what=f"configuration {full}"
            )
        if isinstance(value, dict):
            return {k: self._decrypt_tree(full, v, key) for k, v in value.items()}
        if isinstance(value, list):
            return [self._decrypt_tree(full, v, key) for v in value]
        return value

    @staticmethod
    def _secure_paths(value: Any, at: tuple[PathKey, ...] = ()) -> list[tuple[PathKey, ...]]:
        if _is_secure(value):
            return [at]
        if isinstance(value, dict):
            return [p for k, v in value.items() for p in StackConfig._secure_paths(v, (*at, k))]
        if isinstance(value, list):
            return [p for i, v in enumerate(value) for p in StackConfig._secure_paths(v, (*at, i))]
        return []

    def _encrypt_tree(
        self, full: str, plain: Any, paths: list[tuple[PathKey, ...]], key: DataKey
    ) -> Any:
        for steps in paths:
            _, value = _get_in(plain, steps)
            plain = _set_in(plain, steps, self._seal(full, value, key), full)
        return plain

    def set(
        self,
        key: str,
        value: Any,
        *,
        secret: bool = False,
        path: bool = False,
        plaintext: bool = False,
    ) -> None:
        """Set a value; a secret is replaced by a plain one only when `plaintext` says so."""
        self.refresh()
        if not secret and not plaintext:
            self.check_plain(key, path=path)
        top, steps = parse_key(key, self.project.name, path=path)
        refused = unknown_setting(top, self.project.name)
        if refused:
            name = top.partition(":")[2]
            raise UsageError(
                f"{refused}leave it out"
                if pulumi_setting(top)
                else f"{refused}a value the program reads goes in its own namespace "
                f"(`stackwright config set {shlex.quote(name)} VALUE`)"
            )
        bad_value = None if steps else bad_setting_value(top, value)
        if bad_value:
            raise UsageError(bad_value)
        stored = self._seal(top, value, self.data_key()) if secret else value
        if steps:
            current = self.values.get(top)
            if _is_secure(current):
                raise UsageError(
                    f"configuration {top} is a secret as a whole: set it again without --path"
                )
            self.values[top] = _set_in(current, steps, stored, top)
        else:
            self.values[top] = stored
        self.save()

    def remove(self, key: str, *, path: bool = False) -> bool:
        self.refresh()
        top, steps = parse_key(key, self.project.name, path=path)
        found = _remove_in(self.values, (top, *steps))  # a key set to null is set too
        if found:
            self.save()
        return found

    def check_plain(self, key: str, *, path: bool = False) -> None:
        """Refuse to store a plain value where a secret is: a `config set` without --secret
        would otherwise write the new value of a password in plain text, silently."""
        top, steps = parse_key(key, self.project.name, path=path)
        if top in self.project.declared_secrets():
            raise UsageError(
                f"configuration {top} is declared `secret: true` in "
                f"{shown_path(self.project.main)}: set it with --secret to keep it encrypted "
                "(preview and up refuse a plain value for it)"
            )
        if _holds_secure(_get_in(self.values, (top, *steps))[1]):
            raise UsageError(
                f"configuration {key if path else top} is a secret: set it with --secret to "
                "keep it encrypted, or with --plaintext to store the new value in plain text"
            )

    def is_secret(self, key: str) -> bool:
        return _holds_secure(self.values.get(self.full_key(key)))

    def _unlocked(self) -> None:
        """Unlock before reading stored values: an older file is re-encrypted on unlocking."""
        if _holds_secure(self.values):
            self.data_key()

    def get(self, key: str, *, path: bool = False) -> Any:
        self.refresh()
        top, steps = parse_key(key, self.project.name, path=path)
        found, value = _get_in(self.values, (top, *steps))
        if _holds_secure(value):
            # Only a secret needs the key, as with `pulumi config get`; unlocking may
            # re-encrypt an older file, so the value is read again after it.
            self._unlocked()
            found, value = _get_in(self.values, (top, *steps))
        if not found:
            setting = shlex.join(["stackwright", "config", "set", *(["--path"] * path), key])
            raise UsageError(
                f"configuration {key if path else top} is not set for stack {self.stack}: "
                f"set it with `{setting} VALUE`"
            )
        return self._decrypt_tree(top, value)

    def check_settings(self) -> None:
        """Refuse a key of Stackwright's own namespaces that none of its settings is, or a
        value such a setting cannot take (one a hand-edited or older stack file holds),
        before an operation reads the settings."""
        for full, value in self.values.items():
            refused = unknown_setting(full, self.project.name)
            if refused:
                meant = "" if pulumi_setting(full) else ", then set the one meant"
                raise UsageError(
                    f"{self.path.name}: {refused}remove it (`stackwright config rm "
                    f"{shlex.quote(full)}`){meant}; nothing was changed"
                )
            bad_value = bad_setting_value(full, value)
            if bad_value:
                raise UsageError(f"{self.path.name}: {bad_value}; nothing was changed")

    def resolved(self) -> tuple[dict[str, Any], frozenset[str]]:
        """Every value, secrets decrypted, and the set of keys holding a secret."""
        self.refresh()
        self._unlocked()
        plain = {key: self._decrypt_tree(key, value) for key, value in self.values.items()}
        return plain, frozenset(k for k, v in self.values.items() if _holds_secure(v))

    def secret_parts(self, plain: Mapping[str, Any]) -> dict[str, tuple[Any, ...]]:
        """The plain values (`resolved`'s) of each secret key's secret parts: only
        `password` of a `db` set with `--path db.password`, not the rest of `db`."""
        return {
            key: tuple(_get_in(plain[key], steps)[1] for steps in self._secure_paths(value))
            for key, value in self.values.items()
            if key in plain and _holds_secure(value)
        }

    # --- tags ------------------------------------------------------------------------

    @property
    def tags(self) -> dict[str, str]:
        tags = self.data.get("tags") or {}
        if not isinstance(tags, dict):
            raise UsageError(located(self.path, "`tags` must be a mapping of names to values"))
        return {str(k): str(v) for k, v in tags.items()}

    def set_tag(self, name: str, value: str) -> None:
        self.refresh()
        self.data["tags"] = {**self.tags, check_name("tag", name): value}
        self.save()

    def remove_tag(self, name: str) -> bool:
        self.refresh()
        tags = self.tags
        found = tags.pop(name, None) is not None
        self.data["tags"] = tags
        if found:
            self.save()
        return found

    def save(self) -> None:
        if self._holding:
            return
        self.data["config"] = self.values
        if not self.data.get("tags"):
            self.data.pop("tags", None)
        # Unicode as written, not `"h\xE9llo"`: the file is read and committed by people.
        _write_atomic(self.path, yaml.safe_dump(self.data, sort_keys=True, allow_unicode=True))
        self._seen = _identity(self.path)
