"""Resources as a program declares them: `Resource`, `CustomResource`, `ComponentResource`.

Declaring a resource registers it with the running program's `Program` (see
`context`); nothing is sent anywhere while the program runs. A resource's
properties are Outputs that the engine resolves against its live object after it
is applied, so `deployment.status`, `svc.spec["clusterIP"]` or
`ns.metadata["name"]` can feed other resources' inputs.

Must never: perform I/O, or let a declaration error escape without naming the
resource and the program line that declared it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import inspect
import math
import os
import re
import sys
import threading
import traceback
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from types import EllipsisType, FrameType
from typing import Any, ClassVar

from stackwright import interrupts
from stackwright.errors import (
    StackwrightError,
    UsageError,
    located,
    redact,
    remember_secret,
    shown_path,
)
from stackwright.model import make_urn, parse_urn
from stackwright.sdk.output import (
    InputMarks,
    Output,
    Schema,
    SecretCallbackError,
    StateReader,
    input_marks,
    parse_path,
    placed,
    select,
)
from stackwright.sdk.spelling import PYTHON, Spelling


@dataclass(frozen=True)
class CustomTimeouts:
    """How long to wait for a create, update or delete: seconds, or a duration as Pulumi
    writes it (`"5m"`, `"1h30m"`, `"45s"`); None keeps the default."""

    create: float | str | None = None
    update: float | str | None = None
    delete: float | str | None = None


_DURATION = re.compile(r"(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m)?(?:(\d+(?:\.\d+)?)s)?")


def _seconds(value: Any, what: str) -> float | None:
    """A timeout in seconds from a number or a duration string; a UsageError otherwise."""
    if value is None:
        return None
    if (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and 0 < value < math.inf  # nan and inf too: no wait ends
    ):
        return float(value)
    if isinstance(value, str) and value.strip():
        found = _DURATION.fullmatch(value.strip())
        if found and any(found.groups()):
            hours, minutes, seconds = (float(g) if g else 0.0 for g in found.groups())
            total = hours * 3600 + minutes * 60 + seconds
            if total > 0:
                return total
    raise UsageError(
        f'{what} must be a positive number of seconds or a duration like "5m" or '
        f'"1h30m" (got {value!r})'
    )


@dataclass(frozen=True)
class Alias:
    """A URN the resource had before, as Pulumi's `Alias`: what changed is given, the rest is
    the resource's own. `parent=None` means it had no parent; left out, the parent it has now.
    A component's aliases carry its children along (their URNs hold its type)."""

    name: str | None = None
    type_: str | None = None
    parent: Resource | str | EllipsisType | None = ...
    stack: str | None = None
    project: str | None = None


@dataclass(frozen=True)
class ResourceOptions:
    """How the engine treats a resource, as Pulumi's options of the same names."""

    depends_on: Sequence[Resource] = ()
    parent: Resource | None = None
    provider: Resource | None = None
    #: Refuse to delete or replace it. None (unset) is its parent's, as Pulumi's: the
    #: children of a protected component are protected unless they say `protect=False`.
    protect: bool | None = None
    ignore_changes: Sequence[str] = ()
    replace_on_changes: Sequence[str] = ()
    delete_before_replace: bool = False
    retain_on_delete: bool = False
    custom_timeouts: CustomTimeouts | None = None
    aliases: Sequence[str | Alias] = ()
    import_: str | None = None
    #: Take over fields other managers own (server-side apply force). None (unset) is its
    #: parent's, as Pulumi's `protect`: a child's own `force=False` keeps it unforced.
    force: bool | None = None
    #: Read the existing object of this ID (`namespace/name`, or `name`) instead of managing
    #: one, as Pulumi's option of that name (`Kind.get(name, id)` sets it): nothing is
    #: declared, written or deleted; its outputs are the live object.
    id: str | None = None
    #: Top-level fields (`data`, `spec`, `status`) whose values are secret, as those of a
    #: secret input are: `[secret]` wherever shown, encrypted in the state.
    additional_secret_outputs: Sequence[str] = ()
    #: Deleted together with this resource (its Namespace, or the CRD of its kind), the
    #: object goes with it: no delete call of its own, only its record is removed, once
    #: that resource's object is gone.
    deleted_with: Resource | None = None
    #: Callables that may change this resource's properties and options, and its
    #: children's, before it is registered (Pulumi's `transforms`).
    transforms: Sequence[ResourceTransform] = ()
    #: Pulumi's providers by package (`{"kubernetes": p}` or `[p]`), as components take them:
    #: Stackwright has the one package, so it stands for `provider=p`.
    providers: Sequence[Resource] | Mapping[str, Resource] = ()

    def __post_init__(self) -> None:
        # Pulumi's list options default to None, so a ported program passes None for "none"
        # (`aliases=[...] if renamed else None`); taken as () here, where every path starts
        # (a program's options, a transform's, a merge's, `replace`'s), nothing after
        # needs to ask.
        for name in _LIST_OPTIONS:
            if getattr(self, name) is None:
                object.__setattr__(self, name, ())

    @staticmethod
    def merge(first: ResourceOptions | None, second: ResourceOptions | None) -> ResourceOptions:
        """Pulumi's `ResourceOptions.merge`, as components use it: the lists of both
        (`depends_on`, `aliases`, `ignore_changes`, `replace_on_changes`), and every other
        option from `second` where it is set (not left at its default), else from `first`."""
        if first is None or second is None:
            return first or second or ResourceOptions()
        changes: dict[str, Any] = {}
        for option in fields(ResourceOptions):
            early, late = getattr(first, option.name), getattr(second, option.name)
            if option.name in _LIST_OPTIONS:
                changes[option.name] = tuple(dict.fromkeys((*_listed(early), *_listed(late))))
            elif late != option.default:
                changes[option.name] = late
        return replace(first, **changes)

    def merged_with(self, parent: ResourceOptions | None) -> ResourceOptions:
        """Children inherit their parent's provider unless they name their own (Pulumi's
        rule), and its `force` unless they set their own (as Pulumi's `protect`): a
        ConfigFile, Chart or any component forced takes over conflicting fields in every
        object it declares, as `kubectl apply --server-side --force-conflicts -f FILE` does
        in every object of the file; one its transformation sets `force=False` stays out."""
        changes: dict[str, Any] = {}
        if self.protect is None:  # its own False stays; a read (`id=`) guards nothing
            changes["protect"] = bool(parent is not None and parent.protect and self.id is None)
        if parent is not None:
            if self.provider is None and parent.provider is not None:
                changes["provider"] = parent.provider
            if parent.force and self.force is None:  # its own False stays, as protect's
                changes["force"] = True
        return replace(self, **changes) if changes else self


#: Options that are True or False.
_BOOL_OPTIONS = ("protect", "delete_before_replace", "retain_on_delete", "force")
#: Of those, the ones a child left unset takes from its parent (`merged_with`).
_INHERITED = frozenset({"protect", "force"})

#: Options that hold lists, which `ResourceOptions.merge` joins.
_LIST_OPTIONS = frozenset(
    {
        "depends_on",
        "aliases",
        "ignore_changes",
        "replace_on_changes",
        "additional_secret_outputs",
        "transforms",
        "providers",
    }
)


def _listed(value: Any) -> tuple[Any, ...]:
    """A list option as a tuple; one item given alone (`depends_on=db`) as a tuple of one."""
    if isinstance(value, Mapping):  # `providers` by package
        return tuple(value.values())
    return (
        (value,) if isinstance(value, str | Resource | Alias) or callable(value) else tuple(value)
    )


@dataclass(frozen=True)
class ResourceTransformArgs:
    """What a transform is given (Pulumi's of that name): the resource's kind of resource,
    type token, name, properties (a Kubernetes object: `apiVersion`, `kind`, `metadata`, …)
    and options."""

    custom: bool
    type_: str
    name: str
    props: dict[str, Any]
    opts: ResourceOptions


@dataclass(frozen=True)
class ResourceTransformResult:
    """What a transform returns to change a resource: its new properties and options."""

    props: Mapping[str, Any]
    opts: ResourceOptions


#: A transform (a plain or an `async def` function): None leaves the resource as it is.
ResourceTransform = Callable[
    [ResourceTransformArgs],
    ResourceTransformResult | Awaitable[ResourceTransformResult | None] | None,
]


def register_resource_transform(transform: ResourceTransform) -> None:
    """Apply `transform` to every resource the program declares after this call (Pulumi's
    `pulumi.runtime.register_resource_transform`), after the resources' own transforms and
    their parents'."""
    from stackwright.sdk.context import current_program

    if not callable(transform):
        raise UsageError(
            located(
                _declared_at(),
                "register_resource_transform takes a function of one ResourceTransformArgs "
                f"(got {type(transform).__name__})",
            )
        )
    current_program().transforms.append(transform)


def _transformed(
    custom: bool,
    type_: str,
    name: str,
    props: dict[str, Any],
    opts: ResourceOptions,
    declared: Declaration,
) -> tuple[dict[str, Any], ResourceOptions]:
    """`props` and `opts` through the resource's transforms, then its parents' (nearest
    first), then the stack's, as in Pulumi; each sees what the one before it returned."""
    from stackwright.sdk.context import current_program

    if not isinstance(opts, ResourceOptions):
        return props, opts  # `_checked` says what is wrong
    chain = list(_transform_list(opts.transforms, _Checked(type_, name, declared)))
    parent = opts.parent
    while isinstance(parent, Resource):
        chain.extend(parent._opts.transforms)
        parent = parent._opts.parent
    chain.extend(current_program().transforms)
    for transform in chain:
        what = f"transform {getattr(transform, '__name__', transform)!r} of {type_} {name!r}"
        try:
            result = transform(ResourceTransformArgs(custom, type_, name, props, opts))
            if inspect.isawaitable(result):  # an `async def` transform, as Pulumi allows
                result = _awaited(result)
        except StackwrightError:
            raise
        except Exception as exc:  # the user's transform: one line naming it and the resource
            raise UsageError(located(declared, f"{what} {failed_at(exc)}")) from exc
        if result is None:
            continue
        if not isinstance(result, ResourceTransformResult) or not isinstance(result.props, Mapping):
            raise UsageError(
                located(
                    declared,
                    f"{what} returned {type(result).__name__}: return None or "
                    "sw.ResourceTransformResult(props=..., opts=...)",
                )
            )
        given, props, opts = props, dict(result.props), result.opts
        if not isinstance(opts, ResourceOptions):
            raise UsageError(
                located(
                    declared,
                    f"{what} returned opts of type {type(opts).__name__}: "
                    "return a ResourceOptions (e.g. the args.opts it was given)",
                )
            )
        for key in _IDENTITY:  # the type token (URN, state) names them
            if key in given and props.get(key) != given[key]:
                raise UsageError(
                    located(
                        declared,
                        f"{what} changed its {key} to {props.get(key)!r}: its type "
                        f"is {type_}; declare an object of the other kind instead",
                    )
                )
    return props, opts


def _awaited(awaitable: Awaitable[Any]) -> Any:
    """What an `async def` transform returns, awaited where the program is declared: in an
    event loop of its own, or, when this thread already runs one (a program declared
    inside a coroutine), in a thread of its own, since a running loop cannot be re-entered."""

    async def result() -> Any:
        return await awaitable

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return interrupts.run(result())
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, result()).result()


def remember_secret_fields(props: Mapping[str, Any], opts: ResourceOptions) -> None:
    """Remember the plain values of the fields `additional_secret_outputs` names, as a
    secret input's are: a message quoting one (an API server's error, a policy's finding)
    shows [secret]. Not a Secret's data: manifests fill it with short common words (a
    username `shop`) that every line of output would then lose."""
    for name in opts.additional_secret_outputs:
        remember_secret(props.get(name))


def failed_at(exc: Exception) -> str:
    """`failed at FILE:LINE: Error: message`, FILE:LINE being the innermost line outside
    Stackwright where `exc` was raised."""
    where = raised_at(exc)
    return f"failed{f' at {where}' if where else ''}: {error_text(exc)}"


def raised_at(exc: BaseException) -> str | None:
    """`FILE:LINE`, the innermost line outside Stackwright where `exc` was raised; None when
    it was raised by Stackwright's own code alone."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if not in_package(f.filename)]
    return f"{shown_path(frames[-1].filename)}:{frames[-1].lineno}" if frames else None


def error_text(exc: BaseException) -> str:
    """`Error: message` for one line naming a user's exception: its message's first line,
    secrets masked (the line reaches automation callers, not only the CLI, which masks)."""
    if isinstance(exc, SecretCallbackError):  # its type, said already, secrets masked
        return str(exc)
    message = redact(str(exc)).strip().splitlines()
    return f"{type(exc).__name__}: {message[0]}" if message else type(exc).__name__


def _transform_list(transforms: Any, what: _Checked) -> Sequence[ResourceTransform]:
    """The `transforms` option as a sequence (one given alone as a list of one), or a
    UsageError naming `what` when one is not a function."""
    listed = transforms if isinstance(transforms, Sequence) else (transforms,)
    for transform in listed:
        if not callable(transform):
            raise UsageError(
                f"{what.option('transforms')} must be functions of one ResourceTransformArgs "
                f"(got {type(transform).__name__})"
            )
    return listed


#: A Kubernetes object's props that its type token spells: no transform may change them.
_IDENTITY = ("apiVersion", "kind")


@dataclass
class Declaration:
    """Where in the program a resource was declared, for messages: `file` as the run names
    it (absolute), shown as `shown_path` shows it."""

    file: str
    line: int

    def __str__(self) -> str:
        return f"{shown_path(self.file)}:{self.line}"

    #: How the program declaring it spells options, for a message that names one.
    spelling: ClassVar[Spelling] = PYTHON

    def of_field(self, path: str) -> Declaration:
        """Where the field at `path` (`spec.ports[1].port`) of the resource declared here is
        written: here, a Python program's call; a YAML program says the field's own line."""
        return self

    def of_option(self, option: str) -> Declaration:
        """Where the option `option` (a ResourceOptions field, maybe with a setting after a
        dot: `custom_timeouts.create`) of the resource declared here is written: here, a
        Python program's call; a YAML program says the option's own line."""
        return self


@dataclass(frozen=True)
class _Checked:
    """The resource whose options are checked, as a message names it and each option."""

    type_: str
    name: str
    declared: Declaration

    def __str__(self) -> str:
        return f"{self.type_} {self.name!r}"

    def at(self, option: str, of: str = "") -> str:
        """The resource (after `of`, `the alias parent of `), at the line its `option` is
        written on (a Python program's call): `app.py:3: ConfigMap 'c'`."""
        return located(self.declared.of_option(option), f"{of}{self}")

    def option(self, option: str) -> str:
        """`option` of the resource, spelt as its program does, at the line it is written on:
        `app.py:3: custom_timeouts.create of ConfigMap 'c'`, or in a YAML program
        `Stackwright.yaml:9: customTimeouts.create of ConfigMap 'c'`."""
        return self.at(option, f"{self.declared.spelling.name(option)} of ")


#: Stackwright's own code: frames in here are never the line a user declared something on.
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


#: `in_package` of absolute code file names, which every declaration asks for its frames.
_IN_PACKAGE: dict[str, bool] = {}


def in_package(filename: str) -> bool:
    """Whether a code file belongs to the installed `stackwright` package (not a user's project,
    even one that lives in a folder called `stackwright`)."""
    known = _IN_PACKAGE.get(filename)
    if known is None:
        known = os.path.abspath(filename).startswith(_PACKAGE_DIR)
        if os.path.isabs(filename):  # a relative name's answer depends on the working directory
            _IN_PACKAGE[filename] = known
    return known


_declaring = threading.local()


@contextlib.contextmanager
def declaring_at(where: Declaration) -> Iterator[None]:
    """Resources declared meanwhile were declared at `where`: a program that is not Python
    (a YAML program's line), which no stack frame shows."""
    previous = getattr(_declaring, "where", None)
    _declaring.where = where
    try:
        yield
    finally:
        _declaring.where = previous


def _declared_at() -> Declaration:
    """The innermost stack frame outside the stackwright package: the user's declaring line."""
    where: Declaration | None = getattr(_declaring, "where", None)
    if where is not None:
        return where
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not in_package(filename):
            return Declaration(filename, frame.f_lineno)
        frame = frame.f_back
    return Declaration("<unknown>", 0)


class Resource:
    """Anything a program declares; the engine identifies it by its URN."""

    def __init__(
        self,
        type_: str,
        name: str,
        props: Mapping[str, Any] | None = None,
        opts: ResourceOptions | None = None,
        *,
        custom: bool = True,
    ) -> None:
        self._prepare(type_, name, props, opts, custom=custom)
        self._enroll()

    def _prepare(
        self,
        type_: str,
        name: str,
        props: Mapping[str, Any] | None,
        opts: ResourceOptions | None,
        *,
        custom: bool,
    ) -> None:
        """Everything but registering: checked, transformed, its options final (a Helm
        chart renders with them, and registers only once that succeeded)."""
        declared = _declared_at()
        if not isinstance(name, str) or not name:
            raise UsageError(
                located(
                    declared, f"a {type_} resource needs a non-empty string name (got {name!r})"
                )
            )
        self._type = type_
        self._name = name
        self._custom = custom
        self._declared = declared
        self._children: list[Resource] = []
        given, opts = _transformed(
            custom, type_, name, dict(props or {}), opts or ResourceOptions(), declared
        )
        self._props: dict[str, Any] = given
        self._input_marks: InputMarks | None = None
        opts = _checked(opts, _Checked(type_, name, declared))
        if opts.id is not None and not self._readable:
            raise UsageError(
                located(
                    declared,
                    f"{type_} {name!r} cannot be read with id=: only Kubernetes "
                    "objects can (e.g. k8s.core.v1.Service.get(name, 'kube-system/kube-dns'))",
                )
            )
        self._opts = opts.merged_with(opts.parent.opts if opts.parent is not None else None)
        remember_secret_fields(given, opts)

    def _enroll(self) -> None:
        """Register with the running program: its URN, its place among its parent's children."""
        from stackwright.sdk.context import current_program

        self._urn = current_program().register(self)
        if self._opts.parent is not None:
            self._opts.parent._children.append(self)

    # --- identity ----------------------------------------------------------------

    @property
    def urn(self) -> str:
        return self._urn

    @property
    def resource_type(self) -> str:
        return self._type

    @property
    def resource_name(self) -> str:
        return self._name

    @property
    def props(self) -> dict[str, Any]:
        return self._props

    @property
    def input_marks(self) -> InputMarks:
        """`input_marks` of its props, worked out at the first use: the engine's, once the
        program has run, whose check for secrets and dependency graph both read it (one walk
        of every object's inputs per run, not one each)."""
        if self._input_marks is None:
            self._input_marks = input_marks(self._props)
        return self._input_marks

    @property
    def opts(self) -> ResourceOptions:
        """The options as given, with `provider` inherited from the parent when not set."""
        return self._opts

    @property
    def custom(self) -> bool:
        return self._custom

    @property
    def declared_at(self) -> Declaration:
        return self._declared

    #: Whether `ResourceOptions(id=...)` may read this kind of resource (Kubernetes objects).
    _readable = False

    @property
    def is_read(self) -> bool:
        """Declared with `ResourceOptions(id=...)`: an existing object read, not managed."""
        return self._opts.id is not None

    #: Where an importer read the object from (`app.yaml:12 (document 2)`); "" otherwise.
    _origin = ""

    @property
    def origin(self) -> str:
        return self._origin

    @property
    def children(self) -> tuple[Resource, ...]:
        return tuple(self._children)

    def parent_types(self) -> tuple[str, ...]:
        """The types of the parent chain, outermost first (they prefix this resource's URN type)."""
        chain: list[str] = []
        parent = self._opts.parent
        while parent is not None:
            chain.append(parent._type)
            parent = parent._opts.parent
        return tuple(reversed(chain))

    def alias_urns(self) -> list[str]:
        """The URNs this resource may have had: its aliases (under any URN their parent may
        have had), and its own URN under each URN its parent may have had — Pulumi's
        children inherit their parent's aliases."""
        parent = self._opts.parent
        inherited = parent.alias_urns() if parent is not None else []
        if not self._opts.aliases and not inherited:
            return []
        own = parse_urn(self._urn)
        found: list[str] = []
        for alias in self._opts.aliases:
            if isinstance(alias, str):
                found.append(alias)
                continue
            for prefix in _prefixes(parent if alias.parent is ... else alias.parent):
                found.append(
                    make_urn(
                        alias.stack or own.stack,
                        alias.project or own.project,
                        alias.type_ or own.type,
                        alias.name or self._name,
                        prefix,
                    )
                )
        for old in inherited:
            was = parse_urn(old)
            found.append(make_urn(was.stack, was.project, own.type, self._name, _prefix_of(old)))
        return list(dict.fromkeys(u for u in found if u != self._urn))

    # --- outputs -------------------------------------------------------------------

    def output(self, *path: str | int) -> Output[Any]:
        """An Output of this resource's live state at `path` (all of it when empty)."""

        def compute(read: StateReader) -> Any:
            value = read(self)
            for key in path:
                value = select(value, key)
            return value

        return placed(Output(compute, {self}), self, path)

    def _schema(self) -> Schema | None:
        """What this resource's live object holds, by which the attribute names a program
        takes from its Outputs are checked (`svc.spec.cluster_ipp` is refused); None, the
        default, checks none (a custom resource's kind, a component)."""
        return None

    def __repr__(self) -> str:
        return f"<{self._type} {self._name!r}>"

    def __hash__(self) -> int:
        return id(self)

    def __eq__(self, other: object) -> bool:
        return self is other


def _prefix_of(urn: str) -> tuple[str, ...]:
    """The types a URN's resource is under and its own (`acme:App`, `kubernetes:...`), as a
    child's URN would carry them as its prefix."""
    return tuple(parse_urn(urn).qualified_type.split("$"))


def _prefixes(parent: Resource | str | None) -> list[tuple[str, ...]]:
    """The type prefixes a child's URN had under `parent` (a resource, its URN, or None for
    no parent): a resource's own, and those of the URNs its aliases say it had."""
    if parent is None:
        return [()]
    if isinstance(parent, str):
        return [_prefix_of(parent)]
    return [
        (*parent.parent_types(), parent.resource_type),
        *(_prefix_of(urn) for urn in parent.alias_urns()),
    ]


def _checked(opts: ResourceOptions, what: _Checked) -> ResourceOptions:
    """The options with forgiving spellings normalised, or a UsageError naming the resource."""
    if not isinstance(opts, ResourceOptions):
        raise _not_options(opts, what)
    # One option at a time, in the order a user reads them: the first mistake is the one said.
    changes: dict[str, Any] = {
        **_resources_named(opts, what),
        **_switches(opts, what),
        **_timeouts(opts.custom_timeouts, what),
        **_aliases(opts.aliases, what),
        **_secret_outputs(opts.additional_secret_outputs, what),
    }
    transforms = _transform_list(opts.transforms, what)
    if transforms is not opts.transforms:
        changes["transforms"] = transforms
    if opts.id is not None:
        _check_read(opts, what)
    changes.update(_field_paths(opts, what))
    return replace(opts, **changes) if changes else opts


def _not_options(opts: object, what: _Checked) -> UsageError:
    """What to say of `opts` that are no ResourceOptions: Pulumi's `ConfigMap("c", args)`
    overload puts the object's fields in this place, which Stackwright takes as keywords."""
    fields = isinstance(opts, Mapping) or type(opts).__name__.endswith("Args")
    return UsageError(
        f"{what.at('opts', 'opts of ')} must be a ResourceOptions (got {type(opts).__name__})"
        + (
            "; Stackwright takes no args object: pass the object's fields as keyword "
            "arguments (data=..., metadata=..., spec=...)"
            if fields
            else ""
        )
    )


def _resources_named(opts: ResourceOptions, what: _Checked) -> dict[str, Any]:
    """The options that name other resources checked (`depends_on`, `parent`, `provider`,
    `deleted_with`), and `depends_on=db` taken for `depends_on=[db]`."""
    changes: dict[str, Any] = {}
    depends_on = opts.depends_on
    if isinstance(depends_on, Resource | Output):  # an Output alone is refused below
        depends_on = changes["depends_on"] = (depends_on,)
    for item in depends_on:
        if not isinstance(item, Resource):
            raise UsageError(
                f"{what.option('depends_on')} must list resources (got {type(item).__name__}); "
                "an Output used as an input already adds the dependency"
            )
    for option in ("parent", "provider", "deleted_with"):
        value = getattr(opts, option)
        if value is not None and not isinstance(value, Resource):
            raise UsageError(
                f"{what.option(option)} must be a resource (got {type(value).__name__})"
            )
    if opts.providers:
        changes.update(_provider_of(opts, what))
    return changes


def _provider_of(opts: ResourceOptions, what: _Checked) -> dict[str, Any]:
    """`providers` as the `provider` it stands for: Stackwright's one package has one."""
    named = list(dict.fromkeys(_listed(opts.providers)))
    if opts.provider is not None and opts.provider not in named:
        named.insert(0, opts.provider)
    for item in named:
        if not isinstance(item, Resource):
            raise UsageError(
                f"{what.option('providers')} must list providers (got {type(item).__name__})"
            )
    if len(named) > 1:
        raise UsageError(
            f"{what.option('providers')} names {len(named)} providers (with `provider`); "
            "Stackwright has one provider package, kubernetes: give the one to use"
        )
    return {"provider": named[0], "providers": ()}


def _switches(opts: ResourceOptions, what: _Checked) -> dict[str, Any]:
    """The True-or-False options checked, None taken for False: a string is truthy, so
    protect="false" would protect; None is unset, as Pulumi reads
    `protect=cfg.get_bool("protect")`. An unset `force` stays None: its parent's."""
    changes: dict[str, Any] = {}
    for option in _BOOL_OPTIONS:
        value = getattr(opts, option)
        if value is None:
            if option not in _INHERITED:
                changes[option] = False
        elif not isinstance(value, bool):
            raise UsageError(
                f"{what.option(option)} must be True or False (got {value!r}); read a "
                "configuration value as one with `Config().get_bool`"
            )
    return changes


def _timeouts(timeouts: Any, what: _Checked) -> dict[str, Any]:
    """`custom_timeouts` in seconds, from a CustomTimeouts or a dict such as
    `{"create": "5m"}`."""
    if timeouts is None:
        return {}
    if isinstance(timeouts, dict):
        unknown = set(timeouts) - {"create", "update", "delete"}
        if unknown:
            raise UsageError(
                f"{what.option('custom_timeouts')} has unknown keys {sorted(unknown)}; "
                "known: create, update, delete"
            )
        timeouts = CustomTimeouts(**timeouts)
    if not isinstance(timeouts, CustomTimeouts):
        raise UsageError(
            f"{what.option('custom_timeouts')} must be a CustomTimeouts "
            f"(got {type(timeouts).__name__})"
        )
    seconds = {
        kind: _seconds(getattr(timeouts, kind), what.option(f"custom_timeouts.{kind}"))
        for kind in ("create", "update", "delete")
    }
    return {"custom_timeouts": CustomTimeouts(**seconds)}


def _aliases(aliases: Any, what: _Checked) -> dict[str, Any]:
    """`aliases` checked (URNs parse, an Alias's parent is a resource, a URN or None), one
    alias taken for a list of one."""
    changes: dict[str, Any] = {}
    if isinstance(aliases, str | Alias):
        aliases = changes["aliases"] = (aliases,)
    for alias in aliases:
        if isinstance(alias, str):
            _check_urn(alias, what.option("aliases"))
        elif not isinstance(alias, Alias):
            raise UsageError(
                f"{what.option('aliases')} must be URNs or sw.Alias(name=..., type_=..., parent=...) "
                f"(got {type(alias).__name__})"
            )
        elif alias.parent is not ... and not isinstance(alias.parent, Resource | str | None):
            raise UsageError(
                f"{what.at('aliases', 'the alias parent of ')} must be a resource, a URN or None "
                f"(got {type(alias.parent).__name__})"
            )
        elif isinstance(alias.parent, str):
            _check_urn(alias.parent, f"{what.at('aliases', 'the alias parent of ')}")
        if isinstance(alias, Alias):
            # The parts of the URN it had: anything else is no URN (a crash where it is made).
            for part, value in (
                ("name", alias.name),
                ("type", alias.type_),
                ("stack", alias.stack),
                ("project", alias.project),
            ):
                if value is not None and not isinstance(value, str):
                    raise UsageError(
                        f"{what.option('aliases')}: an alias's {part} must be a string "
                        f"(got {type(value).__name__})"
                    )
    return changes


def _check_urn(urn: str, where: str) -> None:
    try:
        parse_urn(urn)
    except ValueError as exc:
        raise UsageError(f"{where}: {exc}") from None


def _secret_outputs(secret: Any, what: _Checked) -> dict[str, Any]:
    """`additional_secret_outputs` in the Kubernetes spelling, one field for a list of one."""
    if isinstance(secret, str):
        secret = (secret,)
    if not secret:
        return {}
    return {"additional_secret_outputs": tuple(_secret_field(f, what) for f in secret)}


def _field_paths(opts: ResourceOptions, what: _Checked) -> dict[str, Any]:
    """`ignore_changes` and `replace_on_changes` checked as field paths, one path taken for
    a list of one."""
    changes: dict[str, Any] = {}
    for option in ("ignore_changes", "replace_on_changes"):
        paths = getattr(opts, option)
        if isinstance(paths, str):
            paths = changes[option] = (paths,)
        for entry in paths:
            try:
                parse_path(entry)
            except (ValueError, TypeError) as exc:
                raise UsageError(f"{what.option(option)}: {exc}") from None
    return changes


def _secret_field(field: Any, what: _Checked) -> str:
    """An `additional_secret_outputs` entry in the Kubernetes spelling (`string_data` →
    `stringData`), or a UsageError: only a top-level field can be named, as in Pulumi."""
    if not isinstance(field, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", field):
        raise UsageError(
            f"{what.option('additional_secret_outputs')} must name top-level fields such as 'data' "
            f"or 'spec' (got {field!r}); a nested value is secret with the field holding it"
        )
    return _camel(field)


#: Options that say how to write or delete an object: a read (`id=`) does neither.
_NOT_FOR_READS = (
    ("import_", "adopts an object to manage it"),
    ("protect", "guards a managed object against deletion"),
    ("retain_on_delete", "keeps a managed object when it is deleted"),
    ("ignore_changes", "keeps fields of a managed object as they were"),
    ("replace_on_changes", "replaces a managed object"),
    ("delete_before_replace", "orders a managed object's replacement"),
    ("force", "takes over fields when applying"),
    ("custom_timeouts", "bounds the wait for an applied object"),
    ("deleted_with", "skips deleting a managed object"),
)


def _check_read(opts: ResourceOptions, what: _Checked) -> None:
    """A read's `id` is `namespace/name` or `name`, with no option that only a managed
    object has; else a UsageError naming the resource."""
    given = opts.id
    if not isinstance(given, str) or not is_object_id(given):
        raise UsageError(
            f"{what.option('id')} must be the object's NAME or NAMESPACE/NAME, e.g. "
            f"'kube-system/kube-dns' (got {given!r})"
        )
    spelling = what.declared.spelling
    for option, meaning in _NOT_FOR_READS:
        if getattr(opts, option) not in (None, False, ()):
            spelt = spelling.name(option)
            raise UsageError(
                f"{what.at(option)} is read ({spelling.read(given)}), so {spelt} does not "
                f"apply to it: {spelt} {meaning}, and a read never writes its object; drop "
                "one of the two"
            )


#: `name` or `namespace/name`, each part non-empty and without spaces.
_OBJECT_ID = re.compile(r"(?:[^/\s]+/)?[^/\s]+")


def is_object_id(text: str) -> bool:
    """Whether `text` can name an object, as a read's `id` or an import's: `name` or
    `namespace/name`, each part non-empty and without spaces (not `/web`, `team/`)."""
    return _OBJECT_ID.fullmatch(text) is not None


class CustomResource(Resource):
    """A resource a provider manages (one object in a cluster)."""

    def __getattr__(self, name: str) -> Output[Any]:
        # Live-state access: `deployment.status`, `svc.spec`, `cm.data` — top-level
        # fields of the live object, in the Kubernetes spelling (`string_data` → stringData).
        if name.startswith("_"):
            raise AttributeError(name)
        return self.output(_camel(name))


#: A component's type token: segments of letters, digits and `_ . - /` joined by single colons
#: (no `$` or `::`, which separate a URN's parts).
_COMPONENT_TYPE = re.compile(r"[A-Za-z0-9_./-]+(?::[A-Za-z0-9_./-]+)+")
#: Packages whose types the engine gives a meaning to.
_RESERVED_PACKAGES = frozenset({"kubernetes", "stackwright"})


class ComponentResource(Resource):
    """A group of resources: its URN prefixes its children's; nothing of its own is applied."""

    def __init__(
        self,
        type_: str,
        name: str,
        props: Mapping[str, Any] | None = None,
        opts: ResourceOptions | None = None,
    ) -> None:
        if not isinstance(type_, str) or not _COMPONENT_TYPE.fullmatch(type_):
            raise UsageError(
                located(
                    _declared_at(),
                    f"component type {type_!r} must look like 'package:Name' or 'package:module:Name' "
                    f"(e.g. 'acme:web:App')",
                )
            )
        if type_.split(":", 1)[0] in _RESERVED_PACKAGES:
            raise UsageError(
                located(
                    _declared_at(),
                    f"component type {type_!r} uses the reserved package {type_.split(':', 1)[0]!r}: "
                    f"name your own, e.g. 'acme:web:App'",
                )
            )
        self._outputs: dict[str, Any] = {}
        super().__init__(type_, name, props, opts, custom=False)

    def register_outputs(self, outputs: Mapping[str, Any]) -> None:
        self._outputs = dict(outputs)

    @property
    def component_outputs(self) -> dict[str, Any]:
        return self._outputs


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


@dataclass
class Exports:
    values: dict[str, Any] = field(default_factory=dict)
