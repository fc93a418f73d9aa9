"""Projects, stacks and their operations, as front ends (the CLI, the operator) drive them."""
