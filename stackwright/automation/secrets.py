"""A stack's secrets provider: its data key, what wraps it, and sealing secrets in state.

Every stack has a random 256-bit data key. Secret configuration values, the values
at `ResourceState.secret_paths` in state rows, secret stack outputs and `stack
export` documents are AES-256-GCM under that key. The key itself is kept in the
stack file (`encryptedkey`), wrapped (AES-256-GCM) by a key taken from
(`secretsprovider:` in the stack file):

    passphrase   scrypt of STACKWRIGHT_CONFIG_PASSPHRASE with `encryptionsalt`
                 (chosen when the stack's key is made while that variable is set)
    env          base64 of 32 bytes in STACKWRIGHT_SECRETS_KEY
    file:PATH    base64 of 32 bytes in the file PATH
    local        a key file made for the stack under $STACKWRIGHT_HOME/keys
                 (chosen when neither variable is set)

`stackwright stack change-secrets-provider` wraps the same data key anew, so no
stored ciphertext changes. Must never: write a plain secret, or the plain data
key, anywhere.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import stat
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from stackwright.errors import UsageError, remember_secret
from stackwright.model import (
    SECRET_SIG,
    SECRET_TEXT,
    ResourceState,
    SecretValue,
    is_sealed,
    map_secrets,
    outermost,
    transform_at,
)
from stackwright.state import stackwright_home

PASSPHRASE_ENV = "STACKWRIGHT_CONFIG_PASSPHRASE"
NEW_PASSPHRASE_ENV = "STACKWRIGHT_NEW_CONFIG_PASSPHRASE"
KEY_ENV = "STACKWRIGHT_SECRETS_KEY"
NEW_KEY_ENV = "STACKWRIGHT_NEW_SECRETS_KEY"

#: The stack file's fields that describe its secrets provider (also kept in the state store,
#: so a stack reference from another project can unwrap the key).
FIELDS = ("secretsprovider", "encryptionsalt", "encryptedkey")

_KEY_AAD = b"stackwright:data-key"
_STATE_AAD = b"stackwright:state"
_derived: dict[tuple[str, str], bytes] = {}  # (passphrase, salt) -> key: scrypt is slow on purpose


def _aead(key: bytes) -> Any:
    # cryptography (~9 ms to import) only when a secret is touched.
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    return AESGCM(key)


def seal_bytes(cipher: Any, plain: bytes, aad: bytes) -> str:
    """`plain` encrypted by `cipher` (`_aead(key)`) under a fresh random nonce."""
    nonce = os.urandom(12)
    return base64.b64encode(nonce + cipher.encrypt(nonce, plain, aad)).decode()


def open_bytes(cipher: Any, sealed: str, aad: bytes) -> bytes | None:
    """The plain bytes, or None when `cipher`'s key is not the key `sealed` was made with."""
    from cryptography.exceptions import InvalidTag

    try:
        blob = base64.b64decode(sealed, validate=True)
        return bytes(cipher.decrypt(blob[:12], blob[12:], aad))
    except (InvalidTag, binascii.Error, ValueError):
        return None


def scrypt_key(passphrase: str, salt: str) -> bytes:
    found = _derived.get((passphrase, salt))
    if found is None:
        from cryptography.hazmat.primitives.kdf.scrypt import Scrypt

        found = Scrypt(salt=base64.b64decode(salt), length=32, n=2**14, r=8, p=1).derive(
            passphrase.encode()
        )
        _derived[(passphrase, salt)] = found
    return found


@dataclass(frozen=True)
class DataKey:
    """A stack's data key: encrypts and decrypts JSON values."""

    key: bytes
    stack: str

    @cached_property
    def _cipher(self) -> Any:
        # Made once per key: setting one up costs about as much as sealing a small value,
        # and an `up` seals each secret resource's values twice (begun, then ended).
        return _aead(self.key)

    def encrypt(self, value: Any, aad: bytes = _STATE_AAD) -> str:
        return seal_bytes(self._cipher, json.dumps(value).encode(), aad)

    def decrypt(self, sealed: str, aad: bytes = _STATE_AAD, *, what: str = "a secret") -> Any:
        plain = open_bytes(self._cipher, sealed, aad)
        if plain is None:
            raise UsageError(
                f"cannot decrypt {what} of stack {self.stack}: it was not encrypted with this "
                "stack's data key; restore the stack file's `encryptedkey` it was made with"
            )
        value = json.loads(plain)
        remember_secret(value)
        return value


class MaskingKey(DataKey):
    """Stands in for a stack's data key where only [secret] is shown (`stack`, `stack output`
    without --show-secrets): every secret opens as [secret], so neither a passphrase nor a
    key file is needed, as a CI job reading a stack's status has neither. It seals nothing."""

    def __init__(self, stack: str) -> None:
        super().__init__(b"", stack)

    def encrypt(self, value: Any, aad: bytes = _STATE_AAD) -> str:
        raise AssertionError("a state read with secrets masked is never written back")

    def decrypt(self, sealed: str, aad: bytes = _STATE_AAD, *, what: str = "a secret") -> Any:
        return SECRET_TEXT


# --- wrapping keys -------------------------------------------------------------------------


@dataclass(frozen=True)
class Where:
    """Which stack a provider serves, for key file names and messages; `folder`, the
    project's, is where a relative `file:PATH` is (not wherever a command runs from)."""

    project: str
    stack: str
    folder: Path | None = None

    def local_key_file(self) -> Path:
        return stackwright_home() / "keys" / f"{self.project}.{self.stack}.key"


#: How to make a key for the `env` and `file:PATH` providers.
MAKE_KEY = "`python -c 'import base64, os; print(base64.b64encode(os.urandom(32)).decode())'`"


def _key_from_text(text: str, source: str) -> bytes:
    try:
        key = base64.b64decode(text.strip(), validate=True)
    except (binascii.Error, ValueError):
        key = b""
    if len(key) != 32:
        raise UsageError(
            f"{source} must hold a base64-encoded 32-byte key: make one with {MAKE_KEY}"
        )
    return key


def _key_file(path: Path, where: Where, *, create: bool) -> bytes:
    if path.is_dir():
        raise UsageError(
            f"the secrets key file {path} is a directory: name a file in it, e.g. "
            f"file:{path / 'stack.key'}"
        )
    try:
        return _read_key_file(path, where, create=create)
    except OSError as exc:
        raise UsageError(
            f"cannot {'read' if path.exists() else 'make'} the secrets key file {path}: "
            f"{exc.strerror or exc}; name a file in a folder you can write to"
        ) from exc


def _read_key_file(path: Path, where: Where, *, create: bool) -> bytes:
    if not path.exists():
        if not create:
            # `stack rm` sets a stack's key aside rather than deleting it (see StackConfig.forget).
            set_aside = sorted(path.parent.glob(f"removed/{path.stem}.*.key"))
            hint = (
                f"`stack rm` of a stack of that name set its key aside as {set_aside[-1]}: if "
                "this stack used it, move it back; else "
                if set_aside
                else ""
            )
            # `change-secrets-provider` cannot help: it unwraps the data key with this file.
            stack_file = f"Stackwright.{where.stack}.yaml"
            raise UsageError(
                f"the secrets key file {path} does not exist: {hint}copy it back from where "
                f"stack {where.stack}'s key was made (the `keys` folder of that "
                f"STACKWRIGHT_HOME), or set `secretsprovider: file:PATH` in {stack_file} to "
                "where it is now; if it is lost, so are the secrets under it: remove "
                f"`encryptedkey` and `secretsprovider` from {stack_file} to start with a new "
                "key, and set the stack's secret values again"
            )
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(base64.b64encode(os.urandom(32)).decode() + "\n")
    _check_private(path)
    text = path.read_text(encoding="utf-8", errors="replace")  # not UTF-8: not a key either
    return _key_from_text(text, f"the secrets key file {path}")


def _check_private(path: Path) -> None:
    """Refuse a key file (or its folder) that another user could write, or read: a key
    someone else planted, or can read, protects nothing."""
    for item in (path, path.parent):
        info = item.stat()
        if info.st_uid != os.getuid():
            raise UsageError(
                f"the secrets key {'file' if item == path else 'folder'} {item} belongs to "
                "another user: only yours can hold your stack's key"
            )
        # A folder others may write to could have the file swapped (unless sticky, as /tmp).
        loose = (
            info.st_mode & 0o077
            if item == path
            else info.st_mode & 0o022 and not info.st_mode & stat.S_ISVTX
        )
        if loose:
            raise UsageError(
                f"the secrets key {'file' if item == path else 'folder'} {item} is open to other "
                f"users (mode {info.st_mode & 0o777:o}): `chmod {'600' if item == path else '700'} "
                f"{item}`"
            )


def wrapping_key(
    fields: Mapping[str, Any],
    where: Where,
    environ: Mapping[str, str],
    *,
    new: bool = False,
    create: bool = False,
    passphrase: str | None = None,
) -> bytes:
    """The key that wraps the data key under the provider `fields` describe.

    `new` reads the variables that name a provider being changed to
    (STACKWRIGHT_NEW_CONFIG_PASSPHRASE, STACKWRIGHT_NEW_SECRETS_KEY); `create` makes
    a missing key file; `passphrase` overrides the passphrase variable (a prompt's answer).
    """
    kind = str(fields.get("secretsprovider") or "passphrase")
    if kind == "passphrase":
        variable = NEW_PASSPHRASE_ENV if new else PASSPHRASE_ENV
        phrase = passphrase if passphrase is not None else environ.get(variable)
        if not phrase and create and not new:  # its key is being made: nothing to change yet
            raise UsageError(
                f"stack {where.stack} is to keep its secrets under a passphrase: set {variable} "
                "to the passphrase to use"
            )
        if not phrase:
            # Only the passphrase opens them: `stack change-secrets-provider` needs it too.
            raise UsageError(
                f"stack {where.stack} keeps its secrets under a passphrase: set {variable} to it"
            )
        return scrypt_key(phrase, str(fields["encryptionsalt"]))
    if kind == "env":
        variable = NEW_KEY_ENV if new and environ.get(NEW_KEY_ENV) else KEY_ENV
        text = environ.get(variable)
        if not text and create and not new:  # its key is being made: there is none yet
            raise UsageError(
                f"stack {where.stack} is to keep its secrets under a key from the environment: "
                f"set {variable} to a base64-encoded 32-byte key, made with {MAKE_KEY}"
            )
        if not text:
            raise UsageError(
                f"stack {where.stack} keeps its secrets under a key from the environment: set "
                f"{variable} to that base64-encoded 32-byte key"
            )
        return _key_from_text(text, variable)
    if kind == "local":
        return _key_file(where.local_key_file(), where, create=create)
    if kind.startswith("file:") and kind != "file:":
        path = Path(kind[5:]).expanduser()
        if where.folder is not None and not path.is_absolute():
            path = where.folder / path  # as `main` is: the stack file says it, beside it
        return _key_file(path, where, create=create)
    raise UsageError(
        f"stack {where.stack}: unknown secrets provider {kind!r}; use passphrase, env, file:PATH or local"
    )


def choose_provider(spec: str | None, environ: Mapping[str, str]) -> dict[str, Any]:
    """The fields of a new provider: `spec` (passphrase, env, file:PATH, local), else the one
    the environment suggests (a passphrase, else a key variable, else a local key file)."""
    if spec is None:
        spec = (
            "passphrase"
            if environ.get(PASSPHRASE_ENV)
            else "env"
            if environ.get(KEY_ENV)
            else "local"
        )
    if spec not in ("passphrase", "env", "local") and not (
        spec.startswith("file:") and spec != "file:"
    ):
        raise UsageError(
            f"unknown secrets provider {spec!r}: use passphrase, env, file:PATH or local"
        )
    fields: dict[str, Any] = {"secretsprovider": spec}
    if spec == "passphrase":
        fields["encryptionsalt"] = base64.b64encode(os.urandom(16)).decode()
    return fields


def wrap(data_key: bytes, wrapper: bytes) -> str:
    return seal_bytes(_aead(wrapper), data_key, _KEY_AAD)


def unwrap(fields: Mapping[str, Any], where: Where, environ: Mapping[str, str]) -> DataKey:
    """The stack's data key; a clear error when the wrapping key is missing or wrong."""
    wrapper = wrapping_key(fields, where, environ)
    plain = open_bytes(_aead(wrapper), str(fields.get("encryptedkey") or ""), _KEY_AAD)
    if plain is None:
        kind = str(fields.get("secretsprovider") or "passphrase")
        what = {
            "passphrase": f"{PASSPHRASE_ENV} is not the passphrase",
            "env": f"{KEY_ENV} is not the key",
        }.get(kind, f"the key file of provider {kind} does not hold the key")
        raise UsageError(
            f"cannot unlock the secrets of stack {where.stack}: {what} its secrets were "
            "encrypted with; set the right one"
        )
    return DataKey(plain, where.stack)


# --- secrets in state ---------------------------------------------------------------------


class StateEncrypter:
    """`stackwright.state.Encrypter` under a stack's data key (fetched on first use)."""

    def __init__(
        self,
        key: Callable[[], DataKey],
        *,
        stack: str | None = None,
        others: Callable[[str], DataKey] | None = None,
    ) -> None:
        """`key` is stack `stack`'s data key (any stack's when `stack` is None); `others`
        gives another stack's, for moving resources between stacks."""
        self._key = key
        self._stack = stack
        self._others = others

    def _key_of(self, stack: str) -> DataKey:
        if self._stack is None or stack == self._stack or self._others is None:
            return self._key()
        return self._others(stack)

    def _sealer(self, stack: str) -> Callable[[Any], Any]:
        return lambda value: (
            value if is_sealed(value) else {SECRET_SIG: self._key_of(stack).encrypt(value)}
        )

    def _unsealer(self, stack: str) -> Callable[[Any], Any]:
        return lambda value: (
            self._key_of(stack).decrypt(value[SECRET_SIG]) if is_sealed(value) else value
        )

    def _each(self, resource: ResourceState, change: Callable[[Any], Any]) -> ResourceState:
        if not resource.secret_paths:
            return resource
        inputs, outputs = resource.inputs, resource.outputs
        for path in outermost(resource.secret_paths):
            inputs = transform_at(inputs, path, change)
            outputs = transform_at(outputs, path, change)
        return resource.changed(inputs=inputs, outputs=outputs)

    def seal(self, stack: str, resource: ResourceState) -> ResourceState:
        return self._each(resource, self._sealer(stack))

    def unseal(self, stack: str, resource: ResourceState) -> ResourceState:
        return self._each(resource, self._unsealer(stack))

    def seal_outputs(self, stack: str, outputs: Mapping[str, Any]) -> dict[str, Any]:
        return {
            k: map_secrets(
                v, lambda secret: {SECRET_SIG: self._key_of(stack).encrypt(secret.value)}
            )
            for k, v in outputs.items()
        }

    def unseal_outputs(self, stack: str, outputs: Mapping[str, Any]) -> dict[str, Any]:
        def opened(sealed: Any) -> SecretValue:
            return SecretValue(self._key_of(stack).decrypt(sealed[SECRET_SIG]))

        return {k: map_envelopes(v, is_sealed, opened) for k, v in outputs.items()}


# --- secrets in an exported document ----------------------------------------------------

#: How `stack export --show-secrets` writes a secret: `{"@plaintext": value}` in place of
#: its sealed envelope (as Pulumi's export writes `plaintext`); `stack import` seals each
#: one again under the importing stack's key before the document goes anywhere else.
PLAIN_SIG = "@plaintext"


def _is_plain(value: Any) -> bool:
    return isinstance(value, dict) and len(value) == 1 and PLAIN_SIG in value


def map_envelopes(value: Any, found: Callable[[Any], bool], change: Callable[[Any], Any]) -> Any:
    """A copy of a JSON document with each envelope `found` recognises replaced by `change(it)`."""
    if found(value):
        return change(value)
    if isinstance(value, dict):
        return {k: map_envelopes(v, found, change) for k, v in value.items()}
    if isinstance(value, list):
        return [map_envelopes(v, found, change) for v in value]
    return value


def reveal_document(document: Any, key: Callable[[], DataKey]) -> Any:
    """An exported document with each secret decrypted, as `{"@plaintext": value}`; the
    stack's key is unwrapped only if it holds a secret."""
    return map_envelopes(
        document, is_sealed, lambda sealed: {PLAIN_SIG: key().decrypt(sealed[SECRET_SIG])}
    )


def seal_document(document: Any, key: Callable[[], DataKey]) -> Any:
    """A document to import with each `{"@plaintext": value}` encrypted under `key` (made
    only if the document holds one and the stack has no key yet)."""

    def seal(plain: dict[str, Any]) -> dict[str, str]:
        remember_secret(plain[PLAIN_SIG])  # an error quoting it shows [secret]
        return {SECRET_SIG: key().encrypt(plain[PLAIN_SIG])}

    return map_envelopes(document, _is_plain, seal)
