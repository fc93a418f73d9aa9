"""A security review's findings, end to end through the CLI against a real cluster: where a
secret cannot be kept secret (an object's name, its labels), a secret used as a map key, a
short secret an API server quotes back, and who may read the files that hold secrets.
"""

from __future__ import annotations

import json
import stat
import textwrap
from pathlib import Path
from typing import Any

import pytest
from test_cli_lifecycle import LiveCluster, Project, get, new_project
from test_secrets_lifecycle import assert_nowhere, passphrase

pytestmark = pytest.mark.integration
__all__ = ["new_project", "passphrase"]  # fixtures, used by name

PLAIN = "keyquokka-7731"


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def with_secret(new_project: Any, value: str, body: str) -> Project:
    """A project whose secret `pw` is `value`, its namespace `ns`, and `body` after them."""
    p: Project = new_project()
    p.sw("config", "set", "--secret", "pw", value)
    p.program(
        'pw = sw.Config().require_secret("pw")\n'
        'ns = k8s.core.v1.Namespace("ns", metadata={"name": NS})\n' + textwrap.dedent(body)
    )
    return p


def test_a_secret_in_a_name_or_a_label_is_refused(
    new_project: Any, cluster: LiveCluster, passphrase: str
) -> None:
    p = with_secret(
        new_project,
        PLAIN,
        """
        k8s.core.v1.ConfigMap("named", metadata={"name": pw, "namespace": NS},
                              data={"a": "b"}, opts=sw.ResourceOptions(depends_on=[ns]))
        k8s.core.v1.ConfigMap("labelled", opts=sw.ResourceOptions(depends_on=[ns]),
                              metadata={"name": "labelled", "namespace": NS,
                                        "labels": {"app": "web", "pw": pw}})
        k8s.core.v1.ConfigMap("annotated", opts=sw.ResourceOptions(depends_on=[ns]),
                              metadata={"name": "annotated", "namespace": NS,
                                        "annotations": {"pw": pw}})
        """,
    )
    planned = p.sw("preview", "--json", rc=1)
    failures = planned.summary["failures"]
    assert any(
        "ConfigMap named: metadata.name holds a secret, but the name is the object's id" in f
        for f in failures
    ), failures
    assert any("ConfigMap labelled: metadata.labels.pw holds a secret" in f for f in failures)
    applied = p.sw("up", "--yes", "--json", rc=1)
    assert len(applied.summary["failures"]) == 2
    # Neither object was made; the annotation (which the state keeps encrypted) was.
    assert get(cluster, "configmap", "labelled", p.ns) is None
    assert PLAIN not in cluster.kubectl("get", "configmaps", "-n", p.ns, "-o", "name").stdout
    assert get(cluster, "configmap", "annotated", p.ns) is not None
    assert_nowhere(p, cluster, PLAIN, planned, applied)


def test_a_secret_in_a_pod_template_label_or_a_selector_is_refused(
    new_project: Any, cluster: LiveCluster, passphrase: str
) -> None:
    """Pod-template labels are copied to the pods (`kubectl get pods --show-labels`), and a
    selector shows the labels it matches: a secret in either would be in plain text."""
    p = with_secret(
        new_project,
        PLAIN,
        """
        after_ns = sw.ResourceOptions(depends_on=[ns])
        container = {"name": "web", "image": "nginx:1.29"}
        k8s.apps.v1.Deployment("tpl", opts=after_ns, metadata={"name": "tpl", "namespace": NS},
            spec={"selector": {"matchLabels": {"app": "tpl"}},
                  "template": {"metadata": {"labels": {"app": "tpl", "pw": pw}},
                               "spec": {"containers": [container]}}})
        k8s.apps.v1.Deployment("sel", opts=after_ns, metadata={"name": "sel", "namespace": NS},
            spec={"selector": {"matchLabels": {"app": pw}},
                  "template": {"metadata": {"labels": {"app": "sel"}},
                               "spec": {"containers": [container]}}})
        k8s.batch.v1.CronJob("cron", opts=after_ns, metadata={"name": "cron", "namespace": NS},
            spec={"schedule": "0 * * * *", "jobTemplate": {"spec": {"template": {
                "metadata": {"labels": {"pw": pw}},
                "spec": {"restartPolicy": "Never", "containers": [container]}}}}})
        k8s.core.v1.Service("svc", opts=after_ns, metadata={"name": "svc", "namespace": NS},
            spec={"selector": {"app": pw}, "ports": [{"port": 80}]})
        k8s.apps.v1.Deployment("env", opts=after_ns, metadata={"name": "env", "namespace": NS},
            spec={"selector": {"matchLabels": {"app": "env"}},
                  "template": {"metadata": {"labels": {"app": "env"}},
                               "spec": {"containers": [{**container, "env": [
                                   {"name": "PW", "value": pw}]}]}}})
        """,
    )
    planned = p.sw("preview", "--json", rc=1)
    failures = planned.summary["failures"]
    labels, selector = "labels are shown by `kubectl get", "a selector is shown by `kubectl"
    for refused in (
        f"Deployment tpl: spec.template.metadata.labels.pw holds a secret, but {labels}",
        f"Deployment sel: spec.selector.matchLabels.app holds a secret, but {selector}",
        f"CronJob cron: spec.jobTemplate.spec.template.metadata.labels.pw holds a secret, but {labels}",
        f"Service svc: spec.selector.app holds a secret, but {selector}",
    ):
        assert sum(refused in f for f in failures) == 1, (refused, failures)
    assert len(failures) == 4, failures  # an environment variable may hold one
    applied = p.sw("up", "--yes", "--json", rc=1)
    assert len(applied.summary["failures"]) == 4
    for kind, name in (("deployment", "tpl"), ("deployment", "sel"), ("cronjob", "cron")):
        assert get(cluster, kind, name, p.ns) is None
    assert get(cluster, "service", "svc", p.ns) is None
    assert get(cluster, "deployment", "env", p.ns) is not None
    pods = cluster.kubectl("get", "pods", "-n", p.ns, "--show-labels").stdout
    assert PLAIN not in pods
    assert_nowhere(p, cluster, PLAIN, planned, applied)


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
    for failed in (p.sw("up", "--yes", rc=1), p.sw("up", "--yes", "--json", rc=1)):
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
