"""What an experienced Pulumi user expects of the SDK, checked against the engine and the fake cluster."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from engine_stack import Stack, urn
from engine_stack import stack as stack  # the fixture

import stackwright.kubernetes as k8s
from stackwright.cli.main import main
from stackwright.model import make_urn
from stackwright.sdk.context import Program
from stackwright.sdk.resource import ComponentResource, ResourceOptions

CM = "kubernetes:core/v1:ConfigMap"


def app_and_dependent(p: Program) -> None:
    app = ComponentResource("acme:web:App", "shop")
    inner = ComponentResource("acme:web:Part", "part", opts=ResourceOptions(parent=app))
    k8s.core.v1.ConfigMap(
        "settings", metadata={"name": "settings"}, data={"a": "1"},
        opts=ResourceOptions(parent=inner),
    )  # fmt: skip
    k8s.core.v1.ConfigMap(
        "after", metadata={"name": "after"}, data={"b": "2"},
        opts=ResourceOptions(depends_on=[app]),
    )  # fmt: skip


def test_depends_on_a_component_waits_for_all_its_children(stack: Stack) -> None:
    stack.fake.fail_apply["settings"] = "denied"

    summary = stack.up(app_and_dependent)

    assert not summary.ok
    assert [c.name for c in stack.fake.calls_to("apply")] == ["settings"]
    assert summary.not_done and summary.not_done[0].startswith(f"{CM} after:")

    stack.fake.fail_apply.clear()
    assert stack.up(app_and_dependent).ok
    child = make_urn("dev", "shop", CM, "settings", ("acme:web:App", "acme:web:Part"))
    assert child in stack.recorded(urn(CM, "after")).dependencies

    assert stack.destroy().ok
    deleted = [c.name for c in stack.fake.calls_to("delete")]
    assert deleted.index("after") < deleted.index("settings")


# --- the command line --------------------------------------------------------------------


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project with one stack, `dev`, selected; STACKWRIGHT_HOME in the test's folder."""
    monkeypatch.setenv("STACKWRIGHT_HOME", str(tmp_path / "home"))
    for name in ("STACKWRIGHT_BACKEND_URL", "STACKWRIGHT_STACK", "STACKWRIGHT_CONFIG_PASSPHRASE"):
        monkeypatch.delenv(name, raising=False)
    folder = tmp_path / "proj"
    folder.mkdir()
    (folder / "Stackwright.yaml").write_text("name: shop\nruntime: python\n")
    monkeypatch.chdir(folder)
    main(["stack", "init", "dev"])
    return folder


def test_what_a_program_prints_stays_off_the_json_lines(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "__main__.py").write_text(
        "import stackwright as sw\n"
        "print('hello from the program')\n"
        "sw.export('x', sw.Output.from_input(1).apply(lambda v: print('in apply') or v))\n"
    )
    capsys.readouterr()

    main(["preview", "--json"])

    out, err = capsys.readouterr()
    events = [json.loads(line) for line in out.splitlines()]
    assert events[-1]["event"] == "summary" and events[-1]["outputs"] == {"x": 1}
    assert "hello from the program" in err and "in apply" in err
