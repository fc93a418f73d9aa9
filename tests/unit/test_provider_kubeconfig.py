"""Loading kubeconfigs as kubectl does: files, KUBECONFIG merging, contexts, credentials, in-cluster."""

from __future__ import annotations

import asyncio
import base64
import datetime
import json
import ssl
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from stackwright.errors import UsageError
from stackwright.providers.kubernetes.auth import BasicAuth, ExecAuth, TokenAuth, TokenFileAuth
from stackwright.providers.kubernetes.errors import ConfigError
from stackwright.providers.kubernetes.kubeconfig import load_config


def pem_pair(name: str = "test") -> tuple[bytes, bytes]:
    """A self-signed certificate and its key, PEM-encoded."""
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return cert.public_bytes(serialization.Encoding.PEM), key_pem


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def kubeconfig(
    *,
    contexts: dict[str, tuple[str, str, str | None]],
    clusters: dict[str, dict[str, Any]],
    users: dict[str, dict[str, Any]],
    current: str | None = None,
) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": current,
        "clusters": [{"name": n, "cluster": c} for n, c in clusters.items()],
        "contexts": [
            {"name": n, "context": {"cluster": c, "user": u, **({"namespace": ns} if ns else {})}}
            for n, (c, u, ns) in contexts.items()
        ],
        "users": [{"name": n, "user": u} for n, u in users.items()],
    }


def write(path: Path, data: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump(data))
    return path


def headers(auth: Any) -> dict[str, str]:
    return dict(asyncio.run(auth.headers()))


@pytest.fixture
def ca(tmp_path: Path) -> Path:
    cert, _ = pem_pair("ca")
    path = tmp_path / "ca.crt"
    path.write_bytes(cert)
    return path


def test_explicit_file_with_token_context_and_namespace(tmp_path: Path, ca: Path) -> None:
    path = write(
        tmp_path / "config",
        kubeconfig(
            contexts={"dev": ("c1", "u1", "team")},
            clusters={"c1": {"server": "https://10.0.0.1:6443", "certificate-authority": str(ca)}},
            users={"u1": {"token": "s3cret"}},
            current="dev",
        ),
    )
    config = load_config(path, environ={})
    assert (config.server, config.context, config.namespace, config.user) == (
        "https://10.0.0.1:6443",
        "dev",
        "team",
        "u1",
    )
    assert isinstance(config.ssl_context, ssl.SSLContext)
    assert isinstance(config.auth, TokenAuth)
    assert headers(config.auth) == {"Authorization": "Bearer s3cret"}
    assert config.describe() == f"context 'dev' (kubeconfig {path})"


def test_context_argument_overrides_current_context_and_namespace_defaults(tmp_path: Path) -> None:
    path = write(
        tmp_path / "config",
        kubeconfig(
            contexts={"a": ("c", "u", "one"), "b": ("c", "u", None)},
            clusters={"c": {"server": "https://k8s.example:443", "insecure-skip-tls-verify": True}},
            users={"u": {"username": "admin", "password": "pw"}},
            current="a",
        ),
    )
    config = load_config(path, "b", environ={})
    assert (config.context, config.namespace) == ("b", "default")
    assert isinstance(config.auth, BasicAuth)
    assert config.ssl_context is not None and config.ssl_context.verify_mode == ssl.CERT_NONE


def test_missing_context_names_the_file_the_context_and_the_fix(tmp_path: Path) -> None:
    path = write(
        tmp_path / "config",
        kubeconfig(
            contexts={"a": ("c", "u", None), "b": ("c", "u", None)},
            clusters={"c": {"server": "https://x"}},
            users={"u": {}},
        ),
    )
    with pytest.raises(ConfigError) as info:
        load_config(path, "prod", environ={})
    assert str(info.value) == (
        f"context 'prod' not found in kubeconfig {path} (available: a, b): "
        "pass an existing context or run `kubectl config get-contexts`"
    )
    assert info.value.exit_code == 2
    assert isinstance(info.value, UsageError)


def test_no_current_context(tmp_path: Path) -> None:
    path = write(
        tmp_path / "config",
        kubeconfig(
            contexts={"a": ("c", "u", None)},
            clusters={"c": {"server": "https://x"}},
            users={"u": {}},
        ),
    )
    with pytest.raises(
        ConfigError,
        match="sets no current-context: pass context= or run `kubectl config use-context NAME`",
    ):
        load_config(path, environ={})


def test_context_pointing_at_undefined_cluster_or_user(tmp_path: Path) -> None:
    path = write(
        tmp_path / "config",
        kubeconfig(contexts={"a": ("gone", "u", None)}, clusters={}, users={"u": {}}, current="a"),
    )
    with pytest.raises(ConfigError, match="refers to cluster 'gone', which is not defined there"):
        load_config(path, environ={})
    path = write(
        tmp_path / "config2",
        kubeconfig(
            contexts={"a": ("c", "nobody", None)},
            clusters={"c": {"server": "https://x"}},
            users={},
            current="a",
        ),
    )
    with pytest.raises(ConfigError, match="refers to user 'nobody'"):
        load_config(path, environ={})


def test_missing_explicit_file_and_broken_yaml(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist: pass an existing file"):
        load_config(tmp_path / "nope", environ={})
    broken = tmp_path / "broken"
    broken.write_text("clusters: [\n  - name: x\n   bad")
    with pytest.raises(ConfigError, match=f"kubeconfig {broken} is not valid YAML at line"):
        load_config(broken, environ={})


def test_kubeconfig_given_inline_as_yaml_text(tmp_path: Path) -> None:
    text = yaml.safe_dump(
        kubeconfig(
            contexts={"x": ("c", "u", "ns1")},
            clusters={"c": {"server": "http://127.0.0.1:8080"}},
            users={"u": {"token": "t"}},
            current="x",
        )
    )
    config = load_config(text, environ={})
    assert (config.server, config.namespace, config.ssl_context) == (
        "http://127.0.0.1:8080",
        "ns1",
        None,
    )
    assert config.source == "the kubeconfig given inline"


def test_kubeconfig_list_merges_first_definition_wins_and_resolves_relative_paths(
    tmp_path: Path,
) -> None:
    first_dir, second_dir = tmp_path / "one", tmp_path / "two"
    first_dir.mkdir()
    second_dir.mkdir()
    cert, _ = pem_pair()
    (second_dir / "ca.crt").write_bytes(cert)
    (second_dir / "token").write_text("from-file\n")
    first = write(
        first_dir / "config",
        kubeconfig(
            contexts={"shared": ("c-first", "u-first", None)},
            clusters={
                "c-first": {"server": "https://first:6443", "insecure-skip-tls-verify": True}
            },
            users={"u-first": {"token": "first"}},
            current="shared",
        ),
    )
    second = write(
        second_dir / "config",
        kubeconfig(
            contexts={
                "shared": ("c-second", "u-second", None),
                "other": ("c-second", "u-second", "two"),
            },
            clusters={
                "c-second": {"server": "https://second:6443", "certificate-authority": "ca.crt"},
                "c-first": {"server": "https://ignored:6443"},
            },
            users={"u-second": {"tokenFile": "token"}},
            current="other",
        ),
    )
    env = {"KUBECONFIG": f"{first}:{tmp_path / 'missing'}:{second}"}
    config = load_config(environ=env)
    assert (config.context, config.server) == (
        "shared",
        "https://first:6443",
    )  # first current-context, first cluster
    assert config.source == f"KUBECONFIG={env['KUBECONFIG']}"
    other = load_config(context="other", environ=env)
    assert (other.server, other.namespace) == ("https://second:6443", "two")
    assert isinstance(other.auth, TokenFileAuth)
    assert headers(other.auth) == {
        "Authorization": "Bearer from-file"
    }  # relative to the second file


def test_kubeconfig_list_with_no_existing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="none of the files in KUBECONFIG exist"):
        load_config(environ={"KUBECONFIG": f"{tmp_path}/a:{tmp_path}/b"})


def test_default_file_under_home_and_nothing_found(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no kubeconfig found: set KUBECONFIG, create") as e:
        load_config(environ={}, home=tmp_path, service_account_dir=tmp_path / "sa")
    # `cluster start` makes no ~/.kube/config: the line says how a stack names a local one
    # (it said `cluster start` makes one, and named an `up --kubeconfig` there is not).
    assert str(e.value).endswith(
        "for a local cluster, `stackwright config set kubernetes:cluster NAME` "
        "(after `stackwright cluster start --name NAME`) or `policy audit --cluster NAME`"
    )
    assert "(`--kubeconfig FILE`" not in str(e.value)
    (tmp_path / ".kube").mkdir()
    write(
        tmp_path / ".kube" / "config",
        kubeconfig(
            contexts={"h": ("c", "u", None)},
            clusters={"c": {"server": "https://h"}},
            users={"u": {"token": "t"}},
            current="h",
        ),
    )
    assert load_config(environ={}, home=tmp_path).context == "h"


def test_client_certificate_from_data_and_files(tmp_path: Path, ca: Path) -> None:
    cert, key = pem_pair("client")
    users = {"data": {"client-certificate-data": b64(cert), "client-key-data": b64(key)}}
    path = write(
        tmp_path / "config",
        kubeconfig(
            contexts={"x": ("c", "data", None)},
            clusters={
                "c": {"server": "https://c", "certificate-authority-data": b64(ca.read_bytes())}
            },
            users=users,
            current="x",
        ),
    )
    assert load_config(path, environ={}).ssl_context is not None
    (tmp_path / "client.crt").write_bytes(cert)
    (tmp_path / "client.key").write_bytes(key)
    files = {"files": {"client-certificate": "client.crt", "client-key": "client.key"}}
    path = write(
        tmp_path / "config2",
        kubeconfig(
            contexts={"x": ("c", "files", None)},
            clusters={"c": {"server": "https://c"}},
            users=files,
            current="x",
        ),
    )
    assert load_config(path, environ={}).ssl_context is not None


def test_unusable_certificates_are_config_errors_naming_the_field(tmp_path: Path) -> None:
    bad_ca = write(
        tmp_path / "config",
        kubeconfig(
            contexts={"x": ("c", "u", None)},
            clusters={"c": {"server": "https://c", "certificate-authority": "nope.crt"}},
            users={"u": {}},
            current="x",
        ),
    )
    with pytest.raises(ConfigError, match=r"certificate-authority .*nope.crt in context 'x'"):
        load_config(bad_ca, environ={})
    cert, _ = pem_pair()
    _, other_key = pem_pair()
    mismatched = write(
        tmp_path / "config2",
        kubeconfig(
            contexts={"x": ("c", "u", None)},
            clusters={"c": {"server": "https://c"}},
            users={"u": {"client-certificate-data": b64(cert), "client-key-data": b64(other_key)}},
            current="x",
        ),
    )
    with pytest.raises(ConfigError, match="client certificate or key of the user in context 'x'"):
        load_config(mismatched, environ={})


def exec_script(tmp_path: Path, body: str) -> Path:
    script = tmp_path / "plugin"
    script.write_text(f"#!{sys.executable}\nimport json, os, sys\n{body}\n")
    script.chmod(0o755)
    return script


def exec_config(tmp_path: Path, command: str, **extra: Any) -> Path:
    user = {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1beta1",
            "command": command,
            "args": ["--cluster", "dev"],
            "env": [{"name": "PLUGIN_GREETING", "value": "hello"}],
            "provideClusterInfo": True,
            **extra,
        }
    }
    return write(
        tmp_path / "config",
        kubeconfig(
            contexts={"x": ("c", "eks", None)},
            clusters={"c": {"server": "https://eks.example"}},
            users={"eks": user},
            current="x",
        ),
    )


def test_exec_plugin_token_with_env_args_and_exec_info(tmp_path: Path) -> None:
    counter = tmp_path / "runs"
    script = exec_script(
        tmp_path,
        f"""
info = json.loads(os.environ["KUBERNETES_EXEC_INFO"])
with open({str(counter)!r}, "a") as f:
    f.write("x")
token = "-".join([os.environ["PLUGIN_GREETING"], sys.argv[2], info["spec"]["cluster"]["server"], str(info["spec"]["interactive"])])
print(json.dumps({{"apiVersion": info["apiVersion"], "kind": "ExecCredential",
                  "status": {{"token": token, "expirationTimestamp": "2999-01-01T00:00:00Z"}}}}))
""",
    )
    config = load_config(exec_config(tmp_path, str(script)), environ={})
    assert isinstance(config.auth, ExecAuth)

    async def twice() -> tuple[dict[str, str], dict[str, str]]:
        return dict(await config.auth.headers()), dict(await config.auth.headers())

    first, second = asyncio.run(twice())
    assert first == {"Authorization": "Bearer hello-dev-https://eks.example-False"}
    assert second == first
    assert counter.read_text() == "x"  # cached until it expires


def test_exec_plugin_cluster_info_carries_a_ca_given_as_a_file(tmp_path: Path, ca: Path) -> None:
    """client-go fills spec.cluster.certificate-authority-data from certificate-authority too:
    a plugin that talks to the cluster (Pinniped's, say) needs the CA either way."""
    script = exec_script(
        tmp_path,
        """
info = json.loads(os.environ["KUBERNETES_EXEC_INFO"])
print(json.dumps({"kind": "ExecCredential",
                  "status": {"token": info["spec"]["cluster"].get("certificate-authority-data", "none")}}))
""",
    )
    path = exec_config(tmp_path, str(script))
    data = yaml.safe_load(path.read_text())
    data["clusters"][0]["cluster"]["certificate-authority"] = ca.name  # relative to the file
    write(path, data)
    auth = load_config(path, environ={}).auth
    assert headers(auth) == {"Authorization": f"Bearer {b64(ca.read_bytes())}"}


def counting_script(tmp_path: Path, counter: Path, *, expires: str) -> Path:
    """A plugin that counts its runs in `counter` and answers token `t<runs>`."""
    return exec_script(
        tmp_path,
        f"""
with open({str(counter)!r}, "a") as f:
    f.write("x")
n = len(open({str(counter)!r}).read())
print(json.dumps({{"kind": "ExecCredential", "status": {{"token": f"t{{n}}", "expirationTimestamp": "{expires}"}}}}))
""",
    )


def test_exec_plugin_token_is_renewed_when_expired_and_after_a_401(tmp_path: Path) -> None:
    counter = tmp_path / "runs"
    script = counting_script(tmp_path, counter, expires="2000-01-01T00:00:00Z")
    auth = load_config(exec_config(tmp_path, str(script)), environ={}).auth

    async def run() -> list[str]:
        seen = [
            dict(await auth.headers())["Authorization"],
            dict(await auth.headers())["Authorization"],
        ]
        assert await auth.refresh()
        return [*seen, dict(await auth.headers())["Authorization"]]

    tokens = asyncio.run(run())
    assert tokens[:2] == ["Bearer t1", "Bearer t2"]  # already expired: every use runs it again
    assert tokens[2].startswith("Bearer t")


def test_exec_plugin_missing_failing_or_speaking_nonsense(tmp_path: Path) -> None:
    # Not installed: found when the kubeconfig is read, before any request.
    with pytest.raises(ConfigError) as info:
        load_config(
            exec_config(tmp_path, "definitely-not-installed-plugin", installHint="brew install it"),
            environ={},
        )
    assert str(info.value) == (
        "exec plugin 'definitely-not-installed-plugin' of user 'eks' "
        f"(kubeconfig {tmp_path / 'config'}) was not found on PATH: install it or fix "
        "users[].user.exec.command in the kubeconfig. brew install it"
    )
    failing = exec_script(tmp_path, 'sys.stderr.write("token expired, run login\\n"); sys.exit(3)')
    auth = load_config(exec_config(tmp_path, str(failing)), environ={}).auth
    with pytest.raises(
        ConfigError, match="failed with exit code 3: token expired, run login; run it by hand"
    ):
        asyncio.run(auth.headers())
    nonsense = exec_script(tmp_path, 'print("hello")')
    auth = load_config(exec_config(tmp_path, str(nonsense)), environ={}).auth
    with pytest.raises(ConfigError, match="did not print an ExecCredential"):
        asyncio.run(auth.headers())


def test_removed_auth_providers_point_to_exec_plugins(tmp_path: Path) -> None:
    path = write(
        tmp_path / "config",
        kubeconfig(
            contexts={"x": ("c", "g", None)},
            clusters={"c": {"server": "https://c"}},
            users={"g": {"auth-provider": {"name": "gcp", "config": {}}}},
            current="x",
        ),
    )
    with pytest.raises(
        ConfigError,
        match="auth-provider 'gcp', which Kubernetes removed: switch it to an exec credential plugin",
    ):
        load_config(path, environ={})
    oidc = write(
        tmp_path / "config2",
        kubeconfig(
            contexts={"x": ("c", "o", None)},
            clusters={"c": {"server": "https://c"}},
            users={"o": {"auth-provider": {"name": "oidc", "config": {"id-token": "jwt"}}}},
            current="x",
        ),
    )
    assert headers(load_config(oidc, environ={}).auth) == {"Authorization": "Bearer jwt"}


def test_in_cluster_service_account(tmp_path: Path) -> None:
    folder = tmp_path / "sa"
    folder.mkdir()
    cert, _ = pem_pair()
    (folder / "ca.crt").write_bytes(cert)
    (folder / "token").write_text("sa-token")
    (folder / "namespace").write_text("operators")
    env = {"KUBERNETES_SERVICE_HOST": "10.96.0.1", "KUBERNETES_SERVICE_PORT": "443"}
    config = load_config(environ=env, home=tmp_path, service_account_dir=folder)
    assert (config.server, config.namespace, config.context) == (
        "https://10.96.0.1:443",
        "operators",
        "in-cluster",
    )
    assert headers(config.auth) == {"Authorization": "Bearer sa-token"}
    with pytest.raises(
        ConfigError, match="no kubeconfig exists and only the in-cluster service account"
    ):
        load_config(context="prod", environ=env, home=tmp_path, service_account_dir=folder)


def test_token_file_is_reread_after_rotation(tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("one")
    now = [0.0]
    auth = TokenFileAuth(str(token), period=60, clock=lambda: now[0])

    async def run() -> list[str]:
        seen = [dict(await auth.headers())["Authorization"]]
        token.write_text("two")
        seen.append(dict(await auth.headers())["Authorization"])  # still cached
        now[0] = 61
        seen.append(dict(await auth.headers())["Authorization"])
        token.write_text("three")
        assert await auth.refresh()  # a 401 re-reads at once
        seen.append(dict(await auth.headers())["Authorization"])
        return seen

    assert asyncio.run(run()) == ["Bearer one", "Bearer one", "Bearer two", "Bearer three"]


def test_proxies_from_kubeconfig_and_environment(tmp_path: Path) -> None:
    def config_for(server: str, **cluster: Any) -> Path:
        return write(
            tmp_path / "config",
            kubeconfig(
                contexts={"x": ("c", "u", None)},
                clusters={"c": {"server": server, **cluster}},
                users={"u": {}},
                current="x",
            ),
        )

    env = {"HTTPS_PROXY": "http://proxy:3128", "NO_PROXY": ".internal,10.0.0.0/8"}
    assert (
        load_config(config_for("https://api.example.com"), environ=env).proxy == "http://proxy:3128"
    )
    assert load_config(config_for("https://k8s.internal"), environ=env).proxy is None
    assert load_config(config_for("https://10.1.2.3"), environ=env).proxy is None
    assert load_config(config_for("https://127.0.0.1:6443"), environ=env).proxy is None
    explicit = config_for("https://api.example.com", **{"proxy-url": "socks5://p:1080"})
    assert load_config(explicit, environ={}).proxy == "socks5://p:1080"


def test_tls_server_name_is_kept(tmp_path: Path) -> None:
    path = write(
        tmp_path / "config",
        kubeconfig(
            contexts={"x": ("c", "u", None)},
            clusters={"c": {"server": "https://1.2.3.4", "tls-server-name": "kubernetes"}},
            users={"u": {}},
            current="x",
        ),
    )
    assert load_config(path, environ={}).tls_server_name == "kubernetes"


def test_malformed_entries_are_config_errors(tmp_path: Path) -> None:
    path = tmp_path / "config"
    path.write_text(json.dumps({"clusters": [{"cluster": {}}], "contexts": [], "users": []}))
    with pytest.raises(ConfigError, match="every entry of clusters needs a name"):
        load_config(path, environ={})
    path.write_text(
        json.dumps(
            {
                "clusters": [{"name": "c", "cluster": {"server": 5}}],
                "contexts": [{"name": "x", "context": {"cluster": "c"}}],
                "users": [],
                "current-context": "x",
            }
        )
    )
    with pytest.raises(ConfigError, match="is malformed"):
        load_config(path, environ={})


def test_exec_plugin_tokens_are_shared_by_the_clients_of_a_process(tmp_path: Path) -> None:
    """As client-go's process-wide cache: a second client of the same plugin (a run's cluster
    check, then the run) uses the first one's token; a 401 renews it for both."""
    counter = tmp_path / "runs"
    script = counting_script(tmp_path, counter, expires="2999-01-01T00:00:00Z")
    path = exec_config(tmp_path, str(script))
    first, second = (load_config(path, environ={}).auth for _ in range(2))
    assert headers(first) == headers(second) == {"Authorization": "Bearer t1"}
    assert asyncio.run(second.refresh())  # the server refused t1
    assert headers(first) == headers(second) == {"Authorization": "Bearer t2"}
    assert counter.read_text() == "xx"


def test_exec_plugin_tokens_are_not_shared_across_environments(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The process's environment chooses the identity a plugin answers for (`AWS_PROFILE`):
    a process that runs several stacks (the automation API, the operator) asks it again."""
    counter = tmp_path / "runs"
    path = exec_config(
        tmp_path, str(counting_script(tmp_path, counter, expires="2999-01-01T00:00:00Z"))
    )
    monkeypatch.setenv("AWS_PROFILE", "team-a")
    first = headers(load_config(path, environ={}).auth)
    monkeypatch.setenv("AWS_PROFILE", "team-b")
    second = headers(load_config(path, environ={}).auth)
    assert (first, second) == ({"Authorization": "Bearer t1"}, {"Authorization": "Bearer t2"})
