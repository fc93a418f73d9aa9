"""Modules and names imported when first used, so that light commands start fast.

`import stackwright` and `import stackwright.automation` happen in every command of the
CLI, and the CLI's commands module is imported by every command; most commands (`--version`,
`stack ls`, `cluster list`) use neither the programming model nor the engine, which are
~0.1 s of imports. Type checkers see the real modules and names through the importer's
`if TYPE_CHECKING:` imports. This module must import nothing of Stackwright.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any


def lazy_exports(
    package: str, sources: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The `__getattr__` and `__dir__` of `package`, whose name N is `sources[N]`'s N, or
    the module `sources[N]` itself when its own name is N (`sw.log`)."""

    def __getattr__(name: str) -> Any:
        source = sources.get(name)
        if source is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module = importlib.import_module(source)
        value = module if source.rpartition(".")[2] == name else getattr(module, name)
        setattr(sys.modules[package], name, value)  # later lookups skip this function
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *sources})

    return __getattr__, __dir__


class _Unloaded(ModuleType):
    """A module not run yet: the first attribute access runs it, once, whatever the thread.

    `importlib.util.LazyLoader` before Python 3.12 makes the module plain before running
    it, so a second thread reaching it meanwhile finds it half made (an AttributeError for
    a name defined further down); here the module stays unloaded until it has run, and
    the threads that reach it meanwhile wait. The thread running it reads what it has
    defined so far, as an import would let it."""

    def __getattribute__(self, attr: str) -> Any:
        state = object.__getattribute__(self, "__spec__").loader_state
        with state["lock"]:
            if type(self) is _Unloaded and not state["running"]:
                state["running"] = True
                try:
                    _run(self, state)
                finally:
                    state["running"] = False
                object.__setattr__(self, "__class__", ModuleType)
        return ModuleType.__getattribute__(self, attr)

    def __delattr__(self, attr: str) -> None:
        self.__getattribute__(attr)  # run first: the name is deleted from the module run
        ModuleType.__delattr__(self, attr)


def _run(module: ModuleType, state: dict[str, Any]) -> None:
    """Run `module`, keeping what was set on it before (`LazyLoader`'s own rule)."""
    spec = object.__getattribute__(module, "__spec__")
    now = object.__getattribute__(module, "__dict__")
    before = state["__dict__"]
    updated = {k: v for k, v in now.items() if k not in before or before[k] is not v}
    kept = dict(now)
    try:
        spec.loader.exec_module(module)
    except BaseException:
        # As a failed import leaves no module: the next access runs it anew, and what this
        # run defined would otherwise count as set before and override what that one does.
        now.clear()
        now.update(kept)
        raise
    now.update(updated)


def lazy_module(name: str) -> ModuleType:
    """Module `name`, run on its first attribute access (as `importlib.util.LazyLoader`,
    but safe when threads reach it at once: `_Unloaded`)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        raise ModuleNotFoundError(f"no module named {name!r}", name=name)
    spec.loader = importlib.util.LazyLoader(spec.loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)  # puts the real loader back, and notes the module's dict
    spec.loader_state.update(lock=threading.RLock(), running=False)
    module.__class__ = _Unloaded
    parent, _, child = name.rpartition(".")
    if parent:  # as an import binds it: `import stackwright.policy` then `stackwright.policy.X`
        setattr(sys.modules[parent], child, module)
    return module
