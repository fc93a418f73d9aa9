"""Pulumi Python Kubernetes programs ported to Stackwright as its README says (`pulumi` →
`sw`, `pulumi_kubernetes` → `k8s`, dicts for the args): the idioms they keep work end to
end through the real CLI and a real local cluster, and those Stackwright does differently
are refused in one line saying what to write instead.
"""

from __future__ import annotations

import json
import textwrap
from typing import Any

import pytest
from test_cli_lifecycle import PRELUDE_LINES, LiveCluster, get, live, new_project, one_line

pytestmark = pytest.mark.integration
__all__ = ["new_project"]  # a fixture, used by name


def test_apply_callbacks_read_fields_by_pulumis_attribute_names(
    new_project: Any, cluster: LiveCluster
) -> None:
    """pulumi/examples' guestbook reads `status.load_balancer.ingress[0].ip` and
    `spec.cluster_ip` inside `.apply`, as Pulumi's output types name fields: the callback's
    value reads so too (an absent field is None), and a callback that still fails names
    its own line in the stack output's failure."""
    p = new_project()
    program = """
        ns = k8s.core.v1.Namespace("ns", metadata={"name": NS})
        k8s.apps.v1.Deployment("fe", metadata={"name": "fe", "namespace": ns.metadata["name"]},
                               spec=app_spec("fe"))
        svc = k8s.core.v1.Service(
            "frontend",
            metadata={"name": "frontend", "namespace": ns.metadata["name"]},
            spec={"type": "LoadBalancer", "selector": {"app": "fe"}, "ports": [{"port": 80}]},
        )
        ingress = svc.status.apply(lambda status: status.load_balancer.ingress[0])
        ip = ingress.apply(lambda ingress: ingress.ip or ingress.hostname or "")
        sw.export("frontend_ip", ip)
        sw.export("cluster_ip", svc.spec.apply(lambda spec: spec.cluster_ip))
        sw.export("port", sw.Output.all(svc.spec, svc.metadata).apply(
            lambda a: f"{a[1].name}:{a[0].ports[0].port} {a[0].external_name}"))
        sw.export("ingress", ingress)
        sw.export("broken", svc.spec.apply(lambda spec: spec.ports[0].port.upper()))
        """
    p.program(textwrap.dedent(program))

    done = p.up(rc=1)

    service = live(cluster, "service", "frontend", p.ns)
    address = service["status"]["loadBalancer"]["ingress"][0]["ip"]
    outputs = done.summary["outputs"]
    assert outputs["frontend_ip"] == address
    assert outputs["cluster_ip"] == service["spec"]["clusterIP"]
    assert outputs["port"] == "frontend:80 None"
    assert outputs["ingress"] == service["status"]["loadBalancer"]["ingress"][0]
    (failure,) = done.summary["failures"]
    broken = (
        1
        + PRELUDE_LINES
        + next(
            i for i, text in enumerate(textwrap.dedent(program).splitlines()) if '"broken"' in text
        )
    )
    assert failure == (
        f"__main__.py:{broken}: stack output broken: an apply callback failed: "
        "AttributeError: 'int' object has no attribute 'upper'"
    )
    stored = p.state()["outputs"]
    assert stored["ingress"] == outputs["ingress"] and "broken" not in stored
    assert json.loads(p.sw("stack", "output", "--json").out)["frontend_ip"] == address


def test_a_misspelt_field_name_is_refused_in_one_line_not_read_as_null(
    new_project: Any, cluster: LiveCluster
) -> None:
    """A typo in a field name read from a built-in kind (`svc.status.load_balncer`) made the
    stack output null, silently, as if the field were unset. Pulumi's typed outputs raise for
    a name the type lacks: so `preview` and `up` refuse it at the program's line, before
    anything is known or changed, naming the field the program meant; inside a callback, the
    run fails on it as on any callback's error."""
    p = new_project()
    program = """
        ns = k8s.core.v1.Namespace("ns", metadata={"name": NS})
        svc = k8s.core.v1.Service(
            "frontend",
            metadata={"name": "frontend", "namespace": ns.metadata["name"]},
            spec={"type": "LoadBalancer", "selector": {"app": "fe"}, "ports": [{"port": 80}]},
        )
        sw.export("frontend_ip", svc.status.load_balncer.ingress[0].ip)
        """
    p.program(textwrap.dedent(program))
    line = PRELUDE_LINES + 8  # textwrap.dedent keeps the leading blank line
    for command in (("preview", "--json"), ("up", "--yes", "--json")):
        said = one_line(p.sw(*command, rc=2))
        assert said == (
            f"error: __main__.py:{line}: the program failed: AttributeError: "
            "Service 'frontend' has no field status.load_balncer (did you mean load_balancer?)"
        ), said
    assert get(cluster, "namespace", p.ns) is None and p.history() == []

    p.program(
        """
        ns = k8s.core.v1.Namespace("ns", metadata={"name": NS})
        sw.export("phase", ns.status.apply(lambda status: status.phse))
        """
    )
    assert p.preview().summary["counts"] == {"create": 1}  # not known before it exists
    failed = p.up(rc=1)
    assert failed.summary["failures"] == [
        f"__main__.py:{PRELUDE_LINES + 3}: stack output phase: an apply callback "
        "failed: AttributeError: Namespace 'ns' has no field status.phse "
        "(did you mean phase?)"
    ]
    assert live(cluster, "namespace", p.ns)["status"]["phase"] == "Active"


def test_a_configmap_changed_under_a_workloads_environment_warns_that_pods_keep_it(
    new_project: Any, cluster: LiveCluster
) -> None:
    """Pulumi replaces a ConfigMap whose data changes, which rolls the workloads naming it;
    Stackwright updates it in place, so a workload reading it into its environment (env,
    envFrom) whose template the run leaves alone is warned of, with how to roll it; one
    that mounts it, or whose template changes anyway, is not."""
    p = new_project()
    program = """
        ns = k8s.core.v1.Namespace("ns", metadata={"name": NS})
        meta = {"namespace": ns.metadata["name"]}
        settings = k8s.core.v1.ConfigMap("settings", metadata=meta, data={"MODE": "MODE_VALUE"},
                                         opts=sw.ResourceOptions(replace_on_changes=ROC))
        files = k8s.core.v1.ConfigMap("files", metadata=meta, data={"a.conf": "MODE_VALUE"})
        def app(name, image, env=(), volumes=()):
            spec = app_spec(name, image)
            container = spec["template"]["spec"]["containers"][0]
            container["envFrom"] = list(env)
            spec["template"]["spec"]["volumes"] = list(volumes)
            return k8s.apps.v1.Deployment(name, metadata=meta, spec=spec)
        app("web", "nginx:1.29", env=[{"configMapRef": {"name": settings.metadata["name"]}}])
        app("api", "API_IMAGE", env=[{"configMapRef": {"name": settings.metadata["name"]}}])
        app("mounts", "nginx:1.29",
            volumes=[{"name": "f", "configMap": {"name": files.metadata["name"]}}])
        """

    def write(mode: str, api_image: str, roc: str = "[]") -> None:
        text = textwrap.dedent(program).replace("MODE_VALUE", mode).replace("ROC", roc)
        p.program(text.replace("API_IMAGE", api_image))

    write("fast", "nginx:1.29")
    p.up()
    write("slow", "nginx:1.30")
    planned = p.preview()
    warned = {
        e["urn"].rpartition("::")[2]: e["message"]
        for e in planned.of("diagnostic")
        if e["severity"] == "warning"
    }
    assert set(warned) == {"web"}, warned
    settings = live(cluster, "configmap", p.resources()["settings"]["id"].split("/")[1], p.ns)
    assert warned["web"].startswith(
        f"its pods read ConfigMap {settings['metadata']['name']} into their environment"
    )
    assert 'replace_on_changes=["data"]' in warned["web"]

    # As the warning says: the ConfigMap replaced under a new name rolls the Deployment.
    write("slow", "nginx:1.30", roc='["data"]')
    done = p.up()
    changed = done.changed()
    assert changed["web"] == changed["api"] == "update" and "mounts" not in changed
    assert not [e for e in done.of("diagnostic") if e["severity"] == "warning"]
    web = live(cluster, "deployment", p.resources()["web"]["id"].split("/")[1], p.ns)
    now = p.resources()["settings"]["id"].split("/")[1]
    assert now != settings["metadata"]["name"]
    env = web["spec"]["template"]["spec"]["containers"][0]["envFrom"]
    assert env == [{"configMapRef": {"name": now}}]


def test_destroy_of_a_stack_with_a_protected_namespace_deletes_nothing(
    new_project: Any, cluster: LiveCluster
) -> None:
    """Protecting the namespace of a database, as Pulumi users do, keeps `destroy --yes`
    from deleting anything (Pulumi's preview, run first, stops it); it deleted everything
    in the namespace first and then failed on the namespace alone."""
    p = new_project()
    p.program(
        """
        ns = k8s.core.v1.Namespace("ns", metadata={"name": NS},
                                   opts=sw.ResourceOptions(protect=True))
        k8s.apps.v1.Deployment("db", metadata={"name": "db", "namespace": ns.metadata["name"]},
                               spec=app_spec("db"))
        """
    )
    p.up()

    refused = p.sw("destroy", "--yes", "--json", rc=2)

    urn = p.urn("kubernetes:core/v1:Namespace", "ns")
    said = one_line(refused)
    assert said.startswith(f"error: destroy refused: resource {urn} cannot be deleted")
    assert said.endswith("deletes everything else; nothing was changed")
    assert [e["event"] for e in refused.events] == ["error"]
    assert live(cluster, "deployment", "db", p.ns)
    assert set(p.resources()) == {"ns", "db"}
    assert p.history()[0]["kind"] == "up"  # no destroy began

    kept = p.sw("destroy", "--yes", "--json", "--exclude-protected")
    assert kept.summary["counts"] == {"delete": 1}
    assert set(p.resources()) == {"ns"} and live(cluster, "namespace", p.ns)


def test_the_programs_log_messages_and_is_dry_run_in_preview_and_up(
    new_project: Any, cluster: LiveCluster
) -> None:
    """`pulumi.log` and `pulumi.runtime.is_dry_run()` ported as `sw.log` and
    `sw.is_dry_run()`: messages (from the program and from a callback as it runs) are `log`
    events against their resource or the stack with `--json`, and lines in the plain
    display with warnings and errors said again in the summary, debug in `--json` only; an
    error logged fails nothing, as in Pulumi; a preview's program is a dry run, an up's not."""
    p = new_project()
    p.program(
        """
        ns = k8s.core.v1.Namespace("ns", metadata={"name": NS})
        cm = k8s.core.v1.ConfigMap("settings", metadata={"namespace": ns.metadata["name"]},
                                   data={"mode": "prod"})
        sw.log.info("previewing" if sw.is_dry_run() else "applying")
        sw.log.warn("mode is prod", cm)
        sw.log.debug("debug detail")
        sw.log.error("no backup configured")
        cm.metadata.apply(lambda m: sw.log.info(f"made {m.name}, dry run {sw.is_dry_run()}", cm))
        """
    )
    settings = p.urn("kubernetes:core/v1:ConfigMap", "settings")

    planned = p.preview()

    made = planned.of("log")[-1]["message"]  # the ConfigMap's name is known: auto-named
    assert made.startswith("made settings-") and made.endswith(", dry run True"), made
    assert [(e["severity"], e["message"], e["urn"]) for e in planned.of("log")] == [
        ("info", "previewing", ""),
        ("warning", "mode is prod", settings),
        ("debug", "debug detail", ""),
        ("error", "no backup configured", ""),
        ("info", made, settings),
    ]
    assert planned.summary["ok"] is True

    shown = p.sw("up", "--yes")

    text = shown.out
    assert "info: applying\n" in text and "previewing" not in text
    assert "warning: settings: mode is prod\n" in text and "debug detail" not in text
    assert f"info: settings: {made.replace('True', 'False')}\n" in text
    assert (
        "Diagnostics (1 error, 1 warning):\n"
        "    warning: settings: mode is prod\n"
        "    error: no backup configured\n"
        "\n"
        "Resources:\n"
    ) in text
    applied = p.up()
    assert applied.of("log")[0]["message"] == "applying"
    assert applied.of("log")[-1]["message"] == made.replace("True", "False")

    # Pulumi's advice, log an error then raise to stop: the message is said before the
    # failure's line, which names the program's.
    p.program('sw.log.error("replicas must be at least 2")\nraise SystemExit(1)\n')
    stopped = p.preview(rc=2)
    assert [(e["event"], e.get("severity")) for e in stopped.events] == [
        ("log", "error"),
        ("error", None),
    ]
    assert stopped.events[0]["message"] == "replicas must be at least 2"
