"""Helm charts in a stack: `k8s.helm.Chart` renders a chart with real Helm, in process,
and registers every object it renders as a child resource of its own.

    chart = k8s.helm.Chart("web", chart="./charts/webapp", values={"image": {"tag": "1.29"}},
                           namespace="web")

So each object gets the same preview, ordering, waiting, policy and drift detection as an
object written in Python, and a change to one value updates only the objects it touches.
Helm does not own a release here (nothing is stored in the cluster by Helm).
`k8s.helm.Release` is the alternative where it does: one resource (type `RELEASE_TYPE`)
that the engine installs, upgrades and uninstalls through the provider's `release_*`
methods (stackwright/engine/wiring.py runs Helm's blocking calls in a thread).

How helm-python-sdk is used (import name `helm_python`, a ctypes binding of libhelm_c, a
C ABI over Helm v4's Go SDK, bundled in the wheel; no helm binary, no Go):

- `helm_python.Chart.load(path)` loads a chart directory or `.tgz`, with its `charts/`
  subcharts (a `file://` dependency must already sit unpacked in `charts/`);
  `Chart.load_archive(bytes)` loads a `.tgz` held in memory.
- `chart.render(values, name=, namespace=, is_install=True)` is `helm template`: Helm's
  engine with the chart's defaults coalesced under `values`; no cluster and no kubeconfig
  (`lookup` returns nothing). It returns `{template path: manifest}` for the chart and
  its subcharts, `NOTES.txt` included and `crds/` excluded; as Helm's install, every
  template but NOTES.txt and `_` partials is a manifest, whatever its extension.
- `chart.crds` lists `crds/` of the chart and its subcharts as `[{name, filename, data}]`.
- `helm_python.pull(name, repo_url=, version=, destination=)` downloads from an HTTP(S)
  chart repository through its index.yaml, and `pull("oci://host/path/name", ...)` from
  an OCI registry; both write `<name>-<version>.tgz` and need no `helm repo add`. It
  takes `username` / `password` (for an HTTP repository only: a registry's come from a
  `helm_python.RegistryClient` that logged in), `insecure_skip_tls_verify` (which a
  registry's pull honours only through such a client: its default one verifies) and
  `plain_http`; Helm's `--ca-file`, `--cert-file` and `--key-file` have no binding.
  `Config.install` / `upgrade` take no credentials: a `Release`'s chart is pulled the
  same way (`loaded_chart`) and handed to Helm loaded.
- `helm_python.values_from_yaml(text)` parses a values file as Helm's `-f` does.
- Errors are `helm_python.HelmError` subclasses carrying Helm's own message
  (`HelmChartLoadError`, `HelmRenderError` "execution error at (webapp/templates/x.yaml:19:52):
  ...", `HelmValuesError`, `HelmRepoError`); they become `UsageError`s naming the chart.

What the component does with the rendered objects:

- Child names are `<kind>:<namespace>/<name>` (`<kind>:<name>` without a namespace),
  with `resource_prefix` + `-` in front when given; two charts rendering the same objects
  in one program need different prefixes.
- `.Release.Namespace` is where the objects land, as in Helm's install: `namespace`, else
  the provider's default namespace (`kubernetes.provider.provider_namespace`: a provider's
  plain `namespace`, else its kubeconfig context's; the stack's `kubernetes:namespace`
  for its default provider). Without `namespace`, objects keep none of their own: the
  provider puts them in that same namespace at apply, and the children's names stay.
- Objects without a namespace go into `namespace`, except cluster-scoped kinds: the
  built-in ones (`CLUSTER_SCOPED`) and those of the CRDs the chart itself brings with
  `scope: Cluster` (discovery is not reachable while a program runs; for a custom kind
  whose CRD is already in the cluster, the provider drops the namespace at apply, as
  kubectl does, by the cluster's discovery).
- `crds/` are registered first (the engine also orders a CRD before objects of its kind);
  `skip_crds=True` leaves them out.
- Hooks (`helm.sh/hook`): pre-install / pre-upgrade hooks are applied before every other
  object of the chart (each other object `depends_on` them; hooks of a higher
  `helm.sh/hook-weight` depend on those of a lower one), but not a Namespace or CRD of the
  chart on the hooks it holds (inside it, of its kind), which the engine orders after it;
  post-install / post-upgrade hooks depend on every other object; test hooks are skipped,
  and so are hooks that only run on delete or rollback (applying them with the chart
  would run them at the wrong time).
  Hook delete policies are not applied: a hook is an ordinary, kept object.
- `transformations=[fn]` follow `k8s.yaml`'s contract: `fn(obj, opts)` changes the
  object in place and may return new `ResourceOptions` (their `depends_on` is added to
  the hook ordering); emptying the object (`obj.clear()`) or making it an empty `List`
  drops it. They run after the
  namespace is filled in and before the child is named.
- Shared with `k8s.yaml` (stackwright/kubernetes/yaml.py): `ManifestObject` (an object
  registered exactly as parsed) and `child_name`.
- `skip_await=True` annotates every object `stackwright.io/skip-await: "true"`.
- `helm.sh/resource-policy: keep` is `retain_on_delete`: `destroy`, or an upgrade that no
  longer renders the object, leaves it in the cluster, as Helm does (and Pulumi's Chart).

Values may hold Outputs. Those that depend on no resource (config values, secrets) are
resolved before rendering; if any is secret, the chart is rendered a second time with
each secret value replaced by a different one, and the fields that differ are secret
(every field of every object when that rendering fails or gives other objects). Those
that depend on other resources' live state (`db.metadata["name"]`) are not known while
the program runs, yet the chart's objects must be: the chart is rendered then with a
placeholder for each such value (`_LiveValues`), which gives the objects, their names and
their order, and every field of every object becomes an Output that waits for those
resources. Once they are applied, Helm renders the chart again with the real values and
each field takes its real value; until then (in a preview) a field shows the
placeholder rendering with every string that holds a placeholder unknown — so the
preview shows `(known after apply)` exactly where the values reach. An object's name and
namespace may not depend on such values, and the real rendering must give the same
objects as the placeholder one (a `UsageError` naming the difference, at apply time).

Must never: contact a cluster, write outside a temporary directory, or let a Helm or YAML
error escape without the chart's name.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import secrets
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml

from stackwright.errors import (
    UsageError,
    located,
    not_utf8,
    remember_secret,
    url_shown,
    yaml_problem,
)
from stackwright.kubernetes.provider import RELEASE_TYPE, provider_namespace
from stackwright.kubernetes.yaml import (
    ManifestObject,
    Transformation,
    child_name,
    cluster_scoped_kinds,
    dropped,
    known_while_running,
    mark_skip_await,
    place,
    source_and_options,
)
from stackwright.model import CLUSTER_SCOPED
from stackwright.sdk.output import (
    UNKNOWN,
    Output,
    Secret,
    _contains_unknown,
    _holds_secret,
    dependencies_of,
    resolve,
    unwrap_secrets,
)
from stackwright.sdk.resource import (
    ComponentResource,
    CustomResource,
    Resource,
    ResourceOptions,
    _declared_at,
)

__all__ = [
    "CLUSTER_SCOPED",
    "RELEASE_TYPE",
    "Chart",
    "Release",
    "helm_refusal",
    "loaded_chart",
    "merge_values",
    "render",
]

#: The component's type token.
CHART_TYPE = "kubernetes:helm.sh/v4:Chart"

#: The annotation by which Helm keeps an object when uninstalling (`keep`).
_RESOURCE_POLICY = "helm.sh/resource-policy"

#: Hook phases that run with an install or upgrade, before or after the chart's objects.
_PRE_HOOKS = frozenset({"pre-install", "pre-upgrade"})
_POST_HOOKS = frozenset({"post-install", "post-upgrade"})

try:  # libyaml's loader is several times faster on large charts
    _Loader: Any = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - PyYAML built without libyaml
    _Loader = yaml.SafeLoader

#: A rendered object: the file it came from, the object, the options a transformation gave.
_Object = tuple[str, dict[str, Any], ResourceOptions]


class Chart(ComponentResource):
    """A Helm chart rendered by Helm in process; each object a child resource.

    `chart` is a local directory or `.tgz`, a chart name in the HTTP(S) repository
    `repository_opts={"repo": URL}`, or an `oci://host/path/name` reference (`plain_http`
    in `repository_opts` for a registry without TLS); `username`, `password` and
    `insecure_skip_tls_verify` in `repository_opts` for either, as `helm pull` takes them
    (they may be config values; the password is never an input of the chart or its
    objects). `version` picks a repository's version.
    `values` override the chart's defaults after `value_files`, in order, as Helm's `-f`
    and `--set` do. The release name is the component's name.

    The second positional argument is the chart (`Chart("web", "./charts/webapp")`) or the
    options, as Pulumi's helm.v4.Chart takes them (`Chart("web", opts, chart=...)`).
    """

    def __init__(
        self,
        name: str,
        chart_or_opts: str | os.PathLike[str] | ResourceOptions | None = None,
        /,
        version: str | None = None,
        repository_opts: Mapping[str, Any] | None = None,
        values: Mapping[str, Any] | None = None,
        value_files: Sequence[str | os.PathLike[str]] | None = None,
        namespace: str | None = None,
        skip_crds: bool = False,
        transformations: Sequence[Transformation] | None = None,
        resource_prefix: str | None = None,
        skip_await: bool = False,
        opts: ResourceOptions | None = None,
        *,
        chart: str | os.PathLike[str] | None = None,
    ) -> None:
        where = _declared_at()
        given_chart = chart_or_opts if chart is None else chart
        path = given_chart if isinstance(given_chart, str | os.PathLike) else None
        label = located(where, f"Helm chart {name!r}") + (
            f" ({os.fspath(path)})" if path is not None else ""
        )
        for key, given in (("chart", given_chart), ("namespace", namespace), ("version", version)):
            known_while_running(label, key, given, "Helm renders the chart then")
        chart, opts = _chart_and_options("Chart", name, chart_or_opts, chart, opts)
        what = located(where, f"Helm chart {name!r} ({os.fspath(chart)})")
        merged = merge_values(what, value_files or (), values or {})
        repository = _known_repository_opts(what, _repository_opts(what, repository_opts))
        transforms = transformations or ()
        props = {"chart": os.fspath(chart), "version": version, "namespace": namespace}
        self._prepare(CHART_TYPE, name, props, opts, custom=False)
        # What Helm's own install would give `.Release.Namespace`: where the objects land,
        # through the provider its options name once transforms have had their say.
        release_namespace = namespace or provider_namespace(what, self.opts)
        # A local chart by its absolute path: values that are Outputs render it again as the
        # run applies them, from whatever folder the run is in then.
        chart_path = os.fspath(chart)
        if "repo" not in repository and not chart_path.startswith("oci://"):
            chart_path = os.path.abspath(chart_path)

        def rendered_with(values: dict[str, Any]) -> tuple[list[_Object], list[_Object]]:
            crds, templates = render(
                what,
                chart_path,
                values,
                release=name,
                namespace=release_namespace,
                version=version,
                repository_opts=repository,
            )
            crd_docs, template_docs = _parse(what, crds), _parse(what, templates)
            cluster = cluster_scoped_kinds(obj for _, _, obj in crd_docs + template_docs)
            return (
                []
                if skip_crds
                else _prepare(what, crd_docs, namespace, cluster, transforms, skip_await),
                _prepare(what, template_docs, namespace, cluster, transforms, skip_await),
            )

        live = _LiveValues.of(what, merged, rendered_with)
        self._secret_props: dict[tuple[str, str, str], dict[str, Any]] | None = None
        if live is None:
            known, secret = _known_values(merged)
            crd_objects, objects = rendered_with(known)
            if secret:
                self._secret_props = _secret_where_reached(
                    merged, rendered_with, crd_objects + objects
                )
        else:
            crd_objects, objects = live.sketch
            secret = False  # a live value's fields carry its secretness themselves
        self._live = live
        # The `kubernetes` package is reserved for Stackwright's own types, which this is;
        # the component check would refuse it, so register as Resource does (once rendered).
        self._enroll()
        self._outputs: dict[str, Any] = {}
        self.resources: dict[str, ManifestObject] = {}
        for source, obj, child_opts in crd_objects:
            self._child(what, source, obj, child_opts, resource_prefix, secret, ())
        self._register(what, objects, resource_prefix, secret)

    @property
    def component_outputs(self) -> dict[str, Any]:
        return self._outputs

    def _register(
        self, what: str, objects: list[_Object], prefix: str | None, secret: bool
    ) -> None:
        pre: dict[int, list[_Object]] = {}
        post: list[_Object] = []
        plain: list[_Object] = []
        for item in objects:
            source, obj, _ = item
            phases = _hook_phases(obj)
            if phases is None:
                plain.append(item)
            elif phases & _PRE_HOOKS:
                pre.setdefault(_hook_weight(what, source, obj), []).append(item)
            elif phases & _POST_HOOKS:
                post.append(item)
            # else: test hooks and delete / rollback hooks are not part of an install
        before: Sequence[tuple[Resource, dict[str, Any]]] = ()
        hooks: list[tuple[Resource, dict[str, Any]]] = []
        for weight in sorted(pre):
            group: list[tuple[Resource, dict[str, Any]]] = [
                (self._child(what, *item, prefix, secret, _waits(item[1], before)), item[1])
                for item in pre[weight]
            ]
            hooks.extend(group)
            before = group
        main = [self._child(what, *item, prefix, secret, _waits(item[1], hooks)) for item in plain]
        for item in post:
            self._child(what, *item, prefix, secret, [*main, *(hook for hook, _ in hooks)])

    def _child(
        self,
        what: str,
        source: str,
        obj: dict[str, Any],
        opts: ResourceOptions,
        prefix: str | None,
        secret: bool,
        depends_on: Sequence[Resource],
    ) -> ManifestObject:
        metadata = obj["metadata"]
        name = child_name(obj["kind"], metadata["name"], metadata.get("namespace"), prefix)
        if name in self.resources:
            raise UsageError(
                f"{what}: {source} renders {name} a second time; each object needs its own "
                "kind, namespace and name"
            )
        if self._live is not None:
            props = self._live.fields(what, source, obj)
        elif self._secret_props is not None:
            props = self._secret_props[_identity(obj)]
        elif secret:
            props = _deferred_props(obj, lambda path, value: Output.secret(value))
        else:
            props = obj
        opts = replace(opts, parent=self, depends_on=(*depends_on, *opts.depends_on))
        child = ManifestObject(name, props, opts, origin=f"{source} of {what}")
        self.resources[name] = child
        return child


#: The fields that identify an object: kept plain (the engine names and orders by them).
_IDENTITY = ("apiVersion", "kind")
_IDENTITY_METADATA = ("name", "namespace")


def _deferred_props(
    obj: dict[str, Any], field: Callable[[tuple[str, ...], Any], Output[Any]]
) -> dict[str, Any]:
    """The object with every field but its identity turned into `field(path, value)`."""
    metadata = obj["metadata"]
    return {
        **{k: field((k,), v) for k, v in obj.items()},
        **{k: obj[k] for k in _IDENTITY},
        "metadata": {
            k: v if k in _IDENTITY_METADATA else field(("metadata", k), v)
            for k, v in metadata.items()
        },
    }


def _secret_where_reached(
    values: dict[str, Any],
    rendered_with: Callable[[dict[str, Any]], tuple[list[_Object], list[_Object]]],
    objects: list[_Object],
) -> dict[tuple[str, str, str], dict[str, Any]] | None:
    """Each object with secret exactly the fields the values' secrets reach: those that
    change when the chart is rendered again with every secret value replaced by a
    different one of its shape. None when that rendering fails or names other objects (the
    caller then makes every field secret). Every field secret would also remember each of
    their strings ("true", the namespace, the objects' names) as a secret to mask in every
    message and line of the display."""

    def no_state(resource: Resource) -> Any:  # pragma: no cover - no dependencies, never called
        return UNKNOWN

    try:
        stand_in = _stand_ins(resolve(values, no_state))
        crds, templates = rendered_with(stand_in)
    except UsageError:
        return None
    other = {_identity(obj): obj for _, obj, _ in itertools.chain(crds, templates)}
    found: dict[tuple[str, str, str], dict[str, Any]] = {}
    for _, obj, _ in objects:
        key = _identity(obj)
        if key not in other or other[key].get("apiVersion") != obj.get("apiVersion"):
            return None
        found[key] = _secret_where_different(obj, other[key])
    return found if len(other) == len(found) else None


def _stand_ins(value: Any) -> Any:
    """`value` (resolved, with Secret markers) with each secret leaf another of its kind."""
    if isinstance(value, Secret):
        return _different(unwrap_secrets(value.value)[0])
    if isinstance(value, dict):
        return {k: _stand_ins(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_stand_ins(v) for v in value]
    return value


def _different(plain: Any) -> Any:
    """A value of the same shape that differs in every letter and digit (so that even a
    template's `trunc 3` of it differs), and so most likely passes the same checks."""
    if isinstance(plain, bool):
        return not plain
    if isinstance(plain, int | float):
        return plain + 1
    if isinstance(plain, str):
        return plain.translate(_SHIFT)
    if isinstance(plain, dict):
        return {k: _different(v) for k, v in plain.items()}
    if isinstance(plain, list):
        return [_different(v) for v in plain]
    return plain


_LOWER, _UPPER, _DIGITS = "abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "0123456789"
_SHIFT = str.maketrans(
    _LOWER + _UPPER + _DIGITS, _LOWER[1:] + "a" + _UPPER[1:] + "A" + _DIGITS[1:] + "0"
)


def _secret_where_different(value: Any, other: Any) -> Any:
    if value == other:
        return value
    if isinstance(value, dict) and isinstance(other, dict) and value.keys() == other.keys():
        return {k: _secret_where_different(v, other[k]) for k, v in value.items()}
    if isinstance(value, list) and isinstance(other, list) and len(value) == len(other):
        return [_secret_where_different(v, o) for v, o in zip(value, other, strict=True)]
    return Output.secret(value)


def _identity(obj: dict[str, Any]) -> tuple[str, str, str]:
    metadata = obj["metadata"]
    return obj["kind"], metadata.get("namespace") or "", metadata["name"]


class _LiveValues:
    """A chart's values that hold Outputs of other resources' live state (see the module
    docstring): the placeholder rendering made while the program runs, and the real
    renderings made as the engine resolves the objects' fields (one per set of values)."""

    def __init__(
        self,
        what: str,
        values: dict[str, Any],
        rendered_with: Callable[[dict[str, Any]], tuple[list[_Object], list[_Object]]],
    ) -> None:
        self.what = what
        self.values = values
        self.rendered_with = rendered_with
        self.resources = frozenset(dependencies_of(values))
        self.secret = _holds_secret(values)
        # A placeholder no template would write by itself, safe in any YAML scalar.
        self.marker = f"sw-unknown-{secrets.token_hex(4)}"
        counter = itertools.count()

        def placeholder(value: Any) -> Any:
            if value is UNKNOWN:
                return f"{self.marker}-{next(counter)}"
            if isinstance(value, dict):
                return {k: placeholder(v) for k, v in value.items()}
            if isinstance(value, list):
                return [placeholder(v) for v in value]
            return value

        # Every resource reads as unknown: what is left are values the program knows.
        resolved, _ = unwrap_secrets(resolve(values, lambda resource: UNKNOWN))
        self.sketch = rendered_with(placeholder(resolved))
        self.expected = {_identity(obj) for _, obj, _ in itertools.chain(*self.sketch)}
        self.rendered: dict[str, dict[tuple[str, str, str], dict[str, Any]]] = {}

    @classmethod
    def of(
        cls,
        what: str,
        values: dict[str, Any],
        rendered_with: Callable[[dict[str, Any]], tuple[list[_Object], list[_Object]]],
    ) -> _LiveValues | None:
        """The live values, or None when every value is known while the program runs."""
        if not dependencies_of(values):
            return None
        return cls(what, values, rendered_with)

    def fields(self, what: str, source: str, obj: dict[str, Any]) -> dict[str, Any]:
        """The object's props: its identity plain, every other field waiting for the values."""
        identity = _identity(obj)
        if any(self.marker in part for part in identity):
            raise UsageError(
                f"{what}: {source} names an object after a value that is only known after "
                "apply; an object's name and namespace must be known while the program runs"
            )

        def field(path: tuple[str, ...], sketch: Any) -> Output[Any]:
            def compute(read: Any) -> Any:
                objects = self.objects(read)
                if objects is None:
                    return self.unknown_where_placeheld(sketch)
                value: Any = objects[identity]
                for key in path:
                    value = value.get(key) if isinstance(value, dict) else None
                return value

            return Output(compute, self.resources, secret=self.secret, shape=sketch)

        return _deferred_props(obj, field)

    def unknown_where_placeheld(self, value: Any) -> Any:
        if isinstance(value, str):
            return UNKNOWN if self.marker in value else value
        if isinstance(value, dict):
            return {k: self.unknown_where_placeheld(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.unknown_where_placeheld(v) for v in value]
        return value

    def objects(self, read: Any) -> dict[tuple[str, str, str], dict[str, Any]] | None:
        """The chart's objects rendered with the values' live state; None while unknown."""
        resolved = resolve(self.values, read)
        if _contains_unknown(resolved):
            return None
        plain, _ = unwrap_secrets(resolved)
        key = json.dumps(plain, sort_keys=True, default=str)
        found = self.rendered.get(key)
        if found is None:
            crds, objects = self.rendered_with(plain)
            found = {_identity(obj): obj for _, obj, _ in itertools.chain(crds, objects)}
            extra = sorted("/".join(filter(None, i)) for i in set(found) - self.expected)
            missing = sorted("/".join(filter(None, i)) for i in self.expected - set(found))
            if extra or missing:
                differences = "; ".join(
                    f"{verb} {', '.join(items)}"
                    for verb, items in (("adds", extra), ("drops", missing))
                    if items
                )
                raise UsageError(
                    f"{self.what}: rendered with the values known after apply, the chart "
                    f"{differences} compared with the objects it had while the program ran; "
                    "the set of objects must not depend on values that come from other resources"
                )
            self.rendered[key] = found
        return found


#: What `repository_opts` may hold.
_REPOSITORY_OPTS = ("repo", "username", "password", "insecure_skip_tls_verify", "plain_http")


def _local_chart(what: str, chart: str, repository_opts: Mapping[str, Any]) -> Path | None:
    """The local chart directory or .tgz `chart` names; None for a repository's chart or an
    OCI reference. A UsageError for unknown `repository_opts` or a missing local chart."""
    unknown = set(repository_opts) - set(_REPOSITORY_OPTS)
    if unknown:
        raise UsageError(
            f"{what}: unknown repository_opts {sorted(unknown)}; known: "
            + ", ".join(_REPOSITORY_OPTS)
        )
    if "repo" in repository_opts or chart.startswith("oci://"):
        return None
    path = Path(chart)
    if not path.exists():
        raise UsageError(
            f"{what}: no chart directory or .tgz at {path.resolve()}; give a local "
            'path, an oci:// reference, or a chart name with repository_opts={"repo": URL}'
        )
    return path


#: A version Helm's `--version` names exactly (SemVer, an optional `v`), not a range.
_EXACT_VERSION = re.compile(r"v?\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?")


def _cache_path(repo: str | None, chart: str, version: str | None) -> Path | None:
    """Where a remote chart of a pinned version is kept once pulled
    (`$STACKWRIGHT_HOME/cache/charts`), so later runs neither download it again nor need
    the repository; None for an unpinned version, which may move (as Helm's own cache), and
    for a range (`^1.2.0`, `>=1.2 <2`), whose newest match may be another version later."""
    if not version or not _EXACT_VERSION.fullmatch(str(version)):
        return None
    import hashlib

    home = Path(os.environ.get("STACKWRIGHT_HOME") or "~/.stackwright").expanduser()
    key = hashlib.sha256(f"{repo or ''}\0{chart}\0{version}".encode()).hexdigest()[:32]
    return home / "cache" / "charts" / f"{key}.tgz"


def render(
    what: str,
    chart: str,
    values: dict[str, Any],
    *,
    release: str,
    namespace: str | None,
    version: str | None = None,
    repository_opts: Mapping[str, Any] | None = None,
) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """Helm's rendering of a chart: (crds, templates), each as (source file, manifest)."""
    import helm_python as helm

    opts = repository_opts or {}
    try:
        with loaded_chart(what, chart, version, opts) as loaded:
            crds = [(c["filename"], c["data"]) for c in loaded.crds]
            manifests = loaded.render(
                values, name=release, namespace=namespace or "default", is_install=True
            )
    except helm.HelmError as exc:
        # Helm's own text may run over several indented lines (a nil pointer's); one line.
        said = helm_refusal(str(exc.detail), chart, opts)
        raise UsageError(f"{what}: {' '.join(said.split())}") from exc
    # As Helm's install (releaseutil.SortManifests): every template is a manifest, whatever
    # its extension, but NOTES.txt (of any chart) and `_`-prefixed partials.
    templates = [
        (path, text)
        for path, text in sorted(manifests.items())
        if not path.endswith("NOTES.txt")
        and not path.rpartition("/")[2].startswith("_")
        and text.strip()
    ]
    return crds, templates


class loaded_chart:
    """`with loaded_chart(what, chart, version, repository_opts) as handle`: the chart as a
    `helm_python.Chart`, pulled into a temporary directory when remote (with the
    repository's credentials and TLS settings, which Helm's install and upgrade by
    reference do not take), or read from the cache of pinned versions. Helm's failures
    are `helm_python.HelmError`s; say them with `helm_refusal`."""

    def __init__(
        self, what: str, chart: str, version: str | None, repository_opts: Mapping[str, Any]
    ):
        self.what, self.chart, self.version = what, chart, version
        self.opts = dict(repository_opts)
        self.tmp: tempfile.TemporaryDirectory[str] | None = None

    def __enter__(self) -> Any:
        try:
            return self._load()
        except BaseException:
            self.__exit__()  # now: a registry login's credentials file is in the folder
            raise

    def _load(self) -> Any:
        import helm_python as helm

        path = _local_chart(self.what, self.chart, self.opts)
        repo = self.opts.pop("repo", None)
        if path is not None:
            self.handle = helm.Chart.load(path)
            return self.handle
        cached = _cache_path(repo, self.chart, self.version)
        if cached is not None and cached.is_file():
            self.handle = helm.Chart.load(cached)
            return self.handle
        self.tmp = tempfile.TemporaryDirectory(prefix="stackwright-helm-")
        pulled = self._pull(repo, Path(self.tmp.name))
        archives = sorted(Path(self.tmp.name).glob("*.tgz"))
        if not archives:  # pragma: no cover - pull reports its own failures
            raise UsageError(f"{self.what}: Helm pulled no chart archive ({pulled})")
        if cached is not None:
            cached.parent.mkdir(parents=True, exist_ok=True)
            partial = cached.with_name(f"{cached.name}.{os.getpid()}.part")
            partial.write_bytes(archives[0].read_bytes())
            os.replace(partial, cached)  # whole or absent, even with two runs pulling at once
        self.handle = helm.Chart.load(archives[0])
        return self.handle

    def _pull(self, repo: str | None, into: Path) -> Any:
        """`helm pull` into `into`. Helm's pull hands `username` / `password` to an HTTP(S)
        repository, not to an OCI registry: for one, a registry client logs in first, its
        login kept in `into` (not in Helm's own registry configuration)."""
        import helm_python as helm

        opts = self.opts
        user, password = opts.get("username"), opts.get("password")
        if not self.chart.startswith("oci://") or not _login_given(opts):
            return helm.pull(
                self.chart, destination=into, version=self.version, repo_url=repo, **opts
            )
        plain, insecure = bool(opts.get("plain_http")), bool(opts.get("insecure_skip_tls_verify"))
        host = self.chart[len("oci://") :].split("/", 1)[0]
        with helm.RegistryClient(
            plain_http=plain, credentials_file=into / "registry.json"
        ) as client:
            client.login(host, user or "", password or "", insecure=insecure, plain_http=plain)
            return helm.pull(
                self.chart,
                client=client,
                destination=into,
                version=self.version,
                plain_http=plain,
                insecure_skip_tls_verify=insecure,
            )

    def __exit__(self, *exc: object) -> None:
        handle = getattr(self, "handle", None)
        if handle is not None:
            handle.close()
        if self.tmp is not None:
            self.tmp.cleanup()


#: How Helm says a chart repository or registry refused a download (HTTP 401 / 403): an
#: HTTP repository's `… : 401 Unauthorized`, a registry's login `… 401: Unauthorized`, a
#: registry asking for credentials none were given for `… basic credential not found`.
_REFUSED = re.compile(r"\b(?:(40[13]):? (Unauthorized|Forbidden)|basic credential not found)$")
#: What precedes Go's reason (`x509: certificate signed by unknown authority`) when the
#: repository's certificate is not trusted.
_UNTRUSTED = "tls: failed to verify certificate: "


def helm_refusal(detail: str, chart: str, repository_opts: Mapping[str, Any]) -> str:
    """Helm's message `detail` with the repository's URL shown without a password it may
    carry; a repository that refused the download (HTTP 401 / 403), or whose certificate is
    not trusted, said on one line with the fix, instead of Helm's "looks like … is not a
    valid chart repository". (Helm's `--ca-file` has no binding in helm-python-sdk's pull;
    Go reads a CA bundle from `SSL_CERT_FILE`.)"""
    text = detail.strip()
    remote = str(repository_opts.get("repo") or chart)
    where = url_shown(remote)
    what = f"the chart {'registry' if remote.startswith('oci://') else 'repository'} {where}"
    if _UNTRUSTED in text:
        trusted = "name its CA bundle in the SSL_CERT_FILE environment variable"
        # Given and still refused: an OCI registry without a login, whose pull the SDK's
        # default registry client makes (it has no such setting).
        fix = (
            "insecure_skip_tls_verify reaches a registry only through a login (repository_opts "
            f"username and password): {trusted}"
            if repository_opts.get("insecure_skip_tls_verify")
            else f"{trusted}, or set repository_opts insecure_skip_tls_verify"
        )
        return (
            f"{what} has a certificate this machine does not trust "
            f"({text.split(_UNTRUSTED, 1)[1]}); {fix}"
        )
    refused = _REFUSED.search(text)
    if refused is None:
        return text.replace(remote, where)
    status = " ".join(refused.groups()) if refused.group(1) else "401 Unauthorized"
    if not _login_given(repository_opts):
        return (
            f"{what} requires credentials ({status}); give them as repository_opts "
            "username and password"
        )
    return (
        f"{what} refused the credentials given ({status}); check repository_opts "
        "username and password"
    )


def _login_given(repository_opts: Mapping[str, Any]) -> bool:
    """Whether `repository_opts` hold a username or a password (Helm's `--username` /
    `--password`)."""
    return (
        repository_opts.get("username") is not None or repository_opts.get("password") is not None
    )


def _repository_opts(what: str, given: object) -> dict[str, Any]:
    """`repository_opts` as given to a Chart or Release (None: none), a mapping or refused."""
    if given is None:
        return {}
    if not isinstance(given, Mapping):
        raise UsageError(
            f"{what}: repository_opts must be a mapping, not a {type(given).__name__}: "
            'write repository_opts={"repo": URL}'
        )
    return dict(given)


def _known_repository_opts(what: str, repository_opts: Mapping[str, Any]) -> dict[str, Any]:
    """`repository_opts` as Helm is handed them while the program runs: Outputs that depend
    on no resource resolved (a password from `Config.require_secret`), and the password
    remembered as a secret, so that no message shows it."""
    if dependencies_of(repository_opts):
        raise UsageError(
            f"{what}: repository_opts must be known while the program runs, not another "
            "resource's Output (Helm pulls the chart then): give config values "
            "(`stackwright config set --secret` for a password)"
        )
    plain, _ = _known_values(dict(repository_opts))
    remember_secret(plain.get("password"))
    return plain


def merge_values(
    what: str,
    value_files: Sequence[str | os.PathLike[str]],
    values: Mapping[str, Any],
    *more: Mapping[str, Any],
) -> dict[str, Any]:
    """Value files in order, then `values` and `more` (Helm's `--set`, then its
    `--set-string`), each merged over the last (maps deeply)."""
    import helm_python as helm

    merged: dict[str, Any] = {}
    if isinstance(value_files, (str, os.PathLike)):
        value_files = [value_files]
    for file in value_files:
        path = Path(file)
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise not_utf8(f"{what}: value file {path}", exc) from exc
        except OSError as exc:
            raise UsageError(
                f"{what}: cannot read value file {path}: {exc.strerror or exc}"
            ) from exc
        try:
            merged = _merge(merged, helm.values_from_yaml(text) or {})
        except helm.HelmError as exc:
            raise UsageError(f"{what}: {_value_file_refusal(path, text, exc.detail)}") from exc
    if not isinstance(values, Mapping):
        raise UsageError(f"{what}: values must be a dict (got {type(values).__name__})")
    for layer in (values, *more):
        merged = _merge(merged, layer)
    return merged


def _value_file_refusal(path: Path, text: str, detail: str) -> str:
    """Why Helm refused a value file: YAML it cannot parse, or YAML that is no map (a list,
    a string), which Helm's message calls a failed unmarshal "into common.Values"."""
    import yaml

    try:
        found = yaml.safe_load(text)
    except yaml.YAMLError:
        found = None
    if found is not None and not isinstance(found, dict):
        # Its type, not the value: a file given by mistake may hold a token or a password.
        kind = "a list" if isinstance(found, list) else "a single value"
        return (
            f"value file {path} holds {kind}, where Helm takes a map of values: write it "
            'as keys (`replicas: 3`, `image: {tag: "1.29"}`)'
        )
    return f"value file {path} is not valid YAML: {detail}"


def _merge(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in override.items():
        old = out.get(key)
        if (
            isinstance(old, Mapping)
            and isinstance(value, Mapping)
            and not isinstance(value, Output)
        ):
            out[key] = _merge(old, value)
        else:
            out[key] = value
    return out


def _known_values(values: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """Values that depend on no resource, with their Outputs resolved; whether any was secret."""

    def no_state(resource: Resource) -> Any:  # pragma: no cover - no dependencies, never called
        return UNKNOWN

    plain, _ = unwrap_secrets(resolve(values, no_state))
    return plain, _holds_secret(values)


#: A parsed document: the file it came from, its index in the file, the object.
_Document = tuple[str, int, dict[str, Any]]


def _parse(what: str, documents: list[tuple[str, str]]) -> list[_Document]:
    """Every object of the rendered files (List kinds unpacked), checked to be an object."""
    out: list[_Document] = []
    for source, text in documents:
        try:
            parsed = list(yaml.load_all(text, Loader=_Loader))
        except yaml.YAMLError as exc:
            raise UsageError(
                f"{what}: {source} rendered invalid YAML at {yaml_problem(exc)}; fix the template"
            ) from exc
        for index, doc in enumerate(parsed):
            for obj in _items(doc):
                if not isinstance(obj, dict):
                    raise UsageError(
                        f"{what}: document {index + 1} of {source} is not a Kubernetes object "
                        f"(got {type(obj).__name__})"
                    )
                _check(what, source, index, obj)
                out.append((source, index, obj))
    return out


def _prepare(
    what: str,
    documents: list[_Document],
    namespace: str | None,
    cluster_scoped: frozenset[str],
    transformations: Sequence[Transformation],
    skip_await: bool,
) -> list[_Object]:
    """Namespaced and transformed objects, each with its file and options."""
    out: list[_Object] = []
    for source, index, obj in documents:
        place(obj, namespace, cluster_scoped)
        if skip_await:
            mark_skip_await(obj)
        annotations = obj["metadata"].get("annotations")
        policy = annotations.get(_RESOURCE_POLICY) if isinstance(annotations, dict) else None
        # Helm leaves such an object when uninstalling, or when an upgrade drops it.
        opts = ResourceOptions(retain_on_delete=str(policy).strip().lower() == "keep")
        for transform in transformations:
            changed = transform(obj, opts)
            if isinstance(changed, ResourceOptions):
                opts = changed
        if dropped(obj):
            continue
        _check(what, source, index, obj)
        out.append((source, obj, opts))
    return out


def _items(doc: Any) -> list[Any]:
    if doc is None:
        return []
    if isinstance(doc, dict) and doc.get("kind", "").endswith("List") and "items" in doc:
        return [item for item in doc.get("items") or [] if item is not None]
    return [doc]


def _check(what: str, source: str, index: int, obj: dict[str, Any]) -> None:
    metadata = obj.get("metadata")
    missing = [
        field
        for field, ok in (
            ("apiVersion", isinstance(obj.get("apiVersion"), str) and obj["apiVersion"]),
            ("kind", isinstance(obj.get("kind"), str) and obj["kind"]),
            (
                "metadata.name",
                isinstance(metadata, dict)
                and isinstance(metadata.get("name"), str)
                and metadata["name"],
            ),
        )
        if not ok
    ]
    if missing:
        raise UsageError(f"{what}: document {index + 1} of {source} has no {', '.join(missing)}")


def _hook_phases(obj: dict[str, Any]) -> frozenset[str] | None:
    annotations = obj["metadata"].get("annotations") or {}
    hook = annotations.get("helm.sh/hook")
    if not hook:
        return None
    return frozenset(part.strip() for part in str(hook).split(",") if part.strip())


def _waits(obj: dict[str, Any], hooks: Sequence[tuple[Resource, dict[str, Any]]]) -> list[Resource]:
    """The hooks (with their objects) the chart's object `obj` is applied after: all but those
    it holds, which cannot exist before it (a hook inside a Namespace of the chart, a custom
    object of a CRD in its templates); the engine orders those after it."""
    return [hook for hook, held in hooks if not _holds(obj, held)]


def _holds(obj: dict[str, Any], other: dict[str, Any]) -> bool:
    """Whether `other` is inside the Namespace `obj`, or of the kind the CRD `obj` defines."""
    if obj["kind"] == "Namespace":
        return bool(other["metadata"].get("namespace")) and (
            other["metadata"].get("namespace") == obj["metadata"].get("name")
        )
    if obj["kind"] != "CustomResourceDefinition" or not isinstance(obj.get("spec"), dict):
        return False
    names = obj["spec"].get("names") or {}
    group = str(other.get("apiVersion", "")).rpartition("/")[0]
    return (obj["spec"].get("group"), names.get("kind")) == (group, other["kind"])


def _hook_weight(what: str, source: str, obj: dict[str, Any]) -> int:
    annotations = obj["metadata"].get("annotations") or {}
    weight = annotations.get("helm.sh/hook-weight", "0")
    try:
        return int(weight)
    except (TypeError, ValueError):
        raise UsageError(
            f"{what}: {source}: helm.sh/hook-weight must be an integer (got {weight!r})"
        ) from None


class Release(CustomResource):
    """A release Helm itself owns: `up` installs it (`helm install`), upgrades it when its
    inputs change (`helm upgrade`), and removing it or `destroy` uninstalls it; Helm keeps
    its history in the cluster (`sh.helm.release.v1.<name>.v<revision>` Secrets), so
    Helm's own tools see it. The engine waits (Helm's watcher) up to `timeout` seconds, or
    as long as the resource's `custom_timeouts` say when they set one: `create` for an
    install, `update` for an upgrade, `delete` for an uninstall.

        rel = k8s.helm.Release("web", chart="./charts/webapp", values={"image": {"tag": "1.29"}},
                               namespace="web", create_namespace=True)
        export("revision", rel.status["revision"])

    Without `namespace` the release goes into its provider's default namespace (its
    kubeconfig context's unless set), as `helm install` without `--namespace` does.
    `name` is the release's name (as Pulumi's `name`), the resource's when not given; Helm
    knows a release by its namespace and name, so another name installs another release,
    and a resource renamed by an alias that names its release keeps it.

    Live outputs: `name`, `namespace` and `status`, a dict of `status` (Helm's: "deployed",
    "failed", …), `revision`, `chart`, `version` and `app_version`. `chart`,
    `version`, `repository_opts` and `value_files` are as for `Chart`; `values` may hold
    Outputs of other resources (the release then waits for them). A local chart's files
    are hashed into the inputs, so editing the chart upgrades the release.

    A preview runs Helm's dry run of the install or upgrade, so template and validation
    errors show before `up`. `rollback_on_failure=True` is Helm's `--rollback-on-failure`
    (`--atomic` before Helm 4): a failed install is uninstalled, a failed upgrade rolled
    back to the last deployed revision, and `up` reports the failure. `max_history`
    bounds the revisions Helm keeps.

    As for `Chart`, the second positional argument is the chart or, as Pulumi's
    helm.v3.Release takes them, the options (`Release("web", opts, chart=...)`).
    """

    def __init__(
        self,
        resource_name: str,
        chart_or_opts: str | os.PathLike[str] | ResourceOptions | None = None,
        /,
        version: str | None = None,
        repository_opts: Mapping[str, Any] | None = None,
        values: Mapping[str, Any] | None = None,
        value_files: Sequence[str | os.PathLike[str]] | None = None,
        namespace: str | None = None,
        create_namespace: bool = False,
        timeout: int = 300,
        rollback_on_failure: bool = False,
        max_history: int | None = None,
        opts: ResourceOptions | None = None,
        name: str | None = None,
        *,
        chart: str | os.PathLike[str] | None = None,
    ) -> None:
        chart, opts = _chart_and_options("Release", resource_name, chart_or_opts, chart, opts)
        where = _declared_at()
        reference = os.fspath(chart)
        if name is None:
            name = resource_name
        elif not isinstance(name, str) or not name:
            raise UsageError(
                located(where, f"Helm release {resource_name!r}: name must be a non-empty string")
            )
        what = located(where, f"Helm release {name!r} ({reference})")
        merged = merge_values(what, value_files or (), values or {})
        repo_opts = _repository_opts(what, repository_opts)
        if repo_opts.get("password") is not None:  # secret, as Pulumi's RepositoryOpts has it
            repo_opts["password"] = Output.secret(repo_opts["password"])
        repo = repo_opts.get("repo")
        if isinstance(repo, str) and url_shown(repo) != repo:  # a `user:password@` of its own
            repo_opts["repo"] = Output.secret(repo)
        props: dict[str, Any] = {"name": name, "chart": reference}
        path = _local_chart(what, reference, repo_opts)
        if path is not None:
            props["chart"] = str(path.resolve())
            props["chartDigest"] = _digest(path)
        for key, value in (
            ("version", version),
            ("repositoryOpts", repo_opts or None),
            ("namespace", namespace),
            ("maxHistory", max_history),
        ):
            if value is not None:
                props[key] = value
        props["values"] = merged
        props["createNamespace"] = bool(create_namespace)
        props["timeout"] = int(timeout)
        if rollback_on_failure:
            props["rollbackOnFailure"] = True
        super().__init__(RELEASE_TYPE, resource_name, props, opts)


def _chart_and_options(
    label: str,
    name: str,
    second: object,
    chart: str | os.PathLike[str] | None,
    opts: ResourceOptions | None,
) -> tuple[str | os.PathLike[str], ResourceOptions | None]:
    """The chart and options of a Chart or Release, whose second positional argument is
    either (Pulumi's helm.v4.Chart and helm.v3.Release take the options there); a
    UsageError at the program's line when no chart is given."""
    chart, opts = source_and_options(label, name, second, ("chart", chart), opts, _A_CHART)
    if chart is None:
        raise UsageError(
            located(
                _declared_at(),
                f"{label} {name!r} names no chart: write {label}({name!r}, chart=...) with a "
                "local chart's path, a chart name and repository_opts, or an oci:// reference",
            )
        )
    return chart, opts


#: What a chart is (for a message).
_A_CHART = ("a local chart's path, a chart name or an oci:// reference", (str, os.PathLike))


def _digest(path: Path) -> str:
    """sha256 over a chart directory's files (names and contents), or of a `.tgz`."""
    import hashlib

    digest = hashlib.sha256()
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    for file in files:
        digest.update(file.relative_to(path).as_posix().encode() if path.is_dir() else b"")
        digest.update(b"\0")
        digest.update(file.read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()
