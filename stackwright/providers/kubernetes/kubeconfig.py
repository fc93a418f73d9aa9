"""Finding and reading the kubeconfig the way kubectl does, down to one `ClusterConfig`.

Where the configuration comes from, in kubectl's order:

1. an explicit `kubeconfig` (a file path, or the kubeconfig's YAML text itself, as
   Pulumi's provider accepts);
2. `KUBECONFIG`, a list of files joined with `:` and merged as client-go merges
   them: the first file to define a cluster / context / user name wins, the first
   `current-context` wins, relative paths are relative to the file that holds them,
   missing files are skipped;
3. `~/.kube/config`;
4. the in-cluster service account (`KUBERNETES_SERVICE_HOST` and the mounted token).

The merged YAML is read into typed clusters / contexts / users (`_typed`), the
fields and types lightkube's `KubeConfig` models, without importing lightkube:
that import (lightkube, httpx2, msgspec) cost about 35 ms of every command's
start. The few fields it does not model (`tls-server-name`, `proxy-url`,
`provideClusterInfo`) are read from the merged YAML. Every problem is a
`ConfigError` of one line that names the file, the context and the fix.
Must never: print a token, a password or key material.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import ipaddress
import os
import ssl
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from stackwright.providers.kubernetes.auth import (
    Auth,
    BasicAuth,
    ExecAuth,
    ExecPlugin,
    NoAuth,
    TokenAuth,
    TokenFileAuth,
)
from stackwright.providers.kubernetes.errors import ConfigError

__all__ = ["SERVICE_ACCOUNT_DIR", "ClusterConfig", "load_config"]

SERVICE_ACCOUNT_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")
DEFAULT_NAMESPACE = "default"
_EXEC_EXTENSION = "client.authentication.k8s.io/exec"
#: libyaml's parser when PyYAML has it: the same data ~9x faster (~1.5 ms of each run for a
#: small kubeconfig, read by the check before the run and again by the run's provider).
_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True)
class ClusterConfig:
    """Everything needed to talk to one cluster as one user."""

    server: str
    context: str
    namespace: str
    source: str  # where it came from, for messages: a path, "KUBECONFIG=a:b", "in-cluster ..."
    ssl_context: ssl.SSLContext | None
    auth: Auth
    user: str = ""
    tls_server_name: str | None = None
    proxy: str | None = None

    def describe(self) -> str:
        """`context "x" (kubeconfig /path)`, the phrase messages use to say which cluster."""
        return f"context {self.context!r} ({self.source})"


def load_config(
    kubeconfig: str | os.PathLike[str] | None = None,
    context: str | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    home: Path | None = None,
    service_account_dir: Path = SERVICE_ACCOUNT_DIR,
) -> ClusterConfig:
    """Load the configuration kubectl would use; `context` overrides the current context.

    `environ`, `home` and `service_account_dir` are the process's by default; tests pass their own.
    """
    env = os.environ if environ is None else environ
    home_dir = home if home is not None else Path.home()
    documents: list[tuple[dict[str, Any], Path | None]] = []
    if kubeconfig is not None:
        text = os.fspath(kubeconfig)
        if _looks_like_yaml(text):
            documents.append((_parse(text, "the kubeconfig given inline"), None))
            source = "the kubeconfig given inline"
        else:
            path = Path(text).expanduser()
            if not path.is_file():
                raise ConfigError(
                    f"kubeconfig file {path} does not exist: pass an existing file "
                    "(or run `stackwright cluster kubeconfig` for the local cluster's)"
                )
            documents.append((_read(path), path))
            source = f"kubeconfig {path}"
    else:
        listed = env.get("KUBECONFIG", "")
        paths = [Path(p).expanduser() for p in listed.split(os.pathsep) if p] if listed else []
        if paths:
            existing = [p for p in paths if p.is_file()]
            source = f"KUBECONFIG={listed}" if len(paths) > 1 else f"kubeconfig {paths[0]}"
            if not existing:
                if _in_cluster_available(env, service_account_dir):
                    return _in_cluster(env, service_account_dir, context)
                raise ConfigError(
                    f"none of the files in KUBECONFIG exist ({listed}): fix KUBECONFIG "
                    "or unset it to use ~/.kube/config"
                )
            documents.extend((_read(p), p) for p in existing)
        else:
            default = home_dir / ".kube" / "config"
            if not default.is_file():
                if _in_cluster_available(env, service_account_dir):
                    return _in_cluster(env, service_account_dir, context)
                # `cluster start` writes its own kubeconfig, not ~/.kube/config: a stack
                # reaches a local cluster by naming it.
                raise ConfigError(
                    f"no kubeconfig found: set KUBECONFIG, create {default}, or name one "
                    "(the stack's `kubernetes:kubeconfig`, a provider's kubeconfig=, `policy "
                    "audit --kubeconfig FILE`); for a local cluster, `stackwright config set "
                    "kubernetes:cluster NAME` (after `stackwright cluster start --name NAME`) "
                    "or `policy audit --cluster NAME`"
                )
            documents.append((_read(default), default))
            source = f"kubeconfig {default}"
    merged = _merge(documents)
    return _select(merged, context, source, env)


# --- reading and merging ------------------------------------------------------------


def _looks_like_yaml(text: str) -> bool:
    return "\n" in text or text.lstrip().startswith(("{", "apiVersion:", "clusters:", "kind:"))


def from_folder(kubeconfig: Any, folder: Path | None) -> Any:
    """A kubeconfig setting (a path or the text itself) with a relative path taken from
    `folder`, the program's: as Pulumi, whose program runs there, reads one — not from
    wherever in the project the command was started."""
    if not isinstance(kubeconfig, str) or folder is None or _looks_like_yaml(kubeconfig):
        return kubeconfig
    path = Path(kubeconfig).expanduser()
    return kubeconfig if path.is_absolute() else str(folder / path)


def _read(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text()
    except OSError as exc:
        raise ConfigError(f"cannot read kubeconfig {path}: {exc.strerror or exc}") from exc
    return _parse(text, f"kubeconfig {path}")


def _parse(text: str, where: str) -> dict[str, Any]:
    try:
        data = yaml.load(text, Loader=_LOADER)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}" if mark is not None else ""
        raise ConfigError(f"{where} is not valid YAML{at}: fix or regenerate it") from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(
            f"{where} is not a kubeconfig: expected a mapping with clusters, contexts and users"
        )
    return data


def _merge(documents: list[tuple[dict[str, Any], Path | None]]) -> dict[str, Any]:
    """client-go's merge: first definition of each name wins; first current-context wins."""
    merged: dict[str, Any] = {"clusters": [], "contexts": [], "users": [], "current-context": None}
    seen: dict[str, set[str]] = {"clusters": set(), "contexts": set(), "users": set()}
    entry_key = {"clusters": "cluster", "contexts": "context", "users": "user"}
    for data, path in documents:
        if merged["current-context"] is None and data.get("current-context"):
            merged["current-context"] = data["current-context"]
        for section in ("clusters", "contexts", "users"):
            entries = data.get(section) or []
            if not isinstance(entries, list):
                raise ConfigError(f"{_where(path)}: {section} must be a list")
            for entry in entries:
                if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
                    raise ConfigError(f"{_where(path)}: every entry of {section} needs a name")
                name = entry["name"]
                if name in seen[section]:
                    continue
                seen[section].add(name)
                body = entry.get(entry_key[section]) or {}
                if not isinstance(body, dict):
                    raise ConfigError(f"{_where(path)}: {section} entry {name!r} must be a mapping")
                merged[section].append(
                    {"name": name, entry_key[section]: _resolve(section, body, path)}
                )
    return merged


def _where(path: Path | None) -> str:
    return f"kubeconfig {path}" if path is not None else "the kubeconfig given inline"


def _resolve(section: str, body: dict[str, Any], path: Path | None) -> dict[str, Any]:
    """Make relative file paths absolute against the directory of the file that holds them."""
    if path is None:
        return body
    base = path.parent
    body = dict(body)

    def absolute(value: Any) -> Any:
        if isinstance(value, str) and value and not os.path.isabs(value):
            return str(base / os.path.expanduser(value))
        return value

    if section == "clusters" and "certificate-authority" in body:
        body["certificate-authority"] = absolute(body["certificate-authority"])
    if section == "users":
        for key in ("client-certificate", "client-key", "tokenFile"):
            if key in body:
                body[key] = absolute(body[key])
        exec_ = body.get("exec")
        if isinstance(exec_, dict) and isinstance(exec_.get("command"), str):
            command = exec_["command"]
            # client-go resolves a relative command only when it names a path ("./bin/x").
            if os.sep in command and not os.path.isabs(command):
                body["exec"] = {**exec_, "command": str(base / command)}
    return body


# --- choosing a context ----------------------------------------------------------------


def _select(
    merged: dict[str, Any], context: str | None, source: str, env: Mapping[str, str]
) -> ClusterConfig:
    try:
        config = _typed(merged)
    except _Malformed as exc:
        raise ConfigError(f"{source} is malformed: {exc}; fix the entry it names") from None
    name = context or config.current_context
    if not name:
        raise ConfigError(
            f"{source} sets no current-context: pass context= or run `kubectl config use-context NAME`"
        )
    if name not in config.contexts:
        available = ", ".join(sorted(config.contexts)) or "none"
        raise ConfigError(
            f"context {name!r} not found in {source} (available: {available}): "
            "pass an existing context or run `kubectl config get-contexts`"
        )
    ctx = config.contexts[name]
    if ctx.cluster not in config.clusters:
        raise ConfigError(
            f"context {name!r} in {source} refers to cluster {ctx.cluster!r}, which is not defined there"
        )
    cluster = config.clusters[ctx.cluster]
    raw_cluster = _raw(merged, "clusters", "cluster", ctx.cluster)
    user_name = ctx.user or ""
    if user_name and user_name not in config.users:
        raise ConfigError(
            f"context {name!r} in {source} refers to user {user_name!r}, which is not defined there"
        )
    user = config.users.get(user_name) if user_name else None
    raw_user = _raw(merged, "users", "user", user_name) if user_name else {}
    where = f"context {name!r} ({source})"
    server = cluster.server
    if not urlsplit(server).scheme:
        server = "https://" + server
    tls_server_name = raw_cluster.get("tls-server-name") or None
    ssl_context = _ssl_context(cluster, user, where) if urlsplit(server).scheme == "https" else None
    auth = _auth(user, raw_user, user_name, raw_cluster, server, source, where)
    proxy = raw_cluster.get("proxy-url") or _env_proxy(server, env)
    return ClusterConfig(
        server=server,
        context=name,
        namespace=ctx.namespace or DEFAULT_NAMESPACE,
        source=source,
        ssl_context=ssl_context,
        auth=auth,
        user=user_name,
        tls_server_name=tls_server_name,
        proxy=proxy,
    )


# --- the typed view of a merged kubeconfig -----------------------------------------------


class _Malformed(ValueError):
    """A field of the wrong type, or a required one missing: the message names it."""


@dataclass(frozen=True)
class _Cluster:
    server: str = "http://localhost:8080"
    certificate_auth: str | None = None
    certificate_auth_data: str | None = None
    insecure: bool = False


@dataclass(frozen=True)
class _Context:
    cluster: str
    user: str | None = None
    namespace: str | None = None


@dataclass(frozen=True)
class _NameValue:
    name: str
    value: str


@dataclass(frozen=True)
class _Exec:
    apiVersion: str  # the kubeconfig's own spelling
    command: str
    env: tuple[_NameValue, ...] | None = None
    args: tuple[str, ...] | None = None
    installHint: str | None = None


@dataclass(frozen=True)
class _User:
    exec: _Exec | None = None
    username: str | None = None
    password: str | None = None
    token: str | None = None
    token_file: str | None = None
    auth_provider: dict[str, Any] | None = None
    client_cert: str | None = None
    client_cert_data: str | None = None
    client_key: str | None = None
    client_key_data: str | None = None


@dataclass(frozen=True)
class _Typed:
    current_context: str | None
    clusters: dict[str, _Cluster]
    contexts: dict[str, _Context]
    users: dict[str, _User]


def _value(
    body: Mapping[str, Any], key: str, kind: type, at: str, *, required: bool = False
) -> Any:
    """`body[key]` checked to be a `kind`; None when absent or null (unless `required`)."""
    value = body.get(key)
    if value is None:
        if required:
            raise _Malformed(f"`{key}` is missing at {at}")
        return None
    if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
        raise _Malformed(
            f"`{key}` at {at} must be a {_KIND_NAMES[kind]}, not {type(value).__name__}"
        )
    return value


_KIND_NAMES: dict[type, str] = {str: "string", bool: "boolean", dict: "mapping", list: "list"}


def _strings(body: Mapping[str, Any], key: str, at: str) -> tuple[str, ...] | None:
    items = _value(body, key, list, at)
    if items is None:
        return None
    for item in items:
        if not isinstance(item, str):
            raise _Malformed(f"every item of `{key}` at {at} must be a string")
    return tuple(items)


def _exec(body: Mapping[str, Any], at: str) -> _Exec:
    env = _value(body, "env", list, at)
    pairs = None
    if env is not None:
        pairs = []
        for item in env:
            if not isinstance(item, dict):
                raise _Malformed(f"every item of `env` at {at} must be a mapping of name and value")
            pairs.append(
                _NameValue(
                    _value(item, "name", str, f"{at}.env", required=True),
                    _value(item, "value", str, f"{at}.env", required=True),
                )
            )
    return _Exec(
        _value(body, "apiVersion", str, at, required=True),
        _value(body, "command", str, at, required=True),
        tuple(pairs) if pairs is not None else None,
        _strings(body, "args", at),
        _value(body, "installHint", str, at),
    )


def _typed(merged: Mapping[str, Any]) -> _Typed:
    """The merged kubeconfig's clusters, contexts and users, each field type-checked."""
    clusters: dict[str, _Cluster] = {}
    for entry in merged["clusters"]:
        body, at = entry["cluster"], f"cluster {entry['name']!r}"
        server = _value(body, "server", str, at)
        clusters[entry["name"]] = _Cluster(
            server if server is not None else _Cluster.server,
            _value(body, "certificate-authority", str, at),
            _value(body, "certificate-authority-data", str, at),
            bool(_value(body, "insecure-skip-tls-verify", bool, at)),
        )
    contexts: dict[str, _Context] = {}
    for entry in merged["contexts"]:
        body, at = entry["context"], f"context {entry['name']!r}"
        contexts[entry["name"]] = _Context(
            _value(body, "cluster", str, at, required=True),
            _value(body, "user", str, at),
            _value(body, "namespace", str, at),
        )
    users: dict[str, _User] = {}
    for entry in merged["users"]:
        body, at = entry["user"], f"user {entry['name']!r}"
        exec_ = _value(body, "exec", dict, at)
        users[entry["name"]] = _User(
            _exec(exec_, f"{at} exec") if exec_ is not None else None,
            _value(body, "username", str, at),
            _value(body, "password", str, at),
            _value(body, "token", str, at),
            _value(body, "tokenFile", str, at),
            _value(body, "auth-provider", dict, at),
            _value(body, "client-certificate", str, at),
            _value(body, "client-certificate-data", str, at),
            _value(body, "client-key", str, at),
            _value(body, "client-key-data", str, at),
        )
    current = merged.get("current-context")
    return _Typed(current if isinstance(current, str) else None, clusters, contexts, users)


def _raw(merged: dict[str, Any], section: str, key: str, name: str) -> dict[str, Any]:
    for entry in merged[section]:
        if entry["name"] == name:
            body: dict[str, Any] = entry[key]
            return body
    return {}


def _ssl_context(cluster: Any, user: Any, where: str) -> ssl.SSLContext:
    try:
        if cluster.insecure:
            # Not create_default_context(): it loads the system's CA store (~20 ms) only
            # for verification to be turned off.
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        elif cluster.certificate_auth_data:
            context = ssl.create_default_context(
                cadata=_b64(
                    cluster.certificate_auth_data, "certificate-authority-data", where
                ).decode()
            )
        elif cluster.certificate_auth:
            context = ssl.create_default_context(cafile=cluster.certificate_auth)
        else:
            context = ssl.create_default_context()
    except (OSError, ssl.SSLError, ValueError) as exc:
        field = (
            "certificate-authority-data"
            if cluster.certificate_auth_data
            else "certificate-authority"
        )
        detail = f" {cluster.certificate_auth}" if field == "certificate-authority" else ""
        raise ConfigError(
            f"the cluster's {field}{detail} in {where} cannot be used: {_reason(exc)}"
        ) from exc
    if user is not None and (user.client_cert or user.client_cert_data):
        _load_client_cert(context, user, where)
    return context


def _load_client_cert(context: ssl.SSLContext, user: Any, where: str) -> None:
    if not (user.client_key or user.client_key_data):
        raise ConfigError(f"the user in {where} has a client certificate but no client-key")
    try:
        if user.client_cert_data or user.client_key_data:
            # ssl only loads key material from files: write them for the call, then delete them.
            import tempfile  # with random (~1 ms), for a kubeconfig that holds key data

            with tempfile.TemporaryDirectory(prefix="stackwright-") as folder:
                cert = user.client_cert
                key = user.client_key
                if user.client_cert_data:
                    cert = os.path.join(folder, "client.crt")
                    _write_private(
                        cert, _b64(user.client_cert_data, "client-certificate-data", where)
                    )
                if user.client_key_data:
                    key = os.path.join(folder, "client.key")
                    _write_private(key, _b64(user.client_key_data, "client-key-data", where))
                context.load_cert_chain(cert, key)
        else:
            context.load_cert_chain(user.client_cert, user.client_key)
    except (OSError, ssl.SSLError) as exc:
        raise ConfigError(
            f"the client certificate or key of the user in {where} cannot be loaded: {_reason(exc)}"
        ) from exc


def _write_private(path: str, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)


def _b64(value: str, field: str, where: str) -> bytes:
    try:
        return base64.b64decode(value, validate=False)
    except (binascii.Error, ValueError) as exc:
        raise ConfigError(f"{field} in {where} is not base64") from exc


def _reason(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return f"{exc.strerror}" + (f": {exc.filename}" if exc.filename else "")
    return str(exc) or type(exc).__name__


def _auth(
    user: Any,
    raw_user: dict[str, Any],
    user_name: str,
    raw_cluster: dict[str, Any],
    server: str,
    source: str,
    where: str,
) -> Auth:
    if user is None:
        return NoAuth()
    if user.token:
        return TokenAuth(user.token)
    if user.token_file:
        return TokenFileAuth(user.token_file)
    if user.exec is not None:
        raw_exec = raw_user.get("exec") or {}
        cluster_info: dict[str, Any] = {"server": server}
        for key in (
            "certificate-authority-data",
            "insecure-skip-tls-verify",
            "tls-server-name",
            "proxy-url",
        ):
            if key in raw_cluster:
                cluster_info[key] = raw_cluster[key]
        ca_file = raw_cluster.get("certificate-authority")
        if (
            raw_exec.get("provideClusterInfo")
            and ca_file
            and "certificate-authority-data" not in cluster_info
        ):
            # client-go sends the CA's bytes whichever way the kubeconfig gives them.
            with contextlib.suppress(OSError, TypeError):
                ca = Path(ca_file).read_bytes()
                cluster_info["certificate-authority-data"] = base64.b64encode(ca).decode()
        for extension in raw_cluster.get("extensions") or []:
            if isinstance(extension, dict) and extension.get("name") == _EXEC_EXTENSION:
                cluster_info["config"] = extension.get("extension")
        return ExecAuth(
            ExecPlugin(
                api_version=user.exec.apiVersion,
                command=user.exec.command,
                args=tuple(user.exec.args or ()),
                env={e.name: e.value for e in user.exec.env or ()},
                install_hint=user.exec.installHint or "",
                provide_cluster_info=bool(raw_exec.get("provideClusterInfo")),
                cluster_info=cluster_info,
                user=user_name,
                source=source,
            )
        )
    if user.auth_provider:
        provider = user.auth_provider.get("name", "")
        config = user.auth_provider.get("config") or {}
        if provider == "oidc" and config.get("id-token"):
            return TokenAuth(str(config["id-token"]))
        raise ConfigError(
            f"the user in {where} uses auth-provider {provider!r}, which Kubernetes removed: "
            "switch it to an exec credential plugin (for GKE: gke-gcloud-auth-plugin, for AKS: kubelogin)"
        )
    if user.username and user.password:
        return BasicAuth(user.username, user.password)
    return NoAuth()


# --- proxies ----------------------------------------------------------------------------


def _env_proxy(server: str, env: Mapping[str, str]) -> str | None:
    """The proxy Go's ProxyFromEnvironment would pick: never for loopback, honouring NO_PROXY."""
    parts = urlsplit(server)
    host = parts.hostname or ""
    if host == "localhost" or _is_loopback(host):
        return None
    names = (
        ("https_proxy", "HTTPS_PROXY") if parts.scheme == "https" else ("http_proxy", "HTTP_PROXY")
    )
    proxy = next((env[n] for n in names if env.get(n)), None)
    if not proxy:
        return None
    no_proxy = env.get("no_proxy") or env.get("NO_PROXY") or ""
    for entry in (e.strip() for e in no_proxy.split(",")):
        if not entry:
            continue
        if entry == "*":
            return None
        if "/" in entry:
            with contextlib.suppress(ValueError):
                if ipaddress.ip_address(host) in ipaddress.ip_network(entry, strict=False):
                    return None
            continue
        bare = entry.split(":")[0].lstrip(".").lower()
        if host.lower() == bare or host.lower().endswith("." + bare):
            return None
    return proxy


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


# --- in-cluster ---------------------------------------------------------------------------


def _in_cluster_available(env: Mapping[str, str], folder: Path) -> bool:
    return bool(env.get("KUBERNETES_SERVICE_HOST")) and (folder / "token").is_file()


def _in_cluster(env: Mapping[str, str], folder: Path, context: str | None) -> ClusterConfig:
    source = f"in-cluster service account {folder}"
    if context:
        raise ConfigError(
            f"context {context!r} was asked for, but no kubeconfig exists and only the {source} is available"
        )
    host = env["KUBERNETES_SERVICE_HOST"]
    port = env.get("KUBERNETES_SERVICE_PORT", "443")
    if ":" in host:
        host = f"[{host}]"
    try:
        ssl_context = ssl.create_default_context(cafile=str(folder / "ca.crt"))
    except (OSError, ssl.SSLError) as exc:
        raise ConfigError(f"the {source} has no usable ca.crt: {_reason(exc)}") from exc
    try:
        namespace = (folder / "namespace").read_text().strip() or DEFAULT_NAMESPACE
    except OSError:
        namespace = DEFAULT_NAMESPACE
    return ClusterConfig(
        server=f"https://{host}:{port}",
        context="in-cluster",
        namespace=namespace,
        source=source,
        ssl_context=ssl_context,
        auth=TokenFileAuth(str(folder / "token")),
        user="serviceaccount",
    )
