"""A CustomResourceDefinition and objects of its kind, in one program.

Stackwright orders the CRD first and waits until it is Established before it
creates the custom objects, with no depends_on needed.
"""

import stackwright as sw
import stackwright.kubernetes as k8s

crd = k8s.apiextensions.v1.CustomResourceDefinition(
    "widgets",
    metadata={"name": "widgets.example.com"},
    spec={
        "group": "example.com",
        "scope": "Namespaced",
        "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "shortNames": ["wd"]},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "subresources": {"status": {}},
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {
                                "type": "object",
                                "required": ["size"],
                                "properties": {
                                    "size": {"type": "integer", "minimum": 1},
                                    "colour": {"type": "string", "enum": ["red", "green", "blue"]},
                                },
                            },
                            "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                        },
                    }
                },
            }
        ],
    },
)

widgets = [
    k8s.apiextensions.CustomResource(
        f"widget-{colour}",
        api_version="example.com/v1",
        kind="Widget",
        metadata={"name": f"widget-{colour}", "namespace": "default"},
        spec={"size": size, "colour": colour},
    )
    for colour, size in (("red", 1), ("green", 2), ("blue", 3))
]

sw.export("crd", crd.metadata["name"])
sw.export("widgets", sw.Output.all(*(w.metadata["name"] for w in widgets)))
