"""What a kubectl / Pulumi user expects of the stack commands' text, without a cluster."""

from __future__ import annotations

import getpass
import io
import json
import socket
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest

from stackwright.automation import Workspace
from stackwright.cli.main import main
from stackwright.engine.events import Diagnostic, Event
from stackwright.model import Op, ResourceState, make_urn
from stackwright.policy import Level
from stackwright.state import open_backend


@pytest.fixture
def tokyo(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The process's local time zone is UTC+9 (no daylight saving), as a user's may be."""
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def test_times_are_shown_in_local_time(
    project: Path, tokyo: None, capsys: pytest.CaptureFixture[str]
) -> None:
    # History records UTC; `stack`, `stack history` and `stack ls` show it as the user's
    # clock reads (they showed UTC with no zone, nine hours off here).
    main(["destroy", "--yes"])
    capsys.readouterr()
    main(["stack", "history", "--json"])
    (entry,) = json.loads(capsys.readouterr().out)
    # The history shows when it started, `stack ls` when the stack was last written (its
    # end): a second apart when the operation straddles a second.
    moments = [datetime.fromisoformat(entry[key]) for key in ("start", "end")]
    local = {f"{moment.astimezone():%Y-%m-%d %H:%M:%S}" for moment in moments}
    utc = {f"{moment:%Y-%m-%d %H:%M:%S}" for moment in moments}
    assert not local & utc
    for command in (["stack", "history"], ["stack"], ["stack", "ls"]):
        main(command)
        out = capsys.readouterr().out
        assert any(t in out for t in local) and not any(t in out for t in utc), (command, out)


def test_a_stack_with_nothing_says_so_under_each_heading(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # As `pulumi stack` does; an empty heading read as if the listing had been cut off.
    capsys.readouterr()
    main(["stack"])
    out = capsys.readouterr().out
    assert "Resources (0):\n    none in this stack\n" in out
    assert out.endswith("Outputs (0):\n    none in this stack\n")


def test_stack_import_reads_stdin_without_file(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # `pulumi stack export | … | pulumi stack import` pipes the document; --file was required.
    main(["destroy", "--yes"])
    capsys.readouterr()
    main(["stack", "export"])
    exported = capsys.readouterr().out
    monkeypatch.setattr("sys.stdin", io.StringIO(exported))
    main(["stack", "import"])
    assert capsys.readouterr().out == "Imported the state of stack dev from stdin.\n"
    main(["stack", "history", "--json"])
    entry = json.loads(capsys.readouterr().out)[0]
    # Its kind is not `import`, which is objects adopted (`stackwright import`).
    assert (entry["kind"], entry["message"]) == ("stack import", "stack import from stdin")
    main(["stack", "export"])
    assert capsys.readouterr().out == exported


def test_the_history_of_a_stack_nothing_has_run_on_says_so(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # It printed nothing at all, as if the command had failed silently.
    main(["stack", "history"])
    assert capsys.readouterr().out == "stack dev has no history yet: no operation has run on it\n"
    main(["stack", "history", "--json"])
    assert capsys.readouterr().out.strip() == "[]"


def test_history_lines_have_no_empty_columns_or_trailing_blanks(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # An operation with no counts (`stack import`) left a double gap before its message;
    # one with no message ended in blanks.
    main(["destroy", "--yes"])
    capsys.readouterr()
    main(["stack", "export"])
    monkeypatch.setattr("sys.stdin", io.StringIO(capsys.readouterr().out))
    main(["stack", "import"])
    capsys.readouterr()
    main(["stack", "history"])
    imported, destroyed = capsys.readouterr().out.splitlines()
    assert (
        imported.endswith("s  stack import from stdin") and "    stack import from" not in imported
    )
    assert imported.startswith("#2    stack import succeeded "), imported
    assert destroyed == destroyed.rstrip()
    # The columns line up whatever the kinds' widths: each result starts where the others do.
    assert destroyed.startswith("#1    destroy      succeeded "), destroyed


def test_the_graph_of_a_stack_with_nothing_says_why_it_is_empty(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # It reads the state, as Pulumi's does: before the first up it printed an empty
    # digraph and nothing else.
    main(["destroy", "--yes"])
    capsys.readouterr()
    main(["stack", "graph", str(project / "graph.dot")])
    err = capsys.readouterr().err
    assert "records no resources yet: the graph is drawn from the state" in err
    assert err.endswith("graph.dot: 0 resources, 0 edges\n")


def test_removing_the_selected_stack_leaves_none_selected(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # As after `pulumi stack rm`: the next command says no stack is selected (it said the
    # removed stack does not exist and offered to create it again).
    main(["stack", "init", "other"])
    main(["stack", "select", "dev"])
    main(["stack", "rm", "other", "--yes"])  # another stack: dev stays selected
    capsys.readouterr()
    main(["stack"])
    assert capsys.readouterr().out.startswith("Current stack is dev")
    main(["stack", "init", "scratch"])
    main(["stack", "rm", "--yes"])  # no name: the selected one, as `pulumi stack rm`
    assert capsys.readouterr().out.endswith("Removed stack scratch.\n")
    with pytest.raises(SystemExit):
        main(["stack"])
    assert capsys.readouterr().err == (
        "error: no stack is selected: pass --stack NAME (or set STACKWRIGHT_STACK), or run "
        "`stackwright stack select NAME` or `stackwright stack init NAME`\n"
    )


def test_a_fresh_ci_runner_is_told_how_to_name_the_stack_without_a_select_step(
    project: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # The selection lives in STACKWRIGHT_HOME, which a CI job starts without: its first
    # command said only `stack init` (the stack exists) or `stack select` (a step a job
    # must repeat). It names --stack, STACKWRIGHT_STACK and the stacks the checkout has.
    main(["config", "set", "replicas", "2"])
    (project / "Stackwright.prod.yaml").write_text("config: {}\n")
    # Another runner: its own home, the team's state backend.
    monkeypatch.setenv("STACKWRIGHT_BACKEND_URL", f"file://{tmp_path / 'home' / 'state.db'}")
    monkeypatch.setenv("STACKWRIGHT_HOME", str(tmp_path / "runner-home"))
    capsys.readouterr()
    with pytest.raises(SystemExit) as exited:
        main(["config", "ls"])
    assert exited.value.code == 2
    assert capsys.readouterr().err == (
        "error: no stack is selected: pass --stack NAME (or set STACKWRIGHT_STACK), or run "
        "`stackwright stack select NAME` (this folder has the stack files of dev, prod) or "
        "`stackwright stack init NAME`\n"
    )
    monkeypatch.setenv("STACKWRIGHT_STACK", "dev")
    main(["config", "ls"])
    assert "replicas" in capsys.readouterr().out


def test_history_json_names_who_ran_each_operation_and_where(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # As the error for a locked stack names its holder: a CI audit of `stack history --json`
    # tells which runner made a change (the entries had neither).
    main(["destroy", "--yes"])
    capsys.readouterr()
    main(["stack", "history", "--json"])
    (entry,) = json.loads(capsys.readouterr().out)
    assert (entry["user"], entry["host"]) == (getpass.getuser(), socket.gethostname())


def test_a_policy_level_with_no_pack_to_run_says_so(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # `--policy-level mandatory` on a stack that names no pack checked nothing, silently:
    # a CI job believed its guardrails enforced.
    capsys.readouterr()
    main(["preview", "--policy-level", "mandatory"])
    out = capsys.readouterr().out
    assert out.startswith(
        "warning: policy level mandatory asked for, but stack dev runs no policy pack, so no "
        "policy is checked: name one in its config"
    ), out
    main(["preview"])
    assert "policy" not in capsys.readouterr().out


class Terminal(io.StringIO):
    """Standard input that is a terminal, holding what the user types."""

    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(
    "flags", [["--yes", "--expect-no-changes"], []], ids=["expect-no-changes", "confirmed"]
)
def test_an_up_that_previews_first_says_a_warning_about_the_stack_once(
    project: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    flags: list[str],
) -> None:
    # `up` shows its preview, then applies: the policy level's warning was said by both.
    monkeypatch.setattr("sys.stdin", Terminal("y\n"))
    capsys.readouterr()
    main(["up", "--policy-level", "advisory", *flags])
    out = capsys.readouterr().out
    assert out.count("warning: policy level advisory asked for") == 1, out


def test_an_automation_up_that_previews_first_says_the_policy_level_warning_once(
    project: Path,
) -> None:
    # `Workspace.up(expect_no_changes=True)` runs its preview, then the up, one listener.
    events: list[Event] = []
    with Workspace.open(project) as ws:
        ws.up(events.append, policy_level=Level.ADVISORY, expect_no_changes=True)
    warnings = [e for e in events if isinstance(e, Diagnostic) and "policy level" in e.message]
    assert len(warnings) == 1, warnings


@pytest.mark.parametrize(
    ("given", "suggested"),
    [
        ("ConfigMap", "kubernetes:core/v1:ConfigMap"),
        ("kubernetes:v1:configmap", "kubernetes:core/v1:ConfigMap"),
        ("hpa-HorizontalPodAutoscaler", "kubernetes:apps/v1:Deployment"),
        ("HorizontalPodAutoscaler", "kubernetes:autoscaling/v2:HorizontalPodAutoscaler"),
        # No stable version: the newest beta (v1beta2), not the first.
        ("ResourceClaim", "kubernetes:resource.k8s.io/v1beta2:ResourceClaim"),
    ],
)
def test_import_of_a_bare_kind_is_told_that_kinds_type_token(
    project: Path, capsys: pytest.CaptureFixture[str], given: str, suggested: str
) -> None:
    # `stackwright import ConfigMap …` was told to write kubernetes:apps/v1:Deployment.
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_:
        main(["import", given, "cm", "default/cm", "--yes"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.endswith(f"is not a Kubernetes type token: write it as {suggested}\n"), err


@pytest.mark.parametrize(
    ("given", "suggested"),
    [
        ("kubernetes:rbac/v1:ClusterRole", "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole"),
        ("kubernetes:networking/v1:Ingress", "kubernetes:networking.k8s.io/v1:Ingress"),
        ("kubernetes:storage/v1:StorageClass", "kubernetes:storage.k8s.io/v1:StorageClass"),
    ],
)
def test_import_of_a_kind_under_its_python_module_s_name_is_told_its_group(
    project: Path, capsys: pytest.CaptureFixture[str], given: str, suggested: str
) -> None:
    """`k8s.rbac.v1.ClusterRole` is written `rbac`, its type token the API group: `import
    kubernetes:rbac/v1:ClusterRole` asked the cluster, which was then said to lack a CRD."""
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_:
        main(["import", given, "r", "reader", "--yes"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.endswith(
        f"type '{given}' names no API group of the kind: write it as {suggested}\n"
    ), err


def test_import_of_a_patch_type_is_told_to_import_the_object(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_:
        main(["import", "kubernetes:core/v1:ConfigMapPatch", "cm", "default/cm", "--yes"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "is a Patch, which has no object of its own to import: import the object as " in err
    assert err.endswith("kubernetes:core/v1:ConfigMap, or declare the Patch in the program\n")


def test_stack_says_pending_steps_of_an_operation_under_way_are_under_way(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # It said "a run stopped mid-step; the next `up` settles them" while the `up` ran on.
    cm = "kubernetes:core/v1:ConfigMap"
    backend = open_backend()
    op = backend.begin_operation("shop", "dev", kind="up")
    op.begin(0, Op.CREATE, ResourceState(urn=make_urn("dev", "shop", cm, "cfg"), type=cm))
    capsys.readouterr()
    main(["stack"])
    holder = f"by {getpass.getuser()} on host {socket.gethostname()}"
    assert "    Pending operations: 1 (under way in an `up` started 0s ago " + holder in (
        capsys.readouterr().out
    )
    op.finish("failed")
    backend.close()
    main(["stack"])
    assert "    Pending operations: 1 (a run stopped mid-step;" in capsys.readouterr().out
