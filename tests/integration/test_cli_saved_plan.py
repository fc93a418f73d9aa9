"""Saved plans through the CLI against the local cluster: `preview --save-plan FILE`, then
`up --plan FILE` applies exactly that preview, as a CI pipeline with a person approving
the preview needs (Pulumi's update plans, Terraform's `plan -out` / `apply PLANFILE`).

What changed since the preview is refused: the program (naming the resource and the
field), the stack's state (another `up` ran), the rules (`--force-conflicts`, policy
packs) — before the stack is locked, the state and its history left as they were, and
before the question `up` asks without --yes — and a value an Output of another resource
gives only as the run goes (that step fails, the rest goes on). Secrets are sealed in the
file and still checked; a value unknown at preview may be anything.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from test_cli_lifecycle import Project, get, live, one_line
from test_cli_lifecycle import new_project as new_project  # the fixture

pytestmark = pytest.mark.integration

LiveCluster = Any  # tests/conftest.py's LiveCluster

#: A namespace and a ConfigMap whose colour the tests edit ...
COLOUR = """
k8s.core.v1.Namespace("ns", metadata={{"name": NS}})
k8s.core.v1.ConfigMap("colour", metadata={{"name": "colour", "namespace": NS}},
                      data={{"colour": {colour!r}}})
"""
#: ... and a Deployment beside them.
WEB = """
k8s.apps.v1.Deployment("web", metadata={{"name": "web", "namespace": NS}},
                       spec=app_spec("web", replicas={replicas}))
"""


def colours(colour: str = "blue", replicas: int = 1, *, web: bool = True) -> str:
    return COLOUR.format(colour=colour) + (WEB.format(replicas=replicas) if web else "")


def saved(p: Project, name: str = "plan.json") -> dict[str, Any]:
    document: dict[str, Any] = json.loads((p.root / name).read_text())
    return document


def planned(p: Project) -> dict[str, dict[str, Any]]:
    """The plan's resources by logical name."""
    return {r["urn"].rpartition("::")[2]: r for r in saved(p)["resources"]}


def colour_in(cluster: LiveCluster, p: Project) -> str:
    colour: str = live(cluster, "configmap", "colour", p.ns)["data"]["colour"]
    return colour


def test_up_with_a_saved_plan_applies_exactly_the_preview(
    new_project: Any, cluster: LiveCluster
) -> None:
    p = new_project()
    p.program(colours())
    p.up()
    version = p.state()
    p.program(colours("green", replicas=2))

    preview = p.preview("--save-plan", "plan.json")
    document = saved(p)
    assert (document["stackwrightPlan"], document["project"], document["stack"]) == (
        1,
        p.name,
        "dev",
    )
    assert isinstance(document["stateVersion"], int)
    assert document["options"]["targets"] == [] and document["options"]["refresh"] is False
    resources = planned(p)
    assert {name: r["ops"] for name, r in resources.items()} == {
        "ns": ["same"],
        "colour": ["update"],
        "web": ["update"],
    }
    assert resources["colour"]["inputs"]["data"] == {"colour": "green"}
    assert resources["web"]["inputs"]["spec"]["replicas"] == 2
    assert p.state() == version  # a preview changes nothing, its plan file aside

    # Text mode says where the plan is and how to apply it.
    said = p.sw("preview", "--save-plan", "again.json").out
    assert "stackwright up --plan again.json" in said

    applied = p.up("--plan", "plan.json")
    assert applied.ops("step-started") == {"ns": "same", "colour": "update", "web": "update"}
    assert applied.changed() == preview.changed()
    assert colour_in(cluster, p) == "green"
    assert live(cluster, "deployment", "web", p.ns)["spec"]["replicas"] == 2


def test_a_program_edited_after_the_preview_is_refused_before_any_change(
    new_project: Any, cluster: LiveCluster
) -> None:
    p = new_project()
    p.program(colours())
    p.up()
    p.program(colours("green"))
    p.preview("--save-plan", "plan.json")
    before = p.state()

    # Edited since: another colour, and a resource the plan does not have.
    p.program(colours("red") + 'k8s.core.v1.ConfigMap("extra", metadata={"namespace": NS})\n')
    refused = p.sw("up", "--yes", "--plan", "plan.json", rc=1)
    line = one_line(refused)
    assert "ConfigMap colour: data.colour differs from the plan" in line
    assert 'planned "green", now "red"' in line
    assert "ConfigMap extra: the plan has no step for it" in line
    assert "preview --save-plan" in line
    assert colour_in(cluster, p) == "blue"
    assert get(cluster, "configmap", "extra", p.ns) is None
    assert p.state()["resources"] == before["resources"]

    # With --json: no step began, the run's error says why.
    as_json = p.up("--plan", "plan.json", rc=1)
    assert not as_json.of("step-started")
    (error,) = as_json.of("error")
    assert "data.colour differs from the plan" in error["message"]

    # A resource the program dropped since is a delete the plan does not have.
    p.program(colours("green", web=False))
    dropped = p.sw("up", "--yes", "--plan", "plan.json", rc=1)
    assert "Deployment web: this `up` would delete it, which the plan does not" in one_line(dropped)
    assert get(cluster, "deployment", "web", p.ns) is not None

    # The program back as previewed: the plan applies.
    p.program(colours("green"))
    p.up("--plan", "plan.json")
    assert colour_in(cluster, p) == "green"


def test_another_up_since_the_preview_is_refused(new_project: Any, cluster: LiveCluster) -> None:
    p = new_project()
    p.program(colours())
    p.up()
    p.program(colours("green"))
    p.preview("--save-plan", "plan.json")
    p.program(colours("red"))
    p.up()  # someone else's deploy, between the approval and the apply

    p.program(colours("green"))
    refused = p.sw("up", "--yes", "--plan", "plan.json", rc=1)
    line = one_line(refused)
    assert "the state of stack dev changed since the plan was made" in line
    assert "nothing was changed" in line and "preview --save-plan" in line
    assert colour_in(cluster, p) == "red"
    # Planned again against the state as it is now, the plan applies.
    p.preview("--save-plan", "plan.json")
    p.up("--plan", "plan.json")
    assert colour_in(cluster, p) == "green"


SECRET_PROGRAM = """
cfg = sw.Config()
k8s.core.v1.Namespace("ns", metadata={"name": NS})
k8s.core.v1.Secret("db", metadata={"name": "db", "namespace": NS},
                   string_data={"password": cfg.require_secret("password")})
"""

PASSWORD = "Tr0ub4dor-and-3-plan"
OTHER = "correct-horse-battery-plan"


def test_a_secret_input_is_sealed_in_the_plan_and_still_checked(
    new_project: Any, cluster: LiveCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STACKWRIGHT_CONFIG_PASSPHRASE", "plan passphrase")
    p = new_project()
    p.sw("config", "set", "--secret", "password", PASSWORD)
    p.program(SECRET_PROGRAM)
    p.preview("--save-plan", "plan.json")

    text = (p.root / "plan.json").read_text()
    for form in (PASSWORD, base64.b64encode(PASSWORD.encode()).decode()):
        assert form not in text
    db = planned(p)["db"]
    assert list(db["inputs"]["stringData"]) == ["@secret"]  # a Secret's data: all of it sealed
    assert "stringData.password" in db["secretPaths"]

    # Another secret since the preview: the program knows it as it runs (no resource gives
    # it), so the `up` is refused before any change, neither value shown.
    p.sw("config", "set", "--secret", "password", OTHER)
    refused = p.up("--plan", "plan.json", rc=1)
    assert not refused.of("step-started")
    (error,) = refused.of("error")
    assert "Secret db: stringData.password differs from the plan" in error["message"]
    assert "planned [secret], now [secret]" in error["message"]
    assert PASSWORD not in refused.out + refused.err and OTHER not in refused.out + refused.err
    assert get(cluster, "namespace", p.ns) is None

    # The approved secret back: the same plan applies.
    p.sw("config", "set", "--secret", "password", PASSWORD)
    p.up("--plan", "plan.json")
    data = live(cluster, "secret", "db", p.ns)["data"]["password"]
    assert base64.b64decode(data).decode() == PASSWORD


#: `b` reads the uid of `a`, which a preview of their first `up` cannot know.
UNKNOWN_AT_PREVIEW = """
a = k8s.core.v1.ConfigMap("a", metadata={"namespace": NS}, data={"k": "v"})
k8s.core.v1.ConfigMap("b", metadata={"name": "b", "namespace": NS},
                      data={"uid": a.metadata["uid"], "fixed": "x"})
k8s.core.v1.Namespace("ns", metadata={"name": NS})
"""


def test_a_value_unknown_at_preview_may_be_anything_at_up(
    new_project: Any, cluster: LiveCluster
) -> None:
    p = new_project()
    p.program(UNKNOWN_AT_PREVIEW)
    p.preview("--save-plan", "plan.json")
    b = planned(p)["b"]
    assert b["ops"] == ["create"]
    assert b["inputs"]["data"] == {"uid": {"@unknown": True}, "fixed": "x"}

    p.up("--plan", "plan.json")
    made = live(cluster, "configmap", "b", p.ns)["data"]
    a_name = p.resources()["a"]["inputs"]["metadata"]["name"]
    assert made == {
        "uid": live(cluster, "configmap", a_name, p.ns)["metadata"]["uid"],
        "fixed": "x",
    }


#: `late` takes a value read from a file as the run applies `early`'s Output: the plan
#: knows it (a preview of an existing resource has its outputs), but only the run sees
#: that it changed. `apart` needs neither.
ONLY_KNOWN_IN_THE_RUN = """
from pathlib import Path

k8s.core.v1.Namespace("ns", metadata={"name": NS})
early = k8s.core.v1.ConfigMap("early", metadata={"name": "early", "namespace": NS},
                              data={"k": "v"})
late = k8s.core.v1.ConfigMap(
    "late", metadata={"name": "late", "namespace": NS},
    data={"v": early.metadata["name"].apply(lambda _: Path("value.txt").read_text())},
)
k8s.core.v1.ConfigMap("after", metadata={"name": "after", "namespace": NS},
                      data={"from": late.metadata["name"]})
k8s.core.v1.ConfigMap("apart", metadata={"name": "apart", "namespace": NS},
                      data={"k": APART})
"""


def test_a_violation_seen_only_once_an_output_is_known_fails_that_step(
    new_project: Any, cluster: LiveCluster
) -> None:
    p = new_project()
    (p.root / "value.txt").write_text("one")
    p.program('APART = "1"\n' + ONLY_KNOWN_IN_THE_RUN)
    p.up()
    (p.root / "value.txt").write_text("two")
    p.program('APART = "2"\n' + ONLY_KNOWN_IN_THE_RUN)
    p.preview("--save-plan", "plan.json")
    assert planned(p)["late"]["inputs"]["data"] == {"v": "two"}

    (p.root / "value.txt").write_text("three")  # changed after the approval
    run = p.up("--plan", "plan.json", rc=1)
    (failed,) = [e for e in run.of("step-done") if not e["ok"]]
    assert (failed["name"], failed["op"]) == ("late", "update")
    assert "violates the plan: data.v differs from the plan" in failed["error"]
    assert 'planned "two", now "three"' in failed["error"]
    assert set(run.ops("step-skipped")) == {"after"}
    assert run.ops()["apart"] == "update"  # independent work finishes
    assert live(cluster, "configmap", "apart", p.ns)["data"] == {"k": "2"}
    assert live(cluster, "configmap", "late", p.ns)["data"] == {"v": "one"}
    assert any("late" in f and "violates the plan" in f for f in run.summary["failures"])


@pytest.mark.parametrize(
    ("write", "said"),
    [
        (None, "--plan plan.json: no such file"),
        ("not json {", "is not a plan written by `stackwright preview --save-plan`"),
        ('{"version": 2, "resources": []}', "is not a plan written by"),
        ("ANOTHER_STACK", "it was made for stack 'prod', not 'dev'"),
        ("NEWER", "it has format 99, newer than this Stackwright reads (1)"),
    ],
)
def test_bad_plan_file_is_exit_2(
    new_project: Any, cluster: LiveCluster, write: str | None, said: str
) -> None:
    p = new_project()
    p.program(colours())
    p.up()
    p.program(colours("green"))
    plan = p.root / "plan.json"
    if write in ("ANOTHER_STACK", "NEWER"):
        p.preview("--save-plan", "plan.json")
        document = saved(p)
        if write == "ANOTHER_STACK":
            document["stack"] = "prod"
        else:
            document["stackwrightPlan"] = 99
        plan.write_text(json.dumps(document))
    elif write is not None:
        plan.write_text(write)
    before = p.state()

    refused = p.sw("up", "--yes", "--plan", "plan.json", rc=2)
    assert said in one_line(refused)
    assert colour_in(cluster, p) == "blue"
    assert p.state() == before


def test_up_with_a_plan_takes_the_options_it_was_made_with(
    new_project: Any, cluster: LiveCluster
) -> None:
    p = new_project()
    p.program(colours())
    p.up()
    p.program(colours("green", replicas=2))
    colour = p.urn("kubernetes:core/v1:ConfigMap", "colour")
    p.preview("--save-plan", "plan.json", "--target", colour)
    assert saved(p)["options"]["targets"] == [colour]

    other = p.sw("up", "--yes", "--plan", "plan.json", "--refresh", rc=2)
    assert "--refresh differs from the options the plan was made with" in one_line(other)

    done = p.up("--plan", "plan.json")  # the plan's --target, not given again
    assert done.ops() == {"colour": "update"}
    assert live(cluster, "deployment", "web", p.ns)["spec"]["replicas"] == 1


def test_a_preview_that_fails_saves_no_plan(new_project: Any, cluster: LiveCluster) -> None:
    p = new_project()
    p.program(
        'k8s.core.v1.ConfigMap("bad", metadata={"name": "Not_Valid", "namespace": "default"})\n'
    )
    failed = p.preview("--save-plan", "plan.json", rc=None)
    assert failed.rc == 2 and not failed.summary["ok"]
    assert not Path(p.root / "plan.json").exists()


#: A Deployment whose selector (immutable) the tests change, so that it is replaced, and
#: an auto-named ConfigMap made with `immutable: true`, replaced created-first under a
#: new name when its data changes; `gone` is dropped by the second program.
REPLACED = """
k8s.core.v1.Namespace("ns", metadata={{"name": NS}})
k8s.apps.v1.Deployment("web", metadata={{"name": "web", "namespace": NS}},
                       spec=app_spec({app!r}))
k8s.core.v1.ConfigMap("frozen", metadata={{"namespace": NS}}, immutable=True,
                      data={{"v": {app!r}}})
"""


def test_replacements_and_deletes_apply_as_planned(new_project: Any, cluster: LiveCluster) -> None:
    p = new_project()
    p.program(
        REPLACED.format(app="web") + 'k8s.core.v1.ConfigMap("gone", metadata={"namespace": NS})\n'
    )
    p.up()
    frozen = p.resources()["frozen"]["inputs"]["metadata"]["name"]
    p.program(REPLACED.format(app="web2"))
    p.preview("--save-plan", "plan.json")
    assert {name: r["ops"] for name, r in planned(p).items()} == {
        "ns": ["same"],
        "web": ["replace"],
        "frozen": ["replace"],
        "gone": ["delete"],
    }
    renamed = planned(p)["frozen"]["inputs"]["metadata"]["name"]
    assert renamed != frozen

    done = p.up("--plan", "plan.json")
    assert done.summary["ok"]
    assert done.ops() == {
        "web": "replace",
        "frozen": "delete-replaced",  # its replacement's second half: the old object goes
        "gone": "delete",
    }
    assert live(cluster, "configmap", renamed, p.ns)["data"] == {"v": "web2"}
    assert get(cluster, "configmap", frozen, p.ns) is None
    assert set(p.resources()) == {"ns", "web", "frozen"}


def test_a_plan_that_cannot_be_written_is_refused_before_the_preview(
    new_project: Any, cluster: LiveCluster
) -> None:
    p = new_project()
    p.program(colours())
    refused = p.sw("preview", "--save-plan", "no/such/plan.json", rc=2)
    assert "--save-plan no/such/plan.json: no folder no/such to write it in" in one_line(refused)
    assert not refused.out


#: The ConfigMap `colour` under a new name, its record taken by an alias.
RENAMED = """
k8s.core.v1.Namespace("ns", metadata={{"name": NS}})
k8s.core.v1.ConfigMap("paint", metadata={{"name": "colour", "namespace": NS}},
                      data={{"colour": {colour!r}}},
                      opts=sw.ResourceOptions(aliases=[sw.Alias(name="colour")]))
"""


def test_a_refused_up_with_a_plan_changes_nothing_state_and_history_included(
    new_project: Any, cluster: LiveCluster
) -> None:
    p = new_project()
    p.program(colours(web=False))
    p.up()
    # Approved: the rename, with a refresh first (both would be recorded by the run).
    p.program(RENAMED.format(colour="green"))
    p.preview("--refresh", "--save-plan", "plan.json")
    assert planned(p)["paint"]["ops"] == ["update"]
    state, history = p.state(), p.history()

    p.program(RENAMED.format(colour="red"))
    refused = p.sw("up", "--yes", "--plan", "plan.json", rc=1)
    assert "ConfigMap paint: data.colour differs from the plan" in one_line(refused)
    assert p.state() == state  # the record not renamed, nothing refreshed
    assert p.history() == history  # no operation began

    p.program(RENAMED.format(colour="green"))
    p.up("--plan", "plan.json")
    assert colour_in(cluster, p) == "green"
    assert set(p.resources()) == {"ns", "paint"}


def test_up_with_a_plan_refuses_a_changed_state_or_program_before_asking(
    new_project: Any,
    cluster: LiveCluster,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`up --plan` without --yes previews and asks: what it would refuse is said instead
    of the question, which a person would answer for nothing."""
    import io

    from stackwright.cli.main import main

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    def refused_unasked() -> str:
        """What `up --plan plan.json` at a terminal says, refused (exit 1) unasked."""
        monkeypatch.setattr("sys.stdin", Terminal("y\n"))
        with pytest.raises(SystemExit) as refused:
            main(["up", "--plan", "plan.json"])
        out, err = capsys.readouterr()
        assert refused.value.code == 1 and "Do you want to perform" not in out
        return err

    p = new_project()
    p.program(colours(web=False))
    p.up()
    p.program(colours("green", web=False))
    p.preview("--save-plan", "plan.json")
    monkeypatch.chdir(p.root)

    p.program(colours("red", web=False))  # the program edited since the approval
    assert "data.colour differs from the plan" in refused_unasked()

    p.up()  # another deploy since the approval
    p.program(colours("green", web=False))
    assert "the state of stack dev changed since the plan was made" in refused_unasked()
    assert colour_in(cluster, p) == "red"


def test_up_with_a_plan_runs_with_the_previews_force_and_policy_packs(
    new_project: Any, cluster: LiveCluster
) -> None:
    p = new_project(
        {
            "kubernetes:kubeconfig": str(cluster.kubeconfig),
            "policy:packs": {"kubernetes-best-practices": "advisory"},
        }
    )
    p.program(colours(web=False))
    p.up()
    p.program(colours("green", web=False))
    p.preview("--force-conflicts", "--save-plan", "plan.json")
    options = saved(p)["options"]
    assert options["forceConflicts"] is True
    assert options["policyPacks"] == {"kubernetes-best-practices": "advisory"}

    without = one_line(p.sw("up", "--yes", "--plan", "plan.json", rc=1))
    assert without.startswith(
        "error: up refused: the plan was made with --force-conflicts, and this `up` runs "
        "without it; nothing was changed"
    )
    stricter = ("--force-conflicts", "--policy-level", "mandatory")
    refused = one_line(p.sw("up", "--yes", "--plan", "plan.json", *stricter, rc=1))
    assert (
        "policy pack kubernetes-best-practices was run at level advisory when the plan was "
        "made, and this `up` runs it at level mandatory"
    ) in refused
    assert colour_in(cluster, p) == "blue"

    p.up("--plan", "plan.json", "--force-conflicts")
    assert colour_in(cluster, p) == "green"
