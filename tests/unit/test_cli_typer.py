"""The CLI's shortcut around typer's pydantic conversion keeps typer's behaviour."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from stackwright.cli.main import app, main


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    code = (
        "import sys\n"
        "from stackwright.cli.main import main\n"
        "try:\n"
        f"    main({list(args)!r})\n"
        "except SystemExit as exc:\n"
        "    print('exit', exc.code)\n"
        "print('pydantic' in sys.modules)\n"
    )
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=cwd, timeout=60
    )


def test_a_plain_command_does_not_load_pydantic(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STACKWRIGHT_HOME", str(tmp_path / "home"))
    (tmp_path / "Stackwright.yaml").write_text("name: demo\nruntime: python\n")
    result = run("stack", "ls", "--json", cwd=tmp_path)
    assert result.stdout.strip().splitlines()[-1] == "False", result.stdout + result.stderr


def test_a_number_option_given_on_the_command_line_does_not_load_pydantic(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Its value arrives as text, which typer read through pydantic (~50 ms of the command).
    monkeypatch.setenv("STACKWRIGHT_HOME", str(tmp_path / "home"))
    (tmp_path / "Stackwright.yaml").write_text("name: demo\nruntime: python\n")
    result = run("destroy", "--parallel", "8", "--yes", cwd=tmp_path)
    assert "exit 2" in result.stdout, result.stdout + result.stderr  # no stack: refused after
    assert result.stdout.strip().splitlines()[-1] == "False", result.stdout + result.stderr


def test_a_number_option_reaches_its_command_as_a_number() -> None:
    seen: list[object] = []
    numbers = typer.Typer()

    @numbers.command()
    def count(
        parallel: int = typer.Option(16, "--parallel", min=1),
        speed: float | None = typer.Option(None, "--speed"),
    ) -> None:
        seen.extend([parallel, speed])

    assert CliRunner().invoke(numbers, ["--parallel", " 8 ", "--speed", "2.5"]).exit_code == 0
    assert seen == [8, 2.5]
    assert type(seen[0]) is int


@pytest.mark.parametrize("value", ["0", "x"])
def test_a_bad_option_value_is_still_refused_by_typer(
    value: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["--cwd", str(tmp_path), "up", "--parallel", value])
    assert caught.value.code == 2
    assert "--parallel" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (  # the value given, and what to give: pydantic's words had neither
            ["up", "--parallel", "0"],
            "error: --parallel 0: give a whole number, 1 or more; see `stackwright up --help`",
        ),
        (
            ["preview", "--parallel", "abc"],
            "error: --parallel abc: give a whole number, 1 or more; "
            "see `stackwright preview --help`",
        ),
        (
            ["destroy", "-p", "-3"],
            "error: --parallel -3: give a whole number, 1 or more; "
            "see `stackwright destroy --help`",
        ),
        (
            ["cluster", "start", "--nodes", "two"],
            "error: --nodes two: give a whole number; see `stackwright cluster start --help`",
        ),
        (
            ["cluster", "start", "--speed", "fast"],
            "error: --speed fast: give a number; see `stackwright cluster start --help`",
        ),
        (
            ["state", "delete"],
            "error: Missing argument 'urn'; see `stackwright state delete --help`",
        ),
        (["nosuch"], "error: No such command 'nosuch'; see `stackwright --help`"),
        (  # click knows no command yet: it pointed at `stackwright --help`
            ["up", "--yes", "--target"],
            "error: Option '--target' requires an argument; see `stackwright up --help`",
        ),
        (
            ["stack", "output", "--stack"],
            "error: Option '--stack' requires an argument; see `stackwright stack output --help`",
        ),
    ],
)
def test_a_usage_error_is_one_line(
    args: list[str], line: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["--cwd", str(tmp_path), *args])
    assert caught.value.code == 2
    assert capsys.readouterr().err == line + "\n"


def test_version_prints_the_package_version(capsys: pytest.CaptureFixture[str]) -> None:
    from importlib import metadata

    main(["--version", "up"])  # eager: nothing else runs
    assert capsys.readouterr().out.startswith(f"stackwright {metadata.version('stackwright')} (")


def test_ctrl_c_says_interrupted_and_exits_130(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import stackwright.cli.project as project

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(project, "_workspace", interrupted)
    with pytest.raises(SystemExit) as caught:
        main(["up", "--yes"])
    assert caught.value.code == 130
    assert capsys.readouterr().err.startswith("interrupted: the next operation picks up")
    # With --json the last event line says so too, as for any error that ends the command.
    with pytest.raises(SystemExit):
        main(["up", "--yes", "--json"])
    last = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert last["event"] == "error" and last["exitCode"] == 130
    assert last["message"].startswith("interrupted: the next operation picks up")


def test_no_help_text_loses_words_to_rich_markup() -> None:
    """typer renders help through rich, which takes `[word]` for a style tag and drops it
    (`secrets as [secret]` showed as `secrets as  unless`)."""
    tag = re.compile(r"(?<!\\)\[[a-zA-Z#/@][^\[\]]*\]")
    lost = []

    def walk(command: object, path: str) -> None:
        texts = [getattr(command, "help", None) or ""]
        texts += [getattr(p, "help", None) or "" for p in getattr(command, "params", [])]
        lost.extend(f"{path}: {m.group(0)}" for t in texts for m in tag.finditer(t))
        for name, sub in (getattr(command, "commands", None) or {}).items():
            walk(sub, f"{path} {name}")

    walk(typer.main.get_command(app), "stackwright")
    assert not lost, lost


def test_building_the_cli_evaluates_each_command_signature_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """typer asks for a command's parameters twice in a row (its options, its callback);
    each evaluation of the annotations costs, on every command, `up` included."""
    import inspect
    from collections import Counter

    import stackwright.cli.project as project

    evaluated: Counter[object] = Counter()
    signature = inspect.signature

    def counting(obj: object, *args: object, **kwargs: object) -> inspect.Signature:
        if kwargs.get("eval_str"):
            evaluated[obj] += 1
        return signature(obj, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(inspect, "signature", counting)
    cli = typer.main.get_command(app)
    cli.list_commands(typer.Context(cli))  # as help does: builds every command
    assert evaluated[project.up] == 1
    assert evaluated[project.preview] == 1


def test_typer_reads_a_command_s_annotations_evaluated_once() -> None:
    """The CLI's modules postpone their annotations (strings): typer's two evaluations of
    each (`inspect.signature(eval_str=True)`, then `get_type_hints`) compiled every one of
    them again (~1 ms of `up`). They are evaluated once, before typer reads them."""
    import stackwright.cli.project as project

    cli = typer.main.get_command(app)
    assert isinstance(cli, typer.core.TyperGroup)
    cli.get_command(typer.Context(cli), "up")
    assert [a for a in project.up.__annotations__.values() if isinstance(a, str)] == []
    assert project.up.__annotations__["as_json"] == project.Json


@pytest.mark.parametrize("where", [["--cwd", "proj"], ["--cwd=proj"]])
def test_cwd_is_taken_after_the_command_too(
    where: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As Pulumi's `--cwd` works anywhere: `stackwright stack ls --cwd infra` in a CI script
    # was "No such option: --cwd".
    monkeypatch.setenv("STACKWRIGHT_HOME", str(tmp_path / "home"))
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "Stackwright.yaml").write_text("name: demo\nruntime: python\n")
    result = run("stack", "ls", *where, "--json", cwd=tmp_path)
    assert result.stdout.splitlines()[0] == "[]", result.stdout + result.stderr


def test_json_before_the_command_is_the_commands(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `stackwright --json stack ls` was "No such option: --json (Possible options: --version)".
    monkeypatch.setenv("STACKWRIGHT_HOME", str(tmp_path / "home"))
    (tmp_path / "Stackwright.yaml").write_text("name: demo\nruntime: python\n")
    result = run("--json", "stack", "ls", cwd=tmp_path)
    assert result.stdout.splitlines()[0] == "[]", result.stdout + result.stderr


def test_help_names_value_kinds_as_click_does_and_none_for_flags(
    capsys: pytest.CaptureFixture[str],
) -> None:
    try:
        main(["up", "--help"])
    except SystemExit as exc:
        assert exc.code in (0, None)
    help_text = capsys.readouterr().out
    assert "<" not in re.sub(r"[│╭╮╰╯─]", "", help_text).replace("<1", ""), help_text
    rows = {line.split()[1]: line for line in help_text.splitlines() if line.startswith("│ --")}
    assert "TEXT" in rows["--stack"] and "INTEGER RANGE" in rows["--parallel"]
    assert re.search(r"--yes\s+-y\s+Do not ask", rows["--yes"]), rows["--yes"]


def test_every_command_summary_is_one_line_in_its_groups_list() -> None:
    """The commands panel of `--help` prints a command's first paragraph with its line
    breaks: a summary wrapped in the docstring came out cut mid-sentence (`state --help`:
    "… (after renaming it in the program," then "instead of an alias) …")."""

    def walk(command: Any, path: str) -> list[tuple[str, str]]:
        found = [(path, (command.help or "").strip().split("\n\n")[0])]
        for name, sub in getattr(command, "commands", {}).items():  # a group's
            found += walk(sub, f"{path} {name}")
        return found

    wrapped = [
        path
        for path, summary in walk(typer.main.get_command(app), "stackwright")
        if "\n" in summary
    ]
    assert wrapped == []


@pytest.mark.parametrize(
    "before", [["-s", "prod"], ["--stack", "prod"], ["--stack=prod"], ["--json", "-s", "prod"]]
)
def test_stack_before_the_command_is_the_commands(
    before: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `stackwright -s prod config get replicas` (kubectl's `kubectl -n prod get …` habit)
    # was "No such option: -s", which did not say where the option goes.
    monkeypatch.setenv("STACKWRIGHT_HOME", str(tmp_path / "home"))
    (tmp_path / "Stackwright.yaml").write_text("name: demo\nruntime: python\n")
    run("stack", "init", "prod", cwd=tmp_path)
    run("stack", "init", "dev", cwd=tmp_path)  # selected: only -s names prod
    (tmp_path / "Stackwright.prod.yaml").write_text("config:\n  demo:replicas: 3\n")
    result = run(*before, "config", "get", "replicas", cwd=tmp_path)
    assert result.stdout.splitlines()[0] == "3", result.stdout + result.stderr


def test_pulumis_short_flags_are_taken(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A Pulumi user's scripts pass `-j`, `-r`, `-x` and `stack rm -f`: each was
    # "No such option".
    monkeypatch.setenv("STACKWRIGHT_HOME", str(tmp_path / "home"))
    (tmp_path / "Stackwright.yaml").write_text("name: demo\nruntime: python\n")
    (tmp_path / "__main__.py").write_text("")
    run("stack", "init", "dev", cwd=tmp_path)
    listed, _ = json.JSONDecoder().raw_decode(run("stack", "ls", "-j", cwd=tmp_path).stdout)
    assert [stack["name"] for stack in listed] == ["dev"]
    refused = run("preview", "-r", "-x", "urn:nope", "-j", cwd=tmp_path).stdout.splitlines()
    assert json.loads(refused[0])["message"].startswith("--exclude urn:nope names no resource")
    assert run("stack", "rm", "dev", "-f", "-y", cwd=tmp_path).stdout.startswith("Removed")


def test_a_usage_error_with_j_is_also_the_last_event_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STACKWRIGHT_HOME", str(tmp_path / "home"))
    (tmp_path / "Stackwright.yaml").write_text("name: demo\nruntime: python\n")
    lines = run("-j", "stack", "ls", "--nope", cwd=tmp_path).stdout.splitlines()
    assert json.loads(lines[0]) == {
        "event": "error",
        "message": "No such option: --nope; see `stackwright stack ls --help`",
        "exitCode": 2,
    }


@pytest.mark.parametrize(
    ("before", "message"),
    [
        (["-s"], "error: -s needs a stack name, then the command: `stackwright -s STACK up`"),
        (
            ["-s", "preview"],
            "error: `stackwright -s preview` names no command: put one after it, as "
            "`stackwright -s preview up`",
        ),
        (
            ["-j"],
            "error: `stackwright -j` names no command: put one after it, as `stackwright -j up`",
        ),
    ],
)
def test_an_option_before_no_command_says_so(
    before: list[str], message: str, tmp_path: Path
) -> None:
    # `stackwright -s preview` (the stack name left out) said "No such option: -s", an
    # option every stack command has.
    result = run(*before, cwd=tmp_path)
    assert "exit 2" in result.stdout.splitlines()
    assert result.stderr.splitlines() == [message]


@pytest.mark.parametrize("flags", [["-jr"], ["-rj"]])
def test_an_error_with_j_among_short_flags_is_also_the_last_event_line(
    flags: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # click takes `-jr` as `-j -r`, as Pulumi's flags do: the error event was missing.
    monkeypatch.setenv("STACKWRIGHT_HOME", str(tmp_path / "home"))
    (tmp_path / "Stackwright.yaml").write_text("name: demo\nruntime: python\n")
    (tmp_path / "__main__.py").write_text("")
    run("stack", "init", "dev", cwd=tmp_path)
    lines = run("preview", *flags, "-x", "urn:nope", cwd=tmp_path).stdout.splitlines()
    assert json.loads(lines[0])["message"].startswith("--exclude urn:nope names no resource")


def test_a_command_is_built_only_when_it_runs_or_help_lists_it() -> None:
    """typer reads every command's signature to build the CLI; `stackwright stack ls` should
    not pay for `up`'s. Here building `broken` fails (its annotation names nothing), so
    only a CLI that builds commands on lookup can run `fine`."""
    demo = typer.Typer(add_completion=False)
    group = typer.Typer()
    demo.add_typer(group, name="group")

    @demo.command()
    def broken(value: Undefined) -> None:  # type: ignore[name-defined]  # noqa: F821
        """Never built."""

    @group.command()
    def fine(count: int = 1) -> None:
        """Built when run."""
        typer.echo(f"ran {count}")

    result = CliRunner().invoke(demo, ["group", "fine", "--count", "2"])
    assert (result.exit_code, result.output) == (0, "ran 2\n")
    listing = CliRunner().invoke(demo, ["--help"])  # lists (builds) them all, in their order
    assert isinstance(listing.exception, NameError)


def test_cwd_naming_a_file_says_to_name_its_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # It said "no such directory" of the project file itself.
    project = tmp_path / "Stackwright.yaml"
    project.write_text("name: shop\nruntime: python\n")
    with pytest.raises(SystemExit) as caught:
        main(["--cwd", str(project), "stack"])
    assert caught.value.code == 2
    assert capsys.readouterr().err == (
        f"error: --cwd {project}: a file, not a directory; pass the project's directory "
        f"({tmp_path})\n"
    )


def test_parallel_s_help_says_what_it_bounds_in_a_preview_too() -> None:
    # "How many API writes run at once" read as if a preview (which writes nothing) and the
    # reads of an `up` were not bounded by it.
    command: Any = typer.main.get_command(app)
    for name in ("preview", "up", "destroy"):
        (option,) = [p for p in command.commands[name].params if "--parallel" in p.opts]
        assert option.help == "How many API calls (reads, dry runs, writes) run at once."
