"""Bad input to the project commands: one line on stderr, exit code 2, nothing changed."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from stackwright.cli.main import main
from stackwright.state import open_backend


def files(folder: Path) -> dict[str, bytes]:
    """Every file below `folder` but the state store's (SQLite changes them as it opens: a
    test asks the store what it holds)."""
    return {
        str(p): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.name.startswith("state.db")
    }


def stacks() -> list[str]:
    return [row.name for row in open_backend().list_stacks("shop")]


Refuse = Callable[..., str]


@pytest.fixture
def refuse(project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Refuse:
    """Run a command that must be refused: exit code 2, one line, no file changed; the
    line without its `error: `."""
    capsys.readouterr()

    def run(*args: str) -> str:
        before = files(tmp_path)
        with pytest.raises(SystemExit) as caught:
            main(list(args))
        err = capsys.readouterr().err
        assert caught.value.code == 2, err
        assert err.count("\n") == 1 and err.startswith("error: "), err
        assert files(tmp_path) == before, "a refused command changed files"
        return err.removeprefix("error: ").strip()

    return run


@pytest.mark.parametrize("file", ["Stackwright.yaml", "Stackwright.dev.yaml"])
def test_a_project_or_stack_file_that_is_not_utf8_names_the_file(
    file: str, project: Path, refuse: Refuse
) -> None:
    (project / file).write_bytes(b"\xff\xfe name: shop\n")
    assert refuse("config", "get", "x") == (
        f"{file} is not UTF-8 text (byte 0xff at offset 0): save it as UTF-8"
    )


def test_a_date_in_the_stack_file_that_is_no_day_is_named_at_its_line(
    project: Path, refuse: Refuse
) -> None:
    # PyYAML makes dates as it reads (a policy exemption's `expires`): one that names no
    # day raised a bare ValueError, a traceback.
    (project / "Stackwright.dev.yaml").write_text(
        "config:\n  policy:exemptions:\n    - policy: image-tag\n      expires: 2026-13-01\n"
    )
    assert refuse("preview") == (
        "Stackwright.dev.yaml:4: 2026-13-01 is no day (month must be in 1..12): "
        "write a real date as YYYY-MM-DD"
    )


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            "file:/proc/nope/key",
            "cannot make the secrets key file /proc/nope/key: No such file or directory; "
            "name a file in a folder you can write to",
        ),
        (
            "file:{folder}",
            "the secrets key file {folder} is a directory: name a file in it, e.g. "
            "file:{folder}/stack.key",
        ),
    ],
)
@pytest.mark.parametrize(
    "command", [["stack", "change-secrets-provider"], ["stack", "init", "q1", "--secrets-provider"]]
)
def test_a_key_file_that_cannot_be_made_or_is_a_folder(
    spec: str, message: str, command: list[str], tmp_path: Path, refuse: Refuse
) -> None:
    folder = tmp_path / "keys"
    folder.mkdir(mode=0o700)
    assert refuse(*command, spec.format(folder=folder)) == message.format(folder=folder)
    assert stacks() == ["dev"]


@pytest.mark.parametrize(
    "command",
    [
        ["config", "set", "foo", "bar"],
        ["config", "set", "--secret", "foo", "bar"],
        ["config", "get", "foo"],
        ["config", "rm", "foo"],
        ["config", "ls"],
        ["stack", "tag", "set", "a", "b"],
        ["stack", "tag", "ls"],
    ],
)
def test_a_stack_that_does_not_exist_is_refused_before_anything_is_written(
    command: list[str], project: Path, refuse: Refuse
) -> None:
    assert refuse(*command, "--stack", "nope") == (
        "stack nope does not exist in project shop (its stacks: dev): create it with "
        "`stackwright stack init nope`"
    )
    assert not (project / "Stackwright.nope.yaml").exists()
    assert stacks() == ["dev"]


def test_a_stack_named_as_pulumi_names_it_or_from_the_environment_says_so(
    project: Path, refuse: Refuse, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`pulumi stack select acme/shop/dev`, as Pulumi's CI examples have it: told to name the
    stack alone; a bad STACKWRIGHT_STACK was told as if typed."""
    valid = (
        "use letters, digits, '-', '_' and '.', starting with a letter or digit, at most 100 "
        "characters"
    )
    for command in (["stack", "init"], ["stack", "select"]):
        assert refuse(*command, "acme/shop/qa") == (
            f"stack name 'acme/shop/qa' is not valid: {valid} (a stack is named within its "
            "project, without Pulumi's org/project/: qa)"
        )
    assert refuse("stack", "init", "a b") == f"stack name 'a b' is not valid: {valid}"
    monkeypatch.setenv("STACKWRIGHT_STACK", "a b")
    assert refuse("config") == f"STACKWRIGHT_STACK: stack name 'a b' is not valid: {valid}"
    assert stacks() == ["dev"]


@pytest.mark.parametrize("name", ["_x", ".x", "x" * 101])
def test_a_stack_name_the_state_store_refuses_leaves_no_stack_file_behind(
    project: Path, refuse: Refuse, name: str
) -> None:
    """The commands checked a looser rule than the state store's (a letter or digit first):
    `stack init --copy-config-from dev .x` wrote `Stackwright..x.yaml`, then was refused."""
    main(["config", "set", "replicas", "3"])
    for command in (
        ["stack", "init", "--copy-config-from", "dev", name],
        ["stack", "init", name],
        ["stack", "rename", "dev", name],
        ["stack", "select", "--create", name],
    ):
        assert refuse(*command).startswith(f"stack name {name!r} is not valid: ")
    assert stacks() == ["dev"]


@pytest.mark.parametrize("key", ["a:b:c", ":x", "x:", "", ":", "app:db:x.port"])
@pytest.mark.parametrize("path", [[], ["--path"]])
def test_a_malformed_configuration_key_is_refused(
    key: str, path: list[str], refuse: Refuse
) -> None:
    assert refuse("config", "set", *path, key, "1") == (
        f"configuration key {key!r} is not valid: write NAME or NAMESPACE:NAME, each part "
        "non-empty and without ':' (e.g. replicas, shop:replicas, kubernetes:kubeconfig)"
    )


@pytest.mark.parametrize(
    ("type_", "value", "article"),
    [
        ("int", "abc", "an"),
        ("float", "x", "a"),
        ("bool", "2", "a"),
        # Not JSON (`config ls --json` printed NaN) and refused by Config.get_float anyway.
        ("float", "nan", "a"),
        ("float", "1e999", "a"),
        ("json", '{"ratio": NaN}', "a"),
        ("json", "[Infinity]", "a"),
    ],
)
def test_a_value_not_of_its_type_is_refused_in_plain_words(
    type_: str, value: str, article: str, refuse: Refuse
) -> None:
    assert refuse("config", "set", "--type", type_, "replicas", value) == (
        f"configuration replicas: the value is not of type {type_}; "
        f"pass {article} {type_} or another --type"
    )


@pytest.mark.parametrize(
    ("key", "path", "stored"),
    [
        ("replicas", [], {"shop:replicas": "1"}),
        ("kubernetes:kubeconfig", [], {"kubernetes:kubeconfig": "1"}),
        ("app:db.port", ["--path"], {"app:db": {"port": "1"}}),
        ("app:hosts[0]", ["--path"], {"app:hosts": ["1"]}),
        ('app:labels["a:b"]', ["--path"], {"app:labels": {"a:b": "1"}}),
        ('app:["a.b"].c', ["--path"], {"app:a.b": {"c": "1"}}),
    ],
)
def test_well_formed_configuration_keys_are_set(
    key: str, path: list[str], stored: dict[str, object], project: Path
) -> None:
    main(["config", "set", *path, key, "1"])
    config = yaml.safe_load((project / "Stackwright.dev.yaml").read_text())["config"]
    assert {k: v for k, v in config.items() if k != "kubernetes:cluster"} == stored


def test_a_backend_url_whose_folder_does_not_exist_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, refuse: Refuse
) -> None:
    url = f"file://{tmp_path}/nonexistent/dir/state.db"
    monkeypatch.setenv("STACKWRIGHT_BACKEND_URL", url)
    assert refuse("preview") == (
        f"the folder {tmp_path}/nonexistent/dir of state backend {url!r} does not exist: "
        "create it (mkdir -p), or fix the URL"
    )
    assert not (tmp_path / "nonexistent").exists()


def test_a_backend_path_with_an_at_sign_is_shown_as_written(
    monkeypatch: pytest.MonkeyPatch, refuse: Refuse
) -> None:
    # A relative path's first folder read as a token, the user name of an HTTP URL: the
    # message named the folder and hid it in the URL.
    url = "file://me@work/nonexistent/state.db"
    monkeypatch.setenv("STACKWRIGHT_BACKEND_URL", url)
    assert refuse("preview") == (
        f"the folder me@work/nonexistent of state backend {url!r} does not exist: "
        "create it (mkdir -p), or fix the URL"
    )


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (
            "postgresql://app:pw-Qz81x@db.internal/state",
            "unsupported state backend URL 'postgresql://app:[secret]@db.internal/state': "
            "supported schemes are file://",
        ),
        (  # not %-encoded: a base64 password holds '/' ('+' and '='), a generated one '?'
            "postgresql://app:pw/Qz?81x@db.internal/state",
            "unsupported state backend URL 'postgresql://app:[secret]@db.internal/state': "
            "supported schemes are file://",
        ),
        (  # libpq's other form, keywords, and a URL without its scheme
            "host=db.internal user=app password=pw-Qz81x",
            "unsupported state backend URL 'host=db.internal user=app password=[secret]': "
            "supported schemes are file://; for a local file write file://host=db.internal "
            "user=app password=[secret]",
        ),
        (
            "app:pw-Qz81x@db.internal/state",
            "unsupported state backend URL 'app:[secret]@db.internal/state': supported schemes "
            "are file://; for a local file write file://app:[secret]@db.internal/state",
        ),
        (  # a token as the user name, as an HTTP server takes it
            "https://pw-Qz81x@state.example/stacks",
            "unsupported state backend URL 'https://[secret]@state.example/stacks': "
            "supported schemes are file://",
        ),
        (  # a database's user name alone is an account: shown
            "postgresql://app@db.internal/state",
            "unsupported state backend URL 'postgresql://app@db.internal/state': "
            "supported schemes are file://",
        ),
        (
            "file:///tmp/state.db?synchronous=full&password=pw-Qz81x",
            "unknown option 'password' in state backend URL "
            "'file:///tmp/state.db?synchronous=full&password=[secret]': options are synchronous",
        ),
    ],
)
def test_a_backend_url_is_refused_without_its_password(
    url: str, shown: str, monkeypatch: pytest.MonkeyPatch, refuse: Refuse
) -> None:
    # A team's backend URL carries a password (libpq's forms); the refusal names the URL
    # with [secret] in its place.
    monkeypatch.setenv("STACKWRIGHT_BACKEND_URL", url)
    assert refuse("stack", "ls") == shown


def test_a_state_document_nested_too_deeply_is_one_line(project: Path, refuse: Refuse) -> None:
    deep = project / "deep.json"
    deep.write_text('{"a":' * 100_000 + "1" + "}" * 100_000)
    assert refuse("stack", "import", "--file", str(deep)) == (
        f"{deep}: cannot read a JSON document (it is nested too deeply to be a state)"
    )


def test_a_misspelt_key_in_the_project_file_is_refused_not_ignored(
    project: Path, refuse: Refuse
) -> None:
    # `mian` ignored would run the default __main__.py, not the program the user named.
    (project / "Stackwright.yaml").write_text("name: shop\nruntime: python\nmian: app.py\n")
    assert refuse("config", "get", "x") == (
        "Stackwright.yaml: unknown key 'mian'; did you mean 'main'? "
        "a project file has name, runtime, description, main, backend"
    )


def test_stack_import_with_no_file_from_a_terminal_says_how_to_give_one(
    project: Path, refuse: Refuse, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr("sys.stdin", Terminal())  # waiting on a terminal would hang
    assert refuse("stack", "import") == (
        "stackwright stack import reads the document from stdin: pipe it in "
        "(`stackwright stack export | stackwright stack import`) or pass --file FILE"
    )


@pytest.mark.parametrize(
    ("command", "instead"),
    [
        ("up", "see what it would change with `stackwright preview`"),
        ("destroy", "see what it would delete with --preview-only"),
        ("refresh", "report drift without recording it with --preview-only"),
    ],
)
def test_a_command_that_asks_with_no_one_to_answer_names_the_run_that_does_not_ask(
    command: str, instead: str, project: Path, refuse: Refuse
) -> None:
    assert refuse(command, "--json") == (
        f"`stackwright {command}` asks for confirmation: pass --yes to run it without a "
        f"terminal, or {instead}"
    )


@pytest.mark.parametrize(
    ("args", "instead"),
    [
        (["up", "--skip-preview"], "`--yes` already applies without a preview first"),
        (["destroy", "--non-interactive"], "Stackwright asks only in a terminal; pass --yes"),
        (["config", "rm", "k", "--yes"], "this command does not ask for confirmation"),
        (["config", "set", "k", "v", "-y"], "this command does not ask for confirmation"),
    ],
)
def test_a_pulumi_only_flag_says_what_to_do_instead(
    args: list[str], instead: str, project: Path, refuse: Refuse
) -> None:
    # A Pulumi user's CI script passes these; "No such option" alone leaves them guessing.
    message = refuse(*args)
    assert message.startswith(f"No such option: {args[-1]} (a Pulumi flag: {instead}")


def test_a_usage_error_with_json_is_also_the_last_event_line(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A script reading `preview --json` got nothing on stdout for a mistyped flag.
    capsys.readouterr()
    with pytest.raises(SystemExit) as caught:
        main(["preview", "--json", "--refesh"])
    assert caught.value.code == 2
    out, err = capsys.readouterr()
    message = (
        "No such option: --refesh (Possible options: --refresh); see `stackwright preview --help`"
    )
    assert err == f"error: {message}\n"
    assert [json.loads(line) for line in out.splitlines()] == [
        {"event": "error", "message": message, "exitCode": 2}
    ]


def test_the_error_line_is_written_as_the_event_lines_are(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Compact and UTF-8, as orjson writes every event: a CI step's `grep '"event":"error"'`
    # missed it (it was `"event": "error"`), and an em dash came out as \u2014.
    capsys.readouterr()
    with pytest.raises(SystemExit):
        main(["preview", "--json", "--target", "urn:café"])
    (line,) = capsys.readouterr().out.splitlines()
    assert line.startswith('{"event":"error","message":"--target urn:café names no resource')
    assert line.endswith(',"exitCode":2}')


def test_config_set_of_a_secret_without_secret_is_refused(
    project: Path, refuse: Refuse, capsys: pytest.CaptureFixture[str]
) -> None:
    # It stored the new password in plain text, silently (Pulumi's --plaintext says so).
    main(["config", "set", "--secret", "pw", "S3cr3t-old"])
    main(["config", "set", "--path", "--secret", "db.password", "S3cr3t-db"])
    says = "is a secret: set it with --secret to keep it encrypted, or with --plaintext to store"
    assert refuse("config", "set", "pw", "S3cr3t-new").startswith(f"configuration shop:pw {says}")
    assert refuse("config", "set", "--path", "db.password", "x").startswith(
        f"configuration db.password {says}"
    )
    assert refuse("config", "set", "pw", "x", "--secret", "--plaintext") == (
        "config set takes --secret or --plaintext, not both"
    )
    main(["config", "set", "pw", "now-plain", "--plaintext"])
    main(["config", "set", "--path", "db.port", "5432"])  # beside a secret: plain is fine
    capsys.readouterr()
    main(["config", "get", "pw"])
    assert capsys.readouterr().out == "now-plain\n"


def test_a_passphrase_stack_made_without_the_passphrase_says_to_set_it(
    project: Path, refuse: Refuse
) -> None:
    # It said the stack "keeps" its secrets under a passphrase and offered
    # change-secrets-provider, for a stack that does not exist yet.
    assert refuse("stack", "init", "p2", "--secrets-provider", "passphrase") == (
        "stack p2 is to keep its secrets under a passphrase: set STACKWRIGHT_CONFIG_PASSPHRASE "
        "to the passphrase to use"
    )
    assert stacks() == ["dev"]


@pytest.mark.parametrize("runtime", ["python", "yaml"])
def test_an_import_whose_metadata_names_another_namespace_is_refused_at_its_line(
    runtime: str, project: Path, refuse: Refuse
) -> None:
    """`import_="team/web"` with `namespace: prod` adopted prod/web, not the object named."""
    if runtime == "python":
        (project / "__main__.py").write_text(
            "import stackwright as sw\n"
            "import stackwright.kubernetes as k8s\n"
            "\n"
            "k8s.core.v1.ConfigMap(\n"
            '    "web",\n'
            '    metadata={"namespace": "prod"},\n'
            '    opts=sw.ResourceOptions(import_="team/web"),\n'
            ")\n"
        )
        where = "__main__.py:4"
    else:
        (project / "Stackwright.yaml").write_text(
            "name: shop\nruntime: yaml\nresources:\n  web:\n"
            "    type: kubernetes:core/v1:ConfigMap\n"
            "    properties:\n      metadata: {namespace: prod}\n"
            "    options: {import: team/web}\n"
        )
        where = "Stackwright.yaml:4"
    for command in (["preview"], ["up", "--yes"]):
        assert refuse(*command) == (
            f"{where}: kubernetes:core/v1:ConfigMap web: metadata.namespace 'prod' is not the "
            "namespace 'team' its import id 'team/web' names, and the object adopted would not "
            "be the one named: make them agree, or drop metadata.namespace: the import's id "
            "gives it; nothing was changed"
        )


def test_an_unknown_yaml_option_is_refused_at_its_own_line(project: Path, refuse: Refuse) -> None:
    # It named the resource's line, lines above the misspelt key.
    (project / "Stackwright.yaml").write_text(
        "name: shop\nruntime: yaml\nresources:\n  cm:\n"
        "    type: kubernetes:core/v1:ConfigMap\n"
        "    properties: {data: {a: b}}\n"
        "    options:\n      protect: false\n      retainOnDelet: true\n"
    )
    for command in (["preview"], ["up", "--yes"]):
        assert refuse(*command).startswith(
            "Stackwright.yaml:9: resource cm: unknown option 'retainOnDelet'; "
            "did you mean 'retainOnDelete'? it takes additionalSecretOutputs, aliases,"
        )


@pytest.mark.parametrize(
    ("settings", "said"),
    [
        (
            "{namespace: team}",
            "no kubeconfig found: set KUBECONFIG, create {home}/.kube/config, or name one",
        ),
        ("{kubeconfig: /nope/config}", "kubeconfig file /nope/config does not exist"),
    ],
)
def test_a_provider_resource_with_unusable_settings_is_named_at_its_line(
    settings: str,
    said: str,
    project: Path,
    tmp_path: Path,
    refuse: Refuse,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # It named no provider, and offered `config set kubernetes:cluster`, which a provider
    # resource does not read (the stack's settings are its default provider's).
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("KUBECONFIG", raising=False)
    (project / "Stackwright.yaml").write_text(
        "name: shop\nruntime: yaml\nresources:\n"
        f"  k8s:\n    type: pulumi:providers:kubernetes\n    properties: {settings}\n"
        "  cm:\n    type: kubernetes:core/v1:ConfigMap\n    properties: {data: {a: b}}\n"
        "    options: {provider: '${k8s}'}\n"
    )
    said = said.format(home=tmp_path)
    message = refuse("preview")
    assert message.startswith(f"Stackwright.yaml:4: provider k8s: {said}"), message
    ambient = "a provider resource reads none of the stack's kubernetes: settings: give it"
    assert (ambient in message) == ("kubeconfig" not in settings), message


@pytest.mark.parametrize(
    ("line", "said"),
    [
        (
            "\tdata: {a: b}",
            "5: not valid YAML (column 1): found character '\\t' that cannot start any token "
            "(while scanning for the next token): YAML is indented with spaces, not tabs: "
            "replace the tab with spaces",
        ),
        (
            "    options: {dependsOn: [${ns}]}",
            "5: not valid YAML (column 28): expected ',' or ']', but got '{' (while parsing a "
            "flow sequence from line 5, column 26): a ${…} reference inside {…} or […] is read "
            "as YAML's own braces; quote it, as '${ns}'",
        ),
    ],
)
def test_a_yaml_slip_in_the_project_file_is_named_with_its_fix(
    line: str, said: str, project: Path, refuse: Refuse
) -> None:
    (project / "Stackwright.yaml").write_text(
        "name: shop\nruntime: yaml\nresources:\n"
        f"  cm:\n{line}\n    type: kubernetes:core/v1:ConfigMap\n"
    )
    # The `FILE:LINE: …` form of every other mistake in a YAML program.
    assert refuse("preview") == f"Stackwright.yaml:{said}"


@pytest.mark.parametrize("command", [("stack", "graph"), ("stack", "export", "--file")])
def test_a_file_to_write_in_no_folder_is_one_line(
    command: tuple[str, ...], tmp_path: Path, refuse: Refuse
) -> None:
    # `stack graph FILE` and `stack export --file F` wrote unchecked: a traceback.
    missing = tmp_path / "nowhere" / "g.dot"
    assert refuse(*command, str(missing)) == (
        f"{' '.join(command)} {missing}: no folder {missing.parent} to write it in; make it first"
    )
    # A file where its folder would be (state.json/g.dot): no folder can be made there.
    (tmp_path / "state.json").write_text("{}")
    inside = tmp_path / "state.json" / "g.dot"
    assert refuse(*command, str(inside)) == (
        f"{' '.join(command)} {inside}: {inside.parent} is a file, not a folder to write it in"
    )


@pytest.mark.parametrize(
    ("command", "given"),
    [
        (("stack", "export", "--file"), "stack export --file"),
        (("import", "-f", "m.yaml", "--yes", "--out"), "import --out"),
    ],
)
def test_a_file_to_write_that_is_a_folder_is_one_line(
    command: tuple[str, ...], given: str, tmp_path: Path, refuse: Refuse
) -> None:
    # `import --out` found it after the objects were adopted: a traceback, the program lost.
    assert refuse(*command, str(tmp_path)) == (
        f"{given} {tmp_path}: that is a folder; name a file, e.g. {tmp_path / 'out'}"
    )


def test_an_output_of_a_stack_with_none_says_how_to_get_them(refuse: Refuse) -> None:
    # The tour's `stack output service_ip` before an `up`: it said "outputs: (none)".
    assert refuse("stack", "output", "service_ip") == (
        "stack dev has no outputs, so not 'service_ip': `stackwright up` records those its "
        "program exports"
    )
