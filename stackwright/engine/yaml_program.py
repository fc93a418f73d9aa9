"""YAML programs: a project with `runtime: yaml` declares its resources in YAML, as a
Pulumi YAML program does.

    name: shop
    runtime: yaml
    config:
      replicas: {type: integer, default: 2}
    variables:
      labels: {app: web}
    resources:
      web:
        type: kubernetes:apps/v1:Deployment
        properties:
          spec:
            replicas: ${replicas}
            selector: {matchLabels: "${labels}"}
            ...
        options: {protect: true}
    outputs:
      name: ${web.metadata.name}

A resource with `get: {id: kube-system/kube-dns}` and no `properties:` reads that
existing object instead of managing it (Pulumi YAML's `get`, Python's `Kind.get`).
`${name.path}` refers to a resource's live object (`${svc.spec.clusterIP}`; into a
built-in kind's, each name is checked against its schema, `status` included), a
variable, a configuration value or `${stackwright.stack}` / `.project` / `.cwd` (also
spelled `pulumi.`); inside a longer string it is interpolated, alone it keeps its
type; `$${` is a literal `${`. `fn::join`, `fn::split`, `fn::select`, `fn::toJSON`,
`fn::fromJSON`, `fn::toBase64`, `fn::fromBase64`, `fn::secret` and `fn::readFile`
compute values. Variables and resources may appear in any order: each is evaluated
after what it refers to, so a reference is also a dependency, as in Python.

Must never: run code from the file (it is data: no tags, no eval), or let a mistake
through without its file and line.
"""

from __future__ import annotations

import base64
import binascii
import difflib
import functools
import importlib
import json
import re
import shlex
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar

import yaml

from stackwright.errors import UsageError, located, not_valid_yaml, shown_path
from stackwright.kubernetes.base import (
    PATCH_SUFFIX,
    CustomObject,
    CustomObjectPatch,
    KubernetesResource,
    TypeToken,
    parse_type_token,
    patched_token,
)
from stackwright.kubernetes.nested import (
    LiveKind,
    Walk,
    kind_fields,
    kinds,
    live_kind,
)
from stackwright.kubernetes.provider import PROVIDER_TYPE, Provider
from stackwright.model import unknown_setting
from stackwright.sdk.config import Config, MissingConfiguration
from stackwright.sdk.context import current_program, export
from stackwright.sdk.output import (
    Output,
    Secret,
    check_fields,
    dependencies_of,
    dumped,
    join_path,
    parse_path,
    resolve,
    select,
    unwrap_secrets,
)
from stackwright.sdk.resource import (
    Alias,
    ComponentResource,
    CustomTimeouts,
    Declaration,
    Resource,
    ResourceOptions,
    declaring_at,
)
from stackwright.sdk.spelling import PYTHON_ONLY_OPTIONS, YAML, YAML_OPTIONS, Spelling
from stackwright.sdk.stack_reference import StackReference

#: The sections a YAML program may have (the project's own keys included).
SECTIONS = frozenset(
    {
        "name",
        "runtime",
        "description",
        "main",
        "backend",
        "config",
        "variables",
        "resources",
        "outputs",
    }
)
#: The types of another stack's outputs, read by name (Pulumi YAML's and Stackwright's).
STACK_REFERENCE_TYPES = ("pulumi:pulumi:StackReference", "stackwright:stack:StackReference")
#: Pulumi's type for an object of any kind, its `apiVersion` and `kind` among its properties:
#: declared as Python's `k8s.apiextensions.CustomResource` is, its fields unchecked.
CUSTOM_RESOURCE_TYPE = "kubernetes:apiextensions.k8s.io:CustomResource"
#: Its Patch (Pulumi's too): fields of an existing object of any kind, as Python's
#: `k8s.apiextensions.CustomResourcePatch`.
CUSTOM_RESOURCE_PATCH_TYPE = f"{CUSTOM_RESOURCE_TYPE}{PATCH_SUFFIX}"
#: The types whose `apiVersion` and `kind` are among their properties.
ANY_KIND_TYPES = (CUSTOM_RESOURCE_TYPE, CUSTOM_RESOURCE_PATCH_TYPE)
#: Names a reference may start with for the run itself.
BUILTINS = ("stackwright", "pulumi")

_REFERENCE = re.compile(r"\$\$\{|\$\{([^}]*)\}")


# --- the file as data, each value knowing its line ----------------------------------------


@dataclass(frozen=True)
class Reference:
    """`${root.path…}`: what it names is looked up when the program is evaluated."""

    root: str
    path: tuple[str | int, ...]
    text: str
    line: int


@dataclass(frozen=True)
class Template:
    """A string with references: parts are literal strings and References."""

    parts: tuple[str | Reference, ...]
    line: int


@dataclass(frozen=True)
class Call:
    """`fn::NAME: ARGS`."""

    name: str
    args: Any
    line: int


@dataclass(frozen=True)
class Entry:
    """A named item of `variables` or `resources`, and the line it is declared on."""

    name: str
    body: Any
    line: int


class _Problem(Exception):
    def __init__(self, line: int, text: str) -> None:
        super().__init__(text)
        self.line = line
        self.text = text


def _parse_reference(text: str, line: int) -> Reference:
    inner = text.strip()
    # `${["a name with a ."].field}` quotes its root, as Pulumi YAML lets it.
    quoted = inner.startswith("[")
    root, _, rest = ("", "", inner) if quoted else inner.partition(".")
    if "[" in root:
        root, bracket, tail = root.partition("[")
        rest = bracket + tail + ("." + rest if rest else "")
    try:
        path = parse_path(rest, items=True) if rest else ()
    except ValueError as error:
        raise _Problem(line, f"${{{text}}}: {error}") from None
    if quoted and path and isinstance(path[0], str):
        root, path = str(path[0]), path[1:]
    if not root:
        raise _Problem(
            line, f"${{{text}}} names nothing: write ${{resource.field}} or ${{variable}}"
        )
    keys = tuple(k for k in path if isinstance(k, (str, int)))
    if len(keys) != len(path):
        raise _Problem(line, f"${{{text}}}: [*] names no one item; give its index")
    return Reference(root, keys, text, line)


def _template(text: str, line: int) -> str | Template:
    parts: list[str | Reference] = []
    position = 0
    for match in [*_REFERENCE.finditer(text), None]:
        literal = text[position : None if match is None else match.start()]
        if "${" in literal:  # what the pattern left: no `}` closes it
            raise _Problem(
                line,
                f"{literal[literal.index('${') :]!r}: a `${{` that no `}}` closes; "
                "close the reference, or write `$${` for a literal `${`",
            )
        parts.append(literal)
        if match is None:
            break
        if match.group(1) is None:  # `$${`: a literal `${`
            parts.append("${")
        else:
            parts.append(_parse_reference(match.group(1), line))
        position = match.end()
    kept = tuple(p for p in parts if p != "")
    if all(isinstance(p, str) for p in kept):
        return "".join(p for p in kept if isinstance(p, str))
    return Template(kept, line)


#: The tags plain YAML data has (what a safe loader resolves untagged values to).
PLAIN_TAGS = frozenset(
    f"tag:yaml.org,2002:{name}"
    for name in ("map", "seq", "str", "int", "float", "bool", "null", "timestamp")
)


def _data(node: yaml.Node, loader: yaml.SafeLoader) -> Any:
    """The node as Python values, with Template / Call where the program computes
    (`loader` types the plain scalars: numbers, booleans, null)."""
    line = node.start_mark.line + 1
    if node.tag not in PLAIN_TAGS:
        shown = node.tag.removeprefix("tag:yaml.org,2002:")
        raise _Problem(line, f"tag {shown} is not supported: YAML programs are plain data")
    if isinstance(node, yaml.MappingNode):
        result: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                raise _Problem(key_node.start_mark.line + 1, "a key must be a plain string")
            key = str(key_node.value)
            if key in result:
                raise _Problem(key_node.start_mark.line + 1, f"{key!r} is given twice")
            result[key] = _data(value_node, loader)
        calls = [key for key in result if key.startswith("fn::")]
        if calls and len(result) > 1:
            others = ", ".join(key for key in result if key != calls[0])
            raise _Problem(
                line,
                f"{calls[0]} must be the only key of its mapping, which also has {others}: "
                "give each call a mapping of its own",
            )
        if calls:
            return Call(calls[0][4:], result[calls[0]], line)
        return result
    if isinstance(node, yaml.SequenceNode):
        return [_data(item, loader) for item in node.value]
    assert isinstance(node, yaml.ScalarNode)
    if node.tag == "tag:yaml.org,2002:timestamp":  # a date stays the text it is written as
        value: Any = str(node.value)
    else:
        value = loader.construct_object(node)
    return _template(value, line) if isinstance(value, str) and "${" in value else value


def _entries(section: Any, node: yaml.MappingNode | None, what: str) -> list[Entry]:
    if section is None:
        return []
    if not isinstance(section, dict) or node is None:
        raise _Problem(
            1 if node is None else node.start_mark.line + 1, f"`{what}` must be a mapping of names"
        )
    lines = {str(k.value): k.start_mark.line + 1 for k, _ in node.value}
    return [Entry(name, body, lines[name]) for name, body in section.items()]


@dataclass
class Document:
    path: Path
    config: list[Entry]
    variables: list[Entry]
    resources: list[Entry]
    outputs: list[Entry]


#: libyaml's parser when the installed PyYAML has it: the same nodes, several times faster.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load(path: Path) -> Document:
    text = path.read_text(encoding="utf-8")
    try:
        root = yaml.compose(text, Loader=_LOADER)
    except yaml.YAMLError as error:
        raise UsageError(not_valid_yaml(path, error, text)) from None
    if not isinstance(root, yaml.MappingNode):
        raise UsageError(
            located(path, "a YAML program is a mapping with `resources:` (and `outputs:`, …)")
        )
    nodes = {str(k.value): (k, v) for k, v in root.value}
    try:
        data = _data(root, yaml.SafeLoader(""))
        unknown = sorted(set(data) - SECTIONS)
        if unknown:
            key = nodes[unknown[0]][0]
            raise _Problem(
                key.start_mark.line + 1,
                f"unknown section {unknown[0]!r}; {_did_you_mean(unknown[0], SECTIONS)}"
                f"a YAML program has {', '.join(sorted(SECTIONS))}",
            )

        def entries(what: str) -> list[Entry]:
            node = nodes.get(what, (None, None))[1]
            mapping = node if isinstance(node, yaml.MappingNode) else None
            return _entries(data.get(what), mapping, what)

        for key, body in _keyed(nodes.get("resources", (None, None))[1]):
            _check_nested(str(key.value), body)
        return Document(
            path, entries("config"), entries("variables"), entries("resources"), entries("outputs")
        )
    except _Problem as problem:
        raise UsageError(located(f"{path}:{problem.line}", f"{problem.text}")) from None


@dataclass
class EntryDeclaration(Declaration):
    """Where the resource `name` of a YAML program is declared, and each of its fields."""

    name: str = ""
    spelling: ClassVar[Spelling] = YAML

    def of_field(self, path: str) -> Declaration:
        """The line where the field at `path` of its properties is written (or the `${…}`
        that gave it), read again from the file: only a message needs it, and keeping every
        node's line for it would cost every run (see `_check_nested`)."""
        try:
            keys = parse_path(path, items=True)
        except ValueError:
            return self
        return self._line_of("properties", keys)

    def of_option(self, option: str) -> Declaration:
        """The line where `option` (`custom_timeouts.create`) is written among its
        `options:` (`customTimeouts: {create: …}`), a read's `id` in its `get:`."""
        if option == "id":
            return self._line_of("get", ["id"])
        return self.of_options_key(*YAML.name(option).split("."))

    def of_options_key(self, *keys: str) -> Declaration:
        """The line where `keys` (`customTimeouts`, `create`) are written among its
        `options:` as the program writes them, a key no option has (`retainOnDelet`) too."""
        return self._line_of("options", keys)

    def _line_of(self, section: str, keys: Iterable[object]) -> Declaration:
        """Where `keys` inside the resource's `section` are written, as far as they are."""
        try:
            root = yaml.compose(Path(self.file).read_text(encoding="utf-8"), Loader=_LOADER)
        except (OSError, yaml.YAMLError):
            return self
        from stackwright.kubernetes.yaml import field_line  # the components' module: loaded lazily

        node = _value_node(_value_node(_value_node(root, "resources"), self.name), section)
        return Declaration(self.file, field_line(node, keys, self.line))


# --- evaluation -------------------------------------------------------------------------


def references(value: Any) -> Iterator[Reference]:
    if isinstance(value, Reference):
        yield value
    elif isinstance(value, Template):
        for part in value.parts:
            if isinstance(part, Reference):
                yield part
    elif isinstance(value, Call):
        yield from references(value.args)
    elif isinstance(value, dict):
        for item in value.values():
            yield from references(item)
    elif isinstance(value, list):
        for item in value:
            yield from references(item)


def _has_output(value: Any) -> bool:
    if isinstance(value, Output):
        return True
    if isinstance(value, Mapping):
        return any(_has_output(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(_has_output(v) for v in value)
    return False


def _no_resource(resource: Resource) -> Any:
    raise AssertionError(f"{resource.urn} read while nothing depends on a resource")


#: What a function raises for arguments that do not fit it (`fn::fromJSON` of what is not JSON).
_ARGUMENT_ERRORS = (TypeError, ValueError, IndexError, KeyError, OSError)
#: What is said of secret arguments that do not fit: the function's own words may quote them
#: (`'…' is not a list`, a byte `fn::fromBase64` could not decode). JSON's and base64's
#: say only where, or how long (`Expecting value: line 1 column 1`), and are kept.
_SECRET_MISFIT = "its arguments do not fit it; they are secret, so what they hold is not shown"
_QUOTES_NOTHING = (json.JSONDecodeError, binascii.Error)


def _secretly_told(error: Exception) -> Exception:
    """`error` of a function of secret arguments, as it may be told."""
    return error if isinstance(error, _QUOTES_NOTHING) else ValueError(_SECRET_MISFIT)


def _lift(
    compute: Callable[..., Any],
    *args: Any,
    refusal: Callable[[Exception], Exception] | None = None,
) -> Any:
    """`compute(*args)` now when every argument is known, else an Output of it, whose
    arguments that do not fit are told by `refusal` (the function's line), not as a Python
    callback's error."""
    if not any(_has_output(a) for a in args):
        return compute(*args)
    if not dependencies_of(list(args)):
        # Known now, only secret (configuration, `fn::secret`): computed now, so that what
        # does not fit is refused before the run, as a plain value is; its result secret.
        known, secret_paths = unwrap_secrets(resolve(list(args), _no_resource))
        if not secret_paths:
            return compute(*known)
        try:
            return Output.secret(compute(*known))
        except _ARGUMENT_ERRORS as error:
            raise _secretly_told(error) from None

    def failed(error: Exception, secret: list[str] | None) -> Exception:
        # Secret by the values found now, not only by the Outputs' marks: a Secret's data is.
        if refusal is None or not isinstance(error, _ARGUMENT_ERRORS):
            return error
        return refusal(_secretly_told(error) if secret is not None else error)

    return Output.all(*args)._derived(lambda values: compute(*values), failed=failed)


class Evaluator:
    def __init__(self, document: Document) -> None:
        self.document = document
        self.folder = document.path.parent
        self.program = current_program()
        self.values: dict[str, Any] = {}
        self.resources: dict[str, Resource] = {}
        #: A built-in kind's resource → its live object's schema (to check references).
        self.schemas: dict[str, LiveKind] = {}
        #: The entry being evaluated (`resource web`, `output ip`), for a reference's message.
        self.at = ""
        #: The function being called (`refusal` names it).
        self.calling: Call | None = None
        self.declared: dict[str, Entry] = {}
        for kind in ("config", "variables", "resources"):
            for entry in getattr(document, kind):
                other = self.declared.get(entry.name)
                if other is not None or entry.name in BUILTINS:
                    raise _Problem(
                        entry.line,
                        f"the name {entry.name!r} is declared twice"
                        + (f" (first on line {other.line})" if other else " (it is built in)"),
                    )
                self.declared[entry.name] = entry

    def run(self) -> None:
        for entry in self.document.config:
            self.values[entry.name] = self._config(entry)
        entries = {e.name: e for e in (*self.document.variables, *self.document.resources)}
        resources = {e.name for e in self.document.resources}
        needs: dict[str, list[str]] = {}
        for entry in entries.values():
            refs = list(references(entry.body))
            for ref in refs:
                self._check_name(ref)
            needs[entry.name] = [r.root for r in refs if r.root in entries]
        done: set[str] = set()
        visiting: list[str] = []

        def declare(name: str) -> None:
            # In the file's order, each after what it refers to (a depth-first walk).
            if name in done:
                return
            if name in visiting:
                cycle = [*visiting[visiting.index(name) :], name]
                raise _Problem(
                    entries[cycle[0]].line,
                    f"{' → '.join(cycle)} refer to each other: a cycle has no order",
                )
            visiting.append(name)
            for needed in needs[name]:
                declare(needed)
            visiting.pop()
            entry = entries[name]
            self.at = f"{'resource' if name in resources else 'variable'} {name}"
            if name in resources:
                declared = self._resource(entry)
                if isinstance(declared, StackReference):
                    self.values[name] = declared
                else:
                    self.resources[name] = declared
            else:
                self.values[name] = self.evaluate(entry.body)
            done.add(name)

        for name in entries:
            declare(name)
        for entry in self.document.outputs:
            for ref in references(entry.body):
                self._check_name(ref)
            self.at = f"output {entry.name}"
            export(entry.name, self.evaluate(entry.body))

    def _check_name(self, ref: Reference) -> None:
        if ref.root in self.declared or ref.root in BUILTINS or ":" in ref.root:
            return
        close = difflib.get_close_matches(ref.root, list(self.declared), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        names = ", ".join(sorted(self.declared)) or "none"
        raise _Problem(
            ref.line, f"${{{ref.text}}}: nothing is named {ref.root!r}{hint} (declared: {names})"
        )

    # --- values ---------------------------------------------------------------------------

    def evaluate(self, value: Any) -> Any:
        if isinstance(value, Reference):
            return self._lookup(value)
        if isinstance(value, Template):
            if len(value.parts) == 1 and isinstance(value.parts[0], Reference):
                return self._lookup(value.parts[0])
            parts: list[Any] = []
            for part in value.parts:
                found = self._lookup(part) if isinstance(part, Reference) else part
                if isinstance(part, Reference) and (found is None or isinstance(found, Resource)):
                    what = "nothing (it is not set)" if found is None else "a whole resource"
                    raise _Problem(value.line, f"${{{part.text}}} inside a string is {what}")
                parts.append(found)
            return _lift(lambda *found: "".join(_text(v) for v in found), *parts)
        if isinstance(value, Call):
            return self._call(value)
        if isinstance(value, dict):
            return {k: self.evaluate(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.evaluate(v) for v in value]
        return value

    def _lookup(self, ref: Reference) -> Any:
        if ref.root in BUILTINS:
            facts = {
                "stack": self.program.stack,
                "project": self.program.project,
                "cwd": str(Path.cwd()),
            }
            if len(ref.path) != 1 or ref.path[0] not in facts:
                raise _Problem(
                    ref.line, f"${{{ref.text}}}: {ref.root} has {', '.join(sorted(facts))}"
                )
            return facts[str(ref.path[0])]
        if ":" in ref.root and ref.root not in self.values:  # undeclared: `${kubernetes:cluster}`
            refused = unknown_setting(ref.root, self.program.project)
            if refused:  # `${kubernetes:clustr}` would read null
                raise _Problem(ref.line, f"${{{ref.text}}}: {refused.rstrip('; ')}")
            namespace, _, key = ref.root.partition(":")
            return _select(Config(namespace).get(key), ref.path)
        resource = self.resources.get(ref.root)
        if resource is not None:
            children = getattr(resource, "resources", None)
            if ref.path and isinstance(resource, ComponentResource) and isinstance(children, dict):
                return self._child(ref, children)
            return _field(ref, resource, ref.path, self.schemas.get(ref.root), self.at)
        value = self.values[ref.root]
        if isinstance(value, StackReference):
            if len(ref.path) < 2 or ref.path[0] != "outputs":
                raise _Problem(
                    ref.line,
                    f"${{{ref.text}}}: read a stack's output as ${{{ref.root}.outputs.NAME}}",
                )
            with declaring_at(Declaration(str(self.document.path), ref.line)):  # its message's
                output = value.require_output(str(ref.path[1]))
            return _select(output, ref.path[2:])
        return _known(value, ref)

    def _child(self, ref: Reference, children: Mapping[str, Resource]) -> Any:
        """`${files.resources}` (its objects, e.g. for dependsOn) or
        `${files.resources["Kind:namespace/name"].field}`: a manifest component has no live
        object of its own."""
        names = sorted(children)
        if ref.path == ("resources",):
            return [children[n] for n in names]
        if len(ref.path) < 2 or ref.path[0] != "resources":
            example = names[0] if names else "Kind:namespace/name"
            raise _Problem(
                ref.line,
                f"${{{ref.text}}}: {ref.root} is a component of objects: read one as "
                f'${{{ref.root}.resources["{example}"].FIELD}}',
            )
        child = children.get(str(ref.path[1]))
        if child is None:
            raise _Problem(
                ref.line,
                f"${{{ref.text}}}: {ref.root} has no object {ref.path[1]!r}; it has "
                + (", ".join(names[:10]) or "none"),
            )
        parsed = parse_type_token(child.resource_type)
        schema = None if parsed is None else live_kind(parsed.group, parsed.version, parsed.kind)
        return _field(ref, child, ref.path[2:], schema, self.at)

    def _call(self, call: Call) -> Any:
        function = FUNCTIONS.get(call.name)
        if function is None:
            why = PULUMI_ONLY_FUNCTIONS.get(call.name)
            if why:
                raise _Problem(call.line, f"fn::{call.name} {why}")
            close = difflib.get_close_matches(call.name, list(FUNCTIONS), n=1)
            hint = f"did you mean fn::{close[0]}? " if close else ""
            raise _Problem(
                call.line,
                f"unknown function fn::{call.name}; {hint}functions: "
                + ", ".join(f"fn::{n}" for n in sorted(FUNCTIONS)),
            )
        args = self.evaluate(call.args)
        self.calling = call
        try:
            return function(self, args)
        except _Problem:
            raise
        except _ARGUMENT_ERRORS as error:
            raise _Problem(call.line, f"fn::{call.name}: {error}") from None

    def refusal(self) -> Callable[[Exception], Exception]:
        """The error of the function being called once its arguments are known, in the run:
        one line at its own line, as it is refused when they are known now."""
        path, call = self.document.path, self.calling
        assert call is not None
        return lambda error: UsageError(located(f"{path}:{call.line}", f"fn::{call.name}: {error}"))

    def _config(self, entry: Entry) -> Any:
        spec = entry.body if isinstance(entry.body, dict) else {"default": entry.body}
        unknown = sorted(set(spec) - set(_CONFIG_KEYS))
        if unknown:
            # A misspelt `secret:` would leave the value in plain text, `type:` unchecked.
            raise _Problem(
                entry.line,
                f"config {entry.name}: unknown key {unknown[0]!r}; "
                f"{_did_you_mean(unknown[0], _CONFIG_KEYS)}a config entry has "
                + ", ".join(_CONFIG_KEYS),
            )
        default = spec.get("default")
        kind = str(spec.get("type", _type_of(default)))
        # `name` is the project's key; `ns:name` another namespace's (or the project's, spelt out).
        namespace, _, key = entry.name.rpartition(":")
        config = Config(namespace or None)
        refused = unknown_setting(config.full_key(key), self.program.project)
        if refused:  # a declared `kubernetes:clustr` would read its default, or null
            raise _Problem(entry.line, refused.rstrip("; "))
        getters: dict[str, tuple[Callable[[str], Any], Callable[[str], Any]]] = {
            "string": (config.get, config.get_secret),
            "integer": (config.get_int, config.get_secret_int),
            "number": (config.get_float, config.get_secret_float),
            "boolean": (config.get_bool, config.get_secret_bool),
        }
        # Pulumi YAML spells the types String, Number, Boolean, List<String>; its project
        # configuration string, integer, boolean, array: either is taken.
        plain, secret = getters.get(kind.lower(), (config.get_object, config.get_secret_object))
        if kind.lower() not in getters and not (
            kind.lower().startswith("list<") or kind.lower() in ("object", "array")
        ):
            raise _Problem(
                entry.line,
                f"config {entry.name}: type {kind!r} is not one of string, integer, number, "
                "boolean, object, array, List<…>",
            )
        if "type" in spec and default is not None and not _fits(kind.lower(), default):
            raise _Problem(
                entry.line, f"config {entry.name}: default {default!r} is not of type {kind}"
            )
        hidden = bool(spec.get("secret")) or config.full_key(key) in self.program.secret_keys
        # An object or list is set as JSON: the command that sets it shows one of its type.
        structured = kind.lower() not in getters
        setting = shlex.join(
            ["stackwright", "config", "set", *(["--secret"] * hidden)]
            + (
                ["--type", "json", entry.name, _example(kind.lower())]
                if structured
                else [entry.name]
            )
        ) + ("" if structured else " VALUE")
        full = config.full_key(key)
        if (
            spec.get("secret")
            and full not in self.program.secret_keys
            and self.program.config.get(full) is not None
        ):
            # As Pulumi refuses it: the program would keep it secret, but the stack file,
            # which may be committed, holds it in plain text.
            raise _Problem(
                entry.line,
                f"config {entry.name} is declared `secret: true`, but stack "
                f"{self.program.stack} holds its value in plain text "
                f"(Stackwright.{self.program.stack}.yaml); set it again with `{setting}` to "
                "encrypt it",
            )
        try:
            found = (secret if hidden else plain)(key)
            checked = structured and "type" in spec and found is not None  # as a default is
            fits = not checked or _fits(kind.lower(), _now(found))
        except UsageError as error:  # a value not of its type: said at the entry
            if not structured or "type" not in spec:
                raise _Problem(entry.line, str(error)) from None
            fits = False  # not JSON
        if not fits:  # `hosts: {type: List<String>}` given `a.example.com`, 5 or {"a": 1}
            given = self.program.config.get(config.full_key(key))
            shown = "[secret]" if hidden else json.dumps(given, default=str)
            raise _Problem(
                entry.line,
                f"config {entry.name}: the stack's value {shown} is not of type {kind}; set "
                f"it with `{setting}`",
            )
        if found is None and default is not None:
            return Output.secret(default) if hidden else default
        if found is None:
            raise MissingConfiguration(
                located(
                    f"{self.document.path}:{entry.line}",
                    f"missing required configuration "
                    f"{config.full_key(key)} for stack {self.program.stack}: set it with "
                    f"`{setting}` or give the config a `default:`",
                ),
                config.full_key(key),
            )
        return found

    # --- resources ------------------------------------------------------------------------

    def _resource(self, entry: Entry) -> Resource | StackReference:
        body = entry.body
        if not isinstance(body, dict):
            raise _Problem(entry.line, f"resource {entry.name}: give it `type:` and `properties:`")
        unknown = sorted(set(body) - set(_RESOURCE_KEYS))
        if unknown:
            hint = _did_you_mean(unknown[0], _RESOURCE_KEYS) or _misplaced(
                unknown[0], body.get("type")
            )
            raise _Problem(
                entry.line,
                f"resource {entry.name}: unknown key {unknown[0]!r}; {hint}a resource has "
                + ", ".join(_RESOURCE_KEYS),
            )
        token = body.get("type")
        if not isinstance(token, str) or not token:
            raise _Problem(
                entry.line,
                f"resource {entry.name}: `type:` is missing (e.g. kubernetes:apps/v1:Deployment)",
            )
        properties = self.evaluate(body.get("properties") or {})
        if not isinstance(properties, dict):
            raise _Problem(entry.line, f"resource {entry.name}: `properties:` must be a mapping")
        opts = self._options(entry, self.evaluate(body.get("options") or {}))
        if "get" in body:
            opts = replace(opts, id=self._get(entry, token, body))
        with declaring_at(EntryDeclaration(str(self.document.path), entry.line, entry.name)):
            return self._declare(entry, token, properties, opts)

    def _get(self, entry: Entry, token: str, body: Mapping[str, Any]) -> str:
        """The id of `get: {id: NAMESPACE/NAME}`: the resource reads that existing object
        (Pulumi YAML's `get`, Python's `Kind.get`) and declares nothing."""
        where = f"resource {entry.name}: `get:`"
        if "properties" in body:
            raise _Problem(
                entry.line,
                f"{where} reads an existing object, which declares no `properties:`; drop one "
                "of the two",
            )
        if token in STACK_REFERENCE_TYPES or token in COMPONENTS or token in _PROVIDER_TYPES:
            raise _Problem(entry.line, f"{where} reads Kubernetes objects only, not {token}")
        if token in ANY_KIND_TYPES:  # its kind is among the properties a read has not
            raise _Problem(
                entry.line,
                f"{where} reads an object by its kind's own type (kubernetes:apps/v1:Deployment, "
                f"kubernetes:example.com/v1:Widget), not {token}",
            )
        given = self.evaluate(body["get"])
        if not isinstance(given, dict) or set(given) != {"id"}:
            raise _Problem(
                entry.line, f"{where} takes the object's id: get: {{id: NAMESPACE/NAME}}"
            )
        found = given["id"]
        if not isinstance(found, str):
            raise _Problem(
                entry.line,
                f"{where} id must be a plain NAME or NAMESPACE/NAME (configuration and variables "
                "are fine; another resource's outputs are not known when it is read)",
            )
        return found

    def _declare(
        self, entry: Entry, token: str, properties: dict[str, Any], opts: ResourceOptions
    ) -> Resource | StackReference:
        if token in STACK_REFERENCE_TYPES:  # another stack's outputs: `${ref.outputs.key}`
            keywords = _keywords(entry, properties, {"name": "name"})
            if not isinstance(keywords.get("name"), str):
                raise _Problem(
                    entry.line,
                    f"resource {entry.name}: name must be a text: PROJECT/STACK or STACK",
                )
            return StackReference(**keywords)
        component = COMPONENTS.get(token)
        if component is not None:
            return component.declare(self, entry, token, properties, opts)
        if token in ANY_KIND_TYPES:
            return _custom_resource(entry, token, properties, opts)
        if token in _PROVIDER_TYPES:
            return Provider(entry.name, opts, **_keywords(entry, properties, PROVIDER_KEYS))
        if token.count(":") == 2 and token.split(":")[1] == "providers":
            # `kubernetes:providers:kubernetes` would read as a group version `providers`.
            raise _Problem(
                entry.line,
                f"resource {entry.name}: type {token!r} is not a provider type Stackwright has; "
                f"a Kubernetes provider's is {' or '.join(sorted(_PROVIDER_TYPES))}",
            )
        parsed = parse_type_token(token)
        if parsed is None:
            others = (*STACK_REFERENCE_TYPES, *ANY_KIND_TYPES, *_PROVIDER_TYPES, *COMPONENTS)
            raise _Problem(
                entry.line,
                f"resource {entry.name}: type {token!r} is not a Kubernetes type "
                "(kubernetes:<group>/<version>:<Kind>, e.g. kubernetes:apps/v1:Deployment), "
                f"{CUSTOM_RESOURCE_TYPE}, {PROVIDER_TYPE}, {STACK_REFERENCE_TYPES[0]} or one of "
                f"{', '.join(sorted(COMPONENTS))}; {_did_you_mean(token, others)}".rstrip("; "),
            )
        # `kubernetes:core/v1:ConfigMapPatch`: a ConfigMap's; `…:WidgetPatch` of `kind: Widget`
        patched = patched_token(parsed, properties.get("kind"))
        parsed = patched or parsed
        api_version, kind = parsed.api_version, parsed.kind
        fields = _builtin_fields(parsed, entry)
        if fields is None:
            _check_custom(entry, token, parsed)
        for key in ("apiVersion", "kind"):
            given = properties.pop(key, None)
            expected = api_version if key == "apiVersion" else kind
            if given is not None and given != expected:
                of = expected.removesuffix(PATCH_SUFFIX) if key == "kind" else expected
                hint = f" (a Patch of a {of} says kind: {of})" if of != expected else ""
                raise _Problem(
                    entry.line,
                    f"resource {entry.name}: {key} {given!r} differs from its type's "
                    f"{expected!r}{hint}",
                )
        schema = live_kind(parsed.group, parsed.version, parsed.kind)
        if fields is not None and schema is not None:
            self.schemas[entry.name] = schema
            unknown = sorted(set(properties) - fields)
            if unknown:
                raise _Problem(
                    entry.line,
                    f"resource {entry.name}: {kind} has no field {unknown[0]!r}; "
                    f"{_did_you_mean(unknown[0], fields)}"
                    f"its fields: {', '.join(sorted(fields))}",
                )
        declared = CustomObject if patched is None else CustomObjectPatch
        return declared(entry.name, opts, api_version=api_version, kind=kind, **properties)

    def _options(self, entry: Entry, given: Any) -> ResourceOptions:
        if not isinstance(given, dict):
            raise _Problem(entry.line, f"resource {entry.name}: `options:` must be a mapping")
        chosen = _keywords(
            entry, given, YAML_OPTIONS, "option", at=lambda key: self._option_line(entry, key)
        )
        named = {field: key for key, field in YAML_OPTIONS.items()}
        return ResourceOptions(
            **{field: self._option(entry, named[field], v) for field, v in chosen.items()}
        )

    def _option(self, entry: Entry, key: str, value: Any) -> Any:
        def bad(problem: str) -> _Problem:  # at the option's own line
            return _Problem(
                self._option_line(entry, key), f"resource {entry.name}: option {key}{problem}"
            )

        if key in ("parent", "provider", "deletedWith"):
            if not isinstance(value, Resource):
                raise bad(" must be a resource: ${name}")
            return value
        if key == "dependsOn":
            items = value if isinstance(value, list) else [value]
            if not all(isinstance(v, Resource) for v in items):
                raise bad(" must list resources: [${a}, ${b}]")
            return items
        if key in ("protect", "deleteBeforeReplace", "retainOnDelete"):
            if not isinstance(value, bool):
                raise bad(" must be true or false")
            return value
        if key in ("ignoreChanges", "replaceOnChanges"):
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise bad(" must list field paths: [spec.replicas]")
            return value
        if key == "additionalSecretOutputs":
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise bad(" must list top-level fields: [data]")
            return value
        if key == "import":
            if not isinstance(value, str):
                raise bad(" must be the object's NAME or NAMESPACE/NAME")
            return value
        if key == "customTimeouts":
            if not isinstance(value, dict) or set(value) - {"create", "update", "delete"}:
                raise bad(" takes create, update and delete (e.g. 5m)")
            return CustomTimeouts(**value)
        assert key == "aliases"
        aliases: list[str | Alias] = []
        for alias in value if isinstance(value, list) else [value]:
            if isinstance(alias, str):
                aliases.append(alias)
            elif isinstance(alias, dict) and not set(alias) - {
                "name",
                "type",
                "parent",
                "noParent",
            }:
                if not isinstance(alias.get("noParent", False), bool):  # "false" is truthy
                    raise bad(": an alias's noParent must be true or false")
                parent: Any = None if alias.get("noParent") else alias.get("parent", ...)
                aliases.append(
                    Alias(name=alias.get("name"), type_=alias.get("type"), parent=parent)
                )
            else:
                raise bad(": an alias is a URN or a mapping of name, type, parent, noParent")
        return aliases

    def _option_line(self, entry: Entry, key: str) -> int:
        """The line the option `key` (one no option has too) is written on, found as the
        SDK's option errors find theirs (read again only for an error)."""
        declared = EntryDeclaration(str(self.document.path), entry.line, entry.name)
        return declared.of_options_key(key).line


#: The types of a Kubernetes provider resource (Pulumi's spelling too).
_PROVIDER_TYPES = (PROVIDER_TYPE, "pulumi:providers:kubernetes")


#: Pulumi YAML's options that Stackwright has not, and what to do instead.
PULUMI_ONLY_OPTIONS: Mapping[str, str] = {
    "version": "pins a Pulumi provider plugin; Stackwright has none: drop it",
    "pluginDownloadURL": "locates a Pulumi provider plugin; Stackwright has none: drop it",
    "providers": "maps packages to providers; Stackwright has one: give provider: ${name}",
}


def _option_instead(key: str) -> str | None:
    """What to do instead of the option `key`, one of Pulumi YAML's or of a Python
    program's that a YAML program has not; None for any other key. Pulumi YAML's first:
    `providers` is a Python program's too, but a YAML program ported writes it so."""
    if key in PULUMI_ONLY_OPTIONS:
        return PULUMI_ONLY_OPTIONS[key]
    if key in PYTHON_ONLY_OPTIONS:
        return f"is a Python program's (ResourceOptions({key}=…)); {PYTHON_ONLY_OPTIONS[key]}"
    return None


_NO_ASSETS = (
    "makes a Pulumi asset or archive, which no Kubernetes field takes: give the text itself, "
    "or fn::readFile for a file's text"
)

#: Pulumi YAML's functions that Stackwright has not, and what to do instead.
PULUMI_ONLY_FUNCTIONS: Mapping[str, str] = {
    "invoke": "calls a Pulumi provider's function, which Stackwright has none of: read an "
    "existing object with a resource whose `get: {id: NAMESPACE/NAME}` takes the place of "
    "`properties:`, and refer to its fields (${NAME.spec...})",
    **dict.fromkeys(
        (
            "stringAsset",
            "fileAsset",
            "remoteAsset",
            "fileArchive",
            "remoteArchive",
            "assetArchive",
        ),
        _NO_ASSETS,
    ),
}

PROVIDER_KEYS: Mapping[str, str] = {
    "kubeconfig": "kubeconfig",
    "context": "context",
    "namespace": "namespace",
    "renderYamlToDirectory": "render_yaml_to_directory",
}


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    return str(value)


def _select(value: Any, path: Sequence[str | int]) -> Any:
    for key in path:
        value = value[key] if isinstance(value, Output) else select(value, key)
    return value


def _type_of(default: Any) -> str:
    """A config's type when it names none: its default's (as Pulumi infers it)."""
    if isinstance(default, bool):
        return "boolean"
    if isinstance(default, int):
        return "integer"
    if isinstance(default, float):
        return "number"
    return "object" if isinstance(default, (dict, list)) else "string"


def _example(kind: str) -> str:
    """A JSON value of the (lower-cased) structured type `kind`, for a command that sets one."""
    items = {"string": '"a", "b"', "integer": "1, 2", "number": "1.5, 2", "boolean": "true, false"}
    if kind.startswith("list<") and kind.endswith(">"):
        return "[" + items.get(kind[5:-1].strip(), '{"a": 1}') + "]"
    return '["a", "b"]' if kind == "array" else '{"a": 1}'


def _now(value: Any) -> Any:
    """A configuration value as it is now: a secret one's too (an Output known already)."""
    if isinstance(value, Output):
        resolved = value.resolve(lambda resource: None)
        return resolved.value if isinstance(resolved, Secret) else resolved
    return value


def _fits(kind: str, value: Any) -> bool:
    """Whether a config's `default:`, or the stack's value, is of its (lower-cased) type."""
    if kind.startswith("list<") and kind.endswith(">"):
        return isinstance(value, list) and all(_fits(kind[5:-1].strip(), v) for v in value)
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    checks = {
        "string": isinstance(value, str),
        "integer": number and float(value).is_integer(),
        "number": number,
        "boolean": isinstance(value, bool),
        "object": isinstance(value, dict),
        "array": isinstance(value, list),
    }
    return checks.get(kind, True)


def _field(
    ref: Reference,
    resource: Resource,
    path: tuple[str | int, ...],
    schema: LiveKind | None,
    where: str,
) -> Any:
    """A resource's live object at `path` (itself when empty); `schema`: its built-in kind's
    live object, against which each name of the path is checked (a misspelt one read null,
    silently, as a field the server had not filled in does: `${svc.status.loadBalncer}`);
    `where`: the entry the reference is written in, for the message."""
    if not path:
        return resource
    # As Pulumi YAML's `${res.id}` / `${res.urn}`: no Kubernetes object has a top-level
    # field of either name, so neither hides one.
    head, rest = path[0], path[1:]
    if head == "urn":
        return _select(resource.urn, rest)
    if head == "id" and isinstance(resource, KubernetesResource):
        return _select(resource.id, rest)
    if schema is not None:
        try:
            check_fields(schema.shown, schema, path)
        except (AttributeError, TypeError) as error:  # a name no field; below a scalar
            raise _Problem(ref.line, f"{where}: ${{{ref.text}}}: {error}") from None
    return resource.output(*path)


def _known(value: Any, ref: Reference) -> Any:
    """A variable's or configuration's value at `ref.path`: a key or item it does not have
    is a mistake (as Pulumi YAML says), not null; inside an Output, it is looked up later."""
    walked = ref.root
    for index, key in enumerate(ref.path):
        if isinstance(value, Output):
            return _select(value, ref.path[index:])
        where = f"${{{ref.text}}}: {walked}"
        if isinstance(value, Mapping):
            if isinstance(key, int):
                raise _Problem(ref.line, f"{where} is a mapping: write {walked}.KEY")
            if key not in value:
                keys = ", ".join(sorted(map(str, value))) or "none"
                raise _Problem(ref.line, f"{where} has no key {key!r} (its keys: {keys})")
        elif isinstance(value, list):
            if not isinstance(key, int):
                raise _Problem(ref.line, f"{where} is a list: write {walked}[INDEX]")
            if not -len(value) <= key < len(value):
                raise _Problem(ref.line, f"{where} has no item {key} (it has {len(value)})")
        else:
            shown = (
                "nothing (null)" if value is None else f"a {_TYPE_NAMES.get(type(value), 'value')}"
            )
            raise _Problem(ref.line, f"{where} is {shown}, not a mapping or list")
        value = value[key]
        walked = join_path(walked, key)
    return value


_TYPE_NAMES: Mapping[type, str] = {str: "string", int: "number", float: "number", bool: "boolean"}


def _did_you_mean(word: str, known: Iterable[str]) -> str:
    """`did you mean 'properties'? ` when a known name is close to `word`, else ""."""
    close = difflib.get_close_matches(word, sorted(known), n=1)
    return f"did you mean {close[0]!r}? " if close else ""


def _keywords(
    entry: Entry,
    given: Mapping[str, Any],
    known: Mapping[str, str],
    what: str = "property",
    *,
    at: Callable[[str], int] | None = None,
) -> dict[str, Any]:
    """`given` under the names `known` maps its keys to; an unknown key is one line, at the
    line `at` gives for it (else the resource's)."""
    unknown = sorted(set(given) - set(known))
    if unknown:
        line = at(unknown[0]) if at is not None else entry.line
        why = _option_instead(unknown[0]) if what == "option" else None
        if why:
            raise _Problem(line, f"resource {entry.name}: option {unknown[0]!r} {why}")
        raise _Problem(
            line,
            f"resource {entry.name}: unknown {what} {unknown[0]!r}; "
            f"{_did_you_mean(unknown[0], known)}it takes " + ", ".join(sorted(known)),
        )
    return {known[k]: v for k, v in given.items()}


def _builtin_fields(parsed: TypeToken, entry: Entry) -> frozenset[str] | None:
    """The top-level fields of a built-in kind; None for a kind of no built-in group version
    (a CRD's), which the server checks."""
    group, version, kind = parsed.group, parsed.version, parsed.kind
    known = kinds(group, version)
    if known is None:
        return None
    fields = _kind_fields(group, version, kind)
    if fields is None:
        close = difflib.get_close_matches(kind, list(known), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise _Problem(
            entry.line,
            f"resource {entry.name}: {group or 'core'}/{version} has no kind {kind!r}{hint}",
        )
    return fields


@functools.cache
def _misplaced(key: str, token: Any) -> str:
    """`it is a field of the object: indent it under properties: ` when `key`, found beside
    `type:`, is one of the fields of the kind `token` names (or `metadata` / `spec`, of any
    kind): the indentation slip that puts a property one level too far out; else ""."""
    parsed = parse_type_token(token) if isinstance(token, str) else None
    fields = _kind_fields(parsed.group, parsed.version, parsed.kind) if parsed else None
    if key in (fields or ("metadata", "spec")):
        return f"{key} is a field of the object: indent it under `properties:`; "
    return ""


def _kind_fields(group: str, version: str, kind: str) -> frozenset[str] | None:
    """The top-level fields (camelCase, status left out) of a built-in group version's kind;
    None when it has no such kind. Computed once per kind, not per resource."""
    fields = kind_fields(group, version, kind)
    return None if fields is None else frozenset(fields)


def _check_nested(name: str, body: yaml.Node) -> None:
    """Every key inside the properties of the resource `name`, if of a built-in kind, against
    its schema (Pulumi YAML's type check): a misspelt one is named at its line, not left to
    the API server's dry run. Read from the parsed nodes, which know each key's line, while
    they are at hand: kept alive for later, a thousand resources' nodes made the garbage
    collector's passes slow the whole program by half."""
    token = _value_node(body, "type")
    text = str(token.value) if isinstance(token, yaml.ScalarNode) else ""
    parsed = parse_type_token(text) if text not in ANY_KIND_TYPES else None  # unchecked
    if parsed is None:
        return
    parsed = patched_token(parsed) or parsed
    properties = ((str(k.value), v) for k, v in _keyed(_value_node(body, "properties")))
    found = _NODES.unknown(parsed.group, parsed.version, parsed.kind, properties)
    if found is not None:
        # Not a slip of the keys: perhaps a field newer than the definitions (as in Python).
        newer = found.way_through(
            f"declare the object as `type: {CUSTOM_RESOURCE_TYPE}` with `apiVersion: "
            f"{parsed.api_version}` and `kind: {parsed.kind}` among its properties"
        )
        raise _Problem(found.key.start_mark.line + 1, f"resource {name}: {found.problem}{newer}")


def _value_node(node: yaml.Node | None, key: str) -> yaml.Node | None:
    return next((v for k, v in _keyed(node) if k.value == key), None)


def _keyed(node: yaml.Node | None) -> list[tuple[yaml.Node, yaml.Node]]:
    """A mapping node's keys and values; none for any other node, or a `fn::` call's (whose
    result's shape is not known when the program is read)."""
    if not isinstance(node, yaml.MappingNode):
        return []
    pairs: list[tuple[yaml.Node, yaml.Node]] = node.value
    calls = len(pairs) == 1 and str(pairs[0][0].value).startswith("fn::")
    return [] if calls else pairs


def _node_pairs(node: yaml.Node) -> list[tuple[str, yaml.Node, yaml.Node]]:
    return [(str(k.value), k, v) for k, v in _keyed(node)]


def _node_items(node: yaml.Node) -> list[yaml.Node]:
    return node.value if isinstance(node, yaml.SequenceNode) else []


#: A YAML program's parsed properties, walked for a key that is no field (`Walk`). A `${…}`
#: in place of an object or list is not looked into: what it stands for is known only when
#: the program runs.
_NODES: Walk[yaml.Node, yaml.Node] = Walk(_node_pairs, _node_items)


def _custom_resource(
    entry: Entry, token: str, properties: dict[str, Any], opts: ResourceOptions
) -> CustomObject:
    """`type: kubernetes:apiextensions.k8s.io:CustomResource` with `apiVersion` and `kind` among
    its properties: the object of that kind, with the same URN as one declared by its kind's
    own type (`kubernetes:apps/v1:Deployment`), but its fields unchecked, as Python's
    `k8s.apiextensions.CustomResource` — the way to a field newer than Stackwright's
    definitions of the built-in kinds, which a later Kubernetes takes. Its `…Patch` type
    declares that kind's Patch alike (`kubernetes:example.com/v1:WidgetPatch`)."""
    given = {key: properties.pop(key, None) for key in ("apiVersion", "kind")}
    missing = [key for key, value in given.items() if not isinstance(value, str) or not value]
    if missing:
        raise _Problem(
            entry.line,
            f"resource {entry.name}: {token} needs "
            f"{' and '.join(f'`{key}:`' for key in missing)} among its properties, as a text "
            "known when the program runs (e.g. apiVersion: apps/v1, kind: Deployment)",
        )
    declared = CustomObjectPatch if token == CUSTOM_RESOURCE_PATCH_TYPE else CustomObject
    return declared(
        entry.name, opts, api_version=given["apiVersion"], kind=given["kind"], **properties
    )


def _check_custom(entry: Entry, token: str, parsed: TypeToken) -> None:
    """A type of no built-in group version is a custom resource's, whose group has a dot
    (as a CRD's must); a misspelt manifest or chart type is not taken for one."""
    group_version = parsed.group_version
    ours = sorted(
        t for t in COMPONENTS if (of := parse_type_token(t)) and of.group_version == group_version
    )
    if ours:
        close = difflib.get_close_matches(token, ours, n=1)
        hint = f"did you mean {close[0]}? " if close else ""
        raise _Problem(
            entry.line,
            f"resource {entry.name}: {group_version} has no type {token!r}; {hint}"
            f"it has {', '.join(ours)}",
        )
    if "." not in parsed.group:
        raise _Problem(
            entry.line,
            f"resource {entry.name}: {group_version or '(none)'} is not a group version "
            "Kubernetes has (core/v1, apps/v1, batch/v1, …), and a custom resource's group "
            "has a dot (example.com/v1)",
        )


# --- functions ----------------------------------------------------------------------------


Function = Callable[["Evaluator", Any], Any]


def _unary(compute: Callable[[Any], Any]) -> Function:
    return lambda evaluator, args: _lift(compute, args, refusal=evaluator.refusal())


def _binary(compute: Callable[[Any, Any], Any], shape: str) -> Function:
    def call(evaluator: Evaluator, args: Any) -> Any:
        if not isinstance(args, list) or len(args) != 2:
            raise ValueError(f"takes a list of two: [{shape}]")
        return _lift(compute, *args, refusal=evaluator.refusal())

    return call


def _read_file(evaluator: Evaluator, args: Any) -> Any:
    if isinstance(args, Output):  # what it is made of is told as written, never its value
        assert evaluator.calling is not None
        written = _as_written(evaluator.calling.args)
        if args.is_secret:
            raise ValueError(
                f"the path is secret (it comes from {written}): a path must be plain text known "
                "when the program runs: give it as plain configuration (and the file's text as "
                "{fn::secret: {fn::readFile: PATH}} to keep that secret)"
            )
        raise ValueError(
            f"the path comes from another resource's output ({written}), known only once it is "
            "applied: a path must be plain text known when the program runs (a literal, "
            "configuration or variable)"
        )
    if not isinstance(args, str):
        raise ValueError("takes a path (relative to the program's folder)")
    path = evaluator.folder / args
    try:
        return path.read_text(encoding="utf-8")
    except OSError as error:  # Python's `[Errno 2] No such file or directory: '…'`, in words
        why = "no such file" if isinstance(error, FileNotFoundError) else error.strerror
        raise ValueError(
            f"cannot read {shown_path(path)}: {(why or str(error)).lower()}; the path is "
            "relative to the program's folder"
        ) from None


def _as_written(value: Any) -> str:
    """A function's argument as the program writes it: `${token}`, `./${dir}/a.txt`,
    `{fn::join: [/, [etc, ${dir}]]}`; what `fn::secret` is given, never (`{fn::secret: …}`)."""
    if isinstance(value, Reference):
        return f"${{{value.text}}}"
    if isinstance(value, Template):
        return "".join(p if isinstance(p, str) else _as_written(p) for p in value.parts)
    if isinstance(value, Call):
        return f"{{fn::{value.name}: {'…' if value.name == 'secret' else _as_written(value.args)}}}"
    if isinstance(value, list):
        return f"[{', '.join(_as_written(v) for v in value)}]"
    if isinstance(value, dict):
        return f"{{{', '.join(f'{k}: {_as_written(v)}' for k, v in value.items())}}}"
    return _text(value)


def _select_item(index: Any, items: Any) -> Any:
    if not isinstance(items, list):
        raise ValueError(f"takes [index, [values]]; {_text(items)!r} is not a list")
    try:
        position = int(index) if not isinstance(index, bool) else None
    except (TypeError, ValueError):
        position = None
    if position is None:
        raise ValueError(f"the index {_text(index)!r} is not a whole number")
    if not -len(items) <= position < len(items):
        raise ValueError(f"index {position} is out of range: the list has {len(items)} value(s)")
    return items[position]


#: The keys of a `config:` entry, as Pulumi YAML's (`description` and `items` are for people).
_CONFIG_KEYS = ("default", "description", "items", "secret", "type")
#: The keys of a `resources:` entry (`get` reads an object the stack does not manage).
_RESOURCE_KEYS = ("type", "properties", "options", "get")

FUNCTIONS: Mapping[str, Function] = {
    "join": _binary(lambda sep, items: str(sep).join(map(_text, items)), "separator, [values]"),
    "split": _binary(lambda sep, text: str(text).split(str(sep)), "separator, text"),
    "select": _binary(_select_item, "index, [values]"),
    "toJSON": _unary(lambda value: dumped(value, separators=(",", ":"))),
    "fromJSON": _unary(json.loads),
    "toBase64": _unary(lambda text: base64.b64encode(str(text).encode()).decode()),
    "fromBase64": _unary(lambda text: base64.b64decode(str(text), validate=True).decode()),
    "secret": lambda _, args: Output.secret(args),
    "readFile": _read_file,
}


# --- manifests and charts -------------------------------------------------------------------


@dataclass(frozen=True)
class Component:
    """A type that is a Stackwright class taking keyword arguments (loaded on first use)."""

    module: str
    name: str
    #: YAML property → keyword argument.
    keys: Mapping[str, str]
    #: Keywords that hold file paths (relative to the program's folder), and the one that
    #: may hold a path or a chart reference (`./charts/web` or `bitnami/nginx`).
    paths: frozenset[str] = frozenset()
    chart: str | None = None
    #: Whether it is rendered or read when declared (a manifest, a chart), so that only
    #: the objects' own fields (values, yaml, objs) may wait for another resource.
    rendered: bool = True

    def declare(
        self,
        evaluator: Evaluator,
        entry: Entry,
        token: str,
        props: Mapping[str, Any],
        opts: ResourceOptions,
    ) -> Resource:
        keywords = _keywords(entry, props, self.keys)
        for key, value in props.items():
            shape = PROPERTY_SHAPES.get(key)
            if shape is not None and not isinstance(value, Output) and not shape[0](value):
                raise _Problem(entry.line, f"resource {entry.name}: {key} must be {shape[1]}")
            # Rendered or read when declared: only the objects' own fields may wait.
            if self.rendered and key not in ("values", "yaml", "objs") and _has_output(value):
                raise _Problem(
                    entry.line,
                    f"resource {entry.name}: {key} must be known when the program runs (a "
                    "literal, configuration or variable), not another resource's output; "
                    "write it out, with dependsOn for the order",
                )
        opts_given = props.get("repositoryOpts")
        if isinstance(opts_given, dict):
            keywords["repository_opts"] = _keywords(
                entry, opts_given, _REPOSITORY_KEYS, "repositoryOpts key"
            )
        for key in self.paths & set(keywords):
            keywords[key] = _paths(evaluator, keywords[key])
        chart = keywords.get(self.chart or "")
        if isinstance(chart, str) and chart.startswith((".", "/")):
            keywords["chart"] = _paths(evaluator, chart)
        cls = getattr(importlib.import_module(self.module), self.name)
        former = getattr(cls, "TYPE", token)
        if former != token:
            # Its URN holds the type the program writes, as Pulumi YAML's does; a stack made
            # when it held the Python class's (`kubernetes:yaml:ConfigGroup`) keeps its
            # objects, renamed by an alias, which its children's URNs follow.
            cls = cls.typed(token)
            opts = ResourceOptions.merge(opts, ResourceOptions(aliases=[Alias(type_=former)]))
        made: Resource = cls(entry.name, opts=opts, **keywords)
        return made


def _paths(evaluator: Evaluator, value: Any) -> Any:
    if isinstance(value, list):
        return [_paths(evaluator, v) for v in value]
    return str(evaluator.folder / value) if isinstance(value, str) else value


def _texts(value: Any) -> bool:
    return isinstance(value, str) or (
        isinstance(value, list) and all(isinstance(v, (str, Output)) for v in value)
    )


def _objects(value: Any) -> bool:
    return isinstance(value, dict) or (
        isinstance(value, list) and all(isinstance(v, (dict, Output)) for v in value)
    )


_TEXT = (lambda v: isinstance(v, str), "a text")
_FLAG = (lambda v: isinstance(v, bool), "true or false")
#: What each property of a manifest or chart type takes (checked before its class sees it).
PROPERTY_SHAPES: Mapping[str, tuple[Callable[[Any], bool], str]] = {
    "file": _TEXT,
    "directory": _TEXT,
    "chart": _TEXT,
    "version": _TEXT,
    "namespace": _TEXT,
    "resourcePrefix": _TEXT,
    "files": (_texts, "a text or a list of texts"),
    "yaml": (_texts, "a text or a list of texts"),
    "valueYamlFiles": (_texts, "a text or a list of texts"),
    "objs": (_objects, "a mapping or a list of mappings (Kubernetes objects)"),
    "values": (lambda v: isinstance(v, dict), "a mapping"),
    "repositoryOpts": (lambda v: isinstance(v, dict), "a mapping (repo, username, password, …)"),
    "timeout": (lambda v: type(v) is int, "a whole number of seconds"),
    "maxHistory": (lambda v: type(v) is int, "a whole number"),
    "skipAwait": _FLAG,
    "skipCrds": _FLAG,
    "createNamespace": _FLAG,
    "rollbackOnFailure": _FLAG,
}

_MANIFESTS = {"resourcePrefix": "resource_prefix", "skipAwait": "skip_await"}
#: `repositoryOpts` keys as YAML spells them → the chart classes' `repository_opts` keys.
_REPOSITORY_KEYS = {
    "repo": "repo",
    "username": "username",
    "password": "password",
    "insecureSkipTlsVerify": "insecure_skip_tls_verify",
    "plainHttp": "plain_http",
}
_CHARTS = {
    "chart": "chart",
    "version": "version",
    "repositoryOpts": "repository_opts",
    "values": "values",
    "valueYamlFiles": "value_files",
    "namespace": "namespace",
}

COMPONENTS: Mapping[str, Component] = {
    "kubernetes:yaml/v2:ConfigFile": Component(
        "stackwright.kubernetes.yaml",
        "ConfigFile",
        {"file": "file", **_MANIFESTS},
        frozenset({"file"}),
    ),
    "kubernetes:yaml/v2:ConfigGroup": Component(
        "stackwright.kubernetes.yaml",
        "ConfigGroup",
        {"files": "files", "yaml": "yaml", "objs": "objs", **_MANIFESTS},
        frozenset({"files"}),
    ),
    "kubernetes:kustomize/v2:Directory": Component(
        "stackwright.kubernetes.kustomize",
        "Directory",
        {"directory": "directory", "namespace": "namespace", **_MANIFESTS},
        frozenset({"directory"}),
    ),
    "kubernetes:helm.sh/v4:Chart": Component(
        "stackwright.kubernetes.helm",
        "Chart",
        {**_CHARTS, "skipCrds": "skip_crds", **_MANIFESTS},
        frozenset({"value_files"}),
        chart="chart",
    ),
    "kubernetes:helm.sh/v3:Release": Component(
        "stackwright.kubernetes.helm",
        "Release",
        {
            **_CHARTS,
            "name": "name",  # the Helm release's, as Pulumi YAML's (else the resource's)
            "createNamespace": "create_namespace",
            "timeout": "timeout",
            "rollbackOnFailure": "rollback_on_failure",
            "maxHistory": "max_history",
        },
        frozenset({"value_files"}),
        chart="chart",
        rendered=False,  # a release is installed when applied, with its inputs then known
    ),
}


def run_yaml_program(path: Path) -> None:
    """Declare what the YAML program at `path` declares, in the current program run."""
    document = load(path)
    try:
        Evaluator(document).run()
    except _Problem as problem:
        raise UsageError(located(f"{path}:{problem.line}", f"{problem.text}")) from None
