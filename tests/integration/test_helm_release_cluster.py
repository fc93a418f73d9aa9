"""`k8s.helm.Release` through the CLI on the local cluster: Helm owns the release (its
history is Helm's own `sh.helm.release.v1.<name>.v<revision>` Secrets); `up` installs it,
a changed value upgrades it, `destroy` uninstalls it."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from test_helm_chart_cluster import (  # the CLI-running helpers, a private chart repository
    LOGIN,
    WEBAPP,
    private_repository,
    project,
    summary,
    sw,
)

from stackwright.kubernetes.provider import RELEASE_TYPE

PROGRAM = """\
import json
import os

import stackwright.kubernetes as k8s
from stackwright import export

rel = k8s.helm.Release(
    "rel",
    chart=os.environ["CHART"],
    values=json.loads(os.environ["VALUES"]),
    namespace="helmrel",
    create_namespace=True,
    timeout=int(os.environ.get("TIMEOUT", "60")),
    rollback_on_failure=bool(os.environ.get("ROLLBACK")),
)
export("status", rel.status["status"])
export("revision", rel.status["revision"])
export("chart", rel.status["chart"])
"""


def release_secrets(cluster: Any) -> set[str]:
    found = json.loads(
        cluster.kubectl(
            "get", "secrets", "-n", "helmrel", "-l", "owner=helm,name=rel", "-o", "json"
        ).stdout
    )
    return {item["metadata"]["name"] for item in found["items"]}


def with_timeouts(namespace: str, timeouts: str) -> str:
    """PROGRAM with its release in `namespace` and `CustomTimeouts(<timeouts>)` as its options."""
    return (
        PROGRAM.replace('namespace="helmrel"', f'namespace="{namespace}"')
        .replace(
            '    rollback_on_failure=bool(os.environ.get("ROLLBACK")),\n',
            '    rollback_on_failure=bool(os.environ.get("ROLLBACK")),\n'
            f"    opts=ResourceOptions(custom_timeouts=CustomTimeouts({timeouts})),\n",
        )
        .replace(
            "from stackwright import export",
            "from stackwright import CustomTimeouts, ResourceOptions, export",
        )
    )


def test_release_install_upgrade_uninstall(tmp_path: Path, cluster: Any) -> None:
    root = project(tmp_path, "helmrelease", str(cluster.kubeconfig), PROGRAM)
    env = {"CHART": str(WEBAPP), "VALUES": json.dumps({"image": {"tag": "1.29"}})}
    try:
        done = summary(sw(root, env, "up", "--yes", "--json").stdout)
        assert done["ok"] and done["counts"] == {"create": 1}, done
        assert done["outputs"] == {"status": "deployed", "revision": 1, "chart": "webapp"}
        assert release_secrets(cluster) == {"sh.helm.release.v1.rel.v1"}
        deployment = json.loads(
            cluster.kubectl("get", "deploy", "rel-webapp", "-n", "helmrel", "-o", "json").stdout
        )
        assert deployment["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.29"

        again = summary(sw(root, env, "preview", "--json").stdout)
        assert again["counts"] == {"same": 1}, again

        env["VALUES"] = json.dumps({"image": {"tag": "1.30"}})
        upgraded = summary(sw(root, env, "up", "--yes", "--json").stdout)
        assert upgraded["ok"] and upgraded["counts"] == {"update": 1}, upgraded
        assert upgraded["outputs"] == {"status": "deployed", "revision": 2, "chart": "webapp"}
        assert release_secrets(cluster) == {
            "sh.helm.release.v1.rel.v1",
            "sh.helm.release.v1.rel.v2",
        }
        image = json.loads(
            cluster.kubectl("get", "deploy", "rel-webapp", "-n", "helmrel", "-o", "json").stdout
        )["spec"]["template"]["spec"]["containers"][0]["image"]
        assert image == "nginx:1.30"

        # The preview runs Helm's dry run: a template error shows before `up`, as Helm's own.
        env["VALUES"] = json.dumps({"image": {"tag": ""}})
        refused = sw(root, env, "preview", "--json", check=False)
        assert refused.returncode == 1, refused.stdout + refused.stderr
        assert "image.tag is required" in refused.stdout, refused.stdout
        assert release_secrets(cluster) == {
            "sh.helm.release.v1.rel.v1",
            "sh.helm.release.v1.rel.v2",
        }, "a dry run records no revision"

        # An upgrade that never becomes ready is rolled back by Helm (rollback_on_failure).
        env.update(
            VALUES=json.dumps({"image": {"repository": "doesnotexist", "tag": "1"}}),
            TIMEOUT="3",
            ROLLBACK="1",
        )
        failed = sw(root, env, "up", "--yes", "--json", check=False)
        assert failed.returncode == 1, failed.stdout + failed.stderr
        assert not summary(failed.stdout)["ok"]
        history = {
            s["metadata"]["labels"]["version"]: s["metadata"]["labels"]["status"]
            for s in json.loads(
                cluster.kubectl(
                    "get", "secrets", "-n", "helmrel", "-l", "owner=helm,name=rel", "-o", "json"
                ).stdout
            )["items"]
        }
        assert history["3"] == "failed" and history["4"] == "deployed", history
        image = json.loads(
            cluster.kubectl("get", "deploy", "rel-webapp", "-n", "helmrel", "-o", "json").stdout
        )["spec"]["template"]["spec"]["containers"][0]["image"]
        assert image == "nginx:1.30", "rolled back to the last deployed revision"

        gone = summary(sw(root, env, "destroy", "--yes", "--json").stdout)
        assert gone["ok"], gone
        assert release_secrets(cluster) == set()
        assert (
            cluster.kubectl("get", "deploy", "rel-webapp", "-n", "helmrel", check=False).returncode
            != 0
        )
    finally:
        # Helm keeps a chart's CRDs on uninstall; other tests create this one themselves.
        cluster.kubectl("delete", "crd", "widgets.example.com", "--ignore-not-found", check=False)
        cluster.kubectl("delete", "namespace", "helmrel", "--ignore-not-found", check=False)


def test_release_uninstall_waits_as_long_as_custom_timeouts_delete(
    tmp_path: Path, cluster: Any
) -> None:
    """Uninstalling waits (Helm's watcher) for what it deletes to go: as long as the
    resource's `custom_timeouts.delete` says, as for any other delete, not the release's
    install `timeout`."""
    program = with_timeouts("helmrel-held", 'delete="2s"')
    root = project(tmp_path, "helmheld", str(cluster.kubeconfig), program)
    env = {"CHART": str(WEBAPP), "VALUES": json.dumps({"image": {"tag": "1.29"}}), "TIMEOUT": "120"}
    held = ("deploy", "rel-webapp", "-n", "helmrel-held")
    try:
        assert summary(sw(root, env, "up", "--yes", "--json").stdout)["ok"]
        cluster.kubectl(
            "patch",
            *held,
            "--type=merge",
            "-p",
            '{"metadata":{"finalizers":["example.com/never"]}}',
        )
        started = time.monotonic()
        failed = sw(root, env, "destroy", "--yes", "--json", check=False)
        assert time.monotonic() - started < 30, failed.stdout
        assert failed.returncode == 1, failed.stdout + failed.stderr
        assert "rel-webapp still exists. status: Terminating" in failed.stdout, failed.stdout
        # ... and which setting set that limit, and how to change it, as other deletes say.
        assert (
            "rel-webapp still exists. status: Terminating, message: Resource scheduled for "
            "deletion — gave up after 2s (the limit is the resource's custom_timeouts.delete; "
            "raise it to wait longer)"
        ) in summary(failed.stdout)["failures"][0], failed.stdout
    finally:
        cluster.kubectl(
            "patch", *held, "--type=merge", "-p", '{"metadata":{"finalizers":null}}', check=False
        )
        cluster.kubectl("delete", "crd", "widgets.example.com", "--ignore-not-found", check=False)
        cluster.kubectl("delete", "namespace", "helmrel-held", "--ignore-not-found", check=False)


def test_an_upgrade_waits_as_long_as_custom_timeouts_update(tmp_path: Path, cluster: Any) -> None:
    """The resource's `custom_timeouts.update` bounds Helm's wait for an upgrade, over the
    release's own `timeout` (two minutes here): an upgrade that never gets ready fails soon."""
    program = with_timeouts("helmrel-slow", 'update="3s"')
    root = project(tmp_path, "helmslow", str(cluster.kubeconfig), program)
    env = {"CHART": str(WEBAPP), "VALUES": json.dumps({"image": {"tag": "1.29"}}), "TIMEOUT": "120"}
    try:
        assert summary(sw(root, env, "up", "--yes", "--json").stdout)["ok"]
        env["VALUES"] = json.dumps({"image": {"repository": "doesnotexist", "tag": "1"}})
        started = time.monotonic()
        failed = sw(root, env, "up", "--yes", "--json", check=False)
        # Not the two minutes, nor the Deployment's progress deadline (30s on this cluster).
        assert time.monotonic() - started < 20, failed.stdout
        assert failed.returncode == 1, failed.stdout + failed.stderr
        done = summary(failed.stdout)
        assert not done["ok"]
        # One line, as an object's readiness timeout: what was not ready, which setting set
        # the limit and how to wait longer (it said only Helm's "not ready", as if it failed).
        (failure,) = done["failures"]
        assert "\n" not in failure, failure
        assert (
            "Helm release helmrel-slow/rel: resource Deployment/helmrel-slow/rel-webapp not "
            "ready. status: InProgress"
        ) in failure, failure
        assert failure.endswith(
            " — gave up after 3s (the limit is the resource's custom_timeouts.update; raise it "
            "to wait longer)"
        ), failure
    finally:
        cluster.kubectl("delete", "crd", "widgets.example.com", "--ignore-not-found", check=False)
        cluster.kubectl("delete", "namespace", "helmrel-slow", "--ignore-not-found", check=False)


PRIVATE = """\
import json
import os

import stackwright.kubernetes as k8s
from stackwright import export

rel = k8s.helm.Release(
    "rel",
    chart="release-namespace",
    repository_opts=json.loads(os.environ["REPOSITORY_OPTS"]),
    namespace="helmpriv",
    create_namespace=True,
    timeout=30,
)
export("status", rel.status["status"])
"""


def test_a_release_from_a_repository_that_requires_credentials_and_skips_tls_checks(
    tmp_path: Path, cluster: Any
) -> None:
    """The repository's `username`, `password` and `insecure_skip_tls_verify` reach Helm for
    the install (they went unused: a 401 from the repository); a refusal fails the preview
    on one line naming the repository and the fix, the password nowhere."""
    root = project(tmp_path, "helmprivrel", str(cluster.kubeconfig), PRIVATE)
    user, password = LOGIN
    try:
        with private_repository(tmp_path) as url:
            opts = {"repo": url, "username": user, "insecure_skip_tls_verify": True}
            wrong = {"REPOSITORY_OPTS": json.dumps({**opts, "password": "wrong-pw-1"})}
            refused = sw(root, wrong, "preview", "--json", check=False)
            right = {"REPOSITORY_OPTS": json.dumps({**opts, "password": password})}
            done = sw(root, right, "up", "--yes", "--json")
        assert refused.returncode == 1, refused.stdout + refused.stderr
        assert summary(refused.stdout)["failures"] == [
            f"{RELEASE_TYPE} rel: Helm release helmpriv/rel: the chart repository {url} refused "
            "the credentials given (401 Unauthorized); check repository_opts username and password"
        ], refused.stdout

        assert summary(done.stdout)["outputs"] == {"status": "deployed"}, done.stdout
        assert password not in done.stdout + done.stderr
        cm = json.loads(
            cluster.kubectl("get", "cm", "rel-where", "-n", "helmpriv", "-o", "json").stdout
        )
        assert cm["data"] == {"namespace": "helmpriv"}
        # The repository is gone: uninstalling needs no chart.
        assert summary(sw(root, right, "destroy", "--yes", "--json").stdout)["ok"]
    finally:
        cluster.kubectl("delete", "namespace", "helmpriv", "--ignore-not-found", check=False)
