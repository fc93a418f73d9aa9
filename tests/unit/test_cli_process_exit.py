"""What a `stackwright` command pays after its work is done, as its process ends."""

from __future__ import annotations

import subprocess
import sys

#: A fresh interpreter that runs the command as the console script does (`main()`, the
#: process's own command line), then says how many objects its end is left to free.
_AS_THE_PROCESS = (
    "import gc, sys\n"
    "from stackwright.cli.main import main\n"
    "sys.argv = ['stackwright', *sys.argv[1:]]\n"
    "try:\n"
    "    main({argv})\n"
    "finally:\n"
    "    print('frozen', gc.get_freeze_count(), file=sys.stderr)\n"
)


def _frozen_after(argv: str, *args: str) -> int:
    code = _AS_THE_PROCESS.format(argv=argv)
    result = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert "stackwright " in result.stdout  # the command's own output, flushed at exit
    return int(result.stderr.split("frozen")[-1])


def test_the_process_s_own_command_leaves_its_objects_to_the_exit() -> None:
    # Restoring the collector's thresholds, then the interpreter's exit, walked every object
    # the command made (~60 ms of a one-object `up`) to free them just before the process
    # ended anyway.
    assert _frozen_after("", "--version") > 10_000


def test_a_command_run_in_process_leaves_the_caller_s_collector_as_it_was() -> None:
    # A caller that goes on (the tests, a script embedding the CLI) keeps its cycles collected.
    assert _frozen_after("['--version']") == 0
