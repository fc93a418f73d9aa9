"""`stackwright cluster …`: the local Kubernetes-compatible cluster."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from stackwright.cli.lines import json_document
from stackwright.errors import UsageError
from stackwright.lazy import lazy_module
from stackwright.localcluster import DEFAULT_NAME

if TYPE_CHECKING:
    from stackwright.localcluster import lifecycle
    from stackwright.localcluster.nodeops import NodeOps
else:  # for the commands about a local cluster, not every command (~1.5 ms)
    lifecycle = lazy_module("stackwright.localcluster.lifecycle")

app = typer.Typer(
    help="Run a local Kubernetes-compatible cluster in the background.", no_args_is_help=True
)

Name = Annotated[str, typer.Option("--name", help="Cluster name; its context is stackwright-NAME.")]
NameOption = Annotated[
    str | None,
    typer.Option("--name", help="Cluster name; its context is stackwright-NAME (default: local)"),
]
# The name may also be given as the command's argument, as k3d and kind users type it
# (`stackwright cluster stop demo`).
Given = Annotated[
    str | None,
    typer.Argument(help="Cluster name (or --name).", metavar="NAME", show_default=False),
]
Json = Annotated[bool, typer.Option("--json", "-j", help="Print a JSON document instead of text.")]


def _name(given: str | None, option: str | None) -> str:
    """The cluster a command is about: NAME or --name (one of them), else the default."""
    if given is not None and option is not None and given != option:
        raise UsageError(f"two cluster names: {given!r} and --name {option!r}; give the name once")
    return given or option or DEFAULT_NAME


def _emit(data: dict[str, object], as_json: bool, text: str) -> None:
    typer.echo(json_document(data) if as_json else text)


@app.command()
def start(
    given: Given = None,
    option: NameOption = None,
    nodes: Annotated[
        int | None, typer.Option("--nodes", help="Number of simulated nodes (default 1).")
    ] = None,
    port: Annotated[
        int | None, typer.Option("--port", help="Port on 127.0.0.1 (default: a free one, kept).")
    ] = None,
    speed: Annotated[
        float | None, typer.Option("--speed", help="Simulated time factor; <1 is slower.")
    ] = None,
    as_json: Json = False,
) -> None:
    """Start a cluster in the background and wait until it answers."""
    name = _name(given, option)
    info, started = lifecycle.start(name, nodes=nodes, port=port, speed=speed)
    if started:
        text = f"cluster {name} is running at {info.server} (context {info.context}, kubeconfig {info.kubeconfig})"
    else:
        text = f"cluster {name} is already running at {info.server} (context {info.context}); nothing to do"
    _emit({**info.to_dict(), "started": started}, as_json, text)


@app.command()
def stop(given: Given = None, option: NameOption = None, as_json: Json = False) -> None:
    """Stop a cluster; its objects are kept for the next start."""
    name = _name(given, option)
    stopped = lifecycle.stop(name)
    text = f"cluster {name} stopped" if stopped else f"cluster {name} was not running"
    _emit({"name": name, "stopped": stopped}, as_json, text)


@app.command()
def status(given: Given = None, option: NameOption = None, as_json: Json = False) -> None:
    """Say whether a cluster runs, where, and with which kubeconfig."""
    name = _name(given, option)
    info = lifecycle.info(name)
    state = f"running at {info.server} (pid {info.pid})" if info.running else "stopped"
    _emit(
        info.to_dict(),
        as_json,
        f"cluster {name}: {state}; context {info.context}; kubeconfig {info.kubeconfig}",
    )


@app.command("ls", hidden=True)  # as `stack ls`
@app.command("list")
def list_(as_json: Json = False) -> None:
    """List the local clusters on this machine."""
    clusters = lifecycle.list_clusters()
    if as_json:
        typer.echo(json_document([c.to_dict() for c in clusters]))
        return
    for c in clusters:
        typer.echo(f"{c.name}\t{'running' if c.running else 'stopped'}\t{c.server}")


@app.command()
def delete(given: Given = None, option: NameOption = None, as_json: Json = False) -> None:
    """Stop a cluster and delete all of its data."""
    name = _name(given, option)
    lifecycle.delete(name)
    _emit({"name": name, "deleted": True}, as_json, f"cluster {name} deleted")


@app.command()
def kubeconfig(
    given: Given = None,
    option: NameOption = None,
    user: Annotated[
        str | None,
        typer.Option(
            "--user",
            help="Write a kubeconfig for this user instead: a client certificate the cluster's "
            "client CA signs (RBAC decides what the user may do).",
        ),
    ] = None,
    groups: Annotated[
        list[str] | None,
        typer.Option("--group", help="A group of --user (repeatable; system:masters: admin)."),
    ] = None,
    as_json: Json = False,
) -> None:
    """Print the path of the cluster's kubeconfig (use with KUBECONFIG=…)."""
    name = _name(given, option)
    if user is None:
        if groups:
            raise UsageError("--group needs --user: name the user the groups are for")
        current = lifecycle.info(name)
        data: dict[str, object] = {"name": name, "context": current.context}
        path = current.kubeconfig
    else:
        path, context = lifecycle.user_kubeconfig(name, user, groups or ())
        data = {"name": name, "context": context, "user": user, "groups": groups or []}
    _emit({**data, "kubeconfig": str(path)}, as_json, str(path))


# --- nodes ---------------------------------------------------------------------------------

node_app = typer.Typer(
    help="Cordon, drain, fail or recover a simulated node (to test disruption).",
    no_args_is_help=True,
)
app.add_typer(node_app, name="node")

NodeName = Annotated[str, typer.Argument(help="The node, e.g. node-1.", metavar="NODE")]


def _node_ops(name: str) -> NodeOps:
    # Imported here: the API client is not needed to start or stop a cluster.
    from stackwright.localcluster.nodeops import NodeOps

    return NodeOps(lifecycle.info(name))


@node_app.command()
def cordon(node: NodeName, name: Name = DEFAULT_NAME, as_json: Json = False) -> None:
    """Mark a node unschedulable: new pods go elsewhere, running ones stay."""
    ops = _node_ops(name)
    try:
        ops.cordon(node)
    finally:
        ops.close()
    _emit({"node": node, "cordoned": True}, as_json, f"node/{node} cordoned")


@node_app.command()
def uncordon(node: NodeName, name: Name = DEFAULT_NAME, as_json: Json = False) -> None:
    """Make a cordoned node schedulable again."""
    ops = _node_ops(name)
    try:
        ops.uncordon(node)
    finally:
        ops.close()
    _emit({"node": node, "cordoned": False}, as_json, f"node/{node} uncordoned")


@node_app.command()
def drain(
    node: NodeName,
    name: Name = DEFAULT_NAME,
    timeout: Annotated[
        float,
        typer.Option("--timeout", help="Seconds to keep retrying evictions a budget refuses."),
    ] = 60.0,
    as_json: Json = False,
) -> None:
    """Cordon a node and evict its pods (not DaemonSet pods), honouring disruption budgets."""
    ops = _node_ops(name)
    try:
        report = ops.drain(
            node,
            timeout=timeout,
            on_evict=None if as_json else (lambda ref: typer.echo(f"evicting pod {ref}")),
        )
    finally:
        ops.close()
    _emit(
        {"node": node, "evicted": report.evicted, "skipped": report.skipped},
        as_json,
        f"node/{node} drained",
    )


@node_app.command()
def fail(node: NodeName, name: Name = DEFAULT_NAME, as_json: Json = False) -> None:
    """Simulate a node failure: NotReady, tainted unreachable, its pods evicted."""
    ops = _node_ops(name)
    try:
        ops.fail(node)
    finally:
        ops.close()
    _emit(
        {"node": node, "failed": True},
        as_json,
        f"node/{node} failed: it stops reporting; its pods are evicted shortly",
    )


@node_app.command()
def recover(node: NodeName, name: Name = DEFAULT_NAME, as_json: Json = False) -> None:
    """Bring a failed node back."""
    ops = _node_ops(name)
    try:
        ops.recover(node)
    finally:
        ops.close()
    _emit({"node": node, "failed": False}, as_json, f"node/{node} recovered")
