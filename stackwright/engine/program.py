"""Running a user's program: it declares resources; nothing is applied while it runs.

The program's file is executed as `__main__` with its folder on `sys.path`, inside
a fresh `Program` context. An exception from the program becomes one line naming
the program file and line, so the user never sees Stackwright's own frames.
Modules the program imported from its own folder are forgotten afterwards, so a
second run (of this program or another, in the same process) imports them afresh.
"""

from __future__ import annotations

import difflib
import inspect
import os
import re
import runpy
import sys
import traceback
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from stackwright.errors import StackwrightError, UsageError, located, redact, shown_path
from stackwright.sdk.config import ConfigurationError
from stackwright.sdk.context import Program, running
from stackwright.sdk.resource import error_text, in_package


def run_program(
    main: Path,
    *,
    project: str,
    stack: str,
    config: Mapping[str, Any] | None = None,
    secret_keys: frozenset[str] = frozenset(),
    secret_parts: Mapping[str, tuple[Any, ...]] | None = None,
    read_stack: Callable[[str], Mapping[str, Any]] | None = None,
    provider_namespace: Callable[[Mapping[str, Any] | None], str | None] | None = None,
    dry_run: bool = True,
    log: Callable[[str, str, str], None] | None = None,
) -> Program:
    """Run the program at `main` (a Python file, a folder with `__main__.py`, or a YAML
    program) and return what it declared; `dry_run` False only for an `up` that applies.
    `log(severity, message, urn)` is handed each message the program logs as it runs (a
    program that then fails has said them), else they are kept in `Program.logged`."""
    path = main / "__main__.py" if main.is_dir() else main
    if not path.is_file():
        raise UsageError(
            f"program {shown_path(path)} does not exist: set `main` in Stackwright.yaml to the "
            "program's file"
        )
    is_yaml = path.suffix in (".yaml", ".yml")  # what a `runtime: yaml` project's main is
    program = Program(
        project=project,
        stack=stack,
        config=dict(config or {}),
        secret_keys=secret_keys,
        secret_parts=dict(secret_parts or {}),
        runtime="yaml" if is_yaml else "python",
        read_stack=read_stack,
        provider_namespace=provider_namespace,
        dry_run=dry_run,
    )
    program.log_to(log)
    if is_yaml:
        from stackwright.engine.yaml_program import run_yaml_program  # only YAML projects pay

        with running(program):
            run_yaml_program(path)
        return program
    folder = str(path.parent.resolve())
    modules_before = set(sys.modules)
    sys.path.insert(0, folder)
    try:
        with running(program):
            runpy.run_path(str(path), run_name="__main__")
    except ConfigurationError as exc:
        # Said at the line that reads the key, as the program's other mistakes are: a
        # program reads many keys, some in modules of its own.
        exc.args = (located(_where(exc, path), str(exc)),)
        raise
    except StackwrightError:
        raise
    except SystemExit as exc:
        if exc.code not in (0, None):
            how = f"with status {exc.code}" if isinstance(exc.code, int) else f"saying {exc.code!r}"
            raise UsageError(
                f"the program {shown_path(path)} exited {how} before finishing"
            ) from None
    except Exception as exc:  # the program's own bug: one line, pointing at its code
        raise UsageError(_describe(exc, path)) from exc
    finally:
        if sys.path and sys.path[0] == folder:
            sys.path.pop(0)
        _forget_modules(set(sys.modules) - modules_before, folder)
    return program


def _forget_modules(names: set[str], folder: str) -> None:
    """Drop the modules a run imported from the program's own code."""
    for name in names:
        filename = getattr(sys.modules.get(name), "__file__", None)
        if isinstance(filename, str) and _in_project(filename, folder):
            del sys.modules[name]


def _in_project(filename: str, folder: str) -> bool:
    """Whether a code file is the user's: under the program's folder, but neither Stackwright
    nor an installed package (a project may keep its virtualenv inside its folder)."""
    real = os.path.realpath(filename)
    return (
        real.startswith(folder + os.sep)
        and not in_package(filename)
        and not any(part in ("site-packages", "dist-packages") for part in Path(real).parts)
    )


def _where(exc: BaseException, path: Path) -> str:
    """`FILE:LINE` of the innermost line of the user's own code (in the program's folder) that
    `exc` passed through, else of the innermost outside Stackwright, else the program's file."""
    frames = traceback.extract_tb(exc.__traceback__)
    folder = str(path.parent.resolve())
    outside = [f for f in frames if not in_package(f.filename) and not _is_python(f.filename)]
    user = [f for f in outside if _in_project(f.filename, folder)] or outside
    return f"{user[-1].filename}:{user[-1].lineno}" if user else str(path)


def _describe(exc: BaseException, path: Path) -> str:
    """`FILE:LINE: the program failed: Error: message`, FILE:LINE being the innermost line
    of the user's own code (in the program's folder), else the innermost outside Stackwright."""
    where = _where(exc, path)
    text = error_text(exc) + _keyword_hint(exc) + (_pulumi_hint(exc) or _name_hint(exc))
    if isinstance(exc, SyntaxError) and exc.filename and exc.lineno:
        # The code that failed to compile is not in the traceback: the error says where it is.
        where, text = (
            f"{exc.filename}:{exc.lineno}",
            f"{type(exc).__name__}: {redact(str(exc.msg))}",
        )
    return located(where, f"the program failed: {text}")


#: Keyword arguments of Pulumi's classes that Stackwright's leave out on purpose, and why
#: (what to write instead).
_PULUMI_KEYWORDS: dict[tuple[str, str], str] = {
    ("Provider", "enable_server_side_apply"): "Stackwright always applies server-side "
    "(field manager `stackwright`): drop it",
    ("Provider", "enable_config_map_mutable"): "Stackwright always updates a ConfigMap in "
    'place: drop it (replace_on_changes=["data"] on one replaces it, as Pulumi does by default)',
    ("Provider", "render_yaml_to_directory"): "Stackwright has no render-to-YAML provider: "
    "`stackwright preview --diff` shows the objects, `stackwright stack export` the state",
    ("Provider", "delete_unreachable"): "Stackwright has no such option: `stackwright "
    "refresh` forgets objects that are gone, `stackwright state delete URN` one record",
    ("Provider", "suppress_deprecation_warnings"): "Stackwright has no such option: drop it",
    ("Provider", "cluster"): "`cluster` names a local cluster in configuration "
    "(`stackwright config set kubernetes:cluster NAME`); a Provider takes kubeconfig=, "
    "context= and namespace=",
    ("Alias", "no_parent"): "write parent=None for a resource that had no parent",
    **dict.fromkeys(
        (("ResourceOptions", "version"), ("ResourceOptions", "plugin_download_url")),
        "Stackwright has no provider plugins to pin or download: drop it",
    ),
    ("ResourceOptions", "transformations"): "write transforms=[fn], Pulumi's newer "
    "spelling: fn takes sw.ResourceTransformArgs (no `resource`) and returns "
    "sw.ResourceTransformResult(props, opts) or None",
}

_UNEXPECTED_KEYWORD = re.compile(r"^([\w.]+)\(\) got an unexpected keyword argument '(\w+)'$")


def _keyword_hint(exc: BaseException) -> str:
    """` (did you mean 'data'?)` for a misspelt keyword argument of one of Stackwright's
    classes (`k8s.core.v1.ConfigMap("x", dta=...)`, `sw.ResourceOptions(dependson=...)`),
    as YAML programs hint at misspelt fields; a camelCase spelling of a keyword is told its
    snake_case name. Python 3.11 names only the function, so the class is looked for by
    name among Stackwright's modules the program loaded."""
    found = _UNEXPECTED_KEYWORD.match(str(exc)) if isinstance(exc, TypeError) else None
    if found is None:
        return ""
    function, word = found.groups()
    qualname = function.removesuffix(".__init__")
    keywords: set[str] = set()
    ours = False
    for name, module in list(sys.modules.items()):
        if not name.startswith("stackwright.") or module is None:
            continue
        cls = vars(module).get(qualname.partition(".")[0])  # no lazy-import hook runs
        if isinstance(cls, type) and cls.__qualname__ == qualname:
            keywords |= _keywords(cls)
            ours = True
    if ours and (qualname, word) in _PULUMI_KEYWORDS:
        return f"; {_PULUMI_KEYWORDS[qualname, word]}"
    snake = re.sub(r"(?<=[a-z0-9])([A-Z])", lambda m: "_" + m[1].lower(), word)
    if snake != word and snake in keywords:
        return f" (did you mean {snake!r}? top-level arguments are in snake_case)"
    close = difflib.get_close_matches(word, sorted(keywords), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


#: What a Pulumi program ported to Stackwright writes that Stackwright spells otherwise or
#: leaves out on purpose, by the name it misses (`owner.name`, the owner a module or class):
#: the hint says what to write instead. An `Args` class is handled apart, by its name.
_PULUMI_SPELLINGS: dict[str, str] = {
    # Programs run without Pulumi: one package stands for both of Pulumi's.
    "pulumi": "Stackwright runs Pulumi-style programs without Pulumi: write "
    "`import stackwright as sw` for `import pulumi`",
    "pulumi_kubernetes": "Stackwright runs Pulumi-style programs without Pulumi: write "
    "`import stackwright.kubernetes as k8s` for `import pulumi_kubernetes as k8s`",
    "pulumi_random": "Stackwright has no pulumi_random: `stackwright.kx.RandomPassword` "
    "makes a password, kept secret in the state",
    # Kubernetes' ObjectMeta has no kind of its own: metadata is a dict.
    "stackwright.kubernetes.meta": "metadata is a plain dict in Kubernetes' spelling, "
    'metadata={"name": ..., "labels": {...}} (typed as '
    "stackwright.kubernetes.inputs.meta_v1.ObjectMetaDict)",
    # One class per kind of import, without Pulumi's version modules (yaml.v2, helm.v4, …).
    **dict.fromkeys(
        ("stackwright.kubernetes.yaml.v1", "stackwright.kubernetes.yaml.v2"),
        "Stackwright has no version modules here: `k8s.yaml.ConfigFile` and "
        "`k8s.yaml.ConfigGroup` (as Pulumi's yaml.v2)",
    ),
    **dict.fromkeys(
        ("stackwright.kubernetes.helm.v3", "stackwright.kubernetes.helm.v4"),
        "Stackwright has no version modules here: `k8s.helm.Chart` renders a chart into "
        "objects (as Pulumi's helm.v4.Chart), `k8s.helm.Release` installs a release (as "
        "helm.v3.Release)",
    ),
    "stackwright.kubernetes.kustomize.v2": "Stackwright has no version modules here: "
    "`k8s.kustomize.Directory`",
    # helm.v3.Chart's (release_name, config, opts): its config's fields are the chart's own.
    **dict.fromkeys(
        ("stackwright.kubernetes.helm.ChartOpts", "stackwright.kubernetes.helm.LocalChartOpts"),
        "Stackwright has no ChartOpts: pass its fields to k8s.helm.Chart as keyword "
        "arguments, Chart(name, chart=..., values=..., namespace=..., opts=...) (LocalChartOpts' "
        "path is chart=; FetchOpts' repo and version are repository_opts={'repo': ...} and "
        "version=)",
    ),
    "stackwright.kubernetes.helm.FetchOpts": "Stackwright has no FetchOpts: give "
    "k8s.helm.Chart repository_opts={'repo': URL, 'username': ..., 'password': ...} and "
    "version=",
    "stackwright.kubernetes.helm.RepositoryOptsArgs": "repository_opts is a plain dict: "
    "repository_opts={'repo': URL, 'username': ..., 'password': ...}",
    "stackwright.ROOT_STACK_RESOURCE": "for an alias of a resource that had no parent, "
    "write sw.Alias(parent=None)",
    # Pulumi's `runtime` module holds engine plumbing; a program uses only this of it.
    # DESIGN.md: anything computed from a secret is a secret.
    "Output.unsecret": "a secret stays secret in Stackwright, and so does anything computed "
    "from it; `stackwright stack output --show-secrets` shows its value",
    "stackwright.runtime": "write sw.is_dry_run() for pulumi.runtime.is_dry_run(); "
    "Stackwright has no other runtime settings a program reads",
}

_CANNOT_IMPORT = re.compile(r"^cannot import name '(\w+)' from '([\w.]+)'")


def _pulumi_hint(exc: BaseException) -> str:
    """`; <what to write instead>` for a Pulumi idiom Stackwright spells otherwise or leaves
    out on purpose (`_PULUMI_SPELLINGS`, and Pulumi's `...Args` classes)."""
    missing = _missing_name(exc)
    if missing is None:
        return ""
    owner, name = missing
    for key in (f"{owner}.{name}", owner, owner.partition(".")[0]):
        if key in _PULUMI_SPELLINGS:
            return f"; {_PULUMI_SPELLINGS[key]}"
    if not (owner.startswith("stackwright.kubernetes") and name.endswith("Args")):
        return ""
    what = name.removesuffix("Args").removesuffix("Init")
    module = sys.modules.get(owner)
    kind = getattr(module, what, None)
    if isinstance(kind, type):  # `ConfigMapArgs`: a kind's own args
        fields = ", ".join(f"{k}=..." for k in sorted(_keywords(kind) - {"opts", "resource_name"}))
        return (
            f"; Stackwright has no Pulumi args classes: pass {what}'s fields as keyword "
            f'arguments, {what}("name", {fields})'
        )
    typed_as = f" (typed as {owner}.{what}Dict)" if hasattr(module, f"{what}Dict") else ""
    return (
        f"; Stackwright has no Pulumi args classes: write {what}'s fields as a plain dict "
        f"in Kubernetes' camelCase{typed_as}, or a lightkube model"
    )


def _name_hint(exc: BaseException) -> str:
    """` (did you mean 'k8s'?)` for a misspelt name (NameError) or attribute
    (AttributeError: `k8s.apps.v1.Deploymnet`), as Python's own traceback suggests it
    (Python 3.11 prints the suggestion but its `traceback` module does not make it), when
    the message is Python's own."""
    name = getattr(exc, "name", None)
    if not isinstance(name, str) or not name:
        return ""
    if isinstance(exc, NameError):
        tb = exc.__traceback__
        while tb is not None and tb.tb_next is not None:
            tb = tb.tb_next
        if tb is None:
            return ""
        frame = tb.tb_frame
        candidates = {*frame.f_locals, *frame.f_globals, *frame.f_builtins}
    elif (
        isinstance(exc, AttributeError)
        and getattr(exc, "obj", None) is not None
        and f"has no attribute {name!r}" in str(exc)
    ):
        # Python's own message only: an object that explains a missing attribute itself (an
        # Output's field check names the closest fields) needs no guess from its methods.
        try:
            candidates = set(dir(exc.obj))
        except Exception:  # the program's own __dir__ may fail: no hint then
            return ""
    else:
        return ""
    public = sorted(c for c in candidates if not c.startswith("__") and c != name)
    close = difflib.get_close_matches(name, public, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _missing_name(exc: BaseException) -> tuple[str, str] | None:
    """(owner, name) of the module, package or attribute an error says is missing: a
    module or class's dotted name, and the name it lacks (or "" for a missing module)."""
    if isinstance(exc, ModuleNotFoundError) and exc.name:
        owner, _, name = exc.name.rpartition(".")
        return (owner, name) if owner else (name, "")
    if isinstance(exc, ImportError) and (found := _CANNOT_IMPORT.match(str(exc))):
        return found[2], found[1]
    if isinstance(exc, AttributeError) and isinstance(exc.name, str):
        obj = getattr(exc, "obj", None)
        called = getattr(obj, "__name__", None)
        if isinstance(obj, type) and obj.__module__.startswith("stackwright."):
            return obj.__name__, exc.name
        if isinstance(called, str) and called.startswith("stackwright"):
            return called, exc.name
    return None


def _keywords(cls: type) -> set[str]:
    try:
        parameters = inspect.signature(cls).parameters.values()
    except (TypeError, ValueError):
        return set()
    return {p.name for p in parameters if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)}


def _is_python(filename: str) -> bool:
    """Whether a frame is Python's own machinery (runpy, the import system, codecs)."""
    return filename.startswith("<frozen ") or os.path.abspath(filename) == os.path.abspath(
        runpy.__file__ or ""
    )
