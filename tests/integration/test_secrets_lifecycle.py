"""Secrets, stacks, stack references and environments end to end: the real CLI, a real cluster.

After every step of a secret's life the plain value is looked for everywhere it must
never be — the state store's bytes (database and WAL), the stack files, the
command's stdout and stderr, the history — by one helper, `assert_nowhere`.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_cli_lifecycle import (  # the CLI-running helpers of the lifecycle tests
    STACK,
    LiveCluster,
    Project,
    Result,
    create,
    get,
    new_project,
    one_line,
)

from stackwright.localcluster import lifecycle

pytestmark = pytest.mark.integration
__all__ = ["new_project"]  # a fixture, used by name

PLAIN = "Tr0ub4dor-and-3"
ROTATED = "hunter2-but-longer"


@pytest.fixture
def passphrase(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setenv("STACKWRIGHT_CONFIG_PASSPHRASE", "first passphrase")
    yield "first passphrase"


def assert_nowhere(p: Project, cluster: LiveCluster, plain: str, *results: Result) -> None:
    """The plain value (or its base64, as a Secret's data holds it) is in none of: the
    state store's files, the stack files, the results' stdout and stderr, the history."""
    forms = [
        plain,
        base64.b64encode(plain.encode()).decode(),
        json.dumps(plain)[1:-1],  # as an API server's message or a JSON line escapes it
        json.dumps(plain, ensure_ascii=False)[1:-1],
    ]
    places: dict[str, str] = {}
    for path in cluster.home.glob("state.db*"):
        places[str(path)] = path.read_bytes().decode("latin-1")
    for path in p.root.glob("Stackwright*.yaml"):
        places[str(path)] = path.read_text()
    for result in results:
        places[f"stdout of {' '.join(result.args)}"] = result.out
        places[f"stderr of {' '.join(result.args)}"] = result.err
    places["history"] = json.dumps(p.history()) + p.sw("stack", "history", "--json").out
    for where, text in places.items():
        for form in forms:
            assert form not in text, f"the secret appears in {where}"


LIST_PROGRAM = """
cfg = sw.Config()
password = cfg.require_secret("dbpassword")
k8s.core.v1.Namespace("ns", metadata={"name": NS})
spec = app_spec("web")
env = [{"name": "A", "value": "a"}, {"name": "DB_PASSWORD", "value": password}]
spec["template"]["spec"]["containers"][0]["env"] = env + EXTRA
k8s.apps.v1.Deployment("web", metadata={"name": "web", "namespace": NS}, spec=spec)
sw.export("pwlist", [password])
sw.export("pwnested", {"a": [{"b": password}]})
"""


def test_secrets_in_lists_reordered_echoed_and_imported(
    new_project: Any, cluster: LiveCluster, passphrase: str
) -> None:
    """The leaks a review found: a secret in a list of a stack output, in a list whose
    length changes (one diff at the list's path), in a list the cluster reorders (secret
    paths are positions), echoed escaped by the API server, and an imported Secret."""
    p = new_project()
    p.sw("config", "set", "--secret", "dbpassword", PLAIN)
    p.program("EXTRA = []\n" + LIST_PROGRAM)
    up = p.sw("up", "--yes", "--diff")
    done = p.up()
    assert done.summary["outputs"] == {
        "pwlist": ["[secret]"],
        "pwnested": {"a": [{"b": "[secret]"}]},
    }
    assert_nowhere(p, cluster, PLAIN, up, done, p.sw("stack", "output"), p.sw("stack", "export"))
    assert p.sw("stack", "output", "pwlist", "--show-secrets").out.strip() == f'["{PLAIN}"]'

    # The list grows: one change at the list's path, its secret element masked.
    p.program('EXTRA = [{"name": "B", "value": "b"}]\n' + LIST_PROGRAM)
    grown = p.sw("preview", "--diff")
    grown_json = p.preview("--diff")
    applied = p.sw("up", "--yes", "--diff")
    assert "[secret]" in grown.out
    assert_nowhere(p, cluster, PLAIN, grown, grown_json, applied)

    # Something in the cluster puts an entry first: the secret moves to another position.
    patch = '[{"op":"add","path":"/spec/template/spec/containers/0/env/0","value":{"name":"Z","value":"z"}}]'
    cluster.kubectl("patch", "deployment", "web", "-n", p.ns, "--type=json", "-p", patch)
    refreshed = p.sw("refresh", "--yes")
    assert_nowhere(p, cluster, PLAIN, refreshed)

    # An API server echoing an invalid value escapes it: masked all the same.
    odd = 'Zq7"Sec ret/P\u00e442x'
    p.sw("config", "set", "--secret", "label", odd)
    p.program(
        "EXTRA = []\n"
        + LIST_PROGRAM
        + 'k8s.core.v1.Pod("bad", metadata={"name": "bad", "namespace": NS}, spec={'
        '"restartPolicy": cfg.require_secret("label"), '
        '"containers": [{"name": "c", "image": "nginx:1.29"}]})\n'
    )
    refused = p.up(rc=1)  # refused by the server, and the Deployment loses EXTRA: a change
    refused_plain = p.sw("up", "--yes", rc=2)  # nothing else changes now: bad input
    assert 'Unsupported value: "[secret]"' in refused_plain.out
    assert "[secret]" in refused.out
    assert_nowhere(p, cluster, odd, refused, refused_plain)

    # Importing a Secret: its data is secret in the state and not printed in the code.
    imported_value = "Imp0rted-Secret-55"
    cluster.kubectl(
        "create", "secret", "generic", "impsec", "-n", p.ns, f"--from-literal=pw={imported_value}"
    )
    imported = p.sw("import", "--yes", "kubernetes:core/v1:Secret", "impsec", f"{p.ns}/impsec")
    assert "cfg.require_secret('impsec-pw')" in imported.out
    assert "stackwright config set --secret impsec-pw" in imported.out
    assert_nowhere(p, cluster, imported_value, imported)

    # One made by `kubectl apply` also holds its data in the last-applied annotation.
    applied_value = "Appl1ed-Secret-77"
    manifest = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "appsec", "namespace": p.ns},
        "stringData": {"pw": applied_value},
    }
    cluster.kubectl("apply", "-f", "-", input=json.dumps(manifest))
    adopted = p.sw("import", "--yes", "kubernetes:core/v1:Secret", "appsec", f"{p.ns}/appsec")
    assert_nowhere(p, cluster, applied_value, adopted, p.sw("stack", "export"))


def test_an_imported_secrets_printed_code_declares_what_was_adopted(
    new_project: Any, cluster: LiveCluster, passphrase: str
) -> None:
    """The code `import` prints for a Secret, pasted into the program with its values set
    in the configuration as it says, is what was adopted: no change, no drift."""
    p = new_project()
    p.program('k8s.core.v1.Namespace("ns", metadata={"name": NS})\n')
    p.up()
    b64 = {"tls.crt": "-----CERT-----\nAbc\n", "tls.key": "K3y-Imp0rted-91"}
    manifest = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "tls", "namespace": p.ns},
        "type": "kubernetes.io/tls",
        "data": {k: base64.b64encode(v.encode()).decode() for k, v in b64.items()},
    }
    cluster.kubectl("create", "-f", "-", input=json.dumps(manifest))
    imported = p.sw("import", "--yes", "kubernetes:core/v1:Secret", "tls", f"{p.ns}/tls")
    code = imported.out.split("Add this to your program:", 1)[1].strip()
    assert "string_data={'tls.crt': cfg.require_secret('tls-tls.crt')," in code
    for key, value in b64.items():
        p.sw("config", "set", "--secret", f"tls-{key}", "--", value)
    p.program('k8s.core.v1.Namespace("ns", metadata={"name": NS})\n' + code + "\n")
    assert p.preview().changed() == {}
    assert p.up().summary["counts"] == {"same": 2}
    assert p.sw("refresh", "--preview-only", "--json").of("drift") == []
    assert_nowhere(p, cluster, b64["tls.key"], imported)


SECRET_PROGRAM = """
cfg = sw.Config()
password = cfg.require_secret("dbpassword")
k8s.core.v1.Namespace("ns", metadata={"name": NS})
creds = k8s.core.v1.Secret("creds", metadata={"name": "creds", "namespace": NS},
                           string_data={"password": password})
spec = app_spec("web")
spec["template"]["spec"]["containers"][0]["env"] = [{"name": "DB_PASSWORD", "value": password}]
k8s.apps.v1.Deployment("web", metadata={"name": "web", "namespace": NS}, spec=spec)
sw.export("password", password)
sw.export("shout", password.apply(lambda s: s.upper()))
sw.export("secret_name", creds.metadata["name"])
"""


def test_every_secret_path(new_project: Any, cluster: LiveCluster, passphrase: str) -> None:
    p = new_project()
    set_ = p.sw("config", "set", "--secret", "dbpassword", PLAIN)
    assert_nowhere(p, cluster, PLAIN, set_, p.sw("config"), p.sw("config", "ls", "--json"))
    p.program(SECRET_PROGRAM)

    planned = p.preview()
    diff = p.sw("preview", "--diff")
    assert "[secret]" in planned.out and "[secret]" in diff.out
    assert_nowhere(p, cluster, PLAIN, planned, diff)

    up = p.up()
    assert up.summary["outputs"] == {
        "password": "[secret]",
        "shout": "[secret]",
        "secret_name": "creds",
    }
    assert_nowhere(p, cluster, PLAIN, up)
    assert_nowhere(p, cluster, PLAIN.upper(), up)
    # The cluster has the values; the state has ciphertext envelopes where they were.
    deployment = get(cluster, "deployment", "web", p.ns)
    assert deployment is not None
    assert deployment["spec"]["template"]["spec"]["containers"][0]["env"][0]["value"] == PLAIN
    state = p.resources()
    assert set(state["creds"]["inputs"]["stringData"]) == {"@secret"}
    assert set(state["creds"]["outputs"]["data"]) == {"@secret"}
    env = state["web"]["inputs"]["spec"]["template"]["spec"]["containers"][0]["env"][0]
    assert set(env["value"]) == {"@secret"}

    # Someone copies the value into another object: a refresh records it encrypted.
    cluster.kubectl("annotate", "namespace", p.ns, f"copied={PLAIN}")
    refreshed = p.sw("refresh", "--yes")
    namespace = p.resources()["ns"]["outputs"]["metadata"]["annotations"]
    assert set(namespace["copied"]) == {"@secret"}
    assert_nowhere(p, cluster, PLAIN, refreshed)
    cluster.kubectl("annotate", "namespace", p.ns, "copied-")

    # A change of the secret: a diff, an update with the diff shown.
    p.sw("config", "set", "--secret", "dbpassword", ROTATED)
    diff = p.sw("preview", "--diff")
    assert "~" in diff.out or "update" in diff.out
    updated = p.sw("up", "--yes", "--diff")
    for value in (PLAIN, ROTATED):
        assert_nowhere(p, cluster, value, diff, updated)
    history = p.sw("stack", "history")
    outputs = p.sw("stack", "output")
    outputs_json = p.sw("stack", "output", "--json")
    assert json.loads(outputs_json.out)["password"] == "[secret]"
    assert_nowhere(p, cluster, ROTATED, history, outputs, outputs_json)
    # Only --show-secrets shows it.
    shown = p.sw("stack", "output", "password", "--show-secrets")
    assert shown.out.strip() == ROTATED

    # Export keeps ciphertext; import accepts it; nothing changes after.
    exported = p.sw("stack", "export", "--file", str(p.root / "exported.json"))
    document = (p.root / "exported.json").read_text()
    assert ROTATED not in document and "@secret" in document
    imported = p.sw("stack", "import", "--file", str(p.root / "exported.json"))
    again = p.up()
    assert set(again.summary["counts"]) == {"same"}
    assert_nowhere(p, cluster, ROTATED, exported, imported, again)

    # A program that raises holding the secret: [secret] in its one-line error.
    p.program(
        SECRET_PROGRAM + 'raise RuntimeError("cannot log in with " + cfg.require("dbpassword"))\n'
    )
    failed = p.sw("up", "--yes", "--json", rc=2)
    assert "cannot log in with [secret]" in one_line(failed)
    assert_nowhere(p, cluster, ROTATED, failed)

    # A stack made anew has a new key: the old export's secrets cannot open with it, so
    # importing it is refused (it would leave a stack no command can load).
    p.sw("stack", "rm", STACK, "--force", "--yes")
    p.sw("stack", "init", STACK)
    refused = p.sw("stack", "import", "--file", str(p.root / "exported.json"), rc=2)
    assert "cannot decrypt" in one_line(refused)
    assert p.resources() == {}


#: A namespace and a Secret `creds` holding the secret config value `dbpassword` as `pw`.
CREDS_PROGRAM = (
    'k8s.core.v1.Namespace("ns", metadata={"name": NS})\n'
    'creds = k8s.core.v1.Secret("creds", metadata={"name": "creds", "namespace": NS},\n'
    '    string_data={"pw": sw.Config().require_secret("dbpassword")})\n'
)


def test_a_secrets_string_data_output_is_its_value_kept_secret(
    new_project: Any, cluster: LiveCluster
) -> None:
    p = new_project()
    p.sw("config", "set", "--secret", "dbpassword", PLAIN)
    p.program(
        CREDS_PROGRAM
        + 'k8s.core.v1.ConfigMap("copy", metadata={"name": "copy", "namespace": NS},\n'
        '    data={"pw": creds.string_data["pw"]})\n'
        'sw.export("pw", creds.string_data["pw"])\n'
    )
    up = p.up()
    assert up.summary["outputs"] == {"pw": "[secret]"}
    copy = get(cluster, "configmap", "copy", p.ns)
    assert copy is not None and copy["data"] == {"pw": PLAIN}
    again = p.up()
    assert set(again.summary["counts"]) == {"same"}
    assert_nowhere(p, cluster, PLAIN, up, again)


def test_a_key_dropped_from_a_secrets_string_data_leaves_the_secret(
    new_project: Any, cluster: LiveCluster
) -> None:
    """The API server keeps `stringData` as `data`, so a server-side apply of `stringData`
    owns no `data` key, and a key the program drops stays in the Secret, its pods reading
    the credential the preview said was removed (kubernetes#108008; Flux folds stringData
    into data before applying, for this). Applied as `data`, the key is the stack's, and
    dropping it deletes it."""
    p = new_project()
    p.sw("config", "set", "--secret", "dbpassword", PLAIN)
    both = 'string_data={"pw": sw.Config().require_secret("dbpassword"), "user": "app"}'
    p.program(
        CREDS_PROGRAM.replace('string_data={"pw": sw.Config().require_secret("dbpassword")}', both)
    )
    first = p.up()
    creds = get(cluster, "secret", "creds", p.ns)
    assert creds is not None and sorted(creds["data"]) == ["pw", "user"]

    p.program(CREDS_PROGRAM)
    dropped = p.up()
    creds = get(cluster, "secret", "creds", p.ns)
    assert creds is not None and creds["data"] == {"pw": base64.b64encode(PLAIN.encode()).decode()}
    assert set(p.up().summary["counts"]) == {"same"}
    assert_nowhere(p, cluster, PLAIN, first, dropped)


def test_a_secrets_string_data_still_wins_over_a_data_key_changed_by_hand(
    new_project: Any, cluster: LiveCluster
) -> None:
    """The API server writes `stringData` over `data` whoever wrote that key, so an `up`
    of a Secret whose key someone changed by hand (`kubectl patch`, or a Secret adopted
    from `kubectl create`, whose creator owns its data) sets it again, as it did before
    the keys were applied as `data`; with them so applied, it failed as a conflict."""
    p = new_project()
    p.sw("config", "set", "--secret", "dbpassword", PLAIN)
    p.program(CREDS_PROGRAM)
    p.up()
    by_hand = base64.b64encode(b"changed-by-hand").decode()
    cluster.kubectl(
        "patch", "secret", "creds", "-n", p.ns, "-p", json.dumps({"data": {"pw": by_hand}})
    )

    p.sw("config", "set", "--secret", "dbpassword", ROTATED)
    rotated = p.up()
    creds = get(cluster, "secret", "creds", p.ns)
    assert creds is not None and creds["data"] == {
        "pw": base64.b64encode(ROTATED.encode()).decode()
    }
    assert_nowhere(p, cluster, ROTATED, rotated)


def test_wrong_missing_and_rotated_passphrase(
    new_project: Any, cluster: LiveCluster, passphrase: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    p = new_project()
    p.sw("config", "set", "--secret", "dbpassword", PLAIN)
    p.program(SECRET_PROGRAM)
    assert (
        yaml.safe_load(p.root.joinpath(f"Stackwright.{STACK}.yaml").read_text())["secretsprovider"]
        == "passphrase"
    )

    monkeypatch.setenv("STACKWRIGHT_CONFIG_PASSPHRASE", "not it")
    wrong = p.sw("up", "--yes", rc=2)
    assert "is not the passphrase" in one_line(wrong)
    monkeypatch.delenv("STACKWRIGHT_CONFIG_PASSPHRASE")
    missing = p.sw("preview", rc=2)
    assert "set STACKWRIGHT_CONFIG_PASSPHRASE" in one_line(missing)
    assert get(cluster, "namespace", p.ns) is None and p.history() == []

    monkeypatch.setenv("STACKWRIGHT_CONFIG_PASSPHRASE", passphrase)
    p.up()
    monkeypatch.setenv("STACKWRIGHT_NEW_CONFIG_PASSPHRASE", "second passphrase")
    p.sw("stack", "change-secrets-provider", "passphrase")
    monkeypatch.delenv("STACKWRIGHT_NEW_CONFIG_PASSPHRASE")
    old = p.sw("preview", rc=2)
    assert "is not the passphrase" in one_line(old)
    monkeypatch.setenv("STACKWRIGHT_CONFIG_PASSPHRASE", "second passphrase")
    assert set(p.preview().summary["counts"]) == {"same"}
    assert p.sw("stack", "output", "password", "--show-secrets").out.strip() == PLAIN

    # An environment key instead: missing is a clear error, present works.
    key = base64.b64encode(os.urandom(32)).decode()
    monkeypatch.setenv("STACKWRIGHT_SECRETS_KEY", key)
    p.sw("stack", "change-secrets-provider", "env")
    monkeypatch.delenv("STACKWRIGHT_CONFIG_PASSPHRASE")
    assert set(p.up().summary["counts"]) == {"same"}
    monkeypatch.delenv("STACKWRIGHT_SECRETS_KEY")
    assert "set STACKWRIGHT_SECRETS_KEY" in one_line(p.sw("up", "--yes", rc=2))


def test_a_rewritten_stack_file_gets_its_key_back(new_project: Any, cluster: LiveCluster) -> None:
    """The state store records how the data key is wrapped (never the key), so a stack file
    rewritten without it (regenerated, or written by a script) does not orphan the state."""
    p = new_project()
    p.program(
        f"""
        k8s.core.v1.Namespace("ns", metadata={{"name": NS}})
        sw.export("token", sw.Output.secret({PLAIN!r}))
        """
    )
    p.up()
    stack_file = p.root / f"Stackwright.{STACK}.yaml"
    recorded = yaml.safe_load(stack_file.read_text())
    stack_file.write_text(yaml.safe_dump({"config": recorded["config"]}))
    assert set(p.preview().summary["counts"]) == {"same"}
    assert p.sw("stack", "output", "token", "--show-secrets").out.strip() == PLAIN
    assert yaml.safe_load(stack_file.read_text())["encryptedkey"] == recorded["encryptedkey"]


def test_state_move_reseals_secrets_under_the_target_stacks_key(
    new_project: Any, cluster: LiveCluster
) -> None:
    p = new_project()
    p.sw("config", "set", "--secret", "dbpassword", PLAIN)
    p.program(CREDS_PROGRAM)
    p.up()
    p.sw("stack", "init", "other")  # no secrets yet: no data key yet
    other_file = p.root / "Stackwright.other.yaml"
    assert not other_file.exists() or "encryptedkey" not in other_file.read_text()
    creds = p.urn("kubernetes:core/v1:Secret", "creds")
    ns = p.urn("kubernetes:core/v1:Namespace", "ns")
    moved = p.sw("state", "move", "--yes", creds, ns, "--dest", "other", "--stack", STACK)
    exported = p.sw("stack", "export", "--stack", "other")
    document = json.loads(exported.out)
    rows = {r["urn"]: r for r in document["resources"]}
    assert set(rows) == {creds.replace(":dev::", ":other::"), ns.replace(":dev::", ":other::")}
    row = rows[creds.replace(":dev::", ":other::")]
    assert set(row["inputs"]["stringData"]) == {"@secret"}
    assert "encryptedkey" in other_file.read_text(), "the target got its key to seal them"
    # The target stack reads it with its own key (a wrong one is "cannot decrypt …", exit 2):
    # both objects are unchanged there but for their marks (they still name the source
    # stack: an update re-marks each).
    p.sw("config", "set", "--secret", "dbpassword", PLAIN, "--stack", "other")
    p.sw("config", "set", "kubernetes:kubeconfig", str(cluster.kubeconfig), "--stack", "other")
    planned = p.sw("preview", "--stack", "other", "--json")
    assert planned.summary["counts"] == {"update": 2}, planned.summary
    assert_nowhere(p, cluster, PLAIN, moved, exported, planned)


def test_stacks_init_copy_ls_tags_rename_rm(new_project: Any, cluster: LiveCluster) -> None:
    p = new_project()
    p.sw("config", "set", "--secret", "dbpassword", PLAIN)
    p.sw("config", "set", "--path", "app:db.port", "5432", "--type", "int")
    p.program('k8s.core.v1.Namespace("ns", metadata={"name": NS})\n')
    p.up()
    p.sw("stack", "tag", "set", "env", "dev")
    p.sw("stack", "tag", "set", "team", "web")
    assert p.sw("stack", "tag", "get", "env").out.strip() == "dev"
    p.sw("stack", "tag", "rm", "team")
    assert json.loads(p.sw("stack", "tag", "ls", "--json").out) == {"env": "dev"}
    assert "no tag 'team'" in one_line(p.sw("stack", "tag", "get", "team", rc=2))
    assert "not of type int" in one_line(p.sw("config", "set", "n", "three", "--type", "int", rc=2))
    p.sw("config", "set", "--path", "app:db.host", "db.local")
    p.sw("config", "rm", "--path", "app:db.host")
    assert json.loads(p.sw("config", "get", "app:db", "--json").out) == {"port": 5432}

    p.sw("stack", "init", "staging", "--copy-config-from", STACK)
    assert p.sw("config", "get", "dbpassword").out.strip() == PLAIN
    assert json.loads(p.sw("config", "get", "--path", "app:db.port", "--json").out) == 5432
    listed = {row["name"]: row for row in json.loads(p.sw("stack", "ls", "--json").out)}
    assert listed[STACK]["resourceCount"] >= 1 and listed[STACK]["tags"] == {"env": "dev"}
    assert listed["staging"]["current"] and listed["staging"]["resourceCount"] == 0
    assert not listed[STACK]["updateInProgress"]  # the keys of `pulumi stack ls --json`
    assert "LAST UPDATE" in p.sw("stack", "ls").out

    p.sw("stack", "rename", "staging", "qa")
    assert (p.root / "Stackwright.qa.yaml").exists()
    assert not (p.root / "Stackwright.staging.yaml").exists()
    assert p.sw("config", "get", "dbpassword").out.strip() == PLAIN  # selected, key moved

    refused = p.sw("stack", "rm", STACK, "--yes", rc=2)
    assert "--force" in one_line(refused)
    p.sw("stack", "rm", "qa", "--yes")
    assert {r["name"] for r in json.loads(p.sw("stack", "ls", "--json").out)} == {STACK}

    # Renaming a stack with resources rewrites its URNs; the next `up` marks each object
    # with its new URN and stack (else another stack could claim it), then nothing changes.
    p.sw("stack", "select", STACK)
    p.sw("stack", "rename", STACK, "renamed")
    (resource,) = json.loads(p.sw("stack", "export").out)["resources"]
    assert resource["urn"].startswith("urn:sw:renamed::")
    assert p.sw("up", "--yes", "--json").events[-1]["counts"] == {"update": 1}
    marks = get(cluster, "namespace", p.ns)
    assert marks is not None
    assert marks["metadata"]["annotations"]["stackwright.io/stack"] == "renamed"
    assert set(p.sw("up", "--yes", "--json").events[-1]["counts"]) == {"same"}


def test_production_stack_refuses_a_dev_context(new_project: Any, cluster: LiveCluster) -> None:
    context = "stackwright-test"
    p = new_project({"kubernetes:kubeconfig": str(cluster.kubeconfig)})
    p.sw("config", "set", "--path", f'stackwright:environments["{context}"]', "dev")
    p.sw("stack", "tag", "set", "env", "production")
    p.program('k8s.core.v1.Namespace("ns", metadata={"name": NS})\n')
    refused = p.up(rc=2)
    message = one_line(refused)
    assert "env=production" in message and context in message
    assert get(cluster, "namespace", p.ns) is None and p.history() == []
    # An explicit provider on that context is refused too, before any change.
    p.sw("stack", "tag", "set", "env", "dev")
    p.sw("config", "set", "--path", 'stackwright:environments["prod-ctx"]', "production")
    kubeconfig = yaml.safe_load(cluster.kubeconfig.read_text())
    kubeconfig["contexts"].append(
        {"name": "prod-ctx", "context": kubeconfig["contexts"][0]["context"]}
    )
    p.program(
        f"""
        prod = k8s.Provider("prod", kubeconfig={yaml.safe_dump(kubeconfig)!r}, context="prod-ctx")
        k8s.core.v1.Namespace("ns", metadata={{"name": NS}})
        k8s.core.v1.ConfigMap("c", metadata={{"namespace": NS}}, opts=sw.ResourceOptions(provider=prod))
        """
    )
    assert "prod-ctx" in one_line(p.up(rc=2))
    assert get(cluster, "namespace", p.ns) is None
    # Made before the context was mapped: a `state delete`, which takes the marks off the
    # object in it, is refused as for the default provider's context (it forgot the object,
    # marks left, and said to take them off with kubectl).
    p.sw("config", "rm", "--path", 'stackwright:environments["prod-ctx"]')
    p.up()
    p.sw("config", "set", "--path", 'stackwright:environments["prod-ctx"]', "production")
    forget = ("state", "delete", p.urn("kubernetes:core/v1:ConfigMap", "c"), "--yes")
    assert "'prod-ctx' belongs to environment production" in one_line(p.sw(*forget, rc=2))
    assert p.urn("kubernetes:core/v1:ConfigMap", "c") in p.sw("stack", "--show-urns").out
    p.sw("config", "rm", "--path", 'stackwright:environments["prod-ctx"]')
    p.sw("destroy", "--yes")
    # The same stack on its own environment's context works.
    p.program('k8s.core.v1.Namespace("ns", metadata={"name": NS})\n')
    assert p.up().summary["counts"] == {"create": 1}


def test_an_untagged_stack_is_refused_a_production_context(
    new_project: Any, cluster: LiveCluster
) -> None:
    """A stack with no `env` tag is no production stack: a context mapped to production
    refuses it before any change (it went unchecked), and the production tag lets it in."""
    p = new_project({"kubernetes:kubeconfig": str(cluster.kubeconfig)})
    p.sw("config", "set", "--path", 'stackwright:environments["stackwright-test"]', "production")
    p.program('k8s.core.v1.Namespace("ns", metadata={"name": NS})\n')
    for command in ("preview", "up"):
        message = one_line(p.sw(command, *(["--yes"] if command == "up" else []), rc=2))
        assert "has no env tag" in message and "stackwright-test" in message, message
        assert "stack tag set env production" in message
    assert get(cluster, "namespace", p.ns) is None and p.history() == []
    p.sw("stack", "tag", "set", "env", "production")
    assert p.up().summary["counts"] == {"create": 1}


def test_an_import_is_refused_a_context_of_another_environment(
    new_project: Any, cluster: LiveCluster
) -> None:
    """Adopting marks the objects as the stack's: an import into a production context by a
    stack not tagged production is refused as an up is, before the object is touched; so
    is a `state delete`, which takes the marks off."""
    p = new_project({"kubernetes:kubeconfig": str(cluster.kubeconfig)})
    p.program('k8s.core.v1.Namespace("ns", metadata={"name": NS})\n')
    p.up()
    create(cluster, "ConfigMap", "legacy", p.ns, data={"k": "v"})
    p.sw("config", "set", "--path", 'stackwright:environments["stackwright-test"]', "production")
    adopt = ("import", "kubernetes:core/v1:ConfigMap", "legacy", f"{p.ns}/legacy", "--yes")
    for tag in (None, "dev"):
        if tag:
            p.sw("stack", "tag", "set", "env", tag)
        message = one_line(p.sw(*adopt, rc=2))
        assert "'stackwright-test' belongs to environment production" in message, message
        legacy = get(cluster, "configmap", "legacy", p.ns)
        assert legacy is not None and not legacy["metadata"].get("labels"), legacy
        forget = ("state", "delete", p.urn("kubernetes:core/v1:Namespace", "ns"), "--yes")
        message = one_line(p.sw(*forget, rc=2))
        assert "'stackwright-test' belongs to environment production" in message, message
        marks = get(cluster, "namespace", p.ns)["metadata"]["annotations"]
        assert marks["stackwright.io/urn"] == forget[2]  # still the stack's
        assert [e["kind"] for e in p.history()] == ["up"]
    p.sw("stack", "tag", "set", "env", "production")
    p.sw(*adopt)
    assert p.urn("kubernetes:core/v1:ConfigMap", "legacy") in p.sw("stack", "--show-urns").out


def test_stack_reference_between_two_projects(
    tmp_path: Path, cluster: LiveCluster, passphrase: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The platform team's stack exports a namespace and a kubeconfig (secret).
    platform = Project(tmp_path / "platform", "platform", "lc-platform-ref", {})
    platform.sw("config", "set", "--secret", "kubeconfig", cluster.kubeconfig.read_text())
    platform.program(
        """
        cfg = sw.Config()
        k8s.core.v1.Namespace("ns", metadata={"name": NS})
        sw.export("namespace", NS)
        sw.export("kubeconfig", cfg.require_secret("kubeconfig"))
        """
    )
    platform.sw("config", "set", "kubernetes:kubeconfig", str(cluster.kubeconfig))
    platform.up()

    app = Project(
        tmp_path / "app", "app", "unused", {"kubernetes:kubeconfig": str(cluster.kubeconfig)}
    )
    app.program(
        """
        platform = sw.StackReference("acme/platform/dev")
        cluster = k8s.Provider("platform", kubeconfig=platform.require_output("kubeconfig"),
                               namespace=platform.require_output("namespace"))
        cm = k8s.core.v1.ConfigMap("settings", data={"mode": "app"},
                                   opts=sw.ResourceOptions(provider=cluster))
        sw.export("where", platform.get_output("namespace"))
        sw.export("kubeconfig_again", platform.get_output("kubeconfig"))
        """
    )
    up = app.up()
    assert up.summary["outputs"] == {"where": "lc-platform-ref", "kubeconfig_again": "[secret]"}
    # The ConfigMap went to the namespace the reference named, through its kubeconfig.
    assert any(name.startswith("settings-") for name in _names(cluster, "lc-platform-ref"))
    token = cluster.token
    assert token not in up.out and token not in up.err
    assert token not in json.dumps(app.state())

    app.program('sw.StackReference("platform/nope")\n')
    assert "no stack nope of project platform" in one_line(app.preview(rc=2))
    app.program('sw.StackReference("platform/dev").require_output("missing")\n')
    message = one_line(app.preview(rc=2))
    assert "'missing'" in message and "kubeconfig" in message
    # A stack of its own key reads the platform's only with its passphrase: the line says
    # it is the reference's key (both stacks are `dev`), not the viewer's own.
    monkeypatch.delenv("STACKWRIGHT_CONFIG_PASSPHRASE")
    viewer = Project(
        tmp_path / "viewer", "viewer", "unused", {"kubernetes:kubeconfig": str(cluster.kubeconfig)}
    )
    viewer.program('sw.StackReference("platform/dev")\n')
    assert one_line(viewer.preview(rc=2)) == (
        "error: stack reference 'platform/dev': stack dev keeps its secrets under a passphrase: "
        "set STACKWRIGHT_CONFIG_PASSPHRASE to it"
    )


def _names(cluster: LiveCluster, ns: str) -> list[str]:
    out = cluster.kubectl("get", "configmaps", "-n", ns, "-o", "name").stdout.split()
    return [line.rpartition("/")[2] for line in out]


def test_a_second_local_cluster_from_a_kubeconfig_string_and_a_context(
    new_project: Any, cluster: LiveCluster
) -> None:
    second, _ = lifecycle.start("second-ctx")
    try:
        p = new_project()
        p.program(
            f"""
            inline = k8s.Provider("inline", kubeconfig={second.kubeconfig.read_text()!r})
            by_context = k8s.Provider("by-context", kubeconfig={str(second.kubeconfig)!r},
                                      context="stackwright-second-ctx")
            k8s.core.v1.Namespace("ns", metadata={{"name": NS}})
            ns2 = k8s.core.v1.Namespace("ns2", metadata={{"name": NS}},
                                        opts=sw.ResourceOptions(provider=inline))
            # A kubeconfig that another resource produces: known only once it is applied.
            holder = k8s.core.v1.ConfigMap("holder", metadata={{"namespace": NS}},
                                           data={{"kubeconfig": {second.kubeconfig.read_text()!r}}})
            produced = k8s.Provider("produced", kubeconfig=holder.data["kubeconfig"])
            k8s.core.v1.ConfigMap("produced-here", metadata={{"name": "produced-here", "namespace": NS}},
                                  data={{"by": "produced"}},
                                  opts=sw.ResourceOptions(provider=produced, depends_on=[ns2]))
            k8s.core.v1.ConfigMap("there", metadata={{"name": "there", "namespace": NS}},
                                  data={{"at": "second"}},
                                  opts=sw.ResourceOptions(provider=by_context, depends_on=[ns2]))
            """
        )
        planned = p.preview()  # the produced provider's kubeconfig is not known yet
        assert planned.summary["ok"] and "produced-here" in planned.changed()
        up = p.up()
        assert up.summary["ok"]
        env = {**os.environ, "KUBECONFIG": str(second.kubeconfig)}
        for name, data in (("there", {"at": "second"}), ("produced-here", {"by": "produced"})):
            done = subprocess.run(
                ["kubectl", "get", "configmap", name, "-n", p.ns, "-o", "json"],
                capture_output=True,
                text=True,
                env=env,
                timeout=60,
            )
            assert done.returncode == 0 and json.loads(done.stdout)["data"] == data
        assert get(cluster, "configmap", "there", p.ns) is None
        p.sw("destroy", "--yes")
    finally:
        lifecycle.stop("second-ctx")


def test_json_events_stay_json_when_a_secret_spells_a_json_word(
    new_project: Any, cluster: LiveCluster
) -> None:
    """A secret `true` (a feature flag) is masked in the events' strings, not in their
    syntax: `"ok":true` stays a boolean, each line stays one JSON object."""
    p = new_project()
    p.sw("config", "set", "--secret", "flag", "true")
    p.program(
        """
        cfg = sw.Config()
        k8s.core.v1.Namespace("ns", metadata={"name": NS})
        k8s.core.v1.ConfigMap("flags", metadata={"name": "flags", "namespace": NS},
                              data={"flag": cfg.require_secret("flag"), "note": "true or not"})
        """
    )
    for result in (p.preview(), p.up()):
        assert result.summary["ok"] is True and result.summary["dryRun"] is (
            result.args[0] == "preview"
        )
        assert "[secret] or not" in result.out  # still masked inside strings


PLAIN_READ_PROGRAM = """
cfg = sw.Config()
db = cfg.require_object("db")  # plain getters of secret configuration
port = cfg.get_int("port")
k8s.core.v1.Namespace("ns", metadata={"name": NS})
k8s.core.v1.ConfigMap("c", metadata={"name": "c", "namespace": NS},
    data={"pw": db["password"], "host": db["host"], "url": f"pg://app:{db['password']}@h"})
sw.export("db", db)
sw.export("port", port)
"""


def test_secret_configuration_read_as_plain_values_is_sealed_where_recorded(
    new_project: Any, cluster: LiveCluster, passphrase: str
) -> None:
    p = new_project()
    p.sw("config", "set", "--secret", "--path", "db.password", PLAIN)
    p.sw("config", "set", "--path", "db.host", "db.example")
    p.sw("config", "set", "--secret", "port", "15432")
    p.program(PLAIN_READ_PROGRAM)

    up = p.up()
    assert "reads it as a plain value" in up.out + up.err  # the warning stays
    assert up.summary["outputs"] == {
        "db": {"host": "db.example", "password": "[secret]"},
        "port": "[secret]",
    }
    configmap = get(cluster, "configmap", "c", p.ns)
    assert configmap is not None and configmap["data"]["pw"] == PLAIN  # as the program asked
    # The state holds ciphertext where the value went, as for a value marked secret; the
    # configuration's plain parts stay plain.
    state = p.resources()["c"]
    for fields in (state["inputs"]["data"], state["outputs"]["data"]):
        assert set(fields["pw"]) == set(fields["url"]) == {"@secret"}
        assert fields["host"] == "db.example"
    assert set(p.state()["outputs"]["port"]) == {"@secret"}
    shown = json.loads(p.sw("stack", "output", "--show-secrets", "--json").out)
    assert shown == {"db": {"host": "db.example", "password": PLAIN}, "port": 15432}
    assert_nowhere(p, cluster, PLAIN, up, p.sw("stack", "output"))

    p.sw("config", "set", "--secret", "--path", "db.password", ROTATED)
    diff = p.sw("preview", "--diff")
    assert "[secret]" in diff.out
    updated = p.up()
    again = p.up()
    assert set(again.summary["counts"]) == {"same"}
    for value in (PLAIN, ROTATED):
        assert_nowhere(p, cluster, value, diff, updated, again)
