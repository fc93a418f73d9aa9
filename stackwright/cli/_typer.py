"""Keep typer from paying, on every command, for what the command does not need.

typer (0.29) converts every parameter value through a pydantic `TypeAdapter`, built the
first time the parameter is processed — including a missing option's `None` and an
option's own default. Importing pydantic and building the adapters is ~50 ms of every
command, a tenth of a no-op `up`. `install()` wraps typer's runtime conversion so that:

* a missing value (`None`) takes typer's own path, which returns before converting;
* a `str` value of a plain `str` parameter, and an `int` value of a plain `int` parameter
  within its `min`/`max`, are returned as they are — what the adapter returns for them;
* a `str` value of an `int` or `float` parameter (what the command line gives: `--parallel
  8`) is read as Python reads a number; one that is none, or is outside the option's
  `min`/`max`, is refused in the CLI's words (`--parallel abc: give a whole number, 1 or
  more`), where pydantic's said "Input should be a valid integer, unable to parse string as
  an integer" without the value given;
* everything else (other types, values to convert, values out of range, custom parsers,
  files) is converted by typer's adapter, built when first needed, as before.

typer also reads each command's parameters twice while it builds the CLI — for the
command's options, then again for its callback, which only needs their names — and each
read evaluates every annotation of the function twice (`inspect.signature(eval_str=True)`
and `get_type_hints`): ~23 ms of every command, `up` included. `install()` makes the second
of two reads in a row of the same function return the first one's answer (~9 ms less), and
evaluates each annotation once, before typer reads them: the CLI's modules postpone their
annotations (`from __future__ import annotations`), so each read compiled every one of
them again (~1 ms of `up`).

typer 0.29's help prints every parameter's Python type in angle brackets — `<bool>` beside
each flag, `<str>`, `<list[str]>` —, which reads like a signature, not a CLI. `install()`
makes help show no type for a flag (it takes no value) and click's words for the others
(`TEXT`, `INTEGER`, `PATH`, choices as `a|b`), as kubectl and the rest of click's CLIs do.

typer builds the click command of every command of the CLI before it parses the command
line (~20 ms: each function's signature, annotations and options), to run one of them.
`install()` makes a group build each of its commands when it is first looked up: `stack
ls` builds the `stack` group and its `ls`; `--help` and a mistyped name, which list them
all, build them all — the same commands, so help and messages read as before.

If typer's internals differ (another version), `install()` leaves typer as it is.
"""

from __future__ import annotations

import contextlib
import copy
import functools
from typing import Any

_installed = False


def install() -> None:
    global _installed
    if _installed:
        return
    _installed = True
    try:
        from typer import _coercion, core, main
    except ImportError:  # pragma: no cover - another typer version
        return
    _read_parameters_once(main)
    _build_commands_on_lookup(main)
    _help_types(core)
    build: Any = getattr(core, "build_runtime_param", None)
    base = getattr(_coercion, "RuntimeParam", None)
    refuse: Any = getattr(_coercion, "UsageError", None)
    if build is None or base is None or refuse is None or not hasattr(base, "_coerce_value"):
        return  # pragma: no cover - another typer version

    class DeferredRuntimeParam(base):  # type: ignore[misc, valid-type]
        """typer's conversion of one parameter, with its adapter built on first need."""

        _descriptor: Any
        _built: Any

        def __init__(self, descriptor: Any) -> None:
            super().__init__(
                parameter_info=descriptor.parameter_info, annotation=descriptor.annotation
            )
            object.__setattr__(self, "_descriptor", descriptor)
            object.__setattr__(self, "_built", None)

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            info = self.parameter_info
            if getattr(info, "parser", None) is None and getattr(info, "click_type", None) is None:
                annotation = self.annotation
                if annotation is str and type(value) is str:
                    return value
                if annotation in _NUMBERS and type(value) is str and not getattr(info, "clamp", 0):
                    return _number(value, annotation, info, param, ctx, refuse)
                if annotation is int and type(value) is int:
                    low, high = getattr(info, "min", None), getattr(info, "max", None)
                    if (low is None or value >= low) and (high is None or value <= high):
                        return value
            built = self._built
            if built is None:
                built = build(self._descriptor)
                object.__setattr__(self, "_built", built)
            return built._coerce_value(value, param=param, ctx=ctx)

    def build_runtime_param(descriptor: Any) -> Any:
        if descriptor.file_annotation is not None:
            return build(descriptor)
        return DeferredRuntimeParam(descriptor)

    core.build_runtime_param = build_runtime_param  # type: ignore[attr-defined]


#: The number types an option's value is read as here, and what the user is asked for.
_NUMBERS: dict[Any, str] = {int: "a whole number", float: "a number"}


def _number(text: str, kind: Any, info: Any, param: Any, ctx: Any, refuse: Any) -> Any:
    """`text`, given for an option of type `kind` (int or float), as that number; one that
    is none, or out of the option's range, refused with click's usage error (`refuse`) in
    one line that names the option, the value and what to give instead."""
    low, high = getattr(info, "min", None), getattr(info, "max", None)
    try:
        number = kind(text)
    except ValueError:
        number = None
    if number is not None and (low is None or number >= low) and (high is None or number <= high):
        return number
    wanted = _NUMBERS[kind]
    if low is not None and high is not None:
        wanted += f" from {low} to {high}"
    elif low is not None:
        wanted += f", {low} or more"
    elif high is not None:
        wanted += f", {high} or less"
    option = max(getattr(param, "opts", None) or [str(getattr(param, "name", ""))], key=len)
    raise refuse(f"{option} {text}: give {wanted}", ctx)


def _read_parameters_once(main: Any) -> None:
    """typer builds a command from `get_params_from_function(callback)` and asks it again
    at once for the callback's wrapper: one cached answer, the last function's, serves both
    (neither changes what it gets). Nothing is kept from one command to the next."""
    read = getattr(main, "get_params_from_function", None)
    if read is None or not callable(read):
        return  # pragma: no cover - another typer version

    @functools.lru_cache(maxsize=1)
    def read_evaluated(function: Any) -> Any:
        _evaluate_annotations(function)
        return read(function)

    main.get_params_from_function = read_evaluated


def _evaluate_annotations(function: Any) -> None:
    """`function`'s annotations as the objects they name (what `inspect.signature(eval_str=
    True)` and `get_type_hints` make of them), evaluated once; one that does not evaluate
    is left for typer to report, as before."""
    annotations = getattr(function, "__annotations__", None)
    if not isinstance(annotations, dict):
        return  # pragma: no cover - not a function
    for name, annotation in annotations.items():
        if isinstance(annotation, str):
            with contextlib.suppress(Exception):  # typer's own evaluation says what is wrong
                annotations[name] = eval(annotation, function.__globals__)


class _Unbuilt:
    """A command typer has not built yet, and how to build it."""

    def __init__(self, build: Any) -> None:
        self.build = build


class _CommandsOnLookup(dict[str, Any]):
    """A group's commands by name, each built on its first lookup (click reads them through
    `get`, `items` and `[name]`; `list_commands` gives names in the order they were added)."""

    def __getitem__(self, name: str) -> Any:
        command = super().__getitem__(name)
        if isinstance(command, _Unbuilt):
            command = command.build()
            self[name] = command
        return command

    def get(self, name: str, default: Any = None) -> Any:
        if name not in self:
            return default
        return self[name]

    def items(self) -> Any:
        return [(name, self[name]) for name in self]

    def values(self) -> Any:
        return [self[name] for name in self]


def _build_commands_on_lookup(main: Any) -> None:
    build_group = getattr(main, "get_group_from_info", None)
    build_command = getattr(main, "get_command_from_info", None)
    name_of = getattr(main, "get_command_name", None)
    if build_group is None or build_command is None or name_of is None:
        return  # pragma: no cover - another typer version

    def get_group_from_info(info: Any, **settings: Any) -> Any:
        app = info.typer_instance
        if any(not group.name for group in app.registered_groups):
            return build_group(info, **settings)  # its commands merge into this group's
        command_settings = {k: v for k, v in settings.items() if k != "suggest_commands"}
        commands = _CommandsOnLookup()
        for command in app.registered_commands:
            name = command.name or name_of(command.callback.__name__)
            commands[name] = _Unbuilt(
                functools.partial(build_command, command_info=command, **command_settings)
            )
        for group in app.registered_groups:
            commands[group.name] = _Unbuilt(
                functools.partial(get_group_from_info, group, **settings)
            )
        # The group itself (options, callback, help) as typer builds it, without commands.
        bare = copy.copy(info)
        bare.typer_instance = copy.copy(app)
        bare.typer_instance.registered_commands = []
        bare.typer_instance.registered_groups = []
        group = build_group(bare, **settings)
        group.commands = commands
        return group

    main.get_group_from_info = get_group_from_info


_HELP_WORDS = {"str": "TEXT", "int": "INTEGER", "float": "NUMBER", "bool": "BOOLEAN"}


def _help_word(label: str) -> str:
    """click's word for typer's type label: `<list[str]>` -> TEXT, `<int range>` -> INTEGER
    RANGE, `<path>` -> PATH; a choice's `a|b` stays as it is."""
    inner = label.removeprefix("<").removesuffix(">")
    if inner.startswith("list[") and inner.endswith("]"):
        inner = inner[5:-1]
    head, _, rest = inner.partition(" ")
    if "|" in head:
        return inner
    word = _HELP_WORDS.get(head, head.upper())
    return f"{word} {rest.upper()}" if rest else word


def _help_types(core: Any) -> None:
    parameter: Any = getattr(core, "_TyperParameter", None)
    original = getattr(parameter, "display_type", None)
    if original is None:
        return  # pragma: no cover - another typer version

    def display_type(self: Any, ctx: Any) -> str | None:
        if getattr(self, "is_flag", False):
            return None
        label = original(self, ctx)
        return _help_word(label) if isinstance(label, str) else label

    parameter.display_type = display_type
