"""The local Kubernetes-compatible cluster: a server for development and tests."""

#: The cluster a command names when given no name (its context: `stackwright-local`). Here,
#: not in `lifecycle`, which the CLI imports only for a command about a local cluster.
DEFAULT_NAME = "local"
