"""`Provider`: which cluster (and default namespace) the resources that name it go to.

A program that targets one cluster needs no Provider: the engine uses the stack's
default one. A program that targets several declares one Provider per cluster and
passes it as `ResourceOptions(provider=...)`; the engine recognises the type
`stackwright:providers:kubernetes` and configures a Kubernetes provider from its
properties.

Must never: connect to a cluster — declaring a Provider only records its settings.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from stackwright.sdk.output import Output
from stackwright.sdk.resource import CustomResource

if TYPE_CHECKING:
    from stackwright.sdk.resource import ResourceOptions

#: The type token the engine treats as a Kubernetes provider (Pulumi's `pulumi:providers:kubernetes`).
PROVIDER_TYPE = "stackwright:providers:kubernetes"

#: A release Helm owns (`helm.Release`): the engine installs, upgrades and uninstalls it
#: through Helm rather than applying objects. (Here rather than in `helm`, so the engine
#: can tell a release apart without importing Helm's half of the package.)
RELEASE_TYPE = "kubernetes:helm.sh/v4:Release"


class Provider(CustomResource):
    """A Kubernetes provider: a kubeconfig, a context in it, and a default namespace.

    `kubeconfig` is the path of a kubeconfig file or its contents (contents are kept
    secret, since a kubeconfig holds credentials; a path is not); `context` picks one of its
    contexts (default: its current context); `namespace` is where namespaced
    objects without `metadata.namespace` go (default: the context's namespace).
    """

    def __init__(
        self,
        resource_name: str,
        opts: ResourceOptions | None = None,
        *,
        kubeconfig: str | Output[Any] | None = None,
        context: str | Output[Any] | None = None,
        namespace: str | Output[Any] | None = None,
    ) -> None:
        settings: dict[str, Any] = {}
        if (
            isinstance(kubeconfig, str)
            and "\n" not in kubeconfig
            and not kubeconfig.startswith("{")
        ):
            settings["kubeconfig"] = kubeconfig  # a file's path: no credentials, say it in messages
        elif kubeconfig is not None:
            settings["kubeconfig"] = Output.secret(kubeconfig)  # contents: credentials
        if context is not None:
            settings["context"] = context
        if namespace is not None:
            settings["namespace"] = namespace
        super().__init__(PROVIDER_TYPE, resource_name, settings, opts)
