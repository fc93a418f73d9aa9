"""A resource's own inputs the cluster refuses (`InputsRejected`: an API server's 422 or 400
to an apply or its dry run) are bad input: the failure names the resource's program line, a
preview whose every failure is one exits 2 (nothing changed), as does an `up` that changed
nothing; one where other steps changed the cluster keeps the failed operation's 1."""

from __future__ import annotations

from collections.abc import Callable

from engine_stack import Stack
from engine_stack import stack as stack  # the fixture

import stackwright as sw
import stackwright.kubernetes as k8s
from stackwright.engine.events import StepDone, Summary, event_json
from stackwright.errors import InputsRejected
from stackwright.sdk.context import Program

REFUSED = 'web: ConfigMap "web" is invalid: data[no spaces]: Invalid value: "no spaces"'


def declare(p: Program) -> None:
    k8s.core.v1.ConfigMap("web", metadata={"name": "web"}, data={"no spaces": "x"})
    k8s.core.v1.ConfigMap("other", metadata={"name": "other"})


LINE = declare.__code__.co_firstlineno + 1
FAILURE = (
    f'{__file__}:{LINE}: kubernetes:core/v1:ConfigMap web: ConfigMap "web" is invalid: '
    'data[no spaces]: Invalid value: "no spaces"'
)


def test_a_preview_whose_inputs_are_refused_names_the_line_and_exits_2(stack: Stack) -> None:
    stack.fake.fail_preview["web"] = InputsRejected(REFUSED)
    preview = stack.preview(declare)
    assert preview.failures == [FAILURE]
    assert (preview.ok, preview.rejected, preview.exit_code) == (False, 1, 2)
    # The step's own event says it as the summary does, and the summary its exit code: a
    # CI reading only its events learns where to fix it and how the command ends.
    assert [e.error for e in stack.of(StepDone) if not e.ok] == [FAILURE]
    (summary,) = stack.of(Summary)
    assert event_json(summary)["exitCode"] == 2
    # Another failure beside it is the operation's: exit 1.
    stack.fake.fail_preview["other"] = "admission webhook denied the request"
    assert stack.preview(declare).exit_code == 1


def test_an_up_whose_apply_is_refused_names_the_line_and_keeps_exit_1(stack: Stack) -> None:
    stack.fake.fail_apply["web"] = InputsRejected(REFUSED)
    up = stack.up(declare)
    assert up.failures == [FAILURE]
    assert (up.ok, up.rejected, up.exit_code) == (False, 1, 1)
    assert [e.error for e in stack.of(StepDone) if not e.ok] == [FAILURE]
    assert up.counts == {"create": 1}  # the other was created: the cluster changed
    stack.fake.fail_apply.clear()
    assert stack.up(declare).exit_code == 0


def test_an_up_that_changed_nothing_but_met_refused_inputs_exits_2(stack: Stack) -> None:
    # Bad input, and nothing changed: as its preview would, not as a failed operation.
    def alone(p: Program) -> None:
        k8s.core.v1.ConfigMap("web", metadata={"name": "web"}, data={"no spaces": "x"})

    stack.fake.fail_apply["web"] = InputsRejected(REFUSED)
    up = stack.up(alone)
    assert (up.ok, up.rejected, up.counts.get("create", 0), up.exit_code) == (False, 1, 0, 2)


def test_the_refused_step_says_so_in_its_event_and_not_in_its_json(stack: Stack) -> None:
    """`StepDone.located` marks the step whose own inputs the cluster refused (the display
    prints its error as the summary does); another failure beside it is not marked, and the
    `--json` step-done event keeps its keys."""
    stack.fake.fail_preview["web"] = InputsRejected(REFUSED)
    stack.fake.fail_preview["other"] = "admission webhook denied the request"
    stack.preview(declare)
    failed = {e.step.urn.rpartition("::")[2]: e for e in stack.of(StepDone) if not e.ok}
    assert (failed["web"].located, failed["other"].located) == (True, False)
    assert set(event_json(failed["web"])) == {
        "event", "op", "urn", "type", "name", "provider", "ok", "elapsed", "error"
    }  # fmt: skip


def test_an_up_whose_delete_first_replacement_is_refused_exits_1(stack: Stack) -> None:
    # The old object went before the server refused the new one: the cluster changed, so
    # it is a failed operation (exit 1), not bad input refused with nothing changed.
    def web(selector: str) -> Callable[[Program], None]:
        def declare(p: Program) -> None:
            k8s.apps.v1.Deployment(
                "web",
                metadata={"name": "web"},
                spec={
                    "selector": {"matchLabels": {"app": selector}},
                    "template": {
                        "metadata": {"labels": {"app": selector}},
                        "spec": {"containers": [{"name": "web", "image": "nginx:1.29"}]},
                    },
                },
            )

        return declare

    assert stack.up(web("a")).ok
    stack.fake.fail_apply["web"] = InputsRejected(REFUSED)
    up = stack.up(web("b"))  # the selector is immutable: replaced, its name reused
    assert [c for c in stack.fake.calls if c[0] == "delete"], "the old object went first"
    assert (up.ok, up.rejected, up.exit_code) == (False, 0, 1)


def test_a_secret_known_only_once_read_in_a_label_fails_its_step_at_its_line(
    stack: Stack,
) -> None:
    """A cluster's Secret's data, secret only once read, put in a label: refused as the
    checks before the run refuse a secret they see there, leading with the line."""

    def labelled(p: Program) -> None:
        creds = k8s.core.v1.Secret("creds", data={"pw": "aHVudGVy"})
        k8s.core.v1.ConfigMap("cfg", metadata={"labels": {"pw": creds.data["pw"]}})

    summary = stack.up(labelled)

    (failure,) = summary.failures
    line = labelled.__code__.co_firstlineno + 2
    assert failure.startswith(
        f"{__file__}:{line}: kubernetes:core/v1:ConfigMap cfg: metadata.labels.pw holds a secret"
    ), failure


def test_an_input_still_unknown_after_its_dependencies_fails_at_the_resources_line(
    stack: Stack,
) -> None:
    """An Output that stays unknown once everything it reads is applied is the program's to
    fix: the failure leads with the line that declared the resource, as bad input does."""

    def unknowable(p: Program) -> None:
        k8s.core.v1.ConfigMap(
            "cfg", data={"ip": sw.Output.from_input(1).apply(lambda _: sw.UNKNOWN)}
        )

    (failure,) = stack.up(unknowable).failures
    line = unknowable.__code__.co_firstlineno + 1
    assert failure == (
        f"{__file__}:{line}: kubernetes:core/v1:ConfigMap cfg: input data.ip is not known even "
        "after its dependencies were applied: an Output it reads names a field the live object "
        "does not have"
    )


def test_an_object_in_a_namespace_the_cluster_lacks_is_refused_at_its_line(stack: Stack) -> None:
    # The program names a namespace it does not declare and the cluster does not have: the
    # program's to fix (or the cluster's), as a refused field is, not a failed operation.
    def elsewhere(p: Program) -> None:
        k8s.core.v1.ConfigMap("web", metadata={"name": "web", "namespace": "nowhere"})

    at = f"{__file__}:{elsewhere.__code__.co_firstlineno + 1}: kubernetes:core/v1:ConfigMap web: "
    for run in (stack.preview, stack.up):
        done = run(elsewhere)
        (said,) = done.failures
        assert said.startswith(at) and said.endswith('namespaces "nowhere" not found'), said
        assert (done.rejected, done.exit_code) == (1, 2)


def test_an_object_in_a_namespace_the_stack_made_and_someone_deleted_is_not_bad_input(
    stack: Stack,
) -> None:
    # The program declares the namespace and the stack made it: deleted outside the stack,
    # it is drift, which `up --refresh` repairs; "declare it in the program" (exit 2) was
    # wrong for a program that does.
    def in_team(data: str) -> Callable[[Program], None]:
        def declare(p: Program) -> None:
            k8s.core.v1.Namespace("team", metadata={"name": "team"})
            k8s.core.v1.ConfigMap(
                "web", metadata={"name": "web", "namespace": "team"}, data={"k": data}
            )

        return declare

    assert stack.up(in_team("1")).ok
    stack.fake.remove("ConfigMap", "web", "team")
    stack.fake.remove("Namespace", "team")
    for run in (stack.preview, stack.up):
        done = run(in_team("2"))
        (said,) = done.failures
        assert said == (
            "kubernetes:core/v1:ConfigMap web: namespace team is not in the cluster, though "
            "kubernetes:core/v1:Namespace team of this stack made it (deleted outside the "
            "stack?): `stackwright up --refresh` makes it again"
        ), said
        assert (done.rejected, done.exit_code) == (0, 1)
    assert stack.up(in_team("2"), refresh=True).ok
    assert stack.fake.find("ConfigMap", "web", "team")["data"] == {"k": "2"}
