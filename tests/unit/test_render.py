"""How the CLI shows engine events: golden plain text, JSON lines, the live display.

Steps are built by hand from `ResourceState`s, fed to a renderer as the engine
would, and the output compared with the exact text a user sees. Secrets must
never reach any of the three outputs.
"""

from __future__ import annotations

import io
import json
import re
from typing import Any

import pytest
from rich.console import Console

from stackwright.cli import render
from stackwright.cli.render import OP_DISPLAY, make_renderer
from stackwright.engine.events import (
    Diagnostic,
    Drift,
    DriftedField,
    Event,
    Log,
    StepDone,
    StepProgress,
    StepSkipped,
    StepStarted,
    Summary,
    event_json,
    expecting_no_changes,
    safe_event,
)
from stackwright.engine.plan import _ABSENT, FieldChange, Step, diff
from stackwright.errors import remember_secret
from stackwright.model import Op, ResourceState, make_urn
from stackwright.sdk.output import UNKNOWN

CM = "kubernetes:core/v1:ConfigMap"
SECRET = "kubernetes:core/v1:Secret"
DEPLOY = "kubernetes:apps/v1:Deployment"
SVC = "kubernetes:core/v1:Service"
COMPONENT = "acme:web:App"
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


class Clock:
    """Seconds the test moves by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def state(type_: str, name: str, **kw: Any) -> ResourceState:
    parent_types = kw.pop("parent_types", ())
    return ResourceState(urn=make_urn("dev", "shop", type_, name, parent_types), type=type_, **kw)


def step(op: Op, type_: str, name: str, *changes: FieldChange, **kw: Any) -> Step:
    reasons = kw.pop("reasons", ())
    res = state(type_, name, **kw)
    old = None if op is Op.CREATE else res
    new = None if op is Op.DELETE else res
    return Step(op, res.urn, old, new, changes, reasons)


def run(
    kind: str, events: list[Event], *, show_diff: bool = False, clock: Clock | None = None
) -> str:
    out = io.StringIO()
    renderer = make_renderer(
        kind, json_lines=False, show_diff=show_diff, stream=out, live=False, clock=clock or Clock()
    )
    for event in events:
        renderer(event)
    renderer.close()
    return out.getvalue()


CREATE = step(Op.CREATE, CM, "app-config")
UPDATE = step(Op.UPDATE, DEPLOY, "api")
REPLACE = step(
    Op.REPLACE, DEPLOY, "web", reasons=("spec.selector: a Deployment's selector is immutable",)
)
DELETE = step(Op.DELETE, SECRET, "old")
SAME = step(Op.SAME, CM, "unchanged")
BLOCKED = step(Op.CREATE, DEPLOY, "db")
FAILURE = "web: 0/3 ready — pod web-x: ImagePullBackOff (image nginx:nope not found)"


def test_progress_of_a_name_two_resources_share_names_its_type() -> None:
    """The template's Deployment and Service are both `web`: which one has "no ready
    endpoints" must be said, as their end lines say it."""
    service, deployment = step(Op.CREATE, SVC, "web"), step(Op.CREATE, DEPLOY, "web")
    text = run(
        "up",
        [
            StepStarted(CREATE),
            StepProgress(CREATE.urn, "ready"),
            StepStarted(service),
            StepStarted(deployment),
            StepProgress(service.urn, "no ready endpoints — no Pod matches selector app=web"),
            StepProgress(deployment.urn, "0/2 ready"),
            StepDone(deployment, True, 0.25),
            StepDone(service, True, 0.27),
            StepDone(CREATE, True, 0.3),
        ],
    )
    lines = text.splitlines()
    assert lines[1] == "  app-config: ready"  # a name no other resource has: as it was
    assert lines[4:] == [
        "  kubernetes:core/v1:Service  web: no ready endpoints — no Pod matches selector app=web",
        "  kubernetes:apps/v1:Deployment  web: 0/2 ready",
        # the same column as every other end line: the `+` leads only the start lines
        "  created  kubernetes:apps/v1:Deployment  web (0.25s)",
        "  created  kubernetes:core/v1:Service  web (0.27s)",
        "  created  app-config (0.30s)",
    ]


def test_up_prints_a_line_per_start_and_end_and_hides_unchanged() -> None:
    clock = Clock()
    out = io.StringIO()
    renderer = make_renderer(
        "up", json_lines=False, show_diff=False, stream=out, live=False, clock=clock
    )
    # A number moves the clock before the events that follow it.
    script: tuple[Event | float, ...] = (
        StepStarted(SAME),
        StepDone(SAME, True, 0.0),
        StepStarted(CREATE),
        StepStarted(UPDATE),
        StepStarted(REPLACE),
        StepStarted(DELETE),
        StepDone(CREATE, True, 0.05),
        StepProgress(REPLACE.urn, "0/3 ready"),
        101.5,
        StepProgress(REPLACE.urn, "0/3 ready"),  # unchanged: not repeated
        StepProgress(REPLACE.urn, "1/3 ready"),
        102.0,
        StepProgress(REPLACE.urn, "2/3 ready"),  # changed, but within a second of the last line
        103.0,
        StepProgress(REPLACE.urn, "0/3 ready — pod web-x: ImagePullBackOff"),
        StepDone(UPDATE, True, 1.5),
        StepDone(DELETE, True, 0.2),
        StepDone(REPLACE, False, 3.25, FAILURE),
        StepSkipped(BLOCKED, "a dependency failed", REPLACE.urn),
        Summary(
            "up",
            ok=False,
            counts={"create": 1, "update": 1, "delete": 1, "same": 3, "replace": 0, "skipped": 1},
            outputs={"service_ip": "10.96.0.12"},
            elapsed=2.46,
            failures=[FAILURE],
            not_done=[f"+ create  {DEPLOY}  db"],
        ),
    )
    for item in script:
        if isinstance(item, float):
            clock.now = item
        else:
            renderer(item)
    renderer.close()
    renderer.close()  # idempotent
    assert out.getvalue() == (
        "+ create  kubernetes:core/v1:ConfigMap  app-config\n"
        "~ update  kubernetes:apps/v1:Deployment  api\n"
        "+- replace  kubernetes:apps/v1:Deployment  web (spec.selector: a Deployment's selector is immutable)\n"
        "- delete  kubernetes:core/v1:Secret  old\n"
        "  created  app-config (0.05s)\n"
        "  web: 0/3 ready\n"
        "  web: 1/3 ready\n"
        "  web: 0/3 ready — pod web-x: ImagePullBackOff\n"
        "  updated  api (1.50s)\n"
        "  deleted  old (0.20s)\n"
        "! failed  web: 0/3 ready — pod web-x: ImagePullBackOff (image nginx:nope not found)\n"
        "  skipped  + create  kubernetes:apps/v1:Deployment  db (a dependency failed)\n"
        "\n"
        "Resources:\n"
        "    + 1 created\n"
        "    ~ 1 updated\n"
        "    - 1 deleted\n"
        "    3 unchanged\n"
        "    1 skipped\n"
        "    ! 1 failed\n"
        "Duration: 2.5s\n"
        "Outputs:\n"
        '    service_ip: "10.96.0.12"\n'
        "Failures:\n"
        "    web: 0/3 ready — pod web-x: ImagePullBackOff (image nginx:nope not found)\n"
        "Not done:\n"
        "    + create  kubernetes:apps/v1:Deployment  db\n"
    )


def test_preview_marks_a_step_it_did_not_preview_with_its_planned_operation() -> None:
    """A step skipped because its dependency failed is never shown as one that runs: its
    planned operation after `not previewed`, the failed dependency named, and a count."""
    blocked = step(Op.UPDATE, DEPLOY, "web")
    failed = step(Op.UPDATE, CM, "cfg")
    reason = f"{CM} cfg failed or was not done"
    text = run(
        "preview",
        [
            StepStarted(failed),
            StepDone(failed, False, 0.01, "cfg: refused"),
            StepSkipped(blocked, reason, failed.urn),
            Summary(
                "preview",
                False,
                {"same": 1, "skipped": 1},
                failures=["cfg: refused"],
                not_done=[f"{DEPLOY} web: {reason}"],
                dry_run=True,
            ),
        ],
    )
    assert text == (
        "~ update  kubernetes:core/v1:ConfigMap  cfg\n"
        "! failed  cfg: refused\n"
        f"  not previewed  ~ update  kubernetes:apps/v1:Deployment  web ({reason})\n"
        "\n"
        "Resources:\n"
        "    1 unchanged\n"
        "    1 not previewed\n"
        "    ! 1 failed\n"
        "Duration: 0.0s\n"
        "Failures:\n"
        "    cfg: refused\n"
        "Not done:\n"
        f"    kubernetes:apps/v1:Deployment web: {reason}\n"
    )


def test_preview_with_diff_shows_future_verbs_and_each_field_change() -> None:
    create = step(
        Op.CREATE,
        CM,
        "app-config",
        FieldChange("metadata.name", _ABSENT, "app-config"),
        FieldChange("data.long", _ABSENT, "x" * 100),
        FieldChange("data.ip", _ABSENT, UNKNOWN),
    )
    update = step(
        Op.UPDATE,
        DEPLOY,
        "api",
        FieldChange("spec.replicas", 2, 3),
        FieldChange("spec.paused", True, _ABSENT),
        FieldChange("spec.template.spec.containers[0].image", "nginx:1.28", "nginx:1.29"),
        FieldChange("metadata.labels", _ABSENT, {"app": "api", "tier": "web"}),
    )
    text = run(
        "preview",
        [
            StepStarted(create),
            StepStarted(update),
            StepStarted(SAME),
            StepDone(create, True, 0.01),  # a preview's step lines are printed once
            StepDone(update, True, 0.01),
            Summary(
                "preview", True, {"create": 1, "update": 1, "same": 5}, elapsed=0.31, dry_run=True
            ),
        ],
        show_diff=True,
    )
    assert text == (
        "+ create  kubernetes:core/v1:ConfigMap  app-config\n"
        '    + metadata.name: "app-config"\n'
        f'    + data.long: "{"x" * 78}…\n'
        "    + data.ip: (known after apply)\n"
        "~ update  kubernetes:apps/v1:Deployment  api\n"
        "    ~ spec.replicas: 2 → 3\n"
        "    - spec.paused: true\n"
        '    ~ spec.template.spec.containers[0].image: "nginx:1.28" → "nginx:1.29"\n'
        '    + metadata.labels: {"app":"api","tier":"web"}\n'
        "\n"
        "Resources:\n"
        "    + 1 to create\n"
        "    ~ 1 to update\n"
        "    5 unchanged\n"
        "Duration: 0.3s\n"
    )


def test_a_diff_shows_a_list_of_objects_by_item_and_a_text_by_line() -> None:
    """What `kubectl diff` makes readable: an env list that grew, a ConfigMap's file."""
    env = "spec.template.spec.containers[0].env"
    old_env = [
        {"name": "A", "value": "1"},
        {"name": "GONE", "value": "g"},
        {"name": "B", "value": "b"},
    ]
    new_env = [{"name": "A", "value": "2"}, {"name": "NEW", "value": "x"}]
    update = step(
        Op.UPDATE,
        DEPLOY,
        "api",
        FieldChange(env, old_env, new_env),
        FieldChange("data.conf", "line1\nline2\nline3\n", "line1\nline2 changed\nline3\nline4\n"),
        # No key to pair the items by: the list as it is.
        FieldChange("spec.args", ["a"], ["a", "b"]),
    )
    text = run("preview", [StepStarted(update)], show_diff=True)
    assert text == (
        "~ update  kubernetes:apps/v1:Deployment  api\n"
        f'    ~ {env}[name=A].value: "1" → "2"\n'
        f'    - {env}[name=GONE]: {{"name":"GONE","value":"g"}}\n'
        f'    - {env}[name=B]: {{"name":"B","value":"b"}}\n'
        f'    + {env}[name=NEW]: {{"name":"NEW","value":"x"}}\n'
        "    ~ data.conf:\n"
        "        @@ -1,3 +1,4 @@\n"
        "          line1\n"
        "        - line2\n"
        "        + line2 changed\n"
        "          line3\n"
        "        + line4\n"
        '    + spec.args[1]: "b"\n'
    )


ENV = "spec.template.spec.containers[0].env"


def env_step(
    old_env: list[Any], new_env: list[Any], old_secret: str | None, new_secret: str | None
) -> Step:
    """An update of a Deployment's env, the plan's changes computed from its two sides."""
    urn = make_urn("dev", "shop", DEPLOY, "api")

    def side(env: list[Any], secret: str | None) -> ResourceState:
        spec = {"template": {"spec": {"containers": [{"name": "api", "env": env}]}}}
        return ResourceState(
            urn, DEPLOY, inputs={"spec": spec}, secret_paths=(secret,) if secret else ()
        )

    old, new = side(old_env, old_secret), side(new_env, new_secret)
    return Step(Op.UPDATE, urn, old, new, tuple(diff(old.inputs, new.inputs)))


def test_a_secret_entry_of_a_list_that_changed_length_masks_itself_alone() -> None:
    """The entry before the secret one removed: the secret moved from env[1] to env[0],
    where a plain entry was; masked where each side has it, its plain neighbours shown."""
    token = {"name": "TOKEN", "value": "s3cr3t-old"}
    update = env_step(
        [{"name": "A", "value": "1"}, token, {"name": "B", "value": "b"}],
        [{"name": "TOKEN", "value": "s3cr3t-new"}, {"name": "B", "value": "2"}],
        f"{ENV}[1].value",
        f"{ENV}[0].value",
    )
    text = run("preview", [StepStarted(update)], show_diff=True)
    assert text == (
        "~ update  kubernetes:apps/v1:Deployment  api\n"
        f'    - {ENV}[name=A]: {{"name":"A","value":"1"}}\n'
        f"    ~ {ENV}[name=TOKEN].value: [secret] → [secret]\n"
        f'    ~ {ENV}[name=B].value: "b" → "2"\n'
    )
    # `--json`'s changes are the plan's: one change at the list, masked as before.
    (change,) = event_json(StepStarted(update))["changes"]
    assert change["path"] == ENV and "s3cr3t" not in json.dumps(change)


def test_a_keyed_list_whose_entries_shifted_is_told_by_entry_not_as_renames() -> None:
    """One entry removed and one added, the length the same: the plan's per-index changes
    would read `env[0].name: "A" → "TOKEN"` and mask B where the secret was."""
    update = env_step(
        [
            {"name": "A", "value": "1"},
            {"name": "TOKEN", "value": "s3cr3t"},
            {"name": "B", "value": "b"},
        ],
        [
            {"name": "TOKEN", "value": "s3cr3t"},
            {"name": "B", "value": "b"},
            {"name": "D", "value": "d"},
        ],
        f"{ENV}[1].value",
        f"{ENV}[0].value",
    )
    assert [c.path for c in update.changes][:2] == [f"{ENV}[0].name", f"{ENV}[0].value"]
    text = run("preview", [StepStarted(update)], show_diff=True)
    assert text == (
        "~ update  kubernetes:apps/v1:Deployment  api\n"
        f'    - {ENV}[name=A]: {{"name":"A","value":"1"}}\n'
        f'    + {ENV}[name=D]: {{"name":"D","value":"d"}}\n'
    )


def test_an_added_secret_entry_is_masked_and_a_list_that_is_one_secret_stays_whole() -> None:
    plain = [{"name": "A", "value": "1"}]
    added = env_step(plain, [*plain, {"name": "TOKEN", "value": "s3cr3t"}], None, f"{ENV}[1].value")
    assert run("preview", [StepStarted(added)], show_diff=True).splitlines()[1:] == [
        f'    + {ENV}[name=TOKEN]: {{"name":"TOKEN","value":"[secret]"}}'
    ]
    whole = env_step(plain, [*plain, {"name": "B", "value": "s3cr3t"}], ENV, ENV)
    assert run("preview", [StepStarted(whole)], show_diff=True).splitlines()[1:] == [
        f"    ~ {ENV}: [secret] → [secret]"
    ]


def test_lists_without_a_key_and_mounts_of_one_volume() -> None:
    """Scalars by what stayed equal (as a line diff); volume mounts sharing a volume's
    name paired by their mountPath, the key left that names each once."""
    mounts = "spec.template.spec.containers[0].volumeMounts"
    update = step(
        Op.UPDATE,
        DEPLOY,
        "api",
        FieldChange("spec.args", ["a", "b", "c"], ["a", "c", "d", "e"]),
        FieldChange(
            mounts,
            [{"name": "data", "mountPath": "/a"}],
            [
                {"name": "data", "mountPath": "/a", "readOnly": True},
                {"name": "data", "mountPath": "/b"},
            ],
        ),
    )
    text = run("preview", [StepStarted(update)], show_diff=True)
    assert text.splitlines()[1:] == [
        '    - spec.args[1]: "b"',
        '    + spec.args[2]: "d"',
        '    + spec.args[3]: "e"',
        f"    + {mounts}[mountPath=/a].readOnly: true",
        f'    + {mounts}[mountPath=/b]: {{"name":"data","mountPath":"/b"}}',
    ]


def test_without_diff_no_field_is_printed() -> None:
    create = step(Op.CREATE, CM, "app-config", FieldChange("data.a", _ABSENT, "b"))
    assert run("preview", [StepStarted(create)]) == (
        "+ create  kubernetes:core/v1:ConfigMap  app-config\n"
    )


def test_refresh_prints_drifted_fields_with_their_manager() -> None:
    web = make_urn("dev", "shop", DEPLOY, "web")
    text = run(
        "refresh",
        [
            Drift(
                web,
                (
                    DriftedField("spec.replicas", 3, 5, "kubectl-edit"),
                    DriftedField("metadata.labels.tier", "web", "frontend"),
                ),
            ),
            Drift(make_urn("dev", "shop", CM, "cfg"), gone=True),
            Diagnostic(web, "the live object has 2 fields set by other managers", "info"),
            Diagnostic("", "the cluster is slow to answer"),
            Summary("refresh", True, {"refresh": 2, "same": 1}, elapsed=75.0),
        ],
    )
    assert text == (
        "~ drifted  kubernetes:apps/v1:Deployment  web\n"
        "    spec.replicas: 3 → 5 (changed by kubectl-edit)\n"
        '    metadata.labels.tier: "web" → "frontend"\n'
        "- gone  kubernetes:core/v1:ConfigMap  cfg (deleted outside Stackwright)\n"
        "info: web: the live object has 2 fields set by other managers\n"
        "warning: the cluster is slow to answer\n"
        "\n"
        "Resources:\n"
        "    ~ 2 refreshed\n"
        "    1 unchanged\n"
        "Duration: 1m15s\n"
    )


def test_a_diagnostic_that_names_its_resource_names_it_once() -> None:
    # A recorded resource whose diff failed: the error says where and which resource.
    cfg = make_urn("dev", "shop", CM, "cfg")
    said = "app.py:4: kubernetes:core/v1:ConfigMap cfg: an apply callback failed: ValueError: no"
    text = run("preview", [Diagnostic(cfg, said, "error"), Diagnostic(cfg, "slow", "warning")])
    assert text.splitlines()[:2] == [f"error: {said}", "warning: cfg: slow"]


def test_destroy_and_an_empty_summary() -> None:
    text = run(
        "destroy",
        [
            StepStarted(DELETE),
            StepDone(DELETE, True, 0.4),
            Summary("destroy", True, {"delete": 1}, elapsed=0.5),
        ],
    )
    assert text == (
        "- delete  kubernetes:core/v1:Secret  old\n"
        "  deleted  old (0.40s)\n"
        "\n"
        "Resources:\n"
        "    - 1 deleted\n"
        "Duration: 0.5s\n"
    )
    assert run("up", [Summary("up", True, {}, elapsed=0.01)]) == (
        "Resources:\n    no resources\nDuration: 0.0s\n"
    )
    failed = Summary("up", False, {}, elapsed=0.01, failures=["Deployment web: not ready"])
    assert run("up", [failed]).startswith("Resources:\n    ! 1 failed\nDuration: 0.0s\nFailures:")
    stopped = Summary("up", False, {}, elapsed=0.01, not_done=["Deployment web: ..."])
    assert run("up", [stopped]).startswith("Resources:\n    none done\nDuration: 0.0s\n")


def test_a_retained_delete_says_so_in_each_of_its_lines_and_counts_as_a_delete() -> None:
    # As Pulumi's `delete[retain]`: a plain `delete` of an object `retain_on_delete` keeps
    # alarms whoever reads the preview (pulumi/pulumi#12030).
    kept = step(Op.DELETE, SECRET, "kept", retain_on_delete=True)
    text = run(
        "destroy",
        [
            StepStarted(kept),
            StepDone(kept, True, 0.1),
            Summary("destroy", True, {"delete": 1}, elapsed=0.2),
        ],
    )
    assert text.startswith(
        "- delete [retain]  kubernetes:core/v1:Secret  kept\n  deleted [retain]  kept (0.10s)\n"
    )
    assert "    - 1 deleted\n" in text
    preview = run("preview", [StepStarted(kept), StepSkipped(kept, "x failed")])
    assert preview.startswith("- delete [retain]  kubernetes:core/v1:Secret  kept\n")
    assert (
        "  not previewed  - delete [retain]  kubernetes:core/v1:Secret  kept (x failed)" in preview
    )
    # A component keeps nothing in the cluster: its delete is one.
    component = step(Op.DELETE, COMPONENT, "app", custom=False, retain_on_delete=True)
    assert run("destroy", [StepStarted(component)]).startswith("- delete  acme:web:App  app\n")


def test_outputs_are_listed_by_name_whatever_the_operation() -> None:
    # An up listed them in program order, a refresh as stored: the same stack's outputs
    # came in two orders. By name, as `stack output` and Pulumi's display list them.
    for kind in ("up", "refresh"):
        summary = Summary(kind, True, {}, outputs={"url": "http://x", "db": "pg", "ip": "10.0.0.1"})
        assert run(kind, [summary]).endswith(
            'Outputs:\n    db: "pg"\n    ip: "10.0.0.1"\n    url: "http://x"\n'
        )


def test_one_table_describes_every_operation() -> None:
    assert set(OP_DISPLAY) == set(Op)
    assert OP_DISPLAY[Op.CREATE].symbol == "+" and OP_DISPLAY[Op.CREATE].style == "green"
    assert OP_DISPLAY[Op.REPLACE].symbol == "+-" and OP_DISPLAY[Op.DELETE].style == "red"
    assert render.__all__ == sorted(render.__all__)


def test_an_unknown_kind_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown operation kind 'apply'"):
        make_renderer("apply", json_lines=False, show_diff=False, stream=io.StringIO())


# --- JSON lines -------------------------------------------------------------------


class Opaque:
    def __str__(self) -> str:
        return "opaque!"


def json_events(events: list[Event]) -> list[dict[str, Any]]:
    out = io.StringIO()
    renderer = make_renderer("up", json_lines=True, show_diff=False, stream=out, live=True)
    for event in events:
        renderer(event)
        assert out.getvalue().endswith("\n")  # written (and flushed) per event
    renderer.close()
    lines = out.getvalue().splitlines()
    assert len(lines) == len(events)
    return [json.loads(line) for line in lines]


def test_json_step_events_name_the_provider_they_go_through() -> None:
    """With several clusters, a reader of `--json` tells which one a step reaches: the
    provider's URN ("" for the stack's default). A resource moved to another provider is
    made through the new one and its former object deleted through the former one."""
    east = make_urn("dev", "shop", "stackwright:providers:kubernetes", "east")
    west = make_urn("dev", "shop", "stackwright:providers:kubernetes", "west")
    old, new = state(CM, "cm", provider=east), state(CM, "cm", provider=west)
    moved = Step(Op.REPLACE, old.urn, old, new, (), ("its provider changed",))
    gone = Step(Op.DELETE_REPLACED, old.urn, old, None)
    events = json_events(
        [StepStarted(step(Op.DELETE, CM, "there", provider=east)), StepStarted(moved),
         StepDone(moved, True, 0.1), StepSkipped(gone, "a dependency failed", "")]
    )  # fmt: skip
    assert [e["provider"] for e in events] == [east, west, west, east]


def test_json_lines_one_object_per_event() -> None:
    create = step(
        Op.CREATE,
        CM,
        "app-config",
        FieldChange("data.a", _ABSENT, "b"),
        FieldChange("data.when", _ABSENT, Opaque()),
    )
    update = step(Op.UPDATE, DEPLOY, "api", FieldChange("spec.replicas", 2, 3))
    delete = step(Op.DELETE, SECRET, "old", FieldChange("type", "Opaque", _ABSENT))
    web = make_urn("dev", "shop", DEPLOY, "web")
    started, updated, deleted, progress, done, skipped, drift, diag, summary = json_events(
        [
            StepStarted(create),
            StepStarted(update),
            StepStarted(delete),
            StepProgress(update.urn, "1/3 ready"),
            StepDone(create, True, 0.1234),
            StepSkipped(BLOCKED, "a dependency failed", web),
            Drift(web, (DriftedField("spec.replicas", 3, 5, "kubectl"),)),
            Diagnostic(web, "slow", "warning"),
            Summary(
                "up",
                False,
                {"create": 1},
                {"ip": "10.0.0.1"},
                1.5,
                ["web: failed"],
                not_done=["+ create db"],
            ),
        ]
    )
    assert started == {
        "event": "step-started",
        "op": "create",
        "urn": create.urn,
        "type": CM,
        "name": "app-config",
        "provider": "",  # the stack's default provider
        "changes": [
            {"path": "data.a", "kind": "add", "new": "b"},  # the absent side is left out
            {"path": "data.when", "kind": "add", "new": "opaque!"},  # not JSON: str()
        ],
    }
    assert updated["changes"] == [{"path": "spec.replicas", "kind": "update", "old": 2, "new": 3}]
    assert deleted["changes"] == [{"path": "type", "kind": "delete", "old": "Opaque"}]
    assert progress == {"event": "step-progress", "urn": update.urn, "message": "1/3 ready"}
    assert done == {
        "event": "step-done",
        "op": "create",
        "urn": create.urn,
        "type": CM,
        "name": "app-config",
        "provider": "",
        "ok": True,
        "elapsed": 0.123,
        "error": "",
    }
    assert skipped == {
        "event": "step-skipped",
        "op": "create",  # what it would have done
        "urn": BLOCKED.urn,
        "type": DEPLOY,
        "name": "db",
        "provider": "",
        "reason": "a dependency failed",
        "dependency": web,  # the one it waited for
    }
    assert drift == {
        "event": "drift",
        "urn": web,
        "gone": False,
        "fields": [{"path": "spec.replicas", "recorded": 3, "live": 5, "manager": "kubectl"}],
    }
    assert diag == {"event": "diagnostic", "urn": web, "severity": "warning", "message": "slow"}
    assert summary == {
        "event": "summary",
        "kind": "up",
        "ok": False,
        "counts": {"create": 1},
        "outputs": {"ip": "10.0.0.1"},
        "elapsed": 1.5,
        "failures": ["web: failed"],
        "notDone": ["+ create db"],
        "dryRun": False,
        "exitCode": 1,  # the command's, for a machine that reads only stdout
        "stateBytesWritten": 0,  # in every operation's summary but a preview's: one shape
    }


def test_json_replacement_carries_its_reasons() -> None:
    (started,) = json_events([StepStarted(REPLACE)])
    assert started["replaceReasons"] == ["spec.selector: a Deployment's selector is immutable"]


# --- secrets ------------------------------------------------------------------------

SECRET_STEPS = (
    step(
        Op.CREATE,
        SECRET,
        "db-pass",
        FieldChange("data.password", _ABSENT, "hunter2"),
        FieldChange("data.user", _ABSENT, "admin"),
        secret_paths=("data.password",),
    ),
    step(
        Op.UPDATE,
        SECRET,
        "db-pass2",
        FieldChange("data.password", "hunter1", "hunter2"),
        secret_paths=("data.password",),
    ),
    step(
        Op.UPDATE,
        SECRET,
        "db-pass3",
        FieldChange("data", _ABSENT, {"password": "hunter2"}),  # a parent of the secret path
        secret_paths=("data.password",),
    ),
    step(
        Op.DELETE,
        SECRET,
        "db-pass4",
        FieldChange("data.password", "hunter2", _ABSENT),
        secret_paths=("data.password",),
    ),
)


def secret_events() -> list[Event]:
    events: list[Event] = []
    for s in SECRET_STEPS:
        events += [StepStarted(s), StepDone(s, True, 0.1)]
    return [*events, Summary("up", True, {"create": 1, "update": 2, "delete": 1})]


def test_secrets_are_masked_in_plain_diffs() -> None:
    text = run("up", secret_events(), show_diff=True)
    assert "hunter" not in text
    assert "    + data.password: [secret]\n" in text
    assert '    + data.user: "admin"\n' in text
    assert "    ~ data.password: [secret] → [secret]\n" in text
    # A structure that holds a secret is shown with only the secret part masked.
    assert '    + data: {"password":"[secret]"}\n' in text
    assert "    - data.password: [secret]\n" in text


def test_secrets_are_masked_in_json_lines() -> None:
    out = io.StringIO()
    renderer = make_renderer("up", json_lines=True, show_diff=False, stream=out)
    for event in secret_events():
        renderer(event)
    renderer.close()
    assert "hunter" not in out.getvalue()
    changes = json.loads(out.getvalue().splitlines()[0])["changes"]
    assert changes[0] == {"path": "data.password", "kind": "add", "new": "[secret]"}


def test_secrets_are_masked_in_the_live_display() -> None:
    out = io.StringIO()
    renderer = make_renderer("up", json_lines=False, show_diff=True, stream=out, live=True)
    for event in secret_events():
        renderer(event)
    renderer.close()
    assert "hunter" not in out.getvalue()
    assert "data.password: [secret]" in ANSI.sub("", out.getvalue())


# --- the live display -------------------------------------------------------------------


def test_live_display_runs_and_prints_finished_steps_and_the_summary() -> None:
    out = io.StringIO()
    renderer = make_renderer("up", json_lines=False, show_diff=False, stream=out, live=True)
    for event in (
        StepStarted(SAME),
        StepStarted(CREATE),
        StepStarted(REPLACE),
        StepProgress(REPLACE.urn, "0/3 ready"),
        StepDone(CREATE, True, 0.05),
        StepDone(REPLACE, False, 3.2, FAILURE),
        StepSkipped(BLOCKED, "a dependency failed"),
        Summary("up", False, {"create": 1, "same": 1}, {"ip": "10.0.0.1"}, 3.3, [FAILURE]),
    ):
        renderer(event)
    renderer.close()
    renderer.close()
    raw = out.getvalue()
    assert "\x1b[" in raw  # styled for a terminal
    text = ANSI.sub("", raw)
    assert "+ created  kubernetes:core/v1:ConfigMap  app-config (0.05s)\n" in text
    assert (
        "! failed  kubernetes:apps/v1:Deployment  web: 0/3 ready — pod web-x: "
        "ImagePullBackOff (image nginx:nope not found)\n"
    ) in text
    assert "  skipped  + create  kubernetes:apps/v1:Deployment  db (a dependency failed)\n" in text
    assert text.endswith(
        "Resources:\n"
        "    + 1 created\n"
        "    1 unchanged\n"
        "    ! 1 failed\n"
        "Duration: 3.3s\n"
        "Outputs:\n"
        '    ip: "10.0.0.1"\n'
        "Failures:\n"
        "    web: 0/3 ready — pod web-x: ImagePullBackOff (image nginx:nope not found)\n"
    )


def test_live_region_nests_children_under_their_component_and_holds_only_running_steps() -> None:
    clock = Clock()
    out = io.StringIO()
    renderer = make_renderer(
        "up", json_lines=False, show_diff=False, stream=out, live=True, clock=clock
    )
    app = state(COMPONENT, "shop", custom=False)
    app_step = Step(Op.CREATE, app.urn, None, app)
    children = [
        Step(Op.CREATE, child.urn, None, child)
        for child in (
            state(CM, f"cfg-{i}", parent=app.urn, parent_types=(COMPONENT,)) for i in range(1000)
        )
    ]
    renderer(StepStarted(app_step))
    for child in children:
        renderer(StepStarted(child))
        renderer(StepDone(child, True, 0.01))
    running = children[0]
    renderer(StepStarted(running))
    renderer(StepProgress(running.urn, "waiting for the API"))
    clock.now += 4
    # What the live region would draw now (the refresh thread calls the same function).
    view = Console(file=io.StringIO(), width=120, color_system=None)
    view.print(renderer._render())  # type: ignore[attr-defined]
    region = view.file.getvalue()  # type: ignore[attr-defined]
    renderer.close()
    assert region.splitlines() == [
        "shop-dev  updating",
        "└── + create  acme:web:App  shop  4s",
        "    └── + create  kubernetes:core/v1:ConfigMap  cfg-0  waiting for the API  4s",
        "1000 done · 2 in progress · 4s",
    ]
    assert ANSI.sub("", out.getvalue()).count("+ created  kubernetes:core/v1:ConfigMap") == 1000


def test_live_display_closed_mid_run_says_where_each_step_under_way_stood() -> None:
    """Ctrl-C: the transient region goes, so its steps would vanish without a word."""
    clock = Clock()
    out = io.StringIO()
    renderer = make_renderer(
        "up", json_lines=False, show_diff=False, stream=out, live=True, clock=clock
    )
    renderer(StepStarted(CREATE))
    renderer(StepStarted(REPLACE))
    renderer(StepProgress(REPLACE.urn, "0/3 ready — pod web-x: Running, not ready"))
    renderer(StepDone(CREATE, True, 0.05))
    clock.now += 3
    renderer.close()
    text = ANSI.sub("", out.getvalue())
    assert "+ created  kubernetes:core/v1:ConfigMap  app-config (0.05s)\n" in text
    assert text.endswith(
        "\r  stopped  kubernetes:apps/v1:Deployment  web after 3s: 0/3 ready — pod web-x: "
        "Running, not ready\n"
    )


def test_plain_lines_closed_mid_run_say_where_each_step_under_way_stood() -> None:
    """Ctrl-C or SIGTERM in a CI job: the log ends saying which steps were under way and
    where each stood (its latest progress, even one the rate limit did not print), as the
    live display does; a step done or a run that ended leaves no such line."""
    clock = Clock()
    events: list[Event] = [
        StepStarted(CREATE),
        StepStarted(REPLACE),
        StepProgress(REPLACE.urn, "0/3 ready — pod web-x: Pending"),
        StepProgress(REPLACE.urn, "0/3 ready — pod web-x: Running, not ready"),
        StepDone(CREATE, True, 0.05),
    ]
    out = io.StringIO()
    renderer = make_renderer("up", json_lines=False, show_diff=False, stream=out, clock=clock)
    for event in events:
        renderer(event)
    clock.now += 3
    renderer.close()
    assert out.getvalue().splitlines() == [
        "+ create  kubernetes:core/v1:ConfigMap  app-config",
        "+- replace  kubernetes:apps/v1:Deployment  web (spec.selector: a Deployment's "
        "selector is immutable)",
        "  web: 0/3 ready — pod web-x: Pending",
        "  created  app-config (0.05s)",
        "  stopped  kubernetes:apps/v1:Deployment  web after 3s: 0/3 ready — pod web-x: "
        "Running, not ready",
    ]
    ended = Summary("up", True, {"create": 1}, elapsed=0.1)
    assert "stopped" not in run("up", [*events, StepDone(REPLACE, True, 3.0), ended])
    assert "stopped" not in run("up", [*events, ended])


def test_live_preview_prints_planned_steps() -> None:
    out = io.StringIO()
    renderer = make_renderer("preview", json_lines=False, show_diff=False, stream=out, live=True)
    renderer(StepStarted(CREATE))
    renderer(StepStarted(SAME))
    renderer(Summary("preview", True, {"create": 1, "same": 1}, dry_run=True))
    renderer.close()
    text = ANSI.sub("", out.getvalue())
    assert "+ create  kubernetes:core/v1:ConfigMap  app-config\n" in text
    assert "unchanged" not in text.split("Resources:")[0]
    assert "    + 1 to create\n" in text


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_live_is_chosen_by_whether_the_stream_is_a_terminal() -> None:
    events: list[Event] = [StepStarted(CREATE), StepDone(CREATE, True, 0.05)]
    pipe = io.StringIO()
    renderer = make_renderer("up", json_lines=False, show_diff=False, stream=pipe)
    for event in events:
        renderer(event)
    renderer.close()
    assert "\x1b[" not in pipe.getvalue()
    assert pipe.getvalue().startswith("+ create  kubernetes:core/v1:ConfigMap  app-config\n")

    tty = Terminal()
    renderer = make_renderer("up", json_lines=False, show_diff=False, stream=tty)
    for event in events:
        renderer(event)
    renderer.close()
    assert "\x1b[" in tty.getvalue()
    assert "+ created  kubernetes:core/v1:ConfigMap  app-config" in ANSI.sub("", tty.getvalue())


def test_not_done_steps_are_headed_without_claiming_a_dependency_failed() -> None:
    # A replacement's delete is not started after any failure, dependency or not: each item
    # says why, so the heading claims no cause (it said "a dependency failed" for both).
    stopped = Summary(
        "up",
        False,
        {"replace": 1},
        elapsed=0.4,
        failures=[f"{DEPLOY} bad: 0/1 ready"],
        not_done=["delete-replaced kubernetes:batch/v1:Job job: not started after a failure"],
    )
    assert run("up", [stopped]).endswith(
        "Not done:\n    delete-replaced kubernetes:batch/v1:Job job: not started after a failure\n"
    )


def test_a_created_or_deleted_field_too_wide_for_a_line_is_shown_field_by_field() -> None:
    """`preview --diff` of a new Deployment shows its image, not a spec cut off at 80
    characters; short values stay on one line, as the goldens have them."""
    container = {"name": "web", "image": "nginx:1.29", "ports": [{"containerPort": 80}]}
    spec = {"replicas": 2, "template": {"spec": {"containers": [container]}}}
    spec["template"]["spec"]["serviceAccountName"] = "a-service-account-with-a-long-name"
    created = step(
        Op.CREATE,
        DEPLOY,
        "web",
        FieldChange("kind", _ABSENT, "Deployment"),
        FieldChange("spec", _ABSENT, spec),
    )
    deleted = step(Op.DELETE, DEPLOY, "old", FieldChange("spec", spec, _ABSENT))
    text = run("preview", [StepStarted(created), StepStarted(deleted)], show_diff=True)
    assert text == (
        "+ create  kubernetes:apps/v1:Deployment  web\n"
        '    + kind: "Deployment"\n'
        "    + spec.replicas: 2\n"
        '    + spec.template.spec.containers: [{"name":"web","image":"nginx:1.29","ports":[{"containerPort":80}]}]\n'
        '    + spec.template.spec.serviceAccountName: "a-service-account-with-a-long-name"\n'
        "- delete  kubernetes:apps/v1:Deployment  old\n"
        "    - spec.replicas: 2\n"
        '    - spec.template.spec.containers: [{"name":"web","image":"nginx:1.29","ports":[{"containerPort":80}]}]\n'
        '    - spec.template.spec.serviceAccountName: "a-service-account-with-a-long-name"\n'
    )


def test_refused_inputs_fail_their_step_as_the_summary_says_it() -> None:
    """The cluster refused a resource's own inputs: the step's line and event carry the
    summary's failure (from the program line to fix), and the summary the exit code."""
    web = step(Op.CREATE, DEPLOY, "web")
    refused = (
        f'__main__.py:7: {DEPLOY} web: Deployment.apps "web" is invalid: spec.replicas: '
        'Invalid value: "string": spec.replicas in body must be of type integer'
    )
    events: list[Event] = [
        StepStarted(web),
        StepDone(web, False, 0.0, refused, located=True),
        Summary("preview", False, {"create": 0}, failures=[refused], rejected=1, dry_run=True),
    ]
    lines = run("preview", events).splitlines()
    assert lines[1] == f"! failed  {refused}"
    assert lines[-2:] == ["Failures:", f"    {refused}"]
    _, done, summary = json_events(events)
    assert (done["error"], summary["failures"]) == (refused, [refused])
    assert summary["exitCode"] == 2


def test_the_summary_says_the_exit_code_expect_no_changes_gives_it() -> None:
    """`--expect-no-changes` fails (exit 1) a run that counts a change, a refresh's drift:
    the summary handed through `expecting_no_changes` says so, and nothing else does."""
    changed = Summary("preview", True, {"update": 1, "same": 2}, dry_run=True)
    in_sync = Summary("preview", True, {"same": 3}, dry_run=True)
    drifted = Summary("refresh", True, {"in-sync": 2, "drifted": 1}, dry_run=True)
    read = Summary("refresh", True, {"in-sync": 3}, dry_run=True)
    summaries: list[Event] = [changed, in_sync, drifted, read]
    assert [e["exitCode"] for e in json_events(summaries)] == [0, 0, 0, 0]
    seen: list[Event] = []
    gated = expecting_no_changes(seen.append, True)
    assert gated is not None and expecting_no_changes(None, True) is None
    for summary in summaries:
        gated(summary)
    assert [e["exitCode"] for e in json_events(seen)] == [1, 0, 1, 0]
    assert expecting_no_changes(seen.append, False) == seen.append


# --- the program's messages (sw.log) ----------------------------------------------------


LOGGED: list[Event] = [
    Log("", "starting", "info"),
    Log(CREATE.urn, "cache off", "debug"),
    StepStarted(CREATE),
    Log(CREATE.urn, "replicas below 2", "warning"),
    StepDone(CREATE, True, 0.05),
    Log("", "no backup configured", "error"),
    Summary("up", True, {"create": 1}, {}, 0.1),
]


@pytest.mark.parametrize("live", [False, True])
def test_the_programs_messages_show_as_they_come_and_warnings_and_errors_again_counted(
    live: bool,
) -> None:
    """Against their resource (or the stack), debug hidden (no verbose flag: `--json` has
    them), warnings and errors said again before the summary, as Pulumi's Diagnostics."""
    out = io.StringIO()
    renderer = make_renderer("up", json_lines=False, show_diff=False, stream=out, live=live)
    for event in LOGGED:
        renderer(event)
    renderer.close()
    text = ANSI.sub("", out.getvalue())
    assert "cache off" not in text
    assert text.index("info: starting\n") < text.index("warning: app-config: replicas below 2\n")
    assert text.index("warning: app-config: replicas below 2\n") < text.index(
        "error: no backup configured\n"
    )
    assert (
        "Diagnostics (1 error, 1 warning):\n"
        "    warning: app-config: replicas below 2\n"
        "    error: no backup configured\n"
        "\n"
        "Resources:\n"
    ) in text


def test_the_programs_messages_are_log_events_in_json_debug_included() -> None:
    out = io.StringIO()
    renderer = make_renderer("up", json_lines=True, show_diff=False, stream=out)
    for event in LOGGED:
        renderer(event)
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    logs = [line for line in lines if line["event"] == "log"]
    assert logs == [
        {"event": "log", "urn": "", "severity": "info", "message": "starting"},
        {"event": "log", "urn": CREATE.urn, "severity": "debug", "message": "cache off"},
        {"event": "log", "urn": CREATE.urn, "severity": "warning", "message": "replicas below 2"},
        {"event": "log", "urn": "", "severity": "error", "message": "no backup configured"},
    ]
    assert lines[-1]["event"] == "summary" and lines[-1]["exitCode"] == 0


def test_a_programs_message_quoting_a_secret_shows_it_masked() -> None:
    remember_secret("hunter2-pass")
    event = Log("", "password is hunter2-pass", "warning")
    for json_lines in (False, True):
        out = io.StringIO()
        renderer = make_renderer("up", json_lines=json_lines, show_diff=False, stream=out)
        renderer(event)
        renderer(Summary("up", True, {}, {}, 0.1))
        assert "hunter2" not in out.getvalue() and "[secret]" in out.getvalue()
    assert safe_event(event) == Log("", "password is [secret]", "warning")


def test_entries_shifted_in_a_list_within_an_entry_of_a_list_that_grew() -> None:
    """A sidecar added and the main container's env shifted: told entry by entry in both."""
    containers = "spec.template.spec.containers"
    update = step(
        Op.UPDATE,
        DEPLOY,
        "api",
        FieldChange(
            containers,
            [{"name": "web", "env": [{"name": "A", "value": "a"}, {"name": "B", "value": "b"}]}],
            [
                {"name": "web", "env": [{"name": "B", "value": "b"}, {"name": "C", "value": "c"}]},
                {"name": "proxy", "image": "envoy"},
            ],
        ),
    )
    text = run("preview", [StepStarted(update)], show_diff=True)
    assert text.splitlines()[1:] == [
        f'    - {containers}[name=web].env[name=A]: {{"name":"A","value":"a"}}',
        f'    + {containers}[name=web].env[name=C]: {{"name":"C","value":"c"}}',
        f'    + {containers}[name=proxy]: {{"name":"proxy","image":"envoy"}}',
    ]


def test_an_unkeyed_secret_item_is_not_paired_with_the_plain_one_in_its_place() -> None:
    """Only their place makes the secret and the plain argument one item: each is told on
    its own, the plain one shown."""
    urn = make_urn("dev", "shop", DEPLOY, "api")
    old = ResourceState(
        urn, DEPLOY, inputs={"args": ["a", "s3cr3t", "x"]}, secret_paths=("args[1]",)
    )
    new = ResourceState(urn, DEPLOY, inputs={"args": ["a", "c", "x", "y"]})
    update = Step(Op.UPDATE, urn, old, new, tuple(diff(old.inputs, new.inputs)))
    assert run("preview", [StepStarted(update)], show_diff=True).splitlines()[1:] == [
        "    - args[1]: [secret]",
        '    + args[1]: "c"',
        '    + args[3]: "y"',
    ]


def test_an_entry_that_is_one_secret_and_a_list_within_a_secret_stay_masked_whole() -> None:
    entry = {"name": "TOKEN", "value": "s3cr3t"}
    moved = env_step(
        [{"name": "A", "value": "1"}, entry],
        [{**entry, "value": "s3cr3t-2"}],
        f"{ENV}[1]",
        f"{ENV}[0]",
    )
    assert run("preview", [StepStarted(moved)], show_diff=True).splitlines()[1:] == [
        f'    - {ENV}[name=A]: {{"name":"A","value":"1"}}',
        # Its name is part of the secret: told by its place (the new one), not `[name=TOKEN]`.
        f"    ~ {ENV}[0]: [secret] → [secret]",
    ]
    within = env_step(
        [{"name": "A", "value": "1"}],
        [{"name": "A", "value": "1"}, {"name": "B", "value": "s3cr3t"}],
        "spec.template",
        "spec.template",
    )
    assert run("preview", [StepStarted(within)], show_diff=True).splitlines()[1:] == [
        f"    ~ {ENV}: [secret] → [secret]"
    ]
