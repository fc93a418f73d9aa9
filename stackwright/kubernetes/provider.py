"""`Provider`: which cluster (and default namespace) the resources that name it go to.

A program that targets one cluster needs no Provider: the engine uses the stack's
default one. A program that targets several declares one Provider per cluster and
passes it as `ResourceOptions(provider=...)`; the engine recognises the type
`stackwright:providers:kubernetes` and configures a Kubernetes provider from its
properties.

Must never: connect to a cluster — declaring a Provider only records its settings.
"""

from __future__ import annotations

from typing import Any

from stackwright.errors import UsageError
from stackwright.sdk.context import current_program
from stackwright.sdk.output import Output, dependencies_of, resolve, unwrap_secrets
from stackwright.sdk.resource import CustomResource, Resource, ResourceOptions

#: The type token the engine treats as a Kubernetes provider (Pulumi's `pulumi:providers:kubernetes`).
PROVIDER_TYPE = "stackwright:providers:kubernetes"

#: A release Helm owns (`helm.Release`): the engine installs, upgrades and uninstalls it
#: through Helm rather than applying objects. (Here rather than in `helm`, so the engine
#: can tell a release apart without importing Helm's half of the package.)
RELEASE_TYPE = "kubernetes:helm.sh/v4:Release"

#: The components whose manifests declare their children (a ConfigFile's, ConfigGroup's,
#: kustomization's or chart's objects), as Python's classes and a YAML program's types name
#: them: an object of theirs that exists already is adopted as their child
#: (`import --parent`), which the program declares already. (Here rather than with the
#: classes, so `import` can tell them without loading them.)
MANIFEST_PARENTS = frozenset(
    {
        "kubernetes:yaml:ConfigFile",
        "kubernetes:yaml:ConfigGroup",
        "kubernetes:kustomize:Directory",
        "kubernetes:helm.sh/v4:Chart",
        "kubernetes:yaml/v2:ConfigFile",
        "kubernetes:yaml/v2:ConfigGroup",
        "kubernetes:kustomize/v2:Directory",
    }
)

#: The provider setting that writes its objects as manifest files into a directory (relative
#: to the project's folder) instead of applying them (Pulumi's `renderYamlToDirectory`).
RENDER_SETTING = "renderYamlToDirectory"


class Provider(CustomResource):
    """A Kubernetes provider: a kubeconfig, a context in it, and a default namespace.

    `kubeconfig` is the path of a kubeconfig file or its contents (contents are kept
    secret, since a kubeconfig holds credentials; a path is not); `context` picks one of its
    contexts (default: its current context); `namespace` is where namespaced
    objects without `metadata.namespace` go (default: the context's namespace).
    `render_yaml_to_directory` (a folder, relative to the project's) makes the provider
    write each object's manifest there instead of applying it, reaching no cluster
    (`namespace` then defaults to `default`).
    """

    def __init__(
        self,
        resource_name: str,
        opts: ResourceOptions | None = None,
        *,
        kubeconfig: str | Output[Any] | None = None,
        context: str | Output[Any] | None = None,
        namespace: str | Output[Any] | None = None,
        render_yaml_to_directory: str | None = None,
    ) -> None:
        settings: dict[str, Any] = {}
        if is_kubeconfig_path(kubeconfig):
            settings["kubeconfig"] = kubeconfig  # a file's path: no credentials, say it in messages
        elif kubeconfig is not None:
            settings["kubeconfig"] = Output.secret(kubeconfig)  # contents: credentials
        if context is not None:
            settings["context"] = context
        if namespace is not None:
            settings["namespace"] = namespace
        if render_yaml_to_directory is not None:
            if not isinstance(render_yaml_to_directory, str) or not render_yaml_to_directory:
                raise UsageError(
                    f"provider {resource_name}: render_yaml_to_directory must be a folder's "
                    f"path as a plain string, not {render_yaml_to_directory!r}"
                )
            settings[RENDER_SETTING] = render_yaml_to_directory
        super().__init__(PROVIDER_TYPE, resource_name, settings, opts)


def is_kubeconfig_path(kubeconfig: Any) -> bool:
    """Whether a provider's `kubeconfig` names a file (which messages may show) rather than
    holding a kubeconfig's contents, YAML or JSON (credentials: secret, never shown)."""
    return isinstance(kubeconfig, str) and "\n" not in kubeconfig and not kubeconfig.startswith("{")


#: Settings that choose a provider's default namespace: its own, else its context's.
_NAMESPACE_SETTINGS = ("kubeconfig", "context", "namespace", RENDER_SETTING)

#: What a kubeconfig's context without a namespace means (kubectl's default).
DEFAULT_NAMESPACE = "default"


def provider_namespace(what: str, opts: ResourceOptions | None) -> str:
    """The namespace that the provider the options name (their own, else the parent's,
    else the stack's default one) puts objects without a namespace in, as far as it is
    known while the program runs: a provider's plain `namespace`, else its kubeconfig
    context's; for the stack's default provider, `kubernetes:namespace`, else its
    kubeconfig context's. A kubeconfig or context that is not known until another
    resource is applied gives `default` (the namespace a context names when it names
    none). A `namespace` not known until then is a UsageError naming `what`: nothing
    that runs in the program could know it."""
    given = opts if isinstance(opts, ResourceOptions) else ResourceOptions()
    parent = given.parent.opts if isinstance(given.parent, Resource) else None
    provider = given.merged_with(parent).provider
    program = current_program()
    settings: dict[str, Any] | None = None
    if isinstance(provider, Resource):
        props = {k: v for k, v in provider.props.items() if k in _NAMESPACE_SETTINGS}
        waits_for = sorted(r.resource_name for r in dependencies_of(props.get("namespace")))
        if waits_for:
            raise UsageError(
                f"{what}: the namespace of its provider {provider.resource_name!r} is not "
                f"known until {waits_for[0]!r} is applied, but the objects' "
                "namespace is needed while the program runs: give it namespace= as a plain "
                "value (or the provider a plain namespace)"
            )
        if any(dependencies_of(value) for value in props.values()):
            return DEFAULT_NAMESPACE
        settings, _ = unwrap_secrets(resolve(props, _no_state))
        if settings.get("namespace"):
            return str(settings["namespace"])
    found = program.provider_namespace(settings) if program.provider_namespace else None
    if found:
        return found
    if settings is None and program.config.get("kubernetes:namespace"):
        return str(program.config["kubernetes:namespace"])
    return DEFAULT_NAMESPACE


def _no_state(resource: Resource) -> Any:  # pragma: no cover - no dependencies, never called
    raise AssertionError(f"plain settings read no state ({resource.resource_name})")
