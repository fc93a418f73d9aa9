"""`additional_secret_outputs`, `deleted_with` and transforms end to end: the real CLI, a
real local cluster, Python and YAML programs.

Each test checks the steps (`--json` events), the state and the cluster, as the
lifecycle tests do; secrets are looked for everywhere they must never be by
`assert_nowhere` of the secrets lifecycle tests.
"""

from __future__ import annotations

import json
import textwrap
from typing import Any

import pytest
from test_cli_lifecycle import (
    PRELUDE_LINES,
    LiveCluster,
    Project,
    Result,
    get,
    live,
    new_project,
    one_line,
)
from test_secrets_lifecycle import assert_nowhere, passphrase

pytestmark = pytest.mark.integration
__all__ = ["new_project", "passphrase"]  # fixtures, used by name

PLAIN = "s3cr3t-t0ken-value"


def carried(result: Result) -> set[str]:
    """The resources a run said were deleted with another (no delete call of their own)."""
    return {
        e["urn"].rpartition("::")[2]
        for e in result.of("diagnostic")
        if e["message"].startswith("deleted with ")
    }


def yaml_project(p: Project, resources: str, outputs: str = "") -> None:
    """Make `p` a YAML project of these `resources:` (and `outputs:`)."""
    text = f"name: {p.name}\nruntime: yaml\nresources:\n"
    text += textwrap.indent(textwrap.dedent(resources).strip("\n"), "  ") + "\n"
    if outputs:
        text += "outputs:\n" + textwrap.indent(textwrap.dedent(outputs).strip("\n"), "  ") + "\n"
    (p.root / "Stackwright.yaml").write_text(text)


def test_deleted_with_its_namespace_destroy_makes_one_delete_call(
    new_project: Any, cluster: LiveCluster
) -> None:
    p = new_project()
    program = """
        ns = k8s.core.v1.Namespace("ns", metadata={"name": NS})
        with_ns = sw.ResourceOptions(deleted_with=ns)
        for i in range(COUNT):
            k8s.core.v1.ConfigMap(f"cm{i}", metadata={"name": f"cm{i}", "namespace": NS},
                                  data={"i": str(i)}, opts=with_ns)
        k8s.apps.v1.Deployment("web", metadata={"name": "web", "namespace": NS},
                               spec=app_spec("web"), opts=with_ns)
        k8s.core.v1.ConfigMap("own", metadata={"name": "own", "namespace": NS})
        """
    p.program("COUNT = 3\n" + textwrap.dedent(program))
    p.up()
    assert p.resources()["cm0"]["deletedWith"] == p.urn("kubernetes:core/v1:Namespace", "ns")
    assert live(cluster, "configmap", p.applyset_parent, p.ns)
    shown = {
        line.split()[1]: line for line in p.sw("stack").out.splitlines() if "kubernetes:" in line
    }
    assert shown["cm0"].endswith("(deleted with ns)") and "deleted with" not in shown["own"]
    listed = {r["name"]: r for r in json.loads(p.sw("stack", "--json").out)["resources"]}
    assert listed["cm0"]["deletedWith"] == p.urn("kubernetes:core/v1:Namespace", "ns")
    assert listed["own"]["deletedWith"] is None

    # Dropped alone, a rider is deleted on its own.
    p.program("COUNT = 2\n" + textwrap.dedent(program))
    alone = p.up()
    assert alone.changed() == {"cm2": "delete"} and carried(alone) == set()
    assert get(cluster, "configmap", "cm2", p.ns) is None

    down = p.sw("destroy", "--yes", "--json")
    assert down.summary["counts"] == {"delete": 5}
    assert carried(down) == {"cm0", "cm1", "web"}
    assert not [e for e in down.of("diagnostic") if e["severity"] == "warning"]
    assert get(cluster, "namespace", p.ns) is None
    assert get(cluster, "deployment", "web", p.ns) is None
    assert p.resources() == {}


def test_deleted_with_and_additional_secret_outputs_in_a_yaml_program(
    new_project: Any, cluster: LiveCluster, passphrase: str
) -> None:
    p = new_project()
    (p.root / "token.txt").write_text(PLAIN)  # not in the program: it is not a secret input
    yaml_project(
        p,
        f"""
        ns:
          type: kubernetes:core/v1:Namespace
          properties:
            metadata: {{name: {p.ns}}}
        token:
          type: kubernetes:core/v1:ConfigMap
          properties:
            metadata: {{name: token, namespace: {p.ns}}}
            data:
              token: {{fn::readFile: token.txt}}
          options:
            deletedWith: ${{ns}}
            additionalSecretOutputs: [data]
        """,
        "token: ${token.data.token}",
    )
    shown = p.sw("up", "--yes", "--diff")
    done = p.up()
    assert done.summary["outputs"] == {"token": "[secret]"}
    assert "data" in p.resources()["token"]["secretPaths"]
    assert live(cluster, "configmap", "token", p.ns)["data"] == {"token": PLAIN}
    assert_nowhere(p, cluster, PLAIN, shown, done, p.sw("stack", "output"))
    assert p.sw("stack", "output", "token", "--show-secrets").out.strip() == PLAIN

    down = p.sw("destroy", "--yes", "--json")
    assert carried(down) == {"token"}
    assert get(cluster, "namespace", p.ns) is None
    assert p.resources() == {}

    yaml_project(
        p,
        """
        cm:
          type: kubernetes:core/v1:ConfigMap
          options:
            additionalSecretOutputs: data
        """,
    )
    refused = p.sw("preview", rc=2)
    assert "additionalSecretOutputs must list top-level fields" in refused.err


def test_additional_secret_outputs_in_a_python_program(
    new_project: Any, cluster: LiveCluster, passphrase: str
) -> None:
    p = new_project()
    p.program(
        f"""
        ns = k8s.core.v1.Namespace("ns", metadata={{"name": NS}})
        cm = k8s.core.v1.ConfigMap("token", metadata={{"name": "token", "namespace": NS}},
                                   data={{"token": {PLAIN!r}}})
        sw.export("token", cm.data["token"])
        """
    )
    first = p.up()
    assert first.summary["outputs"] == {"token": PLAIN}

    p.program(
        f"""
        ns = k8s.core.v1.Namespace("ns", metadata={{"name": NS}})
        cm = k8s.core.v1.ConfigMap("token", metadata={{"name": "token", "namespace": NS}},
                                   data={{"token": {PLAIN!r}}},
                                   opts=sw.ResourceOptions(additional_secret_outputs=["data"]))
        sw.export("token", cm.data["token"])
        sw.export("whole", cm.data)
        """
    )
    preview = p.sw("preview", "--diff")
    secret = p.up()
    assert secret.summary["counts"] == {"same": 2}  # the state learns it; no API call
    assert secret.summary["outputs"] == {"token": "[secret]", "whole": "[secret]"}
    again = p.sw("up", "--yes", "--diff")
    assert "data" in p.resources()["token"]["secretPaths"]
    assert_nowhere(p, cluster, PLAIN, preview, secret, again, p.sw("stack", "output"))


def test_transforms_label_every_object_and_set_their_namespace(
    new_project: Any, cluster: LiveCluster
) -> None:
    p = new_project()
    p.program(
        """
        def into_namespace(args):
            if args.custom and args.props.get("kind") != "Namespace":
                meta = {**(args.props.get("metadata") or {}), "namespace": NS}
                return sw.ResourceTransformResult({**args.props, "metadata": meta}, args.opts)
            return None


        def labelled(key, value):
            def transform(args):
                if not args.custom:
                    return None
                meta = dict(args.props.get("metadata") or {})
                meta["labels"] = {**(meta.get("labels") or {}), key: value}
                return sw.ResourceTransformResult({**args.props, "metadata": meta}, args.opts)
            return transform


        sw.register_resource_transform(labelled("team", "shop"))
        sw.register_resource_transform(into_namespace)
        k8s.core.v1.Namespace("ns", metadata={"name": NS})


        class App(sw.ComponentResource):
            def __init__(self, name, opts=None):
                super().__init__("acme:web:App", name, None, opts)
                k8s.core.v1.ConfigMap(f"{name}-conf", metadata={"name": f"{name}-conf"},
                                      opts=sw.ResourceOptions(parent=self))
                k8s.apps.v1.Deployment(name, metadata={"name": name}, spec=app_spec(name),
                                       opts=sw.ResourceOptions(parent=self))


        App("web", opts=sw.ResourceOptions(transforms=[labelled("tier", "front")]))
        k8s.core.v1.ConfigMap("plain", metadata={"name": "plain"})
        # Cluster-scoped: the namespace the transform gives it is dropped by the server.
        k8s.rbac.v1.ClusterRole("reader", metadata={"name": f"{NS}-reader"}, rules=[])
        """
    )
    p.up()
    for kind, name, tier in (
        ("configmap", "web-conf", "front"),
        ("deployment", "web", "front"),
        ("configmap", "plain", None),
    ):
        labels = live(cluster, kind, name, p.ns)["metadata"]["labels"]
        assert labels["team"] == "shop", (kind, name)
        assert labels.get("tier") == tier, (kind, name)
    assert live(cluster, "namespace", p.ns)["metadata"]["labels"]["team"] == "shop"
    assert get(cluster, "configmap", "plain", "default") is None
    assert "namespace" not in live(cluster, "clusterrole", f"{p.ns}-reader")["metadata"]
    assert p.preview().changed() == {}  # not an update each run putting it back
    assert p.sw("refresh", "--yes", "--json").summary["counts"].get("drifted", 0) == 0
    p.sw("destroy", "--yes")


def test_a_transform_that_raises_is_one_line_naming_it_and_the_resource(
    new_project: Any, cluster: LiveCluster
) -> None:
    p = new_project()
    program = """
        def stamped(args):
            if args.name == "web":
                raise ValueError("no owner label for web")
            return None


        TRANSFORMS
        k8s.core.v1.Namespace("ns", metadata={"name": NS})
        k8s.core.v1.ConfigMap("web", metadata={"name": "web", "namespace": NS})
        """
    p.program(textwrap.dedent(program).replace("TRANSFORMS", ""))
    p.up()
    before = p.state()["resources"]

    p.program(
        textwrap.dedent(program).replace("TRANSFORMS", "sw.register_resource_transform(stamped)")
    )
    for command in ("preview", "up"):
        failed = p.sw(command, *(("--yes",) if command == "up" else ()), rc=2)
        line = one_line(failed)
        assert line.startswith("error: __main__.py:"), line
        assert ": transform 'stamped' of kubernetes:core/v1:ConfigMap 'web' failed at " in line
        assert "__main__.py:" in line and "ValueError: no owner label for web" in line, line
    assert p.state()["resources"] == before


def test_additional_secret_outputs_are_masked_in_policy_findings_and_api_errors(
    new_project: Any, cluster: LiveCluster
) -> None:
    """A secret field's values, given plain (the image) or by an Output (the strategy,
    known once the Namespace exists), never show in a policy finding or an API server's
    error quoting them."""
    p = new_project()
    yaml_project(
        p,
        f"""
        ns:
          type: kubernetes:core/v1:Namespace
          properties:
            metadata: {{name: {p.ns}}}
        web:
          type: kubernetes:apps/v1:Deployment
          properties:
            metadata: {{name: web, namespace: {p.ns}}}
            spec:
              selector: {{matchLabels: {{app: web}}}}
              strategy: {{type: "{PLAIN}-${{ns.metadata.name}}"}}
              template:
                metadata: {{labels: {{app: web}}}}
                spec:
                  containers: [{{name: web, image: "{PLAIN}:latest"}}]
          options:
            additionalSecretOutputs: [spec]
        """,
    )
    checked = p.sw("policy", "check", ".")
    assert "runs image [secret] with the tag latest" in checked.out
    failed = p.up(rc=1)
    assert "Unsupported value" in failed.summary["failures"][0]
    for result in (checked, failed):  # (the program itself holds it: assert_nowhere would look)
        assert PLAIN not in result.out + result.err, result.args


def test_a_transform_writing_out_the_namespace_objects_are_in_replaces_nothing(
    new_project: Any, cluster: LiveCluster
) -> None:
    """Objects placed in the provider's namespace, then given that namespace explicitly by
    a transform added to the stack: the same objects, updated (not replaced, not renamed)."""
    p = new_project({"kubernetes:kubeconfig": str(cluster.kubeconfig)})
    p.sw("config", "set", "kubernetes:namespace", p.ns)
    program = """
        TRANSFORM
        k8s.core.v1.Namespace("ns", metadata={"name": NS})
        k8s.core.v1.ConfigMap("auto", data={"k": "v"})
        k8s.core.v1.ConfigMap("named", metadata={"name": "named"}, data={"k": "v"})
        """
    p.program(textwrap.dedent(program).replace("TRANSFORM", ""))
    p.up()
    before = {name: r["id"] for name, r in p.resources().items()}
    uids = {n: live(cluster, "configmap", i.partition("/")[2], p.ns)["metadata"]["uid"]
            for n, i in before.items() if n != "ns"}  # fmt: skip

    explicit = """
        def placed(args):
            if args.props.get("kind") != "ConfigMap":
                return None
            meta = {**(args.props.get("metadata") or {}), "namespace": NS}
            return sw.ResourceTransformResult({**args.props, "metadata": meta}, args.opts)


        sw.register_resource_transform(placed)
        """
    p.program(textwrap.dedent(program).replace("TRANSFORM", textwrap.dedent(explicit)))
    assert p.preview().changed() == {"auto": "update", "named": "update"}
    p.up()
    assert {name: r["id"] for name, r in p.resources().items()} == before
    for name, uid in uids.items():
        found = live(cluster, "configmap", before[name].partition("/")[2], p.ns)
        assert found["metadata"]["uid"] == uid, name
    assert p.preview().changed() == {}


def test_a_namespace_that_depends_on_an_object_inside_it_is_a_cycle(
    new_project: Any, cluster: LiveCluster
) -> None:
    # The program's `depends_on` dropped the ConfigMap's need of its Namespace: the ConfigMap
    # was sent first, and the run failed at apply time with a line about a missing namespace.
    p = new_project()
    p.program(
        """
        cm = k8s.core.v1.ConfigMap("cm", metadata={"name": "cm", "namespace": NS}, data={"a": "1"})
        ns = k8s.core.v1.Namespace("ns", metadata={"name": NS},
                                   opts=sw.ResourceOptions(depends_on=[cm]))
        """
    )
    ns, cm = (
        p.urn("kubernetes:core/v1:Namespace", "ns"),
        p.urn("kubernetes:core/v1:ConfigMap", "cm"),
    )
    main = p.root / "__main__.py"
    said = set()
    for command in (("preview",), ("up", "--yes")):
        refused = p.sw(*command, rc=2)
        (line,) = refused.err.strip().splitlines()
        assert line.startswith(
            f"error: {main.name}:{PRELUDE_LINES + 2}: dependency cycle: {cm} -> {ns} -> {cm} ("
        ), line
        assert f"{cm} is inside the Namespace {ns}, so it cannot exist before it" in line, line
        assert line.endswith(
            f"declared: kubernetes:core/v1:ConfigMap cm ({main.name}:{PRELUDE_LINES + 2}), "
            f"kubernetes:core/v1:Namespace ns ({main.name}:{PRELUDE_LINES + 3})"
        ), line
        assert "Traceback" not in refused.err and "step" not in refused.out
        said.add(line)
    assert len(said) == 1  # the preview says what `up` does
    assert get(cluster, "namespace", p.ns) is None
    assert get(cluster, "configmap", "cm", p.ns) is None
    assert not p.resources()
