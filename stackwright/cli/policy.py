"""`stackwright policy check PATH…` and `stackwright policy audit`: policy packs outside a stack.

Each handler parses its options, calls one function of `stackwright.automation.policy`
and prints the report as text, JSON or SARIF. Exit code 3 when a mandatory policy
failed (or a policy raised), 0 otherwise, 2 for bad input.

Must never: decide what passes (the policy package does) or read sources itself (the
automation layer does).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from stackwright.cli.lines import error_line, json_document
from stackwright.cli.project import PolicyPacks
from stackwright.cli.terminal import machine_stdout
from stackwright.errors import PolicyViolation, StackwrightError, UsageError, redact
from stackwright.lazy import lazy_module

if TYPE_CHECKING:
    # Imported by the commands: with Helm, Kustomize and manifest reading behind it, it would
    # add ~20 ms to every `stackwright` command, `up` included.
    from stackwright import policy
    from stackwright.automation import policy as policy_runs
    from stackwright.cli import render
else:  # the packs and the displays (~50 ms with the engine's events), for policy commands
    policy = lazy_module("stackwright.policy")
    render = lazy_module("stackwright.cli.render")

app = typer.Typer(
    help="Policy packs: check manifests, charts and kustomizations; audit a live cluster.",
    no_args_is_help=True,
)

FORMATS = ("text", "json", "sarif")

Packs = Annotated[
    list[str] | None,
    typer.Option(
        "--pack",
        help="A built-in pack by name (default: the config's, else kubernetes-best-practices).",
        metavar="NAME",
    ),
]
LevelOption = Annotated[
    str | None,
    typer.Option("--level", help="Run every enabled policy at this level: mandatory or advisory."),
]
Format = Annotated[str, typer.Option("--format", help="text, json or sarif.")]
Json = Annotated[bool, typer.Option("--json", "-j", help="The same as --format json.")]
ConfigFile = Annotated[
    str | None,
    typer.Option(
        "--config",
        help="Policy settings: a Stackwright.<stack>.yaml, or a mapping of policy: keys.",
        metavar="FILE",
    ),
]


def _options(
    packs: list[str] | None,
    policy_packs: list[str] | None,
    level: str | None,
    config: str | None,
    output_format: str,
    **more: object,
) -> policy_runs.Options:
    if output_format not in FORMATS:
        raise UsageError(f"--format {output_format}: use one of {', '.join(FORMATS)}")
    from stackwright.automation import policy as policy_runs

    return policy_runs.Options(
        packs=tuple(packs or ()),
        pack_dirs=tuple(policy_packs or ()),
        level=policy.Level.override(level, "--level"),
        config=config,
        **more,  # type: ignore[arg-type]
    )


@contextlib.contextmanager
def _report_on_failure(output_format: str, as_json: bool) -> Iterator[None]:
    """With `--format sarif`, bad input prints a SARIF log that says so before the error
    line: a CI job uploads what it printed (`> policy.sarif`, then `upload-sarif` with `if:
    always()`), and an empty file is refused there with a JSON syntax error. With `--format
    json`, the `error` event that `--json` (its other spelling) ends with: stdout held
    nothing, and a job's `jq` over it read no error."""
    try:
        yield
    except StackwrightError as error:
        if output_format == "sarif":
            typer.echo(json_document(policy.sarif_failure(str(error), error.exit_code)))
        elif output_format == "json" and not as_json:  # with --json, main writes the line
            typer.echo(error_line(redact(str(error)), error.exit_code))
        raise


def _show(report: policy.Report, output_format: str) -> None:
    if output_format == "json":
        typer.echo(json_document(report.to_dict()))
    elif output_format == "sarif":
        typer.echo(json_document(policy.to_sarif(report)))
    else:
        typer.echo("\n".join(line.plain for line in render.policy_lines(report)))
    if report.blocked:
        raise typer.Exit(PolicyViolation.exit_code)


@app.command("check")
def check(
    paths: Annotated[
        list[Path], typer.Argument(help="YAML files, directories, Helm charts, kustomizations.")
    ],
    packs: Packs = None,
    policy_packs: PolicyPacks = None,
    level: LevelOption = None,
    output_format: Format = "text",
    as_json: Json = False,
    set_values: Annotated[
        list[str] | None,
        typer.Option("--set", help="A Helm value, key=value (a.b=c for nested keys)."),
    ] = None,
    set_strings: Annotated[
        list[str] | None,
        typer.Option("--set-string", help="A Helm value kept as text, key=value."),
    ] = None,
    values: Annotated[
        list[str] | None,
        typer.Option("--values", "-f", help="A Helm values file.", metavar="FILE"),
    ] = None,
    config: ConfigFile = None,
    release: Annotated[
        str,
        typer.Option(
            "--release", help="Helm release name (default: release-name, as helm template's)."
        ),
    ] = "release-name",
    namespace: Annotated[
        str | None, typer.Option("--namespace", "-n", help="Helm release namespace.")
    ] = None,
) -> None:
    """Run policy packs over manifests, Helm charts and kustomizations; no cluster, no stack."""
    output_format = "json" if as_json else output_format
    with _report_on_failure(output_format, as_json):
        options = _options(
            packs,
            policy_packs,
            level,
            config,
            output_format,
            values_files=tuple(values or ()),
            set_values=tuple(set_values or ()),
            set_string_values=tuple(set_strings or ()),
            release=release,
            namespace=namespace,
        )
        from stackwright.automation import policy as policy_runs

        # A report in json or sarif is all that stdout holds: what a program prints goes
        # to stderr.
        machine = output_format != "text"
        with machine_stdout() if machine else contextlib.nullcontext():
            report = policy_runs.check(paths, options)
    if not report.checked:
        # A CI job pointed at the wrong folder would pass in silence.
        typer.echo(
            f"warning: no Kubernetes objects found in {', '.join(map(str, paths))}; nothing "
            "was checked (files that are not manifests are skipped in directories)",
            err=True,
        )
    _show(report, output_format)


@app.command("audit")
def audit(
    context: Annotated[
        str | None, typer.Option("--context", help="The kubeconfig context of the cluster.")
    ] = None,
    kubeconfig: Annotated[
        str | None, typer.Option("--kubeconfig", help="The kubeconfig file.", metavar="FILE")
    ] = None,
    cluster: Annotated[
        str | None,
        typer.Option(
            "--cluster", help="A local cluster by name (`stackwright cluster start --name N`)."
        ),
    ] = None,
    namespace: Annotated[str, typer.Option("--namespace", "-n", help="Only this namespace.")] = "",
    packs: Packs = None,
    policy_packs: PolicyPacks = None,
    level: LevelOption = None,
    output_format: Format = "text",
    as_json: Json = False,
    config: ConfigFile = None,
) -> None:
    """Run policy packs over the objects of a live cluster, managed by a stack or not."""
    output_format = "json" if as_json else output_format
    with _report_on_failure(output_format, as_json):
        options = _options(packs, policy_packs, level, config, output_format)
        from stackwright.automation import policy as policy_runs

        report = policy_runs.audit(
            options, context=context, kubeconfig=kubeconfig, namespace=namespace, cluster=cluster
        )
    if not report.checked:
        # A misspelt --namespace would pass in silence, as `policy check` of the wrong folder.
        where = f"namespace {namespace!r}" if namespace else "the cluster"
        typer.echo(
            f"warning: {where} holds no object the packs judge (Namespaces, workloads, "
            "Services, PodDisruptionBudgets, NetworkPolicies); nothing was checked",
            err=True,
        )
    _show(report, output_format)


__all__ = ["app"]
