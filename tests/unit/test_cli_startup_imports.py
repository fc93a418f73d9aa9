"""What every `stackwright` command pays before it runs: modules it does not need stay out."""

from __future__ import annotations

import subprocess
import sys

#: Loaded only by the code that uses them: a `wait-for` JSONPath, a quantity compared for drift.
_ON_DEMAND = ("stackwright.providers.kubernetes.jsonpath", "fractions", "decimal")


def test_starting_the_cli_loads_no_module_only_rare_paths_use() -> None:
    code = (
        "import sys\n"
        "import stackwright.cli.main\n"
        f"print(sorted(m for m in {_ON_DEMAND!r} if m in sys.modules))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert result.stdout.strip() == "[]", result.stdout + result.stderr
