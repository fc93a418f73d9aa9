"""Policy as code: rules in plain Python, checked before anything reaches a cluster.

    from stackwright.policy import PolicyPack, Violation, policy

    @policy("team-label", description="Workloads name their team", kinds=["Deployment"],
            severity="low", config={"label": "team"})
    def team_label(subject):
        if subject.config["label"] not in subject.labels:
            yield Violation(f"{subject.display} has no team label", "metadata.labels")

    pack = PolicyPack("acme", [team_label], level="mandatory")

`evaluate(subjects, packs, settings)` runs packs over objects and returns a `Report`;
`select_packs` finds built-in packs by name and a team's packs in a directory;
`Settings.from_config` reads a stack's `policy:` configuration; `to_sarif` writes a
report for code-review tools (`sarif_failure`: a check that could not run). The engine calls this before any API call (preview,
up); `stackwright policy check` calls it on files.

Policies, packs, subjects, evaluating, loading packs and SARIF are imported on first use
(`stackwright.lazy`): every `preview` and `up` reads a stack's policy settings (`Settings`,
`Level`), and one with no pack needs no more.

Must never: import anything of Stackwright but `model`, `errors` and `lazy`, or do I/O
beyond loading the pack modules it is pointed at.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from stackwright.lazy import lazy_exports
from stackwright.model import CLUSTER_SCOPED
from stackwright.policy._levels import Level, Severity
from stackwright.policy._settings import Exemption, Settings
from stackwright.policy.packs import BUILT_IN as BUILT_IN_PACKS

if TYPE_CHECKING:
    from stackwright.policy._core import (
        POD_KINDS,
        Policy,
        PolicyPack,
        StackSubject,
        Subject,
        Violation,
        is_unknown,
        items,
        mapping,
        policy,
        stack_policy,
    )
    from stackwright.policy._evaluate import (
        EXEMPT_ANNOTATION,
        REASON_ANNOTATION,
        Enabled,
        ExemptionInForce,
        Finding,
        Report,
        evaluate,
    )
    from stackwright.policy._load import load_directory, select_packs
    from stackwright.policy._sarif import sarif_failure, to_sarif

__all__ = [
    "BUILT_IN_PACKS",
    "CLUSTER_SCOPED",
    "EXEMPT_ANNOTATION",
    "POD_KINDS",
    "REASON_ANNOTATION",
    "Enabled",
    "Exemption",
    "ExemptionInForce",
    "Finding",
    "Level",
    "Policy",
    "PolicyPack",
    "Report",
    "Settings",
    "Severity",
    "StackSubject",
    "Subject",
    "Violation",
    "evaluate",
    "is_unknown",
    "items",
    "load_directory",
    "mapping",
    "policy",
    "sarif_failure",
    "select_packs",
    "stack_policy",
    "to_sarif",
]

_CORE, _EVALUATE, _LOAD, _SARIF = (
    "stackwright.policy._core",
    "stackwright.policy._evaluate",
    "stackwright.policy._load",
    "stackwright.policy._sarif",
)
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        **dict.fromkeys(
            (
                "POD_KINDS",
                "Policy",
                "PolicyPack",
                "StackSubject",
                "Subject",
                "Violation",
                "is_unknown",
                "items",
                "mapping",
                "policy",
                "stack_policy",
            ),
            _CORE,
        ),
        "EXEMPT_ANNOTATION": _EVALUATE,
        "REASON_ANNOTATION": _EVALUATE,
        "Enabled": _EVALUATE,
        "ExemptionInForce": _EVALUATE,
        "Finding": _EVALUATE,
        "Report": _EVALUATE,
        "evaluate": _EVALUATE,
        "load_directory": _LOAD,
        "select_packs": _LOAD,
        "sarif_failure": _SARIF,
        "to_sarif": _SARIF,
    },
)
