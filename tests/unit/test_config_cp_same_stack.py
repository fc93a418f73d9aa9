"""`config cp --dest S` from stack S itself is refused: one line, exit code 2, the stack file
as it was (a secret is not encrypted again)."""

from __future__ import annotations

from pathlib import Path

import pytest

from stackwright.cli.main import main


@pytest.mark.parametrize("source", [[], ["--stack", "dev"]], ids=["selected", "named"])
def test_config_cp_to_the_stack_copied_from_is_refused(
    project: Path,
    source: list[str],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("STACKWRIGHT_CONFIG_PASSPHRASE", "correct horse battery staple")
    main(["config", "set", "greeting", "hello"])
    main(["config", "set", "--secret", "password", "S3cr3t"])
    stack_file = project / "Stackwright.dev.yaml"
    before = stack_file.read_text()
    capsys.readouterr()
    with pytest.raises(SystemExit) as caught:
        main(["config", "cp", "--dest", "dev", *source])
    assert caught.value.code == 2
    assert capsys.readouterr().err == (
        "error: config cp --dest dev: that is the stack copied from; name another stack "
        "(or --stack another source)\n"
    )
    assert stack_file.read_text() == before
