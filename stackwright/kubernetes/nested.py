"""The fields of a built-in kind and the keys of its nested objects, read from the table the
generator writes (`stackwright.kubernetes.fields`), so that a misspelt field or key deep inside
a `spec` can be named where it is written, without a cluster.

    kind_fields("apps", "v1", "Deployment")["spec"]
        → Nested("one", "apps_v1.DeploymentSpec")
    object_keys("apps_v1.DeploymentSpec")["template"]
        → Nested("one", "core_v1.PodTemplateSpec")

A field that holds a scalar maps to its `Plain` kind (`replicas` → an integer), which has no
keys, and one that holds a list of them to `Scalars` (`finalizers` → strings), whose items are
`Plain`; one whose keys are free (labels, annotations, data, resources.limits, an open object) maps
to None, as anything may be below it. Each object's keys are decoded on first use,
once per kind and per definition.

`Walk.unknown` finds the first key of a program's inputs that is no field of its object, in a
YAML program's parsed nodes (which know each key's line) or a Python program's plain dicts
alike: one walker, told how to read each.

A live object also holds `status`, which no program sets: `live_fields` and `live_keys` read it
too (from `STATUSES` and `STATUS_OBJECTS`), for a program reading a live object's fields by name
(`LiveKind`, the schema of a resource's Outputs); `kind_fields` and `object_keys` never do.

Must never: import a kind's module or its TypedDicts (a YAML program needs neither), or guess
at a definition the table does not list.
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Generic, Literal, NoReturn, TypeVar

from stackwright.kubernetes.fields import KINDS, OBJECTS, STATUS_OBJECTS, STATUSES
from stackwright.sdk.output import join_path

#: A key as the document holds it (a YAML node, a str) and a value (a node, a plain value).
K = TypeVar("K")
V = TypeVar("V")

#: How the table marks a field holding a list of objects (`[…]`) or a map of free keys to
#: objects (`{…}`); unmarked, it holds one.
_CONTAINERS: Mapping[str, Literal["one", "list", "map"]] = {"[": "list", "{": "map"}


@dataclass(frozen=True)
class Nested:
    """A field holding `container` of the object `definition` (`core_v1.Container`): one
    object, a list of them, or a map of free keys to them."""

    container: Literal["one", "list", "map"]
    definition: str

    @property
    def shown(self) -> str:
        """The definition's own name (`Container`)."""
        return self.definition.rpartition(".")[2]

    def keys(self) -> Mapping[str, Held]:
        """The definition's keys as a live object holds them (`live_keys`)."""
        return live_keys(self.definition)

    def item(self) -> Nested:
        """One object of the definition: an item of the list, a value of the map."""
        return _one(self.definition)


#: A scalar's kind as the table names it → as a message says one of it, and many.
_PLAIN_SHOWN: Mapping[str, tuple[str, str]] = {
    "string": ("a string", "strings"),
    "integer": ("an integer", "integers"),
    "number": ("a number", "numbers"),
    "boolean": ("a boolean", "booleans"),
    "quantity": ("a quantity", "quantities"),
    "int-or-string": ("an integer or a string", "integers or strings"),
}


@dataclass(frozen=True)
class Plain:
    """A field holding a scalar of `kind` (`integer`): no keys, no items, so nothing is below
    it (`spec.replicas.foo` is a mistake, not an absent field)."""

    kind: str
    container: Literal["plain"] = "plain"

    @property
    def shown(self) -> str:
        """`an integer`."""
        return _PLAIN_SHOWN.get(self.kind, (f"a {self.kind}", ""))[0]

    def keys(self) -> Mapping[str, Held]:
        return {}

    def item(self) -> NoReturn:
        raise TypeError(f"{self.shown} has no items")


@dataclass(frozen=True)
class Scalars:
    """A field holding a list of scalars (`finalizers`, strings): its items are `Plain`, and
    no name is below it (`metadata.finalizers.foo` is a mistake, not an absent field)."""

    of: Plain
    container: Literal["list"] = "list"

    @property
    def shown(self) -> str:
        """`a list of strings`."""
        return f"a list of {_PLAIN_SHOWN.get(self.of.kind, ('', f'{self.of.kind} values'))[1]}"

    def keys(self) -> Mapping[str, Held]:
        return {}

    def item(self) -> Plain:
        return self.of


#: What a key of an object holds: an object (or a list or map of them), a scalar (or a list
#: of them), or anything.
Held = Nested | Plain | Scalars | None


@dataclass(frozen=True)
class LiveKind:
    """A built-in kind's live object as a schema (`stackwright.sdk.output.Schema`): its top
    level, whose keys are its fields with `status`, `apiVersion` and `kind`."""

    group: str
    version: str
    kind: str
    container: Literal["one"] = "one"

    @property
    def shown(self) -> str:
        return self.kind

    def keys(self) -> Mapping[str, Held]:
        return live_fields(self.group, self.version, self.kind) or {}

    def item(self) -> LiveKind:
        return self


def _keys(listed: str, own: str) -> Mapping[str, Held]:
    """The keys of one of the table's strings, whose definitions without a module are the
    inputs module `own`'s."""
    keys: dict[str, Held] = {}
    for item in listed.split():
        key, _, holds = item.partition("=")
        if not holds:
            key, _, plain = key.partition(":")
            keys[key] = _plain(plain) if plain else None
            continue
        container = _CONTAINERS.get(holds[0], "one")
        module, _, name = holds.strip("[]{}").rpartition(".")
        keys[key] = Nested(container, f"{module or own}.{name}")
    return keys


def kinds(group: str, version: str) -> Mapping[str, str] | None:
    """The built-in kinds of a group version (their names are the keys); None for a group
    version no built-in kind has (a CRD's)."""
    return KINDS.get(group, {}).get(version)


@functools.cache
def kind_fields(group: str, version: str, kind: str) -> Mapping[str, Held] | None:
    """A built-in kind's top-level fields (camelCase, status left out) with what each nests;
    None for a kind that is not built in."""
    listed = (kinds(group, version) or {}).get(kind)
    return None if listed is None else _keys(listed, "")


@functools.cache
def object_keys(definition: str) -> Mapping[str, Held]:
    """The keys of the nested object `definition` (`core_v1.Container`), each with what it
    nests."""
    module, _, name = definition.partition(".")
    return _keys(OBJECTS[module][name], module)


@functools.cache
def live_fields(group: str, version: str, kind: str) -> Mapping[str, Held] | None:
    """A built-in kind's top-level fields as its live object holds them: `kind_fields` with
    `status` (for a kind that has one), `apiVersion` and `kind`; None for a kind that is not
    built in."""
    fields = kind_fields(group, version, kind)
    if fields is None:
        return None
    status = STATUSES.get(group, {}).get(version, {}).get(kind, "")
    text = _plain("string")
    return {"apiVersion": text, "kind": text, **fields, **_keys(status, "")}


@functools.cache
def live_kind(group: str, version: str, kind: str) -> LiveKind | None:
    """A built-in kind's live object as a schema; None for a kind that is not built in (a
    CRD's, whose objects are free: any name reads, absent ones as None)."""
    return None if live_fields(group, version, kind) is None else LiveKind(group, version, kind)


@functools.cache
def live_keys(definition: str) -> Mapping[str, Held]:
    """`object_keys`, for the objects only a status holds too."""
    module, _, name = definition.partition(".")
    if name in OBJECTS.get(module, {}):
        return object_keys(definition)
    return _keys(STATUS_OBJECTS[module][name], module)


@functools.cache
def _one(definition: str) -> Nested:
    return Nested("one", definition)


@functools.cache
def _plain(kind: str) -> Plain | Scalars:
    """A scalar's kind as the table writes it (`integer`), or a list of them's (`[string]`)."""
    if kind.startswith("["):
        return Scalars(Plain(kind[1:-1]))
    return Plain(kind)


@dataclass
class UnknownKey(Generic[K]):
    """A key that is no field of the object `of` it is in: `key` as the document holds it,
    `name` its text, `steps` the fields, keys and indices from the kind's top-level field to
    it (last first: built on the way back up, spelt out only for a mistake)."""

    key: K
    name: str
    of: Nested
    steps: list[str | int] = field(default_factory=list)

    @property
    def path(self) -> str:
        """`spec.template.spec.containers[0].imagee`."""
        path = ""
        for step in reversed(self.steps):
            path = join_path(path, step)
        return path

    @property
    def close(self) -> str | None:
        """The field most like it (`image` for `imagee`, `matchLabels` for `match_labels`),
        or None when none is."""
        keys = object_keys(self.of.definition)
        spelt = self._folded(keys)
        if spelt is not None:
            return spelt
        found = difflib.get_close_matches(self.name, keys, n=1)
        return found[0] if found else None

    def _folded(self, keys: Iterable[str]) -> str | None:
        """The field it spells in another case or with underscores (`image_pull_policy`, a
        Pulumi program's snake_case), if any."""
        folded = self.name.replace("_", "").lower()
        return next((key for key in keys if key.lower() == folded), None)

    @property
    def misspelt(self) -> bool:
        """Whether it is a field's name with a slip of the keys (at most two letters added,
        dropped, changed or swapped: `imagee`, `lables`) or in snake_case (`min_ready_seconds`):
        a name further from the closest field (`hostnameOverride`, `restartPolicyRules`) may
        be a field newer than the definitions, which extends an older one's name."""
        close = self.close
        if close is None:
            return False
        return close == self._folded((close,)) or _edits(self.name, close) <= 2

    def way_through(self, way: str) -> str:
        """` (a field newer than Stackwright's definitions of the kinds: <way>, whose fields
        are not checked)`, `way` being how the program's language declares the object
        unchecked; "" for a slip of the keys (`misspelt`), which has no such way."""
        if self.misspelt:
            return ""
        return (
            f" ({'or ' if self.close else ''}a field newer than Stackwright's definitions of the "
            f"kinds: {way}, whose fields are not checked)"
        )

    @property
    def problem(self) -> str:
        """`<path>: Container has no field 'imagee'; did you mean 'image'?` (or its fields)."""
        close = self.close
        keys = ", ".join(sorted(object_keys(self.of.definition)))
        hint = f"did you mean {close!r}?" if close else f"its fields: {keys}"
        return f"{self.path}: {self.of.shown} has no field {self.name!r}; {hint}"


def _edits(a: str, b: str) -> int:
    """How many letters to add, drop, change or swap (two side by side) to make `a` into `b`
    (the optimal string alignment distance)."""
    before: list[int] = []
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        row = [i]
        for j, y in enumerate(b, 1):
            best = min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (x != y))
            if i > 1 and j > 1 and x == b[j - 2] and a[i - 2] == y:
                best = min(best, before[j - 2] + 1)
            row.append(best)
        before, previous = previous, row
    return previous[-1]


@dataclass(frozen=True)
class Walk(Generic[K, V]):
    """How to read a document of a kind's inputs: `pairs`, a mapping's (name, key, value)
    of each key, none for anything else (a list, a plain value, a value known only later:
    a `${…}`, an Output); `items`, a list's items, none for anything else."""

    pairs: Callable[[V], Iterable[tuple[str, K, V]]]
    items: Callable[[V], Iterable[V]]

    def unknown(
        self, group: str, version: str, kind: str, fields: Iterable[tuple[str, V]]
    ) -> UnknownKey[K] | None:
        """The first key inside the top-level `fields` (name, value) of a built-in kind
        that its schema does not have; None when all are fields, or for a kind that is not
        built in (a CRD's, which the server checks). Keys of free-keyed maps (labels, data,
        resources.limits) are any."""
        top = kind_fields(group, version, kind)
        if top is None:
            return None
        for name, value in fields:
            nested = top.get(name)
            found = self._unknown(value, nested) if isinstance(nested, Nested) else None
            if found is not None:
                found.steps.append(name)
                return found
        return None

    def _unknown(self, value: V, nested: Nested) -> UnknownKey[K] | None:
        places: Iterable[tuple[str | int | None, V]]
        if nested.container == "list":
            places = enumerate(self.items(value))
        elif nested.container == "map":
            places = ((name, item) for name, _, item in self.pairs(value))
        else:
            places = ((None, value),)
        keys = object_keys(nested.definition)
        for step, place in places:
            for name, key, item in self.pairs(place):
                inner = keys.get(name)
                found = self._unknown(item, inner) if isinstance(inner, Nested) else None
                if found is None:
                    if name in keys:
                        continue
                    # A key that is no str (`{1: …}` in a Python dict) is named as text.
                    found = UnknownKey(key, str(name), nested)
                found.steps.append(str(name))
                if step is not None:
                    found.steps.append(step)
                return found
        return None


__all__ = [
    "LiveKind",
    "Nested",
    "Plain",
    "Scalars",
    "UnknownKey",
    "Walk",
    "kind_fields",
    "kinds",
    "live_fields",
    "live_keys",
    "live_kind",
    "object_keys",
]
