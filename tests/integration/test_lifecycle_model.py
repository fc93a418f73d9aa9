"""A model-based lifecycle test: random edits of one Python program, each through the real CLI.

A seeded generator keeps a model of a program — Namespaces, ConfigMaps, Secrets,
ServiceAccounts, Roles and RoleBindings, Services selecting Deployments, CRDs (namespaced
and cluster-scoped) with objects of their kinds (`k8s.apiextensions.CustomResource`),
ConfigMapPatches of ConfigMaps made through the API, named and auto-named, with options
chosen at random (protect, retain_on_delete, delete_before_replace, replace_on_changes,
ignore_changes on a data key, depends_on, aliases, values taken from another resource's
Output) — and edits it ~10 times: add,
remove, change a mutable field, change an immutable one, rename with an alias, toggle an
option, move to another namespace, drift made through the API and then refreshed, move
into, out of or between `sw.ComponentResource`s — components nest — with an alias (the old
URN, or `parent=`), rename, retype or move a component with an alias on it alone (what it
holds, at any depth, comes along by the aliases it inherits), drop a component with all it
holds, or only it (what it held moves up, by aliases naming it by its URN), adopt a
ConfigMap, Deployment or Service made through the API (`import_`, as it is or otherwise
than the program says), add a CRD with objects of its kind or remove it with them (they go
first), add a property to its schema or a version it serves, change its scope (a replacement:
the objects of its kind made again, in or out of a namespace), set an object's new property or
change its spec or move it to the CRD's new version, patch a ConfigMap made through the
API or one of the program (named by its Output), change the Patch (a key changed,
added or dropped: given back) or drop it (its fields given back, or kept with
`retain_on_delete`), add a `k8s.yaml.ConfigFile`, edit its file (an object changed, added
or dropped) or remove it; now and then two at once, on resources apart (or moves and renames
of a component and what it holds); now and then run as `up --target X` first (only X and
what it needs change, then a full `up`), or with the first `up` killed -9 at a random
moment (the next converges). After each edit:

1. `preview --json` predicted, per URN, exactly the operations `up --yes --json` did (with
   `--target` too), and the model's own expectation for what the edit touched;
2. `preview --expect-no-changes` after `up` exits 0;
3. the state and the cluster agree (`crash_run.check_agrees`), every object has the
   program's fields, where the program puts it, and the state records the program's
   components and every resource's parent; a CRD is created before the objects of its kind
   and deleted after them;
4. objects left behind by `retain_on_delete` stay in the cluster without the stack's marks;
   each patched ConfigMap holds its creator's data and its Patches' fields, no more;
5. at the end `destroy --yes` leaves no object of the stack, and a second one is a no-op.

Seeds: `SEEDS` below (deterministic in CI); `LIFECYCLE_MODEL_SEEDS=200` runs seeds 0…199,
`LIFECYCLE_MODEL_SEEDS=17,42` (or `17,`) those. A failure names the seed, the step and the program.
"""

from __future__ import annotations

import base64
import copy
import json
import os
import random
import re
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from crash_run import LiveCluster, Project, check_agrees, managed_metadata, started

pytestmark = pytest.mark.integration

#: Chosen so that together they make every kind of edit (`test_the_default_seeds_make_every_edit`).
SEEDS = (488, 1790, 1113, 2248, 1774, 1653, 1921)


def _seeds() -> list[int]:
    wanted = os.environ.get("LIFECYCLE_MODEL_SEEDS", "")
    if not wanted:
        return list(SEEDS)
    if "," in wanted or not wanted.isdigit():
        return [int(s) for s in wanted.split(",") if s.strip()]
    return list(range(int(wanted)))


STACK = "dev"
TYPES = {
    "Namespace": "kubernetes:core/v1:Namespace",
    "ConfigMap": "kubernetes:core/v1:ConfigMap",
    "Secret": "kubernetes:core/v1:Secret",
    "ServiceAccount": "kubernetes:core/v1:ServiceAccount",
    "Role": "kubernetes:rbac.authorization.k8s.io/v1:Role",
    "RoleBinding": "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding",
    "Service": "kubernetes:core/v1:Service",
    "Deployment": "kubernetes:apps/v1:Deployment",
    "CRD": "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition",
    "ConfigMapPatch": "kubernetes:core/v1:ConfigMapPatch",
}
CLASSES = {
    "Namespace": "k8s.core.v1.Namespace",
    "ConfigMap": "k8s.core.v1.ConfigMap",
    "Secret": "k8s.core.v1.Secret",
    "ServiceAccount": "k8s.core.v1.ServiceAccount",
    "Role": "k8s.rbac.v1.Role",
    "RoleBinding": "k8s.rbac.v1.RoleBinding",
    "Service": "k8s.core.v1.Service",
    "Deployment": "k8s.apps.v1.Deployment",
    "CRD": "k8s.apiextensions.v1.CustomResourceDefinition",
    "Custom": "k8s.apiextensions.CustomResource",
    "ConfigMapPatch": "k8s.core.v1.ConfigMapPatch",
}
PATHS = {
    "Namespace": "/api/v1/namespaces",
    "ConfigMap": "/api/v1/namespaces/{ns}/configmaps",
    "Secret": "/api/v1/namespaces/{ns}/secrets",
    "ServiceAccount": "/api/v1/namespaces/{ns}/serviceaccounts",
    "Role": "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/roles",
    "RoleBinding": "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/rolebindings",
    "Service": "/api/v1/namespaces/{ns}/services",
    "Deployment": "/apis/apps/v1/namespaces/{ns}/deployments",
    "CRD": "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
    "ConfigMapPatch": "/api/v1/namespaces/{ns}/configmaps",
}
#: What neither `retain_on_delete` nor drift is modelled for: a retained CRD would keep
#: objects the model no longer tells of; a custom object goes with its CRD.
NOT_RETAINED = ("CRD", "Custom")
#: What replace_on_changes names, per kind, when the generator sets it.
REPLACE_ON = {"ConfigMap": "data", "Role": "rules", "ServiceAccount": "metadata.labels"}
AUTO_NAME = re.compile(r"^.+-[0-9a-f]{8}$")
#: The types of the model's components (`sw.ComponentResource`): a child's URN carries those of
#: its parent chain, outermost first (`acme:model:Group$acme:model:Team$kubernetes:…`).
COMPONENT_TYPES = ("acme:model:Group", "acme:model:Team")
FILE_TYPE = "kubernetes:yaml:ConfigFile"
MARKS = ("app.kubernetes.io/managed-by", "stackwright.io/urn", "stackwright.io/stack")


# --- the model ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Moved:
    """An alias of a move or rename: `sw.Alias(**fields)` naming only what changed (`parent`
    names a component by its key, None the stack), or the URN it had then — without fields,
    or where the component it names cannot be written (gone, or declared after it)."""

    urn: str
    fields: tuple[tuple[str, str | int | None], ...] = ()
    #: The URN the component `parent` names had then: `sw.Alias(parent=<it>)` once that
    #: component cannot be written.
    parent_urn: str = ""


@dataclass
class Component:
    """One `sw.ComponentResource` of the program (`c<key>`), in another one or not."""

    key: int
    logical: str
    type_: str = COMPONENT_TYPES[0]
    parent: int | None = None
    moved: list[Moved] = field(default_factory=list)


@dataclass
class Res:
    """One resource of the program: where its object is, its fields and its options."""

    key: int  # its variable in the program (`r<key>`), stable through renames
    kind: str
    logical: str
    name: str | None  # None: auto-named
    namespace: str | None  # None: a Namespace
    data: dict[str, str] = field(default_factory=dict)  # ConfigMap / Secret data, labels
    ref: tuple[int, str] | None = None  # a ConfigMap's data["ref"]: (key, "name"|"clusterIP")
    app: str = ""  # a Deployment's selector label; the Deployment a Service selects: "d<key>"
    selects: int = -1  # a Service's Deployment; a RoleBinding's Role
    version: int = 0  # a Deployment's template annotation, a Service's port, a Role's verbs
    secret_type: str = "Opaque"
    protect: bool = False
    retain: bool = False
    delete_first: bool = False
    replace_on: bool = False
    ignore: str = ""  # a ConfigMap data key under ignore_changes
    depends_on: list[int] = field(default_factory=list)
    aliases: list[str] = field(default_factory=list)
    #: The component it is in (its key), and the aliases that carry it across its moves
    #: into, out of and between components.
    parent: int | None = None
    moved: list[Moved] = field(default_factory=list)
    #: The `namespace/name` it adopted its object by (`import_`), while the program says so.
    import_id: str | None = None
    #: `force=True`: an adopted object's fields stay its creator's too (README "import_"),
    #: so a change of one is a conflict with it unless forced (seed 44 of the first
    #: exploration: `conflict on .data.k1 with manager python-httpx`).
    force: bool = False
    #: The ignored key's value as recorded (a replacement's new object gets it) and as the
    #: object has it (an update sends that: README "Patching objects…", "as an object's are").
    ignored_input: str | None = None
    ignored_live: str | None = None
    #: A CRD's scope (`Namespaced`, `Cluster`) and how many versions it serves (v1, v2);
    #: its `version` counts the properties its schema adds (`f0`, `f1`, …), its `app` is its
    #: kind. A custom object's CRD is its `selects`, its spec `{"size": version, **data}`,
    #: its API version `v<served>`.
    scope: str = ""
    served: int = 1
    #: A Patch's object's data as its creator made it (through the API).
    made: dict[str, str] = field(default_factory=dict)

    def refers_to(self) -> set[int]:
        """The resources whose Outputs or options this one's declaration names."""
        found = set(self.depends_on)
        if self.ref is not None:
            found.add(self.ref[0])
        if self.kind in ("Service", "RoleBinding", "Custom") or self.patches_own():
            found.add(self.selects)
        return found

    def patches_own(self) -> bool:
        """Whether it is a Patch of a ConfigMap of the program (`selects`), named by its
        Output (else of one made through the API, named `name`)."""
        return self.kind == "ConfigMapPatch" and self.selects >= 0


@dataclass
class YamlFile:
    """A `k8s.yaml.ConfigFile` of the program (`f<key>`) and the ConfigMaps its file holds:
    the objects' names and their `data["v"]`, all in one namespace."""

    key: int
    logical: str
    namespace: str
    docs: dict[str, str] = field(default_factory=dict)

    def children(self) -> list[Res]:
        """Its objects, as the model's resources would be (checked alike)."""
        return [
            Res(
                -1,
                "ConfigMap",
                f"ConfigMap:{self.namespace}/{name}",
                name,
                self.namespace,
                {"v": v},
            )
            for name, v in self.docs.items()
        ]

    def text(self) -> str:
        return "---\n".join(
            json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data})
            + "\n"
            for meta, data in (
                ({"name": name, "namespace": self.namespace}, {"v": v})
                for name, v in self.docs.items()
            )
        )


@dataclass
class Model:
    """The program: its resources by key, and where everything is named."""

    seed: int
    resources: dict[int, Res] = field(default_factory=dict)
    components: dict[int, Component] = field(default_factory=dict)
    files: dict[int, YamlFile] = field(default_factory=dict)
    counter: int = 0

    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def fresh_name(self) -> str:
        """An object's name no other seed's program uses (one a failed seed left, or a
        retained object, would be taken)."""
        return f"m{self.seed}-{self.fresh('n')}"

    @property
    def group(self) -> str:
        """The API group of the program's CRDs (one per seed: none another seed's run has)."""
        return f"m{self.seed}.acme.io"

    def kind_of(self, res: Res) -> str:
        """`res`'s object's Kubernetes kind."""
        if res.kind == "Custom":
            return self.resources[res.selects].app
        return {"CRD": "CustomResourceDefinition", "ConfigMapPatch": "ConfigMap"}.get(
            res.kind, res.kind
        )

    @property
    def base_namespaces(self) -> list[str]:
        return [f"lm{self.seed}-a", f"lm{self.seed}-b"]

    def of(self, *kinds: str) -> list[Res]:
        return [r for r in self.resources.values() if r.kind in kinds]

    def dependents(self, key: int) -> list[Res]:
        return [r for r in self.resources.values() if key in r.refers_to()]

    def needs(self, res: Res) -> set[int]:
        """`res` and what an `up --target` of it takes along: what it names, and the
        Namespace it is in, and what those need in turn."""
        needed, todo = {res.key}, [res]
        while todo:
            res = todo.pop()
            also = {r.key for r in self.resources.values() if r.key in res.refers_to()}
            also |= {r.key for r in self.of("Namespace") if r.name == res.namespace}
            todo += [self.resources[k] for k in also - needed]
            needed |= also
        return needed

    def children(self, component: int) -> list[Res]:
        return [r for r in self.resources.values() if r.parent == component]

    def within(self, component: int) -> tuple[list[Component], list[Res]]:
        """The components and resources under `component`, at any depth (not itself)."""
        inner = [c for c in self.components.values() if component in self.ancestors(c.parent)]
        keys = {component, *(c.key for c in inner)}
        return inner, [r for r in self.resources.values() if r.parent in keys]

    def ancestors(self, component: int | None) -> list[int]:
        """`component` and the components it is in, innermost first."""
        found = []
        while component is not None:
            found.append(component)
            component = self.components[component].parent
        return found

    def prefix(self, component: int | None) -> str:
        """The types a child of `component` carries before its own (`A$B$`)."""
        chain = [self.components[c].type_ for c in reversed(self.ancestors(component))]
        return "".join(f"{t}$" for t in chain)

    def type_of(self, item: Res | Component) -> str:
        """Its URN's type: a component's child carries its parent chain's."""
        if isinstance(item, Component):
            own = item.type_
        elif item.kind == "Custom":
            own = f"kubernetes:{self.group}/v{item.served}:{self.kind_of(item)}"
        else:
            own = TYPES[item.kind]
        return self.prefix(item.parent) + own

    def urn_of(self, item: Res | Component) -> str:
        return self.urn(self.type_of(item), item.logical)

    def urn(self, type_: str, logical: str) -> str:
        return f"urn:sw:{STACK}::model{self.seed}::{type_}::{logical}"

    def named(self, logical: str) -> Res | Component | None:
        found = [*self.resources.values(), *self.components.values()]
        return next((x for x in found if x.logical == logical), None)

    def file_urns(self) -> dict[str, tuple[str | None, Res | None]]:
        """The URNs of the ConfigFiles and their objects: each one's parent's, and the
        object as a resource would be."""
        found: dict[str, tuple[str | None, Res | None]] = {}
        for file in self.files.values():
            parent = self.urn(FILE_TYPE, file.logical)
            found[parent] = (None, None)
            for child in file.children():
                found[self.urn(f"{FILE_TYPE}${TYPES['ConfigMap']}", child.logical)] = (
                    parent,
                    child,
                )
        return found

    def urn_named(self, logical: str) -> str | None:
        """The URN of the resource, component, ConfigFile or ConfigFile's object `logical`."""
        found = self.named(logical)
        if found is not None:
            return self.urn_of(found)
        for file in self.files.values():
            if file.logical == logical:
                return self.urn(FILE_TYPE, logical)
            if any(c.logical == logical for c in file.children()):
                return self.urn(f"{FILE_TYPE}${TYPES['ConfigMap']}", logical)
        return None


def _reads_an_output(model: Model, logical: str) -> bool:
    """Whether resource `logical` of `model` takes an input from another one's Output (a
    ConfigMap's `ref`, a RoleBinding's roleRef): known only once that one is applied."""
    res = next((r for r in model.resources.values() if r.logical == logical), None)
    return res is not None and (res.ref is not None or res.kind == "RoleBinding")


def render(model: Model) -> str:
    """The program's text."""
    lines = [
        "import stackwright as sw",
        "import stackwright.kubernetes as k8s",
        "",
    ]
    declared: set[int] = set()
    for comp in _component_order(model):
        opts = [f"parent=c{comp.parent}"] if comp.parent is not None else []
        aliases = [_alias(moved, declared) for moved in comp.moved]
        if aliases:
            opts.append(f"aliases=[{', '.join(aliases)}]")
        options = f", opts=sw.ResourceOptions({', '.join(opts)})" if opts else ""
        lines.append(
            f"c{comp.key} = sw.ComponentResource({comp.type_!r}, {comp.logical!r}{options})"
        )
        declared.add(comp.key)
    for file in model.files.values():
        lines.append(
            f"f{file.key} = k8s.yaml.ConfigFile({file.logical!r}, file='f{file.key}.yaml')"
        )
    for res in _declaration_order(model):
        lines.append(f"r{res.key} = {CLASSES[res.kind]}(")
        lines.append(f"    {res.logical!r},")
        meta: dict[str, Any] = {}
        if res.name is not None:
            meta["name"] = res.name
        if res.namespace is not None:
            meta["namespace"] = res.namespace
        if res.kind in ("Namespace", "ServiceAccount"):
            meta["labels"] = dict(res.data)
        if res.patches_own():
            meta["name"] = _Code(f"r{res.selects}.metadata['name']")
        lines.append(f"    metadata={meta!r},")
        lines.extend(f"    {line}," for line in _fields(res, model))
        opts = _options(res, set(model.components))
        if opts:
            lines.append(f"    opts=sw.ResourceOptions({opts}),")
        lines.append(")")
    return "\n".join(lines) + "\n"


class _Code(str):
    """Python the program holds as it is (its repr)."""

    def __repr__(self) -> str:
        return str(self)


def _component_order(model: Model) -> list[Component]:
    """The components, each after the one it is in."""
    return sorted(model.components.values(), key=lambda c: (len(model.ancestors(c.key)), c.key))


def _alias(moved: Moved, declared: set[int]) -> str:
    """`moved` as the program writes it."""
    if not moved.fields:
        return repr(moved.urn)
    said = []
    for what, value in moved.fields:
        if what != "parent":
            said.append(f"{what}={value!r}")
        elif value is None:
            said.append("parent=None")
        else:
            said.append(f"parent=c{value}" if value in declared else f"parent={moved.parent_urn!r}")
    return f"sw.Alias({', '.join(said)})"


def _declaration_order(model: Model) -> list[Res]:
    """The resources, each after those it names (a RoleBinding may take a later Role)."""
    done: list[Res] = []
    left = sorted(model.resources.values(), key=lambda r: r.key)
    while left:
        named = {r.key for r in done}
        ready = next(r for r in left if r.refers_to() <= named)
        done.append(ready)
        left.remove(ready)
    return done


def _fields(res: Res, model: Model) -> list[str]:
    if res.kind == "ConfigMap":
        data = ", ".join(f"{k!r}: {v!r}" for k, v in res.data.items())
        if res.ref is not None:
            source, what = res.ref
            path = 'metadata["name"]' if what == "name" else 'spec["clusterIP"]'
            data += f", 'ref': r{source}.{path}"
        return [f"data={{{data}}}"]
    if res.kind == "Secret":
        return [f"string_data={res.data!r}", f"type={res.secret_type!r}"]
    if res.kind == "Role":
        verbs = ["get", "list", "watch"][: 1 + res.version % 3]
        rule = {"apiGroups": [""], "resources": ["configmaps"], "verbs": verbs}
        return [f"rules=[{rule!r}]"]
    if res.kind == "RoleBinding":
        subject = {"kind": "ServiceAccount", "name": "default", "namespace": res.namespace}
        return [
            "role_ref={'apiGroup': 'rbac.authorization.k8s.io', 'kind': 'Role', "
            f"'name': r{res.selects}.metadata['name']}}",
            f"subjects=[{subject!r}]",
        ]
    if res.kind in ("Service", "Deployment", "CRD"):
        return [f"spec={_spec(res, model)!r}"]
    if res.kind == "Custom":
        return [
            f"api_version={f'{model.group}/v{res.served}'!r}",
            f"kind={model.kind_of(res)!r}",
            f"spec={_spec(res, model)!r}",
        ]
    if res.kind == "ConfigMapPatch":
        return [f"data={res.data!r}"]
    return []


def _spec(res: Res, model: Model, version: int | None = None) -> dict[str, Any]:
    """A Service's, a Deployment's, a CRD's or a custom object's spec (at `version`, else
    its own)."""
    version = res.version if version is None else version
    if res.kind == "CRD":
        return _crd_spec(res, model.group)
    if res.kind == "Custom":
        return {"size": version, **res.data}
    if res.kind == "Service":
        app = model.resources[res.selects].app
        return {"selector": {"app": app}, "ports": [{"port": 8000 + version}]}
    return {
        "replicas": 1,
        "selector": {"matchLabels": {"app": res.app}},
        "template": {
            "metadata": {"labels": {"app": res.app}, "annotations": {"v": str(version)}},
            "spec": {"containers": [{"name": "main", "image": "nginx:1.29"}]},
        },
    }


def _crd_spec(crd: Res, group: str) -> dict[str, Any]:
    """A CRD's spec: `spec.size`, and as many more properties as its `version` counts, in
    every version it serves (v1 stores)."""
    properties: dict[str, Any] = {"size": {"type": "integer", "minimum": 0}}
    properties.update({f"f{i}": {"type": "string"} for i in range(crd.version)})
    schema = {
        "openAPIV3Schema": {
            "type": "object",
            "properties": {"spec": {"type": "object", "properties": properties}},
        }
    }
    versions = [
        {"name": f"v{n}", "served": True, "storage": n == 1, "schema": schema}
        for n in range(1, crd.served + 1)
    ]
    plural = crd.app.lower() + "s"
    return {
        "group": group,
        "scope": crd.scope,
        "names": {"plural": plural, "singular": crd.app.lower(), "kind": crd.app},
        "versions": versions,
    }


def _crd_said(spec: dict[str, Any]) -> tuple[Any, ...]:
    """What of a CRD's spec the model says (not the API server's defaults)."""
    versions = [
        (
            v["name"],
            v["served"],
            v["storage"],
            sorted(v["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]),
        )
        for v in spec["versions"]
    ]
    return (spec["scope"], spec["names"]["kind"], spec["names"]["plural"], versions)


def _options(res: Res, components: set[int]) -> str:
    flags = {
        "protect": res.protect,
        "retain_on_delete": res.retain,
        "delete_before_replace": res.delete_first,
    }
    opts = [f"{option}=True" for option, on in flags.items() if on]
    if res.replace_on:
        opts.append(f"replace_on_changes=[{REPLACE_ON[res.kind]!r}]")
    if res.ignore:
        opts.append(f"ignore_changes=['data.{res.ignore}']")
    if res.depends_on:
        opts.append(f"depends_on=[{', '.join(f'r{k}' for k in sorted(res.depends_on))}]")
    if res.parent is not None:
        opts.append(f"parent=c{res.parent}")
    if res.import_id:
        opts.append(f"import_={res.import_id!r}")
    if res.force:
        opts.append("force=True")
    aliases = [f"sw.Alias(name={a!r})" for a in res.aliases]
    aliases += [_alias(moved, components) for moved in res.moved]
    if aliases:
        opts.append(f"aliases=[{', '.join(aliases)}]")
    return ", ".join(opts)


# --- the edits ----------------------------------------------------------------------------------


@dataclass
class Edit:
    """One edit of the program (or of the cluster under it) and what it should do."""

    what: str
    model: Model
    #: Logical name → the ops the step of that resource may take; every other resource's
    #: step is `same`, but for `may_change`'s (they read an Output of what the edit touched).
    expect: dict[str, set[str]] = field(default_factory=dict)
    may_change: set[str] = field(default_factory=set)
    #: A change made through the API before the run (kind, namespace, name, patch), and how
    #: it is taken in: "refresh" (`refresh --yes`, then `up`) or "up" (`up --refresh`).
    drift: tuple[Res, dict[str, Any]] | None = None
    refresh: str = ""
    #: The logical name of a protected resource the edit deletes (a removal or a
    #: replacement): refused, nothing changed.
    refused: str = ""
    #: A resource whose object is made through the API before the run, for the program to
    #: adopt (`import_`).
    premade: Res | None = None
    #: The logical name of the resource an `up --target` takes first (then a full `up`).
    target: str = ""
    #: When to kill -9 the first `up` (seconds after it started at the latest, and after
    #: its first changing step started): the next one converges.
    crash: tuple[float, float] | None = None
    #: The kinds of the edits it is made of (two at once, or one run with `--target`, …).
    parts: set[str] = field(default_factory=set)
    #: Made of moves and renames only (`Generator._renamed`).
    renames: bool = False

    def unprotected(self) -> Edit:
        """The edit once its refused resource is unprotected."""
        again = copy.deepcopy(self)
        again.refused = ""
        for res in again.model.resources.values():
            if res.logical == self.refused:
                res.protect = False
        return again

    @property
    def sort(self) -> str:
        """What kind of edit it is (`move`, `toggle protect`, `refused remove`, …)."""
        words = self.what.split()
        if self.target:
            return "up --target"
        if self.crash is not None:
            return "crashed up"
        if "; " in self.what:
            return "two at once"
        if self.refused:
            return f"refused {words[0]}"
        if self.drift is not None:
            return f"drift, then {'up --refresh' if self.refresh == 'up' else 'refresh'}"
        if words[:2] == ["change", "the"]:
            return f"immutable {words[2]}"
        if words[0] == "change":
            return "mutable"
        if words[0] in ("toggle", "stop", "adopt") or words[1] == "component":
            return " ".join(words[:2])
        return words[0]

    @property
    def sorts(self) -> set[str]:
        """Its kind and those of the edits it is made of."""
        return {self.sort, *self.parts}


#: What no resource `depends_on`. A Namespace: the objects in one come after it anyway.
#: (A Service may be: one whose selected Pods come from what waits for it — a Role that
#: `depends_on` a ConfigMap holding its clusterIP, then by Kubernetes' rules the Deployment
#: of its namespace — is not waited on for endpoints; seeds 108 and 318 hung on it.)
_NOT_DEPENDED_ON = ("Namespace",)
#: What `depends_on` nothing.
_DEPENDING_ON_NOTHING: tuple[str, ...] = ()


def _renamed_op(item: Res | Component) -> str:
    """The op of a resource or component whose URN changes: a resource's object is applied
    once more to carry its new marks (README "Marks on managed objects"); a Patch's object
    carries none, a component has no object."""
    return "update" if isinstance(item, Res) and item.kind != "ConfigMapPatch" else "same"


def _may_replace_protected(edit: Edit) -> bool:
    """Whether a protected reader of what the edit changes may be replaced with it (its
    replacement refused): the model leaves those out rather than tell which are. (A Patch
    of a ConfigMap given a new name is replaced: seed 50 of the CRD and Patch exploration.)"""
    return any(
        r.protect and (r.replace_on or r.kind == "RoleBinding" or r.patches_own())
        for r in edit.model.resources.values()
        if r.logical in edit.may_change
    )


def _keys(logical: set[str], *models: Model) -> set[tuple[str, int]]:
    """The resources and components named `logical` in any of `models`, by key (names are
    never reused; a renamed one is found by its old name in one, by its new in another)."""
    found = {("r", r.key) for m in models for r in m.resources.values() if r.logical in logical}
    found |= {("c", c.key) for m in models for c in m.components.values() if c.logical in logical}
    found |= {
        ("f", f.key)
        for m in models
        for f in m.files.values()
        if logical & {f.logical, *(c.logical for c in f.children())}
    }
    return found


def _aliases_hold(start: Model, first: Model, second: Model) -> bool:
    """Whether the aliases the second of two edits (`first` → `second`) adds name what the
    state holds (`start`'s URNs): so, if what it moves the first did not move as well (an
    alias names one URN a resource had, not two: seed 879 of the fourth exploration)."""
    for old, new in ((first.resources, second.resources), (first.components, second.components)):
        for key, item in new.items():
            was = old.get(key)
            if was is None or len(item.moved) == len(was.moved):
                continue
            stated = (
                start.resources.get(key) if isinstance(item, Res) else start.components.get(key)
            )
            if stated is not None and start.urn_of(stated) != first.urn_of(was):
                return False
    return True


class Generator:
    """Random programs and edits of them, from one seed."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.model = Model(seed)

    def first(self) -> Edit:
        m = self.model
        for namespace in m.base_namespaces:
            self._put(m, Res(self._key(m), "Namespace", m.fresh("ns"), namespace, None, {"v": "0"}))
        if self.rng.random() < 0.5:
            outer = self._component(m, None)
            if self.rng.random() < 0.4:
                self._component(m, outer.key)
        if self.rng.random() < 0.3:
            self._crd_with_objects(m)
        for _ in range(self.rng.randint(4, 6)):
            self._add(m)
        expect = {r.logical: {"create"} for r in m.resources.values()}
        expect.update({c.logical: {"create"} for c in m.components.values()})
        return Edit("the first program", m, expect)

    def _component(self, m: Model, parent: int | None) -> Component:
        """A new component (in `parent`); its key is never reused (aliases name it by it)."""
        m.counter += 1
        comp = Component(m.counter, m.fresh("g"), self.rng.choice(COMPONENT_TYPES), parent)
        m.components[comp.key] = comp
        return comp

    def _key(self, m: Model) -> int:
        return max(m.resources, default=-1) + 1

    def _put(self, m: Model, res: Res) -> Res:
        m.resources[res.key] = res
        return res

    # -- building blocks --

    def _name(self, m: Model, prefix: str) -> str | None:
        return m.fresh_name() if self.rng.random() < 0.5 else None

    def _add(self, m: Model, crd: Res | None = None) -> Res:
        """A new resource of a random kind (an object of `crd`'s kind, if given)."""
        rng = self.rng
        kinds = ["ConfigMap", "ConfigMap", "Secret", "ServiceAccount", "Role", "Deployment"]
        kinds += ["Namespace"]
        if m.of("Deployment"):
            kinds.append("Service")
        if m.of("Role"):
            kinds.append("RoleBinding")
        if m.of("CRD"):
            kinds.append("Custom")
        kind = rng.choice(kinds) if crd is None else "Custom"
        key = self._key(m)
        ns = rng.choice(m.base_namespaces)
        res = Res(key, kind, m.fresh(kind[:2].lower()), self._name(m, "n"), ns)
        if kind == "Namespace":
            res.namespace = None
            res.data = {"v": "0"}
        elif kind == "ConfigMap":
            res.data = {"k1": "a", "k2": "b"}
            sources = [r for r in m.of("ConfigMap", "Service")]
            if sources and rng.random() < 0.5:
                source = rng.choice(sources)
                res.ref = (source.key, "name" if source.kind == "ConfigMap" else "clusterIP")
            if rng.random() < 0.25:
                res.replace_on = True
            if rng.random() < 0.3:
                res.ignore = "k2"
                res.ignored_input = res.ignored_live = res.data["k2"]
        elif kind == "Secret":
            res.data = {"s": "x"}
        elif kind == "ServiceAccount":
            res.data = {"v": "0"}
            res.replace_on = rng.random() < 0.25
        elif kind == "Role":
            res.replace_on = rng.random() < 0.25
        elif kind == "Deployment":
            res.app = m.fresh("app")
        elif kind == "Service":
            target = rng.choice(m.of("Deployment"))
            res.namespace, res.selects = target.namespace, target.key
        elif kind == "RoleBinding":
            role = rng.choice(m.of("Role"))
            res.namespace, res.selects = role.namespace, role.key
        elif kind == "Custom":
            crd = crd or rng.choice(m.of("CRD"))
            res.selects, res.version = crd.key, 1
            if crd.scope == "Cluster":
                res.namespace = None
        res.protect = rng.random() < 0.15
        res.retain = rng.random() < 0.2 and kind not in NOT_RETAINED
        res.delete_first = rng.random() < 0.2
        others = [r for r in m.resources.values() if r.kind not in _NOT_DEPENDED_ON]
        if others and kind not in _DEPENDING_ON_NOTHING and rng.random() < 0.2:
            res.depends_on = [rng.choice(others).key]
        if m.components and rng.random() < 0.4:
            res.parent = rng.choice(list(m.components))
        return self._put(m, res)

    def _crd_with_objects(self, m: Model) -> list[Res]:
        """A CRD (namespaced or cluster-scoped) and one or two objects of its kind."""
        kind = f"W{m.fresh('')}"
        crd = Res(self._key(m), "CRD", m.fresh("cr"), f"{kind.lower()}s.{m.group}", None)
        crd.app, crd.scope = kind, self.rng.choice(["Namespaced", "Cluster"])
        crd.protect = self.rng.random() < 0.15
        if m.components and self.rng.random() < 0.3:
            crd.parent = self.rng.choice(list(m.components))
        self._put(m, crd)
        made = [crd]
        made += [self._add(m, crd) for _ in range(self.rng.randint(1, 2))]
        return made

    def _removable(self, m: Model) -> list[Res]:
        return [
            r
            for r in m.resources.values()
            if r.namespace is not None or r.name not in m.base_namespaces
            if not m.dependents(r.key)
        ]

    # -- one edit --

    def edit(self) -> Edit:
        """A random edit of the current model; now and then two at once, on resources apart
        (neither touches what the other touches or what reads it)."""
        edit = self._one_or_two()
        if edit.refused or edit.drift is not None or edit.premade is not None:
            return edit
        if "CRD scope" in edit.sorts:  # an `up --target` of the CRD deletes its objects too
            return edit
        way = self.rng.random()
        edit.parts |= edit.sorts
        if way < 0.12 and self._targets(edit):
            # `up --target` of what the edit touched, or now and then of anything.
            # Not a Service, nor what needs one: the Pods it waits for come from a Deployment
            # it names by a label, no dependency a target takes along (one whose selector
            # changes with the Deployment's would wait for Pods no run makes; seed 26 hung on
            # it, and seed 161 of the third exploration on a ConfigMap holding its clusterIP).
            targets = self._targets(edit)
            touched = [n for n in edit.expect if n in targets]
            anything = sorted(targets)
            edit.target = self.rng.choice(touched if touched and way < 0.09 else anything)
        elif way < 0.22:
            edit.crash = (self.rng.uniform(1.0, 4.0), self.rng.uniform(0.0, 0.4))
        return edit

    def _targets(self, edit: Edit) -> set[str]:
        m = edit.model
        return {
            r.logical
            for r in m.resources.values()
            if not any(m.resources[k].kind == "Service" for k in m.needs(r))
        }

    def _one_or_two(self) -> Edit:
        first = self._one(self.model)
        if first.refused or first.drift is not None or self.rng.random() < 0.7:
            return first
        second = self._one(first.model)
        touched = _keys({*first.expect, *first.may_change}, self.model, first.model)
        also = _keys({*second.expect, *second.may_change}, first.model, second.model)
        if second.refused or second.drift is not None or first.premade or second.premade:
            return first
        what = f"{first.what}; {second.what}"
        if (
            first.renames
            and second.renames
            and _aliases_hold(self.model, first.model, second.model)
        ):
            both = self._renamed(self.model, second.model, what)
            both.parts = first.sorts | second.sorts
            return both
        if touched & also:
            return first
        expect = {**first.expect, **second.expect}
        both = Edit(what, second.model, expect)
        both.may_change = first.may_change | second.may_change
        both.parts = first.sorts | second.sorts
        return both

    def _one(self, model: Model) -> Edit:
        """One random edit of `model` (a copy of it, edited)."""
        choices = [
            (self._edit_add, 4),
            (self._edit_remove, 3),
            (self._edit_mutable, 4),
            (self._edit_immutable, 2),
            (self._edit_rename, 2),
            (self._edit_option, 2),
            (self._edit_move, 2),
            (self._edit_drift, 2),
            (self._edit_enter, 2),
            (self._edit_leave, 2),
            (self._edit_rename_component, 1),
            (self._edit_nest_component, 2),
            (self._edit_dissolve_component, 1),
            (self._edit_drop_component, 1),
            (self._edit_adopt, 1),
            (self._edit_add_crd, 1),
            (self._edit_remove_crd, 2),
            (self._edit_add_patch, 1),
            (self._edit_crd_or_patch, 3),
            (self._edit_config_file, 2),
        ]
        while True:
            make = self.rng.choices([c for c, _ in choices], [w for _, w in choices])[0]
            m = copy.deepcopy(model)
            edit = make(m)
            # `up` refuses a protected resource's replacement before any change only when it
            # can plan it before the run: its inputs hold no Output. One that reads an Output
            # fails its own step, and the run goes on with the others (as Pulumi's `up
            # --skip-preview`): so such a refused edit changes nothing else (a Service
            # selecting a Deployment whose selector changes would wait for Pods the refused
            # Deployment never makes: seed 24 of the second exploration hung on it).
            refused = edit is not None and edit.refused
            if refused and len(edit.expect) > 1 and _reads_an_output(edit.model, edit.refused):
                continue
            if edit is not None and not _may_replace_protected(edit):
                return edit

    def edits(self) -> Iterator[Edit]:
        """The first program and the seed's edits, each taken as done (a refused one once
        its resource is unprotected): what `Lifecycle` runs, without a cluster."""
        first = self.first()
        yield first
        self.accept(first.model)
        for _ in range(self.rng.randint(8, 12)):
            edit, before = self.edit(), self.model
            yield edit
            if self.model is before:  # not run: a simulation (else `Lifecycle` accepted it)
                self.accept(edit.unprotected().model if edit.refused else edit.model)

    def accept(self, model: Model) -> None:
        """The model moves on to `model`, applied."""
        self.model = model

    def _edit_add(self, m: Model) -> Edit:
        res = self._add(m)
        return Edit(f"add {res.kind} {res.logical}", m, {res.logical: {"create"}})

    def _edit_remove(self, m: Model, res: Res | None = None) -> Edit | None:
        candidates = self._removable(m)
        if not candidates:
            return None
        res = res or self.rng.choice(candidates)
        del m.resources[res.key]
        edit = Edit(f"remove {res.kind} {res.logical}", m, {res.logical: {"delete"}})
        edit.refused = res.logical if res.protect else ""
        if res.kind == "ConfigMapPatch":
            edit.parts.add("drop patch")
        return edit

    def _edit_add_crd(self, m: Model) -> Edit:
        made = self._crd_with_objects(m)
        edit = Edit(f"add CRD {made[0].logical}", m, {r.logical: {"create"} for r in made})
        edit.parts.add("add CRD")
        if made[0].scope == "Cluster":
            edit.parts.add("cluster-scoped custom")
        return edit

    def _edit_remove_crd(self, m: Model) -> Edit | None:
        """Remove a CRD with its objects (what nothing else reads): they go first."""
        removable = []
        for crd in m.of("CRD"):
            going = [crd, *m.dependents(crd.key)]
            keys = {r.key for r in going}
            if any({d.key for d in m.dependents(r.key)} - keys for r in going):
                continue
            if len([r for r in going if r.protect]) <= 1:
                removable.append(going)
        if not removable:
            return None
        going = self.rng.choice(removable)
        for res in going:
            del m.resources[res.key]
        what = f"remove CRD {going[0].logical} with {len(going) - 1} objects"
        edit = Edit(what, m, {r.logical: {"delete"} for r in going})
        edit.refused = next((r.logical for r in going if r.protect), "")
        edit.parts.add("remove CRD with objects")
        return edit

    def _edit_crd_or_patch(self, m: Model) -> Edit | None:
        """A change of a CRD, a custom object or a Patch, or a Patch dropped: weighted apart
        from the other resources' (the generic edits pick them seldom)."""
        candidates = m.of("CRD", "Custom", "ConfigMapPatch")
        if not candidates:
            return None
        res = self.rng.choice(candidates)
        if res.kind == "ConfigMapPatch" and self.rng.random() < 0.4:
            return self._edit_remove(m, res)
        return self._edit_mutable(m, res)

    def _edit_config_file(self, m: Model) -> Edit | None:
        """A ConfigFile added, its file edited (an object's value changed, one added or one
        dropped), or the ConfigFile removed with its objects."""
        rng = self.rng
        if not m.files or rng.random() < 0.3:
            m.counter += 1
            file = YamlFile(m.counter, m.fresh("file"), rng.choice(m.base_namespaces))
            file.docs = {m.fresh_name(): m.fresh("v") for _ in range(rng.randint(1, 3))}
            m.files[file.key] = file
            expect = {x.logical: {"create"} for x in [file, *file.children()]}
            edit = Edit(f"add ConfigFile {file.logical}", m, expect)
            edit.parts.add("add ConfigFile")
            return edit
        file = m.files[rng.choice(list(m.files))]
        if rng.random() < 0.25:
            del m.files[file.key]
            expect = {x.logical: {"delete"} for x in [file, *file.children()]}
            edit = Edit(f"remove ConfigFile {file.logical}", m, expect)
            edit.parts.add("remove ConfigFile")
            return edit
        how = rng.choice(["value", "add", "drop"] if len(file.docs) > 1 else ["value", "add"])
        before = {c.logical for c in file.children()}
        if how == "add":
            name = m.fresh_name()
            file.docs[name] = m.fresh("v")
        else:
            name = rng.choice(sorted(file.docs))
            if how == "drop":
                del file.docs[name]
            else:
                file.docs[name] = m.fresh("v")
        logical = f"ConfigMap:{file.namespace}/{name}"
        op = {"add": "create", "drop": "delete"}.get(how, "update")
        edit = Edit(f"change ConfigFile {file.logical} ({how})", m, {logical: {op}})
        assert (logical in before) == (how != "add")
        edit.parts.add("edit ConfigFile")
        return edit

    def _crd_scope(self, m: Model, crd: Res, objects: list[Res]) -> Edit:
        """A CRD's scope changed (immutable: a replacement, its name kept), the objects of
        its kind moved in or out of a namespace: the cluster deletes them with the old CRD,
        and they are made again after the new one."""
        crd.scope = "Cluster" if crd.scope == "Namespaced" else "Namespaced"
        for obj in objects:
            obj.namespace = (
                self.rng.choice(m.base_namespaces) if crd.scope == "Namespaced" else None
            )
        expect = {crd.logical: {"replace"}}
        expect.update({o.logical: {"create", "replace"} for o in objects})
        edit = Edit(f"change the scope of CRD {crd.logical} to {crd.scope}", m, expect)
        edit.parts.add("CRD scope")
        return edit

    def _edit_add_patch(self, m: Model) -> Edit:
        """A ConfigMapPatch of a ConfigMap made through the API (by another tool), or of one
        the program declares (named by its Output: README, it is applied first)."""
        res = Res(self._key(m), "ConfigMapPatch", m.fresh("pa"), m.fresh_name(), None)
        res.namespace = self.rng.choice(m.base_namespaces)
        res.made = {"own": "x"}
        res.data = {"p1": m.fresh("v")}
        res.protect = self.rng.random() < 0.15
        res.retain = self.rng.random() < 0.2
        own = [r for r in m.of("ConfigMap") if not any(p.selects == r.key for p in m.of(res.kind))]
        if own and self.rng.random() < 0.5:
            target = self.rng.choice(own)
            res.selects, res.name, res.namespace = target.key, None, target.namespace
            res.retain = False  # its fields would stay on an object the model tells apart
            if m.components and self.rng.random() < 0.3:
                res.parent = self.rng.choice(list(m.components))
            self._put(m, res)
            edit = Edit(f"add ConfigMapPatch {res.logical} of {target.logical}", m)
            edit.expect = {res.logical: {"create"}}
            edit.parts.add("patch own object")
            return edit
        if m.components and self.rng.random() < 0.3:
            res.parent = self.rng.choice(list(m.components))
        self._put(m, res)
        edit = Edit(f"add ConfigMapPatch {res.logical}", m, {res.logical: {"create"}})
        edit.premade = Res(-1, "ConfigMap", "", res.name, res.namespace, dict(res.made))
        edit.parts.add("add patch")
        return edit

    def readers(self, m: Model, res: Res) -> set[str]:
        """What reads `res`'s Outputs (a name, a clusterIP), and what reads those in turn:
        each may change with it (a reader replaced gets a new auto-name)."""
        found: set[str] = set()
        todo = [res.key]
        while todo:
            key = todo.pop()
            for reader in m.dependents(key):
                if reader.logical not in found:
                    found.add(reader.logical)
                    todo.append(reader.key)
        return found

    def _edit_mutable(self, m: Model, res: Res | None = None) -> Edit | None:
        res = res or self.rng.choice(list(m.resources.values()))
        op = {"update"}
        if res.kind in ("ConfigMap", "Secret", "Namespace", "ServiceAccount"):
            k = self.rng.choice([*res.data, "k3" if res.kind == "ConfigMap" else "s2"])
            res.data[k] = m.fresh("v")
            if res.kind == "ConfigMap" and k == res.ignore:
                # ignore_changes keeps the recorded value: nothing to do (README, Pulumi's).
                op = {"same"}
        elif res.kind == "CRD":
            way = self.rng.random()
            objects = m.dependents(res.key)
            alone = all(o.kind == "Custom" and not m.dependents(o.key) for o in objects)
            if way < 0.2 and alone and not any(o.protect for o in [res, *objects]):
                return self._crd_scope(m, res, objects)
            if res.served == 1 and way < 0.5:
                res.served, part = 2, "CRD version"
            else:
                res.version, part = res.version + 1, "CRD property"
            edit = Edit(f"change CRD {res.logical} ({part})", m, {res.logical: op})
            edit.parts.add(part)
            return edit
        elif res.kind == "Custom":
            crd = m.resources[res.selects]
            unset = [f"f{i}" for i in range(crd.version) if f"f{i}" not in res.data]
            way = self.rng.random()
            if crd.served != res.served and way < 0.3:
                # README "URN": the same object at another version of its kind, its record
                # moved to the new URN: an update of its apiVersion, nothing replaced.
                res.served = crd.served
                edit = Edit(f"change Custom {res.logical} to v{res.served}", m, {res.logical: op})
                edit.parts.add("custom apiVersion")
                return edit
            if unset and way < 0.7:
                res.data[self.rng.choice(unset)] = m.fresh("v")
            else:
                res.version += 1
            edit = Edit(f"change Custom {res.logical}", m, {res.logical: op})
            edit.parts.add("custom spec")
            return edit
        elif res.kind == "ConfigMapPatch":
            how = self.rng.choice(
                ["value", "add", "drop"] if len(res.data) > 1 else ["value", "add"]
            )
            if how == "drop":
                del res.data[self.rng.choice(sorted(res.data))]
            else:
                key = self.rng.choice(sorted(res.data)) if how == "value" else m.fresh("p")
                res.data[key] = m.fresh("v")
            edit = Edit(f"change ConfigMapPatch {res.logical} ({how})", m, {res.logical: op})
            edit.parts.add("change patch")
            return edit
        elif res.kind in ("Role", "Service", "Deployment"):
            res.version += 1
        else:
            return None
        if res.replace_on and op == {"update"}:
            op = {"replace"}
        edit = Edit(f"change {res.kind} {res.logical}", m, {res.logical: op})
        edit.may_change = self.readers(m, res) if op == {"replace"} else set()
        if "replace" in op and res.protect:
            edit.refused = res.logical
        if res.kind == "Service":
            edit.may_change = self.readers(m, res)
        return edit

    def _edit_immutable(self, m: Model) -> Edit | None:
        rng = self.rng
        candidates = [
            r
            for r in m.resources.values()
            if r.kind not in ("CRD", "ConfigMapPatch")  # its name is its kind's; its object's
            if (r.name is not None and not (r.kind == "Namespace" and r.name in m.base_namespaces))
            or r.kind in ("Deployment", "Secret")
            or (
                r.kind == "RoleBinding"
                and len([o for o in m.of("Role") if o.namespace == r.namespace]) > 1
            )
        ]
        if not candidates:
            return None
        res = rng.choice(candidates)
        expect = {res.logical: {"replace"}}
        # Not a Role that depends on the RoleBinding: a cycle (seed 85).
        other_roles = [
            o
            for o in m.of("Role")
            if o.namespace == res.namespace and o.key != res.selects
            if o.logical not in self.readers(m, res)
        ]
        if res.kind == "Deployment":
            res.app = m.fresh("app")  # a new selector: immutable
            for service in m.dependents(res.key):
                if service.kind == "Service" and service.selects == res.key:
                    expect[service.logical] = {"update"}
            what = "selector"
        elif res.kind == "RoleBinding" and other_roles and rng.random() < 0.7:
            res.selects = rng.choice(other_roles).key
            what = "roleRef"
        elif res.kind == "Secret" and (res.name is None or rng.random() < 0.5):
            res.secret_type = m.fresh("acme.io/t")
            what = "type"
        elif res.name is not None:
            res.name = m.fresh_name()
            res.import_id = None  # what adopted the old object names it no more
            what = "name"
        else:
            return None
        edit = Edit(f"change the {what} of {res.kind} {res.logical}", m, expect)
        edit.may_change = self.readers(m, res) - set(expect)
        edit.refused = res.logical if res.protect else ""
        return edit

    def _edit_rename(self, m: Model) -> Edit:
        res = self.rng.choice(list(m.resources.values()))
        old = res.logical
        res.aliases.append(old)
        res.logical = m.fresh(res.kind[:2].lower())
        # README "URN": aliases carry the record along, "so a rename … replaces nothing"; and
        # ("Marks on managed objects") "An object renamed by an alias … is applied once more
        # to carry its new marks": an update (a Patch's object has none: the same).
        expect = {res.logical: {_renamed_op(res)}}
        return Edit(f"rename {res.kind} {old} to {res.logical} (alias)", m, expect)

    def _edit_option(self, m: Model) -> Edit | None:
        rng = self.rng
        res = rng.choice(list(m.resources.values()))
        option = rng.choice(
            ["protect", "retain", "delete_first", "depends_on", "ignore", "replace_on"]
        )
        if option == "depends_on":
            others = [
                r
                for r in m.resources.values()
                if r.key < res.key and r.kind not in _NOT_DEPENDED_ON
            ]
            if res.depends_on:
                res.depends_on = []
            elif others and res.kind not in _DEPENDING_ON_NOTHING:
                res.depends_on = [rng.choice(others).key]
            else:
                return None
        elif option == "ignore":
            if res.kind != "ConfigMap":
                return None
            if res.ignore and res.ignored_live != res.ignored_input:
                return None  # drift left alone that a plan would not see
            if res.ignore and res.data["k2"] != res.ignored_input:
                # No longer ignored, the program's value differs from the object's.
                res.ignore, res.ignored_input, res.ignored_live = "", None, None
                op = {"replace" if res.replace_on else "update"}
                edit = Edit(f"stop ignoring data.k2 of {res.logical}", m, {res.logical: op})
                edit.may_change = self.readers(m, res) if res.replace_on else set()
                edit.refused = res.logical if res.replace_on and res.protect else ""
                return edit
            res.ignore = "" if res.ignore else "k2"
            res.ignored_input = res.ignored_live = res.data["k2"] if res.ignore else None
        elif option == "replace_on":
            if res.kind not in REPLACE_ON:
                return None
            res.replace_on = not res.replace_on
        elif option == "retain" and (res.kind in NOT_RETAINED or res.patches_own()):
            return None
        else:
            setattr(res, option, not getattr(res, option))
        # Options only the state keeps change no object: a same step that records them.
        return Edit(f"toggle {option} of {res.kind} {res.logical}", m, {res.logical: {"same"}})

    def _edit_move(self, m: Model) -> Edit | None:
        movable = [
            r
            for r in m.resources.values()
            if r.kind in ("ConfigMap", "Secret", "ServiceAccount", "Role", "Deployment", "Custom")
            and r.namespace is not None
            and not m.dependents(r.key)
        ]
        if not movable:
            return None
        res = self.rng.choice(movable)
        (res.namespace,) = [n for n in m.base_namespaces if n != res.namespace]
        res.import_id = None
        edit = Edit(
            f"move {res.kind} {res.logical} to {res.namespace}", m, {res.logical: {"replace"}}
        )
        edit.refused = res.logical if res.protect else ""
        if res.kind == "Custom":
            edit.parts.add("move custom")
        return edit

    def _edit_drift(self, m: Model) -> Edit | None:
        candidates = m.of("ConfigMap", "ServiceAccount", "Namespace", "Deployment")
        res = self.rng.choice(candidates)
        if res.kind == "ConfigMap":
            key = self.rng.choice(sorted(res.data))
            patch: dict[str, Any] = {"data": {key: "drifted"}}
            if key == res.ignore:
                # README (`refresh`): fields under ignore_changes are no drift, and the
                # program's run keeps the live value.
                res.ignored_live = "drifted"
                op = {"same"}
            else:
                op = {"update"}
        elif res.kind == "Deployment":
            patch, op = {"spec": {"replicas": 2}}, {"update"}
        else:
            patch, op = {"metadata": {"labels": {"v": "drifted"}}}, {"update"}
        edit = Edit(f"drift {res.kind} {res.logical}: {patch}", m, {res.logical: op})
        edit.drift = (res, patch)
        edit.refresh = self.rng.choice(["refresh", "up"])
        return edit

    def _moved(self, m: Model, before: Model, item: Res | Component, **fields: Any) -> Moved:
        """The alias of `item`'s move or rename: `fields` (what changed), or its old URN."""
        was = before.resources if isinstance(item, Res) else before.components
        urn = before.urn_of(was[item.key])
        if self.rng.random() < 0.4:
            return Moved(urn)
        parent = fields.get("parent")
        parent_urn = before.urn_of(before.components[parent]) if parent is not None else ""
        return Moved(urn, tuple(fields.items()), parent_urn)

    def _renamed(self, before: Model, m: Model, what: str) -> Edit:
        """The edit of moves and renames from `before` to `m`: every resource whose URN
        changes is updated (its new marks), every component's is recorded anew; a component
        made is created, one gone deleted. Two such edits at once may touch the same ones
        (a component retyped and one in it): together, they are this from the first's
        `before` to the second's `m`."""
        expect: dict[str, set[str]] = {}
        for item in [*m.resources.values(), *m.components.values()]:
            was = before.resources if isinstance(item, Res) else before.components
            if item.key not in was:
                expect[item.logical] = {"create"}
            elif m.urn_of(item) != before.urn_of(was[item.key]):
                expect[item.logical] = {_renamed_op(item)}
        expect.update(
            {c.logical: {"delete"} for k, c in before.components.items() if k not in m.components}
        )
        edit = Edit(what, m, expect)
        edit.renames = True
        return edit

    def _edit_enter(self, m: Model) -> Edit | None:
        """Move a resource into a component (a new one, or one there is, at any depth), with
        an alias naming where it was: its old URN, or `parent=None`. README "URN": a rename."""
        free = [
            r
            for r in m.resources.values()
            if r.parent is None and not (r.kind == "Namespace" and r.name in m.base_namespaces)
        ]
        if not free:
            return None
        before = copy.deepcopy(m)
        res = self.rng.choice(free)
        if not m.components or self.rng.random() < 0.3:
            self._component(m, self.rng.choice([None, *m.components]))
        res.parent = self.rng.choice(list(m.components))
        res.moved.append(self._moved(m, before, res, parent=None, **self._also_renamed(m, res)))
        where = m.components[res.parent].logical
        return self._renamed(before, m, f"enter {res.kind} {res.logical} into {where}")

    def _also_renamed(self, m: Model, res: Res) -> dict[str, str]:
        """Now and then a move renames too: one alias names both (`sw.Alias(name=…,
        parent=…)`)."""
        if self.rng.random() >= 0.3:
            return {}
        old, res.logical = res.logical, m.fresh(res.kind[:2].lower())
        return {"name": old}

    def _edit_leave(self, m: Model) -> Edit | None:
        """Move a resource out of its component (to the stack, or to another component:
        one it is in, one in it, or one apart), with an alias naming its parent (or the old URN)."""
        inside = [r for r in m.resources.values() if r.parent is not None]
        if not inside:
            return None
        before = copy.deepcopy(m)
        res = self.rng.choice(inside)
        parent = res.parent
        others = [c for c in m.components if c != parent]
        res.parent = self.rng.choice(others) if others and self.rng.random() < 0.5 else None
        res.moved.append(self._moved(m, before, res, parent=parent, **self._also_renamed(m, res)))
        out = m.components[parent].logical  # type: ignore[index]
        if res.parent is None:
            return self._renamed(before, m, f"leave {res.kind} {res.logical} out of {out}")
        to = m.components[res.parent].logical
        return self._renamed(before, m, f"shift {res.kind} {res.logical} from {out} to {to}")

    def _edit_rename_component(self, m: Model) -> Edit | None:
        """Rename a component, retype it, or both, with an alias on it alone: its children
        come along (their URNs hold its type, not its name: a rename changes none of them;
        a retype all of them, carried by the aliases they inherit from it — Pulumi's)."""
        if not m.components:
            return None
        before = copy.deepcopy(m)
        comp = m.components[self.rng.choice(list(m.components))]
        old_name, old_type = comp.logical, comp.type_
        how = self.rng.choice(["name", "type", "both"])
        fields: dict[str, str] = {}
        if how != "type":
            comp.logical = m.fresh("g")
            fields["name"] = old_name
        if how != "name":
            (comp.type_,) = [t for t in COMPONENT_TYPES if t != old_type]
            fields["type_"] = old_type
        comp.moved.append(self._moved(m, before, comp, **fields))
        what = f"rename component {old_name} to {comp.logical} {comp.type_} (alias)"
        return self._renamed(before, m, what)

    def _edit_nest_component(self, m: Model) -> Edit | None:
        """Move a component into another one (not one of its own), or out to the stack, with
        an alias on it alone: what is in it comes along."""
        if not m.components:
            return None
        before = copy.deepcopy(m)
        comp = m.components[self.rng.choice(list(m.components))]
        inner, _ = m.within(comp.key)
        places = [None, *(c for c in m.components if c not in {comp.key, *(i.key for i in inner)})]
        places.remove(comp.parent)
        if not places:
            return None
        parent = comp.parent
        comp.parent = self.rng.choice(places)
        comp.moved.append(self._moved(m, before, comp, parent=parent))
        to = m.components[comp.parent].logical if comp.parent is not None else "the stack"
        return self._renamed(before, m, f"nest component {comp.logical} into {to}")

    def _edit_dissolve_component(self, m: Model) -> Edit | None:
        """Remove a component but keep what it holds: its children move to its parent, each
        with an alias naming the gone component by its URN (`sw.Alias(parent="urn:…")`) or
        its own old URN."""
        if not m.components:
            return None
        before = copy.deepcopy(m)
        comp = m.components.pop(self.rng.choice(list(m.components)))
        children = [c for c in m.components.values() if c.parent == comp.key]
        for child in [*children, *m.children(comp.key)]:
            child.parent = comp.parent
            child.moved.append(self._moved(m, before, child, parent=comp.key))
        return self._renamed(before, m, f"dissolve component {comp.logical}")

    def _edit_drop_component(self, m: Model) -> Edit | None:
        """Remove a component and all it holds, at any depth (what nothing else reads)."""
        droppable = []
        for key in m.components:
            inner, held = m.within(key)
            inside = {r.key for r in held}
            read_outside = any({d.key for d in m.dependents(r.key)} - inside for r in held)
            if not read_outside and len([r for r in held if r.protect]) <= 1:
                droppable.append(key)
        if not droppable:
            return None
        key = self.rng.choice(droppable)
        inner, held = m.within(key)
        comps = [m.components.pop(c) for c in [key, *(c.key for c in inner)]]
        for res in held:
            del m.resources[res.key]
        expect = {x.logical: {"delete"} for x in [*comps, *held]}
        what = f"drop component {comps[0].logical} with {len(held)} resources, {len(inner)} inner"
        edit = Edit(what, m, expect)
        edit.refused = next((r.logical for r in held if r.protect), "")
        return edit

    def _edit_adopt(self, m: Model) -> Edit:
        """A ConfigMap, a Deployment or a Service made through the API (by another tool),
        then declared with `import_`: adopted as it is, or updated to the program's."""
        kinds = ["ConfigMap", "Deployment"] + (["Service"] if m.of("Deployment") else [])
        kind = self.rng.choice(kinds)
        res = Res(self._key(m), kind, m.fresh("co"), m.fresh_name(), None)
        res.namespace = self.rng.choice(m.base_namespaces)
        if kind == "ConfigMap":
            res.data = {"k1": "a", "k2": "b"}
        elif kind == "Deployment":
            res.app = m.fresh("app")
        else:
            target = self.rng.choice(m.of("Deployment"))
            res.namespace, res.selects = target.namespace, target.key
        res.import_id = f"{res.namespace}/{res.name}"
        res.force = True
        res.protect = self.rng.random() < 0.15
        res.retain = self.rng.random() < 0.2
        if m.components and self.rng.random() < 0.3:
            res.parent = self.rng.choice(list(m.components))
        premade = copy.deepcopy(res)
        if self.rng.random() < 0.5:  # made otherwise than the program says: the import changes it
            # A value the program's apply takes over (forced): a data key, an annotation of the
            # pod template, a Service's selector (an atomic map). Not a Service's port: ports
            # are a list keyed by port, so its creator's port would stay beside the program's,
            # both unnamed, which the API server refuses (seed 185 of the third exploration),
            # as `kubectl apply --server-side --force-conflicts` would be refused.
            premade.data = {"k1": "made", "k2": "b"} if kind == "ConfigMap" else {}
            premade.version = 7 if kind != "Service" else res.version
            premade.app = "made" if kind == "Service" else res.app  # a selector is immutable
        self._put(m, res)
        edit = Edit(f"adopt {kind} {res.logical} (import_)", m, {res.logical: {"import"}})
        edit.premade = premade
        return edit


# --- running it -------------------------------------------------------------------------------


def ops_by_urn(events: list[dict[str, Any]]) -> dict[str, str]:
    """URN → the op of its steps (a replacement's halves count as `replace`)."""
    found: dict[str, set[str]] = {}
    for event in events:
        if event["event"] == "step-started":
            op = event["op"]
            op = "replace" if op in ("create-replacement", "delete-replaced") else op
            found.setdefault(event["urn"], set()).add(op)
    return {urn: "+".join(sorted(ops)) for urn, ops in found.items()}


def events_of(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


class Lifecycle:
    """One seed's run: the project, the generator, and the checks after each edit."""

    def __init__(self, cluster: LiveCluster, folder: Path, seed: int) -> None:
        self.cluster = cluster
        self.seed = seed
        self.generator = Generator(seed)
        self.project = Project(
            folder,
            cluster,
            name=f"model{seed}",
            stack=STACK,
            program="",
        )
        self.project.sw("stack", "init", STACK)
        self.step = 0
        self.program = ""
        #: Objects retain_on_delete left behind: (kind, namespace, name).
        self.retained: set[tuple[str, str | None, str]] = set()
        self.log: list[str] = []
        #: The program the edit under way makes (beside the generator's, the one before it).
        self.pending: list[Model] = []
        #: Where to read each kind's objects: the built-in ones', and the CRDs' kinds'.
        self.paths = dict(PATHS)
        #: The ConfigMaps made through the API for a Patch, by (namespace, name): their data
        #: but for what the program's Patches set (a Patch retained leaves its own).
        self.patched: dict[tuple[str, str], dict[str, str]] = {}

    def urn(self, logical: str, model: Model | None = None) -> str:
        model = model or self.generator.model
        for where in (model, self.generator.model):  # the second: removed by this edit
            found = where.urn_named(logical)
            if found is not None:
                return found
        raise AssertionError(f"no resource {logical}")

    def where(self) -> str:
        history = "\n".join(f"  step {i}: {what}" for i, what in enumerate(self.log))
        return (
            f"seed {self.seed} (LIFECYCLE_MODEL_SEEDS={self.seed},), step {self.step}: "
            f"{self.log[-1] if self.log else ''}\nedits:\n{history}\n"
            f"--- program of step {self.step}:\n{self.program}"
        )

    def sw(self, *args: str, rc: int | None = 0) -> tuple[int, list[dict[str, Any]], str]:
        result = self.project.sw(*args, check=False)
        if rc is not None:
            assert result.returncode == rc, (
                f"{self.where()}\nstackwright {' '.join(args)} exited {result.returncode}, "
                f"expected {rc}:\n{result.stdout[-4000:]}\n{result.stderr[-3000:]}"
            )
        events = events_of(result.stdout) if "--json" in args else []
        return result.returncode, events, result.stdout + result.stderr

    def write(self, model: Model) -> None:
        self.program = render(model)
        (self.project.folder / "__main__.py").write_text(self.program)
        for file in model.files.values():
            text = file.text()
            (self.project.folder / f"f{file.key}.yaml").write_text(text)
            self.program += f"--- f{file.key}.yaml:\n{text}"

    # -- one edit, end to end --

    def apply(self, edit: Edit) -> None:
        self.log.append(edit.what)
        self.pending = [edit.model]
        before = self.generator.model
        if edit.refused:
            self.refused(edit, before)
            return
        self.write(edit.model)
        if edit.drift is not None:
            self.make_drift(*edit.drift)
        if edit.premade is not None:
            self.make_object(edit.premade)
            if edit.premade.kind == "ConfigMap" and edit.premade.import_id is None:
                assert edit.premade.namespace is not None and edit.premade.name is not None
                self.patched[(edit.premade.namespace, edit.premade.name)] = edit.premade.data
        refresh = ["--refresh"] if edit.refresh == "up" else []
        if edit.refresh == "refresh":
            self.sw("refresh", "--yes", "--json")
        first: dict[str, str] = {}
        if edit.target:
            first = self.targeted_up(edit)
        elif edit.crash is not None:
            first = self.crashed_up(edit)
        done = self.previewed_up(*refresh, settles=self.clusterip_readers(edit))
        if edit.target:
            twice = {u for u, op in first.items() if op != "same" and done.get(u, "same") != "same"}
            assert not twice, (
                f"{self.where()}\nthe full up after up --target changed again: {sorted(twice)}"
            )
        done = {**done, **{u: op for u, op in first.items() if op != "same"}}
        if edit.crash is None:  # the killed run did some of it: what, it does not tell
            self.check_expected(edit, done)
        for res in edit.model.resources.values():
            op = done.get(self.urn(res.logical, edit.model))
            if res.ignore and op == "update":
                res.ignored_input = res.ignored_live
            elif res.ignore and op == "replace":
                res.ignored_live = res.ignored_input
        self.note_retained(edit, before)
        self.generator.accept(edit.model)
        self.check_converged(edit.model)

    def previewed_up(self, *args: str, settles: Collection[str] = ()) -> dict[str, str]:
        """`preview --json ARGS`, then `up --yes --json ARGS`: the same steps, by URN — but
        that an update the preview predicts of one of `settles` may turn out the same."""
        _, previewed, _ = self.sw("preview", "--json", *args)
        _, applied, _ = self.sw("up", "--yes", "--json", *args)
        self.check_crd_order(applied)
        predicted, done = ops_by_urn(previewed), ops_by_urn(applied)
        for urn in settles:
            if predicted.get(urn) == "update" and done.get(urn) == "same":
                predicted[urn] = "same"
        assert predicted == done, (
            f"{self.where()}\nthe preview {' '.join(args)} predicted other steps than up did:\n"
            f"  preview: {_differing(predicted, done)}\n  up:      {_differing(done, predicted)}"
        )
        return done

    def check_crd_order(self, events: list[dict[str, Any]]) -> None:
        """A CRD is created before objects of its kind are, and deleted after they are gone
        (else the API server deletes them with it, or has no kind to make them of)."""
        started: dict[tuple[str, str], int] = {}
        ended: dict[tuple[str, str], int] = {}
        for i, event in enumerate(events):
            if event["event"] in ("step-started", "step-done"):
                into = started if event["event"] == "step-started" else ended
                into.setdefault((event["urn"], event["op"]), i)
        for model in (self.generator.model, *self.pending):
            for res in model.of("Custom"):
                crd, obj = model.urn_of(model.resources[res.selects]), model.urn_of(res)
                made, making = ended.get((crd, "create")), started.get((obj, "create"))
                assert made is None or making is None or made < making, (
                    f"{self.where()}\n{res.logical} was created before its CRD was"
                )
                going, gone = started.get((crd, "delete")), ended.get((obj, "delete"))
                assert going is None or gone is None or gone < going, (
                    f"{self.where()}\nthe CRD of {res.logical} was deleted before it was"
                )

    def clusterip_readers(self, edit: Edit) -> set[str]:
        """The readers of a replaced Service's clusterIP: unknown until the replacement is
        made, which may get the same one (the local cluster gives the lowest free address,
        so a Service deleted first hands its own on; a real one picks at random): the
        preview's update may be none (seed 243 of the third exploration)."""
        model = edit.model
        services = {r.key for r in model.of("Service") if r.logical in edit.expect}
        return {
            self.urn(reader, model)
            for key in services
            for reader in self.generator.readers(model, model.resources[key])
        }

    def targeted_up(self, edit: Edit) -> dict[str, str]:
        """`up --target X`: only X and what it needs change (README "SELECTION")."""
        target = self.urn(edit.target, edit.model)
        done = self.previewed_up("--target", target, settles=self.clusterip_readers(edit))
        model = edit.model
        (target,) = [r for r in model.resources.values() if r.logical == edit.target]
        parts = [model.resources[k] for k in model.needs(target)]
        allowed = {model.urn_of(r) for r in parts}
        allowed |= {
            model.urn_of(model.components[c]) for r in parts for c in model.ancestors(r.parent)
        }
        changed = {u for u, op in done.items() if op != "same"}
        assert changed <= allowed, (
            f"{self.where()}\nup --target {edit.target} changed what it does not need: "
            f"{sorted(changed - allowed)}"
        )
        return done

    def crashed_up(self, edit: Edit) -> dict[str, str]:
        """An `up` killed -9 (on a timer, or soon after its first changing step started)."""
        assert edit.crash is not None
        after, extra = edit.crash
        markers = tuple(
            started(op) for op in ("create", "update", "delete", "create-replacement", "import")
        )
        run = self.project.run("up", -1, kill_after=after, kill_on=(markers, extra))
        self.log[-1] += f" [killed: {run.killed}, {run.phase()}]"
        assert run.killed or run.returncode == 0, f"{self.where()}\nthe up failed: {run.failure()}"
        return ops_by_urn(run.events)

    def make_object(self, res: Res) -> None:
        """The object `res` adopts, made through the API (by another tool)."""
        body: dict[str, Any] = {
            "apiVersion": "apps/v1" if res.kind == "Deployment" else "v1",
            "kind": res.kind,
            "metadata": {"name": res.name, "namespace": res.namespace},
        }
        if res.kind == "ConfigMap":
            body["data"] = res.data
        else:
            body["spec"] = _spec(res, self.generator.model, res.version)
        if res.kind == "Service" and res.app:  # made to select other Pods
            body["spec"]["selector"] = {"app": res.app}
        with self.cluster.http() as http:
            response = http.post(PATHS[res.kind].format(ns=res.namespace), json=body)
            assert response.status_code == 201, f"{self.where()}\nmaking it: {response.text}"

    def refused(self, edit: Edit, before: Model) -> None:
        """A protected resource's delete (a removal or a replacement) is refused, exit 2 and
        nothing changed; then it is unprotected (an up of only that) and the edit done."""
        state_before = self.exported_resources()
        self.write(edit.model)
        self.sw("preview", "--json", rc=2)
        self.sw("up", "--yes", "--json", rc=2)
        assert self.exported_resources() == state_before, (
            f"{self.where()}\nthe refused up changed the state"
        )
        self.write(before)
        self.check_converged(before)
        unprotected = copy.deepcopy(before)
        for res in unprotected.resources.values():
            if res.logical == edit.refused or edit.refused in res.aliases:
                res.protect = False
        self.apply(Edit(f"unprotect {edit.refused}", unprotected, {edit.refused: {"same"}}))
        self.apply(edit.unprotected())

    def exported_resources(self) -> list[dict[str, Any]]:
        state = json.loads(self.project.sw("stack", "export").stdout)
        return sorted(
            ({k: r.get(k) for k in ("urn", "id", "inputs", "protect")} for r in state["resources"]),
            key=lambda r: r["urn"],
        )

    def check_expected(self, edit: Edit, done: dict[str, str]) -> None:
        expected = {self.urn(name, edit.model): ops for name, ops in edit.expect.items()}
        may = {self.urn(name, edit.model) for name in edit.may_change}
        replacing = {
            self.urn(r.logical, edit.model) for r in edit.model.resources.values() if r.replace_on
        }
        wrong = {}
        for urn, op in done.items():
            allowed = expected.get(urn, {"same", "update"} if urn in may else {"same"})
            patch_or_binding = TYPES["RoleBinding"] in urn or TYPES["ConfigMapPatch"] in urn
            if urn in may and (patch_or_binding or urn in replacing):
                # A Role's new name (roleRef is immutable), a patched ConfigMap's (a Patch
                # names its object), new data under replace_on_changes.
                allowed = allowed | {"replace"}
            if op not in allowed:
                wrong[urn.rsplit("::", 1)[1]] = f"{op}, expected {'|'.join(sorted(allowed))}"
        missing = sorted(urn for urn in expected if urn not in done)
        assert not wrong and not missing, (
            f"{self.where()}\nup's steps are not what the edit asks for: {wrong}, "
            f"no step for {missing}"
        )

    def note_retained(self, edit: Edit, before: Model) -> None:
        """Objects of removed resources with retain_on_delete: kept, without the marks."""
        for res in before.resources.values():
            if res.key not in edit.model.resources and res.retain:
                self.retained.add(self.recorded_object[res.logical])
                if res.kind == "ConfigMapPatch":  # README: `retain_on_delete` keeps the fields
                    assert res.namespace is not None and res.name is not None
                    self.patched[(res.namespace, res.name)].update(res.data)

    # -- the invariants --

    def custom_kinds(self, model: Model) -> dict[str, str]:
        """Where to list the objects of `model`'s CRDs' kinds (and the CRDs), by kind; the
        paths to read them learnt."""
        found = {"CustomResourceDefinition": PATHS["CRD"]}
        for crd in model.of("CRD"):
            plural = f"/apis/{model.group}/v1/{crd.app.lower()}s"
            found[crd.app] = plural
            self.paths[crd.app] = (
                f"/apis/{model.group}/v1/namespaces/{{ns}}/{crd.app.lower()}s"
                if crd.scope == "Namespaced"
                else plural
            )
        return found

    def check_converged(self, model: Model) -> None:
        where = self.where()
        self.sw("preview", "--expect-no-changes")
        recorded, _ = check_agrees(self.project, where, self.custom_kinds(model))
        state = json.loads((self.project.folder / "checked-state.json").read_text())
        parents = {
            r["urn"]: r.get("parent") or None
            for r in state["resources"]
            if not r["custom"] or r["urn"] in recorded
        }
        wanted_parents = {
            model.urn_of(x): model.urn_of(model.components[x.parent])
            if x.parent is not None
            else None
            for x in [*model.components.values(), *model.resources.values()]
        }
        in_files = model.file_urns()
        wanted_parents.update({urn: parent for urn, (parent, _) in in_files.items()})
        assert parents == wanted_parents, (
            f"{where}\nthe state's components and parents are not the program's:\n"
            f"  state:   {parents}\n  program: {wanted_parents}"
        )
        wanted = {model.urn_of(r): r for r in model.resources.values()}
        wanted.update({urn: child for urn, (_, child) in in_files.items() if child is not None})
        assert set(recorded) == set(wanted), (
            f"{where}\nstate and program differ: missing {sorted(set(wanted) - set(recorded))}, "
            f"extra {sorted(set(recorded) - set(wanted))}"
        )
        self.recorded_object = {}
        live: dict[int, dict[str, Any]] = {}
        with self.cluster.http() as http:
            for urn, res in wanted.items():
                row = recorded[urn]
                namespace, _, name = row["id"].rpartition("/")
                assert (namespace or None) == res.namespace, f"{where}\n{urn} is in {row['id']}"
                if res.patches_own():
                    target = model.resources[res.selects]
                    assert name == self.recorded_object[target.logical][2], (
                        f"{where}\n{urn} patches {name}, not {target.logical}'s object"
                    )
                elif res.name is not None:
                    assert name == res.name, f"{where}\n{urn} is named {name}, not {res.name}"
                else:
                    assert AUTO_NAME.match(name), f"{where}\n{urn} has the auto-name {name}"
                assert row["protect"] == res.protect, f"{where}\n{urn} protect {row['protect']}"
                kind = model.kind_of(res) if res.kind == "Custom" else res.kind
                self.recorded_object[res.logical] = (kind, res.namespace, name)
                live[res.key] = self.read(http, kind, res.namespace, name)
                if res.key == -1:  # a ConfigFile's object: no other resource reads it
                    self.check_fields(model, res, live, where)
            for res in model.resources.values():
                self.check_fields(model, res, live, where)
            self.check_patched(http, model, where)
            for kind, namespace, name in self.retained:
                if namespace is not None and namespace not in model.base_namespaces:
                    continue
                kept = self.read(http, kind, namespace, name)
                marks = {**(kept["metadata"].get("labels") or {})}
                marks.update(kept["metadata"].get("annotations") or {})
                assert not set(MARKS) & set(marks), (
                    f"{where}\nthe retained {kind} {namespace}/{name} keeps the stack's marks"
                )

    def check_patched(self, http: Any, model: Model, where: str) -> None:
        """Each object made for a Patch has its creator's data and its Patches' (README
        "Patching objects someone else owns": a Patch's fields dropped are given back)."""
        for (namespace, name), made in self.patched.items():
            response = http.get(PATHS["ConfigMap"].format(ns=namespace) + f"/{name}")
            if response.status_code == 404 and not any(
                r.name == namespace for r in model.of("Namespace")
            ):
                continue  # its namespace went
            want = dict(made)
            for patch in model.of("ConfigMapPatch"):
                if (patch.namespace, patch.name) == (namespace, name):
                    want.update(patch.data)
            got = response.json().get("data")
            assert got == want, (
                f"{where}\nthe patched ConfigMap {namespace}/{name} has {got}, expected {want}"
            )

    def read(self, http: Any, kind: str, namespace: str | None, name: str) -> dict[str, Any]:
        path = self.paths[kind].format(ns=namespace)
        response = http.get(f"{path}/{name}")
        assert response.status_code == 200, f"{self.where()}\nGET {path}/{name}: {response.text}"
        return dict(response.json())

    def check_fields(
        self, model: Model, res: Res, live: dict[int, dict[str, Any]], where: str
    ) -> None:
        obj = live[res.key]
        got: Any
        want: Any
        if res.kind == "ConfigMap":
            want = dict(res.data)
            if res.ignore:
                want[res.ignore] = res.ignored_live
            for patch in model.of("ConfigMapPatch"):
                if patch.patches_own() and patch.selects == res.key:
                    want.update(patch.data)
            if res.ref is not None:
                source = live[res.ref[0]]
                want["ref"] = (
                    source["metadata"]["name"]
                    if res.ref[1] == "name"
                    else source["spec"]["clusterIP"]
                )
            got = obj.get("data")
        elif res.kind == "Secret":
            want = (res.data, res.secret_type)
            data = {k: base64.b64decode(v).decode() for k, v in (obj.get("data") or {}).items()}
            got = (data, obj.get("type"))
        elif res.kind in ("Namespace", "ServiceAccount"):
            labels = obj["metadata"].get("labels") or {}
            want, got = res.data, {k: labels.get(k) for k in res.data}
        elif res.kind == "Role":
            want = ["get", "list", "watch"][: 1 + res.version % 3]
            got = obj["rules"][0]["verbs"]
        elif res.kind == "RoleBinding":
            want = live[res.selects]["metadata"]["name"]
            got = obj["roleRef"]["name"]
        elif res.kind == "CRD":
            want, got = _crd_said(_crd_spec(res, model.group)), _crd_said(obj["spec"])
            conditions = (obj.get("status") or {}).get("conditions") or []
            got += tuple(c["status"] for c in conditions if c["type"] == "Established")
            want += ("True",)
        elif res.kind == "Custom":
            want = _spec(res, model)
            got = obj.get("spec")
        elif res.kind == "ConfigMapPatch":
            return  # `check_patched`
        elif res.kind == "Service":
            want = ({"app": model.resources[res.selects].app}, 8000 + res.version)
            got = (obj["spec"].get("selector"), obj["spec"]["ports"][0]["port"])
        else:
            want = (1, res.app, str(res.version))
            spec = obj["spec"]
            annotations = spec["template"]["metadata"].get("annotations") or {}
            got = (spec["replicas"], spec["selector"]["matchLabels"]["app"], annotations.get("v"))
        assert got == want, f"{where}\n{res.kind} {res.logical} has {got}, the program says {want}"

    def make_drift(self, res: Res, patch: dict[str, Any]) -> None:
        kind, namespace, name = self.recorded_object[res.logical]
        path = PATHS[kind].format(ns=namespace) + f"/{name}"
        with self.cluster.http() as http:
            if kind == "Deployment":
                path += "/scale"
            response = http.patch(
                path,
                params={"fieldManager": "drifter"},
                content=json.dumps(patch),
                headers={"Content-Type": "application/merge-patch+json"},
            )
            assert response.status_code == 200, f"{self.where()}\ndrift: {response.text}"

    # -- the end --

    def destroy(self) -> None:
        self.log.append("unprotect everything, destroy, destroy again")
        model = copy.deepcopy(self.generator.model)
        if any(r.protect for r in model.resources.values()):
            for res in model.resources.values():
                res.protect = False
            self.write(model)
            self.sw("up", "--yes", "--json")
        kept = self.recorded_object
        retained = {kept[r.logical] for r in model.resources.values() if r.retain}
        retained |= self.retained
        self.sw("destroy", "--yes", "--json")
        left = [
            (kind, meta.get("namespace"), meta["name"])
            for kind, meta in managed_metadata(
                self.cluster,
                f"urn:sw:{STACK}::{self.project.name}::",
                {"CustomResourceDefinition": PATHS["CRD"]},
            )
        ]
        assert left == [], f"{self.where()}\ndestroy left objects of the stack: {left}"
        _, events, _ = self.sw("destroy", "--yes", "--json")
        counts = events[-1]["counts"]
        assert counts == {}, f"{self.where()}\na second destroy did {counts}"
        with self.cluster.http() as http:
            for kind, namespace, name in sorted(retained, key=str):
                # What a retained Namespace held, or the base namespaces' objects, go with it.
                if namespace is not None and namespace in model.base_namespaces:
                    continue
                kept_obj = self.read(http, kind, namespace, name)
                assert kept_obj["metadata"]["labels"].get(MARKS[0]) is None, (
                    f"{self.where()}\nthe retained {kind} {name} is marked after destroy"
                )
                http.delete(PATHS[kind].format(ns=namespace) + f"/{name}")
            for (namespace, name), made in self.patched.items():
                response = http.get(PATHS["ConfigMap"].format(ns=namespace) + f"/{name}")
                if response.status_code == 200:  # its namespace retained: the fields given back
                    got = response.json().get("data")
                    assert got == made, (
                        f"{self.where()}\nthe patched {namespace}/{name} has {got} after "
                        f"destroy, not {made}"
                    )
                    http.delete(PATHS["ConfigMap"].format(ns=namespace) + f"/{name}")


def _differing(one: dict[str, str], other: dict[str, str]) -> dict[str, str]:
    return {urn.rsplit("::", 1)[1]: op for urn, op in sorted(one.items()) if other.get(urn) != op}


@pytest.mark.parametrize("seed", _seeds())
def test_random_edits_keep_preview_state_and_cluster_in_agreement(
    cluster: LiveCluster, tmp_path: Path, seed: int
) -> None:
    lifecycle = Lifecycle(cluster, tmp_path / f"model{seed}", seed)
    for step, edit in enumerate(lifecycle.generator.edits()):
        lifecycle.step = step
        lifecycle.apply(edit)
    lifecycle.destroy()


def test_the_default_seeds_make_every_edit() -> None:
    """Together the default seeds make every kind of edit the generator has (but for the
    rare `stop ignoring`), refusals of a protected resource's delete included, and a
    component in a component."""
    made = {sort for seed in SEEDS for edit in Generator(seed).edits() for sort in edit.sorts}
    nested = [
        edit
        for seed in SEEDS
        for edit in Generator(seed).edits()
        if any(c.parent is not None for c in edit.model.components.values())
    ]
    assert nested
    assert made >= {
        "add", "remove", "mutable", "immutable name", "immutable selector", "immutable type",
        "immutable roleRef", "rename", "move", "drift, then refresh", "drift, then up --refresh",
        "refused remove", "refused change", "refused move", "toggle protect", "toggle retain",
        "toggle delete_first", "toggle depends_on", "toggle ignore", "toggle replace_on",
        "two at once", "enter", "leave", "shift", "drop component", "rename component",
        "dissolve component",
        "nest component", "adopt ConfigMap", "adopt Deployment", "adopt Service", "up --target",
        "crashed up", "add CRD", "remove CRD with objects", "cluster-scoped custom",
        "custom spec", "move custom", "CRD property", "CRD version", "add patch",
        "change patch", "drop patch", "add ConfigFile", "edit ConfigFile", "remove ConfigFile",
        "custom apiVersion", "patch own object", "CRD scope",
    }, made  # fmt: skip
