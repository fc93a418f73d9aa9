"""The secrets provider without a cluster: data keys, wrapping, config files, sealed state."""

from __future__ import annotations

import base64
import os
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from stackwright.automation import secrets
from stackwright.automation.secrets import StateEncrypter
from stackwright.automation.workspace import Project, StackConfig, parse_key
from stackwright.errors import UsageError, redact, remember_secret
from stackwright.model import Op, ResourceState, SecretValue, is_sealed, transform_at
from stackwright.state import open_backend

PLAIN = "correct-horse-battery"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    monkeypatch.setenv("STACKWRIGHT_HOME", str(tmp_path / "home"))
    (tmp_path / "Stackwright.yaml").write_text("name: demo\n")
    return Project.load(tmp_path)


def config(project: Project, **environ: str) -> StackConfig:
    return StackConfig(project, "dev", environ)


def test_a_secret_is_encrypted_under_a_data_key_wrapped_by_the_passphrase(project: Project) -> None:
    cfg = config(project, STACKWRIGHT_CONFIG_PASSPHRASE="one")
    cfg.set("password", PLAIN, secret=True)
    text = cfg.path.read_text()
    stored = yaml.safe_load(text)
    assert PLAIN not in text
    assert stored["secretsprovider"] == "passphrase"
    assert {"encryptionsalt", "encryptedkey"} <= set(stored)
    assert config(project, STACKWRIGHT_CONFIG_PASSPHRASE="one").get("password") == PLAIN
    with pytest.raises(UsageError, match="is not the passphrase"):
        config(project, STACKWRIGHT_CONFIG_PASSPHRASE="two").get("password")
    with pytest.raises(UsageError, match="set STACKWRIGHT_CONFIG_PASSPHRASE"):
        config(project).get("password")


def test_changing_the_provider_rewraps_the_key_and_keeps_the_ciphertext(project: Project) -> None:
    cfg = config(
        project, STACKWRIGHT_CONFIG_PASSPHRASE="old", STACKWRIGHT_NEW_CONFIG_PASSPHRASE="new"
    )
    cfg.set("password", PLAIN, secret=True)
    before = yaml.safe_load(cfg.path.read_text())
    cfg.change_secrets_provider("passphrase")
    after = yaml.safe_load(cfg.path.read_text())
    assert after["config"] == before["config"] and after["encryptedkey"] != before["encryptedkey"]
    assert config(project, STACKWRIGHT_CONFIG_PASSPHRASE="new").get("password") == PLAIN
    with pytest.raises(UsageError, match="is not the passphrase"):
        config(project, STACKWRIGHT_CONFIG_PASSPHRASE="old").get("password")
    # To a key from the environment, then to a key file.
    key = base64.b64encode(os.urandom(32)).decode()
    env = {"STACKWRIGHT_CONFIG_PASSPHRASE": "new", "STACKWRIGHT_SECRETS_KEY": key}
    StackConfig(project, "dev", env).change_secrets_provider("env")
    assert StackConfig(project, "dev", {"STACKWRIGHT_SECRETS_KEY": key}).get("password") == PLAIN
    with pytest.raises(UsageError, match="set STACKWRIGHT_SECRETS_KEY"):
        config(project).get("password")
    key_file = project.folder / "stack.key"
    StackConfig(project, "dev", env).change_secrets_provider(f"file:{key_file}")
    assert key_file.exists() and config(project).get("password") == PLAIN
    key_file.unlink()
    with pytest.raises(UsageError, match="does not exist"):
        config(project).get("password")


def test_a_bad_env_key_is_refused(project: Project) -> None:
    cfg = config(project, STACKWRIGHT_SECRETS_KEY="c2hvcnQ=")
    with pytest.raises(UsageError, match="32-byte key"):
        cfg.set("password", PLAIN, secret=True)


def test_a_stack_file_of_the_older_format_is_reencrypted(project: Project) -> None:
    """Before data keys, values were sealed directly under the passphrase's scrypt key."""
    salt = base64.b64encode(b"0123456789abcdef").decode()
    old_key = secrets.scrypt_key("legacy", salt)
    sealed = secrets.DataKey(old_key, "dev").encrypt(PLAIN, b"demo:password")
    project.stack_file("dev").write_text(
        yaml.safe_dump({"encryptionsalt": salt, "config": {"demo:password": {"secure": sealed}}})
    )
    cfg = config(project, STACKWRIGHT_CONFIG_PASSPHRASE="legacy")
    assert cfg.get("password") == PLAIN
    stored = yaml.safe_load(project.stack_file("dev").read_text())
    assert "encryptedkey" in stored and stored["config"]["demo:password"]["secure"] != sealed
    assert config(project, STACKWRIGHT_CONFIG_PASSPHRASE="legacy").get("password") == PLAIN


def test_typed_and_nested_configuration(project: Project) -> None:
    cfg = config(project, STACKWRIGHT_CONFIG_PASSPHRASE="p")
    cfg.set("app:db.port", 5432, path=True)
    cfg.set("app:hosts[0]", "a", path=True)
    cfg.set("app:hosts[1]", PLAIN, path=True, secret=True)
    cfg.set('app:labels["example.com/team"]', "web", path=True)
    values, secret_keys = config(project, STACKWRIGHT_CONFIG_PASSPHRASE="p").resolved()
    assert values["app:db"] == {"port": 5432}
    assert values["app:hosts"] == ["a", PLAIN]
    assert values["app:labels"] == {"example.com/team": "web"}
    assert secret_keys == {"app:hosts"} and PLAIN not in cfg.path.read_text()
    with pytest.raises(UsageError, match="set \\[2\\] first"):
        cfg.set("app:hosts[5]", "x", path=True)
    assert cfg.remove("app:db.port", path=True) and cfg.get("app:db", path=True) == {}
    with pytest.raises(UsageError, match="config set app:nope VALUE"):
        cfg.get("app:nope")
    assert parse_key("replicas", "demo", path=True) == ("demo:replicas", ())
    with pytest.raises(UsageError, match="not valid"):
        parse_key("app:a[x", "demo", path=True)


def test_copying_configuration_reencrypts_under_the_new_stack_key(project: Project) -> None:
    env = {"STACKWRIGHT_CONFIG_PASSPHRASE": "p"}
    source = StackConfig(project, "dev", env)
    source.set("password", PLAIN, secret=True)
    source.set("replicas", 3)
    copy = StackConfig(project, "prod", env)
    copy.copy_values_from(source)
    copy.save()
    assert copy.values["demo:replicas"] == 3
    assert copy.values["demo:password"] != source.values["demo:password"]
    assert StackConfig(project, "prod", env).get("password") == PLAIN


def test_transform_at_follows_engine_paths() -> None:
    value = {"data": {"tls.crt": "x"}, "spec": {"containers": [{"env": [{"value": "v"}]}]}}
    up = str.upper
    assert transform_at(value, "data.tls.crt", up)["data"] == {"tls.crt": "X"}
    changed = transform_at(value, "spec.containers[0].env[0].value", up)
    assert changed["spec"]["containers"][0]["env"][0]["value"] == "V"
    assert transform_at(value, "spec.containers[3].env", up) == value
    assert transform_at(value, "nothing.here", up) == value


def _key() -> secrets.DataKey:
    return secrets.DataKey(os.urandom(32), "dev")


def test_secrets_in_state_rows_outputs_and_exports_are_ciphertext(tmp_path: Path) -> None:
    key = _key()
    backend = open_backend(f"file://{tmp_path}/state.db", encrypter=StateEncrypter(lambda: key))
    backend.create_stack("demo", "dev")
    state = ResourceState(
        urn="urn:sw:dev::demo::kubernetes:core/v1:Secret::creds",
        type="kubernetes:core/v1:Secret",
        id="ns/creds",
        inputs={"stringData": {"password": PLAIN}, "metadata": {"name": "creds"}},
        outputs={"data": {"password": base64.b64encode(PLAIN.encode()).decode()}},
        secret_paths=("stringData.password", "data", "stringData"),
    )
    with backend.begin_operation("demo", "dev", kind="up") as op:
        op.begin(1, Op.CREATE, state)
        op.end(1, state)
        op.set_outputs({"password": SecretValue(PLAIN), "plain": "shown"})
    loaded = backend.load("demo", "dev")
    assert loaded.resources[0].inputs == state.inputs
    assert loaded.resources[0].outputs == state.outputs
    assert loaded.outputs == {"password": SecretValue(PLAIN), "plain": "shown"}
    document = backend.export("demo", "dev")
    assert is_sealed(document["outputs"]["password"])
    assert is_sealed(document["resources"][0]["inputs"]["stringData"])
    assert PLAIN not in str(document) and base64.b64encode(PLAIN.encode()).decode() not in str(
        document
    )
    backend.close()
    raw = b"".join(p.read_bytes() for p in tmp_path.glob("state.db*"))
    assert PLAIN.encode() not in raw and base64.b64encode(PLAIN.encode()) not in raw
    # Import keeps the ciphertext; the same key reads it back.
    again = open_backend(f"file://{tmp_path}/state.db", encrypter=StateEncrypter(lambda: key))
    again.import_("demo", "dev", document)
    assert again.load("demo", "dev").resources[0].inputs == state.inputs
    # Another key cannot.
    other = _key()
    wrong = open_backend(f"file://{tmp_path}/state.db", encrypter=StateEncrypter(lambda: other))
    with pytest.raises(UsageError, match="cannot decrypt"):
        wrong.load("demo", "dev")
    # Renaming the stack rewrites its URNs and keeps its secrets sealed.
    again.rename_stack("demo", "dev", "prod")
    renamed = again.load("demo", "prod")
    assert renamed.resources[0].urn.startswith("urn:sw:prod::")
    assert renamed.resources[0].inputs == state.inputs
    assert not again.has_stack("demo", "dev")
    again.close()
    wrong.close()


def test_known_secrets_are_redacted_from_messages() -> None:
    remember_secret({"a": ["s3cr3t-value"]})
    assert redact("failed: s3cr3t-value rejected") == "failed: [secret] rejected"
    encoded = base64.b64encode(b"s3cr3t-value").decode()
    assert redact(f"data {encoded}") == "data [secret]"


_PART = st.text(st.characters(blacklist_characters=':.[]"\n'), min_size=1, max_size=8)


@given(namespace=_PART, name=_PART, path=st.booleans())
def test_a_key_is_a_namespace_and_a_name(namespace: str, name: str, path: bool) -> None:
    assert parse_key(f"{namespace}:{name}", "demo", path=path) == (f"{namespace}:{name}", ())
    assert parse_key(name, "demo", path=path) == (f"demo:{name}", ())
    for bad in (f"{namespace}:{name}:{name}", f":{name}", f"{namespace}:", ""):
        with pytest.raises(UsageError, match="is not valid: write NAME or NAMESPACE:NAME"):
            parse_key(bad, "demo", path=path)


def test_stack_rm_sets_a_local_key_aside_for_another_checkout_that_shares_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two checkouts of one project, each with its own backend, both with a stack `dev`:
    their `local` provider finds one key file by the same name. `stack rm` in one used to
    delete it, and the other's secrets were lost for good; it is set aside, and the other
    checkout is told where."""
    monkeypatch.setenv("STACKWRIGHT_HOME", str(tmp_path / "home"))
    checkouts = []
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "Stackwright.yaml").write_text("name: demo\n")
        checkouts.append(Project.load(tmp_path / folder))
    first, second = (StackConfig(project, "dev", {}) for project in checkouts)
    first.set("password", PLAIN, secret=True)
    second.set("token", "t0ken", secret=True)
    assert yaml.safe_load(second.path.read_text())["secretsprovider"] == "local"

    second.forget()

    (aside,) = (tmp_path / "home" / "keys" / "removed").iterdir()
    assert aside.name.startswith("demo.dev.") and aside.stat().st_mode & 0o077 == 0
    with pytest.raises(UsageError) as caught:
        StackConfig(checkouts[0], "dev", {}).get("password")
    assert f"set its key aside as {aside}: if this stack used it, move it back" in str(caught.value)
    aside.rename(tmp_path / "home" / "keys" / "demo.dev.key")
    assert StackConfig(checkouts[0], "dev", {}).get("password") == PLAIN


def test_a_missing_local_key_file_names_ways_that_work(
    project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stack file whose key file is in another STACKWRIGHT_HOME (an example run once, a
    checkout on another machine): `change-secrets-provider` unwraps the data key with that
    very file, so the message names what does work, and each of those works."""
    config(project).set("password", PLAIN, secret=True)
    made = tmp_path / "home" / "keys" / "demo.dev.key"
    monkeypatch.setenv("STACKWRIGHT_HOME", str(tmp_path / "elsewhere"))

    with pytest.raises(UsageError) as caught:
        config(project).get("password")
    message = str(caught.value)
    assert "change-secrets-provider" not in message
    assert "copy it back from where stack dev's key was made" in message
    assert "remove `encryptedkey` and `secretsprovider` from Stackwright.dev.yaml" in message

    moved = tmp_path / "moved.key"
    made.rename(moved)
    stored = yaml.safe_load(project.stack_file("dev").read_text())
    project.stack_file("dev").write_text(
        yaml.safe_dump({**stored, "secretsprovider": f"file:{moved}"})
    )
    assert config(project).get("password") == PLAIN

    moved.unlink()  # lost: start over with a new key, and set the secret again
    stored.pop("encryptedkey"), stored.pop("secretsprovider")
    project.stack_file("dev").write_text(yaml.safe_dump(stored))
    config(project).set("password", "new-value", secret=True)
    assert config(project).get("password") == "new-value"
