"""Objects rendered as YAML manifest files in a directory, instead of applied to a cluster
(Pulumi's `renderYamlToDirectory`).

`ManifestDirectory` serves the engine as a cluster's provider does (`engine.ports.Provider`):
an apply writes the object's file (a temporary file renamed over it: a reader never sees
half a file; one a killed run left is removed by the next run that writes its folder), a
read parses it (a file edited or removed by hand is drift), a delete
removes it. The layout is Pulumi's: `0-crd/` holds CustomResourceDefinitions and
`1-manifest/` everything else, so that `kubectl apply -f DIR --recursive`, which reads
files in name order, creates kinds before the objects of those kinds; there a Namespace's
file name starts with `0-` and every other's with `1-`, so namespaces come before what
goes into them. One file per object, named after its apiVersion, kind, namespace and name
(its end a hash when that is longer than a file name can be).

Whether a kind is namespaced comes from the built-in kinds (`CLUSTER_SCOPED`) and the
CustomResourceDefinitions rendered into the directory, never from a cluster.

Must never: reach a cluster, write a secret (the engine refuses a rendered resource
that holds one before anything is written), or remove a file it did not write.
"""

from __future__ import annotations

import builtins
import contextlib
import hashlib
import os
import re
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml

from stackwright.errors import UsageError, located
from stackwright.model import CLUSTER_SCOPED, STACK_ANNOTATION, URN_ANNOTATION, ClusterIdentity
from stackwright.processes import gone
from stackwright.providers.kubernetes.applyset import MANAGED_BY, stamp

__all__ = ["CRD_FOLDER", "MANIFEST_FOLDER", "ManifestDirectory", "manifest_path"]

#: Where CustomResourceDefinitions go: applied first, so their kinds exist for the rest.
CRD_FOLDER = "0-crd"
#: Where every other object goes.
MANIFEST_FOLDER = "1-manifest"

#: The order of files in `MANIFEST_FOLDER` by kind (a file name's first character), with
#: the reason: `kubectl apply` stops at an object whose namespace does not exist yet.
_RANK = {"Namespace": 0}  # namespaced objects go into one
_OTHERS = 1

_CRD = ("apiextensions.k8s.io", "CustomResourceDefinition")


def _is_crd(api_version: str, kind: str) -> bool:
    return (api_version.rpartition("/")[0], kind) == _CRD


def _built_in(group: str) -> bool:
    """Whether a group is one of Kubernetes' own (served without a CRD)."""
    return "." not in group or group.endswith(".k8s.io")


def _part(value: str, what: str, obj: str) -> str:
    """One part of a file name: refused when it could leave the directory (a name with a
    path separator, which no Kubernetes name has)."""
    if not value or value in (".", "..") or "/" in value or "\\" in value or "\0" in value:
        raise UsageError(
            f"{obj}: its {what} {value!r} cannot name a manifest file: give it a valid "
            "Kubernetes name (lowercase letters, digits, '-' and '.')"
        )
    return value


def manifest_path(api_version: str, kind: str, namespace: str | None, name: str) -> Path:
    """Where, relative to the directory, the manifest of an object goes (`_` separates the
    parts: no Kubernetes name, namespace or kind holds one)."""
    what = f"{kind} {namespace + '/' if namespace else ''}{name}"
    parts = [
        _part(api_version.replace("/", "_"), "apiVersion", what),
        _part(kind.lower(), "kind", what),
        *([_part(namespace, "namespace", what)] if namespace else []),
        _part(name, "name", what),
    ]
    stem = "_".join(parts)
    if _is_crd(api_version, kind):
        return Path(CRD_FOLDER) / f"{_fitted(stem, '')}.yaml"
    head = f"{_RANK.get(kind, _OTHERS)}-"
    return Path(MANIFEST_FOLDER) / f"{head}{_fitted(stem, head)}.yaml"


#: The longest file name (in bytes) that common file systems take (ext4, APFS, NTFS: 255).
_NAME_MAX = 255


def _fitted(stem: str, head: str) -> str:
    """`stem`, or, when the file name would be longer than a file system takes (a name near
    Kubernetes' 253 characters, with its namespace), its start and a hash of the whole: one
    object, always one file, and the start still tells which."""
    room = _NAME_MAX - len(head.encode()) - len(".yaml")
    whole = stem.encode()
    if len(whole) <= room:
        return stem
    digest = hashlib.sha256(whole).hexdigest()[:16]
    return f"{whole[: room - len(digest) - 1].decode(errors='ignore')}-{digest}"


def _prefix(api_version: str, kind: str, namespace: str | None) -> str:
    """What the file names of a kind's objects (in `namespace`) start with."""
    head = manifest_path(api_version, kind, namespace, "x").name.removesuffix("x.yaml")
    return head


class ManifestDirectory:
    """`engine.ports.Provider` over a directory of manifest files (see the module's doc)."""

    def __init__(self, directory: Path, namespace: str | None = None) -> None:
        self.directory = directory
        self._namespace = namespace or "default"
        self._crd_scopes: dict[tuple[str, str], bool] | None = None
        #: The folders whose leftover temporary files this run has removed (`_sweep`).
        self._swept: set[Path] = set()

    def _sweep(self, folder: Path) -> None:
        """Remove the temporary files a killed run left in `folder` (`_leftover`), at this
        run's first write there."""
        if folder in self._swept:
            return
        self._swept.add(folder)
        with contextlib.suppress(OSError), os.scandir(folder) as entries:  # none: none left
            for entry in entries:
                if _leftover(entry):
                    with contextlib.suppress(OSError):  # gone meanwhile
                        os.unlink(entry.path)

    @property
    def default_namespace(self) -> str:
        return self._namespace

    @property
    def cluster(self) -> str:
        return f"the manifest directory {self.directory}"

    async def identity(self) -> ClusterIdentity | None:
        return None  # no cluster: the directory itself is what `cluster` names

    async def namespaced(self, api_version: str, kind: str) -> bool:
        group = api_version.rpartition("/")[0]
        scope = self._scopes().get((group, kind))
        if scope is not None:
            return scope
        if _built_in(group):
            return kind not in CLUSTER_SCOPED
        raise UsageError(
            f"{kind} ({api_version}) is no built-in kind and no CustomResourceDefinition "
            f"rendered to {self.directory} declares it (a rendering provider asks no "
            "cluster): declare its CustomResourceDefinition with the same provider"
        )

    def _scopes(self) -> dict[tuple[str, str], bool]:
        """(group, kind) → namespaced, of each CRD rendered into the directory."""
        if self._crd_scopes is None:
            self._crd_scopes = {}
            folder = self.directory / CRD_FOLDER
            for path in sorted(folder.glob("*.yaml")) if folder.is_dir() else ():
                crd = self._load(path)
                if crd is not None:
                    self._note_crd(crd)
        return self._crd_scopes

    def _note_crd(self, crd: Mapping[str, Any]) -> None:
        spec = crd.get("spec") or {}
        served = (str(spec.get("group", "")), str((spec.get("names") or {}).get("kind", "")))
        self._scopes()[served] = spec.get("scope") != "Cluster"

    def stamp(
        self, obj: Mapping[str, Any], *, stack: str, urn: str, namespace: str | None
    ) -> dict[str, Any]:
        # No ApplySet membership: no parent is rendered, and `kubectl apply -f` of the
        # files would leave members of a set that has none.
        return stamp(obj, stack=stack, urn=urn)

    async def ensure_applyset(self, stack: str, namespace: str, group_kinds: Iterable[str]) -> None:
        return None

    async def check_applyset(self, stack: str, namespace: str) -> None:
        return None

    async def applyset_namespaces(self, stack: str) -> list[str]:
        return []

    async def remove_applyset(self, stack: str, namespace: str) -> None:
        return None

    async def _manifest(self, desired: Mapping[str, Any]) -> dict[str, Any]:
        """The object as its file holds it: in the default namespace when namespaced and
        given none (`kubectl apply` would otherwise put it in its context's)."""
        meta = dict(desired.get("metadata") or {})
        api_version, kind = str(desired.get("apiVersion", "")), str(desired.get("kind", ""))
        try:
            namespaced: bool | None = await self.namespaced(api_version, kind)
        except UsageError:  # a kind it cannot place: as the program gives it (as Pulumi)
            namespaced = None
        if namespaced:
            meta["namespace"] = meta.get("namespace") or self._namespace
        elif namespaced is not None:
            meta.pop("namespace", None)
        # In the order people write a manifest in: what it is, its name, then the rest.
        rest = {k: v for k, v in desired.items() if k not in ("apiVersion", "kind", "metadata")}
        return {"apiVersion": api_version, "kind": kind, "metadata": meta, **rest}

    def _path(self, obj: Mapping[str, Any]) -> Path:
        meta = obj.get("metadata") or {}
        return self.directory / manifest_path(
            str(obj.get("apiVersion", "")),
            str(obj.get("kind", "")),
            meta.get("namespace") or None,
            str(meta.get("name", "")),
        )

    async def preview(
        self,
        desired: Mapping[str, Any],
        *,
        force: bool = False,
        warn: Callable[[str], None] | None = None,
        field_manager: str | None = None,
    ) -> dict[str, Any]:
        obj = await self._manifest(desired)
        self._path(obj)  # a name that cannot be a file's is refused in the preview too
        return obj

    async def apply(
        self,
        desired: Mapping[str, Any],
        *,
        force: bool = False,
        warn: Callable[[str], None] | None = None,
        field_manager: str | None = None,
        adopting: bool = False,
    ) -> dict[str, Any]:
        obj = await self._manifest(desired)
        path = self._path(obj)
        self._sweep(path.parent)
        _write(path, obj)
        if _is_crd(str(obj.get("apiVersion", "")), str(obj.get("kind", ""))):
            self._note_crd(obj)
        return obj

    async def await_ready(
        self,
        obj: Mapping[str, Any],
        *,
        timeout: float | None = None,
        on_status: Callable[[str], None] | None = None,
        fed_later: str = "",
    ) -> dict[str, Any]:
        return dict(obj)  # a file is ready once written: nothing runs it

    async def read(
        self, api_version: str, kind: str, namespace: str | None, name: str
    ) -> dict[str, Any] | None:
        return self._load(self.directory / manifest_path(api_version, kind, namespace, name))

    def _load(self, path: Path) -> dict[str, Any] | None:
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        try:
            found = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise UsageError(
                located(
                    path,
                    f"not YAML any more ({exc.__class__.__name__}); fix the file or "
                    "delete it (the next `stackwright up` writes it again)",
                )
            ) from None
        return found if isinstance(found, dict) else {}

    async def list(
        self, api_version: str, kind: str, namespace: str | None
    ) -> builtins.list[dict[str, Any]]:
        try:
            scoped = namespace if await self.namespaced(api_version, kind) else None
        except UsageError:
            scoped = namespace  # a kind it cannot place: where the program puts it
        return self._listed(api_version, kind, _prefix(api_version, kind, scoped))

    def _listed(self, api_version: str, kind: str, prefix: str) -> builtins.list[dict[str, Any]]:
        folder = self.directory / manifest_path(api_version, kind, None, "x").parent
        found = []
        for path in sorted(folder.glob(f"{prefix}*.yaml")) if folder.is_dir() else ():
            obj = self._load(path)
            if obj is not None and (obj.get("apiVersion"), obj.get("kind")) == (api_version, kind):
                found.append(obj)
        return found

    async def list_page(
        self, api_version: str, kind: str, *, limit: int
    ) -> tuple[builtins.list[dict[str, Any]], int | None]:
        found = self._listed(api_version, kind, _prefix(api_version, kind, None))
        return found[:limit], max(len(found) - limit, 0)

    async def delete(
        self,
        api_version: str,
        kind: str,
        namespace: str | None,
        name: str,
        *,
        timeout: float | None = None,
        on_status: Callable[[str], None] | None = None,
        reusing_name: bool = False,
        propagation: str | None = None,  # a file owns nothing: no dependents to keep or wait for
        uid: str | None = None,  # a file has none, and is the stack's alone: no other to spare
    ) -> dict[str, Any] | None:
        path = self.directory / manifest_path(api_version, kind, namespace, name)
        path.unlink(missing_ok=True)
        if _is_crd(api_version, kind):
            self._crd_scopes = None  # read again from the files left
        self._sweep(path.parent)  # a leftover would keep the folder
        with contextlib.suppress(OSError):  # not empty
            path.parent.rmdir()  # the folder goes with its last file: destroy leaves none
        return None

    async def await_deleted(
        self,
        api_version: str,
        kind: str,
        namespace: str | None,
        name: str,
        *,
        timeout: float | None = None,
        reusing_name: bool = False,
    ) -> None:
        return None  # a removed file is gone at once

    async def unmark(
        self,
        api_version: str,
        kind: str,
        namespace: str | None,
        name: str,
        *,
        dry_run: bool = False,
    ) -> None:
        if dry_run:
            return  # a file this process may write: nothing a server would refuse
        path = self.directory / manifest_path(api_version, kind, namespace, name)
        obj = self._load(path)
        if obj is None:
            return
        meta = dict(obj.get("metadata") or {})
        labels = {k: v for k, v in (meta.get("labels") or {}).items() if k != MANAGED_BY}
        marks = (STACK_ANNOTATION, URN_ANNOTATION)
        annotations = {k: v for k, v in (meta.get("annotations") or {}).items() if k not in marks}
        for key, value in (("labels", labels), ("annotations", annotations)):
            if value:
                meta[key] = value
            else:
                meta.pop(key, None)
        self._sweep(path.parent)
        _write(path, {**obj, "metadata": meta})

    async def release_apply(
        self, spec: Mapping[str, Any], *, timeout: float | None = None
    ) -> dict[str, Any]:
        raise UsageError(_NO_RELEASES)

    async def release_preview(self, spec: Mapping[str, Any]) -> None:
        raise UsageError(_NO_RELEASES)

    async def release_uninstall(
        self, spec: Mapping[str, Any], *, timeout: float | None = None
    ) -> None:
        raise UsageError(_NO_RELEASES)

    async def release_read(self, spec: Mapping[str, Any]) -> dict[str, Any] | None:
        raise UsageError(_NO_RELEASES)

    async def close(self) -> None:
        return None


_NO_RELEASES = (
    "a Helm release cannot be rendered to files (Helm installs it in a cluster): render its "
    "chart's objects with helm.Chart instead"
)


#: The temporary file `_write` makes, named after the process writing it (`mkstemp`'s
#: random part: 8 of lowercase letters, digits and `_`), so that one a killed run left is
#: told from one another running process is writing (a stack rendering into the folder too).
_TEMPORARY = re.compile(r"\.stackwright-(\d+)-[a-z0-9_]{8}\.tmp")
#: The temporary file earlier versions made, whose name says no process: one older than
#: `_STALE` seconds (a write takes milliseconds) is a leftover.
_EARLIER_TEMPORARY = re.compile(r"\.tmp-[a-z0-9_]{8}")
_STALE = 60.0


def _leftover(entry: os.DirEntry[str]) -> bool:
    """Whether a folder's `entry` is a temporary file of `_write`'s whose run was killed
    before renaming it: its process gone; one under this process's own pid, or an earlier
    version's, when older than `_STALE`. Never a file of another name (a user's)."""
    if not entry.is_file(follow_symlinks=False):
        return False
    ours = _TEMPORARY.fullmatch(entry.name)
    if ours is not None:
        pid = int(ours[1])
        if pid != os.getpid():
            return gone(pid)
        # A killed run's under the same pid: a container's runs often get the same one.
    elif _EARLIER_TEMPORARY.fullmatch(entry.name) is None:
        return False
    with contextlib.suppress(OSError):
        return time.time() - entry.stat(follow_symlinks=False).st_mtime > _STALE
    return False


def _write(path: Path, obj: Mapping[str, Any]) -> None:
    """Write a manifest atomically: a temporary file in the same folder, renamed over it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = yaml.safe_dump(dict(obj), sort_keys=False, default_flow_style=False)
    import tempfile  # for a provider that renders files (~0.4 ms of every other run)

    # A short name: the file's own may be as long as a file system takes.
    handle, temporary = tempfile.mkstemp(
        prefix=f".stackwright-{os.getpid()}-", suffix=".tmp", dir=path.parent
    )
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.chmod(temporary, 0o644)  # as a file the user wrote, not mkstemp's 0600
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
