"""`k8s.helm.Release` through the engine against the fake cluster: Helm owns the release,
so `up` installs or upgrades it through the provider's release methods (journaled like any
step), `destroy` uninstalls it, `refresh` and crash recovery read it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from engine_stack import PROJECT, STACK, Declare, Stack
from engine_stack import stack as stack  # the fixture

import stackwright.kubernetes as k8s
from stackwright.engine.events import Diagnostic, event_json, safe_event
from stackwright.engine.records import is_kubernetes, is_release
from stackwright.engine.testing import Call
from stackwright.errors import UsageError
from stackwright.kubernetes import helm
from stackwright.kubernetes.helm import RELEASE_TYPE
from stackwright.model import Op, ResourceState, make_urn
from stackwright.sdk.context import Program, export, running
from stackwright.sdk.resource import CustomTimeouts, ResourceOptions

WEBAPP = Path(__file__).resolve().parents[1] / "data" / "charts" / "webapp"
URN = make_urn(STACK, PROJECT, RELEASE_TYPE, "web")


def release(tag: str = "1.29", **kwargs: Any) -> Declare:
    def declare(p: Program) -> None:
        rel = k8s.helm.Release(
            "web", chart=str(WEBAPP), values={"image": {"tag": tag}}, namespace="shop", **kwargs
        )
        export("status", rel.status["status"])
        export("revision", rel.status["revision"])

    return declare


def release_calls(stack: Stack) -> list[Call]:
    return [c for c in stack.fake.calls if c.method.startswith("release_")]


def test_a_release_is_not_an_object_the_provider_applies() -> None:
    assert is_release(RELEASE_TYPE) and not is_kubernetes(RELEASE_TYPE)
    assert is_kubernetes("kubernetes:core/v1:ConfigMap")


def test_up_installs_then_upgrades_on_a_change_and_destroy_uninstalls(stack: Stack) -> None:
    preview = stack.run("up", release(), dry_run=True)
    assert preview.counts == {"create": 1}
    # Helm's dry run catches template errors in the preview; nothing is written.
    assert release_calls(stack) == [Call("release_preview", "Release", "web")]
    assert stack.fake.writes() == [] and stack.fake.releases == {}

    done = stack.run("up", release())
    assert done.ok and done.counts == {"create": 1}
    assert done.outputs == {"status": "deployed", "revision": 1}
    assert stack.fake.releases[("shop", "web")]["revision"] == 1
    assert stack.fake.releases[("shop", "web")]["spec"]["values"] == {"image": {"tag": "1.29"}}
    state = stack.backend.load(PROJECT, STACK)
    assert state.pending == []
    (recorded,) = state.resources
    assert recorded.id == "shop/web" and recorded.outputs["status"]["status"] == "deployed"

    stack.fake.calls.clear()
    again = stack.run("up", release())
    assert again.counts == {"same": 1} and release_calls(stack) == []

    upgraded = stack.run("up", release("1.30"))
    assert upgraded.ok and upgraded.counts == {"update": 1}
    assert upgraded.outputs == {"status": "deployed", "revision": 2}
    assert release_calls(stack) == [Call("release_apply", "Release", "web")]

    gone = stack.run("destroy", None)
    assert gone.ok and gone.counts == {"delete": 1}
    assert stack.fake.releases == {}
    assert stack.backend.load(PROJECT, STACK).resources == []


def test_a_release_dropped_from_the_program_is_uninstalled(stack: Stack) -> None:
    stack.run("up", release())
    summary = stack.run("up", lambda p: None)
    assert summary.ok and summary.counts == {"delete": 1}
    assert release_calls(stack)[-1] == Call("release_uninstall", "Release", "web")
    assert stack.fake.releases == {}


def test_refresh_reads_the_release_and_forgets_one_uninstalled_outside(stack: Stack) -> None:
    stack.run("up", release())
    stack.fake.releases[("shop", "web")]["status"] = "failed"
    assert stack.run("refresh", None).counts == {"in-sync": 1}
    recorded = stack.backend.load(PROJECT, STACK).resources[0]
    assert recorded.outputs["status"]["status"] == "failed"

    stack.fake.releases.clear()
    assert stack.run("refresh", None).counts == {"deleted-outside": 1}
    assert stack.backend.load(PROJECT, STACK).resources == []


def test_a_failed_install_fails_its_step_and_leaves_nothing_pending(stack: Stack) -> None:
    stack.fake.fail_apply["web"] = "chart rendering failed"
    summary = stack.run("up", release())
    assert not summary.ok and "chart rendering failed" in summary.failures[0]
    state = stack.backend.load(PROJECT, STACK)
    assert state.pending == [] and state.resources == []


def pending_install(stack: Stack) -> None:
    """Journal an install as a crashed `up` leaves it: begun, never ended."""
    state = ResourceState(
        urn=URN,
        type=RELEASE_TYPE,
        id="shop/web",
        inputs={"name": "web", "chart": str(WEBAPP), "namespace": "shop"},
    )
    with stack.backend.begin_operation(PROJECT, STACK, kind="up") as operation:
        operation.begin(1, Op.CREATE, state)


def test_a_crash_after_helm_installed_is_settled_by_reading_the_release(stack: Stack) -> None:
    pending_install(stack)
    stack.fake.releases[("shop", "web")] = {"spec": {}, "revision": 1, "status": "deployed"}

    summary = stack.run("up", release())

    assert summary.ok
    assert release_calls(stack)[0] == Call("release_read", "Release", "web")
    assert next(d.message for d in stack.events if isinstance(d, Diagnostic)) == (
        f"settled an interrupted create of {RELEASE_TYPE} web"
    )
    # The recorded inputs were those journaled before the crash: the up upgrades to the program's.
    assert summary.counts == {"update": 1}
    assert stack.fake.releases[("shop", "web")]["revision"] == 2
    assert stack.backend.load(PROJECT, STACK).pending == []


def test_a_crash_before_helm_installed_is_settled_and_installed_once(stack: Stack) -> None:
    pending_install(stack)

    summary = stack.run("up", release())

    assert summary.ok and summary.counts == {"create": 1}
    assert [c.method for c in release_calls(stack)] == ["release_read", "release_apply"]
    assert stack.fake.releases[("shop", "web")]["revision"] == 1


def test_a_release_named_apart_from_its_resource_keeps_its_name_through_a_rename(
    stack: Stack,
) -> None:
    """As Pulumi's `helm.v3.Release(resource_name, name=...)`: `name` is the Helm release's
    name (the resource's when not given), so a program ported with it runs (it failed with
    `TypeError: got multiple values for argument 'name'`), and the resource renamed by an
    alias keeps its release: no install of another, no uninstall."""

    def declare(resource: str, **opts: Any) -> Declare:
        def program(p: Program) -> None:
            k8s.helm.Release(
                resource,
                chart=str(WEBAPP),
                name="shop-web",
                namespace="shop",
                opts=ResourceOptions(**opts),
            )

        return program

    assert stack.run("up", declare("web")).ok
    assert list(stack.fake.releases) == [("shop", "shop-web")]
    renamed = stack.run("up", declare("storefront", aliases=[URN]))
    assert renamed.ok and renamed.counts == {"same": 1}
    assert list(stack.fake.releases) == [("shop", "shop-web")]
    assert [c.method for c in release_calls(stack)].count("release_uninstall") == 0


def test_a_release_named_by_its_resource_renamed_by_an_alias_is_not_said_unreplaced(
    stack: Stack,
) -> None:
    """Renamed by an alias, a release named by its resource is another Helm release: the
    preview's rename note made no claim of "no replacement" above the step replacing it."""

    def declare(resource: str, **opts: Any) -> Declare:
        def program(p: Program) -> None:
            k8s.helm.Release(
                resource, chart=str(WEBAPP), namespace="shop", opts=ResourceOptions(**opts)
            )

        return program

    assert stack.run("up", declare("web")).ok
    previewed = stack.run("preview", declare("storefront", aliases=[URN]))
    assert previewed.counts == {"replace": 1, "delete-replaced": 1}
    renamed = [d.message for d in stack.of(Diagnostic) if d.message.startswith("renamed")]
    assert renamed == [f"renamed from {URN} (alias)"]


def test_a_missing_chart_is_a_usage_error_naming_the_release(tmp_path: Path) -> None:
    with running(Program(project=PROJECT, stack=STACK)), pytest.raises(UsageError) as raised:
        k8s.helm.Release("web", chart=str(tmp_path / "nope"))
    assert "Helm release 'web'" in str(raised.value)
    assert "no chart directory" in str(raised.value)


def test_a_repositorys_password_is_a_secret_of_the_release(stack: Stack) -> None:
    # As Pulumi's RepositoryOpts.password: never in a preview, an event or the state in
    # plain text, while Helm is handed it as given.
    def declare(p: Program) -> None:
        opts = {"repo": "https://charts.example", "username": "ci", "password": "pw-Qz81x"}
        k8s.helm.Release("web", chart="webapp", repository_opts=opts, namespace="shop")

    stack.run("up", declare, dry_run=True)
    shown = json.dumps([event_json(safe_event(e)) for e in stack.events])
    assert "pw-Qz81x" not in shown and '"password": "[secret]"' in shown
    assert stack.run("up", declare).ok
    (recorded,) = stack.backend.load(PROJECT, STACK).resources
    assert "repositoryOpts.password" in recorded.secret_paths
    assert stack.fake.releases[("shop", "web")]["spec"]["repositoryOpts"]["password"] == "pw-Qz81x"


@pytest.mark.parametrize(
    "repo",
    [
        "https://ci:pw-Qz81x@charts.example",
        # A token as the user name, with no password: it was kept in plain text.
        "https://pw-Qz81x@charts.example",
    ],
)
def test_a_password_in_the_repositorys_url_is_a_secret_of_the_release(
    stack: Stack, repo: str
) -> None:
    # `repo: https://user:password@host` (as `helm repo add` takes it): the URL is kept as
    # the password is, not in plain text in a preview, an event or the state.
    def declare(p: Program) -> None:
        opts = {"repo": repo}
        k8s.helm.Release("web", chart="webapp", repository_opts=opts, namespace="shop")

    stack.run("up", declare, dry_run=True)
    assert "pw-Qz81x" not in json.dumps([event_json(safe_event(e)) for e in stack.events])
    assert stack.run("up", declare).ok
    (recorded,) = stack.backend.load(PROJECT, STACK).resources
    assert "repositoryOpts.repo" in recorded.secret_paths
    spec = stack.fake.releases[("shop", "web")]["spec"]
    assert spec["repositoryOpts"]["repo"] == repo


def test_a_repo_url_that_became_secret_changes_nothing_of_a_deployed_release(
    stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A stack deployed before a token as the URL's user name was told apart (the URL kept
    # in plain text): the next `up` records it secret, and neither upgrades nor replaces.
    def declare(p: Program) -> None:
        opts = {"repo": "https://pw-Qz81x@charts.example"}
        k8s.helm.Release("web", chart="webapp", repository_opts=opts, namespace="shop")

    with monkeypatch.context() as before:
        before.setattr(helm, "url_shown", lambda url: url)
        assert stack.run("up", declare).counts == {"create": 1}
    (recorded,) = stack.backend.load(PROJECT, STACK).resources
    assert recorded.secret_paths == ()
    assert stack.run("up", declare, dry_run=True).counts == {"same": 1}
    assert stack.run("up", declare).counts == {"same": 1}
    assert release_calls(stack)[-1] == Call("release_apply", "Release", "web")  # the first up
    (recorded,) = stack.backend.load(PROJECT, STACK).resources
    assert "repositoryOpts.repo" in recorded.secret_paths


def test_editing_a_local_chart_changes_the_release_inputs(tmp_path: Path) -> None:
    chart = tmp_path / "chart"
    chart.mkdir()
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 0.1.0\n")
    with running(Program(project=PROJECT, stack=STACK)):
        first = k8s.helm.Release("a", chart=str(chart)).props["chartDigest"]
        (chart / "values.yaml").write_text("x: 1\n")
        second = k8s.helm.Release("b", chart=str(chart)).props["chartDigest"]
    assert first != second


def test_a_release_helm_refuses_in_its_dry_run_fails_the_preview(stack: Stack) -> None:
    stack.fake.fail_preview = {
        "web": RuntimeError(
            "Helm release shop/web: execution error at (webapp/templates/deployment.yaml:19:52): "
            "image.tag is required"
        )
    }
    preview = stack.run("up", release(), dry_run=True)
    assert not preview.ok
    assert "image.tag is required" in preview.failures[0]
    assert stack.fake.releases == {}


def test_rollback_on_failure_and_max_history_reach_helm(stack: Stack) -> None:
    assert stack.run("up", release(rollback_on_failure=True, max_history=3)).ok
    spec = stack.fake.releases[("shop", "web")]["spec"]
    assert spec["rollbackOnFailure"] is True and spec["maxHistory"] == 3


def test_a_moved_releases_old_record_keeps_the_delete_timeout_the_program_says_now(
    stack: Stack,
) -> None:
    """A release moved to another namespace is installed there first, then the old one
    uninstalled, waiting as long as the program says now: its record says so too, for a
    later run when that uninstall fails."""

    def moved(namespace: str, delete: str | None) -> Declare:
        def declare(p: Program) -> None:
            k8s.helm.Release(
                "web",
                chart=str(WEBAPP),
                namespace=namespace,
                opts=ResourceOptions(custom_timeouts=CustomTimeouts(delete=delete)),
            )

        return declare

    assert stack.run("up", moved("shop", None)).ok
    stack.fake.fail_delete["web"] = "uninstall: timed out waiting for the condition"
    failed = stack.run("up", moved("store", "5s"))
    assert not failed.ok
    (old,) = [r for r in stack.backend.load(PROJECT, STACK).resources if r.delete_pending]
    assert old.id == "shop/web" and old.delete_timeout == 5


def test_an_uninstall_waits_as_long_as_custom_timeouts_delete_says(stack: Stack) -> None:
    """As any delete: the program's `custom_timeouts.delete` as it last ran (a destroy), and
    as it says now for the uninstall that replaces it (`--replace`)."""

    def timed(delete: str) -> Declare:
        timeouts = CustomTimeouts(delete=delete)
        return release(opts=ResourceOptions(custom_timeouts=timeouts))

    assert stack.run("up", timed("7s")).ok
    assert stack.run("up", timed("9s"), replace=frozenset({URN})).ok
    assert stack.run("up", timed("11s")).counts == {"same": 1}  # recorded only
    assert stack.run("destroy", None).ok
    assert stack.fake.delete_timeouts == [("web", 9.0), ("web", 11.0)]


def test_an_install_and_an_upgrade_wait_as_long_as_custom_timeouts_say(stack: Stack) -> None:
    """`custom_timeouts.create` bounds the install, `.update` the upgrade; without them the
    provider uses the release's own `timeout` (None here)."""
    timeouts = CustomTimeouts(create="40s", update="2m")
    assert stack.run("up", release(opts=ResourceOptions(custom_timeouts=timeouts))).ok
    assert stack.run("up", release("1.30", opts=ResourceOptions(custom_timeouts=timeouts))).ok
    assert stack.run("up", release("1.31")).ok
    assert stack.fake.release_timeouts == [("web", 40.0), ("web", 120.0), ("web", None)]
