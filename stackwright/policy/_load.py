"""Finding policy packs: built-in ones by name, a team's own from a directory of Python modules.

A pack module defines one or more `PolicyPack`s at module level; a module that
defines decorated policies but no pack becomes a pack named after the module.
Files starting with `_` are helpers, not packs: a pack module imports them (and any
module beside it) by name, `from _teams import TEAMS`, as a script imports its
neighbours.

Must never: let a broken pack module surface as a traceback (it is bad input: one
line naming the file and the error).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import traceback
from collections.abc import Iterable
from pathlib import Path

from stackwright.errors import UsageError, shown_path
from stackwright.policy._core import Policy, PolicyPack
from stackwright.policy.packs import BUILT_IN, built_in


def load_directory(path: str | Path) -> list[PolicyPack]:
    """The packs defined by the Python modules of a directory (or one .py file)."""
    folder = Path(path)
    if folder.is_file() and folder.suffix == ".py":
        files = [folder]
    elif folder.is_dir():
        files = sorted(p for p in folder.glob("*.py") if not p.name.startswith("_"))
    else:
        raise UsageError(
            f"--policy-pack {path}: no such directory; pass a directory of policy pack modules"
        )
    packs: list[PolicyPack] = []
    for file in files:
        packs.extend(_packs_of(file))
    if not packs:
        raise UsageError(
            # Not said as `--policy-pack`: a stack's policy:pack-dirs names folders too.
            f"policy pack folder {path} defines no policy pack; a module there must define a "
            "PolicyPack(...) or @policy functions"
        )
    return packs


def _packs_of(file: Path) -> list[PolicyPack]:
    digest = hashlib.sha256(str(file.resolve()).encode()).hexdigest()[:12]
    module_name = f"stackwright_policy_pack_{file.stem}_{digest}"
    spec = importlib.util.spec_from_file_location(module_name, file)
    if spec is None or spec.loader is None:  # pragma: no cover - .py files always have one
        raise UsageError(f"policy pack {file}: cannot be loaded as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    # Its folder first on the import path while it loads, as Python puts a script's.
    folder = str(file.parent.resolve())
    sys.path.insert(0, folder)
    try:
        spec.loader.exec_module(module)
    except UsageError as exc:
        raise UsageError(f"policy pack {file}: {exc}") from exc
    except Exception as exc:
        raise UsageError(f"policy pack {_where(file, exc)} failed to load: {_why(exc)}") from exc
    finally:
        sys.path.remove(folder)
    values = list(vars(module).values())
    packs = [v for v in values if isinstance(v, PolicyPack)]
    if packs:
        return packs
    policies = [v for v in values if isinstance(v, Policy)]
    return [PolicyPack(file.stem, policies)] if policies else []


def _where(file: Path, exc: Exception) -> str:
    """FILE:LINE of the pack's own line that failed (a syntax error's, or the last frame in
    the file), or FILE."""
    shown = shown_path(file)
    # The loader names the file by its absolute path (`--policy-pack packs` gives a relative one).
    own = os.path.abspath(file)
    if isinstance(exc, SyntaxError) and exc.lineno and os.path.abspath(exc.filename or "") == own:
        return f"{shown}:{exc.lineno}"
    frames = [
        f for f in traceback.extract_tb(exc.__traceback__) if os.path.abspath(f.filename) == own
    ]
    return f"{shown}:{frames[-1].lineno}" if frames else shown


def _why(exc: Exception) -> str:
    """The error, and for a module that is not there, where it should be."""
    if isinstance(exc, SyntaxError):
        return f"{type(exc).__name__}: {exc.msg}"
    text = f"{type(exc).__name__}: {exc}"
    if not isinstance(exc, ModuleNotFoundError) or not exc.name:
        return text
    if exc.name.startswith("_"):
        return f"{text}: put the helper module {exc.name}.py beside the pack"
    return f"{text}: install it in the Python environment stackwright runs in"


def select_packs(names: Iterable[str], directories: Iterable[str | Path] = ()) -> list[PolicyPack]:
    """Built-in packs by name, then the packs of each directory; names must be known."""
    chosen: list[PolicyPack] = []
    # A directory named twice (the stack's policy:pack-dirs and --policy-pack) is one.
    unique: dict[Path, str | Path] = {}
    for directory in directories:
        unique.setdefault(Path(directory).resolve(), directory)
    from_directories = [p for d in unique.values() for p in load_directory(d)]
    local = {p.name: p for p in from_directories}
    for name in names:
        pack = built_in(name)
        if pack is None and name not in local:
            known = ", ".join(sorted({*BUILT_IN, *local}))
            raise UsageError(f"policy pack {name!r} is not known; the packs are: {known}")
        if pack is not None:
            chosen.append(pack)
    chosen.extend(from_directories)
    seen: set[str] = set()
    for pack in chosen:
        if pack.name in seen:
            raise UsageError(f"policy pack {pack.name} is given twice; give each pack once")
        seen.add(pack.name)
    # Levels, settings and exemptions name a policy by its name or ID: two packs' policies
    # of one name would be set, and exempted, together.
    holders: dict[str, str] = {}
    for pack in chosen:
        for each in pack.policies:
            for name in sorted(each.names()):
                other = holders.setdefault(name, pack.name)
                if other != pack.name:
                    raise UsageError(
                        f"policy {name} is in packs {other} and {pack.name}: give one of them "
                        "another name (levels, settings and exemptions name a policy by its "
                        "name, so they would apply to both)"
                    )
    return chosen
