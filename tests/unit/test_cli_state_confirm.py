"""`state delete / unprotect / move / rename` ask before they edit the state, as `pulumi state …`
does: in a terminal a question (`--yes` skips it), without one a refusal unless --yes."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from stackwright.cli.main import main
from stackwright.model import ResourceState, make_urn
from stackwright.state import open_backend

CM = "kubernetes:core/v1:ConfigMap"


class Terminal(io.StringIO):
    """A terminal, where the user types what it holds."""

    def isatty(self) -> bool:
        return True


def _with_resources(project: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    """Stack dev holds two ConfigMaps (one protected); stack prod exists, empty."""
    urns = [make_urn("dev", "shop", CM, name) for name in ("a", "b")]
    inputs = [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": n, "namespace": "default"}}
        for n in ("a", "b")
    ]
    resources = [
        ResourceState(urn=urns[0], type=CM, id="default/a", inputs=inputs[0], protect=True),
        ResourceState(urn=urns[1], type=CM, id="default/b", inputs=inputs[1]),
    ]
    document = {
        "version": 1,
        "project": "shop",
        "stack": "dev",
        "resources": [r.to_dict() for r in resources],
    }
    (project / "doc.json").write_text(json.dumps({**document, "outputs": {}, "pending": []}))
    main(["stack", "import", "--file", str(project / "doc.json")])
    main(["stack", "init", "prod"])
    main(["stack", "select", "dev"])
    capsys.readouterr()
    return urns


def _state(stack: str = "dev") -> list[tuple[str, bool]]:
    return [(r.urn, r.protect) for r in open_backend().load("shop", stack).resources]


@pytest.fixture(params=["delete", "unprotect", "move", "rename"])
def command(
    request: pytest.FixtureRequest, project: Path, capsys: pytest.CaptureFixture[str]
) -> list[str]:
    """A state edit of stack dev's resources."""
    urns = _with_resources(project, capsys)
    return {
        "delete": ["state", "delete", urns[1]],
        "unprotect": ["state", "unprotect", urns[0]],
        "move": ["state", "move", urns[1], "--dest", "prod"],
        "rename": ["state", "rename", urns[1], "renamed"],
    }[request.param]


def test_without_a_terminal_a_state_edit_needs_yes(
    command: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    before = _state()
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    with pytest.raises(SystemExit) as caught:
        main(command)
    assert caught.value.code == 2
    assert capsys.readouterr().err == (
        f"error: `stackwright {' '.join(command[:2])}` asks for confirmation: pass --yes to "
        "run it without a terminal\n"
    )
    assert _state() == before
    main([*command, "--yes"])
    assert _state() != before


def test_in_a_terminal_a_state_edit_asks_first(
    command: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    before = _state()
    monkeypatch.setattr("sys.stdin", Terminal("n\n"))
    with pytest.raises(SystemExit) as declined:
        main(command)
    assert declined.value.code == 1
    out = capsys.readouterr().out
    assert out.startswith("This command will edit stack dev's state directly: ")
    assert "Do you want to perform this state edit? [y/N]: " in out
    assert out.endswith("Cancelled: nothing was changed.\n")
    assert _state() == before
    # `delete` asks a second time: no cluster takes the marks off its object here.
    monkeypatch.setattr("sys.stdin", Terminal("y\ny\n"))
    main(command)
    assert _state() != before


def test_a_delete_that_cannot_reach_the_cluster_asks_whether_to_forget_anyway(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    urns = _with_resources(project, capsys)
    before = _state()
    monkeypatch.setattr("sys.stdin", Terminal("y\nn\n"))
    with pytest.raises(SystemExit) as declined:
        main(["state", "delete", urns[1]])
    assert declined.value.code == 1
    out = capsys.readouterr().out
    question = f"cannot take stack dev's marks off {CM} default/b: no kubeconfig found"
    assert question in out
    assert out.endswith(
        "Forget it anyway, the object keeping the stack's marks? [y/N]: "
        "Cancelled: nothing was changed.\n"
    )
    assert _state() == before
    main(["state", "delete", urns[1], "--yes"])
    assert _state() == [(urns[0], True)]
    err = capsys.readouterr().err
    assert err.startswith(f"warning: {question}")
    assert err.endswith(
        "`kubectl label configmap b -n default applyset.kubernetes.io/part-of- "
        "app.kubernetes.io/managed-by- && kubectl annotate configmap b -n default "
        "stackwright.io/stack- stackwright.io/urn-` takes them off\n"
    )


def test_yes_on_a_state_edit_is_not_called_a_pulumi_only_flag(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    urns = _with_resources(project, capsys)
    main(["state", "delete", urns[1], "-y"])
    assert _state() == [(urns[0], True)]
    assert "Removed" in capsys.readouterr().out


def test_unprotect_all_or_several_as_pulumi_s(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`state unprotect --all` (before a `destroy` of what `import` protected) and several
    URNs, as `pulumi state unprotect [URN]... [--all]`; neither, or both, is refused."""
    urns = _with_resources(project, capsys)
    for args, said in (
        ([], "pass the URNs of the resources to unprotect (`stackwright stack --show-urns`"),
        (["--all", urns[0]], "pass the URNs of the resources to unprotect or --all, not both"),
    ):
        with pytest.raises(SystemExit) as refused:
            main(["state", "unprotect", *args, "--yes"])
        assert refused.value.code == 2
        assert said in capsys.readouterr().err
    assert _state() == [(urns[0], True), (urns[1], False)]
    main(["state", "unprotect", "--all", "--yes", "--json"])
    event = json.loads(capsys.readouterr().out)
    assert (event["action"], event["urns"]) == ("unprotect", [urns[0]])
    assert _state() == [(urns[0], False), (urns[1], False)]
    main(["state", "unprotect", "--all", "--yes"])
    assert (
        capsys.readouterr().out == "No resource of stack dev is protected: nothing was changed.\n"
    )
    main(["state", "unprotect", *urns, "--yes"])
    assert capsys.readouterr().out == "".join(f"{u} is no longer protected.\n" for u in urns)


def test_with_json_a_state_edit_needs_yes_even_in_a_terminal(
    command: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """--json keeps stdout for its one line: no question there, a refusal (exit 2) instead,
    as `stack rm --json` does."""
    before = _state()
    monkeypatch.setattr("sys.stdin", Terminal("y\n"))
    with pytest.raises(SystemExit) as caught:
        main([*command, "--json"])
    assert caught.value.code == 2
    out = capsys.readouterr().out
    assert [json.loads(line)["event"] for line in out.splitlines()] == ["error"]
    assert _state() == before


def test_a_move_names_every_resource_it_moved_children_included(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Moving a chart moves its objects too: the message counts and names them all, as they
    are named in the destination, not only the URNs given."""
    chart = make_urn("dev", "shop", "kubernetes:helm.sh/v4:Chart", "web")
    child = make_urn("dev", "shop", CM, "ConfigMap:default/web", ("kubernetes:helm.sh/v4:Chart",))
    resources = [
        ResourceState(urn=chart, type="kubernetes:helm.sh/v4:Chart", custom=False).to_dict(),
        ResourceState(urn=child, type=CM, id="default/web", parent=chart).to_dict(),
    ]
    document = {"version": 1, "project": "shop", "stack": "dev", "resources": resources}
    (project / "doc.json").write_text(json.dumps({**document, "outputs": {}, "pending": []}))
    main(["stack", "import", "--file", str(project / "doc.json")])
    main(["stack", "init", "prod"])
    capsys.readouterr()
    main(["state", "move", chart, "--dest", "prod", "--stack", "dev", "--yes"])
    there = [urn.replace("urn:sw:dev::", "urn:sw:prod::") for urn in (chart, child)]
    assert capsys.readouterr().out == (
        f"Moved 2 resources to stack prod:\n    {there[0]}\n    {there[1]}\n"
    )
    assert [urn for urn, _ in _state("prod")] == there


def test_deleting_a_patch_or_a_release_from_the_state_says_what_stays(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No marks to take off (a Patch never claims its object; Helm owns a release's): the
    cluster is not needed, and a note says what stays there."""
    patch_type, release_type = f"{CM}Patch", "kubernetes:helm.sh/v4:Release"
    patch = make_urn("dev", "shop", patch_type, "tweak")
    release = make_urn("dev", "shop", release_type, "web")
    meta = {"name": "cfg", "namespace": "default"}
    resources = [
        ResourceState(
            urn=patch,
            type=patch_type,
            id="default/cfg",
            inputs={"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta},
        ).to_dict(),
        ResourceState(urn=release, type=release_type, id="apps/web").to_dict(),
    ]
    document = {"version": 1, "project": "shop", "stack": "dev", "resources": resources}
    (project / "doc.json").write_text(json.dumps({**document, "outputs": {}, "pending": []}))
    main(["stack", "import", "--file", str(project / "doc.json")])
    capsys.readouterr()
    for urn in (patch, release):
        main(["state", "delete", urn, "--yes"])
    done = capsys.readouterr()
    manager = done.err.split("owned by field manager ")[1].split("\n")[0]
    assert manager.startswith("stackwright-patch-")
    assert done.err == (
        f"note: {patch}: the fields this Patch applied stay on default/cfg, owned by field "
        f"manager {manager}\n"
        f"note: {release}: Helm release apps/web stays installed (`helm uninstall web -n "
        "apps` removes it)\n"
    )
    assert done.out == "".join(
        f"Removed {urn} from the state of stack dev; nothing in the cluster was changed.\n"
        for urn in (patch, release)
    )
    assert _state() == []


def test_state_delete_json_carries_the_notes_of_what_stays(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A Patch's fields stay on its object: `--json` says so in the line's `notes`, not only
    on stderr."""
    patch = "kubernetes:core/v1:ConfigMapPatch"
    urn = make_urn("dev", "shop", patch, "extra")
    inputs = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "coredns", "namespace": "kube-system"},
        "data": {"a": "1"},
    }
    state = ResourceState(urn=urn, type=patch, id="kube-system/coredns", inputs=inputs)
    document = {"version": 1, "project": "shop", "stack": "dev", "resources": [state.to_dict()]}
    (project / "doc.json").write_text(json.dumps({**document, "outputs": {}, "pending": []}))
    main(["stack", "import", "--file", str(project / "doc.json")])
    capsys.readouterr()
    main(["state", "delete", urn, "--yes", "--json"])
    captured = capsys.readouterr()
    done = json.loads(captured.out)
    note = (
        f"{urn}: the fields this Patch applied stay on kube-system/coredns, owned by field manager"
    )
    assert [n[: len(note)] for n in done["notes"]] == [note], done
    assert done["removed"] == [urn] and _state() == []


def test_a_declined_stack_removal_says_so_and_exits_1(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """As Pulumi ends a declined question ("confirmation declined"), not 0: a script's
    `stackwright stack rm prod && …` stops there. It returned silently, exit 0."""
    _with_resources(project, capsys)
    monkeypatch.setattr("sys.stdin", Terminal("n\n"))
    with pytest.raises(SystemExit) as declined:
        main(["stack", "rm", "prod"])
    assert declined.value.code == 1
    assert capsys.readouterr().out.endswith("Cancelled: nothing was changed.\n")
    assert _state("prod") == []  # still there: load() of a removed stack fails
