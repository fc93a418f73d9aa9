"""`readable_changes`, the diff's list entries, as properties: whatever entries two env
lists gain, lose or move, and whichever of their values are secret, no secret is shown and
no plain entry is masked."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from stackwright.cli.lines import compact
from stackwright.engine.list_changes import readable_changes
from stackwright.engine.plan import Step, diff
from stackwright.model import Op, ResourceState, make_urn

URN = make_urn("dev", "shop", "kubernetes:apps/v1:Deployment", "api")

#: An entry: its name, its value, and what of it is secret: nothing (""), its value, or
#: the whole entry. A secret value is spelled `S…`.
entries = st.lists(
    st.tuples(
        st.sampled_from("ABCDEF"), st.sampled_from(["1", "2"]), st.sampled_from(["", ".value", "!"])
    ),
    max_size=6,
    unique_by=lambda entry: entry[0],
)


Entry = tuple[str, str, str]


def side(env: list[Entry]) -> ResourceState:
    # A whole secret entry's name is secret too: spelled `S…` as well.
    values = [
        {"name": f"S{n}" if secret == "!" else n, "value": f"S{n}{v}" if secret else v}
        for n, v, secret in env
    ]
    paths = tuple(
        f"spec.env[{i}]{'' if secret == '!' else secret}"
        for i, (_, _, secret) in enumerate(env)
        if secret
    )
    return ResourceState(
        URN, "kubernetes:apps/v1:Deployment", inputs={"spec": {"env": values}}, secret_paths=paths
    )


@given(entries, entries)
def test_no_secret_shown_and_no_plain_entry_masked(before: list[Entry], after: list[Entry]) -> None:
    old, new = side(before), side(after)
    step = Step(Op.UPDATE, URN, old, new, tuple(diff(old.inputs, new.inputs)))
    shown = [(c.path, compact(c.old, None), compact(c.new, None)) for c in readable_changes(step)]
    text = repr(shown)
    assert '"S' not in text and "'S" not in text
    assert "=S" not in text  # nor a secret entry's name in a label (`env[name=…]`)
    # Where an entry is secret on some side: its name, or its index on that side (a list
    # whose entries line up is told index by index, as the plan compares it).
    secret_at = {
        *(f"[name={n}]" for n, _, secret in [*before, *after] if secret),
        *(f"spec.env[{i}]" for i, (_, _, secret) in enumerate(before) if secret),
        *(f"spec.env[{j}]" for j, (_, _, secret) in enumerate(after) if secret),
    }
    for path, *values in shown:
        if "[secret]" in repr(values):
            assert any(at in path for at in secret_at), shown
    def named(env: list[Entry]) -> list[str]:
        return [f"S{n}" if secret == "!" else n for n, _, secret in env]

    names = named(before) == named(after)
    changed: dict[str, Any] = {n: v for n, (_, v, _) in zip(named(after), after, strict=True)}
    for i, (name, (_, value, secret)) in enumerate(zip(named(before), before, strict=True)):
        if name in changed and changed[name] == value:
            continue
        if secret == "!":  # its name is secret: told by a place, masked
            assert any(
                path.startswith("spec.env") and "[secret]" in repr(values)
                for path, *values in shown
            ), shown
            continue
        # Every entry that changed is told: under its name, or its index where they line up.
        told = f"spec.env[{i}]" if names else f"[name={name}]"
        assert any(told in path or path == "spec.env" for path, *_ in shown), shown
