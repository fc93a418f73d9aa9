"""A CustomResourceDefinition and objects of its kind in a YAML program: the object its new
CRD's schema refuses fails the preview in the server's words, a valid one applies and stays
unchanged, and dropping the CRD while the object stays declared is refused (naming the
object's line), as in a Python program. A misspelt field in a reference into a built-in kind's
live object is refused before anything changes, where it read null. A field newer than the
definitions goes through Pulumi's CustomResource type to the server, which judges it."""

from __future__ import annotations

import textwrap
from typing import Any

import pytest
from test_cli_lifecycle import get, live
from test_cli_lifecycle import new_project as new_project  # the fixture

pytestmark = pytest.mark.integration

LiveCluster = Any

HEAD = """
name: {name}
runtime: yaml
resources:
  ns:
    type: kubernetes:core/v1:Namespace
    properties:
      metadata: {{name: {ns}}}
"""

CRD = """
  engines:
    type: kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition
    properties:
      metadata: {name: engines.yamlprog.example.com}
      spec:
        group: yamlprog.example.com
        scope: Namespaced
        names: {plural: engines, singular: engine, kind: Engine}
        versions:
          - name: v1
            served: true
            storage: true
            schema:
              openAPIV3Schema:
                type: object
                properties:
                  spec:
                    type: object
                    required: [size]
                    properties:
                      size: {type: integer}
                      fuel: {type: string, enum: [diesel, electric]}
"""


def _engine(spec: str) -> str:
    return f"""
  e1:
    type: kubernetes:yamlprog.example.com/v1:Engine
    properties:
      metadata:
        name: e1
        namespace: ${{ns.metadata.name}}
      spec: {spec}
"""


def test_a_crd_and_its_objects_in_a_yaml_program(new_project: Any, cluster: LiveCluster) -> None:
    p = new_project()

    def program(*parts: str) -> None:
        head = HEAD.format(name=p.name, ns=p.ns)
        (p.root / "Stackwright.yaml").write_text(textwrap.dedent(head).lstrip() + "".join(parts))

    program(CRD, _engine("{fuel: coal}"))
    (failure,) = p.preview(rc=2).summary["failures"]  # bad input, at the entry's line
    assert failure.startswith("Stackwright.yaml:"), failure
    assert 'Engine.yamlprog.example.com "e1" is invalid: ' in failure, failure
    assert "spec.size: Required value" in failure, failure
    assert 'spec.fuel: Unsupported value: "coal": supported values: "diesel", "electric"' in (
        failure
    )
    assert get(cluster, "customresourcedefinitions", "engines.yamlprog.example.com") is None

    program(CRD, _engine("{size: 2, fuel: electric}"))
    assert p.up().summary["counts"] == {"create": 3}
    assert live(cluster, "engines.yamlprog.example.com", "e1", p.ns)["spec"] == {
        "size": 2,
        "fuel": "electric",
    }
    assert p.preview().changed() == {}

    program(_engine("{size: 2, fuel: electric}"))
    refused = p.sw("preview", rc=2)
    (line,) = refused.err.strip().splitlines()
    assert "Stackwright.yaml:" in line and "CustomResourceDefinition engines.yamlprog" in line, line
    assert "Traceback" not in refused.err

    program(CRD, _engine("{size: 2, fuel: electric}"))
    p.sw("destroy", "--yes")
    assert get(cluster, "customresourcedefinitions", "engines.yamlprog.example.com") is None


SERVICE = """
  svc:
    type: kubernetes:core/v1:Service
    properties:
      metadata: {name: svc, namespace: "${ns.metadata.name}"}
      spec: {ports: [{port: 80}]}
"""

LATER = """
  later:
    type: kubernetes:core/v1:ConfigMap
    properties:
      metadata: {name: later, namespace: "${ns.metadata.name}"}
      data: {ip: "${svc.spec.clusterIP}"}
"""


@pytest.mark.parametrize(
    ("good", "bad", "read", "said"),
    [
        # Read null once applied, as the real field does on a ClusterIP Service: an export
        # null for good, with no word of the typo.
        (
            "svc.status.loadBalancer.ingress[0].ip",
            "svc.status.loadBalncer.ingress[0].ip",
            None,
            "Service has no field status.loadBalncer (did you mean loadBalancer?)",
        ),
        # Read null too: the field table marked a scalar field and a free-keyed map alike.
        (
            "svc.spec.ports[0].port",
            "svc.spec.ports[0].port.number",
            80,
            "Service has no field spec.ports[0].port.number (spec.ports[0].port is an integer, "
            "which has no fields: read spec.ports[0].port itself)",
        ),
    ],
    ids=["misspelt", "below-a-scalar"],  # short: the project is named after the test
)
def test_a_wrong_reference_is_refused(
    new_project: Any, cluster: LiveCluster, good: str, bad: str, read: Any, said: str
) -> None:
    p = new_project()

    def program(reference: str, *parts: str) -> None:
        head = HEAD.format(name=p.name, ns=p.ns)
        outputs = (
            f"outputs:\n  ref: ${{{reference}}}\n"
            "  engine: ${e1.status.anything}\n"
            "  size: ${e1.spec.size.anything}\n"
            '  label: ${svc.metadata.labels["app.kubernetes.io/name"]}\n'
            "  other: ${svc.metadata.labels.anything}\n"
        )
        (p.root / "Stackwright.yaml").write_text(
            textwrap.dedent(head).lstrip() + "".join(parts) + outputs
        )

    program(good, CRD, _engine("{size: 2}"), SERVICE)
    up = p.up()
    # Real fields the live object lacks read null; free keys and a CRD kind's fields (below
    # its scalars too) are not checked.
    assert up.summary["outputs"] == {
        "ref": read,
        "engine": None,
        "size": None,
        "label": None,
        "other": None,
    }
    before = p.state()

    program(bad, CRD, _engine("{size: 2}"), SERVICE, LATER)
    written = (p.root / "Stackwright.yaml").read_text().splitlines()
    at = written.index(f"  ref: ${{{bad}}}") + 1
    for command in (("preview",), ("up", "--yes")):
        refused = p.sw(*command, rc=2)
        (line,) = refused.err.strip().splitlines()
        assert line.endswith(f"Stackwright.yaml:{at}: output ref: ${{{bad}}}: {said}"), line
        assert "Traceback" not in refused.err
    assert get(cluster, "configmaps", "later", p.ns) is None
    assert p.state() == before
    p.sw("destroy", "--yes")  # the CRD, which the next case declares again
    assert get(cluster, "customresourcedefinitions", "engines.yamlprog.example.com") is None


NEWER = """
  web:
    type: {type}
    properties:{kind}
      metadata: {{name: web, namespace: "${{ns.metadata.name}}"}}
      spec:
        selector: {{matchLabels: {{app: web}}}}
        template:
          metadata: {{labels: {{app: web}}}}
          spec:
            hostnameOverride: web-host
            containers: [{{name: web, image: nginx:1.29}}]
"""


def test_a_field_newer_than_the_definitions_goes_through_the_custom_resource_type(
    new_project: Any, cluster: LiveCluster
) -> None:
    # Kubernetes 1.34's `hostnameOverride` is no field of the 1.33 definitions: the built-in
    # type refuses it, naming the way through, which sends it unchecked under the same URN.
    p = new_project()
    head = textwrap.dedent(HEAD.format(name=p.name, ns=p.ns)).lstrip()
    builtin = NEWER.format(type="kubernetes:apps/v1:Deployment", kind="")
    (p.root / "Stackwright.yaml").write_text(head + builtin)
    refused = p.sw("preview", rc=2)
    (line,) = refused.err.strip().splitlines()
    assert "PodSpec has no field 'hostnameOverride'; did you mean 'hostname'? (or a field " in line
    assert (
        "declare the object as `type: kubernetes:apiextensions.k8s.io:CustomResource` with "
        "`apiVersion: apps/v1` and `kind: Deployment` among its properties" in line
    ), line

    custom = NEWER.format(
        type="kubernetes:apiextensions.k8s.io:CustomResource",
        kind="\n      apiVersion: apps/v1\n      kind: Deployment",
    )
    (p.root / "Stackwright.yaml").write_text(head + custom)
    planned = p.preview()  # Stackwright's check passes: the server is asked
    assert planned.changed() == {"ns": "create", "web": "create"}
    # The local cluster serves 1.33's schema, so it refuses the field as a 1.33 API server's
    # server-side apply does (a 1.34 one takes it): at the entry's line, in the server's
    # words, under the Deployment's own URN. Nothing was applied of it.
    said = (
        "Stackwright.yaml:9: kubernetes:apps/v1:Deployment web: failed to create typed patch "
        f"object ({p.ns}/web; apps/v1, Kind=Deployment): .spec.template.spec.hostnameOverride: "
        "field not declared in schema"
    )
    up = p.up(rc=1)
    (failure,) = up.summary["failures"]
    assert failure.endswith(said), failure
    urns = [e["urn"] for e in up.of("step-started") if e["name"] == "web"]
    assert urns == [f"urn:sw:dev::{p.name}::kubernetes:apps/v1:Deployment::web"], urns
    assert set(p.resources()) == {"ns"}
    assert get(cluster, "deployments", "web", p.ns) is None
    # With its namespace there, the preview's dry run asks the server too, and says the same.
    (failure,) = p.preview(rc=2).summary["failures"]
    assert failure.endswith(said), failure
