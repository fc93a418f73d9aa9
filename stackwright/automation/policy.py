"""Policy checks without a stack: manifests on disk (`policy check`) and live clusters (`policy audit`).

`check(paths, …)` reads YAML files, directories of them, Helm charts (rendered by
real Helm with the given values), Kustomize directories (built by the real engine)
and Stackwright projects (their program run, nothing applied) into policy subjects that remember their file and line, and evaluates the
chosen packs. Settings come from `--config FILE` (a `Stackwright.<stack>.yaml`, or a
mapping of the same `policy:` keys). `audit` reads a cluster's objects through the
engine and evaluates the same packs.

Must never: talk to a cluster in `check`, or show a traceback for a bad path, value
or pack (one line, exit code 2).
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from stackwright.automation.workspace import PROJECT_FILE, Project
from stackwright.engine import policy_gate, wiring
from stackwright.engine.policy_gate import PolicyGate
from stackwright.engine.policy_gate import audit as audit_objects
from stackwright.engine.program import run_program
from stackwright.errors import UsageError, no_such_day, not_utf8, not_valid_yaml
from stackwright.kubernetes import helm, kustomize
from stackwright.kubernetes import yaml as manifests
from stackwright.policy import Level, Report, Settings, Subject, evaluate, select_packs
from stackwright.sdk.config import MissingConfiguration

#: The pack `policy check` runs when neither `--pack` nor the config file names one.
DEFAULT_PACK = "kubernetes-best-practices"
_KUSTOMIZATIONS = ("kustomization.yaml", "kustomization.yml", "Kustomization")
_MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
_SEPARATOR = re.compile(r"^---(\s|$)")


@dataclass(frozen=True)
class Options:
    """What `policy check` and `policy audit` run: packs, level, settings and chart values."""

    packs: tuple[str, ...] = ()
    pack_dirs: tuple[str, ...] = ()
    level: Level | None = None
    config: str | None = None
    values_files: tuple[str, ...] = ()
    set_values: tuple[str, ...] = ()
    set_string_values: tuple[str, ...] = ()
    release: str = "release-name"  # as `helm template` names it
    namespace: str | None = None
    #: What a program checked without a stack sees: the stack name and its configuration.
    stack: str = "check"
    program_config: Mapping[str, Any] = field(default_factory=dict)


def _document_lines(text: str) -> list[int]:
    """The 1-based line where each YAML document of `text` starts (its first content line;
    0 for an empty one), found by a scan for `---` separators (parsing positions with PyYAML
    is 10x slower). Indexes match `manifests.parse`'s document numbers."""
    starts: list[int] = []
    first = 0  # the first content line of the document being read; 0 while none
    opened = False  # a separator opened the current document (so it counts even if empty)
    for number, line in enumerate(text.splitlines(), 1):
        if _SEPARATOR.match(line):
            if first or opened:
                starts.append(first)
            first, opened = 0, True
        elif (
            not first
            and line.strip()
            and not line.lstrip().startswith("#")
            and not line.startswith("%")  # a directive of the document its `---` opens
        ):
            first = number
    if first or opened:
        starts.append(first)
    return starts


def _subjects_of_text(text: str, source: str, *, strict: bool, lines: bool = True) -> list[Subject]:
    documents = manifests.parse(text, source)
    starts = _document_lines(text) if lines else []
    found = []
    for doc in manifests.expand(documents):
        obj = doc.obj
        if not isinstance(obj, dict) or not obj.get("kind") or not obj.get("apiVersion"):
            if strict:
                raise UsageError(
                    f"document {doc.index} of {source} is not a Kubernetes object (it needs "
                    "apiVersion and kind); pass only manifests, charts and kustomizations"
                )
            continue
        line = starts[doc.index] if doc.index < len(starts) else 0
        found.append(Subject(obj, source=source, line=line))
    return found


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise not_utf8(str(path), exc) from exc
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from exc


def _as_alone(assignment: str) -> str:
    """`assignment` to be joined to others by commas, as Helm reads it alone: without a last
    backslash that escapes nothing (`path=C:\\`, which Helm drops), nor a last comma that
    escapes nothing (`a=1,`, which Helm allows but not before another item, as `a=1,,b=2`)."""
    if _escapes_nothing(assignment):
        assignment = assignment[:-1]
    if assignment.endswith(",") and not _escapes_nothing(assignment[:-1]):
        return assignment[:-1] or assignment  # a comma alone is Helm's to refuse
    return assignment


def _escapes_nothing(text: str) -> bool:
    """Whether `text` ends in a backslash that is not itself escaped."""
    return (len(text) - len(text.rstrip("\\"))) % 2 == 1


def _set_values(flag: str, assignments: Sequence[str]) -> dict[str, Any]:
    """`--set` (or `--set-string`, whose values all stay text) as Helm reads it, by Helm's own
    parser: `a.b=1,c=x` (`\\,` for a comma in a value), lists `{a,b}` and items `a[0].b=c`,
    values typed as Helm types them (1.10, 0123 and yes stay text), each flag in turn into
    one map, as Helm's repeated `--set` is."""
    import helm_python

    text_only = flag == "--set-string"
    parse = helm_python.parse_set_string_values if text_only else helm_python.parse_set_string
    # Joined by commas, each flag as Helm reads it alone (`_as_alone`): an empty one sets
    # nothing.
    given = [(number, _as_alone(one)) for number, one in enumerate(assignments, 1) if one]
    if not given:
        return {}
    try:
        return parse(",".join(one for _, one in given))
    except helm_python.HelmError:
        # Not chained: Helm's message may quote a value's text (see `_SET_REFUSALS`).
        raise UsageError(_set_refusal(flag, given, parse)) from None


#: What Helm's `--set` parser refuses, in words that quote nothing of the text: Helm's own
#: message quotes the key it read, which is a value's text where a comma inside a value was
#: not escaped (`db.password=ab,cd`: `key "cd" has no value`), and a value may be a password.
_SET_REFUSALS: tuple[tuple[str, str | None], ...] = (
    (r"key map ", "a key has an empty part between dots"),
    (r"error parsing index", "a list index in [] is not a whole number"),
    (r"unexpected data at end of array index", "text follows a list index's ]"),
    (r"list must terminate with", "a list {a,b} has no closing }"),
    (r"unable to parse key", "it sets a key inside a value set before (a=1, then a.b=2)"),
    (r"negative -?\d+ index not allowed$", None),  # Helm's words: the key's numbers only
    (r"index of \d+ is greater than maximum supported index of \d+$", None),
)


def _set_refusal(
    flag: str, given: Sequence[tuple[int, str]], parse: Callable[[str], dict[str, Any]]
) -> str:
    """The one line for `given` (each flag's number and text) that Helm refused: the flag by
    its number and the key at fault, never a value. Items are parsed one more at a time, so
    that the first one Helm refuses, with those before it, is the one named."""
    import helm_python

    how = (
        "write it as key=value (a.b=c for nested keys, a[0]=c for a list's item, \\, for a "
        "comma in a value)"
    )
    read: list[str] = []
    for number, assignment in given:
        keys: list[str] = []  # of this flag's items read so far
        for item, key in _set_items(assignment):
            read.append(item)
            try:
                parse(",".join(read))
            except helm_python.HelmError as exc:
                return f"{flag} #{number}: {_set_fault(exc.detail, key, keys)}; {how}"
            if key is not None:
                keys.append(key)
    return f"{flag}: Helm cannot read them together; {how}"


def _set_fault(detail: str, key: str | None, before: Sequence[str]) -> str:
    """Why Helm refused an item (its `key`, None: it has no `=`) after the flag's items with
    keys `before`; past the flag's first value, what Helm reads as a key may be that value's
    text (a comma in it not escaped, `pw=ab,c..d=e`, `pw=,X=,Y`), and is not shown: only the
    flag's first key is, which no value precedes."""
    reason = next((r for p, r in _SET_REFUSALS if re.match(p, detail)), "Helm cannot read it")
    if before:  # None: Helm's words hold numbers of that text
        what = "has no '='" if key is None else f"is refused: {reason or 'Helm cannot read it'}"
        return (
            f"the text after the value of key {before[0]} {what} (not shown: it may be part "
            "of that value)"
        )
    if key is None:
        return "it has no '=' (not shown: it may be a value)"
    return f"key {key}: {reason or detail}"


def _set_items(assignment: str) -> list[tuple[str, str | None]]:
    """The items of one `--set` text, each with its key (the text before its first `=`; None
    where it has none), split where Helm's parser moves to the next key: at a comma in a key
    or a value (not one escaped, `\\,`, nor one in a `[…]` index or a `{…}` list), and after
    a list's `}`."""
    items: list[tuple[str, str | None]] = []
    start, at, depth, equals, where = 0, 0, 0, -1, "key"
    while at < len(assignment):
        char = assignment[at]
        if char == "\\":  # escapes the next character, in a key as in a value
            at += 2
            continue
        end = -1
        if where == "key":
            if char == "=" and equals < start:  # the first, in an index too: not shown past it
                equals = at
            if char == "[":
                depth += 1
            elif char == "]" and depth:
                depth -= 1
            elif char == "=" and not depth:
                where = "list" if assignment[at + 1 : at + 2] == "{" else "value"
            elif char == "," and not depth:
                end = at
        elif (where, char) in (("value", ","), ("list", "}")):
            end = at + (where == "list")
        if end >= 0:
            key = assignment[start:equals] if equals >= start else None
            items.append((assignment[start:end], key))
            start = end + (assignment[end : end + 1] == ",")
            at, depth, where = start, 0, "key"
            continue
        at += 1
    if start < len(assignment):
        key = assignment[start:equals] if equals >= start else None
        items.append((assignment[start:], key))
    return items


def _chart(path: Path, options: Options) -> list[Subject]:
    what = f"Helm chart {path}"
    values = helm.merge_values(
        what,
        list(options.values_files),
        _set_values("--set", options.set_values),
        _set_values("--set-string", options.set_string_values),
    )
    crds, templates = helm.render(
        what, str(path), values, release=options.release, namespace=options.namespace
    )
    found = []
    for rendered, text in [*crds, *templates]:
        # Helm names a template `<chart name>/templates/x.yaml`: point at the file on disk.
        inside = rendered.split("/", 1)[1] if "/" in rendered else rendered
        source = str(path / inside) if path.is_dir() else f"{path}:{rendered}"
        # Rendered lines are not the template's lines: no line numbers for charts.
        found.extend(_subjects_of_text(text, source, strict=True, lines=False))
    return found


def _is_chart(path: Path) -> bool:
    return (path.is_dir() and (path / "Chart.yaml").is_file()) or path.name.endswith(".tgz")


def _is_kustomization(path: Path) -> bool:
    return path.is_dir() and any((path / name).is_file() for name in _KUSTOMIZATIONS)


def _directory(path: Path, options: Options) -> list[Subject]:
    found: list[Subject] = []
    for entry in sorted(path.iterdir()):
        if entry.name.startswith("."):
            continue
        if _is_chart(entry) or _is_kustomization(entry):
            found.extend(load(entry, options))
        elif entry.is_dir():
            found.extend(_directory(entry, options))
        elif entry.suffix in _MANIFEST_SUFFIXES:
            # Files in a directory need not all be manifests (values files, CI config).
            found.extend(_subjects_of_text(_read(entry), str(entry), strict=False))
    return found


def _program(folder: Path, options: Options) -> list[Subject]:
    """The objects a Stackwright program declares, its Outputs unknown as in a preview."""
    project = Project.load(folder.resolve())  # absolute: the program runs from its folder
    # As `stackwright --cwd PROJECT up` runs it: relative paths are from the program's folder.
    try:
        with contextlib.chdir(project.program_folder):
            declared = run_program(
                project.main,
                project=project.name,
                stack=options.stack,
                config=options.program_config,
            )
    except MissingConfiguration as exc:
        if options.config is not None:
            raise
        # Not `config set` (there is no stack here): the stack file that has the value.
        files = project.stack_files()
        raise UsageError(
            f"{folder}: the program requires configuration {exc.key}, and `policy check` runs "
            f"it with none: pass a stack's configuration file with --config "
            f"(in {folder}: {', '.join(files) or 'none yet'})"
        ) from exc
    found = policy_gate.subjects(declared, PolicyGate(()))
    # Each finding points at the file its object was declared in (a module the program
    # imports, a YAML program), named as the user named the project: relative stays
    # relative, like a manifest.
    for subject in found:
        file = Path(subject.source) if subject.source else project.main
        if file.is_relative_to(project.folder):
            file = folder / file.relative_to(project.folder)
        subject.source = str(file)
    return found


def load(path: Path, options: Options) -> list[Subject]:
    """The objects of one path: a manifest file, a chart, a kustomization, a Stackwright
    project (its program is run; nothing is applied) or a directory."""
    if not path.exists():
        raise UsageError(
            f"{path}: no such file or directory; pass YAML files, directories, Helm charts, "
            "Kustomize directories or Stackwright projects"
        )
    if path.is_dir() and (path / PROJECT_FILE).is_file():
        return _program(path, options)
    if _is_chart(path):
        return _chart(path, options)
    if _is_kustomization(path):
        return _subjects_of_text(kustomize.build(str(path)), str(path), strict=True, lines=False)
    if path.is_dir():
        return _directory(path, options)
    return _subjects_of_text(_read(path), str(path), strict=True)


def _config_values(config: str | None) -> tuple[dict[str, Any], str]:
    """The `policy:` settings of a config file, and the stack its name says (or "")."""
    if config is None:
        return {}, ""
    path = Path(config)
    try:
        text = path.read_text(encoding="utf-8")
        data = yaml.safe_load(text) or {}
    except UnicodeDecodeError as exc:
        raise not_utf8(f"--config {config}", exc) from exc
    except OSError as exc:
        raise UsageError(f"--config {config}: cannot read it: {exc.strerror or exc}") from exc
    except yaml.YAMLError as exc:
        raise UsageError(f"{not_valid_yaml(config, exc, text)}; it is the --config file") from exc
    except ValueError as exc:  # a date that is no day
        raise UsageError(f"{no_such_day(config, exc, text)}; it is the --config file") from exc
    if not isinstance(data, dict) or not isinstance(data.get("config", {}), dict):
        raise UsageError(f"--config {config}: expected a mapping (of `policy:` keys, or `config:`)")
    values = data.get("config", data)
    match = re.fullmatch(r"Stackwright\.(.+)\.ya?ml", path.name)
    return values, match.group(1) if match else ""


def _gate(options: Options, values: Mapping[str, Any], where: str) -> PolicyGate:
    # Objects that name no namespace go where `--namespace` says (Helm's release namespace).
    settings = Settings.from_config(values, where, default_namespace=options.namespace or "default")
    # `--pack`, else the config's policy:packs, else the default pack; but a stack file's own
    # pack directories (relative to it) are then the packs, as in that stack's preview.
    # `--policy-pack` directories add a team's packs to whichever.
    own: Sequence[str] = () if settings.pack_dirs else (DEFAULT_PACK,)
    names: Sequence[str] = options.packs or tuple(settings.packs) or own
    folder = Path(options.config).parent if options.config else Path()
    directories = [*settings.pack_directories(folder, where), *options.pack_dirs]
    packs = select_packs(names, directories)
    return PolicyGate(tuple(packs), settings, options.level)


def check(paths: Iterable[str | os.PathLike[str]], options: Options) -> Report:
    """Evaluate the packs over the objects of `paths`, with no cluster and no stack."""
    values, stack = _config_values(options.config)
    gate = _gate(options, values, options.config or "--config")
    options = replace(options, stack=stack or options.stack, program_config=values)
    subjects = [s for p in paths for s in load(Path(p), options)]
    return evaluate(
        subjects, gate.packs, gate.settings, stack=stack, level=gate.level, today=gate.today
    )


def audit(
    options: Options,
    *,
    context: str | None,
    kubeconfig: str | None,
    namespace: str = "",
    cluster: str | None = None,
) -> Report:
    """Evaluate the packs over the objects that exist in a cluster, managed by a stack or not
    (`cluster`: a Stackwright local cluster by name, as a stack's `kubernetes:cluster`)."""
    if cluster:
        if context or kubeconfig:
            raise UsageError(
                "--cluster names a local cluster, which has its own kubeconfig and context: "
                "pass --cluster alone, or --context / --kubeconfig alone"
            )
        from stackwright.localcluster import lifecycle  # imported by this command only

        local = lifecycle.info(cluster)
        if not local.running:
            raise UsageError(
                f"local cluster {cluster} is not running: start it with `stackwright cluster "
                f"start --name {cluster}`"
            )
        kubeconfig, context = str(local.kubeconfig), local.context
    values, _ = _config_values(options.config)
    gate = _gate(options, values, options.config or "--config")
    gate = PolicyGate(gate.packs, gate.settings, gate.level, cluster=context or "")
    reader = wiring.live_objects({"kubeconfig": kubeconfig, "context": context})
    return audit_objects(reader, gate, namespace=namespace)
