"""Resources whose provider renders them to manifest files (`renderYamlToDirectory`) instead
of applying them: what the engine refuses of them, and what their outputs are.

A rendered object is written, not created, so the fields a server fills (status, uid,
a Service's clusterIP) never come: its outputs are its inputs as written, and any other
field reads as unknown, in a preview and an up alike, rather than as absent (a callback
would fail on it) or as a value to wait for (none comes).

Must never: let a secret reach a file. Pulumi writes them in plain text with a warning;
Stackwright refuses such a resource before anything changes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from stackwright.engine.records import describe, is_patch, is_release, provider_urn
from stackwright.engine.wiring import manifest_file
from stackwright.errors import UsageError, located
from stackwright.kubernetes.provider import PROVIDER_TYPE, RENDER_SETTING
from stackwright.model import always_secret, urn_name
from stackwright.sdk.context import Program
from stackwright.sdk.output import (
    UNKNOWN,
    Partial,
    dependencies_of,
    partly_known,
    resolve,
    unwrap_secrets,
)
from stackwright.sdk.resource import Resource

#: What to do instead of rendering a secret, said in each refusal.
_INSTEAD = (
    "keep secrets out of rendered output: apply the Secret through a provider that reaches "
    "a cluster, or render a SealedSecret or an ExternalSecret, which hold no plain value"
)


def rendering_providers(program: Program | None) -> dict[str, str]:
    """The program's providers that render to files: URN → their directory."""
    return {
        r.urn: str(r.props[RENDER_SETTING])
        for r in (program.resources if program is not None else ())
        if r.resource_type == PROVIDER_TYPE and RENDER_SETTING in r.props
    }


def check_rendered(program: Program | None) -> None:
    """Refuse, before anything runs (one line naming the resource and its line, exit 2), a
    rendered resource that would write a secret to a file in plain text, a Helm release
    (Helm installs it in a cluster) or a Patch (of an object in a cluster)."""
    rendering = rendering_providers(program)
    if not rendering or program is None:
        return
    for resource in program.resources:
        directory = rendering.get(provider_urn(resource)) if resource.custom else None
        if directory is None:
            continue
        provider = urn_name(provider_urn(resource))
        if is_release(resource.resource_type):
            refused = (
                f"provider {provider} renders to files ({directory}), and a Helm release is "
                "installed in a cluster: render the chart's objects with helm.Chart instead, "
                "or give the release a provider that reaches a cluster"
            )
        elif is_patch(resource):
            refused = (
                f"provider {provider} renders to files ({directory}), and a Patch changes an "
                "object in a cluster: declare the whole object instead, or give the Patch a "
                "provider that reaches a cluster"
            )
        else:
            secret = rendered_secret(resource, resolve(resource.props, lambda _: UNKNOWN))
            if secret is None:
                continue
            refused = refusal(secret, provider, directory)
        # Named only for the message: a place is no cost of every rendered object.
        raise UsageError(located(resource.declared_at, f"{describe(resource.urn)}: {refused}"))


def rendered_secret(resource: Resource, resolved: Any) -> str | None:
    """Where a resource's resolved inputs hold a secret value (a path), or None."""
    inputs, given = unwrap_secrets(resolved)
    held = [
        path
        for path in always_secret(inputs) + tuple(resource.opts.additional_secret_outputs)
        if inputs.get(path.split(".")[0])
    ]
    found = [*given, *held]
    return (found[0] or "the whole object") if found else None


def refusal(path: str, provider: str, directory: str) -> str:
    """Why a rendered resource's secret is refused, a file would hold it in plain text
    (`its data.pw is secret, …`), for its caller to say after the resource's line and name."""
    return (
        f"its {path} is secret, and provider {provider} renders it to a file in "
        f"{directory} in plain text, which Stackwright never writes a secret in; {_INSTEAD}"
    )


def file_of(directory: str, obj: Mapping[str, Any], namespace: str | None) -> str:
    """The file a rendered object goes to (its namespace as its step's id says)."""
    meta = {k: v for k, v in (obj.get("metadata") or {}).items() if k != "namespace"}
    if namespace:
        meta["namespace"] = namespace
    return manifest_file(directory, {**obj, "metadata": meta})


def unplaced(why: str) -> str:
    """The warning for a kind a rendering provider cannot tell the scope of (`why`)."""
    return (
        f"{why.split(': declare')[0]}: its objects are written in the namespace they name, "
        "or with none (then `kubectl apply` puts a namespaced one in its context's); "
        "declare the CustomResourceDefinition with the same provider to have it placed"
    )


def as_rendered(obj: Mapping[str, Any]) -> Partial:
    """A rendered object's outputs as the program reads them: what it holds, and every
    field it does not unknown (a server would fill it; none will)."""
    return cast(Partial, partly_known(obj))


def unknown_because_rendered(value: Any, rendering: Mapping[str, str]) -> str:
    """Why an Output that reads rendered resources stays unknown after an up (as a clause),
    or "" when it reads none."""
    rendered = sorted(
        r.resource_name for r in dependencies_of(value) if provider_urn(r) in rendering
    )
    if not rendered:
        return ""
    return (
        f"it reads {rendered[0]}, which is rendered to a file, not applied, so the fields a "
        "server fills (status, uid, a Service's clusterIP) never come: read only the "
        "fields the program gives it"
    )
