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


def lazy_module(name: str) -> ModuleType:
    """Module `name`, run on its first attribute access (`importlib.util.LazyLoader`)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        raise ModuleNotFoundError(f"no module named {name!r}", name=name)
    spec.loader = importlib.util.LazyLoader(spec.loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    parent, _, child = name.rpartition(".")
    if parent:  # as an import binds it: `import stackwright.policy` then `stackwright.policy.X`
        setattr(sys.modules[parent], child, module)
    return module
