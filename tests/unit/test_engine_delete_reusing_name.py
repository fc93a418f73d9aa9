"""Which deletes the engine tells the provider a new object takes the name of next (a
delete-before-replace), so that `stackwright.io/skip-await` does not skip their wait; the
provider's rule itself is tested against the local cluster (test_provider.py)."""

from __future__ import annotations

from engine_stack import Stack
from engine_stack import stack as stack  # the fixture
from test_engine_delete_timeout import config_maps


def test_only_a_delete_before_replace_reuses_the_name(stack: Stack) -> None:
    stack.up(config_maps("named", value="a"))
    stack.up(config_maps("named", value="b"))
    assert stack.fake.deletes_reusing_name == [("named", True)]
    stack.fake.deletes_reusing_name.clear()
    # Removed; replaced by one made first under a new name; removed.
    stack.up(config_maps("auto", named=False, value="a"))
    stack.up(config_maps("auto", named=False, value="b"))
    stack.up(lambda p: None)
    assert [reusing for _, reusing in stack.fake.deletes_reusing_name] == [False] * 3
