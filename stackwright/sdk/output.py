"""`Output[T]`: a value that may only be known once resources are applied.

A program runs to completion before anything is applied, so an Output is a
recipe, not a future: it records which resources it depends on and how to compute
its value from their live state. The engine resolves it when those resources are
done (during `up`), or finds it unknown (during `preview`, for resources that
will change) — rendered as `(known after apply)`. Using an Output as a resource
input creates a dependency edge. Anything computed from a secret is a secret.

The engine's side of the contract:

- `read(resource)` returns the resource's live object, or `UNKNOWN` when its
  state cannot be known yet. A field missing from a known object is absent, so
  selecting it gives `None` (as does selecting anything from `None`); only
  `UNKNOWN` makes a value unknown. An attribute name that is no field at all of a
  built-in kind's object is refused instead (`Schema`, which the resource supplies).
- `resolve(value, read)` replaces every Output in a structure by its value; a
  secret value comes back wrapped in `Secret`, which `unwrap_secrets` strips while
  reporting where it was (dotted paths, as `join_path` writes them).

Must never: run a user callback before the values it needs are known, hand a user
callback a `Secret` marker, or let a secret value turn into a non-secret one.
"""

from __future__ import annotations

import difflib
import json
import re
import weakref
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from typing import (
    TYPE_CHECKING,
    Any,
    Generic,
    NamedTuple,
    Protocol,
    TypeAlias,
    TypeVar,
    cast,
    overload,
)

import orjson
import yaml

from stackwright.errors import StackwrightError, redact_parts, remember_secret
from stackwright.model import UNKNOWN as UNKNOWN
from stackwright.sdk.context import CALLBACK_NOTE, callback, record_apply, run_of_program

if TYPE_CHECKING:
    from stackwright.sdk.resource import Resource

T = TypeVar("T")
U = TypeVar("U")
F = TypeVar("F", bound=Callable[..., Any])


class Secret:
    """A plain value marked secret while it travels through resolution."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __repr__(self) -> str:
        return "[secret]"


class Record(dict[str, Any]):
    """A mapping as an apply callback gets it: items by Kubernetes' names
    (`s["clusterIP"]`), and attributes by the names of Pulumi's Python output types
    (`s.cluster_ip`, `status.load_balancer.ingress[0].ip`), as `select` finds them; an
    absent field is None, as Pulumi's unset optional properties are, but a name that is no
    field of a built-in kind's object at all (`s.cluster_ipp`) raises AttributeError, as
    Pulumi's types do. A dict's own methods (`items`, `values`, `keys`, `get`) stay methods:
    read such a field by its key."""

    #: Where it is in a built-in kind's live object (`_records`); unset elsewhere.
    __slots__ = ("_at",)
    _at: _At

    #: What an attribute naming no field it holds reads as.
    absent: Any = None

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        key = name if dict.__contains__(self, name) else _snake_field(self, name)
        if key is not None:
            return dict.__getitem__(self, key)
        # Not held: an absent field, or a name no field at all, which only the schema can
        # tell (looked at here only, so that a field it holds costs nothing more).
        try:
            at = _RECORD_AT.__get__(self, Record)
        except AttributeError:  # no schema: a user's dict, a custom resource's object
            return self.absent
        place = _place_of(at)
        if place is not None:
            place.attribute(name)
        return self.absent


_RECORD_AT = cast(Any, Record.__dict__["_at"])


# `yaml.safe_dump(s)` in a callback writes a Record as the mapping it is (PyYAML's dumpers
# represent a dict's exact type only; a subclass failed, or got a Python object tag).
for _dumper in (
    yaml.SafeDumper,
    yaml.Dumper,
    getattr(yaml, "CSafeDumper", None),
    getattr(yaml, "CDumper", None),
):
    if _dumper is not None:
        _dumper.add_representer(Record, yaml.representer.SafeRepresenter.represent_dict)


class Partial(Record):
    """A live object only partly known before it exists (in a preview, or from the inputs that
    make it): any field it does not hold is unknown, not absent, to `select`."""

    absent = UNKNOWN

    def __contains__(self, key: object) -> bool:
        return True

    def __missing__(self, key: str) -> Any:
        return UNKNOWN


class Planned(Partial):
    """A preview's object not made yet, or a map in it: the fields the program gives it. The
    cluster may add to any of its maps (a label, a default, a clusterIP), so what reads one
    whole (a callback iterating it or taking its `len`, `Output.json_dumps`) knows no more
    than what reads a field it lacks: its value is unknown."""


def partly_known(value: Any, *, planned: bool = False) -> Any:
    """`value` with every map in it a `Partial`: what it holds is known, any field it lacks
    unknown (a server fills it). `planned`: a preview's object not made yet, whose maps are
    `Planned`, and whose fields set to None are unknown too (the server's to fill)."""
    if isinstance(value, Mapping):
        made = Planned if planned else Partial
        return made(
            {
                k: partly_known(v, planned=planned)
                for k, v in value.items()
                if not (planned and v is None)
            }
        )
    if isinstance(value, list):
        return [partly_known(v, planned=planned) for v in value]
    return value


def planned_unknown(value: Any) -> Any:
    """A resolved input with each `Planned` map in it (another object's, taken whole: a copy
    of its labels, its `data`) unknown: the cluster may add to it, so what the input will
    hold is not known yet, as a callback reading the map whole finds."""
    if isinstance(value, Planned):
        return UNKNOWN
    if isinstance(value, Secret):
        return Secret(planned_unknown(value.value))
    if isinstance(value, Mapping):
        return {k: planned_unknown(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [planned_unknown(v) for v in value]
    return value


def dumped(value: Any, **kwargs: Any) -> str:
    """`json.dumps(value)`, but of a preview's object not made yet, which lacks what the
    cluster adds to it, not known yet (`Output.json_dumps`, YAML's `fn::toJSON`)."""
    if _contains_unknown(value, whole=True):
        raise NotKnownYet("")
    return json.dumps(value, **kwargs)


class NotKnownYet(Exception):
    """A callback read a field of a preview's partly known object that is not known yet: its
    result is unknown, as Pulumi does not run an apply before its value is wholly known."""


class _PartlyKnownRecord(Partial):
    """A `Partial` as a callback gets it: reading a field it does not hold (`s["clusterIP"]`,
    `s.cluster_ip`, `s.get("clusterIP")`) stops the callback (`NotKnownYet`) rather than
    handing it a marker it would format into a value no one gave."""

    def __missing__(self, key: str) -> Any:
        raise NotKnownYet(key)

    def __getattr__(self, name: str) -> Any:
        found = super().__getattr__(name)
        if found is UNKNOWN:
            raise NotKnownYet(name)
        return found

    def get(self, key: str, default: Any = None) -> Any:
        if dict.__contains__(self, key):
            return dict.__getitem__(self, key)
        raise NotKnownYet(key)


class _PlannedRecord(_PartlyKnownRecord, Planned):
    """A `Planned` map as a callback gets it: read whole, it stops the callback too."""

    def _whole(self, *args: Any) -> Any:
        raise NotKnownYet("")

    __iter__ = __len__ = keys = values = items = _whole


class Schema(Protocol):
    """What a built-in kind's live object holds at one place, as the kind's definition says:
    one object, a list of them or a map of free keys to them (`container`: "one", "list",
    "map"), of the definition `shown` (`ServiceSpec`), whose `keys()` each map to their own
    schema (None for a free value, labels, limits or an open object, where any key goes);
    `item()` is one object of a list's or map's. A scalar (`container` "plain", `shown` "an
    integer") has no keys and no items: nothing is below it; a list of scalars (`shown` "a list
    of strings") has items that are. The layer that knows the kinds supplies it
    (`Resource._schema`): the SDK never imports that layer."""

    @property
    def container(self) -> str: ...

    @property
    def shown(self) -> str: ...

    def keys(self) -> Mapping[str, Schema | None]: ...

    def item(self) -> Schema: ...


class _Place:
    """Where an Output, or a mapping an apply callback gets, is in a built-in kind's live
    object: the resource (`Service 'web'`, for messages), the path to it (as the program took
    it: `status.load_balancer`) and the schema there, against which an attribute's name is
    checked: a name no field of the object is a mistake, not an absent field."""

    __slots__ = ("owner", "path", "schema")

    def __init__(self, owner: str, path: str, schema: Schema) -> None:
        self.owner = owner
        self.path = path
        self.schema = schema

    def attribute(self, name: str, *, pulumi: bool = True) -> tuple[str, _Place | None]:
        """The key the attribute `name` reads here (`cluster_ip` → `clusterIP`), and the
        place it leads to (None where anything goes); AttributeError for a name no field.
        Not `pulumi`: the name is Kubernetes' own (a YAML program's), which a snake_case
        spelling does not find (the live object has no such key: it read null)."""
        schema = self.schema
        if self.scalar or self.scalars:
            raise self.below(name)
        if schema.container == "map":  # free keys, each to an object
            return name, _Place(self.owner, join_path(self.path, name), schema.item())
        if schema.container == "one":
            keys = schema.keys()
            key = name if name in keys else _snake_field(keys, name) if pulumi else None
            if key is not None:
                held = keys[key]
                return key, None if held is None else _Place(
                    self.owner, join_path(self.path, name), held
                )
        raise self.missing(name, pulumi=pulumi)

    def item(self, key: Any) -> _Place | None:
        """The place of the item `key` (a field by Kubernetes' name, a list's index, a map's
        key); None where the schema says nothing of it; TypeError below a scalar."""
        schema = self.schema
        if self.scalar:
            raise self.below(key, item=True)
        held: Schema | None = None
        if schema.container == "one":
            held = schema.keys().get(key) if isinstance(key, str) else None
        elif (schema.container == "list") == (type(key) is int):
            held = schema.item()
        return None if held is None else _Place(self.owner, join_path(self.path, key), held)

    def walk(self, path: Iterable[Any], *, checked: bool = False) -> _Place | None:
        """The place at `path` from here, taking each key as an item (`item`); `checked`, a
        name as Kubernetes spells it is checked as an attribute is (`attribute`)."""
        place: _Place | None = self
        for key in path:
            if place is None:
                break
            if checked and type(key) is str:
                place = place.attribute(key, pulumi=False)[1]
            else:
                place = place.item(key)
        return place

    @property
    def scalar(self) -> bool:
        """A scalar is here (`spec.replicas`): nothing is below it."""
        return self.schema.container == "plain"

    @property
    def scalars(self) -> bool:
        """A list of scalars is here (`metadata.finalizers`): only its items are below it."""
        return self.schema.container == "list" and self.schema.item().container == "plain"

    def below(self, key: Any, *, item: bool = False) -> AttributeError | TypeError:
        """The error for `key` taken below a scalar (as an `item`, TypeError, as Python's for
        `5[0]`; as a field's name, AttributeError) or a field's name below a list of them:
        neither holds it, and it read null, silently, as an absent field does."""
        what = "item" if item else "field"
        read = f"read {self.path} itself"
        if self.scalars:
            read += f" or an item, {self.path}[0]"
        message = (
            f"{self.owner} has no {what} {join_path(self.path, key)} ({self.path} is "
            f"{self.schema.shown}, which has no {what}s: {read})"
        )
        return TypeError(message) if item else AttributeError(message)

    def missing(self, name: str, *, pulumi: bool = True) -> AttributeError:
        """The error for an attribute `name` that is no field here, with the closest ones."""
        schema = self.schema
        where = f"{self.owner} has no field {join_path(self.path, name)}"
        if schema.container == "list":
            return AttributeError(
                f"{where} ({self.path} is a list of {schema.shown}: take an item, "
                f"{self.path}[0].{name})"
            )
        keys = sorted(schema.keys())
        # Suggested in the spelling the program used: Pulumi's (`cluster_ip`) or Kubernetes'.
        names = (
            keys if name != name.lower() or not pulumi else sorted({_pulumi_name(k) for k in keys})
        )
        close = difflib.get_close_matches(name, names, n=3)
        if close:
            return AttributeError(f"{where} (did you mean {' or '.join(close)}?)")
        # Nothing like it: perhaps a field newer than the kinds' definitions, which the
        # live object may hold all the same and an item reads.
        key = repr(_camel(name)) if pulumi else json.dumps(name)
        return AttributeError(
            f"{where} ({schema.shown}'s fields: {', '.join(names)}; a field newer than "
            f"Stackwright's definitions of the kinds is read by its key: [{key}])"
        )


class _Pending:
    """The place of a resource's Output at `path` before anything asked for it: settled on
    first use, so that the many Outputs a program never takes an attribute from (a YAML
    program's references, `ns.metadata["name"]` inputs) cost no schema lookups."""

    __slots__ = ("path", "resource")

    def __init__(self, resource: Resource, path: tuple[Any, ...]) -> None:
        self.resource = resource
        self.path = path

    def settle(self) -> _Place | None:
        schema = self.resource._schema()
        if schema is None:
            return None
        return _Place(f"{schema.shown} {self.resource.resource_name!r}", "", schema).walk(self.path)


def check_fields(owner: str, schema: Schema, path: Iterable[str | int]) -> None:
    """The names of `path`, spelt as Kubernetes spells a live object's fields (a YAML
    program's `${svc.status.loadBalancer.ingress[0].ip}`), checked against `schema` as a
    Python program's attributes are: AttributeError for the first that is no field of the
    object at its place, naming `owner` (`Service`) and the closest fields. Indexes, keys in
    brackets (`ItemKey`) and the keys of free-keyed maps are not checked, as a Python
    program's items are not, but below a scalar they are TypeError, as they are there."""
    _Place(owner, "", schema).walk(path, checked=True)


def placed(output: Output[T], resource: Resource, path: tuple[Any, ...]) -> Output[T]:
    """`output`, the value at `path` of `resource`'s live object, checked by its schema
    (`Resource._schema`) once an attribute is taken from it."""
    output._where = _Pending(resource, path)
    return output


#: Where a mapping an apply callback gets is: the `_Place` of the value the callback was given,
#: or (where its container is, its key there), built as `_records` walks and resolved only when
#: an attribute misses (`_place_of`).
_At: TypeAlias = "_Place | tuple[_At, Any]"


def _place_of(at: _At) -> _Place | None:
    keys = []
    while isinstance(at, tuple):
        at, key = at
        keys.append(key)
    return at.walk(reversed(keys))


def _pulumi_name(key: str) -> str:
    """A Kubernetes field's name as Pulumi's Python types spell it: `clusterIP` →
    `cluster_ip`, `podIPs` → `pod_ips`, `loadBalancer` → `load_balancer`; JSON Schema's
    `$ref` → `_ref`, as `_snake_field` finds it."""
    return "_" * key.startswith("$") + "_".join(_WORDS.findall(key)).lower() or key


#: The words of a camelCase name: an acronym (with its plural `s`), a word, a lone capital.
_WORDS = re.compile(r"[A-Z]{2,}s?(?![a-z])|[A-Z]?[a-z0-9]+|[A-Z]+")


#: Reads a resource's live state: (resource) -> its live object, or UNKNOWN.
StateReader = Callable[["Resource"], Any]


class _StaticOrField(Generic[F]):
    """A static function of `Output` whose name is also a Kubernetes field's: `Output.secret` /
    `Output.format` from the class, as Pulumi's; from an Output, the field (a Volume's
    `secret`, a JSONSchemaProps' `format`), lifted and checked as any attribute is."""

    __slots__ = ("func",)

    def __init__(self, func: F) -> None:
        self.func = func

    @overload
    def __get__(self, output: None, owner: type[Any]) -> F: ...

    @overload
    def __get__(self, output: Output[Any], owner: type[Any]) -> Output[Any]: ...

    def __get__(self, output: Output[Any] | None, owner: type[Any]) -> F | Output[Any]:
        return self.func if output is None else output.__getattr__(self.func.__name__)


class SecretCallbackError(Exception):
    """An apply callback given a secret value raised `error`: told as `ValueError: what it
    said`, on one line, with every part of a secret it quotes masked — `int(v.split("-")[0])`
    quotes a part, which masking the remembered whole value misses. Its traceback is the
    error's, so that it names the program's line it was raised at (`raised_at`)."""

    def __init__(self, error: Exception, given: Collection[str]) -> None:
        said = redact_parts(str(error), given).strip().splitlines()
        name = type(error).__name__
        super().__init__(f"{name}: {said[0]}" if said else name)


def from_callback(exc: BaseException) -> bool:
    """Whether `exc` was raised by an apply callback of the program."""
    return isinstance(exc, SecretCallbackError) or CALLBACK_NOTE in getattr(exc, "__notes__", ())


def _exited(exit_: SystemExit) -> RuntimeError:
    """An apply callback's `sys.exit()` as the error of its value, raised where it was."""
    error = RuntimeError(f"it called sys.exit({exit_.code!r}); return a value instead")
    return error.with_traceback(exit_.__traceback__)


def _told_of_failure(error: Exception, secret: Collection[str] | None) -> Exception:
    """`error` of an apply callback as it may be told: Stackwright's own words as they are;
    another error noted as the callback's, or, given a secret (`secret`: its texts), a
    `SecretCallbackError`."""
    if isinstance(error, StackwrightError) or from_callback(error):
        return error
    if secret is not None:
        return SecretCallbackError(error, secret).with_traceback(error.__traceback__)
    error.add_note(CALLBACK_NOTE)
    return error


class Output(Generic[T]):
    """A value computed from resources' live state (or a plain value lifted into one).

    Internally `_compute(read)` gives the value, which may hold `UNKNOWN` and
    `Secret` markers (from secret values nested inside it); `_secret` says the
    whole value is secret whatever it turns out to be. `shape` is a plain stand-in
    for the value that the engine's ordering rules may read (the names a workload
    refers to) before the value is known; None when there is none.
    """

    __slots__ = ("_compute", "_resources", "_runs", "_secret", "_where", "shape")

    def __init__(
        self,
        compute: Callable[[StateReader], Any],
        resources: Iterable[Resource] = (),
        *,
        secret: bool = False,
        shape: Any = None,
    ) -> None:
        self._compute = compute
        self._resources = frozenset(resources)
        self._secret = secret
        self.shape = shape
        #: An apply's `_Runs` (None for any other Output).
        self._runs: _Runs | None = None
        #: Where its value is in a built-in kind's live object (an attribute chain taken from
        #: a resource; `_Pending` until asked), or each value's (`Output.all` of them: their
        #: Outputs); None: no schema checks it. Read through `_place`.
        self._where: _Place | _Pending | tuple[Output[Any], ...] | None = None

    # --- construction --------------------------------------------------------------

    @staticmethod
    def from_input(value: Any) -> Output[Any]:
        """Lift a plain value (or an Output, or a structure holding Outputs) into an Output."""
        if isinstance(value, Output):
            return value
        resources, secret, _ = input_marks(value)
        if not resources and not secret:
            return Output(lambda read: value, shape=value)
        return Output(lambda read: resolve(value, read), resources, secret=secret)

    @_StaticOrField
    def secret(value: Any) -> Output[Any]:
        """`value` as an Output whose value is secret, and so is everything computed from it."""
        if not isinstance(value, Output):
            remember_secret(value)
        inner = Output.from_input(value)
        return Output(inner._compute, inner._resources, secret=True, shape=inner.shape)

    @staticmethod
    def all(*values: Any, **named: Any) -> Output[Any]:
        """An Output of a list of the values (or a dict, given keyword arguments) once all are known."""
        if values and named:
            raise TypeError("Output.all takes values or keyword values, not both")
        if named:
            # As the list form: each value known or not on its own, not the whole dict unknown
            # for one unknown value.
            keys = list(named)
            listed = Output.all(*named.values())
            return Output(
                lambda read: dict(zip(keys, listed._compute(read), strict=True)),
                listed._resources,
                secret=listed._secret,
            )
        lifted = [Output.from_input(v) for v in values]
        made: Output[Any] = Output(
            lambda read: [o._compute(read) for o in lifted],
            frozenset().union(*(o._resources for o in lifted)),
            secret=any(o._secret for o in lifted),
        )
        if any(o._where is not None for o in lifted):
            made._where = tuple(lifted)
        return made

    @staticmethod
    def concat(*parts: Any) -> Output[str]:
        """The parts joined as strings once all are known: `Output.concat("http://", host, ":80")`."""
        return Output.all(*parts)._derived(lambda values: "".join(str(v) for v in values))

    @_StaticOrField
    def format(template: Any, *args: Any, **kwargs: Any) -> Output[str]:
        """`template.format(...)` once the template (a string, or an Output of one, as
        Pulumi's takes) and the arguments are known."""
        keys = list(kwargs)
        count = len(args)
        return Output.all(template, *args, *kwargs.values())._derived(
            lambda values: str(values[0]).format(
                *values[1 : count + 1], **dict(zip(keys, values[count + 1 :], strict=True))
            )
        )

    @staticmethod
    def json_dumps(value: Any, **kwargs: Any) -> Output[str]:
        """`json.dumps` of a value that may hold Outputs, once they are known (secret if any is)."""
        return Output.from_input(value)._derived(lambda plain: dumped(plain, **kwargs))

    @staticmethod
    def json_loads(value: Any, **kwargs: Any) -> Output[Any]:
        """`json.loads` of a string, or of an Output of one, once it is known."""
        return Output.from_input(value)._derived(lambda text: json.loads(text, **kwargs))

    # --- use -------------------------------------------------------------------------

    def apply(self, func: Callable[[T], U]) -> Output[U]:
        """An Output of `func(value)`, run only once the value is known.

        `func` may return an Output; its value is used (and is secret if that Output
        is). Its resources are not known before `func` runs, so they are not ordered
        before the resources that use the result: name them in `depends_on`.

        The value is resolved several times in one command (the policy check, planning,
        the apply, the stack outputs): `func` runs once per value, as Pulumi runs it once,
        for a value of plain data (its last value and result are kept).
        """

        def given(value: Any) -> Any:
            # Looked up when it first runs, not as the program declares it.
            place = self._place()
            if not isinstance(place, tuple):
                return _records(value, place)
            if type(value) is not list:
                return _records(value)
            # `Output.all`'s list: each item where its Output is.
            return [
                _records(v, p if isinstance(p := o._place(), _Place) else None)
                for v, o in zip(value, place, strict=False)
            ]

        made = self._derived(
            lambda value: _plain(func(cast(T, given(value)))), failed=_told_of_failure
        )
        record_apply(made)
        return made

    def _derived(
        self,
        func: Callable[[T], U],
        *,
        failed: Callable[[Exception, list[str] | None], Exception] | None = None,
    ) -> Output[U]:
        """`apply` for the Outputs Stackwright computes from others (`concat`, `format`,
        `json_dumps`, a YAML program's expression, an object's
        `id`): not a callback of the user's, so not run at the end of a run that never
        used it (`record_apply`). `failed(error, secret)` is raised for an error of `func`,
        told the secret texts of the value it was given (None when it holds none): known
        only now for a value read from a resource whose output is secret (a Secret's data),
        which the error may quote."""
        runs = _Runs()
        # The run whose callback it is (`sw.log` reports to it), held weakly: the run holds
        # its applies, and a cycle would keep every run's resources until a collection.
        declaring = run_of_program()
        program = weakref.ref(declaring) if declaring is not None else None

        def compute(read: StateReader) -> Any:
            value = self._compute(read)
            if _contains_unknown(value):
                return UNKNOWN
            runs.ran = True  # before it runs: one that raised is not run again by `unrun`
            # Strip secret markers (rebuilding the value) only when there are any, so a
            # callback gets the engine's own objects otherwise.
            marked = _holds_secret(value)
            plain = unwrap_secrets(value)[0] if marked else value
            key = _run_key(plain)
            if key is not None and runs.key == key:
                result: Any = runs.served()
            else:
                try:
                    with callback(program() if program is not None else None):
                        result = func(cast(T, plain))
                except NotKnownYet:  # it read what a preview does not know yet
                    return UNKNOWN
                except (Exception, SystemExit) as raised:
                    # sys.exit() is not the end of the whole command: this value failed, at
                    # the callback's line (its traceback), as another error of it does.
                    exc = raised if isinstance(raised, Exception) else _exited(raised)
                    if failed is None:
                        if exc is raised:
                            raise
                        raise exc from None
                    given = _secret_texts(value, self._secret) if marked or self._secret else None
                    raise failed(exc, given) from None
                runs.keep(key, result)
            if isinstance(result, Output):
                result = result.resolve(read)
            if marked and not isinstance(result, Secret):
                result = Secret(result)
            return result

        made: Output[U] = Output(compute, self._resources, secret=self._secret)
        made._runs = runs  # not read by `compute`, which would make a cycle to collect
        return made

    def __getattr__(self, name: str) -> Output[Any]:
        # `deployment.spec.template`; a snake_case name also finds its camelCase
        # field (`pod.spec.node_name` → `nodeName`), as top-level fields do. Taken from a
        # built-in kind's resource, a name no field of its definition is refused here, at
        # the program's line, in a preview too, rather than reading null once applied.
        if name.startswith("__"):
            raise AttributeError(name)
        place = self._place()
        if not isinstance(place, _Place):
            return self._selecting(name, attribute=True)
        key, there = place.attribute(name)
        made = self._selecting(key, attribute=True)
        made._where = there
        return made

    def __getitem__(self, key: Any) -> Output[Any]:
        made = self._selecting(key, attribute=False)
        where = self._where
        if where is None:
            return made
        if isinstance(where, _Pending):  # still not looked up: an item checks nothing
            made._where = _Pending(where.resource, (*where.path, key))
        elif isinstance(where, _Place):
            made._where = where.item(key)
        elif type(key) is int and -len(where) <= key < len(where):
            made._where = where[key]._where
        return made

    def _place(self) -> _Place | tuple[Output[Any], ...] | None:
        where = self._where
        if isinstance(where, _Pending):
            where = self._where = where.settle()
        return where

    def _selecting(self, key: Any, *, attribute: bool) -> Output[Any]:
        compute = self._compute
        return Output(
            lambda read: select(compute(read), key, attribute=attribute),
            self._resources,
            secret=self._secret,
        )

    def __iter__(self) -> Any:
        raise TypeError(
            "an Output cannot be iterated: its value is not known while the program runs; "
            "use .apply(lambda value: ...) to work with the value"
        )

    def __contains__(self, item: Any) -> bool:
        raise TypeError(
            "an Output cannot be searched with `in`: its value is not known while the program runs; "
            "use .apply(lambda value: item in value)"
        )

    def __bool__(self) -> bool:
        raise TypeError(
            "an Output has no truth value while the program runs; use .apply(...) to branch on "
            "its value (for a configuration default, pass it: cfg.get_secret(key, default))"
        )

    def __str__(self) -> str:
        raise TypeError(
            "an Output cannot be turned into a string while the program runs; "
            "use Output.concat / Output.format or .apply(str)"
        )

    def __add__(self, other: Any) -> Any:
        # `"http://" + svc.spec.cluster_ip`, the commonest slip of a program ported from
        # plain strings: without these, Python's own message names no way out.
        raise TypeError(
            "an Output cannot be added to a plain value while the program runs; "
            "use Output.concat(a, b) / Output.format(...) or .apply(lambda value: ...)"
        )

    __radd__ = __add__

    def __int__(self) -> int:
        raise TypeError(
            "an Output cannot be turned into a number while the program runs; "
            "use .apply(int) (or .apply(float)) to compute with its value"
        )

    __float__ = __int__
    __index__ = __int__

    def __repr__(self) -> str:
        secret = ", secret" if self._secret else ""
        return f"Output(depends on {len(self._resources)} resource(s){secret})"

    # --- engine side -------------------------------------------------------------
    # Its resources are `dependencies_of(output)`, no attribute: as on Pulumi's Outputs,
    # `.dependencies` reads a field (a JSONSchemaProps'); its own names are `apply`,
    # `is_secret`, `resolve` and `shape`, which no built-in kind's field is.

    @property
    def is_secret(self) -> bool:
        return self._secret

    def resolve(self, read: StateReader) -> Any:
        """The value given the resources' state; UNKNOWN where it cannot be known yet."""
        value = self._compute(read)
        return Secret(value) if self._secret and not isinstance(value, Secret) else value


def _run_key(value: Any) -> Any:
    """What tells a callback's input from another for running it once per value: the value
    itself for a leaf (with its type: 1 is not True), the JSON text of plain data (immutable,
    so a callback changing its input changes nothing here); None (run it again) for
    anything else: an object of the user's, or a preview's partly known object, which reads
    differently from the whole object however alike it looks."""
    cls = type(value)
    if cls in PLAIN_LEAVES:
        return (cls, value)
    try:
        return orjson.dumps(
            value,
            option=orjson.OPT_PASSTHROUGH_SUBCLASS
            | orjson.OPT_PASSTHROUGH_DATACLASS
            | orjson.OPT_PASSTHROUGH_DATETIME,
        )
    except TypeError:  # orjson.JSONEncodeError: not plain data
        return None


def _records(value: Any, at: _At | None = None) -> Any:
    """A resolved value as a user's callback gets it: its plain dicts `Record`s (a `Partial`
    stays one; any other object is left as it is), so Pulumi's attribute spelling reads
    their fields; each knows where it is (`at`) when the value is a built-in kind's."""
    if type(value) in PLAIN_LEAVES:
        return value
    if type(value) is dict or isinstance(value, Record):
        made = (
            Record
            if type(value) is dict
            else _PlannedRecord
            if isinstance(value, Planned)
            else _PartlyKnownRecord
            if isinstance(value, Partial)
            else type(value)
        )
        # A leaf as it is, without a call or the link a container gets (most of an object is
        # leaves).
        if at is None:
            return made(
                {k: v if type(v) in PLAIN_LEAVES else _records(v) for k, v in value.items()}
            )
        record = cast(
            Record,
            made(
                {
                    k: v if type(v) in PLAIN_LEAVES else _records(v, (at, k))
                    for k, v in value.items()
                }
            ),
        )
        record._at = at
        return record
    if type(value) is list:
        if at is None:
            return [v if type(v) in PLAIN_LEAVES else _records(v) for v in value]
        return [v if type(v) in PLAIN_LEAVES else _records(v, (at, i)) for i, v in enumerate(value)]
    return value


def _plain(value: Any) -> Any:
    """A callback's result with the `Record`s it handed on made plain dicts again (a
    `Partial` stays one), so what the engine stores and compares is plain data."""
    cls = type(value)
    if cls in PLAIN_LEAVES:
        return value
    if cls is Record or cls is dict:  # a dict it built may hold the Records it was given
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, Partial):  # one a callback was given reads as any other again
        made = Planned if isinstance(value, Planned) else Partial
        return made({k: _plain(v) for k, v in dict.items(value)})
    if isinstance(value, dict):
        return value
    if cls is list:
        return [_plain(v) for v in value]
    if cls is tuple:
        return tuple(_plain(v) for v in value)
    return value


def rearm(applies: Iterable[Output[Any]]) -> None:
    """Forget which of these apply Outputs' callbacks ran (a new engine run starts)."""
    for output in applies:
        if output._runs is not None:
            output._runs.ran = False


def unrun(applies: Sequence[Output[Any]]) -> Iterator[Output[Any]]:
    """The apply Outputs whose callbacks have not run since `rearm`, latest first and checked
    as each is reached: resolving one runs what it consumes, which is then left out."""
    for output in reversed(applies):
        if output._runs is not None and not output._runs.ran:
            yield output


class _Runs:
    """An apply callback's runs: whether it ran since `rearm`, and the key of the value it
    last ran on (`_run_key`) with its result."""

    __slots__ = ("copied", "key", "ran", "result")

    def __init__(self) -> None:
        self.ran = False
        self.key: Any = None
        self.result: Any = None
        self.copied = False  # `result` is the JSON text of a container, thawed per use

    def keep(self, key: Any, result: Any) -> None:
        """Remember `result` as the one for `key`: a leaf or an Output as it is, a container
        as its JSON text, so that each use gets a copy of its own (a later callback changing
        it in place would otherwise change it for every resolve after); anything else is
        not remembered (the callback runs again)."""
        if type(result) in PLAIN_LEAVES or isinstance(result, Output):
            self.key, self.result, self.copied = key, result, False
            return
        text = _run_key(result)
        if isinstance(text, bytes):
            self.key, self.result, self.copied = key, text, True
        else:
            self.key = None

    def served(self) -> Any:
        """The remembered result, a fresh copy of a container."""
        return orjson.loads(self.result) if self.copied else self.result


#: A resource input as Pulumi's typed programs write it: a value, or an Output of one.
Input: TypeAlias = T | Output[T]
#: Inputs by name (a component's args).
Inputs: TypeAlias = Mapping[str, Input[Any]]


def select(value: Any, key: Any, *, attribute: bool = False) -> Any:
    """`value[key]` for a resolved value (a list's slice too, as Python's): UNKNOWN stays
    unknown, a Secret stays secret, anything absent is None. With `attribute`, a snake_case key also finds its
    camelCase field (`node_name` → `nodeName`, `cluster_ip` → `clusterIP`)."""
    if value is UNKNOWN:
        return UNKNOWN
    if isinstance(value, Secret):
        inner = select(value.value, key, attribute=attribute)
        return inner if isinstance(inner, Secret) or inner is UNKNOWN else Secret(inner)
    if isinstance(value, Mapping):
        if key in value:
            return value[key]
        field = _snake_field(value, key) if attribute and isinstance(key, str) else None
        return None if field is None else value[field]
    if isinstance(value, (list, tuple)) and isinstance(key, int) and not isinstance(key, bool):
        return value[key] if -len(value) <= key < len(value) else None
    if isinstance(value, (list, tuple)) and isinstance(key, slice):
        return value[key]
    return None


def _snake_field(value: Mapping[str, Any], name: str) -> str | None:
    """The camelCase field a snake_case name finds in a mapping (`node_name` → `nodeName`),
    or None."""
    if "_" not in name:
        return None
    camel = _camel(name)
    if dict.__contains__(value, camel) if isinstance(value, dict) else camel in value:
        return camel
    # Kubernetes writes acronyms in capitals (`clusterIP`, `podIPs`), which Pulumi's
    # Python names fold (`cluster_ip`, `pod_ips`): match ignoring case; and JSON Schema's
    # own names (`x-kubernetes-list-map-keys`, `$ref`) are `x_kubernetes_list_map_keys`, `_ref`.
    folded = name.replace("_", "").lower()
    # The map's own keys: a callback's planned map refuses to be read whole.
    for field in dict.keys(value) if isinstance(value, dict) else value:
        if isinstance(field, str) and _FOLDED.sub("", field).lower() == folded:
            return field
    return None


#: What a field's name loses as a Python name: JSON Schema's `-` and `$`.
_FOLDED = re.compile(r"[-$]")


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


#: Types of the leaves of plain data: the walkers below return at once for these, before the
#: `Mapping` check (an ABC check, several times slower than a type test); exact types only,
#: so a subclass still takes the general path.
PLAIN_LEAVES: frozenset[type] = frozenset({str, int, float, bool, type(None), bytes})


def resolve(value: Any, read: StateReader) -> Any:
    """Replace every Output inside a structure by its value (or UNKNOWN)."""
    cls = type(value)
    if cls in PLAIN_LEAVES:
        return value
    if cls is dict:
        return {k: resolve(v, read) for k, v in value.items()}
    if isinstance(value, Output):
        return value.resolve(read)
    if isinstance(value, Mapping):
        return {k: resolve(v, read) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [resolve(v, read) for v in value]
    return value


def _markers(value: Any) -> Iterator[Output[Any] | Secret]:
    """Each Output and `Secret` inside an input structure, resolving nothing; exact types
    first, as every object of a program is walked so before each `preview` and `up`."""
    stack = [value]
    while stack:
        item = stack.pop()
        cls = type(item)
        if cls in PLAIN_LEAVES:
            continue
        if cls is dict:
            stack.extend(item.values())
        elif cls is list:
            stack.extend(item)
        elif isinstance(item, Output | Secret):
            yield item
        elif isinstance(item, Mapping):
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)


class InputMarks(NamedTuple):
    """What the Outputs and `Secret`s inside an input structure say, with nothing resolved."""

    #: Every resource the structure depends on through Outputs.
    resources: frozenset[Resource]
    #: Whether a secret Output (or a `Secret`) is anywhere in it.
    secret: bool
    #: Whether it holds no Output and no `Secret` at all: resolving it then only copies it,
    #: and it has no secret path and nothing unknown (the engine skips those walks).
    plain: bool = False


#: The marks of plain data: no resource, no secret, no marker at all.
_PLAIN_MARKS = InputMarks(frozenset(), False, plain=True)


def input_marks(value: Any) -> InputMarks:
    """`dependencies_of` and `_holds_secret` of `value` in one walk.

    Most objects of a program are plain data, which orjson (in C, several times faster than
    the walk) serializes; it refuses any other object, so an Output or a `Secret` anywhere
    makes it fail, and the walk finds them."""
    try:
        orjson.dumps(value)
    except TypeError:  # orjson.JSONEncodeError: not plain data
        pass
    else:
        return _PLAIN_MARKS
    found: set[Resource] = set()
    secret = False
    for item in _markers(value):
        if isinstance(item, Secret):
            secret = True
        else:
            found |= item._resources
            secret = secret or item.is_secret
    return InputMarks(frozenset(found), secret)


def dependencies_of(value: Any) -> frozenset[Resource]:
    """Every resource an input structure (or an Output) depends on through Outputs: what
    uses it waits for them."""
    return input_marks(value).resources


def _holds_secret(value: Any) -> bool:
    """Whether a secret Output (or a `Secret`) is anywhere in an input structure, by the
    Outputs' own marks."""
    return any(isinstance(item, Secret) or item.is_secret for item in _markers(value))


def _secret_texts(value: Any, secret: bool, found: list[str] | None = None) -> list[str]:
    """The texts of a resolved value that are secret: all of them when it is (`secret`),
    else those inside its `Secret` markers; numbers as written."""
    texts = found if found is not None else []
    if isinstance(value, Secret):
        _secret_texts(value.value, True, texts)
    elif isinstance(value, Mapping):
        for item in value.values():
            _secret_texts(item, secret, texts)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _secret_texts(item, secret, texts)
    elif secret and isinstance(value, (str, int, float)) and not isinstance(value, bool):
        texts.append(str(value))
    return texts


def _contains_unknown(value: Any, *, whole: bool = False) -> bool:
    """Whether a resolved value holds anything unknown; with `whole`, for what reads it whole,
    a `Planned` map too (the cluster adds to it)."""
    if value is UNKNOWN or (whole and isinstance(value, Planned)):
        return True
    if type(value) in PLAIN_LEAVES:
        return False
    if isinstance(value, Secret):
        return _contains_unknown(value.value, whole=whole)
    if isinstance(value, Mapping):
        return any(_contains_unknown(v, whole=whole) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(_contains_unknown(v, whole=whole) for v in value)
    return False


def unwrap_secrets(
    value: Any, path: str = "", found: list[str] | None = None
) -> tuple[Any, list[str]]:
    """Strip `Secret` markers from a resolved structure: the plain value and the secret paths.

    Paths are written by `join_path` (`data.password`, `spec.containers[0].env`, `""`
    for the whole value); a secret inside a secret is reported once, at the outer one.
    """
    paths = found if found is not None else []
    cls = type(value)
    if cls in PLAIN_LEAVES:
        return value, paths
    if cls is dict:
        return {k: unwrap_secrets(v, join_path(path, k), paths)[0] for k, v in value.items()}, paths
    if isinstance(value, Secret):
        paths.append(path)
        plain, _ = unwrap_secrets(value.value, path, [])
        remember_secret(plain)  # so an error message quoting it shows [secret]
        return plain, paths
    if isinstance(value, Mapping):
        return {k: unwrap_secrets(v, join_path(path, k), paths)[0] for k, v in value.items()}, paths
    if isinstance(value, (list, tuple)):
        return [unwrap_secrets(v, join_path(path, i), paths)[0] for i, v in enumerate(value)], paths
    return value, paths


# --- paths ---------------------------------------------------------------------------
#
# Paths the engine writes (field changes, secret paths) are dotted with list indices in
# brackets — `spec.template.spec.containers[0].image` — and keys as they are, so a key
# holding dots reads `data.tls.crt`; code that must tell keys apart uses the keys
# themselves (`FieldChange.keys`). Paths users write (`ignore_changes`,
# `replace_on_changes`) may also quote a key: `metadata.annotations["example.com/x"]`,
# and use `[*]` for any index.


class _AnyIndex:
    def __repr__(self) -> str:
        return "[*]"


#: `[*]` in a parsed path: any index of a list (`spec.containers[*].image`).
ANY_INDEX = _AnyIndex()
PathKey = str | int | _AnyIndex

_SEGMENT = re.compile(r'\.?([^.\[\]"\s]+)|\[(\d+|\*)\]|\[("(?:[^"\\]|\\.)*")\]')


class ItemKey(str):
    """A key a path writes in brackets (`status["brandNewThing"]`, with `parse_path(items=True)`):
    read as an item, which `check_fields` does not check, as a Python program's
    `svc.status["brandNewThing"]` is not (a field newer than Stackwright's definitions of the
    kinds, which the live object may hold)."""

    __slots__ = ()


def join_path(path: str, key: str | int) -> str:
    """`path` extended by a map key (`a.b`) or a list index (`a[0]`)."""
    if type(key) is str:
        return f"{path}.{key}" if path else key
    if isinstance(key, int) and not isinstance(key, bool):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else str(key)


def parse_path(path: str, *, items: bool = False) -> tuple[PathKey, ...]:
    """The keys of a path a user wrote: dotted names, `[0]` indices, `[*]` for any index and
    `["quoted.key"]` for a key that holds dots (an `ItemKey` with `items`).

    Raises ValueError naming the path when it cannot be read."""
    parts: list[PathKey] = []
    position = 0
    while position < len(path):
        match = _SEGMENT.match(path, position)
        dotted = path[position] == "."
        if match is None or (match.group(1) is not None and dotted == (position == 0)):
            raise ValueError(
                f"cannot read the field path {path!r} at character {position + 1}: write it as "
                'spec.containers[0].image or metadata.annotations["example.com/key"]'
            )
        name, index, quoted = match.groups()
        if name is not None:
            parts.append(name)
        elif index is not None:
            parts.append(ANY_INDEX if index == "*" else int(index))
        else:
            key = json.loads(quoted)
            parts.append(ItemKey(key) if items else key)
        position = match.end()
    if not parts:
        raise ValueError("an empty field path names no field")
    return tuple(parts)
