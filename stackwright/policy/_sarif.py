"""A report as SARIF 2.1.0, the format code-review tools annotate pull requests from.

Rules (`tool.driver.rules`) are the policies that ran, with their ID, description,
rationale, fix and level; results point at the file and line of the object when it
came from a file, and name the object and the offending field.

Must never: emit a result whose ruleIndex does not match its ruleId.
"""

from __future__ import annotations

from typing import Any

from stackwright.errors import PolicyViolation, shown_path
from stackwright.policy._core import Policy
from stackwright.policy._evaluate import Report
from stackwright.policy._levels import Level
from stackwright.version import VERSION

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://github.com/stackwright/stackwright#policy"


def _level(level: Level, error: bool = False) -> str:
    return "error" if error or level is Level.MANDATORY else "warning"


def _rule_id(rule: Policy) -> str:
    return rule.id or rule.name


def _rule(pack: str, rule: Policy, level: Level) -> dict[str, Any]:
    help_text = (
        f"{rule.description}. Why: {rule.rationale or 'see the pack'}. Fix: {rule.fix or '-'}."
    )
    references = "; ".join(f"{tool}: {check}" for tool, check in rule.references.items())
    if references:
        help_text += f" Equivalent checks: {references}."
    return {
        "id": _rule_id(rule),
        "name": rule.name,
        "shortDescription": {"text": rule.description},
        "fullDescription": {"text": rule.rationale or rule.description},
        "help": {"text": help_text},
        "defaultConfiguration": {"level": _level(level)},
        "properties": {
            "pack": pack,
            "severity": rule.severity.value,
            "enforcement": level.value,
            "references": dict(rule.references),
            "patches": rule.patches,  # whether it judges Patch resources too
        },
    }


def to_sarif(report: Report, *, version: str = VERSION) -> dict[str, Any]:
    """The report as a SARIF 2.1.0 log (a dict ready for `json.dumps`)."""
    rules: list[dict[str, Any]] = []
    index: dict[str, int] = {}
    for enabled in report.enabled:
        rule_id = _rule_id(enabled.policy)
        if rule_id not in index:
            index[rule_id] = len(rules)
            rules.append(_rule(enabled.pack, enabled.policy, enabled.level))
    results = []
    for finding in report.findings:
        rule_id = _rule_id(finding.policy)
        result: dict[str, Any] = {
            "ruleId": rule_id,
            "ruleIndex": index[rule_id],
            "level": _level(finding.level, finding.error),
            "message": {"text": finding.message},
            "properties": {
                "pack": finding.pack,
                "severity": finding.policy.severity.value,
                "enforcement": finding.level.value,
                "fieldPath": finding.path,
                "policyError": finding.error,
            },
        }
        resource = finding.resource
        if resource is not None:
            location: dict[str, Any] = {
                "logicalLocations": [
                    {"fullyQualifiedName": resource.urn or resource.display, "kind": "resource"}
                ]
            }
            if resource.source:
                physical: dict[str, Any] = {
                    "artifactLocation": {"uri": shown_path(resource.source)}
                }
                if resource.line > 0:
                    physical["region"] = {"startLine": resource.line}
                location["physicalLocation"] = physical
            result["locations"] = [location]
        results.append(result)
    run = _run(version, rules, results)
    # The check ran to its end (a blocking finding is a result, not a failed run), with the
    # exit code the command ends with: what a reader of the log alone needs to tell them apart.
    run["invocations"] = [
        {
            "executionSuccessful": True,
            "exitCode": PolicyViolation.exit_code if report.blocked else 0,
        }
    ]
    run["properties"] = {"exemptions": [e.to_dict() for e in report.exemptions]}
    return _log(run)


def sarif_failure(message: str, exit_code: int, *, version: str = VERSION) -> dict[str, Any]:
    """A SARIF 2.1.0 log for a check that could not run (bad input): no result, and an
    invocation that failed with `message`. A CI job that uploads what `--format sarif`
    printed gets a valid log saying why, not an empty file the upload rejects."""
    run = _run(version, [], [])
    run["invocations"] = [
        {
            "executionSuccessful": False,
            "exitCode": exit_code,
            "toolExecutionNotifications": [{"level": "error", "message": {"text": message}}],
        }
    ]
    return _log(run)


def _run(version: str, rules: list[dict[str, Any]], results: list[Any]) -> dict[str, Any]:
    driver = {
        "name": "stackwright",
        "informationUri": INFORMATION_URI,
        "version": version,
        "rules": rules,
    }
    return {"tool": {"driver": driver}, "results": results}


def _log(run: dict[str, Any]) -> dict[str, Any]:
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}
