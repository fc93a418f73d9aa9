"""A model-based lifecycle test: random edits of one Python program, each through the real CLI.

A seeded generator keeps a model of a program — Namespaces, ConfigMaps, Secrets,
ServiceAccounts, Roles and RoleBindings, Services selecting Deployments, named and
auto-named, with options chosen at random (protect, retain_on_delete,
delete_before_replace, replace_on_changes, ignore_changes on a data key, depends_on,
aliases, values taken from another resource's Output) — and edits it ~10 times: add,
remove, change a mutable field, change an immutable one, rename with an alias, toggle an
option, move to another namespace, drift made through the API and then refreshed, move
into or out of a `sw.ComponentResource` with an alias (the old URN, or `parent=`), drop a
component with its children, adopt an object made through the API (`import_`); now and
then two at once, on resources apart; now and then run as `up --target X` first (only X
and what it needs change, then a full `up`), or with the first `up` killed -9 at a random
moment (the next converges). After each edit:

1. `preview --json` predicted, per URN, exactly the operations `up --yes --json` did (with
   `--target` too), and the model's own expectation for what the edit touched;
2. `preview --expect-no-changes` after `up` exits 0;
3. the state and the cluster agree (`crash_run.check_agrees`) and every object has the
   program's fields, where the program puts it;
4. objects left behind by `retain_on_delete` stay in the cluster without the stack's marks;
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
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from crash_run import LiveCluster, Project, check_agrees, managed_metadata, started

pytestmark = pytest.mark.integration

#: Chosen so that together they make every kind of edit (`test_the_default_seeds_make_every_edit`).
SEEDS = (255, 135, 163, 16, 166)


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
}
#: What replace_on_changes names, per kind, when the generator sets it.
REPLACE_ON = {"ConfigMap": "data", "Role": "rules", "ServiceAccount": "metadata.labels"}
AUTO_NAME = re.compile(r"^.+-[0-9a-f]{8}$")
#: The type of the model's components (`sw.ComponentResource`): its children's URNs carry it.
COMPONENT = "acme:model:Group"
MARKS = ("app.kubernetes.io/managed-by", "stackwright.io/urn", "stackwright.io/stack")


# --- the model ------------------------------------------------------------------------------


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
    #: The component it is in (its logical name), and the aliases (Python expressions) that
    #: carry it across its moves into and out of components.
    parent: str | None = None
    moved: list[str] = field(default_factory=list)
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

    @property
    def type(self) -> str:
        """Its URN's type: a component's child carries the component's."""
        return f"{COMPONENT}${TYPES[self.kind]}" if self.parent else TYPES[self.kind]

    def refers_to(self) -> set[int]:
        """The resources whose Outputs or options this one's declaration names."""
        found = set(self.depends_on)
        if self.ref is not None:
            found.add(self.ref[0])
        if self.kind in ("Service", "RoleBinding"):
            found.add(self.selects)
        return found


@dataclass
class Model:
    """The program: its resources by key, and where everything is named."""

    seed: int
    resources: dict[int, Res] = field(default_factory=dict)
    #: The components' logical names (each one's variable in the program too).
    components: list[str] = field(default_factory=list)
    counter: int = 0

    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def fresh_name(self) -> str:
        """An object's name no other seed's program uses (one a failed seed left, or a
        retained object, would be taken)."""
        return f"m{self.seed}-{self.fresh('n')}"

    @property
    def base_namespaces(self) -> list[str]:
        return [f"lm{self.seed}-a", f"lm{self.seed}-b"]

    def of(self, *kinds: str) -> list[Res]:
        return [r for r in self.resources.values() if r.kind in kinds]

    def dependents(self, key: int) -> list[Res]:
        return [r for r in self.resources.values() if key in r.refers_to()]

    def children(self, component: str) -> list[Res]:
        return [r for r in self.resources.values() if r.parent == component]

    def urn(self, type_: str, logical: str) -> str:
        return f"urn:sw:{STACK}::model{self.seed}::{type_}::{logical}"


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
    lines.extend(f"{c} = sw.ComponentResource({COMPONENT!r}, {c!r})" for c in model.components)
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
        lines.append(f"    metadata={meta!r},")
        lines.extend(f"    {line}," for line in _fields(res, model))
        opts = _options(res)
        if opts:
            lines.append(f"    opts=sw.ResourceOptions({opts}),")
        lines.append(")")
    return "\n".join(lines) + "\n"


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
    if res.kind == "Service":
        app = model.resources[res.selects].app
        spec = {"selector": {"app": app}, "ports": [{"port": 8000 + res.version}]}
        return [f"spec={spec!r}"]
    if res.kind == "Deployment":
        spec = {
            "replicas": 1,
            "selector": {"matchLabels": {"app": res.app}},
            "template": {
                "metadata": {"labels": {"app": res.app}, "annotations": {"v": str(res.version)}},
                "spec": {"containers": [{"name": "main", "image": "nginx:1.29"}]},
            },
        }
        return [f"spec={spec!r}"]
    return []


def _options(res: Res) -> str:
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
    if res.parent:
        opts.append(f"parent={res.parent}")
    if res.import_id:
        opts.append(f"import_={res.import_id!r}")
    if res.force:
        opts.append("force=True")
    aliases = [f"sw.Alias(name={a!r})" for a in res.aliases] + res.moved
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
        return " ".join(words[:2]) if words[0] in ("toggle", "stop") else words[0]

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


def _may_replace_protected(edit: Edit) -> bool:
    """Whether a protected reader of what the edit changes may be replaced with it (its
    replacement refused): the model leaves those out rather than tell which are."""
    return any(
        r.protect and (r.replace_on or r.kind == "RoleBinding")
        for r in edit.model.resources.values()
        if r.logical in edit.may_change
    )


def _keys(logical: set[str], *models: Model) -> set[int]:
    """The keys of the resources named `logical` in any of `models` (names are never reused)."""
    return {r.key for m in models for r in m.resources.values() if r.logical in logical}


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
            m.components.append(m.fresh("g"))
        for _ in range(self.rng.randint(4, 6)):
            self._add(m)
        expect = {r.logical: {"create"} for r in m.resources.values()}
        expect.update({c: {"create"} for c in m.components})
        return Edit("the first program", m, expect)

    def _key(self, m: Model) -> int:
        return max(m.resources, default=-1) + 1

    def _put(self, m: Model, res: Res) -> Res:
        m.resources[res.key] = res
        return res

    # -- building blocks --

    def _name(self, m: Model, prefix: str) -> str | None:
        return m.fresh_name() if self.rng.random() < 0.5 else None

    def _add(self, m: Model) -> Res:
        rng = self.rng
        kinds = ["ConfigMap", "ConfigMap", "Secret", "ServiceAccount", "Role", "Deployment"]
        kinds += ["Namespace"]
        if m.of("Deployment"):
            kinds.append("Service")
        if m.of("Role"):
            kinds.append("RoleBinding")
        kind = rng.choice(kinds)
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
        res.protect = rng.random() < 0.15
        res.retain = rng.random() < 0.2
        res.delete_first = rng.random() < 0.2
        others = [r for r in m.resources.values() if r.kind not in _NOT_DEPENDED_ON]
        if others and kind not in _DEPENDING_ON_NOTHING and rng.random() < 0.2:
            res.depends_on = [rng.choice(others).key]
        if m.components and rng.random() < 0.4:
            res.parent = rng.choice(m.components)
        return self._put(m, res)

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
        way = self.rng.random()
        edit.parts |= edit.sorts
        if way < 0.12:
            # `up --target` of what the edit touched, or now and then of anything.
            # Not a Service: the Pods it waits for come from a Deployment it names by a label,
            # no dependency a target takes along (one whose selector changes with the
            # Deployment's would wait for Pods no run makes; seed 26 hung on it).
            targets = {r.logical for r in edit.model.resources.values() if r.kind != "Service"}
            touched = [n for n in edit.expect if n in targets]
            anything = sorted(targets)
            edit.target = self.rng.choice(touched if touched and way < 0.09 else anything)
        elif way < 0.22:
            edit.crash = (self.rng.uniform(1.0, 4.0), self.rng.uniform(0.0, 0.4))
        return edit

    def _one_or_two(self) -> Edit:
        first = self._one(self.model)
        if first.refused or first.drift is not None or self.rng.random() < 0.7:
            return first
        second = self._one(first.model)
        touched = _keys({*first.expect, *first.may_change}, self.model, first.model)
        also = _keys({*second.expect, *second.may_change}, first.model, second.model)
        if second.refused or second.drift is not None or touched & also:
            return first
        if first.premade is not None or second.premade is not None:
            return first
        if {*first.expect, *first.may_change} & {*second.expect, *second.may_change}:
            return first  # one component both edits touch
        expect = {**first.expect, **second.expect}
        both = Edit(f"{first.what}; {second.what}", second.model, expect)
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
            (self._edit_drop_component, 1),
            (self._edit_adopt, 1),
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

    def _edit_remove(self, m: Model) -> Edit | None:
        candidates = self._removable(m)
        if not candidates:
            return None
        res = self.rng.choice(candidates)
        del m.resources[res.key]
        edit = Edit(f"remove {res.kind} {res.logical}", m, {res.logical: {"delete"}})
        edit.refused = res.logical if res.protect else ""
        return edit

    def _readers(self, m: Model, res: Res) -> set[str]:
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

    def _edit_mutable(self, m: Model) -> Edit | None:
        res = self.rng.choice(list(m.resources.values()))
        op = {"update"}
        if res.kind in ("ConfigMap", "Secret", "Namespace", "ServiceAccount"):
            k = self.rng.choice([*res.data, "k3" if res.kind == "ConfigMap" else "s2"])
            res.data[k] = m.fresh("v")
            if res.kind == "ConfigMap" and k == res.ignore:
                # ignore_changes keeps the recorded value: nothing to do (README, Pulumi's).
                op = {"same"}
        elif res.kind in ("Role", "Service", "Deployment"):
            res.version += 1
        else:
            return None
        if res.replace_on and op == {"update"}:
            op = {"replace"}
        edit = Edit(f"change {res.kind} {res.logical}", m, {res.logical: op})
        edit.may_change = self._readers(m, res) if op == {"replace"} else set()
        if "replace" in op and res.protect:
            edit.refused = res.logical
        if res.kind == "Service":
            edit.may_change = self._readers(m, res)
        return edit

    def _edit_immutable(self, m: Model) -> Edit | None:
        rng = self.rng
        candidates = [
            r
            for r in m.resources.values()
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
            if o.logical not in self._readers(m, res)
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
        edit.may_change = self._readers(m, res) - set(expect)
        edit.refused = res.logical if res.protect else ""
        return edit

    def _edit_rename(self, m: Model) -> Edit:
        res = self.rng.choice(list(m.resources.values()))
        old = res.logical
        res.aliases.append(old)
        res.logical = m.fresh(res.kind[:2].lower())
        # README "URN": aliases carry the record along, "so a rename … replaces nothing"; and
        # ("Marks on managed objects") "An object renamed by an alias … is applied once more
        # to carry its new marks": an update.
        expect = {res.logical: {"update"}}
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
                edit.may_change = self._readers(m, res) if res.replace_on else set()
                edit.refused = res.logical if res.replace_on and res.protect else ""
                return edit
            res.ignore = "" if res.ignore else "k2"
            res.ignored_input = res.ignored_live = res.data["k2"] if res.ignore else None
        elif option == "replace_on":
            if res.kind not in REPLACE_ON:
                return None
            res.replace_on = not res.replace_on
        else:
            setattr(res, option, not getattr(res, option))
        # Options only the state keeps change no object: a same step that records them.
        return Edit(f"toggle {option} of {res.kind} {res.logical}", m, {res.logical: {"same"}})

    def _edit_move(self, m: Model) -> Edit | None:
        movable = [
            r
            for r in m.resources.values()
            if r.kind in ("ConfigMap", "Secret", "ServiceAccount", "Role", "Deployment")
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

    def _edit_enter(self, m: Model) -> Edit | None:
        """Move a resource into a component (a new one, or one there is), with an alias
        naming where it was: its old URN, or `parent=None`. README "URN": a rename."""
        free = [
            r
            for r in m.resources.values()
            if r.parent is None and not (r.kind == "Namespace" and r.name in m.base_namespaces)
        ]
        if not free:
            return None
        res = self.rng.choice(free)
        expect = {}
        if not m.components or self.rng.random() < 0.3:
            m.components.append(m.fresh("g"))
            expect[m.components[-1]] = {"create"}
        old = m.urn(res.type, res.logical)
        res.parent = self.rng.choice(m.components)
        res.moved.append(f"{old!r}" if self.rng.random() < 0.5 else "sw.Alias(parent=None)")
        expect[res.logical] = {"update"}
        return Edit(f"enter {res.kind} {res.logical} into {res.parent}", m, expect)

    def _edit_leave(self, m: Model) -> Edit | None:
        """Move a resource out of its component, with an alias naming it (or the old URN)."""
        inside = [r for r in m.resources.values() if r.parent is not None]
        if not inside:
            return None
        res = self.rng.choice(inside)
        old, parent = m.urn(res.type, res.logical), res.parent
        res.parent = None
        res.moved.append(f"{old!r}" if self.rng.random() < 0.5 else f"sw.Alias(parent={parent})")
        expect = {res.logical: {"update"}}
        return Edit(f"leave {res.kind} {res.logical} out of {parent}", m, expect)

    def _edit_drop_component(self, m: Model) -> Edit | None:
        """Remove a component and its children (what nothing else reads)."""
        droppable = []
        for component in m.components:
            children = m.children(component)
            inside = {r.key for r in children}
            read_outside = any({d.key for d in m.dependents(r.key)} - inside for r in children)
            if not read_outside and len([r for r in children if r.protect]) <= 1:
                droppable.append(component)
        if not droppable:
            return None
        component = self.rng.choice(droppable)
        children = m.children(component)
        m.components.remove(component)
        for res in children:
            del m.resources[res.key]
        for res in m.resources.values():  # an alias naming it by its variable: by its URN
            res.moved = [
                repr(m.urn(f"{COMPONENT}${TYPES[res.kind]}", res.logical))
                if alias == f"sw.Alias(parent={component})"
                else alias
                for alias in res.moved
            ]
        expect = {component: {"delete"}, **{r.logical: {"delete"} for r in children}}
        edit = Edit(f"drop component {component} with {len(children)} children", m, expect)
        edit.refused = next((r.logical for r in children if r.protect), "")
        return edit

    def _edit_adopt(self, m: Model) -> Edit:
        """A ConfigMap made through the API, then declared with `import_`: adopted as it is
        (its data the program's), or updated to the program's."""
        res = Res(self._key(m), "ConfigMap", m.fresh("co"), m.fresh_name(), None)
        res.namespace = self.rng.choice(m.base_namespaces)
        res.data = {"k1": "a", "k2": "b"}
        res.import_id = f"{res.namespace}/{res.name}"
        res.force = True
        res.protect = self.rng.random() < 0.15
        res.retain = self.rng.random() < 0.2
        if m.components and self.rng.random() < 0.3:
            res.parent = self.rng.choice(m.components)
        premade = copy.deepcopy(res)
        self._put(m, res)
        edit = Edit(f"adopt ConfigMap {res.logical} (import_)", m, {res.logical: {"import"}})
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

    def urn(self, logical: str, model: Model | None = None) -> str:
        model = model or self.generator.model
        for where in (model, self.generator.model):  # the second: removed by this edit
            for res in where.resources.values():
                if res.logical == logical:
                    return self.project.urn(res.type, logical)
            if logical in where.components:
                return self.project.urn(COMPONENT, logical)
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

    # -- one edit, end to end --

    def apply(self, edit: Edit) -> None:
        self.log.append(edit.what)
        before = self.generator.model
        if edit.refused:
            self.refused(edit, before)
            return
        self.write(edit.model)
        if edit.drift is not None:
            self.make_drift(*edit.drift)
        if edit.premade is not None:
            self.make_object(edit.premade)
        refresh = ["--refresh"] if edit.refresh == "up" else []
        if edit.refresh == "refresh":
            self.sw("refresh", "--yes", "--json")
        first: dict[str, str] = {}
        if edit.target:
            first = self.targeted_up(edit)
        elif edit.crash is not None:
            first = self.crashed_up(edit)
        done = self.previewed_up(*refresh)
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

    def previewed_up(self, *args: str) -> dict[str, str]:
        """`preview --json ARGS`, then `up --yes --json ARGS`: the same steps, by URN."""
        _, previewed, _ = self.sw("preview", "--json", *args)
        _, applied, _ = self.sw("up", "--yes", "--json", *args)
        predicted, done = ops_by_urn(previewed), ops_by_urn(applied)
        assert predicted == done, (
            f"{self.where()}\nthe preview {' '.join(args)} predicted other steps than up did:\n"
            f"  preview: {_differing(predicted, done)}\n  up:      {_differing(done, predicted)}"
        )
        return done

    def targeted_up(self, edit: Edit) -> dict[str, str]:
        """`up --target X`: only X and what it needs change (README "SELECTION")."""
        done = self.previewed_up("--target", self.urn(edit.target, edit.model))
        model = edit.model
        (target,) = [r for r in model.resources.values() if r.logical == edit.target]
        needed, todo = {target.key}, [target]
        while todo:
            res = todo.pop()
            also = {r.key for r in model.resources.values() if r.key in res.refers_to()}
            also |= {r.key for r in model.of("Namespace") if r.name == res.namespace}
            todo += [model.resources[k] for k in also - needed]
            needed |= also
        parts = [model.resources[k] for k in needed]
        allowed = {self.urn(name, model) for r in parts for name in (r.logical, r.parent) if name}
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
        body = {
            "apiVersion": "v1",
            "kind": res.kind,
            "metadata": {"name": res.name, "namespace": res.namespace},
            "data": res.data,
        }
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
            if urn in may and (TYPES["RoleBinding"] in urn or urn in replacing):
                # A Role's new name (roleRef is immutable), new data under replace_on_changes.
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

    # -- the invariants --

    def check_converged(self, model: Model) -> None:
        where = self.where()
        self.sw("preview", "--expect-no-changes")
        recorded, _ = check_agrees(self.project, where)
        wanted = {self.project.urn(r.type, r.logical): r for r in model.resources.values()}
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
                if res.name is not None:
                    assert name == res.name, f"{where}\n{urn} is named {name}, not {res.name}"
                else:
                    assert AUTO_NAME.match(name), f"{where}\n{urn} has the auto-name {name}"
                assert row["protect"] == res.protect, f"{where}\n{urn} protect {row['protect']}"
                self.recorded_object[res.logical] = (res.kind, res.namespace, name)
                live[res.key] = self.read(http, res.kind, res.namespace, name)
            for res in model.resources.values():
                self.check_fields(model, res, live, where)
            for kind, namespace, name in self.retained:
                if namespace is not None and namespace not in model.base_namespaces:
                    continue
                kept = self.read(http, kind, namespace, name)
                marks = {**(kept["metadata"].get("labels") or {})}
                marks.update(kept["metadata"].get("annotations") or {})
                assert not set(MARKS) & set(marks), (
                    f"{where}\nthe retained {kind} {namespace}/{name} keeps the stack's marks"
                )

    def read(self, http: Any, kind: str, namespace: str | None, name: str) -> dict[str, Any]:
        path = PATHS[kind].format(ns=namespace)
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
                self.cluster, f"urn:sw:{STACK}::{self.project.name}::"
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
    rare `stop ignoring`), refusals of a protected resource's delete included."""
    made = {sort for seed in SEEDS for edit in Generator(seed).edits() for sort in edit.sorts}
    assert made >= {
        "add", "remove", "mutable", "immutable name", "immutable selector", "immutable type",
        "immutable roleRef", "rename", "move", "drift, then refresh", "drift, then up --refresh",
        "refused remove", "refused change", "refused move", "toggle protect", "toggle retain",
        "toggle delete_first", "toggle depends_on", "toggle ignore", "toggle replace_on",
        "two at once", "enter", "leave", "drop", "adopt", "up --target",
        "crashed up",
    }, made  # fmt: skip
