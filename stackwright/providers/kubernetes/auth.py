"""Credentials for API requests: bearer tokens, token files, exec plugins, basic auth.

An `Auth` gives the headers for the next request and, after a 401, gets a chance
to renew them (re-read a rotated token file, re-run an exec plugin). Client
certificates are not here: they belong to the TLS context (`kubeconfig.py`).

Exec plugins follow the client.authentication.k8s.io ExecCredential protocol as
client-go runs them: the kubeconfig's env added to ours, KUBERNETES_EXEC_INFO
describing the request, no stdin, a token cached until its expirationTimestamp.
Must never: put a token or the plugin's stdout in an error message.
"""

from __future__ import annotations

import asyncio
import base64
import datetime
import os
import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import orjson

from stackwright.providers.kubernetes.errors import ConfigError

__all__ = ["Auth", "BasicAuth", "ExecAuth", "ExecPlugin", "NoAuth", "TokenAuth", "TokenFileAuth"]

EXEC_API_VERSIONS = (
    "client.authentication.k8s.io/v1",
    "client.authentication.k8s.io/v1beta1",
    "client.authentication.k8s.io/v1alpha1",
)


class Auth(Protocol):
    async def headers(self) -> Mapping[str, str]:
        """Headers to add to the next request."""
        ...

    async def refresh(self) -> bool:
        """Called after a 401: True when renewed credentials are worth one more try."""
        ...


class NoAuth:
    async def headers(self) -> Mapping[str, str]:
        return {}

    async def refresh(self) -> bool:
        return False


class TokenAuth:
    def __init__(self, token: str) -> None:
        self._headers = {"Authorization": f"Bearer {token.strip()}"}

    async def headers(self) -> Mapping[str, str]:
        return self._headers

    async def refresh(self) -> bool:
        return False


class BasicAuth:
    def __init__(self, username: str, password: str) -> None:
        pair = base64.b64encode(f"{username}:{password}".encode()).decode()
        self._headers = {"Authorization": f"Basic {pair}"}

    async def headers(self) -> Mapping[str, str]:
        return self._headers

    async def refresh(self) -> bool:
        return False


class TokenFileAuth:
    """A token read from a file that may be rotated (service account tokens are, hourly).

    Re-read at most once a `period` (client-go uses a minute) and after every 401.
    """

    def __init__(
        self, path: str, *, period: float = 60.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._path = path
        self._period = period
        self._clock = clock
        self._read_at = -float("inf")
        self._headers: dict[str, str] = {}

    def _read(self) -> None:
        try:
            token = Path(self._path).read_text().strip()
        except OSError as exc:
            raise ConfigError(
                f"cannot read the token file {self._path}: {exc.strerror or exc}; "
                "fix tokenFile in the kubeconfig (or the mounted service account token)"
            ) from exc
        self._headers = {"Authorization": f"Bearer {token}"}
        self._read_at = self._clock()

    async def headers(self) -> Mapping[str, str]:
        if self._clock() - self._read_at >= self._period:
            self._read()
        return self._headers

    async def refresh(self) -> bool:
        before = self._headers
        self._read()
        return self._headers != before


@dataclass(frozen=True)
class ExecPlugin:
    """A kubeconfig `users[].user.exec` entry, with where it came from (for messages)."""

    api_version: str
    command: str
    args: Sequence[str] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    install_hint: str = ""
    provide_cluster_info: bool = False
    cluster_info: Mapping[str, Any] = field(default_factory=dict)
    user: str = ""
    source: str = ""


#: The headers and expiry of each exec plugin's last token, by what runs it (`_plugin_key`),
#: shared by every `ExecAuth` of the process, as client-go caches exec authenticators
#: process-wide: a run's cluster check and the run itself (or two providers of one
#: cluster) reach the cluster through separate clients, and a plugin such as `aws eks
#: get-token` takes from a tenth of a second to seconds.
_TOKENS: dict[bytes, tuple[dict[str, str], float | None]] = {}


def _plugin_key(plugin: ExecPlugin) -> bytes:
    """What makes two plugins' tokens the same: the command as run (a relative one from the
    working directory), its environment — the process's too, which chooses the identity
    (`AWS_PROFILE`) in a process that runs several stacks (the automation API, the
    operator) — and the cluster it is told of (not where the kubeconfig entry was read).
    As bytes, whose hash Python keeps: every request looks the token up."""
    relative = os.sep in plugin.command and not os.path.isabs(plugin.command)
    return orjson.dumps(
        [
            plugin.api_version,
            os.path.abspath(plugin.command) if relative else plugin.command,
            list(plugin.args),
            {**os.environ, **plugin.env},
            plugin.cluster_info if plugin.provide_cluster_info else None,
        ],
        option=orjson.OPT_SORT_KEYS,
        default=str,
    )


class ExecAuth:
    """Runs an exec credential plugin for a token; caches it (for the process, `_TOKENS`)
    until it expires or a 401 says it is no longer good."""

    #: Renew this long before the plugin's expirationTimestamp, so a request never races expiry.
    EXPIRY_MARGIN = 10.0

    def __init__(self, plugin: ExecPlugin, *, clock: Callable[[], float] = time.time) -> None:
        self._plugin = plugin
        self._key = _plugin_key(plugin)
        self._clock = clock
        self._headers: dict[str, str] | None = None
        self._expires: float | None = None
        self._lock = asyncio.Lock()
        named_path = os.sep in plugin.command
        if not (os.path.exists if named_path else shutil.which)(plugin.command):
            # Found now, when the kubeconfig is read, not at the first request: a plugin that
            # is not installed is the user's to fix before anything runs (client-go looks it
            # up on PATH the same way).
            raise self._missing()

    def _missing(self) -> ConfigError:
        plugin = self._plugin
        hint = f" {plugin.install_hint.strip()}" if plugin.install_hint.strip() else ""
        where = "" if os.sep in plugin.command else " on PATH"
        return ConfigError(
            f"{self._where()} was not found{where}: install it or fix users[].user.exec.command "
            f"in the kubeconfig.{hint}"
        )

    def _where(self) -> str:
        where = f"exec plugin {self._plugin.command!r}"
        if self._plugin.user:
            where += f" of user {self._plugin.user!r}"
        if self._plugin.source:
            where += f" ({self._plugin.source})"
        return where

    def _valid(self) -> bool:
        cached = _TOKENS.get(self._key)  # this client's last token, or a newer one's
        if cached is not None:
            self._headers, self._expires = cached
        return self._headers is not None and (
            self._expires is None or self._clock() < self._expires - self.EXPIRY_MARGIN
        )

    async def headers(self) -> Mapping[str, str]:
        if self._valid():
            assert self._headers is not None
            return self._headers
        async with self._lock:
            if not self._valid():
                await self._run()
            assert self._headers is not None
            return self._headers

    async def refresh(self) -> bool:
        async with self._lock:
            if _TOKENS.get(self._key, (None,))[0] is self._headers:
                del _TOKENS[self._key]  # refused: not to be handed to another client
            self._headers = None
            await self._run()
        return True

    async def _run(self) -> None:
        plugin = self._plugin
        if plugin.api_version not in EXEC_API_VERSIONS:
            raise ConfigError(
                f"{self._where()} uses apiVersion {plugin.api_version!r}; "
                f"use one of {', '.join(EXEC_API_VERSIONS[:2])}"
            )
        spec: dict[str, Any] = {"interactive": False}
        if plugin.provide_cluster_info:
            spec["cluster"] = dict(plugin.cluster_info)
        info = {"apiVersion": plugin.api_version, "kind": "ExecCredential", "spec": spec}
        env = {**os.environ, **plugin.env, "KUBERNETES_EXEC_INFO": orjson.dumps(info).decode()}
        try:
            process = await asyncio.create_subprocess_exec(
                plugin.command,
                *plugin.args,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=env,
            )
        except FileNotFoundError as exc:
            raise self._missing() from exc
        except PermissionError as exc:
            raise ConfigError(f"{self._where()} is not executable: {exc.strerror}") from exc
        stdout, stderr = await process.communicate()
        if process.returncode != 0:
            detail = stderr.decode(errors="replace").strip().splitlines()
            last = f": {detail[-1]}" if detail else ""
            raise ConfigError(
                f"{self._where()} failed with exit code {process.returncode}{last}; run it by hand to see why"
            )
        try:
            credential = orjson.loads(stdout)
            status = credential["status"]
        except (orjson.JSONDecodeError, KeyError, TypeError) as exc:
            raise ConfigError(
                f"{self._where()} did not print an ExecCredential with a status (JSON) on stdout"
            ) from exc
        if credential.get("apiVersion") not in (None, plugin.api_version):
            raise ConfigError(
                f"{self._where()} answered apiVersion {credential.get('apiVersion')!r}, "
                f"but the kubeconfig asked for {plugin.api_version!r}"
            )
        token = status.get("token") if isinstance(status, dict) else None
        if not token:
            if isinstance(status, dict) and status.get("clientCertificateData"):
                raise ConfigError(
                    f"{self._where()} returned a client certificate; Stackwright supports exec plugins "
                    "that return a token (status.token)"
                )
            raise ConfigError(f"{self._where()} returned no status.token")
        self._headers = {"Authorization": f"Bearer {token}"}
        self._expires = _parse_time(status.get("expirationTimestamp"))
        _TOKENS[self._key] = (self._headers, self._expires)


def _parse_time(text: object) -> float | None:
    if not isinstance(text, str) or not text:
        return None
    try:
        moment = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.UTC)
    return moment.timestamp()
