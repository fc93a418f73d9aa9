"""Projects, stacks and their operations, as front ends (the CLI, the operator) drive them.

A script drives a stack as Pulumi's Automation API does, through `Workspace`
(`Workspace.create_or_select(folder, "dev").up(listener)`); `Selection` says which
resources an operation may touch (`--target`, `--exclude`, `--replace`).
"""

from stackwright.automation.stack import Selection, Workspace

__all__ = ["Selection", "Workspace"]
