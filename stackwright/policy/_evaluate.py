"""Running policy packs over objects: `evaluate(subjects, packs, settings) -> Report`.

Levels resolve as: `--level` for the run (mandatory / advisory; never re-enables a
disabled policy) > the stack's level for the policy > the stack's level for the pack
> the policy's own level > the pack's own level. A violation whose field path runs
through a value not known yet (a preview's unknown Output) is dropped: an unknown
value must never fail a policy. A policy that raises is a policy error naming the
policy and the object, and blocks like a mandatory violation. A Patch resource is
judged only by the policies declared with `patches=True`.

Must never: report a policy error as a pass, or do I/O.
"""

from __future__ import annotations

import datetime
import difflib
import fnmatch
import os
import traceback
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from stackwright.errors import UsageError, redact, shown_path
from stackwright.model import CLUSTER_SCOPED
from stackwright.policy._core import (
    Policy,
    PolicyPack,
    StackSubject,
    Subject,
    Violation,
    touches_unknown,
)
from stackwright.policy._levels import Level, Severity
from stackwright.policy._settings import Exemption, Settings
from stackwright.policy.packs import BUILT_IN, built_in

EXEMPT_ANNOTATION = "policy.stackwright.io/exempt"
REASON_ANNOTATION = "policy.stackwright.io/reason"


@dataclass(frozen=True)
class Finding:
    """One violation (or policy error) as the report shows it."""

    pack: str
    policy: Policy
    level: Level  # MANDATORY or ADVISORY: the level it was enforced at
    message: str
    path: str = ""
    resource: Subject | None = None  # None: about the stack (or the checked set) as a whole
    error: bool = False  # the policy raised instead of deciding

    @property
    def blocking(self) -> bool:
        return self.error or self.level is Level.MANDATORY

    @property
    def severity(self) -> Severity:
        return self.policy.severity

    def to_dict(self) -> dict[str, Any]:
        resource = self.resource
        return {
            "pack": self.pack,
            "policy": self.policy.name,
            "id": self.policy.id,
            "level": self.level.value,
            "severity": self.policy.severity.value,
            "message": self.message,
            "path": self.path,
            "error": self.error,
            "urn": resource.urn if resource else "",
            "kind": resource.kind if resource else "",
            "patch": resource.patch if resource else False,
            "name": resource.name if resource else "",
            "namespace": resource.namespace if resource else "",
            "source": shown_path(resource.source) if resource else "",
            "line": resource.line if resource else 0,
        }


@dataclass(frozen=True)
class ExemptionInForce:
    """An exemption in force in this run: where it came from, why, and how many objects it
    exempted (a config entry whose pattern matched none of the objects a policy checked is
    listed with 0, so a misspelt pattern does not look like a working one)."""

    policy: str  # the name or ID as the exemption wrote it
    resource: str  # the object (display form), or the entry's resource pattern
    reason: str
    via: str  # "annotation" or "config"
    owner: str = ""
    expires: str = ""
    objects: int = 1

    def to_dict(self) -> dict[str, str]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class Enabled:
    """A policy that ran, at the level it ran at, with its configuration."""

    pack: str
    policy: Policy
    level: Level
    config: Mapping[str, Any]


@dataclass
class Report:
    findings: list[Finding] = field(default_factory=list)
    exemptions: list[ExemptionInForce] = field(default_factory=list)
    enabled: list[Enabled] = field(default_factory=list)
    checked: int = 0  # objects evaluated

    @property
    def blocked(self) -> bool:
        """Whether a mandatory policy failed or a policy raised."""
        return any(f.blocking for f in self.findings)

    @property
    def blocking(self) -> list[Finding]:
        return [f for f in self.findings if f.blocking]

    def to_dict(self) -> dict[str, Any]:
        return {
            "checked": self.checked,
            "blocked": self.blocked,
            "packs": sorted({e.pack for e in self.enabled}),
            "findings": [f.to_dict() for f in self.findings],
            "exemptions": [e.to_dict() for e in self.exemptions],
        }


def _level_of(pack: PolicyPack, rule: Policy, settings: Settings, override: Level | None) -> Level:
    level = next((settings.levels[n] for n in (rule.id, rule.name) if n in settings.levels), None)
    if level is None:
        level = settings.packs.get(pack.name)
    if level is None:
        level = rule.level or pack.level
    if level is Level.DISABLED or override is None:
        return level
    return override


def _check_named(packs: list[PolicyPack], settings: Settings) -> None:
    """Every policy `policy:policies` names must exist: a misspelt name would leave the
    policy at its pack's level (advisory where it was meant to block)."""
    named = {*settings.levels, *settings.config}
    known = {name for pack in packs for rule in pack.policies for name in rule.names()}
    if named - known:  # perhaps of a built-in pack this run does not use
        others = [p for p in map(built_in, sorted(BUILT_IN)) if p is not None]
        known |= {name for pack in others for rule in pack.policies for name in rule.names()}
    for name in sorted(named - known):
        close = difflib.get_close_matches(name, sorted(known), n=1)
        hint = f"did you mean {close[0]}?" if close else "see `stackwright policy check --help`"
        raise UsageError(f"policy:policies names {name!r}, which no policy pack in use has: {hint}")
    # A misspelt setting would leave the policy at its default (`maxx: 5` under a `max` of 1):
    # a policy's settings are the keys of its declared default configuration.
    rules = {name: rule for pack in packs for rule in pack.policies for name in rule.names()}
    for name, given in settings.config.items():
        rule = rules.get(name)
        if rule is None:
            continue  # of a built-in pack this run does not use
        for key in sorted(set(given) - set(rule.config)):
            if not rule.config:
                raise UsageError(
                    f"policy:policies {name}: {key!r} is not a setting of {rule.label}, which "
                    "takes none (a pack's author declares settings with config= of @policy)"
                )
            close = difflib.get_close_matches(key, sorted(rule.config), n=1)
            hint = (
                f"did you mean {close[0]}?" if close else f"its settings: {', '.join(rule.config)}"
            )
            raise UsageError(
                f"policy:policies {name}: {key!r} is not a setting of {rule.label}: {hint}"
            )


def _config_of(rule: Policy, settings: Settings) -> dict[str, Any]:
    config = dict(rule.config)
    for name in (rule.id, rule.name):
        config.update(settings.config.get(name, {}))
    return config


def _matches(entry: Exemption, subject: Subject) -> bool:
    """Whether the entry's pattern names the subject: its URN, or `Kind/name`,
    `Kind/namespace/name` with its object's kind or the kind reports name it by (a Patch's,
    `DeploymentPatch/shop/web`, as the finding to exempt says it)."""
    if not entry.resource:
        return True
    candidates = (
        subject.urn,
        *(
            f"{kind}/{place}"
            for kind in (subject.kind, subject.shown_kind)
            for place in (subject.name, f"{subject.namespace}/{subject.name}")
        ),
    )
    return any(c and fnmatch.fnmatchcase(c, entry.resource) for c in candidates)


def _whole_stack(entry: Exemption) -> bool:
    """Whether the entry exempts a stack policy's finding about no one object."""
    return entry.resource in ("", "*")


def _violations(result: Iterable[Violation] | Violation | None) -> list[Violation]:
    if result is None:
        return []
    if isinstance(result, Violation):
        return [result]
    out = list(result)
    for item in out:
        if not isinstance(item, Violation):
            raise TypeError(f"returned {item!r} where a Violation (or nothing) was expected")
    return out


def _error_text(exc: BaseException) -> str:
    text = str(exc).strip()
    first = text.splitlines()[0] if text else ""
    said = f"{type(exc).__name__}: {first}" if first else type(exc).__name__
    return f"{said} at {where}" if (where := _raised_at(exc)) else said


#: Stackwright's own code: a team's policy failing inside a helper it called (`containers()`)
#: is reported at the policy's own line.
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _raised_at(exc: BaseException) -> str:
    """The line of the policy that raised (file:line), as a traceback's last frame would
    show it: the innermost frame outside Stackwright, or the innermost (a built-in pack)."""
    frames = traceback.extract_tb(exc.__traceback__)
    theirs = [f for f in frames if not os.path.abspath(f.filename).startswith(_PACKAGE)]
    chosen = theirs or frames[-1:]
    return f"{shown_path(chosen[-1].filename)}:{chosen[-1].lineno}" if chosen else ""


class _Evaluation:
    def __init__(
        self,
        packs: Iterable[PolicyPack],
        settings: Settings,
        override: Level | None,
        today: datetime.date,
    ) -> None:
        packs = list(packs)
        self.settings = settings
        self.today = today
        self.report = Report()
        self.by_kind: dict[str, list[Enabled]] = {}
        self.every_kind: list[Enabled] = []
        self.stack_rules: list[Enabled] = []
        self.names: dict[str, Enabled] = {}
        for pack in packs:
            for rule in pack.policies:
                level = _level_of(pack, rule, settings, override)
                if level is Level.DISABLED:
                    continue
                enabled = Enabled(pack.name, rule, level, _config_of(rule, settings))
                self.report.enabled.append(enabled)
                for name in rule.names():
                    self.names[name] = enabled
        _check_named(packs, settings)
        for enabled in self.report.enabled:
            if enabled.policy.stack:
                self.stack_rules.append(enabled)
            elif not enabled.policy.kinds:
                self.every_kind.append(enabled)
        # An index per kind keeps the declared order of the packs and policies.
        kinds = {k for e in self.report.enabled for k in e.policy.kinds}
        for kind in kinds:
            self.by_kind[kind] = [
                e
                for e in self.report.enabled
                if not e.policy.stack and (not e.policy.kinds or kind in e.policy.kinds)
            ]
        self.active: list[Exemption] = []
        self.listed: list[int] = []  # where each active entry sits in report.exemptions
        self.used: list[int] = []  # how many objects each active entry exempted
        self.annotated: dict[int, frozenset[str]] = {}
        for entry in settings.exemptions:
            enabled_ = self.names.get(entry.policy)
            if enabled_ is None:
                continue  # an exemption from a policy not run here has nothing to do
            if entry.expires < today:
                self.report.findings.append(
                    Finding(
                        enabled_.pack,
                        enabled_.policy,
                        enabled_.level,
                        f"the exemption from {enabled_.policy.label} for "
                        f"{entry.resource or 'every resource'} (owner {entry.owner}) expired on "
                        f"{entry.expires.isoformat()}: fix the resource, or renew the exemption "
                        "in policy:exemptions",
                    )
                )
            else:
                self.active.append(entry)
                self.listed.append(len(self.report.exemptions))
                self.used.append(0)
                self.report.exemptions.append(
                    ExemptionInForce(
                        entry.policy,
                        entry.resource or "*",
                        entry.reason,
                        "config",
                        entry.owner,
                        entry.expires.isoformat(),
                    )
                )

    def exempt_by_annotation(self, subject: Subject) -> frozenset[str]:
        """The policy names the object's annotation exempts it from (with a reason)."""
        annotations = subject.annotations
        listed = annotations.get(EXEMPT_ANNOTATION)
        if not listed or not isinstance(listed, str):
            return frozenset()
        names = [n.strip() for n in listed.split(",") if n.strip()]
        reason = annotations.get(REASON_ANNOTATION)
        if not isinstance(reason, str) or not reason.strip():
            for name in names:
                enabled = self.names.get(name)
                if enabled is not None:
                    self.add(
                        enabled,
                        Violation(
                            f"{subject.display} is exempted from {enabled.policy.label} by the "
                            f"{EXEMPT_ANNOTATION} annotation without a reason: add the "
                            f"{REASON_ANNOTATION} annotation saying why",
                            f"metadata.annotations.{REASON_ANNOTATION}",
                        ),
                        subject,
                    )
            return frozenset()
        exempt: set[str] = set()
        for name in names:
            enabled = self.names.get(name)
            if enabled is None:
                continue
            exempt |= enabled.policy.names()
            self.report.exemptions.append(
                ExemptionInForce(name, subject.display, reason.strip(), "annotation")
            )
        return frozenset(exempt)

    def exempt(
        self, enabled: Enabled, subject: Subject, annotated: frozenset[str], *, count: bool = True
    ) -> bool:
        names = enabled.policy.names()
        by_entry = self._entry_exempts(names, lambda entry: _matches(entry, subject), count)
        return by_entry or bool(names & annotated)

    def _entry_exempts(
        self, names: frozenset[str], matches: Callable[[Exemption], bool], count: bool = True
    ) -> bool:
        """Whether an active config entry for one of `names` matches; with `count`, each
        that does counts it, not only the first: an entry whose objects another entry (or
        an annotation) exempts too is not one that matches nothing."""
        matched = False
        for index, entry in enumerate(self.active):
            if entry.policy in names and matches(entry):
                self.used[index] += int(count)
                matched = True
        return matched

    def _count_covered(self, names: frozenset[str], subjects: list[Subject]) -> None:
        """A stack policy's entries count the objects they cover, whether or not the policy
        finds anything (an entry for a policy that passes today matches objects all the
        same); a whole-stack entry covers them all."""
        for index, entry in enumerate(self.active):
            if entry.policy in names:
                whole = _whole_stack(entry)
                self.used[index] += sum(1 for s in subjects if whole or _matches(entry, s))

    def count_objects(self) -> None:
        """Write into the report how many objects each config entry exempted."""
        for at, used in zip(self.listed, self.used, strict=True):
            self.report.exemptions[at] = replace(self.report.exemptions[at], objects=used)

    def add(self, enabled: Enabled, violation: Violation, subject: Subject | None) -> None:
        if subject is not None and touches_unknown(subject.object, violation.path):
            return
        self.report.findings.append(
            Finding(
                enabled.pack,
                enabled.policy,
                enabled.level,
                redact(violation.message),  # a team's policy may quote a secret value
                violation.path,
                subject,
            )
        )

    def error(self, enabled: Enabled, exc: Exception, subject: Subject | None) -> None:
        on = f" on {subject.display}" if subject is not None else ""
        self.report.findings.append(
            Finding(
                enabled.pack,
                enabled.policy,
                enabled.level,
                f"policy {enabled.policy.label} failed{on}: {redact(_error_text(exc))}; "
                "this is not a pass: fix the policy",
                "",
                subject,
                error=True,
            )
        )

    def run(
        self, enabled: Enabled, argument: Subject | StackSubject, about: Subject | None
    ) -> list[Violation]:
        """The policy's violations; none, and a policy error reported, when it raises."""
        try:
            return _violations(enabled.policy.check(argument))
        except Exception as exc:  # a broken policy is reported, never a pass
            self.error(enabled, exc, about)
            return []

    def resource(self, subject: Subject) -> None:
        annotated = self.exempt_by_annotation(subject)
        if annotated:
            self.annotated[id(subject)] = annotated
        rules = self.by_kind.get(subject.kind, self.every_kind)
        for enabled in rules:
            if subject.patch and not enabled.policy.patches:
                continue  # it would fail the Patch for a field the object's owner sets
            if (annotated or self.active) and self.exempt(enabled, subject, annotated):
                continue
            subject.config = enabled.config
            for violation in self.run(enabled, subject, subject):
                self.add(enabled, violation, subject)

    def stack(self, subjects: list[Subject], stack: str) -> None:
        objects = [s for s in subjects if not s.patch]
        for enabled in self.stack_rules:
            names = enabled.policy.names()
            seen = subjects if enabled.policy.patches else objects
            self._count_covered(names, seen)
            whole = StackSubject(stack, self.settings.tags, seen, enabled.config)
            for violation in self.run(enabled, whole, None):
                about = violation.resource
                if about is None:
                    exempted = self._entry_exempts(names, _whole_stack, count=False)
                else:
                    annotated = self.annotated.get(id(about), frozenset())
                    exempted = self.exempt(enabled, about, annotated, count=False)
                if not exempted:
                    self.add(enabled, violation, about)


def evaluate(
    subjects: Iterable[Subject],
    packs: Iterable[PolicyPack],
    settings: Settings | None = None,
    *,
    stack: str = "",
    level: Level | None = None,
    today: datetime.date | None = None,
) -> Report:
    """Run every enabled policy of `packs` over `subjects` (then the stack policies over all
    of them) and report the violations, policy errors and exemptions in force.

    `level` (mandatory or advisory) overrides the level of every enabled policy; `today`
    (default: the local date) decides which exemptions have expired.
    """
    settings = settings or Settings()
    if level is Level.DISABLED:
        raise ValueError("--level overrides with mandatory or advisory, not disabled")
    run = _Evaluation(packs, settings, level, today or datetime.date.today())
    chosen = list(subjects)
    tags = dict(settings.tags)
    for subject in chosen:
        subject.stack = stack
        subject.tags = tags
        if not subject.namespace and subject.kind not in CLUSTER_SCOPED:
            subject.namespace = settings.default_namespace
        run.resource(subject)
    if run.stack_rules:
        run.stack(chosen, stack)
    run.report.checked = len(chosen)
    run.count_objects()
    return run.report
