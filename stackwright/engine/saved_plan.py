"""A saved plan: what a preview planned, as the JSON document `preview --save-plan FILE`
writes and `up --plan FILE` holds its steps to (Pulumi's update plans, Terraform's plan
file), so that a person can approve a preview and a pipeline apply exactly that.

    {"stackwrightPlan": 1, "project": "web", "stack": "dev",
     "stateVersion": 12,        # the stack's `Snapshot.version` the preview planned against
     "options": {"targets": [], "targetDependents": false, "excludes": [],
                 "excludeDependents": false, "replace": [], "refresh": false,
                 "retarget": false, "forceConflicts": false,
                 "policyPacks": {"kubernetes-best-practices": "mandatory"}},
     "resources": [{"urn": "urn:sw:dev::web::kubernetes:apps/v1:Deployment::web",
                    "ops": ["update"], "inputs": {...}, "secretPaths": ["data.password"]}]}

A resource's `ops` are the steps the preview showed for it (a record left awaiting
deletion by an earlier replacement has a `delete-replaced` beside its resource's own
step); `inputs` are what its step would send (none for a delete), a value not known
until another resource is applied written `{"@unknown": true}`, and each value at a
secret path sealed as the state store seals it (`{"@secret": ciphertext}` under the
stack's data key: `seal` / `unseal` are the state's `Encrypter`).

`forceConflicts` and `policyPacks` (each pack the preview ran → the level it ran at) are
not taken from the plan but compared: an `up --plan` run otherwise is refused
(`SavedPlan.run_difference`), its steps previewed under other rules.

The check (`SavedPlan.violation`) is pure: a step must be one the plan has for its
resource, and each input the plan knew must have the planned value. Must never: write a
secret in plain text, or read a document it does not fully understand (one line, exit 2).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import orjson

from stackwright.engine.events import within
from stackwright.engine.plan import Step
from stackwright.errors import StackwrightError, UsageError
from stackwright.model import SECRET_TEXT, UNKNOWN, Op, ResourceState, shown
from stackwright.sdk.output import Partial, join_path

#: The format this Stackwright writes and the newest it reads.
FORMAT: Final = 1
#: The key that marks a document as a saved plan, holding its format.
MARK: Final = "stackwrightPlan"
#: How a value unknown at preview is written.
UNKNOWN_SIG: Final = "@unknown"
#: What tells the user how to make a plan again.
PREVIEW_AGAIN: Final = "run `stackwright preview --save-plan FILE` again and apply that plan"

#: Seals or unseals the secret paths of a resource's inputs (the state's Encrypter).
Sealing = Callable[[ResourceState], ResourceState]


class ViolatesPlan(StackwrightError):
    """A step `up --plan` would take that its plan does not allow: failed before it changes
    anything (exit code 1, as Pulumi's "resource violates plan"). `step` is the refused step,
    which the display shows failed."""

    def __init__(self, message: str, step: Step) -> None:
        super().__init__(message)
        self.step = step


#: Each option of a plan → how the document and a message name it.
_FLAGS: Final = {
    "targets": ("targets", "--target"),
    "target_dependents": ("targetDependents", "--target-dependents"),
    "excludes": ("excludes", "--exclude"),
    "exclude_dependents": ("excludeDependents", "--exclude-dependents"),
    "replace": ("replace", "--replace"),
    "refresh": ("refresh", "--refresh"),
    "retarget": ("retarget", "--retarget"),
}


@dataclass(frozen=True)
class PlanOptions:
    """The options that shaped a plan: an `up --plan` runs with the same."""

    targets: tuple[str, ...] = ()
    target_dependents: bool = False
    excludes: tuple[str, ...] = ()
    exclude_dependents: bool = False
    replace: tuple[str, ...] = ()
    refresh: bool = False
    retarget: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            key: list(value) if isinstance(value, tuple) else value
            for name, (key, _) in _FLAGS.items()
            for value in (getattr(self, name),)
        }

    @classmethod
    def from_dict(cls, document: Any) -> PlanOptions:
        if not isinstance(document, Mapping):
            raise _Invalid("its 'options' must be an object")
        values: dict[str, Any] = {}
        for name, (key, _) in _FLAGS.items():
            default = getattr(cls(), name)
            value = document.get(key, list(default) if isinstance(default, tuple) else default)
            if isinstance(default, tuple):
                if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                    raise _Invalid(f"its options.{key} must be a list of URNs")
                value = tuple(value)
            elif not isinstance(value, bool):
                raise _Invalid(f"its options.{key} must be true or false")
            values[name] = value
        return cls(**values)

    def said(self) -> str:
        """The options as a command line gives them: `--target URN --refresh`, or `none`."""
        given: list[str] = []
        for name, (_, flag) in _FLAGS.items():
            value = getattr(self, name)
            if isinstance(value, tuple):
                given += [f"{flag} {item}" for item in value]
            elif value:
                given.append(flag)
        return " ".join(given) or "none"

    def differing(self, other: PlanOptions) -> str | None:
        """The first flag whose value differs from `other`'s, as a message names it: one
        given here (not at its default) first."""
        differ = [name for name in _FLAGS if getattr(self, name) != getattr(other, name)]
        given = [name for name in differ if getattr(self, name) != getattr(PlanOptions(), name)]
        return _FLAGS[(given or differ)[0]][1] if differ else None


@dataclass(frozen=True)
class PlannedResource:
    """What the plan allows for one resource: its steps' operations, and the inputs its
    step sends (None for a resource the plan only deletes), secrets in plain (unsealed)."""

    urn: str
    ops: tuple[Op, ...]
    inputs: dict[str, Any] | None = None
    secret_paths: tuple[str, ...] = ()


@dataclass
class SavedPlan:
    project: str
    stack: str
    #: The stack's state version the preview planned against (`Snapshot.version`).
    state_version: int
    options: PlanOptions = PlanOptions()
    resources: dict[str, PlannedResource] = field(default_factory=dict)
    #: Whether the preview took fields over from other managers (`--force-conflicts`).
    force_conflicts: bool = False
    #: Each policy pack the preview ran → the level it ran at (`policy_gate.in_force`).
    policy_packs: dict[str, str] = field(default_factory=dict)

    def run_difference(self, force_conflicts: bool, policy_packs: Mapping[str, str]) -> str | None:
        """How an `up` with these differs from the preview the plan was made by, as a
        message says it (None: not at all): its steps were planned under those rules."""
        if force_conflicts != self.force_conflicts:
            then, now = ("without", "with") if force_conflicts else ("with", "without")
            return f"the plan was made {then} --force-conflicts, and this `up` runs {now} it"
        for name in sorted({*self.policy_packs, *policy_packs}):
            was, level = self.policy_packs.get(name), policy_packs.get(name)
            if was != level:
                ran = f"run at level {was}" if was else "not run"
                runs = f"runs it at level {level}" if level else "does not run it"
                return f"policy pack {name} was {ran} when the plan was made, and this `up` {runs}"
        return None

    def record(self, step: Step) -> None:
        """Add a step a preview showed."""
        known = self.resources.get(step.urn)
        ops = (*(known.ops if known else ()), step.op)
        if step.new is not None and step.op is not Op.DELETE_REPLACED:
            # As the document will hold them: a copy, unknowns as `read` gives them back.
            inputs = _decoded(_encoded(step.new.inputs))
            self.resources[step.urn] = PlannedResource(
                step.urn, ops, inputs, tuple(step.new.secret_paths)
            )
        else:
            inputs, paths = (known.inputs, known.secret_paths) if known else (None, ())
            self.resources[step.urn] = PlannedResource(step.urn, ops, inputs, paths)

    def violation(self, step: Step) -> str | None:
        """Why the plan does not allow `step` (None: it does): another operation, a resource
        the plan does not have, or an input the plan knew that now has another value (the
        first such field, secrets masked)."""
        planned = self.resources.get(step.urn)
        if planned is None:
            return f"the plan has no step for it, and this `up` would {doing(step.op)}"
        allowed = set(planned.ops)
        if Op.REPLACE in allowed:  # a replacement deletes its old object as a step of its own
            allowed.add(Op.DELETE_REPLACED)
        if step.op not in allowed:
            said = " or ".join(map(doing, planned.ops))
            return f"the plan would {said}, and this `up` would {doing(step.op)}"
        if step.new is None or planned.inputs is None or step.op is Op.DELETE_REPLACED:
            return None
        return self.inputs_violation(planned, step.new.inputs, step.new.secret_paths)

    def inputs_violation(
        self, planned: PlannedResource, inputs: Mapping[str, Any], secret_paths: tuple[str, ...]
    ) -> str | None:
        """The first input whose value differs from the one the plan knew, as a message says it."""
        assert planned.inputs is not None
        if _same_text(planned.inputs, inputs):  # most do: a walk of each took ~0.1 ms
            return None
        found = first_difference(planned.inputs, inputs)
        if found is None:
            return None
        path, was, now = found
        secret = within(path, (*planned.secret_paths, *secret_paths))
        return (
            f"{path or 'its inputs'} differs from the plan: "
            f"planned {_said(was, secret)}, now {_said(now, secret)}"
        )

    def to_document(self, seal: Sealing) -> dict[str, Any]:
        return {
            MARK: FORMAT,
            "project": self.project,
            "stack": self.stack,
            "stateVersion": self.state_version,
            "options": {
                **self.options.to_dict(),
                "forceConflicts": self.force_conflicts,
                "policyPacks": dict(sorted(self.policy_packs.items())),
            },
            "resources": [_resource_to_dict(r, seal) for r in self.resources.values()],
        }


def doing(op: Op) -> str:
    """What a step of `op` does to its resource, as a message says it: `update it`, `keep
    it unchanged`."""
    return "keep it unchanged" if op is Op.SAME else f"{op.value} it"


def first_difference(planned: Any, actual: Any, path: str = "") -> tuple[str, Any, Any] | None:
    """The first path (`join_path`'s form) where `actual` differs from `planned`, with the
    two values there; None when it matches. What the plan did not know matches anything;
    a field only one side has is a difference (its other side None)."""
    if planned is UNKNOWN:
        return None
    if isinstance(planned, Mapping) and isinstance(actual, Mapping):
        for key in (*planned, *(k for k in actual if k not in planned)):
            if key not in actual or key not in planned:
                return join_path(path, key), planned.get(key), actual.get(key)
            found = first_difference(planned[key], actual[key], join_path(path, key))
            if found is not None:
                return found
        return None
    if isinstance(planned, list) and isinstance(actual, list):
        for index, (was, now) in enumerate(zip(planned, actual, strict=False)):
            found = first_difference(was, now, join_path(path, index))
            if found is not None:
                return found
        if len(planned) != len(actual):
            return path, planned, actual
        return None
    # 2 and 2.0 are one JSON number; true is not 1.
    if planned == actual and isinstance(planned, bool) == isinstance(actual, bool):
        return None
    return path, planned, actual


def _same_text(planned: Any, actual: Any) -> bool:
    """Whether the two are the same JSON text (orjson, in C): then `first_difference` finds
    none. What it cannot write (the plan's unknowns) or writes otherwise (2 and 2.0, keys
    in another order) is left to the walk."""
    try:
        return orjson.dumps(planned) == orjson.dumps(actual)
    except TypeError:  # orjson.JSONEncodeError
        return False


def _said(value: Any, secret: bool) -> str:
    if value is None:
        return "absent"
    if secret:
        return SECRET_TEXT
    text = json.dumps(shown(value), sort_keys=True, default=str)
    return text if len(text) <= 60 else f"{text[:57]}..."


# --- the document ---------------------------------------------------------------------------


class _Invalid(Exception):
    """What is wrong with a document, said after `FILE is not a plan …: `."""


def _encoded(value: Any) -> Any:
    # A preview's partly known object (another resource's, passed whole): what it lacks is
    # unknown, not absent, which the document cannot say field by field.
    if value is UNKNOWN or isinstance(value, Partial):
        return {UNKNOWN_SIG: True}
    if isinstance(value, Mapping):
        return {k: _encoded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_encoded(v) for v in value]
    return value


def _decoded(value: Any) -> Any:
    if isinstance(value, dict):
        if len(value) == 1 and value.get(UNKNOWN_SIG) is True:
            return UNKNOWN
        return {k: _decoded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_decoded(v) for v in value]
    return value


def _resource_to_dict(planned: PlannedResource, seal: Sealing) -> dict[str, Any]:
    out: dict[str, Any] = {"urn": planned.urn, "ops": [op.value for op in planned.ops]}
    if planned.inputs is not None:
        state = ResourceState(
            urn=planned.urn,
            type="",
            inputs=_encoded(planned.inputs),
            secret_paths=planned.secret_paths,
        )
        out["inputs"] = seal(state).inputs
        out["secretPaths"] = list(planned.secret_paths)
    return out


def _resource_from_dict(item: Any, index: int, unseal: Sealing) -> PlannedResource:
    where = f"resources[{index}]"
    if not isinstance(item, Mapping) or not isinstance(item.get("urn"), str):
        raise _Invalid(f"its {where} must be an object with a 'urn'")
    ops = item.get("ops")
    if not isinstance(ops, list) or not ops:
        raise _Invalid(f"its {where}.ops must be a list of operations")
    try:
        parsed = tuple(Op(op) for op in ops)
    except ValueError:
        raise _Invalid(f"its {where}.ops holds an unknown operation: {ops}") from None
    inputs = item.get("inputs")
    paths = item.get("secretPaths", [])
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
        raise _Invalid(f"its {where}.secretPaths must be a list of field paths")
    if inputs is None:
        return PlannedResource(item["urn"], parsed)
    if not isinstance(inputs, dict):
        raise _Invalid(f"its {where}.inputs must be an object")
    state = ResourceState(urn=item["urn"], type="", inputs=inputs, secret_paths=tuple(paths))
    opened = unseal(state).inputs
    return PlannedResource(item["urn"], parsed, _decoded(opened), tuple(paths))


def parse(document: Any, *, project: str, stack: str, unseal: Sealing) -> SavedPlan:
    """The plan a document holds, for stack `stack` of project `project`; raises `_Invalid`."""
    if not isinstance(document, Mapping) or MARK not in document:
        raise _Invalid("it is not a plan written by `stackwright preview --save-plan`")
    version = document[MARK]
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise _Invalid(f"its {MARK!r} must be a format number, got {version!r}")
    if version > FORMAT:
        raise _Invalid(
            f"it has format {version}, newer than this Stackwright reads ({FORMAT}): "
            "upgrade Stackwright, or make the plan with this one"
        )
    for key, expected in (("project", project), ("stack", stack)):
        if document.get(key) != expected:
            raise _Invalid(
                f"it was made for {key} {document.get(key)!r}, not {expected!r}: apply it "
                f"there, or preview this {key} with --save-plan"
            )
    version_of_state = document.get("stateVersion")
    if not isinstance(version_of_state, int) or isinstance(version_of_state, bool):
        raise _Invalid("its 'stateVersion' must be a number")
    given = document.get("options", {})
    options = PlanOptions.from_dict(given)
    force = given.get("forceConflicts", False)
    if not isinstance(force, bool):
        raise _Invalid("its options.forceConflicts must be true or false")
    packs = given.get("policyPacks", {})
    if not isinstance(packs, dict) or not all(isinstance(v, str) for v in packs.values()):
        raise _Invalid("its options.policyPacks must map each pack's name to its level")
    resources = document.get("resources")
    if not isinstance(resources, list):
        raise _Invalid("its 'resources' must be a list")
    planned = [_resource_from_dict(item, i, unseal) for i, item in enumerate(resources)]
    return SavedPlan(
        project,
        stack,
        version_of_state,
        options,
        {item.urn: item for item in planned},
        force_conflicts=force,
        policy_packs=packs,
    )


def read(path: Path, *, project: str, stack: str, unseal: Sealing) -> SavedPlan:
    """The plan saved in `path`; UsageError on one line when there is none to apply."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(
            f"--plan {path}: no such file; make one with `stackwright preview --save-plan {path}`"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"--plan {path}: cannot read it: {exc}") from None
    try:
        document = json.loads(text)
    except ValueError as exc:
        raise UsageError(
            f"--plan {path} is not a plan written by `stackwright preview --save-plan` "
            f"(not JSON: {exc})"
        ) from None
    try:
        return parse(document, project=project, stack=stack, unseal=unseal)
    except _Invalid as invalid:
        raise UsageError(f"--plan {path} cannot be applied: {invalid}") from None


def write(path: Path, plan: SavedPlan, *, seal: Sealing) -> None:
    """Write the plan to `path` (replacing a file there); UsageError when it cannot."""
    text = json.dumps(plan.to_document(seal), indent=2, sort_keys=False) + "\n"
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"--save-plan {path}: cannot write it: {exc.strerror or exc}") from None
