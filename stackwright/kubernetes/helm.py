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
  its subcharts, `NOTES.txt` included and `crds/` excluded.
- `chart.crds` lists `crds/` of the chart and its subcharts as `[{name, filename, data}]`.
- `helm_python.pull(name, repo_url=, version=, destination=)` downloads from an HTTP(S)
  chart repository through its index.yaml, and `pull("oci://host/path/name", ...)` from
  an OCI registry; both write `<name>-<version>.tgz` and need no `helm repo add`.
- `helm_python.values_from_yaml(text)` parses a values file as Helm's `-f` does.
- Errors are `helm_python.HelmError` subclasses carrying Helm's own message
  (`HelmChartLoadError`, `HelmRenderError` "execution error at (webapp/templates/x.yaml:19:52):
  ...", `HelmValuesError`, `HelmRepoError`); they become `UsageError`s naming the chart.

What the component does with the rendered objects:

- Child names are `<kind>:<namespace>/<name>` (`<kind>:<name>` without a namespace),
  with `resource_prefix` + `-` in front when given; two charts rendering the same objects
  in one program need different prefixes.
- Objects without a namespace go into `namespace`, except cluster-scoped kinds
  (`CLUSTER_SCOPED`, a built-in table: discovery is not reachable while a program runs).
- `crds/` are registered first (the engine also orders a CRD before objects of its kind);
  `skip_crds=True` leaves them out.
- Hooks (`helm.sh/hook`): pre-install / pre-upgrade hooks are applied before every other
  object of the chart (each other object `depends_on` them; hooks of a higher
  `helm.sh/hook-weight` depend on those of a lower one); post-install / post-upgrade hooks
  depend on every other object; test hooks are skipped, and so are hooks that only run on
  delete or rollback (applying them with the chart would run them at the wrong time).
  Hook delete policies are not applied: a hook is an ordinary, kept object.
- `transformations=[fn]` follow `k8s.yaml`'s contract: `fn(obj, opts)` changes the
  object in place and may return new `ResourceOptions` (their `depends_on` is added to
  the hook ordering); emptying the object (`obj.clear()`) drops it. They run after the
  namespace is filled in and before the child is named.
- Shared with `k8s.yaml` (stackwright/kubernetes/yaml.py): `ManifestObject` (an object
  registered exactly as parsed) and `child_name`.
- `skip_await=True` annotates every object `stackwright.io/skip-await: "true"`.

Values may hold Outputs that depend on no resource (config values, secrets): they are
resolved before rendering, and if any is secret, every rendered object is secret. An
Output that depends on another resource's live state cannot be rendered while the
program runs (the chart's objects must be known then): that is a `UsageError` naming the
value; pass a plain value (e.g. from config) instead.

Must never: contact a cluster, write outside a temporary directory, or let a Helm or YAML
error escape without the chart's name.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml

from stackwright.errors import UsageError
from stackwright.kubernetes.yaml import SKIP_AWAIT, ManifestObject, Transformation, child_name
from stackwright.model import CLUSTER_SCOPED
from stackwright.sdk.output import (
    UNKNOWN,
    Output,
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

__all__ = ["CLUSTER_SCOPED", "RELEASE_TYPE", "Chart", "Release", "merge_values", "render"]

#: The component's type token.
CHART_TYPE = "kubernetes:helm.sh/v4:Chart"

#: A release Helm owns (`Release`): the engine installs, upgrades and uninstalls it through
#: Helm rather than applying objects.
RELEASE_TYPE = "kubernetes:helm.sh/v4:Release"


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
    `repository_opts={"repo": URL}` (optionally `username`, `password`,
    `insecure_skip_tls_verify`), or an `oci://host/path/name` reference (`plain_http` in
    `repository_opts` for a registry without TLS). `version` picks a repository's version.
    `values` override the chart's defaults after `value_files`, in order, as Helm's `-f`
    and `--set` do. The release name is the component's name.
    """

    def __init__(
        self,
        name: str,
        chart: str | os.PathLike[str],
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
    ) -> None:
        where = _declared_at()
        what = f"Helm chart {name!r} ({os.fspath(chart)}) at {where}"
        merged = merge_values(what, value_files or (), values or {})
        merged, secret = _known_values(what, merged)
        crds, rendered = render(
            what,
            os.fspath(chart),
            merged,
            release=name,
            namespace=namespace,
            version=version,
            repository_opts=repository_opts or {},
        )
        transforms = transformations or ()
        crd_objects = [] if skip_crds else _prepare(what, crds, namespace, transforms, skip_await)
        objects = _prepare(what, rendered, namespace, transforms, skip_await)
        # The `kubernetes` package is reserved for Stackwright's own types, which this is;
        # the component check would refuse it, so register as Resource does.
        Resource.__init__(
            self,
            CHART_TYPE,
            name,
            {"chart": os.fspath(chart), "version": version, "namespace": namespace},
            opts,
            custom=False,
        )
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
        before: Sequence[Resource] = ()
        hooks: list[Resource] = []
        for weight in sorted(pre):
            group = [self._child(what, *item, prefix, secret, before) for item in pre[weight]]
            hooks.extend(group)
            before = group
        main: list[Resource] = [self._child(what, *item, prefix, secret, hooks) for item in plain]
        for item in post:
            self._child(what, *item, prefix, secret, main + hooks)

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
        props = _secret_props(obj) if secret else obj
        opts = replace(opts, parent=self, depends_on=(*depends_on, *opts.depends_on))
        child = ManifestObject(name, props, opts)
        self.resources[name] = child
        return child


def _secret_props(obj: dict[str, Any]) -> dict[str, Any]:
    """Every field secret but those that identify the object (the engine orders by them)."""
    metadata = obj["metadata"]
    return {
        **{k: Output.secret(v) for k, v in obj.items()},
        "apiVersion": obj["apiVersion"],
        "kind": obj["kind"],
        "metadata": {
            k: v if k in ("name", "namespace") else Output.secret(v) for k, v in metadata.items()
        },
    }


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

    opts = dict(repository_opts or {})
    try:
        with _loaded(what, chart, version, opts) as loaded:
            crds = [(c["filename"], c["data"]) for c in loaded.crds]
            manifests = loaded.render(
                values, name=release, namespace=namespace or "default", is_install=True
            )
    except helm.HelmError as exc:
        raise UsageError(f"{what}: {exc.detail}") from exc
    templates = [
        (path, text)
        for path, text in sorted(manifests.items())
        if path.endswith((".yaml", ".yml", ".json")) and text.strip()
    ]
    return crds, templates


class _loaded:
    """The chart as a `helm_python.Chart`, pulled into a temporary directory when remote."""

    def __init__(self, what: str, chart: str, version: str | None, opts: dict[str, Any]):
        self.what, self.chart, self.version, self.opts = what, chart, version, opts
        self.tmp: tempfile.TemporaryDirectory[str] | None = None

    def __enter__(self) -> Any:
        import helm_python as helm

        repo = self.opts.pop("repo", None)
        unknown = set(self.opts) - {
            "username",
            "password",
            "insecure_skip_tls_verify",
            "plain_http",
        }
        if unknown:
            raise UsageError(
                f"{self.what}: unknown repository_opts {sorted(unknown)}; known: repo, username, "
                "password, insecure_skip_tls_verify, plain_http"
            )
        if repo is None and not self.chart.startswith("oci://"):
            path = Path(self.chart)
            if not path.exists():
                raise UsageError(
                    f"{self.what}: no chart directory or .tgz at {path.resolve()}; give a local "
                    'path, an oci:// reference, or a chart name with repository_opts={"repo": URL}'
                )
            self.handle = helm.Chart.load(path)
            return self.handle
        self.tmp = tempfile.TemporaryDirectory(prefix="stackwright-helm-")
        pulled = helm.pull(
            self.chart,
            destination=self.tmp.name,
            version=self.version,
            repo_url=repo,
            **self.opts,
        )
        archives = sorted(Path(self.tmp.name).glob("*.tgz"))
        if not archives:  # pragma: no cover - pull reports its own failures
            raise UsageError(f"{self.what}: Helm pulled no chart archive ({pulled})")
        self.handle = helm.Chart.load(archives[0])
        return self.handle

    def __exit__(self, *exc: object) -> None:
        handle = getattr(self, "handle", None)
        if handle is not None:
            handle.close()
        if self.tmp is not None:
            self.tmp.cleanup()


def merge_values(
    what: str, value_files: Sequence[str | os.PathLike[str]], values: Mapping[str, Any]
) -> dict[str, Any]:
    """Value files in order, then `values`, each merged over the last (maps deeply)."""
    import helm_python as helm

    merged: dict[str, Any] = {}
    if isinstance(value_files, (str, os.PathLike)):
        value_files = [value_files]
    for file in value_files:
        path = Path(file)
        try:
            text = path.read_text()
        except OSError as exc:
            raise UsageError(
                f"{what}: cannot read value file {path}: {exc.strerror or exc}"
            ) from exc
        try:
            merged = _merge(merged, helm.values_from_yaml(text) or {})
        except helm.HelmError as exc:
            raise UsageError(f"{what}: value file {path} is not valid YAML: {exc.detail}") from exc
    if not isinstance(values, Mapping):
        raise UsageError(f"{what}: values must be a dict (got {type(values).__name__})")
    return _merge(merged, values)


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


def _known_values(what: str, values: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """The values with Outputs resolved; whether any was secret."""
    depends = dependencies_of(values)
    if depends:
        names = ", ".join(sorted(repr(r) for r in depends))
        raise UsageError(
            f"{what}: values depend on the live state of {names}, which is not known while the "
            "program runs; a chart renders when declared, so pass plain values (e.g. from config)"
        )
    secret = _holds_secret(values)

    def no_state(resource: Resource) -> Any:  # pragma: no cover - no dependencies, never called
        return UNKNOWN

    resolved = resolve(values, no_state)
    if _contains_unknown(resolved):  # pragma: no cover - only resource state is ever unknown
        raise UsageError(f"{what}: some values are unknown until resources are applied")
    plain, _ = unwrap_secrets(resolved)
    return plain, secret


def _prepare(
    what: str,
    documents: list[tuple[str, str]],
    namespace: str | None,
    transformations: Sequence[Transformation],
    skip_await: bool,
) -> list[_Object]:
    """Parsed, namespaced and transformed objects, each with its file and options."""
    out: list[_Object] = []
    for source, text in documents:
        try:
            parsed = list(yaml.load_all(text, Loader=_Loader))
        except yaml.YAMLError as exc:
            raise UsageError(f"{what}: {source} rendered invalid YAML: {exc}") from exc
        for index, doc in enumerate(parsed):
            for obj in _items(doc):
                if not isinstance(obj, dict):
                    raise UsageError(
                        f"{what}: document {index + 1} of {source} is not a Kubernetes object "
                        f"(got {type(obj).__name__})"
                    )
                _check(what, source, index, obj)
                metadata = obj["metadata"]
                if obj["kind"] in CLUSTER_SCOPED:
                    metadata.pop("namespace", None)
                elif namespace and not metadata.get("namespace"):
                    metadata["namespace"] = namespace
                if skip_await:
                    if not isinstance(metadata.get("annotations"), dict):
                        metadata["annotations"] = {}
                    metadata["annotations"][SKIP_AWAIT] = "true"
                opts = ResourceOptions()
                for transform in transformations:
                    changed = transform(obj, opts)
                    if isinstance(changed, ResourceOptions):
                        opts = changed
                if not obj:  # dropped by a transformation
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
    Helm's own tools see it. The engine waits (Helm's watcher) up to `timeout` seconds.

        rel = k8s.helm.Release("web", chart="./charts/webapp", values={"image": {"tag": "1.29"}},
                               namespace="web", create_namespace=True)
        export("revision", rel.status["revision"])

    Live outputs: `name`, `namespace` and `status`, a dict of `status` (Helm's: "deployed",
    "failed", …), `revision`, `chart`, `version` and `app_version`. `chart`,
    `version`, `repository_opts` and `value_files` are as for `Chart`; `values` may hold
    Outputs of other resources (the release then waits for them). A local chart's files
    are hashed into the inputs, so editing the chart upgrades the release.
    """

    def __init__(
        self,
        name: str,
        chart: str | os.PathLike[str],
        version: str | None = None,
        repository_opts: Mapping[str, Any] | None = None,
        values: Mapping[str, Any] | None = None,
        value_files: Sequence[str | os.PathLike[str]] | None = None,
        namespace: str | None = None,
        create_namespace: bool = False,
        timeout: int = 300,
        opts: ResourceOptions | None = None,
    ) -> None:
        where = _declared_at()
        reference = os.fspath(chart)
        what = f"Helm release {name!r} ({reference}) at {where}"
        merged = merge_values(what, value_files or (), values or {})
        repo_opts = dict(repository_opts or {})
        unknown = set(repo_opts) - {
            "repo",
            "username",
            "password",
            "insecure_skip_tls_verify",
            "plain_http",
        }
        if unknown:
            raise UsageError(
                f"{what}: unknown repository_opts {sorted(unknown)}; known: repo, username, "
                "password, insecure_skip_tls_verify, plain_http"
            )
        props: dict[str, Any] = {"name": name, "chart": reference}
        if "repo" not in repo_opts and not reference.startswith("oci://"):
            path = Path(reference)
            if not path.exists():
                raise UsageError(
                    f"{what}: no chart directory or .tgz at {path.resolve()}; give a local "
                    'path, an oci:// reference, or a chart name with repository_opts={"repo": URL}'
                )
            props["chart"] = str(path.resolve())
            props["chartDigest"] = _digest(path)
        for key, value in (
            ("version", version),
            ("repositoryOpts", repo_opts or None),
            ("namespace", namespace),
        ):
            if value is not None:
                props[key] = value
        props["values"] = merged
        props["createNamespace"] = bool(create_namespace)
        props["timeout"] = int(timeout)
        super().__init__(RELEASE_TYPE, name, props, opts)


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
