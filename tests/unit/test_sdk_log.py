"""`sw.log` and `sw.is_dry_run`, as Pulumi's `pulumi.log` and
`pulumi.runtime.is_dry_run`: a program's messages reach the
operation's events against their resource or the stack, from the program and from its
callbacks as they run (against the fake cluster, as test_engine_lifecycle)."""

from __future__ import annotations

from pathlib import Path

import pytest
from engine_stack import Stack, urn
from engine_stack import stack as stack  # the fixture

import stackwright as sw
import stackwright.kubernetes as k8s
from stackwright.engine.events import Log
from stackwright.engine.program import run_program
from stackwright.errors import UsageError
from stackwright.sdk.context import Program, running

CM = "kubernetes:core/v1:ConfigMap"


def logs(stack: Stack) -> list[tuple[str, str, str]]:
    return [(e.severity, e.message, e.urn) for e in stack.events if isinstance(e, Log)]


def test_the_programs_messages_come_first_against_their_resource_or_the_stack(
    stack: Stack,
) -> None:
    def declare(p: Program) -> None:
        sw.log.info("starting")
        cm = k8s.core.v1.ConfigMap("settings", data={"mode": "prod"})
        sw.log.warn("mode is prod", cm)
        sw.log.debug("details", resource=cm)
        sw.log.error("no backup configured")

    summary = stack.up(declare)

    assert logs(stack) == [
        ("info", "starting", ""),
        ("warning", "mode is prod", urn(CM, "settings")),
        ("debug", "details", urn(CM, "settings")),
        ("error", "no backup configured", ""),
    ]
    assert isinstance(stack.events[0], Log)  # before the steps, as the program ran
    # As Pulumi's: an error logged fails nothing (raise to stop the program).
    assert summary.ok and summary.exit_code == 0


def test_a_callback_logs_as_it_runs_in_up_with_the_applied_value(stack: Stack) -> None:
    def declare(p: Program) -> None:
        cm = k8s.core.v1.ConfigMap("settings", data={"mode": "prod"})
        cm.metadata["name"].apply(lambda name: sw.log.info(f"made {name}", cm))

    stack.up(declare)

    (message,) = logs(stack)
    name = stack.recorded(urn(CM, "settings")).outputs["metadata"]["name"]
    assert message == ("info", f"made {name}", urn(CM, "settings"))
    started = [i for i, e in enumerate(stack.events) if type(e).__name__ == "StepDone"]
    assert stack.events.index(next(e for e in stack.events if isinstance(e, Log))) > started[0]


def test_messages_logged_before_the_operation_are_not_said_twice(stack: Stack) -> None:
    """The engine takes what the program logged once: a second operation on the same
    declared program (a script's) says only what is logged anew."""
    with running(declared := Program(project="shop", stack="dev")):
        sw.log.info("once")
    said: list[str] = []
    with declared.logging_to(lambda severity, text, urn_: said.append(text)):
        declared.log("info", "twice")
    with declared.logging_to(lambda severity, text, urn_: said.append(text)):
        pass
    assert said == ["once", "twice"] and declared.logged == []


def test_outside_a_program_a_message_goes_to_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    sw.log.warn("no engine")
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == ("", "warning: no engine\n")


def test_a_message_against_something_that_is_no_resource_is_refused() -> None:
    with running(Program(project="shop", stack="dev")), pytest.raises(TypeError) as info:
        sw.log.info("x", "settings")  # type: ignore[arg-type]
    assert "must be a resource the program declared, or None for the stack (got str)" in str(
        info.value
    )


@pytest.mark.parametrize("dry_run", [True, False])
def test_is_dry_run_says_whether_the_program_runs_for_a_preview(
    tmp_path: Path, dry_run: bool
) -> None:
    main = tmp_path / "main.py"
    main.write_text(
        "import stackwright as sw\n"
        "sw.export('dry', sw.is_dry_run())\n"
        "sw.export('in_callback', sw.Output.from_input(1).apply(lambda _: sw.is_dry_run()))\n"
    )
    program = run_program(main, project="shop", stack="dev", dry_run=dry_run)
    assert program.exports["dry"] is dry_run
    assert program.exports["in_callback"].resolve(lambda r: None) is dry_run


def test_is_dry_run_outside_a_program_says_where_it_answers() -> None:
    with pytest.raises(UsageError, match=r"only while Stackwright runs a program"):
        sw.is_dry_run()


def test_a_program_that_fails_after_logging_has_said_its_messages(tmp_path: Path) -> None:
    """Pulumi's advice: log an error, then raise to stop the program. The messages are
    handed on as the program runs, so its failure does not swallow them."""
    main = tmp_path / "main.py"
    main.write_text(
        "import stackwright as sw\n"
        "sw.log.error('replicas must be at least 2')\n"
        "raise SystemExit(1)\n"
    )
    said: list[tuple[str, str, str]] = []
    with pytest.raises(UsageError, match="exited with status 1"):
        run_program(main, project="shop", stack="dev", log=lambda *entry: said.append(entry))
    assert said == [("error", "replicas must be at least 2", "")]
