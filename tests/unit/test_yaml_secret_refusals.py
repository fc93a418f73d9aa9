"""A YAML program's function of a secret that does not fit it is refused at its line
without what the secret holds (the message of a plain value quotes it)."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from engine_stack import PROJECT, STACK, Stack
from engine_stack import stack as stack  # the fixture
from test_yaml_program import _run

from stackwright.engine import operations
from stackwright.engine.execute import Options
from stackwright.errors import UsageError

PLAIN = "hunter2-do-not-show"
TOKEN = frozenset({"shop:token"})
CASES = {
    "select of a secret text": ('{fn::select: [0, "${token}"]}', PLAIN),
    "select by a secret index": ('{fn::select: ["${token}", [a, b]]}', PLAIN),
    "fromBase64 of secret bytes": (
        '{fn::fromBase64: "${token}"}',
        base64.b64encode(b"\xe9" + PLAIN.encode()).decode(),
    ),
    "fromBase64 of a secret that is not base64": ('{fn::fromBase64: "${token}"}', PLAIN + "!"),
    "fromJSON of a secret": ('{fn::fromJSON: "${token}"}', '{"a": ' + PLAIN + "}"),
}


@pytest.mark.parametrize("call, value", list(CASES.values()), ids=list(CASES))
def test_a_function_of_a_secret_that_does_not_fit_does_not_show_it(
    tmp_path: Path, call: str, value: str, request: pytest.FixtureRequest
) -> None:
    text = f"""
    name: shop
    runtime: yaml
    config:
      token: {{type: string, secret: true}}
    outputs:
      out: {call}
    """
    with pytest.raises(UsageError) as caught:
        _run(tmp_path, text, {"shop:token": value}, TOKEN)
    said = str(caught.value).removeprefix(f"{tmp_path / 'Stackwright.yaml'}:6: ")
    assert said.startswith("fn::"), said
    for shown in (PLAIN, "hunter2", "\\xe9", "0xe9"):
        assert shown not in said, said
    # JSON's and base64's own words say only where, and are kept.
    kept = "fromBase64 of a secret that is not base64" in request.node.name or "fromJSON" in said
    assert ("what they hold is not shown" in said) != kept, said


def test_one_known_only_in_the_run_does_not_show_it_either(tmp_path: Path, stack: Stack) -> None:
    text = """
    name: shop
    runtime: yaml
    config:
      token: {type: string, secret: true}
    resources:
      settings:
        type: kubernetes:core/v1:ConfigMap
        properties:
          data: {mode: fast}
    outputs:
      out: {fn::select: [0, "${token}-${settings.data.mode}"]}
    """
    declared = _run(tmp_path, text, {"shop:token": PLAIN}, TOKEN)
    summary = operations.run(
        stack.backend,
        project=PROJECT,
        stack=STACK,
        options=Options("up"),
        program=declared,
        providers=stack.fake.factory(),
        listener=stack.events.append,
    )
    (failure,) = summary.failures
    assert PLAIN not in failure and "what they hold is not shown" in failure, failure
    assert PLAIN not in repr(stack.events)
    assert PLAIN not in repr(stack.state())
