"""A security review's findings, end to end through the CLI against a real cluster: where a
secret cannot be kept secret (an object's name, its labels), a secret used as a map key, a
short secret an API server quotes back, and who may read the files that hold secrets.
"""

from __future__ import annotations

import json
import os
import pty
import stat
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import pytest
from test_cli_lifecycle import CLI, LiveCluster, Project, Result, get, new_project, one_line
from test_secrets_lifecycle import assert_nowhere, passphrase

pytestmark = pytest.mark.integration
__all__ = ["new_project", "passphrase"]  # fixtures, used by name

PLAIN = "keyquokka-7731"


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


#: The start of each program here: the secret `pw`, the namespace `ns`.
HEAD = 'pw = sw.Config().require_secret("pw")\nns = k8s.core.v1.Namespace("ns", metadata={"name": NS})\n'


def with_secret(new_project: Any, value: str, body: str) -> Project:
    """A project whose secret `pw` is `value`, its namespace `ns`, and `body` after them."""
    p: Project = new_project()
    p.sw("config", "set", "--secret", "pw", value)
    p.program(HEAD + textwrap.dedent(body))
    return p


def up_at_a_terminal(p: Project) -> Result:
    """`stackwright up` (which asks before applying) as its own process whose standard input
    is a terminal that would answer yes."""
    ours, theirs = pty.openpty()
    try:
        os.write(ours, b"y\n")
        done = subprocess.run(
            [*CLI, "up"],
            cwd=p.root,
            stdin=theirs,
            capture_output=True,
            text=True,
            timeout=90,
            env={**os.environ, "NO_COLOR": "1"},
        )
    finally:
        os.close(ours)
        os.close(theirs)
    return Result(("up",), done.returncode, done.stdout, done.stderr)


def refused_before_any_change(p: Project, cluster: LiveCluster, name: str, says: str) -> str:
    """`preview` and `up` (with and without `--yes`) refuse the program with one line naming
    the line that declares resource `name` and `says`, exit 2, and change nothing."""
    source = (p.root / "__main__.py").read_text().splitlines()
    line = 1 + next(i for i, text in enumerate(source) if f'("{name}"' in text)
    lines = []
    for args in (("preview",), ("up",), ("up", "--yes"), ("up", "--yes", "--json")):
        done = up_at_a_terminal(p) if args == ("up",) else p.sw(*args, rc=2)
        assert done.rc == 2, done
        lines.append(one_line(done))
        assert f"__main__.py:{line}: " in lines[-1] and says in lines[-1], lines[-1]
        assert lines[-1].endswith("; nothing was changed"), lines[-1]
    assert get(cluster, "namespace", p.ns) is None  # declared (and applied) first
    assert p.sw("stack", "--show-urns").out.count("urn:sw:") == 0
    return "\n".join(lines)


def test_a_secret_in_a_name_or_a_label_is_refused_before_any_change(
    new_project: Any, cluster: LiveCluster, passphrase: str
) -> None:
    body = """
        k8s.core.v1.ConfigMap("annotated", opts=sw.ResourceOptions(depends_on=[ns]),
                              metadata={"name": "annotated", "namespace": NS,
                                        "annotations": {"pw": pw}})
        k8s.core.v1.ConfigMap("named", metadata={"name": pw, "namespace": NS},
                              data={"a": "b"}, opts=sw.ResourceOptions(depends_on=[ns]))
        k8s.core.v1.ConfigMap("labelled", opts=sw.ResourceOptions(depends_on=[ns]),
                              metadata={"name": "labelled", "namespace": NS,
                                        "labels": {"app": "web", "pw": pw}})
        """
    p = with_secret(new_project, PLAIN, body)
    said = [
        refused_before_any_change(
            p,
            cluster,
            "named",
            "kubernetes:core/v1:ConfigMap named: metadata.name holds a secret, but the name is "
            "the object's id",
        )
    ]
    p.program(HEAD + textwrap.dedent(body.replace('"name": pw', '"name": "named"')))
    said.append(
        refused_before_any_change(
            p, cluster, "labelled", "ConfigMap labelled: metadata.labels.pw holds a secret"
        )
    )
    # An annotation may hold one (the state keeps it encrypted).
    p.program(HEAD + textwrap.dedent(body).split('k8s.core.v1.ConfigMap("named"')[0])
    applied = p.up()
    assert get(cluster, "configmap", "annotated", p.ns) is not None
    assert_nowhere(p, cluster, PLAIN, applied)
    assert PLAIN not in "\n".join(said)


def test_a_secret_in_a_pod_template_label_or_a_selector_is_refused_before_any_change(
    new_project: Any, cluster: LiveCluster, passphrase: str
) -> None:
    """Pod-template labels are copied to the pods (`kubectl get pods --show-labels`), and a
    selector shows the labels it matches: a secret in either would be in plain text."""
    labels, selector = "labels are shown by `kubectl get", "a selector is shown by `kubectl"
    p = with_secret(new_project, PLAIN, "")
    head = """
        after_ns = sw.ResourceOptions(depends_on=[ns])
        container = {"name": "web", "image": "nginx:1.29"}
        k8s.apps.v1.Deployment("env", opts=after_ns, metadata={"name": "env", "namespace": NS},
            spec={"selector": {"matchLabels": {"app": "env"}},
                  "template": {"metadata": {"labels": {"app": "env"}},
                               "spec": {"containers": [{**container, "env": [
                                   {"name": "PW", "value": pw}]}]}}})
        """
    for name, body, says in (
        (
            "tpl",
            """
            k8s.apps.v1.Deployment("tpl", opts=after_ns, metadata={"name": "tpl", "namespace": NS},
                spec={"selector": {"matchLabels": {"app": "tpl"}},
                      "template": {"metadata": {"labels": {"app": "tpl", "pw": pw}},
                                   "spec": {"containers": [container]}}})
            """,
            f"Deployment tpl: spec.template.metadata.labels.pw holds a secret, but {labels}",
        ),
        (
            "sel",
            """
            k8s.apps.v1.Deployment("sel", opts=after_ns, metadata={"name": "sel", "namespace": NS},
                spec={"selector": {"matchLabels": {"app": sw.Output.secret("sel")}},
                      "template": {"metadata": {"labels": {"app": "sel"}},
                                   "spec": {"containers": [container]}}})
            """,
            f"Deployment sel: spec.selector.matchLabels.app holds a secret, but {selector}",
        ),
        (
            "cron",
            """
            k8s.batch.v1.CronJob("cron", opts=after_ns, metadata={"name": "cron", "namespace": NS},
                spec={"schedule": "0 * * * *", "jobTemplate": {"spec": {"template": {
                    "metadata": {"labels": {"pw": pw}},
                    "spec": {"restartPolicy": "Never", "containers": [container]}}}}})
            """,
            f"CronJob cron: spec.jobTemplate.spec.template.metadata.labels.pw holds a secret, "
            f"but {labels}",
        ),
        (
            "svc",
            """
            k8s.core.v1.Service("svc", opts=after_ns, metadata={"name": "svc", "namespace": NS},
                spec={"selector": {"app": pw}, "ports": [{"port": 80}]})
            """,
            f"Service svc: spec.selector.app holds a secret, but {selector}",
        ),
    ):
        p.program(HEAD + textwrap.dedent(head) + textwrap.dedent(body))
        assert PLAIN not in refused_before_any_change(p, cluster, name, says)
    # An environment variable may hold one.
    p.program(HEAD + textwrap.dedent(head))
    applied = p.up()
    assert get(cluster, "deployment", "env", p.ns) is not None
    pods = cluster.kubectl("get", "pods", "-n", p.ns, "--show-labels").stdout
    assert PLAIN not in pods
    assert_nowhere(p, cluster, PLAIN, applied)


def test_a_secret_only_an_applied_object_makes_known_is_refused_at_its_step(
    new_project: Any, cluster: LiveCluster, passphrase: str
) -> None:
    """An Output of another resource whose field is marked secret is a secret only once
    that resource is applied: the step that would put it in a label refuses it."""
    p = with_secret(
        new_project,
        PLAIN,
        """
        src = k8s.core.v1.ConfigMap("src", metadata={"name": "src", "namespace": NS},
                                    data={"k": "v"}, opts=sw.ResourceOptions(
                                        depends_on=[ns], additional_secret_outputs=["data"]))
        k8s.core.v1.ConfigMap("late", metadata={"name": "late", "namespace": NS,
                                                "labels": {"k": src.data["k"]}})
        """,
    )
    applied = p.up(rc=1)
    (failure,) = applied.summary["failures"]
    assert "ConfigMap late: metadata.labels.k holds a secret, but labels are shown" in failure
    assert get(cluster, "configmap", "src", p.ns) is not None
    assert get(cluster, "configmap", "late", p.ns) is None


def test_a_secret_used_as_a_map_key_stays_out_of_the_state(
    new_project: Any, cluster: LiveCluster, passphrase: str
) -> None:
    # The live object's managedFields name every key (`f:<key>`): they held it in plain.
    p = with_secret(
        new_project,
        PLAIN,
        """
        k8s.core.v1.ConfigMap("keyed", metadata={"name": "keyed", "namespace": NS},
                              data=pw.apply(lambda v: {v: "allowed"}),
                              opts=sw.ResourceOptions(depends_on=[ns]))
        """,
    )
    up = p.up()
    live = get(cluster, "configmap", "keyed", p.ns)
    assert live is not None and live["data"] == {PLAIN: "allowed"}
    exported = p.sw("stack", "export")
    again = p.up()
    assert set(again.summary["counts"]) == {"same"}
    assert_nowhere(p, cluster, PLAIN, up, exported, again)


def test_a_short_secret_the_api_server_quotes_back_is_masked(
    new_project: Any, cluster: LiveCluster, passphrase: str
) -> None:
    p = with_secret(
        new_project,
        "Ne",
        """
        k8s.core.v1.Pod("bad", metadata={"name": "bad", "namespace": NS},
                        spec={"restartPolicy": pw,
                              "containers": [{"name": "c", "image": "nginx:1.29"}]},
                        opts=sw.ResourceOptions(depends_on=[ns]))
        """,
    )
    # The first creates the namespace too (exit 1); the second changes nothing else, its
    # failure the server's refusal alone: bad input, exit 2.
    for failed in (p.sw("up", "--yes", rc=1), p.sw("up", "--yes", "--json", rc=2)):
        text = (failed.out + failed.err).replace('\\"', '"')  # a --json line escapes quotes
        assert 'spec.restartPolicy: Unsupported value: "[secret]"' in text, text
        assert '"Ne"' not in text
        # Only where it stands quoted whole: the words around it are left as they are.
        assert '"Never"' in text


def test_the_files_holding_secrets_are_the_owners_alone(
    new_project: Any, cluster: LiveCluster, passphrase: str
) -> None:
    # The local cluster's store holds every Secret of the cluster in plain (base64).
    folder = cluster.info.folder
    assert mode(folder) == 0o700
    for name in ("store.db", "token", "server.key", "kubeconfig"):
        assert mode(folder / name) == 0o600, name
    p = with_secret(new_project, PLAIN, "")
    p.up()
    for path in cluster.home.glob("state.db*"):
        assert mode(path) == 0o600, path
    # A cluster folder an earlier version made readable by all is closed at the next start.
    folder.chmod(0o755)
    from stackwright.localcluster import lifecycle

    lifecycle.stop(cluster.info.name)
    lifecycle.start(cluster.info.name)
    assert mode(folder) == 0o700
    assert json.loads(p.sw("stack", "output", "--json").out) == {}
