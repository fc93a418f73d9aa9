"""Projects, stacks and their operations, as front ends (the CLI, the operator) drive them.

A script drives a stack as Pulumi's Automation API does, through `Workspace`
(`with Workspace.create_or_select(folder, "dev") as ws: ws.up(listener)`: the block
closes its state store however it ends); `Selection` says which
resources an operation may touch (`--target`, `--exclude`, `--replace`); `event_json`
turns an event into the object `--json` prints for it, for a script that forwards them.
Messages a script gets name the program's files by their absolute paths (the CLI names
them from the directory it was started in: `errors.record_starting_directory`).
"""

from typing import TYPE_CHECKING

from stackwright.lazy import lazy_exports

if TYPE_CHECKING:
    from stackwright.automation.stack import Selection, Workspace
    from stackwright.engine.events import event_json

__all__ = ["Selection", "Workspace", "event_json"]

if not TYPE_CHECKING:  # imported when first used: the CLI's light commands need none of them
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "Selection": "stackwright.automation.stack",
            "Workspace": "stackwright.automation.stack",
            "event_json": "stackwright.engine.events",
        },
    )
