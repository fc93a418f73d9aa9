"""Existing Kubernetes YAML as Stackwright resources: `ConfigFile` and `ConfigGroup`.

    import stackwright.kubernetes as k8s

    app = k8s.yaml.ConfigFile("app", file="manifests/app.yaml")
    more = k8s.yaml.ConfigGroup("more", files=["crds/*.yaml"], yaml=[TEXT], objs=[{...}])

Each document becomes a child resource of its own, named `<kind>:<namespace>/<name>`
(`<kind>:<name>` when the document names no namespace), so that a change to one
object updates only that object; the engine orders CRDs and namespaces before what
depends on them and waits for readiness as for objects written in Python.
Multi-document files, `List` kinds, empty documents and comments are handled.

The options go where Pulumi's classes take them, as `opts=` or positionally: second, as
yaml.v2's (`ConfigFile("app", opts, file=...)`), or after the sources, as yaml's
(`ConfigFile("app", "app.yaml", opts)`, `ConfigGroup("g", files, yaml, opts)`);
`k8s.kustomize.Directory` takes them as kustomize.v2's and kustomize's do.

`transformations` are called as `fn(obj, opts)` on every object, in order, before it
is registered (as Pulumi's): mutate `obj` in place; since `ResourceOptions` is
immutable, return a new one (e.g. `dataclasses.replace(opts, protect=True)`) to change
the child's options, or None to keep them. Emptying the object (`obj.clear()`) or making
it an empty `List` (Pulumi's way) drops it.

Reading files, fetching URLs and parsing happen while the program declares its
resources; nothing here talks to a cluster. Bad input is a `UsageError` naming the
file, the document and the line.
"""

from __future__ import annotations

import functools
import glob
import os
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import islice
from typing import Any, ClassVar

import yaml

from stackwright.errors import UsageError, located, not_utf8, yaml_problem
from stackwright.kubernetes.base import CustomObject, type_token
from stackwright.model import CLUSTER_SCOPED
from stackwright.sdk.output import Output, parse_path
from stackwright.sdk.resource import (
    ComponentResource,
    CustomResource,
    Declaration,
    Resource,
    ResourceOptions,
    _declared_at,
    declaring_at,
)

__all__ = ["ConfigFile", "ConfigGroup", "Transformation"]

#: `fn(obj, opts)`: mutate the object in place; return new options or None.
Transformation = Callable[[dict[str, Any], ResourceOptions], "ResourceOptions | None"]

SKIP_AWAIT = "stackwright.io/skip-await"

_BaseLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_BaseLoader):  # type: ignore[misc]
    """The safe loader (libyaml's when built), reading unquoted dates as strings, as
    Kubernetes does (YAML → JSON): `date: 2025-01-01` stays "2025-01-01", not a date."""

    yaml_implicit_resolvers = {
        first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
        for first, resolvers in _BaseLoader.yaml_implicit_resolvers.items()
    }


@dataclass(frozen=True)
class Document:
    """One parsed object and where it came from, for messages."""

    obj: Any
    source: str
    index: int


def _open(source: str) -> str:
    """The text of a file path or an http(s) URL."""
    if source.startswith(("http://", "https://")):
        import urllib.request  # only here: with http.client and email it costs ~15 ms at start

        try:
            with urllib.request.urlopen(source, timeout=30) as response:
                data: bytes = response.read()
        except OSError as exc:  # urllib.error.URLError is one
            raise UsageError(f"cannot fetch manifest {source}: {exc}") from exc
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise not_utf8(f"manifest {source}", exc) from exc
    try:
        with open(source, encoding="utf-8") as handle:
            return handle.read()
    except UnicodeDecodeError as exc:
        raise not_utf8(f"manifest file {source}", exc) from exc
    except OSError as exc:
        raise UsageError(
            f"cannot read manifest file {source}: {exc.strerror or exc} "
            f"(relative paths are from {os.getcwd()})"
        ) from exc


def parse(text: str, source: str) -> list[Document]:
    """The documents of a YAML stream, empty ones dropped, `List` kinds expanded."""
    documents: list[Document] = []
    count = 0  # load_all yields documents one by one: the failing one is the next
    try:
        for obj in yaml.load_all(text, Loader=_Loader):
            if obj is not None:
                documents.append(Document(obj, source, count))
            count += 1
    except yaml.YAMLError as exc:
        raise UsageError(
            f"invalid YAML in {source}, document {count + 1}, {yaml_problem(exc)}; "
            "fix the YAML (check indentation and quoting)"
        ) from exc
    return documents


def _document_starts(text: str) -> list[int]:
    """The 0-based line each document of `text` starts on (only for messages: slower)."""
    starts: list[int] = []
    try:
        for event in yaml.parse(text, Loader=_Loader):
            if isinstance(event, yaml.DocumentStartEvent) and event.start_mark is not None:
                starts.append(event.start_mark.line)
    except yaml.YAMLError:
        pass
    return starts or [0]


def expand(documents: Iterable[Document]) -> Iterator[Document]:
    """Each object, with `List` kinds (`List`, `ConfigMapList`, …) replaced by their items."""
    for doc in documents:
        obj = doc.obj
        kind = obj.get("kind") if isinstance(obj, dict) else None
        items = obj.get("items") if isinstance(obj, dict) else None
        if isinstance(kind, str) and kind.endswith("List") and isinstance(items, list):
            for item in items:
                if isinstance(item, dict) and kind != "List":
                    # Items of a typed list may leave out what the list already says.
                    item.setdefault("apiVersion", obj.get("apiVersion"))
                    item.setdefault("kind", kind[: -len("List")])
                yield from expand([Document(item, doc.source, doc.index)])
        else:
            yield doc


def _origin(doc: Document) -> str:
    """`file (document N)`: where an imported object came from, for failure messages."""
    return f"{doc.source} (document {doc.index + 1})"


def field_line(node: yaml.Node | None, keys: Iterable[object], line: int) -> int:
    """The line (1-based) where the field at `keys` inside `node` is written, as far as the
    path is written there (a key it does not hold, an index past the end: the last one
    found); `line` where not even the first is."""
    for key in keys:
        if isinstance(key, str) and isinstance(node, yaml.MappingNode):
            found = next(((k, v) for k, v in node.value if k.value == key), None)
            if found is None:
                break
            line, node = found[0].start_mark.line + 1, found[1]
        elif isinstance(key, int) and isinstance(node, yaml.SequenceNode):
            if not 0 <= key < len(node.value):
                break
            node = node.value[key]
            line = node.start_mark.line + 1
        else:
            break
    return line


@dataclass
class ManifestDeclaration(Declaration):
    """Where an object of a manifest was declared: the program's line (its ConfigFile's or
    ConfigGroup's), and, for an object of a file, where each of its fields is written in the
    file (`of_field`: `app.yaml:12`), which a message about the field names instead."""

    #: The file, its text as read and the object's document in it; no text: no file (a YAML
    #: string, a dict), whose fields are where the program declares them.
    source: str = ""
    text: str | None = field(default=None, repr=False)
    index: int = 0

    def of_field(self, path: str) -> Declaration:
        """Read again from the text: only a message needs it. The document's first line for
        a field not written as such (an item of a `List`, a field a transformation set)."""
        if self.text is None:
            return self
        try:
            keys = parse_path(path, items=True)
            node = next(islice(yaml.compose_all(self.text, Loader=_Loader), self.index, None))
        except (StopIteration, ValueError, yaml.YAMLError):
            return self
        return Declaration(self.source, field_line(node, keys, node.start_mark.line + 1))


def check_object(doc: Document, text: str | None) -> tuple[str, str, str, str | None]:
    """(apiVersion, kind, name, namespace) of a document, or a UsageError saying what is missing."""
    obj = doc.obj
    metadata = obj.get("metadata") if isinstance(obj, dict) else None
    api_version = obj.get("apiVersion") if isinstance(obj, dict) else None
    kind = obj.get("kind") if isinstance(obj, dict) else None
    name = metadata.get("name") if isinstance(metadata, dict) else None
    namespace = metadata.get("namespace") if isinstance(metadata, dict) else None
    missing = [
        field
        for field, value in (("apiVersion", api_version), ("kind", kind), ("metadata.name", name))
        if not isinstance(value, str) or not value
    ]
    if not isinstance(obj, dict) or missing:
        line = ""
        if text is not None:
            starts = _document_starts(text)
            if doc.index < len(starts):
                line = f" (line {starts[doc.index] + 1})"
        what = "is not a mapping" if not isinstance(obj, dict) else "has no " + ", ".join(missing)
        raise UsageError(
            f"document {doc.index + 1} of {doc.source}{line} {what}: every Kubernetes object needs "
            "apiVersion, kind and metadata.name"
        )
    if namespace is not None and not isinstance(namespace, str):
        raise UsageError(
            f"document {doc.index + 1} of {doc.source}: metadata.namespace must be a string"
        )
    return api_version, kind, name, namespace  # type: ignore[return-value]


def dropped(obj: Any) -> bool:
    """Whether transformations dropped the object: emptied it (`obj.clear()`), or made it an
    empty `List`, as Pulumi's documentation writes it (`obj["kind"] = "List"`)."""
    if not obj:
        return True
    kind = obj.get("kind") if isinstance(obj, dict) else None
    return isinstance(kind, str) and kind.endswith("List") and not obj.get("items")


def child_name(kind: str, name: str, namespace: str | None, prefix: str | None) -> str:
    base = f"{kind}:{namespace}/{name}" if namespace else f"{kind}:{name}"
    return f"{prefix}-{base}" if prefix else base


class ManifestObject(CustomObject):
    """One imported object, registered exactly as parsed (no keyword-argument spelling)."""

    def __init__(
        self,
        resource_name: str,
        obj: dict[str, Any],
        opts: ResourceOptions,
        origin: str = "",
        file: Document | None = None,
        text: str | None = None,
        path: str = "",
    ) -> None:
        """`origin`: where it came from, for messages; `file`: its document in a file whose
        `text` says where each field is written, the file at `path` (absolute: a message
        names it from where the command started, not from the program's folder)."""
        token = type_token(obj["apiVersion"], obj["kind"])
        self._origin = origin  # before registering: failures name the file, not the program
        where = _declared_at()
        declared = ManifestDeclaration(where.file, where.line)
        if file is not None and text is not None:
            declared = replace(declared, source=path or file.source, text=text, index=file.index)
        with declaring_at(declared):
            CustomResource.__init__(self, token, resource_name, obj, opts)


class ManifestComponent(ComponentResource):
    """The parent of imported objects: `resources` by child name, `get_resource` by kind and name."""

    #: Its type token: Pulumi's Python class's (`kubernetes:yaml:ConfigGroup`); `typed` makes
    #: the class of another (a YAML program's `kubernetes:yaml/v2:ConfigGroup`).
    TYPE: ClassVar[str]
    #: What its messages call it (`ConfigFile 'app' at __main__.py:3: …`).
    LABEL: ClassVar[str]

    @classmethod
    @functools.cache
    def typed(cls, token: str) -> type[ManifestComponent]:
        """This class, registering its components under the type `token`."""
        made: type[ManifestComponent] = type(
            cls.__name__, (cls,), {"TYPE": token, "__module__": cls.__module__}
        )
        return made

    def __init__(
        self, type_: str, name: str, props: Mapping[str, Any], opts: ResourceOptions | None
    ) -> None:
        # The `kubernetes` package is reserved for Stackwright's own types, which these are;
        # the component check would refuse it, so register as Resource does.
        self._outputs: dict[str, Any] = {}
        Resource.__init__(self, type_, name, props, opts, custom=False)
        self.resources: dict[str, CustomResource] = {}
        self._index: dict[tuple[str, str, str, str | None], CustomResource] = {}

    def register_documents(
        self,
        documents: Iterable[Document],
        *,
        texts: Mapping[str, str] | None = None,
        files: Collection[str] = (),
        transformations: Sequence[Transformation] | None = None,
        resource_prefix: str | None = None,
        skip_await: bool = False,
        namespace: str | None = None,
    ) -> None:
        """Each object a child: named, placed in `namespace` (`place`), annotated,
        transformed, then registered. `texts`: each source's text, by source; `files`: the
        sources that are files (or URLs), whose lines a message about an object's field
        names."""
        texts = texts or {}
        # Once per file, not per object: relative paths are from the program's folder.
        paths = {
            s: s if s.startswith(("http://", "https://")) else os.path.abspath(s) for s in files
        }
        docs = list(expand(documents))
        reading = Reading(self.LABEL, self.resource_name)  # its errors name the component
        with reading:
            for doc in docs:  # all checked before any is declared: bad input declares nothing
                check_object(doc, texts.get(doc.source))
        placing = (namespace, cluster_scoped_kinds(doc.obj for doc in docs)) if namespace else None
        for doc in docs:
            obj: dict[str, Any] = doc.obj
            if placing is not None:
                place(obj, *placing)
            if skip_await:
                mark_skip_await(obj)
            opts = ResourceOptions(parent=self)
            for fn in transformations or ():
                changed = fn(obj, opts)
                if isinstance(changed, ResourceOptions):
                    opts = replace(changed, parent=changed.parent or self)
            if dropped(obj):
                continue
            # Named after the transformation, which may rename or move the object.
            with reading:
                api_version, kind, name, namespace = check_object(doc, texts.get(doc.source))
            child = child_name(kind, name, namespace, resource_prefix)
            if child in self.resources:
                within = f" in namespace {namespace!r}" if namespace else ""
                raise UsageError(
                    located(
                        reading.where,
                        f"{reading.what} {self.resource_name!r}: {kind} {name!r}{within} is "
                        f"declared twice (again in document {doc.index + 1} of {doc.source}): "
                        "remove one of them",
                    )
                )
            file = doc if doc.source in files else None
            resource = ManifestObject(
                child,
                obj,
                opts,
                _origin(doc),
                file,
                texts.get(doc.source),
                paths.get(doc.source, ""),
            )
            self.resources[child] = resource
            self._index[(api_version, kind, name, namespace)] = resource

    def get_resource(
        self, kind_or_group_version_kind: str, name: str, namespace: str | None = None
    ) -> CustomResource:
        """The child for `"Service"`, `"v1/Service"` or `"apps/v1/Deployment"` with that name."""
        wanted = kind_or_group_version_kind
        api_version, _, kind = wanted.rpartition("/")
        for (av, k, n, ns), resource in self._index.items():
            if (
                k == kind
                and n == name
                and ns == namespace
                and (not api_version or av == api_version)
            ):
                return resource
        known = ", ".join(sorted(self.resources)[:10]) or "none"
        where = f" in namespace {namespace!r}" if namespace else ""
        raise UsageError(f"{self.resource_name!r} has no {wanted} {name!r}{where}; it has: {known}")


def source_and_options(
    label: str,
    name: str,
    second: object,
    keyword: tuple[str, Any],
    opts: ResourceOptions | None,
    takes: tuple[str, tuple[type, ...]],
) -> tuple[Any, ResourceOptions | None]:
    """(source, opts) of a component whose second positional argument is its source, as
    Stackwright's own examples write it (`ConfigFile("app", "app.yaml")`), or its options,
    as Pulumi's generated classes take them (yaml.v2, kustomize.v2, helm.v4.Chart,
    helm.v3.Release: `Chart("web", opts, chart=...)`). `keyword` is the source's keyword
    and its value given as one; `takes` says what the source is, and its types. A
    UsageError at the program's line for anything else, or for either given twice."""
    word, given = keyword
    if isinstance(second, ResourceOptions):
        return given, options_once(label, name, second, opts)
    if second is None:
        return given, opts
    what = f"{label} {name!r}"
    if given is not None:
        raise UsageError(
            located(
                _declared_at(),
                f"{what}: {word} given twice, as the second argument and as {word}=; give it once",
            )
        )
    description, types = takes
    if not isinstance(second, types) or isinstance(second, Mapping):
        kind = type(second).__name__
        args = isinstance(second, Mapping) or kind.endswith(("Args", "Opts"))
        raise UsageError(
            located(
                _declared_at(),
                f"{what}: the second argument must be the {word} ({description}) or a "
                f"ResourceOptions, not a {kind}"
                + ("; Stackwright takes no args object" if args else "")
                + f": write {label}({name!r}, {word}=..., opts=sw.ResourceOptions(...))"
                + (", the other fields as keyword arguments" if args else ""),
            )
        )
    return second, opts


def options_once(
    label: str, name: str, placed: ResourceOptions, opts: ResourceOptions | None
) -> ResourceOptions:
    """Options a program put where Pulumi's class takes them positionally, unless `opts=`
    gives them too (which would leave one of the two unused)."""
    if opts is not None:
        raise UsageError(
            located(
                _declared_at(),
                f"{label} {name!r}: ResourceOptions given twice, as a positional argument and "
                "as opts=; give them once",
            )
        )
    return placed


def cluster_scoped_kinds(objects: Iterable[Mapping[str, Any]]) -> frozenset[str]:
    """The cluster-scoped kinds among `objects`: the built-in ones, and those of the CRDs
    among them with `scope: Cluster` (discovery is not reachable while a program runs; for
    a custom kind whose CRD is in the cluster already, the provider drops the namespace at
    apply, as kubectl does, by the cluster's discovery)."""
    own = set()
    for obj in objects:
        spec = obj.get("spec")
        if obj.get("kind") != "CustomResourceDefinition" or not isinstance(spec, Mapping):
            continue
        names = spec.get("names")
        kind = names.get("kind") if isinstance(names, Mapping) else None
        if spec.get("scope") == "Cluster" and isinstance(kind, str):
            own.add(kind)
    return CLUSTER_SCOPED | own


def place(obj: dict[str, Any], namespace: str | None, cluster_scoped: frozenset[str]) -> None:
    """Put an object without a namespace of its own into `namespace`, as `helm install
    --namespace` and kustomize's `namespace:` do; take a cluster-scoped kind's away."""
    metadata = obj["metadata"]
    if obj["kind"] in cluster_scoped:
        metadata.pop("namespace", None)
    elif namespace and not metadata.get("namespace"):
        metadata["namespace"] = namespace


def known_while_running(what: str, key: str, given: object, why: str) -> None:
    """Refuse another resource's Output where a component needs the value while the program
    runs (`why`: what uses it then), as Pulumi's classes take Inputs there: said at the
    program's line (`what` is located already)."""
    if isinstance(given, Output):
        raise UsageError(
            f"{what}: {key} must be a plain string while the program runs, not another "
            f"resource's Output ({why}): write it out, with depends_on for the order"
        )


def mark_skip_await(obj: dict[str, Any]) -> None:
    """Annotate an object so that nothing waits for it to be ready (`skip_await`)."""
    metadata = obj["metadata"]
    if not isinstance(metadata.get("annotations"), dict):
        metadata["annotations"] = {}
    metadata["annotations"][SKIP_AWAIT] = "true"


class Reading:
    """Bad input met while reading a component's sources (a missing file, bad YAML) also names
    the component and the program line that declared it, as a Helm chart's does. A class,
    not `contextlib.contextmanager`, whose frames are outside the package and would be
    taken for the declaring line."""

    def __init__(self, what: str, name: str) -> None:
        self.what, self.name, self.where = what, name, _declared_at()

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: object, exc: BaseException | None, tb: object) -> None:
        if isinstance(exc, UsageError):
            raise UsageError(located(self.where, f"{self.what} {self.name!r}: {exc}")) from exc


#: What a ConfigFile's source is, and what ConfigGroup's `files` are (for a message).
_A_FILE = ("a path or an http(s) URL", (str, os.PathLike))
_FILES = ("a path, glob or http(s) URL, or a list of them", (str, os.PathLike, Iterable))


class ConfigFile(ManifestComponent):
    """The objects of one YAML file (a path or an http(s) URL), each a child resource."""

    TYPE = "kubernetes:yaml:ConfigFile"
    LABEL = "ConfigFile"

    def __init__(
        self,
        name: str,
        file_or_opts: str | os.PathLike[str] | ResourceOptions | None = None,
        /,
        transformations: Sequence[Transformation] | ResourceOptions | None = None,
        resource_prefix: str | None = None,
        skip_await: bool = False,
        opts: ResourceOptions | None = None,
        *,
        file: str | os.PathLike[str] | None = None,
    ) -> None:
        file, opts = source_and_options(
            self.LABEL, name, file_or_opts, ("file", file), opts, _A_FILE
        )
        if isinstance(transformations, ResourceOptions):  # Pulumi's (name, file, opts)
            opts, transformations = options_once(self.LABEL, name, transformations, opts), None
        source = os.fspath(file if file is not None else name)
        with Reading(self.LABEL, name):
            text = _open(source)
            documents = parse(text, source)
        super().__init__(self.TYPE, name, {"file": source}, opts)
        self.register_documents(
            documents,
            texts={source: text},
            files={source},
            transformations=transformations,
            resource_prefix=resource_prefix,
            skip_await=skip_await,
        )


def _expand_globs(patterns: Sequence[str | os.PathLike[str]] | str) -> list[str]:
    if isinstance(patterns, (str, os.PathLike)):
        patterns = [patterns]
    found: list[str] = []
    for pattern in [os.fspath(p) for p in patterns]:
        if pattern.startswith(("http://", "https://")):
            found.append(pattern)
            continue
        matches = sorted(glob.glob(pattern, recursive=True))
        if not matches:
            raise UsageError(
                f"files pattern {pattern!r} matches no file (relative paths are from {os.getcwd()})"
            )
        found.extend(matches)
    return found


class ConfigGroup(ManifestComponent):
    """Objects from files (globs or URLs), YAML strings and dicts, each a child resource."""

    TYPE = "kubernetes:yaml:ConfigGroup"
    LABEL = "ConfigGroup"

    def __init__(
        self,
        name: str,
        files_or_opts: Sequence[str | os.PathLike[str]] | str | ResourceOptions | None = None,
        /,
        yaml: Sequence[str] | str | None = None,
        objs: Sequence[Mapping[str, Any]] | Mapping[str, Any] | ResourceOptions | None = None,
        transformations: Sequence[Transformation] | None = None,
        resource_prefix: str | None = None,
        skip_await: bool = False,
        opts: ResourceOptions | None = None,
        *,
        files: Sequence[str | os.PathLike[str]] | str | None = None,
    ) -> None:
        files, opts = source_and_options(
            self.LABEL, name, files_or_opts, ("files", files), opts, _FILES
        )
        if isinstance(objs, ResourceOptions):  # Pulumi's (name, files, yaml, opts)
            opts, objs = options_once(self.LABEL, name, objs, opts), None
        texts: dict[str, str] = {}
        documents: list[Document] = []
        strings = [yaml] if isinstance(yaml, str) else list(yaml or [])
        with Reading(self.LABEL, name):
            paths = _expand_globs(files or [])
            for source in paths:
                texts[source] = _open(source)
                documents.extend(parse(texts[source], source))
            for i, text in enumerate(strings):
                source = f"yaml[{i}] of ConfigGroup {name!r}"
                texts[source] = text
                documents.extend(parse(text, source))
        dicts = [objs] if isinstance(objs, Mapping) else list(objs or [])
        for i, obj in enumerate(dicts):
            documents.append(Document(dict(obj), f"objs[{i}] of ConfigGroup {name!r}", 0))
        super().__init__(self.TYPE, name, {}, opts)
        self.register_documents(
            documents,
            texts=texts,
            files=set(paths),
            transformations=transformations,
            resource_prefix=resource_prefix,
            skip_await=skip_await,
        )
