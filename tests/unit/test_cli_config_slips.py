"""The slips a Pulumi user makes with configuration, stacks and stack references, each
told in one line (exit 2) that leads to the fix, and nothing changed: a misspelt key of
Stackwright's own settings, a null value to remove, a path to set, a passphrase not
given, a stack renamed onto another, a reference to a project that is not there."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from engine_stack import Stack
from engine_stack import stack as stack  # the fixture

from stackwright.cli.main import main
from stackwright.engine.clusters import Moved, refusal
from stackwright.engine.program import run_program
from stackwright.engine.yaml_program import run_yaml_program
from stackwright.errors import UsageError
from stackwright.model import ClusterIdentity
from stackwright.sdk.config import Config
from stackwright.sdk.context import Program, running


def refused(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """The one line `stackwright ARGS` refuses with (exit 2)."""
    capsys.readouterr()
    with pytest.raises(SystemExit) as exited:
        main(args)
    err = capsys.readouterr().err
    assert exited.value.code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    return err.strip()


@pytest.mark.parametrize(
    ("key", "meant"),
    [
        ("kubernetes:clustr", "kubernetes:cluster"),
        ("kubernetes:namspace", "kubernetes:namespace"),
        ("stackwright:enviroments", "stackwright:environments"),
    ],
)
def test_a_key_of_stackwrights_own_namespaces_that_is_no_setting_is_refused(
    project: Path, capsys: pytest.CaptureFixture[str], key: str, meant: str
) -> None:
    """`kubernetes:clustr` would leave the stack on the ambient kubeconfig's cluster and
    `stackwright:enviroments` its production guard off, without a word: refused as Pulumi
    refuses `kubernetes:clustr` (not a key of its provider), naming the key meant."""
    stack_file = project / "Stackwright.dev.yaml"
    before = stack_file.read_text() if stack_file.exists() else None
    message = refused(["config", "set", key, "x"], capsys)
    assert f"configuration {key} is no setting of Stackwright's" in message
    assert f"did you mean {meant}?" in message, message
    assert (stack_file.read_text() if stack_file.exists() else None) == before

    main(["config", "set", meant.replace("environments", "environments.ctx"), "x", "--path"])
    main(["config", "set", "kubernetes:timeout", "30", "--type", "int"])
    main(["config", "set", "app:clustr", "x"])  # another namespace takes any key


def test_a_stack_file_edited_by_hand_with_such_a_key_is_refused_before_any_operation(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "Stackwright.dev.yaml").write_text("config:\n  kubernetes:clustr: local\n")
    (project / "__main__.py").write_text("import stackwright as sw\nsw.export('a', 1)\n")
    for operation in (["preview"], ["up", "--yes"]):
        message = refused(operation, capsys)
        assert message == (
            "error: Stackwright.dev.yaml: configuration kubernetes:clustr is no setting of "
            "Stackwright's kubernetes namespace, which takes cluster, context, kubeconfig, "
            "namespace, timeout; did you mean kubernetes:cluster? remove it (`stackwright "
            "config rm kubernetes:clustr`), then set the one meant; nothing was changed"
        )
    main(["config", "rm", "kubernetes:clustr"])  # the way out it names works


@pytest.mark.parametrize("value", ["abc", "-5", "0", "nan", "true"])
def test_a_timeout_that_is_no_positive_number_of_seconds_is_refused(
    project: Path, capsys: pytest.CaptureFixture[str], value: str
) -> None:
    """`kubernetes:timeout abc` was stored, then every preview and `up` stopped on a
    ValueError traceback; `-5` or `0` made every wait fail at once. Refused where it is
    set, and where a stack file edited by hand holds it, before any operation."""
    stack_file = project / "Stackwright.dev.yaml"
    before = stack_file.read_text() if stack_file.exists() else None
    assert refused(["config", "set", "kubernetes:timeout", "--", value], capsys) == (
        f"error: configuration kubernetes:timeout must be a positive number of seconds, "
        f"not {value!r}: set it with `stackwright config set kubernetes:timeout 600`"
    )
    assert (stack_file.read_text() if stack_file.exists() else None) == before

    stack_file.write_text(f'config:\n  kubernetes:timeout: "{value}"\n')
    (project / "__main__.py").write_text("import stackwright as sw\nsw.export('a', 1)\n")
    for operation in (["preview"], ["up", "--yes"]):
        assert refused(operation, capsys) == (
            f"error: Stackwright.dev.yaml: configuration kubernetes:timeout must be a "
            f"positive number of seconds, not {value!r}: set it with `stackwright config "
            f"set kubernetes:timeout 600`; nothing was changed"
        )
    for good in ("90", "1.5"):
        main(["config", "set", "kubernetes:timeout", good])
    main(["config", "set", "kubernetes:timeout", "30", "--type", "int"])


def test_a_pulumi_provider_setting_is_refused_as_such_not_as_a_slip(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A ported Pulumi stack's `kubernetes:enableServerSideApply` or `renderYamlToDirectory`
    is a setting Stackwright does not take: told so, with what it does instead, not as a
    misspelling whose key 'meant' is to be set, nor as a value for the program's namespace."""
    message = refused(["config", "set", "kubernetes:renderYamlToDirectory", "out"], capsys)
    assert message == (
        "error: configuration kubernetes:renderYamlToDirectory is a setting of Pulumi's "
        "Kubernetes provider, which Stackwright does not take (the stack's default provider "
        "applies to a cluster; a provider declared with render_yaml_to_directory (YAML "
        "programs: renderYamlToDirectory) writes files instead); leave it out"
    )
    (project / "Stackwright.dev.yaml").write_text(
        'config:\n  kubernetes:enableServerSideApply: "true"\n'
    )
    (project / "__main__.py").write_text("import stackwright as sw\nsw.export('a', 1)\n")
    assert refused(["preview"], capsys) == (
        "error: Stackwright.dev.yaml: configuration kubernetes:enableServerSideApply is a "
        "setting of Pulumi's Kubernetes provider, which Stackwright does not take (it always "
        "applies server-side); remove it (`stackwright config rm "
        "kubernetes:enableServerSideApply`); nothing was changed"
    )
    main(["config", "rm", "kubernetes:enableServerSideApply"])


def test_a_project_named_like_a_namespace_keeps_its_own_keys(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A project's own namespace is its name: a project `stackwright` sets any key of it."""
    (project / "Stackwright.yaml").write_text("name: stackwright\nruntime: python\n")
    main(["stack", "init", "dev"])
    main(["config", "set", "replicas", "3"])
    capsys.readouterr()
    main(["config", "get", "stackwright:replicas"])
    assert capsys.readouterr().out == "3\n"


def test_config_rm_removes_a_key_set_to_null(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`key:` with no value in a stack file (or `--type json key null`) is set, to null:
    `config get` shows it, so `config rm` removes it, at the top or down a path."""
    main(["config", "set", "--type", "json", "flag", "null"])
    main(["config", "set", "--type", "json", "--path", "app:db.port", "null"])
    main(["config", "rm", "flag"])
    main(["config", "rm", "--path", "app:db.port"])
    capsys.readouterr()
    main(["config", "ls", "--json"])
    assert json.loads(capsys.readouterr().out) == {
        "app:db": {"value": "{}", "objectValue": {}, "secret": False}
    }
    main(["config", "rm", "flag"])  # removed: not set any more, which is no error
    assert capsys.readouterr().err == "note: configuration shop:flag is not set for stack dev\n"


def test_config_get_of_a_path_not_set_names_the_command_that_sets_it(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The command it names sets that path (with --path, quoted for the shell), not a key
    whose name holds a dot or brackets."""
    main(["config", "set", "--path", "app:db.port", "5432"])
    assert refused(["config", "get", "--path", "app:db.host"], capsys) == (
        "error: configuration app:db.host is not set for stack dev: set it with "
        "`stackwright config set --path app:db.host VALUE`"
    )
    assert refused(["config", "get", "--path", "app:hosts[0]"], capsys).endswith(
        "`stackwright config set --path 'app:hosts[0]' VALUE`"
    )


def test_a_missing_passphrase_is_told_without_a_way_that_needs_it_too(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`stack change-secrets-provider` unwraps the key with the passphrase first: it is no
    way on for a user without it, so the line names only the variable."""
    monkeypatch.setenv("STACKWRIGHT_CONFIG_PASSPHRASE", "correct horse")
    main(["stack", "init", "prod", "--secrets-provider", "passphrase"])
    main(["config", "set", "--secret", "password", "hunter2-pw"])
    monkeypatch.delenv("STACKWRIGHT_CONFIG_PASSPHRASE")
    told = "error: stack prod keeps its secrets under a passphrase: set STACKWRIGHT_CONFIG_PASSPHRASE to it"
    for args in (
        ["config", "get", "password"],
        ["config", "ls", "--show-secrets"],
        ["stack", "change-secrets-provider", "local"],
    ):
        assert refused(args, capsys) == told


def test_stack_rename_onto_another_stack_names_that_stack_not_its_file(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Its stack file is there because the stack is: "move it away" would lose its config."""
    main(["stack", "init", "prod"])  # selected now
    main(["config", "set", "replicas", "5"])
    assert refused(["stack", "rename", "dev", "prod"], capsys) == (
        "error: cannot rename stack dev to prod: project shop already has a stack prod; "
        "remove it or pick another name"
    )
    main(["config", "get", "replicas"])  # prod's file is where it was
    assert capsys.readouterr().out == "5\n"


def test_a_reference_to_a_project_with_no_stack_says_so(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No stack list to choose from: the project's name is what to check."""
    (project / "__main__.py").write_text(
        'import stackwright as sw\nsw.StackReference("platfrom/dev")\n'
    )
    message = refused(["preview"], capsys)
    assert (
        "has no stack dev of project platfrom, nor any other of that project; check the " in message
    )
    assert "name one of those" not in message


def test_a_yaml_programs_reference_to_such_a_key_is_refused_at_its_line(tmp_path: Path) -> None:
    """`${kubernetes:cluster}` reads the stack's setting; `${kubernetes:clustr}` read null.
    So did a config entry of that name."""
    program = tmp_path / "Stackwright.yaml"
    program.write_text(
        "name: shop\nruntime: yaml\noutputs:\n  cluster: ${kubernetes:cluster}\n"
        "  other: ${app:anything}\n"
    )
    ran = run_program(program, project="shop", stack="dev", config={"kubernetes:cluster": "local"})
    assert ran.exports == {"cluster": "local", "other": None}
    program.write_text(program.read_text().replace("cluster}", "clustr}"))
    with pytest.raises(UsageError) as caught:
        run_program(program, project="shop", stack="dev", config={"kubernetes:cluster": "local"})
    assert str(caught.value) == (
        f"{program}:4: ${{kubernetes:clustr}}: configuration kubernetes:clustr is no setting of "
        "Stackwright's kubernetes namespace, which takes cluster, context, kubeconfig, "
        "namespace, timeout; did you mean kubernetes:cluster?"
    )
    # Declared in its `config:` block, it read the default (or null) as well.
    program.write_text(
        "name: shop\nruntime: yaml\nconfig:\n  kubernetes:clustr: {type: string, default: x}\n"
    )
    with pytest.raises(UsageError) as caught:
        run_program(program, project="shop", stack="dev", config={})
    assert str(caught.value).startswith(
        f"{program}:4: configuration kubernetes:clustr is no setting of Stackwright's kubernetes "
    )


def test_a_yaml_programs_read_of_a_missing_object_is_told_in_yaml(
    tmp_path: Path, stack: Stack
) -> None:
    """A YAML program reads with `get: {id: …}` and manages with `properties:`: the line
    says those, not Python's id=."""
    program = tmp_path / "Stackwright.yaml"
    program.write_text(
        "name: shop\nruntime: yaml\nresources:\n  dns:\n    type: kubernetes:core/v1:Service\n"
        "    get: {id: kube-system/nodns}\n  ns:\n    type: kubernetes:core/v1:Namespace\n"
        "    get: {id: default/kube-system}\n"
    )

    def declare(declared: Program) -> None:
        declared.runtime = "yaml"
        run_yaml_program(program)

    summary = stack.preview(declare)
    assert sorted(summary.failures) == [
        "kubernetes:core/v1:Namespace ns: Namespace is cluster-scoped: read it with "
        "get: {id: kube-system}, not default/kube-system",
        "kubernetes:core/v1:Service dns: Service kube-system/nodns does not exist: a read "
        "(get: {id: kube-system/nodns}) only reads an existing object; create it first, or put "
        "`properties:` in place of `get:` to have this stack manage it",
    ]


def test_a_new_stack_under_an_env_key_not_given_says_how_to_make_one(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """There is no key yet to set the variable "to": the line says how to make one, as
    `is to keep its secrets under a passphrase` says to choose one; no stack is made."""
    monkeypatch.delenv("STACKWRIGHT_SECRETS_KEY", raising=False)
    assert refused(["stack", "init", "prod", "--secrets-provider", "env"], capsys) == (
        "error: stack prod is to keep its secrets under a key from the environment: set "
        "STACKWRIGHT_SECRETS_KEY to a base64-encoded 32-byte key, made with `python -c 'import "
        "base64, os; print(base64.b64encode(os.urandom(32)).decode())'`"
    )
    assert not (project / "Stackwright.prod.yaml").exists()
    main(["stack", "ls", "--json"])
    assert '"name": "prod"' not in capsys.readouterr().out


def test_a_misspelt_project_name_is_named_with_the_missing_name(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "Stackwright.yaml").write_text("nme: shop\nruntime: python\n")
    assert refused(["config", "ls"], capsys) == (
        "error: Stackwright.yaml: `name` is missing; add `name: <project "
        "name>` (in place of 'nme'?)"
    )


def test_a_misspelt_stack_reference_type_names_the_type_meant(tmp_path: Path) -> None:
    """The types the line lists had no StackReference, so its slip had no lead at all."""
    program = tmp_path / "Stackwright.yaml"
    program.write_text(
        "name: shop\nruntime: yaml\nresources:\n  ref:\n    type: pulumi:pulumi:StackRef\n"
        "    properties: {name: platform/dev}\n"
    )
    with pytest.raises(UsageError) as caught:
        run_program(program, project="shop", stack="dev", config={})
    message = str(caught.value)
    assert message.startswith(f"{program}:4: resource ref: type 'pulumi:pulumi:StackRef' is not")
    assert ", pulumi:pulumi:StackReference or one of " in message
    assert message.endswith("; did you mean 'pulumi:pulumi:StackReference'?"), message


def test_an_env_tagged_stack_of_explicit_providers_needs_no_default_kubeconfig(
    project: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`examples/two-clusters` tagged `env`: the environment check read the default
    provider's kubeconfig, which such a stack need not have, and refused every run with
    `no kubeconfig found`; its own providers' contexts are what it checks."""
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "nohome"))  # no ~/.kube/config
    kubeconfig = tmp_path / "east.kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: east\n"
        "clusters: [{name: east, cluster: {server: 'https://127.0.0.1:1'}}]\n"
        "users: [{name: east, user: {token: t}}]\n"
        "contexts: [{name: east, context: {cluster: east, user: east}}]\n"
    )
    (project / "__main__.py").write_text(
        "import stackwright as sw\nimport stackwright.kubernetes as k8s\n"
        f"east = k8s.Provider('east', kubeconfig={str(kubeconfig)!r})\n"
        "k8s.core.v1.ConfigMap('c', data={'a': 'b'}, opts=sw.ResourceOptions(provider=east))\n"
    )
    main(["stack", "tag", "set", "env", "production"])
    main(["config", "set", "--path", 'stackwright:environments["east"]', "development"])
    assert refused(["preview"], capsys).startswith(
        "error: stack dev is tagged env=production but cluster context 'east' belongs to "
        "environment development"
    )


@pytest.mark.parametrize(
    "args", [["stack", "select", "prdo"], ["-s", "prdo", "preview"], ["-s", "prdo", "stack"]]
)
def test_a_misspelt_stack_is_refused_naming_the_stacks_there_are(
    project: Path, capsys: pytest.CaptureFixture[str], args: list[str]
) -> None:
    main(["stack", "init", "prod"])
    assert refused(args, capsys) == (
        "error: stack prdo does not exist in project shop (its stacks: dev, prod): create it "
        "with `stackwright stack init prdo`"
    )


def test_a_stack_moved_off_its_local_cluster_is_told_the_setting_that_names_it() -> None:
    """`kubernetes:cluster nosuch` (a slip, or another local cluster) reaches another
    cluster: the way back for a stack on a local cluster is its `kubernetes:cluster`, which
    `kubernetes:context stackwright-local` alone would not give (the kubeconfig is the
    other cluster's)."""
    moved = Moved(
        "",
        ClusterIdentity("a", "https://127.0.0.1:1", "stackwright-local"),
        ClusterIdentity("b", "https://127.0.0.1:2", "stackwright-nosuch"),
        4,
    )
    assert (
        "switch back (`kubectl config use-context stackwright-local`, or `stackwright config "
        "set kubernetes:context stackwright-local` where the stack's config names the context, "
        "or `stackwright config set kubernetes:cluster local` where it names a local cluster)"
    ) in refusal(moved, "preview")
    elsewhere = Moved("", ClusterIdentity("a", "https://h:6443", "prod"), moved.current, 4)
    assert "kubernetes:cluster" not in refusal(elsewhere, "preview")


def test_a_local_cluster_made_anew_under_the_same_context_is_not_told_to_switch_back() -> None:
    """`cluster delete`, then any command starts `local` again: another kube-system, the
    same context. "Switch back (`kubectl config use-context stackwright-local`)" named the
    context in use."""
    local = ClusterIdentity("a", "https://127.0.0.1:1", "stackwright-local")
    moved = Moved("", local, ClusterIdentity("b", "https://127.0.0.1:2", "stackwright-local"), 4)
    assert refusal(moved, "destroy") == (
        "destroy refused: the local cluster local is not the one provider default's 4 "
        "object(s) were applied to (kube-system uid b, recorded a): it was deleted and started "
        "again since, which took them with it, or STACKWRIGHT_HOME names another folder than "
        "then; nothing was changed: set STACKWRIGHT_HOME back if it changed, else `stackwright "
        "up --retarget` forgets them and makes them anew on this cluster, or `stackwright stack "
        "rm --force --preserve-config` forgets the stack's records of them"
    )
    # Two clusters behind one context name that is not a local cluster's: the usual line.
    shared = Moved("", ClusterIdentity("a", "", "prod"), ClusterIdentity("b", "", "prod"), 4)
    assert "switch back" in refusal(shared, "destroy")


@pytest.mark.parametrize("value", ["-5", "-1.5"])
def test_a_negative_value_read_as_a_flag_says_to_put_it_after_double_dash(
    project: Path, capsys: pytest.CaptureFixture[str], value: str
) -> None:
    """As Pulumi's CLI, `config set offset -5` reads -5 as a flag; the line says the way."""
    message = refused(["config", "set", "offset", value, "--type", "float"], capsys)
    assert message.startswith("error: No such option (not shown: it may be a secret value;")
    assert "goes after `--`: `stackwright config set … -- VALUE`)" in message, message
    main(["config", "set", "--type", "float", "offset", "--", value])
    capsys.readouterr()
    main(["config", "get", "offset"])
    assert capsys.readouterr().out == f"{float(value)}\n"


@pytest.mark.parametrize(
    ("value", "message"),
    [
        # A generated password may start with '-': click reads it as options (`-X` of it).
        (["-Xq7-pw"], "No such option (not shown: it may be a secret value; a value that"),
        (["--Xq7-pw"], "No such option (not shown: it may be a secret value; a value that"),
        # A passphrase with spaces, not quoted: its words after the first are extra words.
        (["my", "Xq7", "phrase"], "config set takes KEY and one VALUE, and more words"),
    ],
)
def test_config_set_words_it_refuses_are_not_shown(
    value: list[str], message: str, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for json_flag in ([], ["--json"]):
        capsys.readouterr()
        with pytest.raises(SystemExit) as exited:
            main(["config", "set", "--secret", "db.password", *value, *json_flag])
        shown = capsys.readouterr()
        assert exited.value.code == 2 and message in shown.err, shown.err
        assert "Xq7" not in shown.out + shown.err
    # A typo of an option is answered with the options there are.
    assert "the options are --secret, --plaintext, --path, --type" in refused(
        ["config", "set", "--secert", "db.password", "x"], capsys
    )
    # Other commands take no value that may be a secret: their slips are quoted as click has them.
    assert refused(["config", "get", "--nope", "db.password"], capsys) == (
        "error: No such option: --nope; see `stackwright config get --help`"
    )


@pytest.mark.parametrize(
    "words",
    [
        ["db.password=my", "Xq7", "phrase"],  # a passphrase with spaces, not quoted
        ["db.password=", "--Xq7"],  # a value set apart from its key
    ],
)
def test_config_set_all_words_it_refuses_are_not_shown(
    words: list[str], project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for json_flag in ([], ["--json"]):
        capsys.readouterr()
        with pytest.raises(SystemExit) as exited:
            main(["config", "set-all", "--secret", *words, *json_flag])
        shown = capsys.readouterr()
        assert exited.value.code == 2 and "(not shown: " in shown.err, shown.err
        assert "Xq7" not in shown.out + shown.err


@pytest.mark.parametrize(
    ("value", "shown"),
    [("a.example.com", '"a.example.com"'), ({"a": 1}, '{"a": 1}'), ([1, 2], "[1, 2]"), (5, "5")],
)
def test_a_yaml_programs_structured_config_of_another_type_is_refused_at_its_entry(
    tmp_path: Path, value: object, shown: str
) -> None:
    """`hosts: {type: List<String>}` took any value, to fail later at a reference (or not
    at all); the line names the type and a command that sets a value of it."""
    program = tmp_path / "Stackwright.yaml"
    program.write_text(
        "name: shop\nruntime: yaml\nconfig:\n  hosts: {type: List<String>}\noutputs:\n"
        "  hosts: ${hosts}\n"
    )
    with pytest.raises(UsageError) as caught:
        run_program(program, project="shop", stack="dev", config={"shop:hosts": value})
    assert str(caught.value) == (
        f"{program}:4: config hosts: the stack's value {shown} is not of type List<String>; "
        """set it with `stackwright config set --type json hosts '["a", "b"]'`"""
    )
    ran = run_program(program, project="shop", stack="dev", config={"shop:hosts": '["a"]'})
    assert ran.exports == {"hosts": ["a"]}
    with pytest.raises(UsageError, match=r"hosts '\[\"a\", \"b\"\]'` or give the config a"):
        run_program(program, project="shop", stack="dev", config={})


def test_a_yaml_programs_scalar_config_of_another_type_is_refused_at_its_entry(
    tmp_path: Path,
) -> None:
    program = tmp_path / "Stackwright.yaml"
    program.write_text(
        "name: shop\nruntime: yaml\nconfig:\n  replicas: {type: integer, default: 2}\n"
        "  pw: {type: integer, secret: true}\n"
    )
    config = {"shop:replicas": "three", "shop:pw": 1}
    with pytest.raises(UsageError) as caught:
        run_program(program, project="shop", stack="dev", config=config)
    assert str(caught.value) == (
        f"{program}:4: configuration shop:replicas must be an integer (got 'three'); set it "
        "with `stackwright config set replicas 3`"
    )
    config = {"shop:replicas": 3, "shop:pw": "s3cr3t-pw"}
    secret = frozenset({"shop:pw"})  # as `config set --secret` stores it
    with pytest.raises(UsageError) as caught:
        run_program(program, project="shop", stack="dev", config=config, secret_keys=secret)
    assert str(caught.value) == (
        f"{program}:5: configuration shop:pw must be an integer (got [secret]); set it with "
        "`stackwright config set --secret pw 3`"
    )


def test_a_plain_value_read_as_a_secret_is_not_shown_when_it_is_not_of_its_type() -> None:
    """`get_secret_int` of a value stored plain: the program holds it as a secret, so the
    line that refuses it shows [secret] and sets it as one, as for a value stored secret."""
    program = Program(project="shop", stack="dev", config={"shop:pin": "hunter2-pin"})
    with running(program), pytest.raises(UsageError) as caught:
        Config().get_secret_int("pin")
    assert str(caught.value) == (
        "configuration shop:pin must be an integer (got [secret]); set it with "
        "`stackwright config set --secret pin 3`"
    )


def test_set_all_and_rm_all_change_every_key_or_none(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`pulumi config set-all --plaintext K=V --secret K=V` and `rm-all K…`: one write, and
    a refused key (here Stackwright's own namespace misspelt) leaves the file as it was; a
    key not set is no refusal (as in Pulumi)."""
    stack_file = project / "Stackwright.dev.yaml"
    main(["config", "set-all", "--plaintext", "replicas=3", "--secret", "db:password=hunter2"])
    assert "hunter2" not in stack_file.read_text()
    capsys.readouterr()
    main(["config", "get", "db:password"])
    assert capsys.readouterr().out == "hunter2\n"
    main(["config", "get", "replicas"])
    assert capsys.readouterr().out == "3\n"

    before = stack_file.read_text()
    assert refused(
        ["config", "set-all", "--plaintext", "replicas=4", "--plaintext", "kubernetes:clustr=x"],
        capsys,
    ).startswith("error: configuration kubernetes:clustr is no setting")
    assert refused(["config", "set-all", "--secret", "token"], capsys) == (
        "error: config set-all --secret: an argument without '=': give KEY=VALUE "
        "(`--secret replicas=3`)"
    )
    assert stack_file.read_text() == before

    # A key not set is noted and passed over, as by `config rm` (Pulumi's is silent).
    main(["config", "rm-all", "replicas", "missing", "db:password", "--json"])
    said = capsys.readouterr()
    assert said.err == "note: configuration shop:missing is not set for stack dev\n"
    assert json.loads(said.out)["removed"] == ["shop:replicas", "db:password"]
    main(["config", "ls", "--json"])
    assert json.loads(capsys.readouterr().out) == {}


@pytest.mark.parametrize("value", ["Bad_NS", "-x", "a" * 64, "my.ns", ""])
def test_a_namespace_no_namespace_can_be_named_is_refused(
    project: Path, capsys: pytest.CaptureFixture[str], value: str
) -> None:
    """`kubernetes:namespace Bad_NS` was stored; then every object of `preview` failed with
    `namespaces "Bad_NS" not found: declare namespace Bad_NS in the program`, which the API
    server refuses as well. Refused where it is set, and in a stack file edited by hand."""
    stack_file = project / "Stackwright.dev.yaml"
    before = stack_file.read_text() if stack_file.exists() else None
    said = (
        f"configuration kubernetes:namespace must be a namespace's name (lowercase letters, "
        f"digits and '-', at most 63), not {value!r}: set it with `stackwright config set "
        f"kubernetes:namespace my-app`"
    )
    assert refused(["config", "set", "kubernetes:namespace", "--", value], capsys) == (
        f"error: {said}"
    )
    assert (stack_file.read_text() if stack_file.exists() else None) == before

    stack_file.write_text(f'config:\n  kubernetes:namespace: "{value}"\n')
    (project / "__main__.py").write_text("import stackwright as sw\nsw.export('a', 1)\n")
    assert refused(["preview"], capsys) == (
        f"error: Stackwright.dev.yaml: {said}; nothing was changed"
    )
    main(["config", "set", "kubernetes:namespace", "team-a1"])


@pytest.mark.parametrize(
    ("written", "said"),
    [
        (  # read by no program: `Config().get("replicas")` reads shop:replicas
            "config:\n  replicas: 3\n",
            "configuration key 'replicas' is not NAMESPACE:NAME: write it as 'shop:replicas' "
            "(the project's) or 'NAMESPACE:replicas'",
        ),
        (  # a key YAML reads as a number: a traceback
            "config:\n  1: x\n",
            "configuration key '1' is not NAMESPACE:NAME: write it as 'shop:1' (the project's) "
            "or 'NAMESPACE:1'",
        ),
        (
            "config:\n  a:b:c: x\n",
            "configuration key 'a:b:c' is not NAMESPACE:NAME: write it as 'shop:NAME' (the "
            "project's) or 'NAMESPACE:NAME'",
        ),
        (  # the stack ran with no configuration at all
            "conifg:\n  shop:replicas: 3\n",
            "unknown key 'conifg'; did you mean 'config'? a stack file has config, tags, "
            "secretsprovider, encryptionsalt, encryptedkey",
        ),
    ],
)
def test_a_stack_file_edited_by_hand_with_a_key_no_program_reads_is_refused(
    project: Path, capsys: pytest.CaptureFixture[str], written: str, said: str
) -> None:
    """Pulumi refuses a stack file's config key without its namespace; these were taken
    without a word (or with a traceback) and the program ran without the value."""
    (project / "Stackwright.dev.yaml").write_text(written)
    (project / "__main__.py").write_text("import stackwright as sw\nsw.export('a', 1)\n")
    for operation in (["config"], ["preview"], ["config", "set", "other", "1"]):
        assert refused(operation, capsys) == f"error: Stackwright.dev.yaml: {said}"
    assert (project / "Stackwright.dev.yaml").read_text() == written
