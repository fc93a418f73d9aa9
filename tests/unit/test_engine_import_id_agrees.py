"""An import's id names the object it adopts; the program's metadata may not name another.

`ResourceOptions(import_="team/web")` with `metadata={"namespace": "prod"}` adopted
prod/web, not the object the id names, without a word: the program's value won. The
engine refuses it before any change, naming the resource's line, both values and the fix;
a value known only once applied (an Output) is refused at that resource's inputs.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from engine_stack import Declare, Stack, urn
from engine_stack import stack as stack  # the fixture

import stackwright.kubernetes as k8s
from stackwright.errors import UsageError
from stackwright.sdk.context import Program
from stackwright.sdk.output import Output
from stackwright.sdk.resource import ResourceOptions

CM = "kubernetes:core/v1:ConfigMap"
HERE = r"\S*test_engine_import_id_agrees\.py:\d+"


def importing(metadata: dict[str, Any], object_id: str = "team/web") -> Declare:
    def declare(p: Program) -> None:
        k8s.core.v1.ConfigMap(
            "web", metadata=metadata, data={"a": "b"}, opts=ResourceOptions(import_=object_id)
        )

    return declare


#: Where `importing` declares its ConfigMap: a failure of its step starts with it.
WEB = f"{__file__}:{importing.__code__.co_firstlineno + 2}"


@pytest.mark.parametrize(
    ("metadata", "key", "given", "named"),
    [
        ({"namespace": "prod"}, "namespace", "prod", "team"),
        ({"name": "api", "namespace": "team"}, "name", "api", "web"),
    ],
)
def test_metadata_naming_another_object_than_the_import_id_is_refused_before_any_change(
    stack: Stack, metadata: dict[str, Any], key: str, given: str, named: str
) -> None:
    for run in (stack.preview, stack.up):
        with pytest.raises(UsageError) as refused:
            run(importing(metadata))
        message = str(refused.value)
        assert "\n" not in message
        assert re.match(
            rf"{HERE}: {CM} web: metadata\.{key} '{given}' is not the {key} '{named}' its "
            rf"import id 'team/web' names, .*: make them agree, or drop metadata\.{key}: the "
            r"import's id gives it; nothing was changed$",
            message,
        ), message
    assert stack.fake.calls == []
    assert stack.state().resources == []


def test_a_cluster_scoped_import_id_names_only_the_name(stack: Stack) -> None:
    def namespace(name: str) -> Declare:
        def declare(p: Program) -> None:
            k8s.core.v1.Namespace(
                "team", metadata={"name": name}, opts=ResourceOptions(import_="team")
            )

        return declare

    with pytest.raises(UsageError, match=r"metadata\.name 'other' is not the name 'team' its"):
        stack.preview(namespace("other"))
    assert stack.fake.calls == []
    # Agreeing, the import is tried (and says what it finds).
    assert stack.preview(namespace("team")).failures == [
        f"{__file__}:{namespace.__code__.co_firstlineno + 2}: kubernetes:core/v1:Namespace "
        "team: cannot import team: no Namespace of that name exists in the cluster"
    ]


def test_agreeing_or_left_out_the_import_is_tried(stack: Stack) -> None:
    for metadata in ({}, {"namespace": "team"}, {"name": "web", "namespace": "team"}):
        assert stack.preview(importing(metadata)).failures == [
            f"{WEB}: {CM} web: cannot import team/web: no ConfigMap of that name exists in the "
            "cluster"
        ]


def test_a_namespace_known_only_once_applied_is_refused_at_its_inputs(stack: Stack) -> None:
    for run in (stack.preview, stack.up):
        summary = run(importing({"namespace": Output.from_input("prod")}))
        assert not summary.ok
        (failure,) = summary.failures
        assert re.fullmatch(
            rf"{re.escape(WEB)}: {CM} web: metadata\.namespace 'prod' is not the namespace 'team' its "
            r"import id 'team/web' names, .*: make them agree, or drop metadata\.namespace: "
            r"the import's id gives it",
            failure,
        ), failure
    assert not any("prod" in str(call) for call in stack.fake.calls), stack.fake.calls
    assert urn(CM, "web") not in {r.urn for r in stack.state().resources}


@pytest.mark.parametrize("object_id", ["/web", "team/", "a/b/web", "/"])
def test_an_import_id_that_names_no_object_is_refused_before_any_change(
    stack: Stack, object_id: str
) -> None:
    """`import_="/web"` adopted the provider's default namespace's `web`, `"team/"` failed
    at the apply for want of a name, as `stackwright import` refuses both up front."""
    for run in (stack.preview, stack.up):
        with pytest.raises(UsageError) as refused:
            run(importing({}, object_id))
        assert re.fullmatch(
            rf"{HERE}: {CM} web: import id {re.escape(repr(object_id))} names no object: write "
            r"it as NAMESPACE/NAME, or NAME for a cluster-scoped kind; nothing was changed",
            str(refused.value),
        ), refused.value
    assert stack.fake.calls == []
    assert stack.state().resources == []


def test_a_cluster_scoped_import_id_with_a_namespace_is_refused(stack: Stack) -> None:
    """`import_="x/team"` for a Namespace adopted Namespace `team` (the server ignores the
    namespace of a cluster-scoped read) and recorded `namespace: x` in its inputs."""

    def declare(p: Program) -> None:
        k8s.core.v1.Namespace("team", opts=ResourceOptions(import_="x/team"))

    for run in (stack.preview, stack.up):
        with pytest.raises(UsageError) as refused:
            run(declare)
        assert re.fullmatch(
            rf"{HERE}: kubernetes:core/v1:Namespace team: import id 'x/team' names no object: "
            r"Namespace is cluster-scoped, so its id is its name alone: 'team'; nothing was "
            r"changed",
            str(refused.value),
        ), refused.value
    assert stack.fake.calls == []
    assert stack.state().resources == []


def test_an_import_id_changed_after_the_import_names_the_object_the_resource_moves_to(
    stack: Stack,
) -> None:
    """Imported as team/web, then `import_="team/api"`: the id's namespace already moved the
    resource, its name was ignored (the recorded `web` kept) and the run said nothing to do.
    The resource moves to the object the id names, as Pulumi's import-replacement does."""
    stack.fake.put({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}})
    for name in ("web", "api"):
        stack.fake.put(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": name, "namespace": "team"},
                "data": {"a": "b"},
            },
            manager="kubectl-create",
        )
    assert stack.up(importing({})).ok
    assert stack.recorded(urn(CM, "web")).id == "team/web"
    assert stack.preview(importing({}, "team/api")).ok
    assert stack.started() == [("replace", "web")]
    assert stack.up(importing({}, "team/api")).ok
    assert stack.recorded(urn(CM, "web")).id == "team/api"
    # Left as it is, the id acts no more.
    assert stack.preview(importing({}, "team/api")).ok
    assert stack.started() == [("same", "web")]


def test_an_import_id_changed_after_the_import_is_checked_against_the_metadata(
    stack: Stack,
) -> None:
    """The changed id names the object the resource moves to: a `metadata.name` naming
    another is refused as at the first import, not let through as a done import."""
    stack.fake.put({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}})
    stack.fake.put(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "web", "namespace": "team"}}
    )
    assert stack.up(importing({})).ok
    with pytest.raises(UsageError, match=r"metadata\.name 'other' is not the name 'api' its"):
        stack.preview(importing({"name": "other"}, "team/api"))
    # The id the record has: the import is done, the program may rename the object.
    assert stack.preview(importing({"name": "other"}, "team/web")).ok


def test_a_name_alone_is_the_default_namespaces_and_a_namespace_naming_another_is_refused(
    stack: Stack,
) -> None:
    """`import_="web"` with `metadata.namespace: prod` adopted prod/web, though the id, as a
    Pulumi id, names the provider's default namespace's `web`."""
    for run in (stack.preview, stack.up):
        with pytest.raises(UsageError) as refused:
            run(importing({"namespace": "prod"}, "web"))
        assert re.fullmatch(
            rf"{HERE}: {CM} web: metadata\.namespace 'prod' is not the namespace its import id "
            r"'web' names: a name alone is the provider's default namespace's \('default'\), "
            r"as a Pulumi id is; write the id as 'prod/web', or drop metadata\.namespace to "
            r"adopt 'default/web'; nothing was changed",
            str(refused.value),
        ), refused.value
    assert stack.fake.calls == []
    assert stack.state().resources == []
    # In the default namespace, named or not, it is the object the id names.
    for metadata in ({}, {"namespace": "default"}):
        assert stack.preview(importing(metadata, "web")).failures == [
            f"{WEB}: {CM} web: cannot import default/web: no ConfigMap of that name exists in "
            "the cluster"
        ]


def knob_crd(scope: str) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "knobs.example.com"},
        "spec": {
            "group": "example.com",
            "scope": scope,
            "names": {"plural": "knobs", "singular": "knob", "kind": "Knob"},
            "versions": [{"name": "v1", "served": True, "storage": True}],
        },
    }


def knob(object_id: str, *, with_crd: bool = False) -> Declare:
    def declare(p: Program) -> None:
        if with_crd:
            k8s.apiextensions.v1.CustomResourceDefinition(
                "knobs", metadata=knob_crd("Cluster")["metadata"], spec=knob_crd("Cluster")["spec"]
            )
        k8s.apiextensions.CustomResource(
            "k1",
            api_version="example.com/v1",
            kind="Knob",
            spec={"size": 1},
            opts=ResourceOptions(import_=object_id),
        )

    return declare


KNOB_REFUSED = (
    rf"{HERE}: kubernetes:example\.com/v1:Knob k1: import id 'team/k1' names no object: Knob "
    r"is cluster-scoped, so its id is its name alone: 'k1'; nothing was changed"
)


def test_a_custom_cluster_scoped_kinds_import_id_with_a_namespace_is_refused(stack: Stack) -> None:
    """The check knew only the built-in kinds' scope: `import_="team/k1"` of a cluster-scoped
    custom kind adopted `k1` and recorded `namespace: team`. Its scope is its CRD's, in the
    cluster (one discovery question) or in the program (none)."""
    stack.fake.put(knob_crd("Cluster"))
    stack.fake.put({"apiVersion": "example.com/v1", "kind": "Knob", "metadata": {"name": "k1"}})
    for run in (stack.preview, stack.up):
        with pytest.raises(UsageError) as refused:
            run(knob("team/k1"))
        assert re.fullmatch(KNOB_REFUSED, str(refused.value)), refused.value
    assert {c.method for c in stack.fake.calls} == {"identity", "namespaced", "close"}
    assert stack.state().resources == []
    assert stack.preview(knob("k1")).ok  # its name alone adopts it


def test_a_custom_kinds_scope_from_its_crd_in_the_program_asks_no_cluster(stack: Stack) -> None:
    for run in (stack.preview, stack.up):
        with pytest.raises(UsageError) as refused:
            run(knob("team/k1", with_crd=True))
        assert re.fullmatch(KNOB_REFUSED, str(refused.value)), refused.value
    assert stack.fake.calls == []
    assert stack.state().resources == []


def test_a_resource_named_by_its_import_keeps_its_name_when_replaced(stack: Stack) -> None:
    """Without a `metadata.name`, the import's id names the object: it was never auto-named,
    so a replacement deleted `web` and made it again as `web-<8 hex>`. Named as Pulumi's
    imported resources are, it is replaced under its name (deleted first)."""
    stack.fake.put({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}})
    stack.fake.put(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "web", "namespace": "team"},
            "data": {"a": "b"},
        },
        manager="kubectl-create",
    )
    assert stack.up(importing({})).ok
    replacing = frozenset({urn(CM, "web")})
    assert stack.up(importing({}), replace=replacing).ok
    assert stack.started()[0] == ("replace", "web")
    assert stack.recorded(urn(CM, "web")).id == "team/web"
    assert stack.fake.names("ConfigMap") == ["team/web"]
