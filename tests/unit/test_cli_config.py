"""`stackwright config` and `stack output` as a Pulumi user drives them: values from stdin,
secrets unlocked only when shown, nothing in plain text."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
import yaml

from stackwright.cli.main import main


def get(key: str, capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    main(["config", "get", key])
    return capsys.readouterr().out


@pytest.mark.parametrize(
    ("piped", "kept"),
    [
        ("S3cr3t-from-stdin\n", "S3cr3t-from-stdin"),
        ("line one\nline two\n\n", "line one\nline two\n"),  # only one newline is dropped
        ("-----BEGIN KEY-----\r\nabc\r\n", "-----BEGIN KEY-----\r\nabc"),
    ],
)
def test_a_value_left_out_is_read_from_stdin(
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    piped: str,
    kept: str,
) -> None:
    """`cat cert.pem | pulumi config set --secret cert`: the value is not in the shell's
    history nor in the process list; the one newline that ends the file is not part of it."""
    monkeypatch.setattr("sys.stdin", io.StringIO(piped))
    main(["config", "set", "--secret", "cert"])
    assert "S3cr3t" not in (project / "Stackwright.dev.yaml").read_text()
    assert get("cert", capsys) == kept + "\n"


def test_config_cp_copies_values_to_another_stack_secrets_under_its_key(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`pulumi config cp --dest prod [KEY] [--path]`: every value, or one, into another
    stack; a secret stays a secret, encrypted under the destination's own data key."""
    main(["config", "set", "replicas", "3", "--type", "int"])
    main(["config", "set", "--secret", "password", "hunter2-pw"])
    main(["config", "set", "--path", "app:db.port", "5432", "--type", "int"])
    main(["config", "set", "--path", "--secret", "app:db.pw", "nested-pw"])
    main(["stack", "init", "prod"])
    main(["stack", "init", "qa"])
    main(["stack", "select", "dev"])

    main(["config", "cp", "--dest", "prod"])
    prod = (project / "Stackwright.prod.yaml").read_text()
    assert "hunter2" not in prod and "nested-pw" not in prod
    dev_cipher = yaml.safe_load((project / "Stackwright.dev.yaml").read_text())["config"]
    assert yaml.safe_load(prod)["config"]["shop:password"] != dev_cipher["shop:password"]
    capsys.readouterr()
    main(["config", "ls", "--stack", "prod", "--show-secrets", "--json"])
    assert json.loads(capsys.readouterr().out) == {  # the shape of `pulumi config --json`
        "app:db": {
            "value": '{"port":5432,"pw":"nested-pw"}',  # compact, as Pulumi's
            "objectValue": {"port": 5432, "pw": "nested-pw"},
            "secret": True,
        },
        "shop:password": {"value": "hunter2-pw", "secret": True},
        "shop:replicas": {"value": "3", "secret": False},
    }
    main(["config", "ls", "--stack", "prod", "--json"])
    listed = json.loads(capsys.readouterr().out)
    assert listed["shop:password"] == listed["app:db"] == {"secret": True}

    main(["config", "cp", "password", "--dest", "qa"])
    main(["config", "cp", "--path", "app:db.pw", "-d", "qa"])
    main(["config", "ls", "--stack", "qa", "--show-secrets", "--json"])
    shown = json.loads(capsys.readouterr().out)
    assert shown["app:db"]["objectValue"] == {"pw": "nested-pw"}
    assert shown["shop:password"] == {"value": "hunter2-pw", "secret": True}
    main(["config", "ls", "--stack", "qa", "--json"])
    assert json.loads(capsys.readouterr().out)["shop:password"] == {"secret": True}


def test_config_cp_of_a_key_not_set_or_to_no_stack_is_one_line(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main(["stack", "init", "prod"])
    capsys.readouterr()
    for args, message in [
        (["nope", "--dest", "dev"], "configuration shop:nope is not set for stack prod"),
        (["--dest", "nowhere"], "stack nowhere does not exist in project shop"),
    ]:
        with pytest.raises(SystemExit) as caught:
            main(["config", "cp", *args])
        err = capsys.readouterr().err
        assert caught.value.code == 2 and err.count("\n") == 1 and message in err, err


def test_config_get_of_a_plain_value_needs_no_passphrase(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """As `pulumi config get` does, a value that is not secret is read without unlocking
    the stack's secrets: a CI job reads `kubernetes:context` without the passphrase."""
    monkeypatch.setenv("STACKWRIGHT_CONFIG_PASSPHRASE", "correct horse")
    main(["stack", "init", "prod", "--secrets-provider", "passphrase"])
    main(["config", "set", "kubernetes:context", "prod-ctx"])
    main(["config", "set", "--secret", "password", "hunter2-pw"])
    monkeypatch.delenv("STACKWRIGHT_CONFIG_PASSPHRASE")
    assert get("kubernetes:context", capsys) == "prod-ctx\n"
    with pytest.raises(SystemExit) as caught:
        main(["config", "get", "password"])
    err = capsys.readouterr().err
    assert caught.value.code == 2 and "STACKWRIGHT_CONFIG_PASSPHRASE" in err, err


def test_stack_output_masked_needs_no_passphrase(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Outputs shown with secrets masked are read without unlocking them: a CI job reads a
    stack's `service_ip` without its passphrase; --show-secrets still needs it. So does
    `stack --json` (resources, pending steps, last operation, outputs): a CI job checks a
    stack's health without the passphrase; and so does `stack graph`."""
    monkeypatch.setenv("STACKWRIGHT_CONFIG_PASSPHRASE", "correct horse")
    main(["stack", "init", "prod", "--secrets-provider", "passphrase"])
    (project / "__main__.py").write_text(
        "import stackwright as sw\n"
        'sw.export("ip", "10.0.0.1")\n'
        'sw.export("pw", sw.Output.secret("hunter2-pw"))\n'
        'sw.export("nested", {"a": sw.Output.secret("deep-pw"), "b": 1})\n'
        "app = sw.ComponentResource('acme:App', 'app')\n"
        "app.register_outputs({'token': sw.Output.secret('hunter2-token'), 'size': 3})\n"
    )
    main(["up", "--yes"])
    monkeypatch.delenv("STACKWRIGHT_CONFIG_PASSPHRASE")
    capsys.readouterr()
    main(["stack", "output", "ip"])
    assert capsys.readouterr().out == "10.0.0.1\n"
    main(["stack", "output", "--json"])
    assert json.loads(capsys.readouterr().out) == {
        "ip": "10.0.0.1",
        "nested": {"a": "[secret]", "b": 1},
        "pw": "[secret]",
    }
    main(["stack", "--json"])
    shown = json.loads(capsys.readouterr().out)
    assert shown["outputs"]["pw"] == "[secret]" and shown["pendingOperations"] == 0
    assert shown["lastOperation"]["result"] == "succeeded"
    (app,) = [r for r in shown["resources"] if r["type"] == "acme:App"]
    assert app["outputs"] == {"token": "[secret]", "size": 3}
    # Written as `up` writes its outputs: a secret bare, not the string "[secret]".
    main(["stack", "output"])
    assert capsys.readouterr().out == (
        'ip: "10.0.0.1"\nnested: {"a":"[secret]","b":1}\npw: [secret]\n'
    )
    main(["stack"])
    shown = capsys.readouterr().out
    assert "    pw: [secret]\n" in shown and "hunter2" not in shown
    # `stack graph` too (the tour's `stack graph | dot -Tsvg`): it asked for the passphrase.
    main(["stack", "graph", "--json"])
    assert [n["name"] for n in json.loads(capsys.readouterr().out)["nodes"]] == ["app"]
    for shows in (["stack", "output", "--show-secrets"], ["stack", "--show-secrets"]):
        with pytest.raises(SystemExit) as caught:
            main(shows)
        err = capsys.readouterr().err
        assert caught.value.code == 2 and "STACKWRIGHT_CONFIG_PASSPHRASE" in err, err


@pytest.mark.parametrize("piped", ["", "\n", "\r\n"])
@pytest.mark.parametrize("secret", [["--secret"], []])
def test_a_value_left_out_with_nothing_on_stdin_is_refused_not_set_empty(
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    secret: list[str],
    piped: str,
) -> None:
    """A CI job's `config set --secret pw $UNSET` loses its VALUE word and has no stdin,
    and its `echo "$UNSET" | config set --secret pw` pipes a newline alone: one line,
    exit 2, nothing stored, where "" would have passed `require_secret`."""
    stack_file = project / "Stackwright.dev.yaml"
    before = stack_file.read_text() if stack_file.exists() else None
    monkeypatch.setattr("sys.stdin", io.StringIO(piped))
    with pytest.raises(SystemExit) as exited:
        main(["config", "set", *secret, "dbpassword"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "no VALUE was given and stdin is empty" in err and err.count("\n") == 1
    # The commands it names set the value as this one would: a secret stays one.
    shown = " ".join([*secret, "dbpassword"])
    assert f"`stackwright config set {shown} VALUE`" in err, err
    assert f"`… | stackwright config set {shown}`" in err, err
    assert (stack_file.read_text() if stack_file.exists() else None) == before

    main(["config", "set", *secret, "dbpassword", ""])  # an empty value, said so
    assert get("dbpassword", capsys) == "\n"


def test_config_rm_of_a_key_not_set_succeeds_with_a_note(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """As Pulumi's `config rm`: removing what is not set is done already (exit 0), a note on
    stderr naming the key, so that a misspelt one is noticed; the stack file is not touched."""
    main(["config", "set", "replicas", "3"])
    stack_file = project / "Stackwright.dev.yaml"
    before = stack_file.read_text()
    capsys.readouterr()
    main(["config", "rm", "replicsa"])  # returns: no SystemExit
    said = capsys.readouterr()
    assert (said.out, said.err) == (
        "",
        "note: configuration shop:replicsa is not set for stack dev\n",
    )
    main(["config", "rm", "--path", "app:db.host", "--json"])
    said = capsys.readouterr()
    assert json.loads(said.out) == {
        "event": "config",
        "action": "rm",
        "project": "shop",
        "stack": "dev",
        "key": "app:db.host",
        "removed": False,
    }
    assert said.err == "note: configuration app:db.host is not set for stack dev\n"
    assert stack_file.read_text() == before
    main(["config", "rm", "replicas", "--json"])
    assert json.loads(capsys.readouterr().out)["removed"] is True
    assert "replicas" not in stack_file.read_text()


def test_a_plain_value_for_a_key_the_yaml_program_declares_secret_is_refused(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`config: {token: {secret: true}}` in a YAML program: `config set token VALUE` without
    --secret wrote the value in plain text into the stack file, which may be committed."""
    (project / "Stackwright.yaml").write_text(
        "name: shop\nruntime: yaml\nconfig:\n  token: {type: string, secret: true}\n"
        "  other:key: {secret: true}\n  replicas: {type: integer}\n"
    )
    stack_file = project / "Stackwright.dev.yaml"
    before = stack_file.read_text() if stack_file.exists() else None
    for key in ("token", "shop:token", "other:key"):
        capsys.readouterr()
        with pytest.raises(SystemExit) as exited:
            main(["config", "set", key, "hunter2222"])
        assert exited.value.code == 2
        err = capsys.readouterr().err
        full = key if ":" in key else f"shop:{key}"
        assert err.startswith(f"error: configuration {full} is declared `secret: true` in ")
        assert "--secret" in err and err.count("\n") == 1 and "hunter2222" not in err
    assert (stack_file.read_text() if stack_file.exists() else None) == before
    main(["config", "set", "--secret", "token", "hunter2222"])
    main(["config", "set", "replicas", "3"])  # a key not declared secret is set as it was
    assert "hunter2222" not in stack_file.read_text() and get("token", capsys) == "hunter2222\n"


def test_unicode_values_are_written_to_the_stack_file_as_they_are(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`pulumi config set greeting 'héllo ✓'` writes UTF-8; the stack file had
    `"h\\xE9llo \\u2713"`, which a reviewer of the committed file cannot read."""
    main(["config", "set", "greeting", "héllo ✓"])
    assert "shop:greeting: héllo ✓" in (project / "Stackwright.dev.yaml").read_text("utf-8")
    assert get("greeting", capsys) == "héllo ✓\n"


def test_a_relative_key_file_is_the_projects_from_any_folder_a_command_runs_in(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--secrets-provider file:keys/qa.key` was looked for from wherever the command ran:
    from a folder of the project (found by looking upward, as Pulumi does) the key was
    "missing", or a new one made there, under which the secrets did not open."""
    (project / "sub").mkdir()
    monkeypatch.chdir(project / "sub")
    main(["stack", "init", "qa", "--secrets-provider", "file:keys/qa.key"])
    main(["config", "set", "--secret", "token", "hunter2222"])
    assert (project / "keys" / "qa.key").is_file() and not (project / "sub" / "keys").exists()
    monkeypatch.chdir(project)
    assert get("token", capsys) == "hunter2222\n"
    assert "file:keys/qa.key" in (project / "Stackwright.qa.yaml").read_text()  # as given
