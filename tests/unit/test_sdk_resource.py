"""Declaring resources: registration with the running program, URNs, options and their errors."""

from __future__ import annotations

import dataclasses
import runpy
import sys
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

import stackwright.kubernetes as k8s
from stackwright.errors import UsageError
from stackwright.model import parse_urn, urn_name
from stackwright.sdk.context import Program, current_program, export, running
from stackwright.sdk.output import Output, dependencies_of
from stackwright.sdk.resource import (
    _LIST_OPTIONS,
    Alias,
    ComponentResource,
    CustomResource,
    Resource,
    ResourceOptions,
)

HERE = str(Path(__file__).resolve())


def line() -> int:
    """The caller's line number."""
    return sys._getframe(1).f_lineno


@pytest.fixture
def program() -> Iterator[Program]:
    with running(Program(project="shop", stack="dev")) as prog:
        yield prog


def test_declaring_registers_with_the_running_program(program: Program) -> None:
    a = CustomResource("test:index:Thing", "a", {"size": 1})
    b = CustomResource("test:index:Thing", "b")
    assert program.resources == [a, b]
    assert program.by_urn == {a.urn: a, b.urn: b}
    assert a.props == {"size": 1}
    assert a.custom and a.resource_name == "a" and a.resource_type == "test:index:Thing"
    export("size", a.output("size"))
    assert set(program.exports) == {"size"}


def test_urn_format_and_parent_type_prefix(program: Program) -> None:
    app = ComponentResource("my:Comp", "app")
    web = k8s.apps.v1.Deployment("web", opts=ResourceOptions(parent=app))
    inner = ComponentResource("my:web:Inner", "in", opts=ResourceOptions(parent=app))
    cm = k8s.core.v1.ConfigMap("cfg", opts=ResourceOptions(parent=inner))
    assert app.urn == "urn:sw:dev::shop::my:Comp::app"
    assert web.urn == "urn:sw:dev::shop::my:Comp$kubernetes:apps/v1:Deployment::web"
    assert cm.urn == "urn:sw:dev::shop::my:Comp$my:web:Inner$kubernetes:core/v1:ConfigMap::cfg"
    assert cm.parent_types() == ("my:Comp", "my:web:Inner")
    assert app.children == (web, inner)
    assert not app.custom


@pytest.mark.parametrize(
    ("urn", "name"),
    [
        ("urn:sw:dev::shop::my:Comp$kubernetes:apps/v1:Deployment::web", "web"),
        ("urn:sw:dev::shop::my:Comp::a::b", "a::b"),  # as parse_urn: all after the type
        ("not-a-urn", "not-a-urn"),
        ("", ""),
    ],
)
def test_urn_name_is_the_logical_name(urn: str, name: str) -> None:
    assert urn_name(urn) == name
    if urn.startswith("urn:sw:"):
        assert parse_urn(urn).name == name


def test_same_name_different_type_or_parent_is_fine(program: Program) -> None:
    parent = ComponentResource("my:Comp", "app")
    k8s.core.v1.ConfigMap("web")
    k8s.core.v1.Secret("web")
    k8s.core.v1.ConfigMap("web", opts=ResourceOptions(parent=parent))
    assert len(program.resources) == 4


def test_duplicate_urn_names_both_declarations(program: Program) -> None:
    first = line() + 1
    k8s.core.v1.ConfigMap("web", data={"a": "1"})
    second = line() + 2
    with pytest.raises(UsageError) as info:
        k8s.core.v1.ConfigMap("web", data={"a": "2"})
    assert str(info.value) == (
        f"{HERE}:{second}: duplicate resource URN urn:sw:dev::shop::kubernetes:core/v1:ConfigMap::"
        f"web: {HERE}:{first} declares it already; give one of them another name"
    )
    assert len(program.resources) == 1


@pytest.mark.parametrize(
    "option", ["protect", "retain_on_delete", "delete_before_replace", "force"]
)
def test_a_yes_or_no_option_given_a_string_is_refused_at_the_users_line(
    option: str, program: Program
) -> None:
    # "false" (a configuration value read with `get`) is truthy: it protected the resource.
    where = line() + 2
    with pytest.raises(UsageError) as info:
        k8s.core.v1.ConfigMap("web", opts=ResourceOptions(**{option: "false"}))
    assert str(info.value) == (
        f"{HERE}:{where}: {option} of kubernetes:core/v1:ConfigMap 'web' must be True or "
        "False (got 'false'); read a configuration value as one with `Config().get_bool`"
    )
    assert program.resources == []
    # None is unset, as in Pulumi: `protect=cfg.get_bool("protect")` of a key not set;
    # an unset `force` is its parent's (none here).
    cm = k8s.core.v1.ConfigMap("unset", opts=ResourceOptions(**{option: None}))
    assert getattr(cm.opts, option) is (None if option == "force" else False)


def test_declaration_site_is_the_users_line(program: Program) -> None:
    here = line() + 1
    cm = k8s.core.v1.ConfigMap("web")
    assert (cm.declared_at.file, cm.declared_at.line) == (HERE, here)
    assert str(cm.declared_at) == f"{HERE}:{here}"


def test_a_project_in_a_folder_called_stackwright_is_still_the_users(
    program: Program, tmp_path: Path
) -> None:
    # The old check looked for "/stackwright/sdk/" in the file name.
    folder = tmp_path / "stackwright" / "sdk"
    folder.mkdir(parents=True)
    main = folder / "main.py"
    main.write_text(
        textwrap.dedent(
            """\
            import stackwright.kubernetes as k8s

            k8s.core.v1.ConfigMap("mine")
            """
        )
    )
    runpy.run_path(str(main))
    declared = program.resources[0].declared_at
    assert (declared.file, declared.line) == (str(main), 3)


def test_declaring_outside_a_program_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="resources can only be declared while Stackwright runs"):
        k8s.core.v1.ConfigMap("web")
    with pytest.raises(UsageError, match="stackwright preview"):
        current_program()


def test_programs_are_per_thread_and_restored() -> None:
    outer = Program(project="p", stack="a")
    inner = Program(project="p", stack="b")
    seen: list[BaseException] = []
    with running(outer):
        with running(inner):
            CustomResource("test:index:T", "x")
        CustomResource("test:index:T", "x")

        def elsewhere() -> None:
            try:
                CustomResource("test:index:T", "y")
            except UsageError as exc:
                seen.append(exc)

        thread = threading.Thread(target=elsewhere)
        thread.start()
        thread.join()
    assert [r.urn for r in outer.resources] == ["urn:sw:a::p::test:index:T::x"]
    assert [r.urn for r in inner.resources] == ["urn:sw:b::p::test:index:T::x"]
    assert len(seen) == 1


@pytest.mark.parametrize(
    ("type_", "message"),
    [
        ("Comp", "component type 'Comp' must look like 'package:Name' or 'package:module:Name'"),
        ("my::Comp", "component type 'my::Comp' must look like"),
        ("my:a$b", "component type 'my:a$b' must look like"),
        ("kubernetes:apps/v1:Deployment", "uses the reserved package 'kubernetes'"),
        ("stackwright:stack:Stack", "uses the reserved package 'stackwright'"),
    ],
)
def test_component_type_is_checked(program: Program, type_: str, message: str) -> None:
    here = line() + 2
    with pytest.raises(UsageError) as info:
        ComponentResource(type_, "app")
    assert message in str(info.value)
    assert str(info.value).startswith(f"{HERE}:{here}: ")
    assert program.resources == []


def test_a_name_must_be_a_non_empty_string(program: Program) -> None:
    with pytest.raises(
        UsageError,
        match=r"^\S*test_sdk_resource\.py:\d+: .* needs a non-empty string name \(got ''\)$",
    ):
        k8s.core.v1.ConfigMap("")
    with pytest.raises(UsageError, match=r"got 3"):
        CustomResource("test:index:T", 3)  # type: ignore[arg-type]


def test_live_state_attributes_use_kubernetes_spelling(program: Program) -> None:
    secret = k8s.core.v1.Secret("s")
    raw = CustomResource("test:index:T", "t")
    read = {secret: {"stringData": {"a": "b"}}, raw: {"someField": 1}}.get
    assert isinstance(raw.some_field, Output)
    assert dependencies_of(raw.some_field) == {raw}
    assert raw.some_field.resolve(read) == 1
    assert secret.string_data.resolve(read) == {"a": "b"}
    assert secret.output("stringData", "a").resolve(read) == "b"
    with pytest.raises(AttributeError):
        raw._private  # noqa: B018


def test_resources_compare_by_identity(program: Program) -> None:
    a = CustomResource("test:index:T", "a")
    b = CustomResource("test:index:T", "b")
    assert a != b and a == a
    assert len({a, b, a}) == 2
    assert repr(a) == "<test:index:T 'a'>"


# --- options ------------------------------------------------------------------------------------


def test_children_inherit_the_parents_provider(program: Program) -> None:
    cluster = k8s.Provider("other")
    mine = k8s.Provider("mine")
    app = ComponentResource("my:Comp", "app", opts=ResourceOptions(provider=cluster))
    inherited = k8s.core.v1.ConfigMap("a", opts=ResourceOptions(parent=app))
    own = k8s.core.v1.ConfigMap("b", opts=ResourceOptions(parent=app, provider=mine))
    grandchild = k8s.core.v1.ConfigMap(
        "c",
        opts=ResourceOptions(
            parent=ComponentResource("my:Sub", "s", opts=ResourceOptions(parent=app))
        ),
    )
    assert inherited.opts.provider is cluster
    assert own.opts.provider is mine
    assert grandchild.opts.provider is cluster
    assert k8s.core.v1.ConfigMap("d").opts.provider is None


@pytest.mark.parametrize("by_package", [True, False])
def test_providers_as_pulumis_components_take_them_stand_for_the_one_provider(
    program: Program, by_package: bool
) -> None:
    """`providers={"kubernetes": p}` (or `[p]`), Pulumi's spelling on a component, is
    `provider=p`: its children use it; merged options keep it."""
    cluster = k8s.Provider("other")
    given = {"kubernetes": cluster} if by_package else [cluster]
    app = ComponentResource("my:Comp", "app", opts=ResourceOptions(providers=given))
    child = k8s.core.v1.ConfigMap("a", opts=ResourceOptions(parent=app))
    merged = ResourceOptions.merge(ResourceOptions(providers=given), ResourceOptions())
    own = k8s.core.v1.ConfigMap("b", opts=merged)
    assert app.opts.provider is child.opts.provider is own.opts.provider is cluster


def test_providers_naming_two_providers_are_refused(program: Program) -> None:
    one, two = k8s.Provider("one"), k8s.Provider("two")
    where = line() + 2
    with pytest.raises(UsageError) as info:
        k8s.core.v1.ConfigMap("a", opts=ResourceOptions(provider=one, providers=[two]))
    assert str(info.value).startswith(
        f"{HERE}:{where}: providers of kubernetes:core/v1:ConfigMap 'a' "
    )
    assert str(info.value).endswith(
        "names 2 providers (with `provider`); Stackwright has one provider package, "
        "kubernetes: give the one to use"
    )
    same = k8s.core.v1.ConfigMap("b", opts=ResourceOptions(provider=one, providers=[one]))
    assert same.opts.provider is one


def test_children_inherit_a_forced_parents_force(program: Program) -> None:
    # A forced ConfigFile's objects were applied unforced: the conflict's advice to set
    # `force` did nothing where the program could set it.
    app = ComponentResource("my:Comp", "app", opts=ResourceOptions(force=True))
    child = k8s.core.v1.ConfigMap("a", opts=ResourceOptions(parent=app))
    grandchild = k8s.core.v1.ConfigMap(
        "b",
        opts=ResourceOptions(
            parent=ComponentResource("my:Sub", "s", opts=ResourceOptions(parent=app))
        ),
    )
    assert child.opts.force and grandchild.opts.force
    unforced = ComponentResource("my:Comp", "plain")
    assert not k8s.core.v1.ConfigMap("c", opts=ResourceOptions(parent=unforced)).opts.force
    assert k8s.core.v1.ConfigMap("d", opts=ResourceOptions(parent=unforced, force=True)).opts.force


def test_a_child_that_sets_force_false_stays_unforced_in_a_forced_parent(
    program: Program,
) -> None:
    # As Pulumi's `protect`: a child's own False is kept (one object of a forced ConfigFile
    # left out by its transformation); unset (None, a `get_bool` of no value) inherits.
    app = ComponentResource("my:Comp", "app", opts=ResourceOptions(force=True))
    kept = k8s.core.v1.ConfigMap("a", opts=ResourceOptions(parent=app, force=False))
    unset = k8s.core.v1.ConfigMap("b", opts=ResourceOptions(parent=app, force=None))
    assert kept.opts.force is False
    assert unset.opts.force is True
    # Pulumi's `merge`: the later options' own False wins over the earlier True.
    merged = ResourceOptions.merge(ResourceOptions(force=True), ResourceOptions(force=False))
    assert merged.force is False


def test_children_of_a_protected_parent_are_protected_unless_they_say_not(
    program: Program,
) -> None:
    # Pulumi's rule: `protect` unset is the parent's; a child's own False is kept.
    app = ComponentResource("my:Comp", "app", opts=ResourceOptions(protect=True))
    child = k8s.core.v1.ConfigMap("a", opts=ResourceOptions(parent=app))
    grandchild = k8s.core.v1.ConfigMap(
        "b",
        opts=ResourceOptions(
            parent=ComponentResource("my:Sub", "s", opts=ResourceOptions(parent=app))
        ),
    )
    kept = k8s.core.v1.ConfigMap("c", opts=ResourceOptions(parent=app, protect=False))
    assert child.opts.protect is True and grandchild.opts.protect is True
    assert kept.opts.protect is False
    plain = ComponentResource("my:Comp", "plain")
    assert k8s.core.v1.ConfigMap("d", opts=ResourceOptions(parent=plain)).opts.protect is False
    assert k8s.core.v1.ConfigMap("e").opts.protect is False
    read = k8s.core.v1.ConfigMap.get("f", "kube-system/x", opts=ResourceOptions(parent=app))
    assert read.opts.protect is False  # a read is never deleted: nothing to guard
    merged = ResourceOptions.merge(ResourceOptions(protect=True), ResourceOptions(protect=False))
    assert merged.protect is False


def test_forgiving_option_spellings_are_normalised(program: Program) -> None:
    db = CustomResource("test:index:Db", "db")
    app = CustomResource(
        "test:index:App",
        "app",
        opts=ResourceOptions(
            depends_on=db,  # type: ignore[arg-type]
            ignore_changes="spec.replicas",
            replace_on_changes="spec.template.spec.containers[*].image",
        ),
    )
    assert tuple(app.opts.depends_on) == (db,)
    assert tuple(app.opts.ignore_changes) == ("spec.replicas",)
    assert tuple(app.opts.replace_on_changes) == ("spec.template.spec.containers[*].image",)


@pytest.mark.parametrize("option", sorted(_LIST_OPTIONS))
def test_a_list_option_given_none_is_unset_as_in_pulumi(program: Program, option: str) -> None:
    """Pulumi's list options default to None, so a ported program passes None for "none"
    (`aliases=[...] if renamed else None`); it failed with `TypeError: 'NoneType' object is
    not iterable`, in the resource and in `ResourceOptions.merge`, as components use it."""
    unset = ResourceOptions(**{option: None})
    app = ComponentResource("acme:App", "app", opts=unset)
    child = CustomResource(
        "test:index:Cm", "cm", opts=ResourceOptions.merge(unset, ResourceOptions(parent=app))
    )
    for resource in (app, child):
        assert tuple(getattr(resource.opts, option)) == ()
    assert child.opts.parent is app
    # Whatever makes the options (a transform's `replace`, a component's own code) reads ().
    assert getattr(unset, option) == ()
    assert getattr(dataclasses.replace(ResourceOptions(), **{option: None}), option) == ()


@pytest.mark.parametrize(
    ("opts", "message"),
    [
        (ResourceOptions(depends_on=["db"]), "{here}:{line}: depends_on of test:index:App 'app'"),  # type: ignore[list-item]
        (
            ResourceOptions(depends_on=Output.from_input("db")),  # type: ignore[arg-type]
            "{here}:{line}: depends_on of test:index:App 'app' must list resources (got Output)",
        ),
        (ResourceOptions(parent="db"), "{here}:{line}: parent of test:index:App 'app'"),  # type: ignore[arg-type]
        (
            ResourceOptions(ignore_changes=["spec..x"]),
            "{here}:{line}: ignore_changes of test:index:App 'app'",
        ),
        ({"protect": True}, "{here}:{line}: opts of test:index:App 'app'"),
        # A Python program is told Python's names (a YAML program its own: test_yaml_program).
        (
            ResourceOptions(replace_on_changes=["spec..x"]),
            "{here}:{line}: replace_on_changes of test:index:App 'app'",
        ),
        (
            ResourceOptions(custom_timeouts={"create": "soon"}),  # type: ignore[arg-type]
            "{here}:{line}: custom_timeouts.create of test:index:App 'app'",
        ),
        (ResourceOptions(aliases=["old"]), "{here}:{line}: aliases of test:index:App 'app'"),
        (
            ResourceOptions(aliases=[Alias(type_=7)]),  # type: ignore[arg-type]
            "{here}:{line}: aliases of test:index:App 'app': an alias's type must be a string "
            "(got int)",
        ),
        (
            ResourceOptions(aliases=[Alias(name="web", stack=["dev"])]),  # type: ignore[arg-type]
            "{here}:{line}: aliases of test:index:App 'app': an alias's stack must be a string "
            "(got list)",
        ),
        (ResourceOptions(deleted_with="ns"), "{here}:{line}: deleted_with of test:index:App 'app'"),  # type: ignore[arg-type]
        (
            ResourceOptions(additional_secret_outputs=["string_data.x"]),
            "{here}:{line}: additional_secret_outputs of test:index:App 'app'",
        ),
        (
            ResourceOptions(id="a/b", protect=True),
            "{here}:{line}: test:index:App 'app' is read (id='a/b'), so protect does not apply",
        ),
    ],
)
def test_bad_options_name_the_resource(program: Program, opts: object, message: str) -> None:
    with pytest.raises(UsageError) as info:
        CustomResource("test:index:App", "app", opts=opts)  # type: ignore[arg-type]
    line = sys._getframe().f_lineno - 1
    assert str(info.value).startswith(message.format(here=HERE, line=line)), info.value
    assert f"{HERE}:{line}" in str(info.value)


def test_a_parent_from_another_program_run_is_refused() -> None:
    with running(Program(project="p", stack="dev")):
        old = ComponentResource("my:Comp", "app")
    with running(Program(project="p", stack="dev")) as second:
        with pytest.raises(UsageError, match="was not declared in this program run"):
            CustomResource("test:index:T", "x", opts=ResourceOptions(parent=old))
        assert second.resources == []


def test_component_outputs(program: Program) -> None:
    app = ComponentResource("my:Comp", "app", {"replicas": 2})
    web = CustomResource("test:index:T", "web", opts=ResourceOptions(parent=app))
    app.register_outputs({"url": web.output("url")})
    assert set(app.component_outputs) == {"url"}
    assert app.props == {"replicas": 2}
    assert isinstance(app, Resource) and not isinstance(app, CustomResource)


def test_custom_timeouts_take_seconds_or_durations_and_refuse_the_rest(program: Program) -> None:
    from stackwright.sdk.resource import CustomTimeouts

    def timeouts(value: object) -> CustomTimeouts | None:
        opts = ResourceOptions(custom_timeouts=value)  # type: ignore[arg-type]
        return k8s.core.v1.ConfigMap(f"c{len(program.resources)}", opts=opts).opts.custom_timeouts

    assert timeouts(CustomTimeouts(create="5m", update=30)) == CustomTimeouts(300.0, 30.0, None)
    assert timeouts({"delete": "1h30m"}) == CustomTimeouts(None, None, 5400.0)
    assert timeouts(CustomTimeouts(create="45s")) == CustomTimeouts(45.0, None, None)
    for bad, message in (
        (CustomTimeouts(create="5 minutes"), r"custom_timeouts.create of .* \(got '5 minutes'\)"),
        (CustomTimeouts(update=-1), r"custom_timeouts.update of .* positive number"),
        # Waited forever (and nan failed its step late): a finite number is a timeout.
        (CustomTimeouts(create=float("inf")), r"custom_timeouts.create of .* \(got inf\)"),
        (CustomTimeouts(delete=float("nan")), r"custom_timeouts.delete of .* \(got nan\)"),
        ({"craete": 5}, r"unknown keys \['craete'\]"),
        (5, r"must be a CustomTimeouts \(got int\)"),
    ):
        with pytest.raises(UsageError, match=message):
            timeouts(bad)


# --- reads: Pulumi's `get` / `ResourceOptions(id=...)` ------------------------------------------


def test_get_declares_a_read_of_the_object_with_that_id(program: Program) -> None:
    dns = k8s.core.v1.Service.get("dns", "kube-system/kube-dns")
    widget = k8s.CustomObject.get("w", "w1", api_version="example.com/v1", kind="Widget")
    same = k8s.core.v1.ConfigMap("cm", ResourceOptions(id="settings"))

    assert isinstance(dns, k8s.core.v1.Service) and isinstance(widget, k8s.CustomObject)
    assert dns.is_read and dns.opts.id == "kube-system/kube-dns"
    assert dns.urn == "urn:sw:dev::shop::kubernetes:core/v1:Service::dns"
    # Nothing is declared: the outputs are the live object's.
    assert dns.props == {"apiVersion": "v1", "kind": "Service"}
    assert isinstance(dns.spec["clusterIP"], Output)
    assert widget.props == {"apiVersion": "example.com/v1", "kind": "Widget"}
    assert same.is_read and not k8s.core.v1.ConfigMap("managed").is_read
    # Other options go along: a parent, a provider, dependencies.
    parent = ComponentResource("acme:x:App", "app")
    child = k8s.core.v1.Secret.get("s", "ns/s", ResourceOptions(parent=parent))
    assert child.opts.parent is parent and child.opts.id == "ns/s"


@pytest.mark.parametrize(
    ("declare", "message"),
    [
        (
            lambda: k8s.core.v1.Service("a", spec={"ports": []}, opts=ResourceOptions(id="x")),
            "is read (id='x'), so it declares nothing: drop spec= (or drop id= to manage",
        ),
        (
            lambda: k8s.CustomObject(
                "c", ResourceOptions(id="x"), api_version="v1", kind="ConfigMap", data={}
            ),
            "is read (id='x'), so it declares nothing: drop data=",
        ),
        (
            lambda: k8s.core.v1.Service.get("d", "a/b", ResourceOptions(import_="a/b")),
            "is read (id='a/b'), so import_ does not apply to it: import_ adopts an object",
        ),
        (
            lambda: k8s.core.v1.Service.get("e", "a/b", ResourceOptions(protect=True)),
            "so protect does not apply to it",
        ),
        (
            lambda: k8s.core.v1.Service.get("f", "a/b", ResourceOptions(retain_on_delete=True)),
            "so retain_on_delete does not apply to it",
        ),
        (
            lambda: k8s.core.v1.Service.get("g", "a/b", ResourceOptions(ignore_changes=["spec"])),
            "so ignore_changes does not apply to it",
        ),
        (
            lambda: k8s.core.v1.Service.get("h", "a/b/c"),
            "must be the object's NAME or NAMESPACE/NAME",
        ),
        (lambda: k8s.core.v1.Service.get("i", ""), "(got '')"),
        (lambda: k8s.core.v1.Service.get("j", 3), "(got 3)"),  # type: ignore[arg-type]
        (
            lambda: ComponentResource("acme:x:App", "k", opts=ResourceOptions(id="x")),
            "cannot be read with id=: only Kubernetes objects can",
        ),
        (
            lambda: k8s.Provider("l", ResourceOptions(id="x")),
            "cannot be read with id=: only Kubernetes objects can",
        ),
    ],
)
def test_a_read_with_something_only_a_managed_object_has_is_one_line(
    program: Program, declare: object, message: str
) -> None:
    with pytest.raises(UsageError) as caught:
        declare()  # type: ignore[operator]
    text = str(caught.value)
    assert message in text and "\n" not in text
    assert f"{HERE}:" in text  # the program's line that declared it
