"""A Kustomize directory as Stackwright resources: `Directory`.

    import stackwright.kubernetes as k8s

    staging = k8s.kustomize.Directory("app", directory="deploy/overlays/staging")

The kustomization is built by the real Kustomize engine — a `kustomize` binary on
PATH, else `kubectl kustomize` (kubectl embeds Kustomize) — never by a Python
imitation, and each object of the output becomes a child resource exactly as
`k8s.yaml.ConfigGroup` registers it (same names, transformations, prefix, skip_await).

Building runs a subprocess while the program declares its resources; it must never
touch a cluster (kustomize does not).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Sequence

from stackwright.errors import UsageError, located
from stackwright.kubernetes.yaml import (
    ManifestComponent,
    Reading,
    Transformation,
    known_while_running,
    options_once,
    parse,
    source_and_options,
)
from stackwright.sdk.resource import ResourceOptions, _declared_at

__all__ = ["Directory"]

#: How many lines of the tool's stderr a build failure shows.
ERROR_LINES = 8

#: kubectl's log-line prefix (`E1123 19:53:48.847745   20158 run.go:72] "command failed" err=...`).
_KLOG = re.compile(r"[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+ \S+:\d+\] ")
_KLOG_ERR = re.compile(r'err="((?:[^"\\]|\\.)*)"')


def _without_klog(line: str) -> str:
    """A kubectl log line as its error alone; any other line as it is."""
    if not _KLOG.match(line):
        return line
    found = _KLOG_ERR.search(line)
    text = found.group(1) if found else _KLOG.sub("", line)
    return re.sub(r"\\(.)", r"\1", text)


def build_command(directory: str) -> list[str]:
    """The command that builds `directory`: `kustomize build`, else `kubectl kustomize`."""
    kustomize = shutil.which("kustomize")
    if kustomize:
        return [kustomize, "build", directory]
    kubectl = shutil.which("kubectl")
    if kubectl:
        return [kubectl, "kustomize", directory]
    raise UsageError(
        f"cannot build the kustomization {directory}: neither `kustomize` nor `kubectl` "
        "is on PATH; install one of them (kubectl embeds Kustomize as `kubectl kustomize`)"
    )


def build(directory: str) -> str:
    """The YAML stream `kustomize build DIRECTORY` prints, or a UsageError with its message."""
    remote = "://" in directory or directory.startswith(("github.com/", "git@"))
    if not remote and not os.path.isdir(directory):
        raise UsageError(
            f"kustomization directory {directory} does not exist "
            f"(relative paths are from {os.getcwd()})"
        )
    command = build_command(directory)
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise UsageError(f"cannot run {' '.join(command[:2])} for {directory}: {exc}") from exc
    if result.returncode != 0:
        lines = list(
            dict.fromkeys(
                _without_klog(line) for line in result.stderr.strip().splitlines() if line.strip()
            )
        )
        shown = "; ".join(lines[:ERROR_LINES]) or f"exit code {result.returncode}"
        tool = os.path.basename(command[0])
        raise UsageError(f"{tool} could not build {directory}: {shown}")
    return result.stdout


#: What a Directory's source is (for a message).
_A_DIRECTORY = ("a kustomization's folder or URL", (str, os.PathLike))


class Directory(ManifestComponent):
    """The objects a kustomization builds to, each a child resource."""

    TYPE = "kubernetes:kustomize:Directory"
    LABEL = "kustomize.Directory"

    def __init__(
        self,
        name: str,
        directory_or_opts: str | os.PathLike[str] | ResourceOptions | None = None,
        /,
        transformations: Sequence[Transformation] | ResourceOptions | None = None,
        resource_prefix: str | None = None,
        skip_await: bool = False,
        opts: ResourceOptions | None = None,
        *,
        directory: str | os.PathLike[str] | None = None,
        namespace: str | None = None,
    ) -> None:
        """`namespace`: where the objects that name none go (as kustomize.v2's Directory and
        a kustomization's own `namespace:`), cluster-scoped kinds aside; without it, the
        provider's default namespace at apply."""
        what = located(_declared_at(), f"{self.LABEL} {name!r}")
        known_while_running(what, "namespace", namespace, "kustomize builds then")
        directory, opts = source_and_options(
            self.LABEL, name, directory_or_opts, ("directory", directory), opts, _A_DIRECTORY
        )
        if isinstance(transformations, ResourceOptions):  # Pulumi's (name, directory, opts)
            opts, transformations = options_once(self.LABEL, name, transformations, opts), None
        path = os.fspath(directory if directory is not None else name)
        source = f"the output of building {path}"
        with Reading(self.LABEL, name):
            text = build(path)
            documents = parse(text, source)
        super().__init__(self.TYPE, name, {"directory": path}, opts)
        self.register_documents(
            documents,
            texts={source: text},
            transformations=transformations,
            resource_prefix=resource_prefix,
            skip_await=skip_await,
            namespace=namespace,
        )
