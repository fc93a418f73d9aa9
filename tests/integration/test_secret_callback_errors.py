"""An apply callback given a secret value that raises: its message may quote a part of the
value (`int(v.split("-")[0])`), which masking the remembered whole value misses, so any part
of a secret it quotes is masked too, and the callback's line is told — for a configuration
secret and a Secret's data read back from the cluster, through the CLI against a real
cluster."""

from __future__ import annotations

from typing import Any

import pytest
from test_cli_lifecycle import PRELUDE_LINES, LiveCluster
from test_cli_lifecycle import new_project as new_project  # the fixture
from test_secrets_lifecycle import assert_nowhere
from test_secrets_lifecycle import passphrase as passphrase  # the fixture
from test_secrets_review import HEAD, with_secret

pytestmark = pytest.mark.integration

PLAIN = "keyquokka-7731"
PART = "keyquokka"
HIDDEN = "ValueError: invalid literal for int() with base 10: '[secret]'"

BODY = f"""
sec = k8s.core.v1.Secret("sec", metadata={{"name": "sec", "namespace": NS}},
                         string_data={{"pw": {PLAIN!r}}}, opts=sw.ResourceOptions(depends_on=[ns]))
sw.export("configured", pw.apply(lambda v: int(v.split("-")[0])))
sw.export("read", sec.string_data["pw"].apply(lambda v: int(v.split("-")[0])))
"""
USED = """
k8s.core.v1.ConfigMap("cm", metadata={"name": "cm", "namespace": NS},
                      data={"n": sec.string_data["pw"].apply(lambda v: str(int(v[:9])))})
"""


def test_a_callback_of_a_secret_that_raises_does_not_show_it(
    new_project: Any, cluster: LiveCluster, passphrase: str
) -> None:
    p = with_secret(lambda: new_project(process=True), PLAIN, BODY)
    program = p.root / "__main__.py"
    first = PRELUDE_LINES + 2 + BODY.count("\n") - 1  # `configured`'s line
    results = [p.sw("up", "--yes", rc=1), p.up(rc=1)]
    assert sorted(results[-1].summary["failures"]) == sorted(
        [
            f"{program.name}:{first}: stack output configured: an apply callback failed: {HIDDEN}",
            f"{program.name}:{first + 1}: stack output read: an apply callback failed: {HIDDEN}",
        ]
    )
    p.program(HEAD + BODY + USED)
    results += [p.sw("up", "--yes", rc=1), p.up(rc=1)]
    used = f"{program.name}:{_line_of(program, 'str(int(v[:9]))')}"
    assert (
        f"{used}: kubernetes:core/v1:ConfigMap cm: an apply callback failed: {HIDDEN}"
        in results[-1].summary["failures"]
    ), results[-1].summary["failures"]
    program.write_text(program.read_text().replace(PLAIN, "as-written"))  # not what is checked
    for result in results:
        assert PART not in result.out + result.err, result
    assert_nowhere(p, cluster, PART, *results)


def test_a_resource_holding_a_secret_whose_callback_raises_fails_its_step_not_the_command(
    new_project: Any, cluster: LiveCluster, passphrase: str
) -> None:
    # The check for a secret in a plain field resolved its inputs before the run, and the
    # callback's error ended the command with a traceback (which quoted the part).
    body = """
        k8s.core.v1.ConfigMap("cm", metadata={"name": "cm", "namespace": NS},
                              data={"n": pw.apply(lambda v: str(int(v[:9])))},
                              opts=sw.ResourceOptions(depends_on=[ns]))
        """
    p = with_secret(lambda: new_project(process=True), PLAIN, body)
    results = [p.sw("preview", rc=1), p.sw("up", "--yes", rc=1), p.up(rc=1)]
    for result in results:
        assert "Traceback" not in result.err and PART not in result.out + result.err, result
    program = p.root / "__main__.py"
    assert results[-1].summary["failures"] == [
        f"{program.name}:{_line_of(program, 'str(int(v[:9]))')}: kubernetes:core/v1:ConfigMap cm: "
        f"an apply callback failed: {HIDDEN}"
    ]
    assert_nowhere(p, cluster, PART, *results)


def _line_of(program: Any, text: str) -> int:
    """The line of the program file where `text` is."""
    lines = program.read_text().splitlines()
    return next(n for n, line in enumerate(lines, 1) if text in line)
